// Package datadiff compares two datasets, possibly on two connections of different
// engines (Postgres, MySQL/MariaDB, SQLite), without moving their rows: each source
// hashes its rows and answers, per bucket of the key hash, the row count and the sums of
// the row hashes (one read of each table); only the buckets whose sums differ are read
// again, for their keys and per-column hashes, to name the keys only in one side and
// the changed ones with the columns that changed. Hashes, counts and keys leave the
// sources; no other value.
package datadiff

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/connection"
	"github.com/vigia-data/vigia/event"
	"github.com/vigia-data/vigia/rulesql"
	"github.com/vigia-data/vigia/source"
)

// Bounds of a diff.
const (
	DefaultTimeBudget = 60 * time.Second
	MaxTimeBudget     = 600 * time.Second
	DefaultSample     = 20
	MaxSample         = 100
	// MaxLeafRows bounds the rows one side answers for the differing buckets: above it
	// the tables differ too much for a keyed report (422 diff_too_many_differences).
	MaxLeafRows = 250000
	// MinBuckets and MaxBuckets bound the key-hash buckets; a diff aims at
	// RowsPerBucket rows per bucket.
	MinBuckets    = 64
	MaxBuckets    = 1 << 16
	RowsPerBucket = 256
	// MaxKeyColumns bounds the key.
	MaxKeyColumns = 16
)

// Stable codes of a diff's 422 answers.
const (
	CodeKeyRequired        = "diff_key_required"         // no key_columns, and no primary key the other dataset shares
	CodeTimeBudget         = "diff_time_budget_exceeded" // the work did not finish within the time budget
	CodeTooManyDifferences = "diff_too_many_differences" // the differing buckets hold more than MaxLeafRows rows
	CodeKeyNotUnique       = "diff_key_not_unique"       // a key occurs twice on one side
	CodeSourceFailed       = "diff_source_failed"        // a source refused a statement or could not be reached
)

// Key sources.
const (
	KeySourceRequest    = "request"
	KeySourcePrimaryKey = "primary_key"
)

// MethodBucketedChecksums names the method in reports.
const MethodBucketedChecksums = "bucketed_checksums"

// ActionDataDiff is the activity-log action of a diff (counts only).
const ActionDataDiff = "data_diff"

// Request is a diff's options.
type Request struct {
	// KeyColumns identify a row on both sides; nil uses the primary key (see Diff).
	KeyColumns []string
	// TimeBudget bounds the whole diff (DefaultTimeBudget when zero).
	TimeBudget time.Duration
	// Sample is how many keys of each kind the report lists (DefaultSample when zero).
	Sample int
	// Buckets overrides the bucket count (0: from the row counts); for benchmarks.
	Buckets int
}

// Report is a diff's answer.
type Report struct {
	DatasetID      string
	OtherID        string
	KeySource      string
	KeyColumns     []string
	Columns        []string // compared (present on both sides)
	ColumnsOnlyInA []string
	ColumnsOnlyInB []string
	RowsA, RowsB   int64
	OnlyInA        int64
	OnlyInB        int64
	Changed        int64
	// ChangedByColumn counts the changed rows per compared column.
	ChangedByColumn map[string]int64
	// Samples of keys (each key as its columns' text, NULL as nil), sorted.
	SampleOnlyInA [][]*string
	SampleOnlyInB [][]*string
	SampleChanged [][]*string
	Method        Method
}

// Method says how a diff worked and what it cost.
type Method struct {
	Name             string
	Buckets          int
	DifferingBuckets int
	Statements       int
	// RowsFetched counts the rows the sources answered (bucket sums and leaf rows).
	RowsFetched int64
	// BytesTransferred counts the bytes of the values the sources answered.
	BytesTransferred int64
	Duration         time.Duration
}

// Progress receives a diff's stages: "hash" (both sides' bucket sums), "compare" (done
// of total differing buckets read), "done".
type Progress func(stage string, done, total int)

// Datasets is the visibility-checked catalog.
type Datasets interface {
	Dataset(ctx context.Context, id string) (catalog.Dataset, error)
}

// Connections opens the datasets' sources.
type Connections interface {
	Connection(ctx context.Context, ref string) (connection.Connection, error)
	Open(ctx context.Context, c connection.Connection, rec source.Recorder, label string) (source.Source, error)
}

// Store keeps the activity entry of a diff.
type Store interface {
	AddActivity(ctx context.Context, a event.Activity) error
}

// Service runs diffs.
type Service struct {
	datasets Datasets
	conns    Connections
	store    Store
	clock    vigia.Clock
	checks   CheckStore
	// blackouts refuses a comparison while a blackout window of either dataset's
	// connection is in force; nil: no windows.
	blackouts Blackouts
}

// Blackouts answers whether a blackout window of a connection is in force.
type Blackouts interface {
	// Refuse returns KindConflict (blackout_active) when a window of the connection is
	// in force at at, else nil.
	Refuse(ctx context.Context, workspaceID, connectionID string, at time.Time) error
}

// WithBlackouts makes diffs and reconciliations respect the connections' blackout
// windows: a request during one answers 409 blackout_active, a declared check after a
// scan is skipped.
func (s *Service) WithBlackouts(b Blackouts) *Service {
	s.blackouts = b
	return s
}

// refuse answers blackout_active when a window of one of the datasets' connections is
// in force.
func (s *Service) refuse(ctx context.Context, workspaceID string, ds ...catalog.Dataset) error {
	if s.blackouts == nil {
		return nil
	}
	for _, d := range ds {
		if err := s.blackouts.Refuse(ctx, workspaceID, d.ConnectionID, s.clock.Now()); err != nil {
			return err
		}
	}
	return nil
}

// NewService returns the diff service.
func NewService(datasets Datasets, conns Connections, store Store, clock vigia.Clock) *Service {
	return &Service{datasets: datasets, conns: conns, store: store, clock: clock}
}

// sessionLabel names the diff's sessions on the sources.
const sessionLabel = "vigia diff"

type side struct {
	src  source.Source
	gen  gen
	cols map[string]catalog.Column
}

// Side is one table of a diff on its open source: its name and columns (name and
// class; the class says how a value becomes text).
type Side struct {
	Source  source.Source
	Schema  string
	Table   string
	Columns []catalog.Column
}

func (s Side) side() *side {
	return &side{src: s.Source, gen: newGen(rulesql.Dialect(s.Source.Dialect()), rulesql.Table{Schema: s.Schema, Name: s.Table}),
		cols: byName(s.Columns)}
}

// CompareSources diffs two open tables on keys over the columns cols (names present on
// both sides) with the given bucket count, filling a report's counts, samples and method
// (not its ids, key source or column lists). For Diff and the benchmark; ctx bounds it.
func CompareSources(ctx context.Context, a, b Side, keys, cols []string, buckets, sample int, progress Progress) (Report, error) {
	if progress == nil {
		progress = func(string, int, int) {}
	}
	rep := Report{ChangedByColumn: map[string]int64{}, Method: Method{Name: MethodBucketedChecksums, Buckets: buckets}}
	start := time.Now()
	r := &run{rep: &rep, keys: keys, cols: cols, bk: bucketing{buckets: buckets}, sample: sample}
	sa, sb := a.side(), b.side()
	if err := r.rangeBuckets(ctx, sa, sb); err != nil {
		return Report{}, budgetOr(ctx, err)
	}
	if err := r.compare(ctx, sa, sb, progress); err != nil {
		return Report{}, budgetOr(ctx, err)
	}
	rep.Method.Duration = time.Since(start)
	return rep, nil
}

// Diff compares dataset id (A) with otherID (B). Any credential that can see both may
// call it (a marked write for API tokens). Without KeyColumns, A's primary key is used
// when B has the same columns as A; otherwise KindInvalid with CodeKeyRequired. Returns
// KindNotFound for a dataset the caller cannot see, KindInvalid for bad options, a key
// column missing on a side, or the codes above.
func (s *Service) Diff(ctx context.Context, id, otherID string, req Request, progress Progress) (Report, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return Report{}, err
	}
	if progress == nil {
		progress = func(string, int, int) {}
	}
	a, err := s.datasets.Dataset(ctx, id)
	if err != nil {
		return Report{}, err
	}
	b, err := s.datasets.Dataset(ctx, otherID)
	if err != nil {
		return Report{}, err
	}
	if err := checkRequest(&req); err != nil {
		return Report{}, err
	}
	if err := s.refuse(ctx, p.WorkspaceID, a, b); err != nil {
		return Report{}, err
	}
	rep := Report{DatasetID: a.ID, OtherID: b.ID, ChangedByColumn: map[string]int64{}, Method: Method{Name: MethodBucketedChecksums}}
	keys, err := keyOf(a, b, req.KeyColumns, &rep)
	if err != nil {
		return Report{}, err
	}
	colsA, colsB := byName(a.Columns), byName(b.Columns)
	var compared []string
	for name := range colsA {
		if _, ok := colsB[name]; ok {
			compared = append(compared, name)
		} else {
			rep.ColumnsOnlyInA = append(rep.ColumnsOnlyInA, name)
		}
	}
	for name := range colsB {
		if _, ok := colsA[name]; !ok {
			rep.ColumnsOnlyInB = append(rep.ColumnsOnlyInB, name)
		}
	}
	sort.Strings(compared)
	sort.Strings(rep.ColumnsOnlyInA)
	sort.Strings(rep.ColumnsOnlyInB)
	rep.Columns, rep.KeyColumns = compared, keys

	ctx, cancel := context.WithTimeout(ctx, req.TimeBudget)
	defer cancel()
	srcA, err := s.open(ctx, a)
	if err != nil {
		return Report{}, budgetOr(ctx, err)
	}
	defer srcA.Close()
	srcB, err := s.open(ctx, b)
	if err != nil {
		return Report{}, budgetOr(ctx, err)
	}
	defer srcB.Close()
	buckets := req.Buckets
	if buckets == 0 {
		buckets = bucketsFor(a.RowCount, b.RowCount)
	}
	res, err := CompareSources(ctx, Side{Source: srcA, Schema: a.Schema, Table: a.Table, Columns: a.Columns},
		Side{Source: srcB, Schema: b.Schema, Table: b.Table, Columns: b.Columns}, keys, compared, buckets, req.Sample, progress)
	if err != nil {
		return Report{}, err
	}
	res.DatasetID, res.OtherID, res.KeySource, res.KeyColumns = rep.DatasetID, rep.OtherID, rep.KeySource, rep.KeyColumns
	res.Columns, res.ColumnsOnlyInA, res.ColumnsOnlyInB = rep.Columns, rep.ColumnsOnlyInA, rep.ColumnsOnlyInB
	rep = res
	progress("done", 1, 1)
	actor := "user:" + p.UserID
	if p.IsToken() {
		actor = "token:" + p.TokenID
	}
	if err := s.store.AddActivity(context.WithoutCancel(ctx), event.Activity{ID: vigia.NewID(), WorkspaceID: p.WorkspaceID, Actor: actor,
		Action: ActionDataDiff, SubjectType: "dataset", SubjectID: a.ID, CreatedAt: s.clock.Now(),
		Details: map[string]any{"other_id": b.ID, "only_in_a": rep.OnlyInA, "only_in_b": rep.OnlyInB, "changed": rep.Changed,
			"key_source": rep.KeySource, "statements": rep.Method.Statements, "bytes": rep.Method.BytesTransferred}}); err != nil {
		return Report{}, err
	}
	return rep, nil
}

func checkRequest(req *Request) error {
	var fields []vigia.FieldError
	switch {
	case req.TimeBudget == 0:
		req.TimeBudget = DefaultTimeBudget
	case req.TimeBudget < time.Second || req.TimeBudget > MaxTimeBudget:
		fields = append(fields, vigia.Field("less_than_equal", map[string]any{"ge": 1, "le": int(MaxTimeBudget.Seconds())}, "time_budget_seconds"))
	}
	switch {
	case req.Sample == 0:
		req.Sample = DefaultSample
	case req.Sample < 0 || req.Sample > MaxSample:
		fields = append(fields, vigia.Field("less_than_equal", map[string]any{"ge": 1, "le": MaxSample}, "sample_size"))
	}
	if len(req.KeyColumns) > MaxKeyColumns {
		fields = append(fields, vigia.Field("too_long", map[string]any{"max_length": MaxKeyColumns}, "key_columns"))
	}
	if req.KeyColumns != nil && len(req.KeyColumns) == 0 {
		fields = append(fields, vigia.Field("too_short", map[string]any{"min_length": 1}, "key_columns"))
	}
	if req.Buckets != 0 && (req.Buckets < 1 || req.Buckets > MaxBuckets) {
		fields = append(fields, vigia.Field("less_than_equal", map[string]any{"ge": 1, "le": MaxBuckets}, "buckets"))
	}
	if len(fields) > 0 {
		return vigia.Invalid(fields...)
	}
	return nil
}

// keyOf picks the key: the request's (each column on both sides), else A's primary key
// when B has the same columns.
func keyOf(a, b catalog.Dataset, requested []string, rep *Report) ([]string, error) {
	colsA, colsB := byName(a.Columns), byName(b.Columns)
	if requested != nil {
		var fields []vigia.FieldError
		seen := map[string]bool{}
		for i, k := range requested {
			_, inA := colsA[k]
			_, inB := colsB[k]
			if !inA || !inB || seen[k] {
				fields = append(fields, vigia.Field("value_error", map[string]any{"reason": "not_a_column_of_both"}, "key_columns", itoa(i)))
			}
			seen[k] = true
		}
		if len(fields) > 0 {
			return nil, vigia.Invalid(fields...)
		}
		rep.KeySource = KeySourceRequest
		return requested, nil
	}
	var pk []string
	for _, c := range a.Columns {
		if c.PrimaryKey {
			pk = append(pk, c.Name)
		}
	}
	same := len(a.Columns) == len(b.Columns)
	for name := range colsA {
		if _, ok := colsB[name]; !ok {
			same = false
		}
	}
	if len(pk) == 0 || !same {
		return nil, &vigia.Error{Kind: vigia.KindInvalid, Code: CodeKeyRequired, Key: "error.diff_key_required",
			Fields: []vigia.FieldError{vigia.Field("missing", nil, "key_columns")}}
	}
	rep.KeySource = KeySourcePrimaryKey
	return pk, nil
}

func byName(cols []catalog.Column) map[string]catalog.Column {
	m := make(map[string]catalog.Column, len(cols))
	for _, c := range cols {
		m[c.Name] = c
	}
	return m
}

func itoa(i int) string { return strconv.Itoa(i) }

// bucketsFor aims at RowsPerBucket rows per bucket: a power of two within bounds.
func bucketsFor(ra, rb *int64) int {
	rows := int64(0)
	for _, r := range []*int64{ra, rb} {
		if r != nil && *r > rows {
			rows = *r
		}
	}
	n := MinBuckets
	for int64(n)*RowsPerBucket < rows && n < MaxBuckets {
		n *= 2
	}
	return n
}

func (s *Service) open(ctx context.Context, d catalog.Dataset) (source.Source, error) {
	c, err := s.conns.Connection(ctx, d.ConnectionID)
	if err != nil {
		return nil, err
	}
	src, err := s.conns.Open(ctx, c, nil, sessionLabel)
	if err != nil {
		return nil, sourceFailed()
	}
	return src, nil
}

func sourceFailed() error {
	return &vigia.Error{Kind: vigia.KindInvalid, Code: CodeSourceFailed, Key: "error.diff_source_failed"}
}

// budgetOr turns any failure after the budget ran out into CodeTimeBudget.
func budgetOr(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &vigia.Error{Kind: vigia.KindInvalid, Code: CodeTimeBudget, Key: "error.diff_time_budget_exceeded"}
	}
	return err
}

// run is one diff's work.
type run struct {
	rep    *Report
	keys   []string
	cols   []string
	bk     bucketing
	sample int
}

type sums struct{ n, h1, h2 string }

func (r *run) columns(s *side, names []string) []catalog.Column {
	out := make([]catalog.Column, len(names))
	for i, n := range names {
		out[i] = s.cols[n]
	}
	return out
}

func (r *run) query(ctx context.Context, s *side, stmt string, max int) ([][]*string, error) {
	rows, err := s.src.QueryRows(ctx, stmt, max)
	r.rep.Method.Statements++
	if err != nil {
		var se *source.Error
		if errors.As(err, &se) && se.Reason == source.ReasonResult {
			return nil, &vigia.Error{Kind: vigia.KindInvalid, Code: CodeTooManyDifferences, Key: "error.diff_too_many_differences"}
		}
		return nil, sourceFailed()
	}
	r.rep.Method.RowsFetched += int64(len(rows))
	for _, row := range rows {
		for _, v := range row {
			if v != nil {
				r.rep.Method.BytesTransferred += int64(len(*v))
			}
		}
	}
	return rows, nil
}

func (r *run) bucketSums(ctx context.Context, s *side) (map[int]sums, int64, error) {
	rows, err := r.query(ctx, s, s.gen.bucketSums(r.bk, r.columns(s, r.keys), r.columns(s, r.cols)), r.bk.buckets+2)
	if err != nil {
		return nil, 0, err
	}
	out := make(map[int]sums, len(rows))
	var total int64
	for _, row := range rows {
		if len(row) != 4 || row[1] == nil {
			return nil, 0, sourceFailed()
		}
		b, ok := -1, true
		if row[0] != nil {
			b, ok = atoi(*row[0])
		}
		n, ok2 := atoi(*row[1])
		if !ok || !ok2 {
			return nil, 0, sourceFailed()
		}
		total += int64(n)
		out[b] = sums{n: *row[1], h1: deref(row[2]), h2: deref(row[3])}
	}
	return out, total, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func atoi(s string) (int, bool) {
	n := 0
	if s == "" {
		return 0, false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// compare hashes both sides, then reads the differing buckets' keys and column hashes.
func (r *run) compare(ctx context.Context, a, b *side, progress Progress) error {
	progress("hash", 0, 2)
	ba, rowsA, err := r.bucketSums(ctx, a)
	if err != nil {
		return err
	}
	progress("hash", 1, 2)
	bb, rowsB, err := r.bucketSums(ctx, b)
	if err != nil {
		return err
	}
	progress("hash", 2, 2)
	r.rep.RowsA, r.rep.RowsB = rowsA, rowsB
	var differing []int
	for k, v := range ba {
		if bb[k] != v {
			differing = append(differing, k)
		}
	}
	for k := range bb {
		if _, ok := ba[k]; !ok {
			differing = append(differing, k)
		}
	}
	sort.Ints(differing)
	r.rep.Method.DifferingBuckets = len(differing)
	if len(differing) == 0 {
		return nil
	}
	// The differing buckets are read in batches, so that a statement's IN list stays
	// short and progress moves.
	const batch = 256
	leafA, leafB := map[string][]*string{}, map[string][]*string{}
	hashesA, hashesB := map[string][]string{}, map[string][]string{}
	budget := MaxLeafRows
	for i := 0; i < len(differing); i += batch {
		part := differing[i:min(i+batch, len(differing))]
		for _, sd := range []struct {
			s      *side
			keys   map[string][]*string
			hashes map[string][]string
		}{{a, leafA, hashesA}, {b, leafB, hashesB}} {
			rows, err := r.query(ctx, sd.s, sd.s.gen.leafRows(r.bk, r.columns(sd.s, r.keys), r.columns(sd.s, r.cols), part), budget+1)
			if err != nil {
				return err
			}
			budget -= len(rows)
			for _, row := range rows {
				key := row[:len(r.keys)]
				id := keyID(key)
				if _, dup := sd.hashes[id]; dup {
					return &vigia.Error{Kind: vigia.KindInvalid, Code: CodeKeyNotUnique, Key: "error.diff_key_not_unique"}
				}
				hs := make([]string, len(r.cols))
				for j := range r.cols {
					hs[j] = deref(row[len(r.keys)+j])
				}
				sd.keys[id], sd.hashes[id] = key, hs
			}
		}
		progress("compare", min(i+batch, len(differing)), len(differing))
	}
	var onlyA, onlyB, changed []string
	for id, ha := range hashesA {
		hb, ok := hashesB[id]
		if !ok {
			onlyA = append(onlyA, id)
			continue
		}
		diff := false
		for j := range ha {
			if ha[j] != hb[j] {
				diff = true
				r.rep.ChangedByColumn[r.cols[j]]++
			}
		}
		if diff {
			changed = append(changed, id)
		}
	}
	for id := range hashesB {
		if _, ok := hashesA[id]; !ok {
			onlyB = append(onlyB, id)
		}
	}
	r.rep.OnlyInA, r.rep.OnlyInB, r.rep.Changed = int64(len(onlyA)), int64(len(onlyB)), int64(len(changed))
	r.rep.SampleOnlyInA = r.sampleOf(onlyA, leafA)
	r.rep.SampleOnlyInB = r.sampleOf(onlyB, leafB)
	r.rep.SampleChanged = r.sampleOf(changed, leafA)
	return nil
}

// keyID is a key's identity: its columns' canonical texts joined by the separator.
func keyID(key []*string) string {
	parts := make([]string, len(key))
	for i, k := range key {
		parts[i] = deref(k)
	}
	return strings.Join(parts, "\x1f")
}

// sampleOf lists the first keys, sorted, as their columns' text (NULL as nil).
func (r *run) sampleOf(ids []string, keys map[string][]*string) [][]*string {
	slices.Sort(ids)
	out := [][]*string{}
	for _, id := range ids[:min(len(ids), r.sample)] {
		key := keys[id]
		row := make([]*string, len(key))
		for i, v := range key {
			if v != nil && *v != `\N` {
				s := *v
				row[i] = &s
			}
		}
		out = append(out, row)
	}
	return out
}

// rangeBuckets switches to key ranges when the key is one integer column on both
// sides: its bounds come from the sources (MIN and MAX, index reads on a key).
func (r *run) rangeBuckets(ctx context.Context, a, b *side) error {
	if len(r.keys) != 1 || !integer(a.cols[r.keys[0]]) || !integer(b.cols[r.keys[0]]) {
		return nil
	}
	var lo, hi *int64
	for _, s := range []*side{a, b} {
		k := rulesql.QuoteIdent(s.gen.d, r.keys[0])
		for _, agg := range []string{"MIN", "MAX"} {
			v, ok, err := s.src.QueryInt(ctx, "SELECT "+agg+"("+k+") FROM "+s.gen.table)
			r.rep.Method.Statements++
			if err != nil {
				return sourceFailed()
			}
			switch {
			case !ok:
			case agg == "MIN" && (lo == nil || v < *lo):
				lo = &v
			case agg == "MAX" && (hi == nil || v > *hi):
				hi = &v
			}
		}
	}
	if lo == nil || hi == nil {
		return nil
	}
	span := uint64(*hi-*lo) + 1
	width := (span + uint64(r.bk.buckets) - 1) / uint64(r.bk.buckets)
	if width == 0 || width > 1<<62 {
		return nil
	}
	r.bk.ranged, r.bk.lo, r.bk.width = true, *lo, int64(width)
	return nil
}

// integer reports whether a column holds integers (its source type).
func integer(c catalog.Column) bool {
	t := strings.ToLower(c.DataType)
	return c.Class == source.ClassNumeric && strings.Contains(t, "int") && !strings.Contains(t, "interval") && !strings.Contains(t, "point")
}
