package validate_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/rule"
	"github.com/vigia-data/vigia/rulesql"
	"github.com/vigia-data/vigia/validate"
)

func f(v float64) *float64 { return &v }

func mkRule(id, typ, severity string, p rule.Params) rule.ScanRule {
	return rule.ScanRule{Rule: rule.Rule{ID: id, Type: typ, Severity: severity, Params: p, Active: true, ConnectionKind: "postgres",
		DatasetSchema: "public", DatasetTable: "t"}}
}

// agreementRules are the row rules whose per-record answer is compared with the SQL's.
func agreementRules() []rule.ScanRule {
	return []rule.ScanRule{
		mkRule("r01", rule.TypeNotNull, "critical", rule.Params{Column: "code"}),
		mkRule("r02", rule.TypeAcceptedValues, "warning", rule.Params{Column: "status", Values: []string{"novo", "pago", "Pago ", "1"}}),
		mkRule("r03", rule.TypePattern, "warning", rule.Params{Column: "code", Pattern: `^[0-9]{4}-[0-9]{3}$`}),
		mkRule("r04", rule.TypePattern, "warning", rule.Params{Column: "code", Pattern: `^[A-Z]{2}[0-9]{2}( ?[A-Z0-9]){11,30}$`}),
		mkRule("r05", rule.TypePattern, "warning", rule.Params{Column: "code", Pattern: `^(\+351|00351)?[ .()/-]*[239]([ .()/-]*[0-9]){8}$`}),
		mkRule("r06", rule.TypePattern, "warning", rule.Params{Column: "code", Pattern: `^[^@ ]+@[^@ ]+\.[A-Za-z]{2,}$`}),
		mkRule("r07", rule.TypePattern, "warning", rule.Params{Column: "code", Pattern: `a.b`}),
		mkRule("r08", rule.TypePattern, "warning", rule.Params{Column: "code", Pattern: `\d{3}|[[:digit:]]x$`}),
		mkRule("r09", rule.TypeRange, "critical", rule.Params{Column: "amount", Min: f(0), Max: f(99.5)}),
		mkRule("r10", rule.TypeRange, "critical", rule.Params{Column: "amount", Min: f(-0.000001)}),
		mkRule("r11", rule.TypePattern, "warning", rule.Params{Column: "code", Pattern: `^(?:ab|c)+$`}),
		mkRule("r12", rule.TypeAcceptedValues, "warning", rule.Params{Column: "amount", Values: []string{"1", "2.50"}}),
	}
}

// agreementValues are (code, status, amount) rows; nil is NULL.
func agreementValues() [][3]*string {
	s := func(v string) *string { return &v }
	return [][3]*string{
		{s("1000-100"), s("novo"), s("1")},
		{s("1000-1000"), s("pago"), s("1.0")},
		{s("PT50000201231234567890154"), s("Pago"), s("2.5")},
		{s("PT50 0002 0123 1234 5678 9015 4"), s("Pago "), s("99.5")},
		{s("+351 912 345 678"), s("1"), s("99.5000001")},
		{s("00351912345678"), nil, s("-0.5")},
		{s("912345678"), s("PAGO"), nil},
		{s("x@y.pt"), s(""), s("0")},
		{s("x@@y.pt"), s("novo "), s("-0.000001")},
		{s("a\nb"), s("pago"), s("-0.0000011")},
		{s("a\r\nb"), s("pago"), s("1e2")},
		{s("ação 123"), s("pago"), s("100")},
		{s("7x"), s("pago"), s("3")},
		{s("ababc"), s("pago"), s("2.50")},
		{s("abca"), s("pago"), s("2.500")},
		{nil, s("pago"), s("0.0")},
		{s(""), s("pago"), s("12")},
		{s("ＡＢ"), s("pago"), s("13")},
		{s("ab\x7f"), s("pago"), s("14")},
		{s(" 1000-100"), s("pago"), s("15")},
		{s("123456789"), s("pago"), s("16")},
		{s("123456780"), s("pago"), s("17")},
		{s("000000000"), s("pago"), s("18")},
		{s("500000001"), s("pago"), s("19")},
		{s("12345678a"), s("pago"), s("20")},
		{s("1234567890"), s("pago"), s("21")},
		{s("123456789\n"), s("pago"), s("22")},
	}
}

// TestRecordAnswersAgreeWithTheScanSQLOnPostgres loads the values into a Postgres table,
// counts each row with each rule's scan SQL (rulesql.CountSQL restricted to the row) and
// compares with the record's answer.
func TestRecordAnswersAgreeWithTheScanSQLOnPostgres(t *testing.T) {
	db := mustFreshPostgres(t)
	assertAgreement(t, db, rulesql.Postgres, "postgres", `CREATE TABLE t (id integer PRIMARY KEY, code text, status text, amount numeric)`,
		`INSERT INTO t VALUES ($1, $2, $3, $4::numeric)`, "public")
}

// TestRecordAnswersAgreeWithTheScanSQLOnMariaDB does the same on MariaDB with its usual
// case-insensitive, pad-space collation.
func TestRecordAnswersAgreeWithTheScanSQLOnMariaDB(t *testing.T) {
	db, name := mustFreshMariaDB(t)
	assertAgreement(t, db, rulesql.MySQL, "mysql", `CREATE TABLE t (id integer PRIMARY KEY, code varchar(100), status varchar(20), amount decimal(30,10))
		CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci`, `INSERT INTO t VALUES (?, ?, ?, ?)`, name)
}

func assertAgreement(t *testing.T, db *sql.DB, d rulesql.Dialect, kind, create, insert, schema string) {
	t.Helper()
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, create); err != nil {
		t.Fatal(err)
	}
	vals := agreementValues()
	records := make([]validate.Record, len(vals))
	for i, v := range vals {
		args := []any{i}
		rec := validate.Record{}
		for j, name := range []string{"code", "status", "amount"} {
			if v[j] == nil {
				args = append(args, nil)
				continue
			}
			args = append(args, *v[j])
			if name == "amount" {
				rec[name] = json.RawMessage(*v[j])
			} else {
				b, _ := json.Marshal(*v[j])
				rec[name] = b
			}
		}
		records[i] = rec
		if _, err := db.ExecContext(ctx, insert, args...); err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
	}
	d0 := catalog.Dataset{ID: "d1", Schema: schema, Table: "t",
		Columns: []catalog.Column{{Name: "id"}, {Name: "code"}, {Name: "status"}, {Name: "amount"}}}
	rules := agreementRules()
	// The rule packs' NIF check digit, as custom_sql written for this table.
	nif := mkRule("r13", rule.TypeCustomSQL, "critical", rule.Params{SQL: rule.NIFCheckDigitSQL(d, rulesql.Table{Schema: schema, Name: "t"}, "code")})
	rules = append(rules, nif)
	for i := range rules {
		rules[i].ConnectionKind = kind
	}
	rep := validate.Evaluate(context.Background(), d0, rules, records, nil)
	for ri, r := range rules {
		spec := rulesql.Rule{Type: r.Type, Table: rulesql.Table{Schema: schema, Name: "t"}, Columns: r.Params.KeyColumns(),
			Values: r.Params.Values, Pattern: r.Params.Pattern, Min: r.Params.Min, Max: r.Params.Max}
		stmt := r.Params.SQL
		if r.Type != rule.TypeCustomSQL {
			var ok bool
			var err error
			stmt, ok, _, err = rulesql.CountSQL(spec, d)
			if err != nil || !ok {
				t.Fatalf("%s: %v", r.ID, err)
			}
		} else if rep.Rules[ri].NotApplicableCode != "" || rep.Rules[ri].Failed != 3 { // 123456780, 500000001 and 912345678
			t.Fatalf("the NIF rule was not recognised or judged: %+v", rep.Rules[ri])
		}
		for i := range vals {
			var n int
			if err := db.QueryRowContext(ctx, stmt+"\n  AND id = "+strconv.Itoa(i)).Scan(&n); err != nil {
				t.Fatalf("%s row %d: %v", r.ID, i, err)
			}
			if slices.Contains(rep.Results[i].NotApplicable, r.ID) || rep.Rules[ri].NotApplicableCode != "" {
				continue
			}
			got := failed(rep.Results[i], r.ID)
			if got != (n == 1) {
				t.Errorf("rule %s (%s %q) row %d: record says failed=%v, SQL says %d", r.ID, r.Type, r.Params.Pattern, i, got, n)
			}
		}
	}
}

func failed(res validate.RecordResult, ruleID string) bool {
	for _, f := range res.Failed {
		if f.RuleID == ruleID {
			return true
		}
	}
	return false
}

func TestPatternsReadingDifferentlyAreNotApplicable(t *testing.T) {
	for _, p := range []string{`\w+`, `\s`, `\bx`, `(?i)abc`, `(a)\1`, `[[:alpha:]]`, `x(?=y)`, `ç`, `a{1,300}`} {
		if validate.PatternCompatible(p) {
			t.Errorf("%q accepted", p)
		}
	}
	for _, p := range []string{`^[0-9]{4}-[0-9]{3}$`, `\d+\.\d`, `[[:digit:]]`, `^(?:a|b)$`, `a{2,255}`} {
		if !validate.PatternCompatible(p) {
			t.Errorf("%q refused", p)
		}
	}
	d := catalog.Dataset{ID: "d", Columns: []catalog.Column{{Name: "c"}}}
	rep := validate.Evaluate(context.Background(), d, []rule.ScanRule{mkRule("r", rule.TypePattern, "critical", rule.Params{Column: "c", Pattern: `\w`})},
		[]validate.Record{{"c": json.RawMessage(`"x"`)}}, nil)
	if rep.Rules[0].NotApplicableCode != validate.NotApplicablePatternUnsupported || rep.Verdict != validate.VerdictUnknown {
		t.Fatalf("%+v", rep)
	}
}

func TestBatchVerdictCountsToleranceAndDatasetWideRules(t *testing.T) {
	one := int64(1)
	d := catalog.Dataset{ID: "d", Columns: []catalog.Column{{Name: "a"}, {Name: "b"}}}
	rules := []rule.ScanRule{
		mkRule("r1", rule.TypeNotNull, "critical", rule.Params{Column: "a", MaxFailing: &one}),
		mkRule("r2", rule.TypeRange, "warning", rule.Params{Column: "b", Max: f(10)}),
		mkRule("r3", rule.TypeUnique, "critical", rule.Params{Columns: []string{"a"}}),
		mkRule("r4", rule.TypeCustomSQL, "critical", rule.Params{SQL: "SELECT 1"}),
		mkRule("r5", rule.TypeReferential, "critical", rule.Params{Column: "a", RefColumn: "id"}),
		mkRule("r6", rule.TypeNotNull, "critical", rule.Params{Column: "gone"}),
	}
	recs := []validate.Record{
		{"a": json.RawMessage(`null`), "b": json.RawMessage(`11`)},
		{"a": json.RawMessage(`"x"`), "b": json.RawMessage(`"3"`), "zz": json.RawMessage(`1`), "bad name": json.RawMessage(`1`)},
	}
	rep := validate.Evaluate(context.Background(), d, rules, recs, nil)
	if rep.Verdict != validate.VerdictWarn {
		t.Fatalf("verdict %s: %+v", rep.Verdict, rep.Rules)
	}
	want := map[string]string{"r1": validate.StatusPassed, "r2": validate.StatusFailed, "r3": validate.StatusNotApplicable,
		"r4": validate.StatusNotApplicable, "r5": validate.StatusNotApplicable, "r6": validate.StatusNotApplicable}
	codes := map[string]string{"r3": validate.NotApplicableDatasetWide, "r4": validate.NotApplicableCustomSQL,
		"r5": validate.NotApplicableReferenceMissing, "r6": validate.NotApplicableColumnMissing}
	for _, r := range rep.Rules {
		if r.Status != want[r.RuleID] || r.NotApplicableCode != codes[r.RuleID] {
			t.Errorf("%s: %s %q", r.RuleID, r.Status, r.NotApplicableCode)
		}
	}
	if rep.Rules[0].Failed != 1 || rep.Rules[0].Passed != 1 || rep.Rules[2].NotApplicable != 2 {
		t.Fatalf("counts %+v", rep.Rules)
	}
	if rep.FailedRecords != 1 || rep.PassedRecords != 1 || rep.Results[0].Failed[0].Code != validate.CodeIsNull ||
		rep.Results[0].Failed[1].Code != validate.CodeOutOfRange {
		t.Fatalf("records %+v", rep.Results)
	}
	if rep.UnknownFieldCount != 2 || len(rep.UnknownFields) != 2 || rep.UnknownFields[0] != "?" || rep.UnknownFields[1] != "zz" {
		t.Fatalf("unknown %v", rep.UnknownFields)
	}
	// A critical rule beyond tolerance fails the batch.
	recs = append(recs, validate.Record{"b": json.RawMessage(`1`)})
	if rep := validate.Evaluate(context.Background(), d, rules, recs, nil); rep.Verdict != validate.VerdictFail {
		t.Fatalf("verdict %s", rep.Verdict)
	}
}

func mustFreshPostgres(tb testing.TB) *sql.DB {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := sql.Open("pgx", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { admin.Close() })
	if err := admin.PingContext(ctx); err != nil {
		tb.Skipf("no Postgres at 127.0.0.1:5432: %v", err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "vigia_test_validate_" + hex.EncodeToString(b)
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		tb.Fatal(err)
	}
	db, err := sql.Open("pgx", "postgres://postgres@127.0.0.1:5432/"+name+"?sslmode=disable")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		db.Close()
		if _, err := admin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			tb.Errorf("drop test database: %v", err)
		}
	})
	return db
}

func mustFreshMariaDB(tb testing.TB) (*sql.DB, string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := sql.Open("mysql", "root@tcp(127.0.0.1:3306)/")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { admin.Close() })
	if err := admin.PingContext(ctx); err != nil {
		tb.Skipf("no MariaDB at 127.0.0.1:3306: %v", err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "vigia_test_validate_" + hex.EncodeToString(b)
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name+" CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"); err != nil {
		tb.Fatal(err)
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.DBName = "root", "tcp", "127.0.0.1:3306", name
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		db.Close()
		if _, err := admin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name); err != nil {
			tb.Errorf("drop test database: %v", err)
		}
	})
	return db, name
}
