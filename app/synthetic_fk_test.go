package app_test

import (
	"database/sql"
	"net/http"
	"os"
	"path/filepath"
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
	path := filepath.Join(t.TempDir(), "pack.sqlite")
	if err := os.WriteFile(path, r.Body, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
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
