package app_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/vigia-data/vigia/demo"
	"github.com/vigia-data/vigia/duplicates"
)

// Must-show 2 across connections: the same customers, with typos, in a Postgres table
// and a MariaDB table of one workspace → clusters of scope workspace (connection_id null,
// both connections) whose exact members have confidence 1 and fuzzy ones below 1, with
// the cross-connection matcher's reference_precision. The counts agree with the sources'
// own answers (normalized tuples each source gives, intersected here); only dataset ids,
// row keys and confidences are stored; a second scan keeps the ids.
func TestDuplicateClustersAcrossConnections(t *testing.T) {
	e := newWF(t, "dupx")
	pg := newSource(t, "postgres", e.root)
	my := newSource(t, "mysql", e.root)
	pg.exec(t, `CREATE TABLE clientes (id integer PRIMARY KEY, nif varchar(12), nome varchar(120), email varchar(160), telefone varchar(20))`)
	my.exec(t, `CREATE TABLE clientes_loja (codigo varchar(10) PRIMARY KEY, nome varchar(120), email varchar(160), telefone varchar(20), nif varchar(12))`)
	r := rand.New(rand.NewPCG(11, 18))
	var people []dupPerson
	for range 150 {
		n := demo.PersonName(r)
		people = append(people, dupPerson{nif: demo.ValidNIF(r), nome: n, email: demo.Email(r, n), tel: demo.PTMobile(r)})
	}
	q := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	var pgRows, myRows []string
	for i, p := range people {
		pgRows = append(pgRows, fmt.Sprintf("(%d, %s, %s, %s, %s)", i+1, q(p.nif), q(p.nome), q(p.email), q(demo.DialVariant(r, p.tel))))
	}
	// Two customers keyed twice in the ERP itself: a cluster of scope connection.
	for i := range 2 {
		p := people[120+i]
		pgRows = append(pgRows, fmt.Sprintf("(%d, %s, %s, %s, %s)", 1000+i, q(p.nif), q(slip(p.nome, i)), q(p.email), q(p.tel)))
	}
	// The shop on MariaDB: 40 exact copies typed otherwise, 30 with a slip, 40 of its own.
	key := func(i int) string { return fmt.Sprintf("L%04d", i) }
	for i := range 40 {
		p := people[i]
		myRows = append(myRows, fmt.Sprintf("(%s, %s, %s, %s, %s)", q(key(i)), q(strings.ToUpper(p.nome)), q(strings.ToUpper(p.email[:1])+p.email[1:]),
			q("+351 "+p.tel[:3]+" "+p.tel[3:6]+" "+p.tel[6:]), q("PT"+p.nif)))
	}
	for i := 40; i < 70; i++ {
		p := people[i]
		nome, email := p.nome, p.email
		if i%2 == 0 {
			nome = slip(nome, i)
		} else {
			at := strings.IndexByte(email, '@')
			email = slip(email[:at], i) + email[at:]
		}
		myRows = append(myRows, fmt.Sprintf("(%s, %s, %s, %s, %s)", q(key(i)), q(nome), q(email), q(p.tel), q(p.nif)))
	}
	for i := 70; i < 110; i++ {
		n := demo.PersonName(r)
		myRows = append(myRows, fmt.Sprintf("(%s, %s, %s, %s, %s)", q(key(i)), q(n), q(demo.Email(r, n)), q(demo.PTMobile(r)), q(demo.ValidNIF(r))))
	}
	pg.exec(t, `INSERT INTO clientes VALUES `+strings.Join(pgRows, ", "))
	my.exec(t, `INSERT INTO clientes_loja VALUES `+strings.Join(myRows, ", "))

	erp := e.connect(t, "erp", "postgres", pg.dsn)
	loja := e.connect(t, "loja", "mysql", my.dsn)
	e.scan(t, erp)
	if got, _ := e.duplicates(t, "", e.admin, 200); len(got) != 2 {
		t.Fatalf("one connection scanned: %d clusters, want the ERP's 2", len(got))
	}
	e.scan(t, loja)
	erpID, lojaID := e.dataset(t, erp, "clientes"), e.dataset(t, loja, "clientes_loja")

	clusters, total := e.duplicates(t, "", e.admin, 200)
	if total != fmt.Sprint(len(clusters)) {
		t.Fatalf("total %s for %d clusters", total, len(clusters))
	}
	ref := duplicates.ReferencePrecisionAcross()
	across, inner, exactLoja, fuzzyLoja := 0, 0, 0, 0
	lojaKeys := map[string]bool{}
	for _, c := range clusters {
		if c.Scope == "connection" {
			inner++
			if c.ConnectionID == nil || *c.ConnectionID != erp {
				t.Fatalf("connection cluster %+v", c)
			}
			continue
		}
		across++
		want := []string{erp, loja}
		slices.Sort(want)
		if c.Scope != "workspace" || c.ConnectionID != nil || !slices.Equal(c.ConnectionIDs, want) || c.Size != len(c.Members) {
			t.Fatalf("cross-connection cluster %+v", c)
		}
		if c.ReferencePrecision == nil || *c.ReferencePrecision != ref.ByBand[c.ConfidenceBand] {
			t.Fatalf("reference precision of %s: %v, measured %v", c.ConfidenceBand, c.ReferencePrecision, ref.ByBand)
		}
		if (c.Confidence == 1) != (c.ConfidenceBand == "exact") || c.Confidence < duplicates.CrossMatchThreshold {
			t.Fatalf("band %s for confidence %v", c.ConfidenceBand, c.Confidence)
		}
		for _, m := range c.Members {
			switch {
			case m.DatasetID == lojaID && m.ConnectionID == loja:
				lojaKeys[m.RowKey] = true
				if m.Exact != (m.Confidence == 1) {
					t.Fatalf("member %+v", m)
				}
				if m.Exact {
					exactLoja++
				} else {
					fuzzyLoja++
				}
			case m.DatasetID == erpID && m.ConnectionID == erp:
			default:
				t.Fatalf("member %+v", m)
			}
		}
	}
	if inner != 2 {
		t.Fatalf("%d clusters within the ERP, want 2", inner)
	}
	// The sources' own answers: each normalizes its rows (NIF without PT, lower-case name
	// and e-mail, the phone's last nine digits); the tuples both hold are the exact copies,
	// the NIFs both hold the shop's duplicates.
	tuples := func(src *sourceDB, table, digits string) (map[string]bool, map[string]bool) {
		rows, err := src.db.Query(`SELECT replace(upper(nif), 'PT', ''), lower(nome), lower(email), right(` + digits + `, 9) FROM ` + table)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		all, nifs := map[string]bool{}, map[string]bool{}
		for rows.Next() {
			var a, b, c, d string
			if err := rows.Scan(&a, &b, &c, &d); err != nil {
				t.Fatal(err)
			}
			all[a+"|"+b+"|"+c+"|"+d], nifs[a] = true, true
		}
		return all, nifs
	}
	pgAll, pgNIF := tuples(pg, "clientes", `regexp_replace(telefone, '\D', '', 'g')`)
	myAll, myNIF := tuples(my, "clientes_loja", `regexp_replace(telefone, '[^0-9]', '')`)
	exactDB, nifDB := 0, 0
	for k := range myAll {
		if pgAll[k] {
			exactDB++
		}
	}
	for k := range myNIF {
		if pgNIF[k] {
			nifDB++
		}
	}
	if exactLoja != exactDB || exactDB != 40 {
		t.Fatalf("exact shop members %d, the sources agree on %d", exactLoja, exactDB)
	}
	if len(lojaKeys) != nifDB || fuzzyLoja != nifDB-exactDB || nifDB != 70 {
		t.Fatalf("shop members %d (fuzzy %d), the sources share %d NIFs", len(lojaKeys), fuzzyLoja, nifDB)
	}
	if across != 70 {
		t.Fatalf("%d clusters across connections, want 70", across)
	}

	// The dataset filter reaches them; another workspace sees nothing.
	byShop, _ := e.duplicates(t, "&dataset_id="+lojaID, e.viewer, 200)
	if len(byShop) != across {
		t.Fatalf("dataset filter: %d clusters", len(byShop))
	}
	other := newWF(t, "dupx-other")
	if got, _ := other.duplicates(t, "", other.admin, 200); len(got) != 0 {
		t.Fatalf("another workspace sees %d clusters", len(got))
	}
	other.duplicates(t, "&dataset_id="+lojaID, other.admin, 404)

	// Nothing but dataset ids, row keys and confidences is stored.
	var stored string
	if err := e.DB.Pool().QueryRow(t.Context(), `SELECT coalesce(string_agg(row_to_json(c)::text || row_to_json(m)::text, ''), '')
		FROM duplicate_clusters c JOIN duplicate_members m ON m.cluster_id = c.id WHERE c.scope = 'workspace'`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if stored == "" {
		t.Fatal("no cross-connection cluster stored")
	}
	noPersonValueIn(t, stored, people[:70])

	// Scanning either connection again recomputes them under the same ids.
	e.scan(t, erp)
	again, _ := e.duplicates(t, "", e.admin, 200)
	if len(again) != len(clusters) {
		t.Fatalf("second scan: %d clusters, first %d", len(again), len(clusters))
	}
	sameClusterIDs(t, clusters, again)
}
