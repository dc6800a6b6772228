package app_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"

	"github.com/vigia-data/vigia/demo"
	"github.com/vigia-data/vigia/duplicates"
)

type dupMember struct {
	DatasetID    string  `json:"dataset_id"`
	ConnectionID string  `json:"connection_id"`
	DatasetName  string  `json:"dataset_name"`
	RowKey       string  `json:"row_key"`
	Confidence   float64 `json:"confidence"`
	Exact        bool    `json:"exact"`
}

type dupCluster struct {
	ID                 string      `json:"id"`
	ConnectionID       *string     `json:"connection_id"`
	Scope              string      `json:"scope"`
	ConnectionIDs      []string    `json:"connection_ids"`
	Confidence         float64     `json:"confidence"`
	ConfidenceBand     string      `json:"confidence_band"`
	ReferencePrecision *float64    `json:"reference_precision"`
	MatchedOn          []string    `json:"matched_on"`
	Size               int         `json:"size"`
	Members            []dupMember `json:"members"`
}

func (e *wfEnv) duplicates(t *testing.T, query, cred string, want int) ([]dupCluster, string) {
	t.Helper()
	r := e.Do(t, http.MethodGet, "/api/v1/duplicates?limit=500"+query, cred, nil)
	if r.Status != want {
		t.Fatalf("GET /duplicates%s: %d %s", query, r.Status, r.Body)
	}
	var out []dupCluster
	if want == 200 {
		r.JSON(t, &out)
	}
	return out, r.Header.Get("X-Total-Count")
}

// dupPerson is a customer of the fixture.
type dupPerson struct{ nif, nome, email, tel string }

// noPersonValueIn fails when stored (what the duplicate clusters keep) holds any of the
// people's NIF, first name, e-mail or phone digits.
func noPersonValueIn(t *testing.T, stored string, people []dupPerson) {
	t.Helper()
	for _, p := range people {
		for _, v := range []string{p.nif, strings.ToLower(strings.Fields(p.nome)[0]), p.email, p.tel[3:]} {
			if strings.Contains(strings.ToLower(stored), strings.ToLower(v)) {
				t.Fatalf("stored clusters hold a value %q", v)
			}
		}
	}
}

// sameClusterIDs fails when a cluster of again was not among the first clusters.
func sameClusterIDs(t *testing.T, clusters, again []dupCluster) {
	t.Helper()
	ids := map[string]bool{}
	for _, c := range clusters {
		ids[c.ID] = true
	}
	for _, c := range again {
		if !ids[c.ID] {
			t.Fatalf("cluster %s is new on the second scan", c.ID)
		}
	}
}

// slip is a typing slip: two neighbouring letters swapped past the first word's start.
func slip(s string, at int) string {
	rs := []rune(s)
	i := 2 + at%(len(rs)-4)
	if rs[i] == ' ' || rs[i+1] == ' ' || rs[i] == rs[i+1] {
		i = 1
	}
	rs[i], rs[i+1] = rs[i+1], rs[i]
	return string(rs)
}

// Must-show 2: customers duplicated across two tables (in two schemas on Postgres, two
// tables of one database on MariaDB) with typos: exact members have confidence 1, fuzzy
// ones below 1, reference_precision is reported; the counts agree with the source's own
// answer; a view over another schema and an empty table add nothing; no value is stored.
func TestDuplicateClustersAcrossTables(t *testing.T) {
	for _, kind := range []string{"postgres", "mysql"} {
		t.Run(kind, func(t *testing.T) { testDuplicateClusters(t, kind) })
	}
}

func testDuplicateClusters(t *testing.T, kind string) {
	e := newWF(t, "dup-"+kind)
	src := newSource(t, kind, e.root)
	erp, loja, arquivo := "erp.clientes", "loja.clientes", "loja.clientes_arquivo"
	erpName, lojaName := "erp.clientes", "loja.clientes"
	if kind == "postgres" {
		src.exec(t, `CREATE SCHEMA erp`)
		src.exec(t, `CREATE SCHEMA loja`)
		src.exec(t, `CREATE SCHEMA relatorio`)
	} else {
		erp, loja, arquivo = "erp_clientes", "loja_clientes", "loja_clientes_arquivo"
		erpName, lojaName = "", ""
	}
	src.exec(t, `CREATE TABLE `+erp+` (id integer PRIMARY KEY, nif varchar(12), nome varchar(120), email varchar(160), telefone varchar(20))`)
	src.exec(t, `CREATE TABLE `+loja+` (id integer PRIMARY KEY, nome varchar(120), email varchar(160), telefone varchar(20), nif varchar(12), cidade varchar(40))`)
	src.exec(t, `CREATE TABLE `+arquivo+` (id integer PRIMARY KEY, nome varchar(120), email varchar(160), telefone varchar(20), nif varchar(12))`)
	if kind == "postgres" {
		src.exec(t, `CREATE VIEW relatorio.clientes AS SELECT * FROM erp.clientes`)
	} else {
		src.exec(t, `CREATE VIEW relatorio_clientes AS SELECT * FROM erp_clientes`)
	}
	r := rand.New(rand.NewPCG(7, 18))
	var people []dupPerson
	for range 150 {
		n := demo.PersonName(r)
		people = append(people, dupPerson{nif: demo.ValidNIF(r), nome: n, email: demo.Email(r, n), tel: demo.PTMobile(r)})
	}
	var erpRows, lojaRows []string
	q := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	for i, p := range people {
		erpRows = append(erpRows, fmt.Sprintf("(%d, %s, %s, %s, %s)", i+1, q(p.nif), q(p.nome), q(p.email), q(demo.DialVariant(r, p.tel))))
	}
	// Near-duplicates inside the ERP table: five customers keyed in twice, with a slip.
	for i := range 5 {
		p := people[100+i]
		erpRows = append(erpRows, fmt.Sprintf("(%d, %s, %s, %s, %s)", 1000+i, q(p.nif), q(slip(p.nome, i)), q(p.email), q(p.tel)))
	}
	// The shop: 40 exact copies (typed otherwise: capitals, +351, PT prefix), 30 with a slip
	// in the name or the e-mail, 40 customers of its own.
	id := 0
	for i := range 40 {
		p := people[i]
		id++
		lojaRows = append(lojaRows, fmt.Sprintf("(%d, %s, %s, %s, %s, 'Porto')", id, q(strings.ToUpper(p.nome)), q(p.email),
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
		id++
		lojaRows = append(lojaRows, fmt.Sprintf("(%d, %s, %s, %s, %s, 'Lisboa')", id, q(nome), q(email), q(p.tel), q(p.nif)))
	}
	for range 40 {
		n := demo.PersonName(r)
		id++
		lojaRows = append(lojaRows, fmt.Sprintf("(%d, %s, %s, %s, %s, 'Braga')", id, q(n), q(demo.Email(r, n)), q(demo.PTMobile(r)), q(demo.ValidNIF(r))))
	}
	src.exec(t, `INSERT INTO `+erp+` VALUES `+strings.Join(erpRows, ", "))
	src.exec(t, `INSERT INTO `+loja+` VALUES `+strings.Join(lojaRows, ", "))

	conn := e.connect(t, "crm", kind, src.dsn)
	e.scan(t, conn)
	erpTable, lojaTable := "clientes", "clientes"
	if kind != "postgres" {
		erpTable, lojaTable = erp, loja
	}
	erpID := e.datasetIn(t, conn, erpName, erpTable)
	lojaID := e.datasetIn(t, conn, lojaName, lojaTable)

	clusters, total := e.duplicates(t, "", e.admin, 200)
	if total != fmt.Sprint(len(clusters)) || len(clusters) == 0 {
		t.Fatalf("total %s for %d clusters", total, len(clusters))
	}
	ref := duplicates.ReferencePrecision()
	exactLoja, fuzzyLoja, lojaMembers, erpInner := 0, 0, 0, 0
	for _, c := range clusters {
		if c.ConnectionID == nil || *c.ConnectionID != conn || c.Scope != "connection" || len(c.ConnectionIDs) != 1 || c.Size != len(c.Members) || c.Size < 2 {
			t.Fatalf("cluster %+v", c)
		}
		if c.ReferencePrecision == nil || *c.ReferencePrecision != ref.ByBand[c.ConfidenceBand] {
			t.Fatalf("reference precision of %s: %v, measured %v", c.ConfidenceBand, c.ReferencePrecision, ref.ByBand)
		}
		switch {
		case c.Confidence == 1 && c.ConfidenceBand != "exact", c.Confidence < 1 && c.ConfidenceBand == "exact",
			c.Confidence < duplicates.MatchThreshold:
			t.Fatalf("band %s for confidence %v", c.ConfidenceBand, c.Confidence)
		}
		erps := 0
		for _, m := range c.Members {
			if m.DatasetID != erpID && m.DatasetID != lojaID {
				t.Fatalf("a member of another dataset (the view, the empty table?): %+v", m)
			}
			if m.Exact != (m.Confidence == 1) || m.Confidence < c.Confidence {
				t.Fatalf("member %+v of cluster %v", m, c.Confidence)
			}
			if m.DatasetID == lojaID {
				lojaMembers++
				if m.Exact {
					exactLoja++
				} else {
					fuzzyLoja++
				}
			} else {
				erps++
			}
		}
		if erps > 1 {
			erpInner++
		}
	}
	// The source's own answer: shop rows whose normalized fields all equal an ERP row's,
	// and shop rows sharing an ERP row's NIF (the fixture keeps NIFs through the slips).
	var exactDB, sameNIF, innerDB int64
	norm := func(c string) string {
		if kind == "postgres" {
			return "right(regexp_replace(" + c + `, '\D', '', 'g'), 9)`
		}
		return "right(regexp_replace(" + c + `, '[^0-9]', ''), 9)`
	}
	if err := src.db.QueryRow(`SELECT count(*) FROM ` + loja + ` b WHERE EXISTS (SELECT 1 FROM ` + erp + ` a WHERE a.nif = replace(b.nif, 'PT', '')
		AND lower(a.nome) = lower(b.nome) AND lower(a.email) = lower(b.email) AND ` + norm("a.telefone") + ` = ` + norm("b.telefone") + `)`).Scan(&exactDB); err != nil {
		t.Fatal(err)
	}
	if err := src.db.QueryRow(`SELECT count(*) FROM ` + loja + ` b WHERE EXISTS (SELECT 1 FROM ` + erp + ` a WHERE a.nif = replace(b.nif, 'PT', ''))`).Scan(&sameNIF); err != nil {
		t.Fatal(err)
	}
	if err := src.db.QueryRow(`SELECT count(*) FROM (SELECT nif FROM ` + erp + ` GROUP BY nif HAVING count(*) > 1) x`).Scan(&innerDB); err != nil {
		t.Fatal(err)
	}
	if int64(exactLoja) != exactDB || exactDB != 40 {
		t.Fatalf("exact shop members %d, the source counts %d", exactLoja, exactDB)
	}
	if int64(lojaMembers) != sameNIF || int64(fuzzyLoja) != sameNIF-exactDB {
		t.Fatalf("shop members %d (fuzzy %d), the source counts %d sharing a NIF", lojaMembers, fuzzyLoja, sameNIF)
	}
	if int64(erpInner) != innerDB {
		t.Fatalf("clusters with two ERP rows: %d, the source counts %d NIFs keyed twice", erpInner, innerDB)
	}

	// Filters: a dataset, a band; another workspace's dataset is not found.
	byShop, _ := e.duplicates(t, "&dataset_id="+lojaID, e.admin, 200)
	if len(byShop) != sameNIFClusters(clusters, lojaID) {
		t.Fatalf("dataset filter: %d clusters", len(byShop))
	}
	exact, _ := e.duplicates(t, "&band=exact", e.tok, 200)
	for _, c := range exact {
		if c.ConfidenceBand != "exact" || c.Confidence != 1 {
			t.Fatalf("band filter: %+v", c)
		}
	}
	e.duplicates(t, "&band=medium", e.admin, 422)
	other := newWF(t, "dup-other-"+kind)
	if got, total := other.duplicates(t, "", other.admin, 200); len(got) != 0 || total != "0" {
		t.Fatalf("another workspace sees %d clusters", len(got))
	}
	other.duplicates(t, "&dataset_id="+lojaID, other.admin, 404)

	// Nothing but dataset ids, row keys and confidences is stored.
	var stored string
	if err := e.DB.Pool().QueryRow(t.Context(), `SELECT coalesce(string_agg(row_to_json(c)::text || row_to_json(m)::text, ''), '')
		FROM duplicate_clusters c JOIN duplicate_members m ON m.cluster_id = c.id WHERE c.connection_id = $1`, conn).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	noPersonValueIn(t, stored, people[:70])

	// A second scan finds the same clusters under the same ids.
	e.scan(t, conn)
	again, _ := e.duplicates(t, "", e.admin, 200)
	if len(again) != len(clusters) {
		t.Fatalf("second scan: %d clusters, first %d", len(again), len(clusters))
	}
	sameClusterIDs(t, clusters, again)
}

func sameNIFClusters(cs []dupCluster, datasetID string) int {
	n := 0
	for _, c := range cs {
		for _, m := range c.Members {
			if m.DatasetID == datasetID {
				n++
				break
			}
		}
	}
	return n
}

// datasetIn returns the id of a connection's dataset by schema and table ("" schema: any).
func (e *wfEnv) datasetIn(t *testing.T, connID, name, table string) string {
	t.Helper()
	var ds []map[string]any
	e.Do(t, http.MethodGet, "/api/v1/datasets?connection_id="+connID, e.admin, nil).JSON(t, &ds)
	for _, d := range ds {
		if d["table"] == table && (name == "" || d["name"] == name) {
			return d["id"].(string)
		}
	}
	t.Fatalf("no dataset %s %s in %v", name, table, ds)
	return ""
}
