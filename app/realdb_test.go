package app_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
)

// The regression fixture of issue 11: a source shaped like real ones — several schemas,
// views over other schemas' tables, a same-named table in two schemas, a partitioned
// table, a materialized view never refreshed, dynamic SQL, an empty table, numbers past
// 2^53, a nondeterministic collation, a key with INCLUDE columns — scanned through the
// API, and every figure Vigia reports compared with what the database itself answers.
const realPostgresDDL = `
CREATE EXTENSION IF NOT EXISTS tablefunc;
CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
CREATE SCHEMA legacy; CREATE SCHEMA sales; CREATE SCHEMA analytics; CREATE SCHEMA staging;
CREATE TABLE public.customer (id int PRIMARY KEY, name text NOT NULL, email text, city text COLLATE ci, created_on date, vip boolean);
INSERT INTO public.customer SELECT g, 'Cliente ' || g, CASE WHEN g % 7 = 0 THEN NULL ELSE 'c' || g || '@exemplo.pt' END,
  (ARRAY['Lisboa','LISBOA','lisboa','Porto','porto','Évora'])[1 + g % 6], date '2020-01-01' + g, g % 5 = 0
  FROM generate_series(1, 1500) g;
CREATE TABLE public.rental (id bigint PRIMARY KEY, customer_id int NOT NULL, amount numeric(12,2), rented_at timestamptz,
  returned_at timestamptz, note varchar(200));
INSERT INTO public.rental SELECT g, 1 + g % 1500, CASE WHEN g % 11 = 0 THEN NULL ELSE (g * 37 % 10000) / 100.0 END,
  timestamptz '2025-01-01 00:00:00+00' + g * interval '1 hour',
  CASE WHEN g % 3 = 0 THEN NULL ELSE timestamptz '2025-01-03 00:00:00+00' + g * interval '1 hour' END, repeat('x', g % 17)
  FROM generate_series(1, 4000) g;
CREATE TABLE legacy.rental (id int PRIMARY KEY, note text);
INSERT INTO legacy.rental SELECT g, 'antigo ' || g FROM generate_series(1, 120) g;
CREATE VIEW legacy.big_rentals AS SELECT r.id, r.customer_id, r.amount FROM public.rental r WHERE r.amount > 20;
CREATE VIEW legacy.own_notes AS SELECT id, note FROM legacy.rental;
CREATE TABLE sales.orders (id bigint NOT NULL, ordered_at date NOT NULL, amount numeric(38,10), customer_id int,
  PRIMARY KEY (id, ordered_at)) PARTITION BY RANGE (ordered_at);
CREATE TABLE sales.orders_2025 PARTITION OF sales.orders FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
CREATE TABLE sales.orders_2026 PARTITION OF sales.orders FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');
INSERT INTO sales.orders SELECT g, date '2025-01-01' + (g % 600), g * 3.25, 1 + g % 1500 FROM generate_series(1, 3000) g;
INSERT INTO sales.orders VALUES (9007199254740993, '2026-06-01', 12345678901234567890.1234567891, 1),
  (-9223372036854775808, '2025-02-01', -0.0000000001, 2);
CREATE VIEW analytics.revenue_by_city AS SELECT c.city, sum(o.amount) AS revenue
  FROM sales.orders o JOIN public.customer c ON c.id = o.customer_id GROUP BY c.city;
CREATE VIEW analytics.all_rentals AS SELECT id, note FROM public.rental UNION ALL SELECT id, note FROM legacy.rental;
CREATE MATERIALIZED VIEW analytics.monthly AS SELECT date_trunc('month', ordered_at) AS month, count(*) AS n
  FROM sales.orders GROUP BY 1 WITH NO DATA;
CREATE MATERIALIZED VIEW analytics.city_counts AS SELECT city, count(*) AS n FROM public.customer GROUP BY city;
CREATE VIEW analytics.pivot AS SELECT * FROM crosstab(
  'SELECT city::text, vip::text, count(*)::int FROM public.customer GROUP BY 1, 2 ORDER BY 1, 2') AS ct(city text, f int, t int);
CREATE TABLE staging.empty_load (id int PRIMARY KEY, payload text);
CREATE TABLE public.keyed (id int, a text, b int, PRIMARY KEY (id) INCLUDE (a));
INSERT INTO public.keyed SELECT g, 'a' || g, g % 10 FROM generate_series(1, 100) g;
ANALYZE;
`

// realEnv is a running Vigia with one scanned source.
type realEnv struct {
	env    *apptest.Env
	ws     string
	admin  string
	tok    string
	connID string
	src    *sourceDB
	scan   map[string]any
	byName map[string]string // schema.table → dataset id
}

func (re *realEnv) getJSON(t *testing.T, path string, into any) []byte {
	t.Helper()
	r := re.env.Do(t, http.MethodGet, path, re.tok, nil)
	if r.Status != 200 {
		t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
	}
	if into != nil {
		r.JSON(t, into)
	}
	return r.Body
}

// newRealEnv scans src through the API and waits for the scan.
func newRealEnv(t *testing.T, env *apptest.Env, src *sourceDB) *realEnv {
	t.Helper()
	re := &realEnv{env: env, ws: env.MustWorkspace(t, "realdb"), src: src}
	re.admin = env.MustSession(t, re.ws, vigia.RoleAdmin)
	re.tok = env.MustToken(t, re.ws)
	re.connID = mustCreateConnection(t, env, re.admin, map[string]any{"name": "dw", "kind": src.kind, "dsn": src.dsn,
		"statement_timeout_s": 120})
	re.rescan(t)
	return re
}

func (re *realEnv) rescan(t *testing.T) {
	t.Helper()
	sc := mustScanConnection(t, re.env, re.ws, re.tok, re.connID)
	re.getJSON(t, "/api/v1/scans/"+sc.ID, &re.scan)
	var ds []map[string]any
	re.getJSON(t, "/api/v1/datasets?connection_id="+re.connID, &ds)
	re.byName = map[string]string{}
	for _, d := range ds {
		re.byName[d["name"].(string)] = d["id"].(string)
	}
}

// impactColumnsOut is the columns list of /lineage/impact?column=.
type impactColumnsOut struct {
	Columns []struct {
		DatasetName string `json:"dataset_name"`
		Column      string `json:"column"`
		Hops        int    `json:"hops"`
	} `json:"columns"`
}

// mustCreateConnection adds a connection through the API and returns its id.
func mustCreateConnection(t *testing.T, env *apptest.Env, admin string, body map[string]any) string {
	t.Helper()
	r := env.Do(t, http.MethodPost, "/api/v1/connections", admin, body)
	if r.Status != 201 {
		t.Fatalf("connection: %d %s", r.Status, r.Body)
	}
	var c map[string]any
	r.JSON(t, &c)
	return c["id"].(string)
}

// detailOut is the part of the dataset detail the comparison reads; numbers stay raw
// JSON so that a lost digit cannot hide behind a float64 decoding.
type detailOut struct {
	Name          string `json:"name"`
	Kind          string `json:"kind"`
	CostGuarded   bool   `json:"cost_guarded"`
	RowCount      *int64 `json:"row_count"`
	RowCountExact *bool  `json:"row_count_exact"`
	LastFailure   *struct {
		Code string `json:"code"`
	} `json:"last_failure"`
	Columns []struct {
		Name       string `json:"name"`
		DataType   string `json:"data_type"`
		PrimaryKey bool   `json:"primary_key"`
		Partition  bool   `json:"partition"`
		Profile    *struct {
			NullCount  int64           `json:"null_count"`
			Estimated  bool            `json:"estimated"`
			SampleSize *int            `json:"sample_size"`
			Min        json.RawMessage `json:"min"`
			Max        json.RawMessage `json:"max"`
			MinTime    *time.Time      `json:"min_time"`
			MaxTime    *time.Time      `json:"max_time"`
			MinLength  *int            `json:"min_length"`
			MaxLength  *int            `json:"max_length"`
			Distinct   *struct {
				Value     float64 `json:"value"`
				Estimated bool    `json:"estimated"`
			} `json:"distinct"`
		} `json:"profile"`
	} `json:"columns"`
}

// numberText reads a min or max as its exact digits: a JSON number as written, or the
// string form Vigia uses past what a double holds.
func numberText(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	s := string(raw)
	if strings.HasPrefix(s, `"`) {
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// sameNumber compares two decimal texts exactly.
func sameNumber(a, b string) bool {
	x, ok1 := new(big.Rat).SetString(a)
	y, ok2 := new(big.Rat).SetString(b)
	return ok1 && ok2 && x.Cmp(y) == 0
}

// dialectSQL is what differs between the sources when asking them for the truth.
type dialectSQL struct {
	quote     func(string) string
	numText   func(q string) string // an aggregate's result as exact text
	charLen   func(q string) string
	limitFrom func(from string) string // the first BasicRows rows of a relation
}

var pgTruth = dialectSQL{
	quote:     func(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` },
	numText:   func(q string) string { return q + "::text" },
	charLen:   func(q string) string { return "char_length(" + q + "::text)" },
	limitFrom: func(from string) string { return "(SELECT * FROM " + from + " LIMIT 1000) AS t" },
}

var mysqlTruth = dialectSQL{
	quote:     func(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" },
	numText:   func(q string) string { return "CAST(" + q + " AS CHAR)" },
	charLen:   func(q string) string { return "CHAR_LENGTH(" + q + ")" },
	limitFrom: func(from string) string { return "(SELECT * FROM " + from + " LIMIT 1000) AS t" },
}

func isNumericType(dt string) bool {
	dt = strings.ToLower(dt)
	for _, p := range []string{"smallint", "integer", "bigint", "numeric", "decimal", "real", "double", "int", "float"} {
		if strings.HasPrefix(dt, p) || strings.Contains(dt, " "+p) {
			return !strings.HasPrefix(dt, "interval") && !strings.HasPrefix(dt, "tinyint(1)")
		}
	}
	return false
}

func isTemporalType(dt string) bool {
	dt = strings.ToLower(dt)
	return dt == "date" || strings.HasPrefix(dt, "timestamp") || strings.HasPrefix(dt, "datetime")
}

func isTextType(dt string) bool {
	dt = strings.ToLower(dt)
	return dt == "text" || strings.HasPrefix(dt, "character") || strings.HasPrefix(dt, "varchar") || strings.HasPrefix(dt, "char")
}

// compareDataset checks every figure of one dataset's detail against the database.
func compareDataset(t *testing.T, db *sql.DB, d dialectSQL, qualified string, det detailOut) {
	t.Helper()
	from := qualified
	var total int64
	if err := db.QueryRow("SELECT count(*) FROM " + qualified).Scan(&total); err != nil {
		t.Fatalf("%s: count: %v", det.Name, err)
	}
	if det.CostGuarded {
		// Read over its first rows: said as such, and compared with those rows.
		from = d.limitFrom(qualified)
		want := min(total, 1000)
		if det.RowCount == nil || *det.RowCount != want || det.RowCountExact == nil || *det.RowCountExact != (total < 1000) {
			t.Errorf("%s: row_count %v exact %v; the database has %d rows (first %d read)", det.Name, det.RowCount, det.RowCountExact, total, want)
		}
	} else if det.RowCount == nil || *det.RowCount != total || det.RowCountExact == nil || !*det.RowCountExact {
		t.Errorf("%s: row_count %v exact %v; count(*) is %d", det.Name, det.RowCount, det.RowCountExact, total)
	}
	for _, c := range det.Columns {
		p := c.Profile
		if p == nil {
			t.Errorf("%s.%s: no profile", det.Name, c.Name)
			continue
		}
		q := d.quote(c.Name)
		var nonNull int64
		var rows int64
		if err := db.QueryRow("SELECT count(*), count("+q+") FROM "+from).Scan(&rows, &nonNull); err != nil {
			t.Fatalf("%s.%s: %v", det.Name, c.Name, err)
		}
		if p.NullCount != rows-nonNull {
			t.Errorf("%s.%s: null_count %d; the database counts %d", det.Name, c.Name, p.NullCount, rows-nonNull)
		}
		if (det.CostGuarded && total >= 1000) != p.Estimated || (p.Estimated && (p.SampleSize == nil || int64(*p.SampleSize) != rows)) {
			t.Errorf("%s.%s: estimated %v sample_size %v over %d rows read", det.Name, c.Name, p.Estimated, p.SampleSize, rows)
		}
		switch {
		case isNumericType(c.DataType):
			var lo, hi sql.NullString
			if err := db.QueryRow("SELECT "+d.numText("min("+q+")")+", "+d.numText("max("+q+")")+" FROM "+from).Scan(&lo, &hi); err != nil {
				t.Fatalf("%s.%s: %v", det.Name, c.Name, err)
			}
			if !lo.Valid {
				if len(p.Min) != 0 || len(p.Max) != 0 {
					t.Errorf("%s.%s: min/max %s %s of an all-null column", det.Name, c.Name, p.Min, p.Max)
				}
				break
			}
			if got := numberText(t, p.Min); !sameNumber(got, lo.String) {
				t.Errorf("%s.%s: min %s; the database says %s", det.Name, c.Name, got, lo.String)
			}
			if got := numberText(t, p.Max); !sameNumber(got, hi.String) {
				t.Errorf("%s.%s: max %s; the database says %s", det.Name, c.Name, got, hi.String)
			}
		case isTemporalType(c.DataType):
			var lo, hi sql.NullTime
			if err := db.QueryRow("SELECT min("+q+"), max("+q+") FROM "+from).Scan(&lo, &hi); err != nil {
				t.Fatalf("%s.%s: %v", det.Name, c.Name, err)
			}
			if lo.Valid && (p.MinTime == nil || !p.MinTime.Equal(lo.Time) || p.MaxTime == nil || !p.MaxTime.Equal(hi.Time)) {
				t.Errorf("%s.%s: min/max time %v %v; the database says %v %v", det.Name, c.Name, p.MinTime, p.MaxTime, lo.Time, hi.Time)
			}
		case isTextType(c.DataType):
			var lo, hi sql.NullInt64
			if err := db.QueryRow("SELECT min("+d.charLen(q)+"), max("+d.charLen(q)+") FROM "+from).Scan(&lo, &hi); err != nil {
				t.Fatalf("%s.%s: %v", det.Name, c.Name, err)
			}
			if lo.Valid && (p.MinLength == nil || int64(*p.MinLength) != lo.Int64 || p.MaxLength == nil || int64(*p.MaxLength) != hi.Int64) {
				t.Errorf("%s.%s: lengths %v %v; the database says %d %d", det.Name, c.Name, p.MinLength, p.MaxLength, lo.Int64, hi.Int64)
			}
		}
		if p.Distinct != nil && !p.Distinct.Estimated {
			var n int64
			if err := db.QueryRow("SELECT count(DISTINCT " + q + ") FROM " + from).Scan(&n); err != nil {
				t.Fatalf("%s.%s: %v", det.Name, c.Name, err)
			}
			if int64(p.Distinct.Value) != n {
				t.Errorf("%s.%s: distinct %v; count(DISTINCT) says %d", det.Name, c.Name, p.Distinct.Value, n)
			}
		}
	}
}

type lineageOut struct {
	Unresolved []string `json:"unresolved"`
	Upstream   []struct {
		Name        *string  `json:"name"`
		EdgeKinds   []string `json:"edge_kinds"`
		ColumnLevel bool     `json:"column_level"`
		ColumnMap   []struct {
			From   string `json:"from"`
			To     string `json:"to"`
			Direct bool   `json:"direct"`
		} `json:"column_map"`
	} `json:"upstream"`
}

// upstreamNames lists a dataset's upstream neighbours linked by an edge of kind.
func upstreamNames(l lineageOut, kind string) []string {
	out := []string{}
	for _, u := range l.Upstream {
		if u.Name != nil && slices.Contains(u.EdgeKinds, kind) {
			out = append(out, *u.Name)
		}
	}
	sort.Strings(out)
	return out
}

func TestRealisticPostgresSourceMatchesTheDatabase(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	src := newSource(t, "postgres", "")
	src.exec(t, realPostgresDDL)
	re := newRealEnv(t, env, src)
	ctx := context.Background()

	t.Run("DatasetsAreTheDatabasesRelations", func(t *testing.T) {
		rows, err := src.db.QueryContext(ctx, `SELECT n.nspname || '.' || c.relname, c.relkind::text FROM pg_class c
			JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind IN ('r', 'p', 'v', 'm') AND NOT c.relispartition
			AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\_%'`)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{}
		for rows.Next() {
			var name, kind string
			if err := rows.Scan(&name, &kind); err != nil {
				t.Fatal(err)
			}
			want[name] = map[string]string{"r": "table", "p": "table", "v": "view", "m": "materialized_view"}[kind]
		}
		rows.Close()
		if len(want) != len(re.byName) {
			t.Fatalf("datasets %v; the database has %v", nameKeys(re.byName), nameKeys(want))
		}
		for name, kind := range want {
			var d detailOut
			re.getJSON(t, "/api/v1/datasets/"+re.byName[name], &d)
			if d.Kind != kind {
				t.Errorf("%s: kind %s, relkind says %s", name, d.Kind, kind)
			}
		}
	})

	t.Run("EveryFigureMatchesTheDatabasesOwnAnswer", func(t *testing.T) {
		for name, id := range re.byName {
			if name == "analytics.monthly" {
				continue // never refreshed: not profiled (below)
			}
			var d detailOut
			re.getJSON(t, "/api/v1/datasets/"+id, &d)
			schema, table, _ := strings.Cut(name, ".")
			compareDataset(t, src.db, pgTruth, pgTruth.quote(schema)+"."+pgTruth.quote(table), d)
		}
	})

	t.Run("KeyColumnsAreTheIndexKeyColumnsOnly", func(t *testing.T) {
		for _, name := range []string{"public.keyed", "sales.orders", "public.rental"} {
			var d detailOut
			re.getJSON(t, "/api/v1/datasets/"+re.byName[name], &d)
			var want []string
			rows, err := src.db.QueryContext(ctx, `SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid
				AND a.attnum = ANY ((i.indkey::int2[])[0:i.indnkeyatts - 1]) WHERE i.indisprimary AND i.indrelid = $1::regclass ORDER BY a.attnum`, name)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var c string
				_ = rows.Scan(&c)
				want = append(want, c)
			}
			rows.Close()
			var got []string
			for _, c := range d.Columns {
				if c.PrimaryKey {
					got = append(got, c.Name)
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s: key columns %v; the index keys %v", name, got, want)
			}
		}
	})

	t.Run("LargeNumbersKeepEveryDigitInTheJSON", func(t *testing.T) {
		body := string(re.getJSON(t, "/api/v1/datasets/"+re.byName["sales.orders"], nil))
		// Past 2^53 and past a double's 17 digits: strings. A value a double reads back to
		// the same decimal stays a number.
		for _, want := range []string{`"max":"9007199254740993"`, `"min":"-9223372036854775808"`,
			`"max":"12345678901234567890.1234567891"`, `"min":-0.0000000001`} {
			if !strings.Contains(body, want) {
				t.Errorf("sales.orders detail lacks %s:\n%s", want, body)
			}
		}
	})

	t.Run("ViewLineageNamesWhatTheDependencyCatalogNames", func(t *testing.T) {
		for _, view := range []string{"legacy.big_rentals", "legacy.own_notes", "analytics.revenue_by_city", "analytics.all_rentals",
			"analytics.city_counts", "analytics.monthly", "analytics.pivot"} {
			var want []string
			rows, err := src.db.QueryContext(ctx, `SELECT DISTINCT tn.nspname || '.' || t.relname FROM pg_rewrite r
				JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid AND d.refclassid = 'pg_class'::regclass
				JOIN pg_class t ON t.oid = coalesce(pg_partition_root(d.refobjid), d.refobjid) JOIN pg_namespace tn ON tn.oid = t.relnamespace
				WHERE r.ev_class = $1::regclass AND t.oid <> r.ev_class ORDER BY 1`, view)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var n string
				_ = rows.Scan(&n)
				want = append(want, n)
			}
			rows.Close()
			if want == nil {
				want = []string{}
			}
			var l lineageOut
			re.getJSON(t, "/api/v1/datasets/"+re.byName[view]+"/lineage", &l)
			if got := upstreamNames(l, "parsed"); !slices.Equal(got, want) {
				t.Errorf("%s: parsed upstream %v; pg_depend says %v", view, got, want)
			}
		}
		// The view of schema legacy reads public.rental, never legacy.rental.
		var l lineageOut
		re.getJSON(t, "/api/v1/datasets/"+re.byName["legacy.big_rentals"]+"/lineage", &l)
		if got := upstreamNames(l, "parsed"); !slices.Equal(got, []string{"public.rental"}) {
			t.Fatalf("legacy.big_rentals upstream %v", got)
		}
		for _, u := range l.Upstream {
			if *u.Name == "public.rental" && (!u.ColumnLevel || len(u.ColumnMap) != 3) {
				t.Fatalf("legacy.big_rentals from public.rental: column map %+v (column level %v)", u.ColumnMap, u.ColumnLevel)
			}
		}
		// Each branch of the UNION copies its id: direct from both tables.
		re.getJSON(t, "/api/v1/datasets/"+re.byName["analytics.all_rentals"]+"/lineage", &l)
		for _, u := range l.Upstream {
			found := false
			for _, p := range u.ColumnMap {
				if p.From == "id" && p.To == "id" {
					found = p.Direct
				}
			}
			if !found || !u.ColumnLevel {
				t.Errorf("analytics.all_rentals from %v: id not a direct copy: %+v", *u.Name, u.ColumnMap)
			}
		}
		// SQL inside a string: no table the catalog records, said as dynamic_sql.
		re.getJSON(t, "/api/v1/datasets/"+re.byName["analytics.pivot"]+"/lineage", &l)
		if len(l.Upstream) != 0 || !slices.Contains(l.Unresolved, "dynamic_sql") {
			t.Fatalf("analytics.pivot: upstream %v unresolved %v", upstreamNames(l, "parsed"), l.Unresolved)
		}
	})

	t.Run("ColumnImpactCarriesThroughEveryHop", func(t *testing.T) {
		var im impactColumnsOut
		re.getJSON(t, "/api/v1/datasets/"+re.byName["public.customer"]+"/lineage/impact?column=city", &im)
		got := map[string]bool{}
		for _, c := range im.Columns {
			got[c.DatasetName+"."+c.Column] = true
		}
		for _, want := range []string{"analytics.revenue_by_city.city", "analytics.city_counts.city"} {
			if !got[want] {
				t.Errorf("impact of customer.city lacks %s: %+v", want, im.Columns)
			}
		}
	})

	t.Run("NeverRefreshedMaterializedViewIsNamedWithItsCode", func(t *testing.T) {
		var failures []struct {
			DatasetID string `json:"dataset_id"`
			Name      string `json:"name"`
			Code      string `json:"code"`
		}
		b, _ := json.Marshal(re.scan["failures"])
		_ = json.Unmarshal(b, &failures)
		if len(failures) != 1 || failures[0].Name != "analytics.monthly" || failures[0].Code != "not_populated" ||
			failures[0].DatasetID != re.byName["analytics.monthly"] || re.scan["datasets_failed"].(float64) != 1 {
			t.Fatalf("scan failures %s (datasets_failed %v)", b, re.scan["datasets_failed"])
		}
		gq := re.env.GraphQL(t, re.tok, `{ scans(limit: 1) { items { datasetsFailed failures { name code } } } }`, nil)
		if b, _ := json.Marshal(gq); !strings.Contains(string(b), `"failures":[{"code":"not_populated","name":"analytics.monthly"}]`) {
			t.Fatalf("GraphQL scan failures: %s", b)
		}
		var d detailOut
		re.getJSON(t, "/api/v1/datasets/"+re.byName["analytics.monthly"], &d)
		if d.LastFailure == nil || d.LastFailure.Code != "not_populated" {
			t.Fatalf("detail of the failed dataset: %+v", d.LastFailure)
		}
		var tr struct {
			Blockers []struct {
				Key    string         `json:"key"`
				Params map[string]any `json:"params"`
			} `json:"blockers"`
		}
		re.getJSON(t, "/api/v1/datasets/"+re.byName["analytics.monthly"]+"/trust", &tr)
		if len(tr.Blockers) == 0 || tr.Blockers[0].Key != "profile_failed" || tr.Blockers[0].Params["code"] != "not_populated" {
			t.Fatalf("trust blockers %+v: the failure's reason, not 'not analysed yet'", tr.Blockers)
		}
	})

	t.Run("EmptyTableIsNotTrusted", func(t *testing.T) {
		var dec struct {
			Decision string `json:"decision"`
			Reasons  []struct {
				Code   string         `json:"code"`
				Params map[string]any `json:"params"`
			} `json:"reasons"`
		}
		re.getJSON(t, "/api/v1/datasets/"+re.byName["staging.empty_load"]+"/trust-decision?purpose=bi", &dec)
		named := false
		for _, r := range dec.Reasons {
			named = named || r.Params["blocker"] == "empty_dataset"
		}
		if dec.Decision == "trusted" || !named {
			t.Fatalf("empty table for bi: %+v", dec)
		}
		var v struct {
			Verdict string `json:"verdict"`
			Reasons []struct {
				Code string `json:"code"`
			} `json:"reasons"`
		}
		re.getJSON(t, "/api/v1/datasets/"+re.byName["staging.empty_load"]+"/verdict", &v)
		if v.Verdict == "pass" || len(v.Reasons) == 0 || v.Reasons[len(v.Reasons)-1].Code != "empty_dataset" {
			t.Fatalf("verdict of an empty table %+v", v)
		}
	})

	t.Run("CappedReadSaidAsSuchEverywhere", func(t *testing.T) {
		id := re.byName["legacy.big_rentals"]
		var ctxOut struct {
			RowCount      *int64 `json:"row_count"`
			RowCountExact *bool  `json:"row_count_exact"`
		}
		re.getJSON(t, "/api/v1/datasets/"+id+"/context", &ctxOut)
		if ctxOut.RowCountExact == nil || *ctxOut.RowCountExact || ctxOut.RowCount == nil || *ctxOut.RowCount != 1000 {
			t.Fatalf("context of a view read over its first rows: %+v", ctxOut)
		}
		var inc struct {
			LastRun struct {
				RowCount      int64 `json:"row_count"`
				RowCountExact bool  `json:"row_count_exact"`
			} `json:"last_run"`
		}
		re.getJSON(t, "/api/v1/datasets/"+id+"/incremental-profiling", &inc)
		if inc.LastRun.RowCountExact || inc.LastRun.RowCount != 1000 {
			t.Fatalf("incremental profiling: %+v", inc)
		}
		gq := re.env.GraphQL(t, re.tok, `query($id: ID!) { dataset(id: $id) { rowCount rowCountExact columns { name min max profileEstimated } } }`,
			map[string]any{"id": re.byName["sales.orders"]})
		b, _ := json.Marshal(gq)
		if !strings.Contains(string(b), `"rowCountExact":true`) || !strings.Contains(string(b), `"max":"9007199254740993"`) {
			t.Fatalf("GraphQL dataset: %s", b)
		}
	})

	t.Run("OpenLineageIdentityOrderAndDirect", func(t *testing.T) {
		var conn struct {
			OpenLineage struct {
				Namespace string `json:"namespace"`
				Database  string `json:"database"`
			} `json:"openlineage"`
		}
		re.getJSON(t, "/api/v1/connections/"+re.connID, &conn)
		ns, dbName := conn.OpenLineage.Namespace, conn.OpenLineage.Database
		if ns != "postgres://127.0.0.1:5432" || dbName == "" {
			t.Fatalf("connection identity %+v", conn.OpenLineage)
		}
		ev := func(typ, at, namespace, name string, facet bool) map[string]any {
			out := map[string]any{"namespace": ns, "name": dbName + ".legacy.own_notes"}
			if facet {
				out["facets"] = map[string]any{"columnLineage": map[string]any{"fields": map[string]any{
					"note": map[string]any{"inputFields": []any{map[string]any{"namespace": namespace, "name": name, "field": "note",
						"transformations": []any{map[string]any{"type": "DIRECT", "subtype": "IDENTITY"}}}}}}}}
			}
			return map[string]any{"eventType": typ, "eventTime": at, "producer": "https://example.org/etl",
				"schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
				"run":       map[string]any{"runId": "01928f4e-0000-7000-8000-000000000001"},
				"job":       map[string]any{"namespace": "etl", "name": "copy_" + strings.ReplaceAll(namespace, "/", "_")},
				"inputs":    []any{map[string]any{"namespace": namespace, "name": name}}, "outputs": []any{out}}
		}
		// Same schema.table, two servers: only ours links our dataset. The COMPLETE
		// arrives before its START, and the START (fewer facets) must not erase its map.
		ours := []any{ev("COMPLETE", "2026-11-21T10:05:00Z", ns, dbName+".public.customer", true),
			ev("START", "2026-11-21T10:00:00Z", ns, dbName+".public.customer", false)}
		theirs := []any{ev("COMPLETE", "2026-11-21T10:05:00Z", "postgres://other-host:5432", "otherdb.public.customer", true)}
		var ndjson strings.Builder
		for _, e := range append(ours, theirs...) {
			b, _ := json.Marshal(e)
			ndjson.Write(b)
			ndjson.WriteString("\n")
		}
		r := re.env.Do(t, http.MethodPost, "/api/v1/lineage/openlineage", re.tok, ndjson.String(), "Content-Type: application/x-ndjson")
		if r.Status != 200 {
			t.Fatalf("batch: %d %s", r.Status, r.Body)
		}
		var res struct {
			Events, Accepted, Unmatched int
			UnmatchedNames              []string `json:"unmatched_names"`
		}
		r.JSON(t, &res)
		if res.Events != 3 || res.Accepted != 3 || !slices.Equal(res.UnmatchedNames, []string{"postgres://other-host:5432/otherdb.public.customer"}) {
			t.Fatalf("batch result %s", r.Body)
		}
		var l lineageOut
		re.getJSON(t, "/api/v1/datasets/"+re.byName["legacy.own_notes"]+"/lineage", &l)
		ol := upstreamNames(l, "openlineage")
		if !slices.Equal(ol, []string{"public.customer"}) {
			t.Fatalf("openlineage upstream %v: only the event naming this server may link", ol)
		}
		for _, u := range l.Upstream {
			if *u.Name == "public.customer" && (len(u.ColumnMap) != 1 || !u.ColumnMap[0].Direct || u.ColumnMap[0].From != "note") {
				t.Fatalf("column map after START-after-COMPLETE: %+v", u.ColumnMap)
			}
		}
		// A body that is no OpenLineage event says so.
		r = re.env.Do(t, http.MethodPost, "/api/v1/lineage/openlineage", re.tok, map[string]any{"eventTime": "2026-11-21T10:00:00Z", "producer": "x"})
		if r.Status != 422 || !strings.Contains(string(r.Body), "openlineage_kind_unsupported") || strings.Contains(string(r.Body), "job.name") {
			t.Fatalf("not an event: %d %s", r.Status, r.Body)
		}
	})

	t.Run("AnswersMatchTheOpenAPIDocument", func(t *testing.T) {
		doc := re.env.Document(t)
		for _, name := range []string{"sales.orders", "legacy.big_rentals", "analytics.monthly", "staging.empty_load"} {
			id := re.byName[name]
			// (/context is left out: its null layer is outside the document's enum, a
			// document fault issue 12 owns.)
			for _, suffix := range []string{"", "/lineage", "/incremental-profiling", "/trust", "/trust-decision?purpose=bi", "/verdict"} {
				doc.Do(t, http.MethodGet, "/api/v1/datasets/"+id+suffix, re.tok, nil)
			}
		}
		doc.Do(t, http.MethodGet, "/api/v1/scans/"+re.scan["id"].(string), re.tok, nil)
		doc.Do(t, http.MethodGet, "/api/v1/connections/"+re.connID, re.tok, nil)
		batch := `[{"eventType":"RUNNING","eventTime":"2026-11-21T11:00:00Z","run":{"runId":"x"},"job":{"namespace":"etl","name":"j"}},{"producer":"x"}]`
		if r := doc.Do(t, http.MethodPost, "/api/v1/lineage/openlineage", re.tok, batch); !strings.Contains(string(r.Body), `"refused":[{"index":1`) {
			t.Fatalf("batch with a refused event: %s", r.Body)
		}
	})
}

func TestDBTImportNeverErasesSilently(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	src := newSource(t, "postgres", "")
	src.exec(t, `CREATE SCHEMA analytics; CREATE TABLE analytics.stg_orders (id int PRIMARY KEY, amount numeric);
		CREATE TABLE analytics.orders (id int PRIMARY KEY, amount numeric)`)
	re := newRealEnv(t, env, src)
	node := func(schema, name string, deps ...string) map[string]any {
		return map[string]any{"resource_type": "model", "schema": schema, "name": name, "depends_on": map[string]any{"nodes": deps}}
	}
	post := func(query string, schema string) *apptest.Response {
		manifest := map[string]any{"metadata": map[string]any{"project_name": "dw"}, "sources": map[string]any{},
			"nodes": map[string]any{"model.dw.stg_orders": node(schema, "stg_orders"), "model.dw.orders": node(schema, "orders", "model.dw.stg_orders")}}
		body := map[string]any{"run_results": map[string]any{"metadata": map[string]any{"invocation_id": "i"}, "results": []any{}}, "manifest": manifest}
		return re.env.Do(t, http.MethodPost, "/api/v1/integrations/dbt/run-results"+query, re.tok, body)
	}
	edges := func() []string {
		var l lineageOut
		re.getJSON(t, "/api/v1/datasets/"+re.byName["analytics.orders"]+"/lineage", &l)
		return upstreamNames(l, "dbt")
	}
	if r := post("", "analytics"); r.Status != 200 || !slices.Equal(edges(), []string{"analytics.stg_orders"}) {
		t.Fatalf("first import: %d %s, edges %v", r.Status, r.Body, edges())
	}
	// The same project built into another schema matches nothing here.
	r := post("", "dbt_prod")
	if r.Status == 409 {
		// The refusal's structured detail is what the document says.
		manifest := `{"run_results": {"results": []}, "manifest": {"metadata": {"project_name": "dw"}, "sources": {},
			"nodes": {"model.dw.orders": {"resource_type": "model", "schema": "dbt_prod", "name": "orders", "depends_on": {"nodes": []}}}}}`
		re.env.Document(t).Do(t, http.MethodPost, "/api/v1/integrations/dbt/run-results", re.tok, manifest)
	}
	var refused struct {
		Code   string `json:"code"`
		Detail struct {
			Code           string   `json:"code"`
			Message        string   `json:"message"`
			UnmatchedNames []string `json:"unmatched_names"`
		} `json:"detail"`
	}
	r.JSON(t, &refused)
	if r.Status != 409 || refused.Code != "dbt_import_would_erase" || refused.Detail.Message == "" ||
		!slices.Equal(refused.Detail.UnmatchedNames, []string{"model.dw.orders", "model.dw.stg_orders"}) {
		t.Fatalf("import matching nothing: %d %s", r.Status, r.Body)
	}
	if got := edges(); !slices.Equal(got, []string{"analytics.stg_orders"}) {
		t.Fatalf("a refused import changed the edges: %v", got)
	}
	r = post("?replace=true", "dbt_prod")
	var res struct {
		Lineage struct {
			Edges          int      `json:"edges"`
			Replaced       bool     `json:"replaced"`
			UnmatchedNames []string `json:"unmatched_names"`
		} `json:"lineage"`
	}
	r.JSON(t, &res)
	if r.Status != 200 || !res.Lineage.Replaced || res.Lineage.Edges != 0 || len(res.Lineage.UnmatchedNames) != 2 || len(edges()) != 0 {
		t.Fatalf("replace=true: %d %s, edges %v", r.Status, r.Body, edges())
	}
}

func nameKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestRealisticMariaDBSourceMatchesTheDatabase(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	src := newSource(t, "mysql", "")
	for _, stmt := range []string{
		`CREATE TABLE city (id INT PRIMARY KEY, name VARCHAR(40) COLLATE utf8mb4_general_ci, code VARCHAR(10) COLLATE utf8mb4_bin,
			big BIGINT UNSIGNED, amount DECIMAL(38,10), seen DATETIME, flag TINYINT(1)) DEFAULT CHARSET = utf8mb4`,
		`CREATE TABLE empty_load (id INT PRIMARY KEY, payload TEXT)`,
		`CREATE TABLE events (id INT NOT NULL, day DATE NOT NULL, v INT, PRIMARY KEY (id, day))
			PARTITION BY RANGE (YEAR(day)) (PARTITION p2025 VALUES LESS THAN (2026), PARTITION pmax VALUES LESS THAN MAXVALUE)`,
	} {
		src.exec(t, stmt)
	}
	names := []string{"Lisboa", "LISBOA", "lisboa", "Porto", "PORTO", "porto ", "Évora", "evora", "Faro"}
	for i := 1; i <= 1800; i++ {
		var amount any = fmt.Sprintf("%d.%04d", i*7, i%10000)
		if i%13 == 0 {
			amount = nil
		}
		src.exec(t, `INSERT INTO city VALUES (?, ?, ?, ?, ?, ?, ?)`, i, names[i%len(names)], names[i%len(names)], uint64(i)*1000, amount,
			time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i)*time.Hour), i%2)
	}
	src.exec(t, `INSERT INTO city VALUES (1801, NULL, NULL, 18446744073709551615, 12345678901234567890.1234567891, NULL, NULL)`)
	src.exec(t, `INSERT INTO events SELECT id, DATE_ADD('2025-06-01', INTERVAL id DAY), id % 5 FROM city`)
	src.exec(t, `CREATE VIEW city_upper AS SELECT c.id, UPPER(c.name) AS name, c.amount FROM city c WHERE c.id > 100`)
	re := newRealEnv(t, env, src)

	t.Run("EveryFigureMatchesTheDatabasesOwnAnswer", func(t *testing.T) {
		if len(re.byName) != 4 {
			t.Fatalf("datasets %v", nameKeys(re.byName))
		}
		for name, id := range re.byName {
			var d detailOut
			re.getJSON(t, "/api/v1/datasets/"+id, &d)
			_, table, _ := strings.Cut(name, ".")
			compareDataset(t, src.db, mysqlTruth, mysqlTruth.quote(table), d)
		}
	})

	t.Run("DistinctFollowsTheCollation", func(t *testing.T) {
		var d detailOut
		re.getJSON(t, "/api/v1/datasets/"+re.byName[anyName(re.byName, "city")], &d)
		for _, c := range d.Columns {
			if c.Name != "name" && c.Name != "code" {
				continue
			}
			var want int64
			if err := src.db.QueryRow("SELECT COUNT(DISTINCT " + c.Name + ") FROM city").Scan(&want); err != nil {
				t.Fatal(err)
			}
			if c.Profile.Distinct == nil || int64(c.Profile.Distinct.Value) != want {
				t.Errorf("%s: distinct %+v; SELECT COUNT(DISTINCT) says %d", c.Name, c.Profile.Distinct, want)
			}
		}
	})

	t.Run("UnsignedExtremeKeepsEveryDigit", func(t *testing.T) {
		body := string(re.getJSON(t, "/api/v1/datasets/"+re.byName[anyName(re.byName, "city")], nil))
		for _, want := range []string{`"max":"18446744073709551615"`, `"max":"12345678901234567890.1234567891"`} {
			if !strings.Contains(body, want) {
				t.Errorf("city detail lacks %s", want)
			}
		}
	})

	t.Run("ViewLineageInTheDefaultDatabase", func(t *testing.T) {
		var l lineageOut
		re.getJSON(t, "/api/v1/datasets/"+re.byName[anyName(re.byName, "city_upper")]+"/lineage", &l)
		if got := upstreamNames(l, "parsed"); len(got) != 1 || !strings.HasSuffix(got[0], ".city") {
			t.Fatalf("city_upper upstream %v", got)
		}
		for _, p := range l.Upstream[0].ColumnMap {
			if p.From == "id" && p.To == "id" && !p.Direct {
				t.Fatalf("id is a plain copy: %+v", l.Upstream[0].ColumnMap)
			}
		}
	})
}

// anyName finds the schema.table of a table by its table name.
func anyName(byName map[string]string, table string) string {
	for n := range byName {
		if strings.HasSuffix(n, "."+table) {
			return n
		}
	}
	return table
}
