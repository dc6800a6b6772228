package app_test

import (
	"net/http"
	"testing"
)

// A synthetic pack keeps a declared foreign key whose column name lineage cannot infer
// (cliente_ref → clientes.id): the SQLite pack declares it and every generated value has
// its parent row.
func TestSyntheticPackKeepsDeclaredForeignKeys(t *testing.T) {
	e := newWF(t, "synth-fk")
	src := newSource(t, "postgres", e.root)
	src.exec(t, `CREATE TABLE clientes (id integer PRIMARY KEY, nome text)`)
	src.exec(t, `CREATE TABLE notas (id integer PRIMARY KEY, cliente_ref integer REFERENCES clientes (id), valor numeric(10,2))`)
	src.exec(t, `INSERT INTO clientes SELECT g, 'cliente ' || g FROM generate_series(1, 40) g`)
	src.exec(t, `INSERT INTO notas SELECT g, 1 + g % 40, g * 1.5 FROM generate_series(1, 120) g`)
	conn := e.connect(t, "fk", "postgres", src.dsn)
	e.scan(t, conn)
	r := e.Do(t, http.MethodPost, "/api/v1/synthetic-packs", e.tok, map[string]any{"connection_id": conn, "rows_per_table": 200,
		"seed": 5, "format": "sqlite"})
	if r.Status != 200 {
		t.Fatalf("pack: %d %s", r.Status, r.Body)
	}
	db := openSQLitePack(t, r.Body)
	var from, parent, to string
	if err := db.QueryRow(`SELECT "from", "table", "to" FROM pragma_foreign_key_list('notas')`).Scan(&from, &parent, &to); err != nil {
		t.Fatalf("no foreign key in the pack: %v", err)
	}
	if from != "cliente_ref" || parent != "clientes" || to != "id" {
		t.Fatalf("pack key %s → %s.%s", from, parent, to)
	}
	var orphans int
	if err := db.QueryRow(`SELECT count(*) FROM notas n WHERE n.cliente_ref IS NOT NULL AND NOT EXISTS (SELECT 1 FROM clientes c WHERE c.id = n.cliente_ref)`).Scan(&orphans); err != nil || orphans != 0 {
		t.Fatalf("orphans %d %v", orphans, err)
	}
}

// Issue 18: a composite declared foreign key (two columns) survives into the SQLite pack
// as one constraint, and every generated child row holds a key tuple a generated parent
// row has (SQLite's own foreign_key_check, and a join), also where the key covers the
// child's whole primary key (distinct parent rows) and where it is nullable.
func TestSyntheticPackKeepsCompositeForeignKeys(t *testing.T) {
	e := newWF(t, "synth-cfk")
	src := newSource(t, "postgres", e.root)
	src.exec(t, `CREATE TABLE faturas (serie text, numero integer, total numeric(10,2), PRIMARY KEY (serie, numero))`)
	src.exec(t, `CREATE TABLE linhas (serie text, numero integer, n integer, valor numeric(10,2), PRIMARY KEY (serie, numero, n),
		CONSTRAINT linhas_fatura FOREIGN KEY (serie, numero) REFERENCES faturas (serie, numero))`)
	src.exec(t, `CREATE TABLE anexos (serie text, numero integer, paginas integer, PRIMARY KEY (serie, numero),
		CONSTRAINT anexos_fatura FOREIGN KEY (serie, numero) REFERENCES faturas (serie, numero))`)
	src.exec(t, `CREATE TABLE notas (id integer PRIMARY KEY, serie text, numero integer, texto text,
		CONSTRAINT notas_fatura FOREIGN KEY (serie, numero) REFERENCES faturas (serie, numero))`)
	src.exec(t, `INSERT INTO faturas SELECT CASE WHEN g % 3 = 0 THEN 'A' WHEN g % 3 = 1 THEN 'B' ELSE 'C' END, g, (g % 10) * 2.5 FROM generate_series(1, 60) g`)
	src.exec(t, `INSERT INTO linhas SELECT f.serie, f.numero, k, k * 1.25 FROM faturas f, generate_series(1, 3) k`)
	src.exec(t, `INSERT INTO anexos SELECT serie, numero, 1 + numero % 4 FROM faturas WHERE numero % 2 = 0`)
	src.exec(t, `INSERT INTO notas SELECT g, CASE WHEN g % 4 = 0 THEN NULL ELSE f.serie END, CASE WHEN g % 4 = 0 THEN NULL ELSE f.numero END, 'nota'
		FROM generate_series(1, 80) g JOIN faturas f ON f.numero = 1 + g % 60`)
	conn := e.connect(t, "cfk", "postgres", src.dsn)
	e.scan(t, conn)
	r := e.Do(t, http.MethodPost, "/api/v1/synthetic-packs", e.tok, map[string]any{"connection_id": conn, "rows_per_table": 150,
		"seed": 9, "format": "sqlite"})
	if r.Status != 200 {
		t.Fatalf("pack: %d %s", r.Status, r.Body)
	}
	db := openSQLitePack(t, r.Body)
	for _, child := range []string{"linhas", "anexos", "notas"} {
		rows, err := db.Query(`SELECT "id", "seq", "table", "from", "to" FROM pragma_foreign_key_list(?) ORDER BY "id", "seq"`, child)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		ids := map[int]bool{}
		for rows.Next() {
			var id, seq int
			var parent, from, to string
			if err := rows.Scan(&id, &seq, &parent, &from, &to); err != nil {
				t.Fatal(err)
			}
			ids[id] = true
			got = append(got, parent+":"+from+">"+to)
		}
		rows.Close()
		if len(ids) != 1 || len(got) != 2 || got[0] != "faturas:serie>serie" || got[1] != "faturas:numero>numero" {
			t.Fatalf("%s: keys %v, want one composite key to faturas", child, got)
		}
		var n, orphans int
		if err := db.QueryRow(`SELECT count(*), count(*) FILTER (WHERE c.serie IS NOT NULL AND NOT EXISTS
			(SELECT 1 FROM faturas f WHERE f.serie = c.serie AND f.numero = c.numero)) FROM `+child+` c`).Scan(&n, &orphans); err != nil {
			t.Fatal(err)
		}
		if n != 150 || orphans != 0 {
			t.Fatalf("%s: %d rows, %d without their parent tuple", child, n, orphans)
		}
	}
	var problems, half, dupAnexos, nullNotas int
	if err := db.QueryRow(`SELECT count(*) FROM pragma_foreign_key_check`).Scan(&problems); err != nil || problems != 0 {
		t.Fatalf("foreign_key_check: %d %v", problems, err)
	}
	// Neither column alone: a (serie, numero) tuple mixing two parents would pass each
	// column's check but not the key's.
	if err := db.QueryRow(`SELECT count(*) FROM notas WHERE (serie IS NULL) <> (numero IS NULL)`).Scan(&half); err != nil || half != 0 {
		t.Fatalf("half-null keys: %d %v", half, err)
	}
	if err := db.QueryRow(`SELECT count(*) - count(DISTINCT serie || '|' || numero) FROM anexos`).Scan(&dupAnexos); err != nil || dupAnexos != 0 {
		t.Fatalf("anexos repeat a primary key %d times: %v", dupAnexos, err)
	}
	if err := db.QueryRow(`SELECT count(*) FROM notas WHERE serie IS NULL`).Scan(&nullNotas); err != nil || nullNotas == 0 || nullNotas > 80 {
		t.Fatalf("notas without a parent: %d (the source has a quarter) %v", nullNotas, err)
	}
}
