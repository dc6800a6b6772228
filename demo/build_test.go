package demo_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/demo"
)

const seed = 42

// smallScale is the row scale of tests that compare or count builds rather than inspect
// the data: a tenth of the rows keeps every planted defect.
const smallScale = 0.1

func TestPacksAreListedAndDocumented(t *testing.T) {
	packs := demo.Packs()
	var keys []string
	for _, p := range packs {
		keys = append(keys, p.Key)
	}
	if want := []string{"erp", "ecommerce", "payments", "health"}; !slices.Equal(keys, want) {
		t.Fatalf("keys = %v, want %v", keys, want)
	}
	required := []string{demo.DefectNulls, demo.DefectDuplicateKeys, demo.DefectInvalidNIF, demo.DefectOrphans,
		demo.DefectStaleTimestamps, demo.DefectTypeChangeNextScan, demo.DefectDateAsText, demo.DefectOutliers}
	renames := 0
	for _, p := range packs {
		t.Run(p.Key, func(t *testing.T) {
			if p.Name == "" || p.Description == "" || p.Industry == "" || p.Schema == "" {
				t.Fatalf("pack %q lacks a name, description, industry or schema", p.Key)
			}
			nTables := len(p.Tables) - len(p.Views)
			if nTables < 4 || nTables > 8 {
				t.Errorf("%d tables, want 4-8", nTables)
			}
			if len(p.Views) < 2 || len(p.Views) > 3 {
				t.Errorf("%d views, want 2-3", len(p.Views))
			}
			if len(p.MaterializedViews) != 1 {
				t.Errorf("%d materialized views, want 1", len(p.MaterializedViews))
			}
			var kinds []string
			for _, d := range p.Defects {
				kinds = append(kinds, d.Kind)
				if !slices.Contains(p.Tables, d.Table) || d.Column == "" || d.Note == "" {
					t.Errorf("defect %+v names no table of the pack or lacks a column or note", d)
				}
				if d.Kind == demo.DefectRenameNextScan {
					renames++
				}
			}
			for _, k := range required {
				if !slices.Contains(kinds, k) {
					t.Errorf("no planted %s defect", k)
				}
			}
			got, ok := demo.PackByKey(p.Key)
			if !ok || got.Name != p.Name {
				t.Errorf("PackByKey(%q) = %v, %v", p.Key, got.Name, ok)
			}
		})
	}
	if renames != 1 {
		t.Errorf("%d packs plant a rename, want 1", renames)
	}
	if _, ok := demo.PackByKey("retail"); ok {
		t.Error("PackByKey found an unknown pack")
	}
}

func TestBuildRejectsUnknownPackAndDialect(t *testing.T) {
	db := MustSQLite(t, "")
	ctx := context.Background()
	if err := demo.Build(ctx, db, "sqlite", "retail", seed, 1); !vigia.IsKind(err, vigia.KindInvalid) {
		t.Errorf("unknown pack: err = %v, want KindInvalid", err)
	}
	if err := demo.Build(ctx, db, "oracle", "erp", seed, 1); !vigia.IsKind(err, vigia.KindInvalid) {
		t.Errorf("unknown dialect: err = %v, want KindInvalid", err)
	}
	if err := demo.Mutate(ctx, db, "sqlite", "retail"); !vigia.IsKind(err, vigia.KindInvalid) {
		t.Errorf("mutate unknown pack: err = %v, want KindInvalid", err)
	}
	if err := demo.Mutate(ctx, db, "sqlite", "erp"); !vigia.IsKind(err, vigia.KindInternal) {
		t.Errorf("mutate before build: err = %v, want KindInternal", err)
	}
}

// TestBuildPlantsDocumentedDefectsAndMutateChangesTypes builds every pack in both dialects,
// checks counts, views and every documented defect, then mutates and checks the drift.
func TestBuildPlantsDocumentedDefectsAndMutateChangesTypes(t *testing.T) {
	for _, tg := range targets {
		t.Run(tg.dialect, func(t *testing.T) {
			// All packs share one Postgres database (each has its schema); SQLite needs a file each.
			shared := tg.open(t)
			for _, p := range demo.Packs() {
				t.Run(p.Key, func(t *testing.T) {
					db := shared
					if tg.dialect == "sqlite" {
						db = tg.open(t)
					}
					ctx := context.Background()
					start := time.Now()
					if err := demo.BuildWith(ctx, db, tg.dialect, p.Key, demo.Options{Seed: seed, Scale: testScale}); err != nil {
						t.Fatalf("Build: %v", err)
					}
					t.Logf("Build %s/%s at scale %g: %v", tg.dialect, p.Key, testScale, time.Since(start).Round(time.Millisecond))
					counts := checkObjects(t, db, tg.dialect, p)
					for _, d := range p.Defects {
						t.Run(d.Kind+"/"+d.Column, func(t *testing.T) { checkDefect(t, db, tg.dialect, d) })
					}
					if tg.dialect == "sqlite" {
						t.Run("semantic_types", func(t *testing.T) { checkSemanticTypes(t, db, p) })
					}
					checkMutate(t, db, tg.dialect, p, counts)
				})
			}
		})
	}
}

// checkObjects checks that every table has rows (the main ones thousands) and every view
// answers with rows; it returns the row counts of the tables.
func checkObjects(t *testing.T, db *sql.DB, dialect string, p demo.Pack) map[string]int {
	t.Helper()
	counts := map[string]int{}
	total := 0
	for _, name := range p.Tables {
		n := MustCount(t, db, "SELECT COUNT(*) FROM "+qual(dialect, name))
		counts[name] = n
		if n == 0 {
			t.Errorf("%s is empty", name)
		}
		if !slices.Contains(p.Views, name) {
			total += n
		}
	}
	if dialect == "postgres" {
		for _, mv := range p.MaterializedViews {
			if n := MustCount(t, db, "SELECT COUNT(*) FROM "+mv); n == 0 {
				t.Errorf("materialized view %s is empty", mv)
			}
		}
	}
	if want := int(8000 * testScale); total < want {
		t.Errorf("the pack holds %d rows in tables, want at least %d at scale %g", total, want, testScale)
	}
	t.Logf("%s: %d rows in tables; %v", p.Key, total, counts)
	return counts
}

// parentOf reads the table a column's foreign key points to from the catalog, and whether
// Postgres validated it.
func parentOf(t *testing.T, db *sql.DB, dialect, schemaDotTable, column string) (parent string, validated bool) {
	t.Helper()
	schema, tbl, _ := strings.Cut(schemaDotTable, ".")
	if dialect == "sqlite" {
		err := db.QueryRow(`SELECT "table" FROM pragma_foreign_key_list(?) WHERE "from" = ?`, tbl, column).Scan(&parent)
		if err != nil {
			t.Fatalf("no foreign key on %s.%s: %v", tbl, column, err)
		}
		return schema + "." + parent, true
	}
	err := db.QueryRow(`SELECT c.confrelid::regclass::text, c.convalidated
		FROM pg_constraint c JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey)
		WHERE c.contype = 'f' AND c.conrelid = $1::regclass AND a.attname = $2`, schemaDotTable, column).Scan(&parent, &validated)
	if err != nil {
		t.Fatalf("no foreign key on %s.%s: %v", schemaDotTable, column, err)
	}
	return parent, validated
}

var (
	postalCodeRe = regexp.MustCompile(`^\d{4}-\d{3}$`)
	staleAfter   = 90 * 24 * time.Hour
)

func checkDefect(t *testing.T, db *sql.DB, dialect string, d demo.Defect) {
	tbl := qual(dialect, d.Table)
	col := d.Column
	total := MustCount(t, db, "SELECT COUNT(*) FROM "+tbl)
	switch d.Kind {
	case demo.DefectNulls:
		nulls := MustCount(t, db, "SELECT COUNT(*) FROM "+tbl+" WHERE "+col+" IS NULL")
		if share := float64(nulls) / float64(total); share < 0.03 || share > 0.08 {
			t.Errorf("%d of %d nulls (%.1f%%), want about 5%%", nulls, total, 100*share)
		}
	case demo.DefectDuplicateKeys:
		distinct := MustCount(t, db, "SELECT COUNT(DISTINCT "+col+") FROM "+tbl)
		if dup := total - distinct; dup < 1 || dup > max(3, total*3/100) {
			t.Errorf("%d repeated keys in %d rows, want a few", dup, total)
		}
	case demo.DefectInvalidNIF, demo.DefectInvalidIBAN, demo.DefectInvalidPostalCode:
		valid := map[string]func(string) bool{
			demo.DefectInvalidNIF: nifValid, demo.DefectInvalidIBAN: ibanValid, demo.DefectInvalidPostalCode: postalCodeRe.MatchString,
		}[d.Kind]
		values := MustStrings(t, db, "SELECT "+col+" FROM "+tbl)
		bad := 0
		for _, v := range values {
			if !valid(v) {
				bad++
			}
		}
		if bad < 1 || float64(bad) > max(3, 0.06*float64(len(values))) {
			t.Errorf("%d of %d invalid, want a few (1-6%%)", bad, len(values))
		}
	case demo.DefectOrphans:
		parent, validated := parentOf(t, db, dialect, d.Table, col)
		if dialect == "postgres" && validated {
			t.Errorf("the foreign key to %s is validated; planted orphans need NOT VALID", parent)
		}
		orphans := MustCount(t, db, "SELECT COUNT(*) FROM "+tbl+" c LEFT JOIN "+qual(dialect, parent)+" p ON p.id = c."+col+
			" WHERE p.id IS NULL")
		if orphans < 1 || orphans > max(3, total*3/100) {
			t.Errorf("%d orphans in %d rows, want a few", orphans, total)
		}
	case demo.DefectStaleTimestamps:
		var cutoff any = time.Now().Add(-staleAfter)
		q := "SELECT COUNT(*) FROM " + tbl + " WHERE " + col + " >= $1"
		if dialect == "sqlite" {
			cutoff = time.Now().UTC().Add(-staleAfter).Format(time.DateTime)
			q = strings.Replace(q, "$1", "?", 1)
		}
		if n := MustCount(t, db, q, cutoff); n != 0 {
			t.Errorf("%d rows newer than 90 days in a stale table", n)
		}
	case demo.DefectOutliers:
		var vals []float64
		for _, s := range MustStrings(t, db, "SELECT "+col+" FROM "+tbl) {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatalf("amount %q: %v", s, err)
			}
			vals = append(vals, f)
		}
		slices.Sort(vals)
		median, top := vals[len(vals)/2], vals[len(vals)-1]
		if top < 20*median {
			t.Errorf("max %.2f is not an outlier against median %.2f", top, median)
		}
	case demo.DefectDateAsText:
		values := MustStrings(t, db, "SELECT "+col+" FROM "+tbl)
		for _, v := range values {
			if _, err := time.Parse("02/01/2006", v); err != nil {
				t.Fatalf("value %q is not dd/mm/aaaa", v)
			}
		}
		if typ := strings.ToLower(MustColumnType(t, db, dialect, d.Table, col)); !strings.Contains(typ, "char") && typ != "text" {
			t.Errorf("column type %q is not text", typ)
		}
	case demo.DefectTypeChangeNextScan:
		if typ := strings.ToLower(MustColumnType(t, db, dialect, d.Table, col)); typ != "integer" {
			t.Errorf("before Mutate the type is %q, want integer", typ)
		}
	case demo.DefectRenameNextScan:
		if MustColumnType(t, db, dialect, d.Table, col) == "" {
			t.Errorf("before Mutate the column %s is missing", col)
		}
	default:
		t.Errorf("no check for defect kind %q", d.Kind)
	}
}

// checkMutate runs Mutate twice and checks that the planted type changes and rename
// happened, that no row was lost and that every view still answers.
func checkMutate(t *testing.T, db *sql.DB, dialect string, p demo.Pack, before map[string]int) {
	t.Helper()
	ctx := context.Background()
	var renamedNonNull int
	for _, d := range p.Defects {
		if d.Kind == demo.DefectRenameNextScan {
			renamedNonNull = MustCount(t, db, "SELECT COUNT("+d.Column+") FROM "+qual(dialect, d.Table))
		}
	}
	for range 2 { // the second run must find the work done
		if err := demo.Mutate(ctx, db, dialect, p.Key); err != nil {
			t.Fatalf("Mutate: %v", err)
		}
	}
	for _, d := range p.Defects {
		switch d.Kind {
		case demo.DefectTypeChangeNextScan:
			if typ := strings.ToLower(MustColumnType(t, db, dialect, d.Table, d.Column)); typ != "text" {
				t.Errorf("after Mutate %s.%s is %q, want text", d.Table, d.Column, typ)
			}
		case demo.DefectRenameNextScan:
			if MustColumnType(t, db, dialect, d.Table, d.Column) != "" {
				t.Errorf("after Mutate %s.%s still exists", d.Table, d.Column)
			}
			// The note names the new column; it must hold the old column's data.
			newCol := ""
			for _, w := range strings.Fields(d.Note) {
				if w != d.Column && strings.Contains(w, "_") && MustColumnType(t, db, dialect, d.Table, w) != "" {
					newCol = w
				}
			}
			if newCol == "" {
				t.Fatalf("no renamed column of %s found after Mutate", d.Column)
			}
			if n := MustCount(t, db, "SELECT COUNT("+newCol+") FROM "+qual(dialect, d.Table)); n != renamedNonNull {
				t.Errorf("%s holds %d values, the dropped column held %d", newCol, n, renamedNonNull)
			}
		}
	}
	for _, name := range p.Tables {
		n := MustCount(t, db, "SELECT COUNT(*) FROM "+qual(dialect, name))
		if !slices.Contains(p.Views, name) && n != before[name] {
			t.Errorf("%s: %d rows after Mutate, %d before", name, n, before[name])
		}
		if n == 0 {
			t.Errorf("%s is empty after Mutate", name)
		}
	}
	if dialect == "postgres" {
		for _, mv := range p.MaterializedViews {
			MustCount(t, db, "SELECT COUNT(*) FROM "+mv)
		}
	}
}

// digest hashes every row of every table of the pack, in id order.
func digest(t *testing.T, db *sql.DB, dialect string, p demo.Pack) string {
	t.Helper()
	h := sha256.New()
	for _, name := range p.Tables {
		rows, err := db.Query("SELECT * FROM " + qual(dialect, name) + " ORDER BY 1, 2, 3")
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(h, "%s%v\n", name, vals)
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestBuildIsDeterministicAndReplacesAnEarlierCopy builds each pack in Postgres, mutates it,
// builds it again over the mutated copy with the same seed and anchor, and expects the same
// rows; another seed must give other rows.
func TestBuildIsDeterministicAndReplacesAnEarlierCopy(t *testing.T) {
	db := MustPostgres(t)
	ctx := context.Background()
	opts := demo.Options{Seed: seed, Scale: smallScale, Now: time.Date(2026, 3, 14, 15, 30, 0, 0, time.UTC)}
	for _, p := range demo.Packs() {
		t.Run(p.Key, func(t *testing.T) {
			if err := demo.BuildWith(ctx, db, "postgres", p.Key, opts); err != nil {
				t.Fatal(err)
			}
			first := digest(t, db, "postgres", p)
			if err := demo.Mutate(ctx, db, "postgres", p.Key); err != nil {
				t.Fatal(err)
			}
			if err := demo.BuildWith(ctx, db, "postgres", p.Key, opts); err != nil {
				t.Fatalf("rebuild over a mutated copy: %v", err)
			}
			if again := digest(t, db, "postgres", p); again != first {
				t.Error("the rebuild with the same seed differs from the first build")
			}
			other := opts
			other.Seed++
			if err := demo.BuildWith(ctx, db, "postgres", p.Key, other); err != nil {
				t.Fatal(err)
			}
			if digest(t, db, "postgres", p) == first {
				t.Error("builds with different seeds are identical")
			}
		})
	}
}

func TestBuildIsDeterministicInSQLite(t *testing.T) {
	ctx := context.Background()
	opts := demo.Options{Seed: seed, Scale: smallScale, Now: time.Date(2026, 3, 14, 15, 30, 0, 0, time.UTC)}
	p, _ := demo.PackByKey("erp")
	a, b := MustSQLite(t, ""), MustSQLite(t, "")
	for _, db := range []*sql.DB{a, b} {
		if err := demo.BuildWith(ctx, db, "sqlite", p.Key, opts); err != nil {
			t.Fatal(err)
		}
	}
	if digest(t, a, "sqlite", p) != digest(t, b, "sqlite", p) {
		t.Error("two builds with the same seed differ")
	}
}

func TestBuildScalesRowCounts(t *testing.T) {
	db := MustPostgres(t)
	ctx := context.Background()
	var counts []int
	for _, scale := range []float64{smallScale, 2 * smallScale} {
		if err := demo.BuildWith(ctx, db, "postgres", "payments", demo.Options{Seed: seed, Scale: scale}); err != nil {
			t.Fatal(err)
		}
		counts = append(counts, MustCount(t, db, "SELECT COUNT(*) FROM pagamentos.transacoes"))
	}
	if counts[1] != 2*counts[0] {
		t.Errorf("transacoes: %d at scale %g, %d at twice that", counts[0], smallScale, counts[1])
	}
}

func TestBuildRefusesASQLiteFileHoldingAnotherPack(t *testing.T) {
	db := MustSQLite(t, "")
	ctx := context.Background()
	if err := demo.BuildWith(ctx, db, "sqlite", "erp", demo.Options{Seed: seed, Scale: smallScale}); err != nil {
		t.Fatal(err)
	}
	err := demo.BuildWith(ctx, db, "sqlite", "ecommerce", demo.Options{Seed: seed, Scale: smallScale})
	if !vigia.IsKind(err, vigia.KindConflict) {
		t.Fatalf("err = %v, want KindConflict", err)
	}
	if n := MustCount(t, db, "SELECT COUNT(*) FROM faturas_em_atraso"); n == 0 {
		t.Error("the ERP pack was damaged")
	}
	if err := demo.BuildWith(ctx, db, "sqlite", "erp", demo.Options{Seed: seed, Scale: smallScale}); err != nil {
		t.Errorf("rebuilding the same pack: %v", err)
	}
}

func TestBuildRejectsAScaleOutOfBounds(t *testing.T) {
	db := MustSQLite(t, "")
	for _, scale := range []float64{-1, 0.001, demo.MaxRowsScale + 1} {
		err := demo.BuildWith(context.Background(), db, "sqlite", "erp", demo.Options{Scale: scale})
		if !vigia.IsKind(err, vigia.KindInvalid) {
			t.Errorf("scale %g: err = %v, want KindInvalid", scale, err)
		}
	}
}

func TestBuildWorksWithForeignKeysEnforcedAndRestoresThePragma(t *testing.T) {
	db := MustSQLite(t, "?_pragma=foreign_keys(1)")
	db.SetMaxOpenConns(1) // the pragma is per connection: check the one Build used
	ctx := context.Background()
	if err := demo.BuildWith(ctx, db, "sqlite", "health", demo.Options{Seed: seed, Scale: smallScale}); err != nil {
		t.Fatal(err)
	}
	if err := demo.Mutate(ctx, db, "sqlite", "health"); err != nil {
		t.Fatal(err)
	}
	if fk := MustCount(t, db, "PRAGMA foreign_keys"); fk != 1 {
		t.Errorf("foreign_keys = %d after Build, want 1", fk)
	}
}

// checkSemanticTypes checks that the pack has at least one column of each type Vigia's
// semantic detection knows for Portugal, judged on 80% of a column's non-null values.
func checkSemanticTypes(t *testing.T, db *sql.DB, p demo.Pack) {
	kinds := []struct {
		name  string
		match func(string) bool
	}{
		{"email", func(s string) bool { return strings.Count(s, "@") == 1 && strings.Contains(s, ".") }},
		{"uuid", uuidRe.MatchString},
		{"iban", ibanValid},
		{"date_as_text", func(s string) bool { _, err := time.Parse("02/01/2006", s); return err == nil }},
		{"postal_code_pt", postalCodeRe.MatchString},
		{"nif_pt", nifValid},
		{"phone_pt", isPTPhone},
	}
	found := map[string]string{}
	for _, name := range p.Tables {
		if slices.Contains(p.Views, name) {
			continue
		}
		tbl := qual("sqlite", name)
		for _, col := range MustStrings(t, db, "SELECT name FROM pragma_table_info('"+tbl+"') WHERE type LIKE 'VARCHAR%'") {
			values := MustStrings(t, db, "SELECT "+col+" FROM "+tbl+" WHERE "+col+" IS NOT NULL LIMIT 1000")
			for _, k := range kinds {
				n := 0
				for _, v := range values {
					if k.match(v) {
						n++
					}
				}
				if len(values) > 0 && float64(n) >= 0.8*float64(len(values)) {
					found[k.name] = tbl + "." + col
				}
			}
		}
	}
	for _, k := range kinds {
		if found[k.name] == "" {
			t.Errorf("no column of type %s", k.name)
		}
	}
	t.Logf("semantic types: %v", found)
}

func BenchmarkBuild(b *testing.B) {
	ctx := context.Background()
	for _, tg := range targets {
		for _, p := range demo.Packs() {
			b.Run(tg.dialect+"/"+p.Key, func(b *testing.B) {
				db := tg.open(b)
				for b.Loop() {
					if err := demo.Build(ctx, db, tg.dialect, p.Key, seed, 1); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
