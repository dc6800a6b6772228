// Package synthetic generates data that looks and behaves like a dataset without copying
// it: values are drawn from what Vigia already knows of each column (type, null rate,
// distinct ratio, ranges, lengths, pattern masks, semantic type with the data country),
// never from stored values, with a seeded PRNG so that the same request over the same
// profiles gives the same bytes. Before anything is released a privacy evaluation reads
// the source only to check — counts of generated values found there — and answers fail
// (sample_leak, extreme_leak, pii_leak), warn (k_min below KThreshold over the
// quasi-identifiers) or pass, beside a utility scorecard measured against the profile.
// Packs generate several tables at once, foreign keys referencing generated parents,
// as a ZIP of CSVs with schema.sql and manifest.json, or as a SQLite file.
package synthetic

import (
	"context"
	"errors"
	"io"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/connection"
	"github.com/vigia-data/vigia/lineage"
	"github.com/vigia-data/vigia/product"
	"github.com/vigia-data/vigia/source"
)

// Bounds of the contract (part 8).
const (
	MaxRows         = 20000 // rows of one table, per request
	DefaultRows     = 100
	MaxPackTables   = 20
	DefaultPackRows = 1000
	// Budget is the time one request may take, generation and evaluation included.
	Budget = 30 * time.Second
	// KThreshold is the smallest group of generated rows sharing a quasi-identifier
	// combination below which the verdict is warn.
	KThreshold = 5
)

// Stable codes.
const (
	CodePrivacyFail    = "synthetic_privacy_fail"
	CodeBudgetExceeded = "synthetic_budget_exceeded"
	CodeSourceFailed   = "synthetic_source_unreachable"
)

// Privacy verdicts and finding keys.
const (
	VerdictPass = "pass"
	VerdictWarn = "warn"
	VerdictFail = "fail"

	KeySampleLeak  = "sample_leak"
	KeyExtremeLeak = "extreme_leak"
	KeyPIILeak     = "pii_leak"
	KeyKBelow      = "k_below"
)

// Formats.
const (
	FormatCSV    = "csv"
	FormatJSON   = "json"
	FormatZIP    = "zip"
	FormatSQLite = "sqlite"
)

// Datasets reads the catalog as the caller sees it.
type Datasets interface {
	Dataset(ctx context.Context, id string) (catalog.Dataset, error)
	FindDatasets(ctx context.Context, f catalog.DatasetFilter) (vigia.List[catalog.Dataset], error)
}

// Domains reads a data product's member datasets.
type Domains interface {
	Domain(ctx context.Context, id string) (product.Domain, error)
}

// Connections opens a dataset's source for the privacy check.
type Connections interface {
	Connection(ctx context.Context, ref string) (connection.Connection, error)
	Open(ctx context.Context, c connection.Connection, rec source.Recorder, label string) (source.Source, error)
}

// SQLiteWriter writes a pack as a SQLite database file at path (the adapter that links
// the driver).
type SQLiteWriter interface {
	WriteSQLite(ctx context.Context, path string, p *Pack) error
}

// Knowledge is what else Vigia knows of a dataset's columns: the foreign keys its
// referential rules declare and each column's sensitivity.
type Knowledge interface {
	// References are the foreign keys the dataset's active referential rules declare
	// (the caller's view: a reference dataset the caller cannot see is left out).
	References(ctx context.Context, datasetID string) ([]Reference, error)
	// Sensitivity is each column's sensitivity by name (columns without one are absent).
	Sensitivity(ctx context.Context, datasetID string) (map[string]Sensitivity, error)
}

// Reference is a foreign key a referential rule declares: Column of the dataset holds
// values of RefColumn of RefDatasetID.
type Reference struct {
	Column       string
	RefDatasetID string
	RefColumn    string
}

// Sensitivity is a column's sensitivity level (public, internal, confidential, pii) and
// whether a person set it (manual) or it was derived from the column's name and semantic
// type (automatic).
type Sensitivity struct {
	Level  string
	Manual bool
}

// Options configure the service.
type Options struct {
	// Budget bounds one request (Budget by default).
	Budget time.Duration
	// Inject is a test hook forcing the generator to reuse values; never set in production.
	Inject []Injection
	// TempDir holds SQLite packs while they are written (os.TempDir by default).
	TempDir string
}

// Service generates and evaluates synthetic data.
type Service struct {
	datasets  Datasets
	domains   Domains
	conns     Connections
	knowledge Knowledge
	sqlite    SQLiteWriter
	opts      Options
}

// NewService returns the synthetic-data service. knowledge may be nil: then foreign keys
// are only inferred from names and quasi-identifiers only from names and semantic types.
func NewService(datasets Datasets, domains Domains, conns Connections, knowledge Knowledge, sqlite SQLiteWriter, opts Options) *Service {
	if opts.Budget <= 0 {
		opts.Budget = Budget
	}
	return &Service{datasets: datasets, domains: domains, conns: conns, knowledge: knowledge, sqlite: sqlite, opts: opts}
}

// Finding is one privacy finding with its stable key and params (counts and names,
// never a value).
type Finding struct {
	Key    string
	Params map[string]any
}

// Evaluation is the scorecard of one generated table.
type Evaluation struct {
	DatasetID         string
	Table             string
	Rows              int
	Seed              int64
	UtilityScore      float64
	UtilityComponents map[string]float64
	UtilityWeights    map[string]float64
	PrivacyVerdict    string
	// Key is the deciding finding (a leak, k_below) or "" on pass; Params its params.
	Key    string
	Params map[string]any
	// Findings are every leak found, in a fixed order.
	Findings         []Finding
	KMin             *int
	KThreshold       int
	QuasiIdentifiers []string
}

// ReasonKey is the message catalogue key of the evaluation's reason
// (synthetic.reason.<key>, or synthetic.reason.pass).
func (ev Evaluation) ReasonKey() string {
	if ev.Key == "" {
		return "synthetic.reason.pass"
	}
	return "synthetic.reason." + ev.Key
}

// Result is a generated table with its evaluation.
type Result struct {
	Table      *Table
	Evaluation Evaluation
}

// Pack is a generated multi-table pack with each table's evaluation.
type Pack struct {
	Seed         int64
	RowsPerTable int
	Tables       []*Table
	Evaluations  []Evaluation
	// Truncated is true when the connection or domain had more tables than max_tables.
	Truncated bool
}

// PackRequest asks for a pack: exactly one of ConnectionID, DomainID, DatasetIDs.
type PackRequest struct {
	ConnectionID *string
	DomainID     *string
	DatasetIDs   []string
	MaxTables    int
	RowsPerTable int
	Seed         int64
	Format       string
	// Progress, when set, is told each table generated and evaluated (the command line
	// draws it).
	Progress func(Step)
}

// Step is a pack's progress: stage generate or evaluate, the table just done, and how
// many of Total tables that stage has done.
type Step struct {
	Stage string
	Table string
	Done  int
	Total int
}

// Rows generates rows of a dataset and evaluates them. Returns KindNotFound for a
// dataset the caller cannot see, KindConflict (synthetic_privacy_fail) when the
// verdict is fail, KindInvalid (synthetic_budget_exceeded) over the time budget.
func (s *Service) Rows(ctx context.Context, datasetID string, rows int, seed int64) (Result, error) {
	res, err := s.generateOne(ctx, datasetID, rows, seed)
	if err != nil {
		return Result{}, err
	}
	if res.Evaluation.PrivacyVerdict == VerdictFail {
		return Result{}, privacyFail(res.Evaluation.Key, res.Evaluation.Params, nil)
	}
	return res, nil
}

// Evaluate generates rows of a dataset and answers their scorecard only (a fail
// verdict is an answer here, not an error). Errors as Rows, without the conflict.
func (s *Service) Evaluate(ctx context.Context, datasetID string, rows int, seed int64) (Evaluation, error) {
	res, err := s.generateOne(ctx, datasetID, rows, seed)
	return res.Evaluation, err
}

func (s *Service) generateOne(ctx context.Context, datasetID string, rows int, seed int64) (Result, error) {
	if rows < 1 || rows > MaxRows {
		return Result{}, vigia.Invalid(vigia.Field("less_than_equal", map[string]any{"ge": 1, "le": MaxRows}, "rows"))
	}
	ctx, cancel := s.withBudget(ctx)
	defer cancel()
	d, err := s.datasets.Dataset(ctx, datasetID)
	if err != nil {
		return Result{}, overBudget(ctx, err)
	}
	tables, err := s.plan(ctx, []catalog.Dataset{d}, rows)
	if err != nil {
		return Result{}, overBudget(ctx, err)
	}
	if err := s.generate(ctx, tables, seed, nil); err != nil {
		return Result{}, overBudget(ctx, err)
	}
	evs, err := s.evaluate(ctx, tables, seed, nil)
	if err != nil {
		return Result{}, overBudget(ctx, err)
	}
	return Result{Table: tables[0], Evaluation: evs[0]}, nil
}

// Pack generates and evaluates a pack. Returns KindInvalid for a bad request (not
// exactly one scope, too many datasets, bounds) or over the budget
// (synthetic_budget_exceeded), KindNotFound for a scope the caller cannot see, and
// KindConflict (synthetic_privacy_fail, with tables[]) when a table's verdict is fail.
func (s *Service) Pack(ctx context.Context, req PackRequest) (*Pack, error) {
	if err := req.validate(); err != nil {
		return nil, err
	}
	ctx, cancel := s.withBudget(ctx)
	defer cancel()
	ds, truncated, err := s.packDatasets(ctx, req)
	if err != nil {
		return nil, overBudget(ctx, err)
	}
	tables, err := s.plan(ctx, ds, req.RowsPerTable)
	if err != nil {
		return nil, overBudget(ctx, err)
	}
	if err := s.generate(ctx, tables, req.Seed, req.Progress); err != nil {
		return nil, overBudget(ctx, err)
	}
	evs, err := s.evaluate(ctx, tables, req.Seed, req.Progress)
	if err != nil {
		return nil, overBudget(ctx, err)
	}
	var failed []map[string]any
	for i, ev := range evs {
		if ev.PrivacyVerdict == VerdictFail {
			failed = append(failed, map[string]any{"name": tables[i].Name, "dataset_id": tables[i].DatasetID, "key": ev.Key, "params": ev.Params})
		}
	}
	if len(failed) > 0 {
		return nil, privacyFail(failed[0]["key"].(string), failed[0]["params"].(map[string]any), failed)
	}
	return &Pack{Seed: req.Seed, RowsPerTable: req.RowsPerTable, Tables: tables, Evaluations: evs, Truncated: truncated}, nil
}

// WriteSQLite writes the pack as a SQLite file (through a temporary file) to w.
func (s *Service) WriteSQLite(ctx context.Context, p *Pack, w io.Writer) error {
	if s.sqlite == nil {
		return vigia.Internal(errors.New("synthetic: no SQLite writer"))
	}
	dir, err := os.MkdirTemp(s.opts.TempDir, "vigia-synthetic-")
	if err != nil {
		return vigia.Internal(err)
	}
	defer os.RemoveAll(dir)
	path := dir + string(os.PathSeparator) + "pack.sqlite"
	if err := s.sqlite.WriteSQLite(ctx, path, p); err != nil {
		return vigia.Internal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		return vigia.Internal(err)
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

func (r *PackRequest) validate() error {
	scopes := 0
	if r.ConnectionID != nil {
		scopes++
	}
	if r.DomainID != nil {
		scopes++
	}
	if r.DatasetIDs != nil {
		scopes++
	}
	if scopes != 1 {
		return vigia.Invalid(vigia.Field("exactly_one_scope", nil, "connection_id"))
	}
	if r.DatasetIDs != nil && (len(r.DatasetIDs) == 0 || len(r.DatasetIDs) > MaxPackTables) {
		return vigia.Invalid(vigia.Field("too_long", map[string]any{"max_length": MaxPackTables}, "dataset_ids"))
	}
	if r.MaxTables == 0 {
		r.MaxTables = MaxPackTables
	}
	if r.MaxTables < 1 || r.MaxTables > MaxPackTables {
		return vigia.Invalid(vigia.Field("less_than_equal", map[string]any{"le": MaxPackTables, "ge": 1}, "max_tables"))
	}
	if r.DatasetIDs != nil && len(r.DatasetIDs) > r.MaxTables {
		return vigia.Invalid(vigia.Field("too_long", map[string]any{"max_length": r.MaxTables}, "dataset_ids"))
	}
	if r.RowsPerTable == 0 {
		r.RowsPerTable = DefaultPackRows
	}
	if r.RowsPerTable < 1 || r.RowsPerTable > MaxRows {
		return vigia.Invalid(vigia.Field("less_than_equal", map[string]any{"le": MaxRows, "ge": 1}, "rows_per_table"))
	}
	if r.Format == "" {
		r.Format = FormatZIP
	}
	if r.Format != FormatZIP && r.Format != FormatSQLite {
		return vigia.Invalid(vigia.Field("enum", nil, "format"))
	}
	return nil
}

// packDatasets resolves the pack's scope to datasets with their columns, by name.
func (s *Service) packDatasets(ctx context.Context, req PackRequest) ([]catalog.Dataset, bool, error) {
	var ids []string
	onlyTables := true
	switch {
	case req.DatasetIDs != nil:
		onlyTables = false
		seen := map[string]bool{}
		for _, id := range req.DatasetIDs {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	case req.DomainID != nil:
		dom, err := s.domains.Domain(ctx, *req.DomainID)
		if err != nil {
			return nil, false, err
		}
		ids = dom.DatasetIDs
	default:
		if !vigia.ValidID(*req.ConnectionID) {
			return nil, false, vigia.NotFound()
		}
		if _, err := s.conns.Connection(ctx, *req.ConnectionID); err != nil {
			return nil, false, err
		}
		list, err := s.datasets.FindDatasets(ctx, catalog.DatasetFilter{ConnectionID: req.ConnectionID, Page: vigia.Page{Limit: 500}})
		if err != nil {
			return nil, false, err
		}
		for _, d := range list.Items {
			ids = append(ids, d.ID)
		}
	}
	var out []catalog.Dataset
	for _, id := range ids {
		d, err := s.datasets.Dataset(ctx, id)
		if err != nil {
			if vigia.IsKind(err, vigia.KindNotFound) && req.DatasetIDs == nil {
				continue // a member the caller cannot see is not in the pack
			}
			return nil, false, err
		}
		if onlyTables && d.Kind != catalog.KindTable {
			continue
		}
		if !profiled(d) {
			if req.DatasetIDs != nil {
				return nil, false, vigia.Invalid(vigia.Field("not_profiled", nil, "dataset_ids"))
			}
			continue
		}
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	truncated := false
	if len(out) > req.MaxTables {
		out, truncated = out[:req.MaxTables], true
	}
	if len(out) == 0 {
		return nil, false, vigia.Invalid(vigia.Field("not_profiled", nil, "connection_id"))
	}
	return out, truncated, nil
}

// profiled reports whether a dataset has a profile to generate from.
func profiled(d catalog.Dataset) bool {
	for _, c := range d.Columns {
		if c.Profile != nil {
			return true
		}
	}
	return false
}

// plan reads what the knowledge port says of the datasets (referential rules,
// sensitivity) and plans the tables.
func (s *Service) plan(ctx context.Context, ds []catalog.Dataset, rows int) ([]*Table, error) {
	refs := map[string][]Reference{}
	sens := map[string]map[string]Sensitivity{}
	if s.knowledge != nil {
		for _, d := range ds {
			r, err := s.knowledge.References(ctx, d.ID)
			if err != nil {
				return nil, err
			}
			refs[d.ID] = r
			if sens[d.ID], err = s.knowledge.Sensitivity(ctx, d.ID); err != nil {
				return nil, err
			}
		}
	}
	return planTables(ds, rows, refs, sens), nil
}

// planTables names the tables of a pack and links their foreign keys, within the pack
// only: the single-column keys declared on the source (read by discovery), and those the
// datasets' referential rules declare (refs, by dataset id) where the
// referenced column is its table's key (a single-column primary key or a unique
// column), else those the lineage infers from names (a column x_id and a table x or its
// plural keyed by id, in one connection). sens gives the columns' sensitivity (by
// dataset id, then column) for the quasi-identifiers.
func planTables(ds []catalog.Dataset, rows int, refs map[string][]Reference, sens map[string]map[string]Sensitivity) []*Table {
	names := map[string]int{}
	for _, d := range ds {
		names[strings.ToLower(d.Table)]++
	}
	byID := map[string]*Table{}
	tables := make([]*Table, 0, len(ds))
	for _, d := range ds {
		name := d.Table
		if names[strings.ToLower(d.Table)] > 1 && d.Schema != "" {
			name = d.Schema + "_" + d.Table
		}
		t := &Table{DatasetID: d.ID, ConnectionID: d.ConnectionID, Name: name, Source: d, Columns: columnsOf(d, sens[d.ID]), Rows: rows}
		t.Values, t.Nulls = make([][]string, len(t.Columns)), make([][]bool, len(t.Columns))
		tables = append(tables, t)
		byID[d.ID] = t
	}
	cat := lineage.ConnectionCatalog{}
	for _, d := range ds {
		cd := lineage.CatalogDataset{ID: d.ID, Schema: d.Schema, Table: d.Table, Kind: d.Kind}
		for _, c := range d.Columns {
			cd.Columns = append(cd.Columns, lineage.CatalogColumn{Name: c.Name, PrimaryKey: c.PrimaryKey})
		}
		cat.Datasets = append(cat.Datasets, cd)
	}
	// Declared foreign keys first (single-column ones to a table of the pack), then the
	// inferred ones for the columns no declared key covers.
	for _, child := range tables {
		for n, fk := range child.Source.ForeignKeys {
			if len(fk.Columns) == 0 || len(fk.Columns) != len(fk.RefColumns) || fk.RefDatasetID == nil {
				continue
			}
			parent := byID[*fk.RefDatasetID]
			if parent == nil || parent == child {
				continue
			}
			if len(fk.Columns) == 1 {
				for i := range child.Columns {
					if child.Columns[i].Name == fk.Columns[0] {
						child.Columns[i].Ref = &Ref{Table: parent.Name, Column: fk.RefColumns[0]}
					}
				}
				continue
			}
			linkComposite(child, parent, fk, n)
		}
	}
	for _, e := range lineage.InferKeys(cat) {
		parent, child := byID[e.Source], byID[e.Target]
		if parent == nil || child == nil || parent.Source.ConnectionID != child.Source.ConnectionID {
			continue
		}
		for i := range child.Columns {
			if child.Columns[i].Name == e.LinkingColumn && child.Columns[i].Ref == nil {
				child.Columns[i].Ref = &Ref{Table: parent.Name, Column: e.Columns[0].From}
			}
		}
	}
	// Declared references come after, and win over an inferred one on the same column.
	for _, child := range tables {
		for _, r := range refs[child.DatasetID] {
			parent := byID[r.RefDatasetID]
			if parent == nil || !isKey(parent, r.RefColumn) {
				continue
			}
			for i := range child.Columns {
				if c := &child.Columns[i]; c.Name == r.Column && !c.PrimaryKey && (c.Ref == nil || c.Ref.Group == "") {
					c.Ref = &Ref{Table: parent.Name, Column: r.RefColumn}
				}
			}
		}
	}
	return orderByParents(tables)
}

// linkComposite links a composite declared foreign key (n-th of the child's) whose
// referenced columns are the parent's whole primary key (the key the generated parent rows
// hold as distinct tuples). A column already in another composite key keeps it; then the
// key is left out as a whole.
func linkComposite(child, parent *Table, fk catalog.ForeignKey, n int) {
	var pk []string
	for _, c := range parent.Columns {
		if c.PrimaryKey {
			pk = append(pk, c.Name)
		}
	}
	refs := slices.Clone(fk.RefColumns)
	slices.Sort(refs)
	slices.Sort(pk)
	if !slices.Equal(refs, pk) {
		return
	}
	idx := make([]int, len(fk.Columns))
	allNullable := true
	for k, name := range fk.Columns {
		idx[k] = slices.IndexFunc(child.Columns, func(c Column) bool { return c.Name == name })
		if idx[k] < 0 || (child.Columns[idx[k]].Ref != nil && child.Columns[idx[k]].Ref.Group != "") {
			return
		}
		allNullable = allNullable && child.Columns[idx[k]].Nullable
	}
	group := fk.Name
	if group == "" {
		group = "fk_" + strconv.Itoa(n+1)
	}
	nullRate := 0.0
	if p := child.Columns[idx[0]].profile; allNullable && p != nil {
		nullRate = p.NullRate
	}
	childPK := 0
	covered := 0
	for _, c := range child.Columns {
		if c.PrimaryKey {
			childPK++
			if slices.Contains(fk.Columns, c.Name) {
				covered++
			}
		}
	}
	for k, i := range idx {
		child.Columns[i].Ref = &Ref{Table: parent.Name, Column: fk.RefColumns[k], Group: group, NullRate: nullRate,
			Distinct: childPK > 0 && covered == childPK}
	}
}

// isKey reports whether column is t's key: its only primary-key column, or unique.
func isKey(t *Table, column string) bool {
	pk := 0
	for _, c := range t.Columns {
		if c.PrimaryKey {
			pk++
		}
	}
	for _, c := range t.Columns {
		if c.Name == column {
			return (c.PrimaryKey && pk == 1) || (c.Unique && !c.PrimaryKey)
		}
	}
	return false
}

// orderByParents sorts tables so that every parent comes before its children (a cycle
// keeps the remaining tables by name, their references dropped).
func orderByParents(tables []*Table) []*Table {
	done := map[string]bool{}
	var out []*Table
	for len(out) < len(tables) {
		progressed := false
		for _, t := range tables {
			if done[t.Name] {
				continue
			}
			ready := true
			for _, c := range t.Columns {
				if c.Ref != nil && c.Ref.Table != t.Name && !done[c.Ref.Table] {
					ready = false
				}
			}
			if ready {
				done[t.Name] = true
				out = append(out, t)
				progressed = true
			}
		}
		if !progressed {
			for _, t := range tables {
				if !done[t.Name] {
					for i := range t.Columns {
						if r := t.Columns[i].Ref; r != nil && !done[r.Table] {
							t.Columns[i].Ref = nil
						}
					}
					done[t.Name] = true
					out = append(out, t)
					break
				}
			}
		}
	}
	for _, t := range out {
		for i := range t.Columns {
			if r := t.Columns[i].Ref; r != nil && r.Table == t.Name {
				t.Columns[i].Ref = nil // a self-reference would need parents generated first
			}
		}
	}
	return out
}

// generate fills every table, parents first.
func (s *Service) generate(ctx context.Context, tables []*Table, seed int64, progress func(Step)) error {
	keys := map[string][]string{}
	for i, t := range tables {
		if progress != nil && i > 0 {
			progress(Step{Stage: "generate", Table: tables[i-1].Name, Done: i, Total: len(tables)})
		}
		if err := budgetErr(ctx); err != nil {
			return err
		}
		for c := range t.Columns {
			generateColumn(t, c, seed, keys, s.opts.Inject)
		}
		for c, col := range t.Columns {
			if col.PrimaryKey || col.Unique {
				keys[refKey(t.Name, col.Name)] = t.Values[c]
			}
		}
	}
	if progress != nil && len(tables) > 0 {
		progress(Step{Stage: "generate", Table: tables[len(tables)-1].Name, Done: len(tables), Total: len(tables)})
	}
	return budgetErr(ctx)
}

// refKey names a generated key column among the parents generateColumn is given.
func refKey(table, column string) string { return table + "\x00" + column }

// evalWorkers bounds the tables whose privacy is checked at once: a source holds two
// connections by default (source.DefaultMaxConns), and more would only queue on them.
const evalWorkers = 2

// evaluate checks every table's privacy against its source and scores its utility. The
// privacy checks of the tables run evalWorkers at a time (each touches only its own
// table); the utility scores follow, once every table's values are final.
func (s *Service) evaluate(ctx context.Context, tables []*Table, seed int64, progress func(Step)) ([]Evaluation, error) {
	srcs := map[string]source.Source{}
	defer func() {
		for _, src := range srcs {
			_ = src.Close()
		}
	}()
	for _, t := range tables {
		if _, ok := srcs[t.ConnectionID]; ok {
			continue
		}
		if err := budgetErr(ctx); err != nil {
			return nil, err
		}
		c, err := s.conns.Connection(ctx, t.ConnectionID)
		var src source.Source
		if err == nil {
			src, err = s.conns.Open(ctx, c, nil, "vigia synthetic")
		}
		if err != nil {
			if e := budgetErr(ctx); e != nil {
				return nil, e
			}
			return nil, vigia.BadGateway(CodeSourceFailed, "error.synthetic_source_unreachable", nil, err)
		}
		srcs[t.ConnectionID] = src
	}

	out := make([]Evaluation, len(tables))
	ectx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu       sync.Mutex
		firstErr error
		done     int
		wg       sync.WaitGroup
	)
	next := make(chan int)
	for range min(evalWorkers, len(tables)) {
		wg.Go(func() {
			for i := range next {
				t := tables[i]
				ev, err := checkTable(ectx, srcs[t.ConnectionID], t, seed)
				mu.Lock()
				if err != nil {
					if firstErr == nil {
						firstErr = err
						cancel()
					}
				} else if firstErr == nil {
					out[i] = ev
					done++
					if progress != nil {
						progress(Step{Stage: "evaluate", Table: t.Name, Done: done, Total: len(tables)})
					}
				}
				mu.Unlock()
			}
		})
	}
	for i := range tables {
		if ectx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	if firstErr != nil {
		if e := budgetErr(ctx); e != nil {
			return nil, e
		}
		if vigia.IsKind(firstErr, vigia.KindBadGateway) || errors.Is(firstErr, context.Canceled) {
			return nil, firstErr
		}
		return nil, vigia.BadGateway(CodeSourceFailed, "error.synthetic_source_unreachable", nil, firstErr)
	}

	byName := map[string]*Table{}
	for _, t := range tables {
		byName[t.Name] = t
	}
	for i, t := range tables {
		ev := &out[i]
		ev.DatasetID, ev.Table, ev.Rows, ev.Seed = t.DatasetID, t.Name, t.Rows, seed
		ev.UtilityComponents, ev.UtilityWeights, ev.UtilityScore = utility(t, byName)
	}
	return out, nil
}

// checkTable draws again the personal-data values the source holds and the rows equal
// to a rare source combination, then evaluates the table's privacy.
func checkTable(ctx context.Context, src source.Source, t *Table, seed int64) (Evaluation, error) {
	if err := budgetErr(ctx); err != nil {
		return Evaluation{}, err
	}
	found, err := redrawPII(ctx, src, t, seed)
	if err != nil {
		return Evaluation{}, err
	}
	leaked, err := redrawRare(ctx, src, t, seed)
	if err != nil {
		return Evaluation{}, err
	}
	return checkPrivacy(ctx, src, t, found, leaked)
}

// budgetErr is the budget's error once the request's deadline passed: 422
// synthetic_budget_exceeded naming the budget.
func budgetErr(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		secs := 0.0
		if b, ok := ctx.Value(budgetKey{}).(time.Duration); ok {
			secs = b.Seconds()
		}
		return &vigia.Error{Kind: vigia.KindInvalid, Code: CodeBudgetExceeded, Key: "error.synthetic_budget_exceeded",
			Params: map[string]any{"budget_seconds": secs}, Detail: map[string]any{"budget_seconds": secs}}
	}
	return ctx.Err()
}

// overBudget answers the budget's error in place of err once the deadline passed (a
// store or source call cut by it fails with its own error).
func overBudget(ctx context.Context, err error) error {
	if e := budgetErr(ctx); e != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return e
	}
	return err
}

type budgetKey struct{}

// withBudget bounds ctx by the service's budget and remembers it for the error.
func (s *Service) withBudget(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithValue(ctx, budgetKey{}, s.opts.Budget), s.opts.Budget)
}

func privacyFail(key string, params map[string]any, tables []map[string]any) error {
	detail := map[string]any{"key": key, "params": params}
	if tables != nil {
		detail["tables"] = tables
	}
	msgParams := map[string]any{"key": key}
	if c, ok := params["column"]; ok {
		msgParams["column"] = c
	}
	return &vigia.Error{Kind: vigia.KindConflict, Code: CodePrivacyFail, Key: "error.synthetic_privacy_fail." + key, Params: msgParams, Detail: detail}
}
