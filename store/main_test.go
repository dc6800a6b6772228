package store_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/connection"
	"github.com/vigia-data/vigia/identity"
	"github.com/vigia-data/vigia/quality"
	"github.com/vigia-data/vigia/scan"
	"github.com/vigia-data/vigia/source"
	"github.com/vigia-data/vigia/store"
	"github.com/vigia-data/vigia/store/storetest"
	"github.com/vigia-data/vigia/team"
)

// The store's tests run on one fresh database for the package; each test works in its
// own transaction (storetest.MustTx), rolled back at its end, so they run in parallel
// and every test sees only the rows it wrote.
func TestMain(m *testing.M) { os.Exit(storetest.Run(m)) }

// t0 is the tests' clock: every time they write is t0 plus an offset, so orderings by
// time are the tests' own.
var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// fx is one test's transaction and the store on it.
type fx struct {
	t   *testing.T
	ctx context.Context
	tx  pgx.Tx
	db  *store.DB
}

func newFx(t *testing.T) *fx {
	t.Helper()
	t.Parallel()
	ctx, tx := storetest.MustTx(t)
	return &fx{t: t, ctx: ctx, tx: tx, db: storetest.MustDB(t)}
}

// must fails the test on err.
func (f *fx) must(err error) {
	f.t.Helper()
	if err != nil {
		f.t.Fatal(err)
	}
}

// fails runs fn in a savepoint and wants an error of kind k.
func (f *fx) fails(k vigia.Kind, what string, fn func(ctx context.Context) error) {
	f.t.Helper()
	err := storetest.Savepoint(f.t, f.ctx, fn)
	if !vigia.IsKind(err, k) {
		f.t.Fatalf("%s: got %v, want an error of kind %d", what, err, k)
	}
}

// exec runs the test's own SQL in its transaction.
func (f *fx) exec(sql string, args ...any) {
	f.t.Helper()
	if _, err := f.tx.Exec(f.ctx, sql, args...); err != nil {
		f.t.Fatalf("%s: %v", sql, err)
	}
}

// count returns a count(*) of the test's own SQL.
func (f *fx) count(sql string, args ...any) int {
	f.t.Helper()
	var n int
	if err := f.tx.QueryRow(f.ctx, sql, args...).Scan(&n); err != nil {
		f.t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// workspace creates a workspace with a unique name and returns its admin viewer.
func (f *fx) workspace() catalog.Viewer {
	f.t.Helper()
	id := vigia.NewID()
	f.must(f.db.Identity().CreateWorkspace(f.ctx, identity.Workspace{ID: id, Name: "ws-" + id, DataCountry: "PT",
		Timezone: "Europe/Lisbon", CreatedAt: t0}))
	return catalog.Viewer{WorkspaceID: id, TeamIDs: []string{}, Admin: true}
}

// user creates a person of the workspace.
func (f *fx) user(ws, email string, role vigia.Role) string {
	f.t.Helper()
	id := vigia.NewID()
	f.must(f.db.Identity().CreateUser(f.ctx, identity.User{ID: id, WorkspaceID: ws, Email: email, Role: role, CreatedAt: t0}))
	return id
}

// team creates a team of the workspace.
func (f *fx) team(ws, name string) string {
	f.t.Helper()
	id := vigia.NewID()
	f.must(f.db.Teams().CreateTeam(f.ctx, team.Team{ID: id, WorkspaceID: ws, Name: name, CreatedAt: t0}))
	return id
}

// connection creates a Postgres connection of the workspace.
func (f *fx) connection(ws, name string) string {
	f.t.Helper()
	id := vigia.NewID()
	f.must(f.db.Connections().CreateConnection(f.ctx, connection.Connection{ID: id, WorkspaceID: ws, Name: name, Kind: "postgres",
		ScanTimezone: "UTC", CreatedAt: t0}, []byte("sealed")))
	return id
}

// tables discovers tables public.<name> (two columns each) on a connection and returns
// their dataset ids in the order given.
func (f *fx) tables(ws, conn string, names ...string) []string {
	f.t.Helper()
	ts := make([]source.Table, 0, len(names))
	for _, n := range names {
		ts = append(ts, source.Table{Schema: "public", Name: n, Kind: "table", Columns: []source.Column{
			{Name: "id", Position: 1, DataType: "integer", Class: "numeric", PrimaryKey: true},
			{Name: "name", Position: 2, DataType: "text", Class: "text", Nullable: true},
		}})
	}
	refs, err := f.db.Scans().SyncDatasets(f.ctx, ws, conn, ts, t0)
	f.must(err)
	ids := make([]string, 0, len(refs))
	for _, r := range refs {
		ids = append(ids, r.ID)
	}
	return ids
}

// restrict puts datasets in a new restricted domain of the workspace, granted to the
// given teams, and returns the domain id.
func (f *fx) restrict(ws string, datasetIDs []string, teams ...string) string {
	f.t.Helper()
	id := vigia.NewID()
	f.exec(`INSERT INTO domains (id, workspace_id, name, restricted) VALUES ($1, $2, $3, true)`, id, ws, "restricted-"+id)
	for _, d := range datasetIDs {
		f.exec(`INSERT INTO domain_datasets (domain_id, dataset_id) VALUES ($1, $2)`, id, d)
	}
	for _, tm := range teams {
		f.exec(`INSERT INTO domain_grants (domain_id, team_id, role) VALUES ($1, $2, 'member')`, id, tm)
	}
	return id
}

// member is a non-admin viewer of the workspace in the given teams.
func member(ws string, teams ...string) catalog.Viewer {
	if teams == nil {
		teams = []string{}
	}
	return catalog.Viewer{WorkspaceID: ws, TeamIDs: teams}
}

// at is t0 plus n minutes.
func at(n int) time.Time { return t0.Add(time.Duration(n) * time.Minute) }

// names maps items to a string each, for comparing orders.
func names[T any](items []T, f func(T) string) []string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, f(it))
	}
	return out
}

// ctxT shortens the closures given to fx.fails.
type ctxT = context.Context

// newScan creates a queued scan of a connection at minute n.
func (f *fx) newScan(ws, conn string, n int) string {
	f.t.Helper()
	id := vigia.NewID()
	f.must(f.db.Scans().CreateScan(f.ctx, scan.Scan{ID: id, WorkspaceID: ws, ConnectionID: conn, Status: "queued", Trigger: "manual",
		RequestedBy: "tester", CreatedAt: at(n)}))
	return id
}

// result saves a scan's result for a dataset (profile seq, score and verdict at minute
// seq), after edit changes it.
func (f *fx) result(ws, datasetID, scanID string, seq int, score float64, edit func(r *scan.DatasetResult)) {
	f.t.Helper()
	r := scan.DatasetResult{DatasetID: datasetID, WorkspaceID: ws, ScanID: scanID, Seq: seq, At: at(seq),
		Profile: &source.TableProfile{RowCount: int64(100 * seq), Depth: "standard",
			Columns: []source.ColumnProfile{{Name: "id"}, {Name: "name", NullCount: int64(seq)}}},
		Columns: []source.Column{
			{Name: "id", Position: 1, DataType: "integer", Class: "numeric", PrimaryKey: true},
			{Name: "name", Position: 2, DataType: "text", Class: "text", Nullable: true},
		},
		Metrics: scan.Metrics{"volume": float64(100 * seq)},
		Score:   quality.Score{Score: vigia.Ptr(score), Dimensions: quality.Dimensions{}},
		Verdict: quality.VerdictResult{Verdict: quality.VerdictPass, FailingRules: []quality.RuleOutcome{}, Reasons: []quality.VerdictReason{}},
	}
	if edit != nil {
		edit(&r)
	}
	f.must(f.db.Scans().SaveDatasetResult(f.ctx, r))
}

// issue opens an issue on a dataset through a scan result (type anomaly on metric
// volume unless edit says otherwise) and returns its id.
func (f *fx) issue(ws, conn, datasetID, severity string, n int, edit func(ni *scan.NewIssue)) string {
	f.t.Helper()
	id := vigia.NewID()
	ni := scan.NewIssue{ID: id, Type: "anomaly", Severity: severity, Title: "volume " + id, TitleKey: "issue.anomaly",
		Metric: "volume", Column: id}
	if edit != nil {
		edit(&ni)
	}
	sc := f.newScan(ws, conn, n)
	f.result(ws, datasetID, sc, n, 90, func(r *scan.DatasetResult) { r.NewIssues = []scan.NewIssue{ni} })
	return id
}

type (
	catalogViewer = catalog.Viewer
	catalogColumn = catalog.Column
)

func scanVerdictPass() quality.VerdictResult {
	return quality.VerdictResult{Verdict: quality.VerdictPass, FailingRules: []quality.RuleOutcome{}, Reasons: []quality.VerdictReason{}}
}
