package demo

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"
)

// Dialects Build and Mutate write.
const (
	DialectSQLite   = "sqlite"
	DialectPostgres = "postgres"
)

// Kinds of planted defects (Defect.Kind).
const (
	DefectNulls              = "nulls"                 // a share of a column is NULL
	DefectDuplicateKeys      = "duplicate_keys"        // a natural key repeats
	DefectInvalidNIF         = "invalid_nif"           // NIFs with a wrong check digit
	DefectInvalidIBAN        = "invalid_iban"          // IBANs failing mod-97
	DefectInvalidPostalCode  = "invalid_postal_code"   // postal codes not dddd-ddd
	DefectOrphans            = "orphans"               // child rows whose parent does not exist
	DefectStaleTimestamps    = "stale_timestamps"      // the table's latest timestamp is months old
	DefectOutliers           = "outliers"              // a few amounts tens of times the usual
	DefectDateAsText         = "date_as_text"          // a date kept in a text column as dd/mm/aaaa
	DefectTypeChangeNextScan = "type_change_next_scan" // Mutate changes the column's type
	DefectRenameNextScan     = "rename_next_scan"      // Mutate drops the column and adds a similar one
)

// Bounds of the row scale: at 1000 a pack holds tens of millions of rows; at 0.01 a few
// hundred, still with every planted defect.
const (
	MaxRowsScale = 1000
	MinRowsScale = 0.01
)

// Pack is an industry demo pack: a small, realistic source database with planted defects.
type Pack struct {
	Key         string // erp, ecommerce, payments, health
	Name        string // pt-PT display name
	Description string // pt-PT, one or two sentences
	Industry    string // pt-PT
	// Schema is the Postgres schema the pack is built in. In SQLite the objects live in main.
	Schema string
	// Tables lists the tables and views Build creates in both dialects, as schema.name.
	Tables []string
	// Views lists which entries of Tables are views.
	Views []string
	// MaterializedViews are built in Postgres only, as schema.name.
	MaterializedViews []string
	// Defects documents every planted defect; Table is schema.name as in Tables.
	Defects []Defect
}

// Defect is one planted defect of a pack.
type Defect struct {
	Kind   string
	Table  string // schema.name
	Column string
	Note   string // pt-PT: what was planted and what a scan should find
}

// SchemaFor returns the schema that holds the pack's objects in a dialect: Schema in
// Postgres, main in SQLite.
func (p Pack) SchemaFor(dialect string) string {
	if dialect == DialectSQLite {
		return "main"
	}
	return p.Schema
}

// packDef is everything Build and Mutate need for one pack.
type packDef struct {
	Pack
	salt     uint64 // mixed into the seed, so packs built with the same seed differ
	tables   []table
	views    []view
	mutation mutation
	fill     func(g *gen) map[string][][]any // rows per table, columns in table order
}

// defs returns fresh definitions of all packs, in display order.
func defs() []*packDef {
	out := []*packDef{erpPack(), ecommercePack(), paymentsPack(), healthPack()}
	for _, p := range out {
		p.Tables, p.Views, p.MaterializedViews = nil, nil, nil
		for _, t := range p.tables {
			p.Tables = append(p.Tables, p.Schema+"."+t.name)
		}
		for _, v := range p.views {
			if v.materialized {
				p.MaterializedViews = append(p.MaterializedViews, p.Schema+"."+v.name)
				continue
			}
			p.Tables = append(p.Tables, p.Schema+"."+v.name)
			p.Views = append(p.Views, p.Schema+"."+v.name)
		}
	}
	return out
}

func defByKey(key string) (*packDef, bool) {
	for _, p := range defs() {
		if p.Key == key {
			return p, true
		}
	}
	return nil, false
}

// Packs returns the four demo packs in display order: erp, ecommerce, payments, health.
func Packs() []Pack {
	ds := defs()
	out := make([]Pack, len(ds))
	for i, p := range ds {
		out[i] = p.Pack
	}
	return out
}

// PackByKey returns the pack with the given key, and false when there is none.
func PackByKey(key string) (Pack, bool) {
	p, ok := defByKey(key)
	if !ok {
		return Pack{}, false
	}
	return p.Pack, true
}

// Keys returns the pack keys in display order.
func Keys() []string {
	ds := defs()
	out := make([]string, len(ds))
	for i, p := range ds {
		out[i] = p.Key
	}
	return out
}

// gen draws a pack's rows. Everything it returns depends only on the seed, the pack, the
// scale and the anchor time, so a build is reproducible.
type gen struct {
	r     *rand.Rand
	now   time.Time // anchor: the latest instant any generated timestamp may take
	scale float64
}

func newGen(seed int64, salt uint64, scale float64, now time.Time) *gen {
	return &gen{r: rand.New(rand.NewPCG(uint64(seed), salt)), now: now, scale: scale}
}

// n scales a base row count; every table keeps at least one row.
func (g *gen) n(base int) int { return max(1, int(math.Round(float64(base)*g.scale))) }

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

// marks returns n flags of which round(n*share), but at least atLeast, are set at random
// positions: planted defects have an exact count, so tests and demos can rely on them.
func (g *gen) marks(n int, share float64, atLeast int) []bool {
	k := min(max(int(math.Round(float64(n)*share)), atLeast), n)
	out := make([]bool, n)
	for _, i := range g.r.Perm(n)[:k] {
		out[i] = true
	}
	return out
}

// within returns an instant in [from, to), to the second.
func (g *gen) within(from, to time.Time) time.Time {
	span := int64(to.Sub(from) / time.Second)
	if span <= 0 {
		return from.Truncate(time.Second)
	}
	return from.Truncate(time.Second).Add(time.Duration(g.r.Int64N(span)) * time.Second)
}

// daysAgo returns the instant days before the anchor.
func (g *gen) daysAgo(days int) time.Time { return g.now.AddDate(0, 0, -days) }

// lastDays returns an instant within the last days before the anchor.
func (g *gen) lastDays(days int) time.Time { return g.within(g.daysAgo(days), g.now) }

// after returns an instant between t and the anchor (an updated_at for a row created at t).
// One row in ten was touched in the last two days, as in a table people still work on.
func (g *gen) after(t time.Time) time.Time {
	if g.chance(0.1) {
		return g.within(maxTime(t, g.now.Add(-48*time.Hour)), g.now)
	}
	return g.within(t, g.now)
}

// skewed returns an id in 1..n where low ids come up more often, as regular customers do.
func (g *gen) skewed(n int) int64 {
	f := g.r.Float64()
	return int64(float64(n)*f*f) + 1
}

// id returns an id in 1..n, uniformly.
func (g *gen) id(n int) int64 { return int64(g.r.IntN(n)) + 1 }

// amount returns a positive amount around median with a long right tail (log-normal).
func (g *gen) amount(median, spread float64) float64 {
	return round2(median * math.Exp(g.r.NormFloat64()*spread))
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }

// money writes an amount with two decimals, as numeric columns receive it.
func money(v float64) string { return strconv.FormatFloat(round2(v), 'f', 2, 64) }

func itoa(n int) string { return strconv.Itoa(n) }

// day returns the date of t at midnight UTC.
func day(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// nullable returns nil when null is set, else v.
func nullable(null bool, v any) any {
	if null {
		return nil
	}
	return v
}

// sortTimes sorts instants in place, oldest first.
func sortTimes(ts []time.Time) { slices.SortFunc(ts, time.Time.Compare) }

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
