package store_test

import (
	"slices"
	"testing"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/connection"
	"github.com/vigia-data/vigia/scan"
	"github.com/vigia-data/vigia/source"
)

func TestConnections(t *testing.T) {
	f := newFx(t)
	s := f.db.Connections()
	ws := f.workspace().WorkspaceID
	other := f.workspace().WorkspaceID
	wh := f.connection(ws, "warehouse")
	f.connection(ws, "app")
	foreign := f.connection(other, "warehouse") // the name is free in another workspace
	f.fails(vigia.KindConflict, "a taken connection name", func(ctx ctxT) error {
		return s.CreateConnection(ctx, connection.Connection{ID: vigia.NewID(), WorkspaceID: ws, Name: "app", Kind: "mysql", ScanTimezone: "UTC", CreatedAt: t0}, []byte("x"))
	})
	f.tables(ws, wh, "orders", "customers")

	list, err := s.Connections(f.ctx, ws)
	f.must(err)
	if got := names(list, func(c connection.Connection) string { return c.Name }); !slices.Equal(got, []string{"app", "warehouse"}) {
		t.Fatalf("connections by name: %v", got)
	}
	if list[1].DatasetsCount != 2 || list[1].WorkspaceCountry != "PT" || list[1].LastScanAt != nil {
		t.Fatalf("listed connection %+v", list[1])
	}
	byName, err := s.ConnectionByRef(f.ctx, ws, "warehouse")
	f.must(err)
	byID, err := s.ConnectionByRef(f.ctx, ws, wh)
	f.must(err)
	if byName.ID != wh || byID.Name != "warehouse" || byID.Kind != "postgres" || byID.Lineage.Aliases == nil {
		t.Fatalf("by ref: %+v / %+v", byName, byID)
	}
	f.fails(vigia.KindNotFound, "another workspace's connection by id", func(ctx ctxT) error {
		_, err := s.ConnectionByRef(ctx, ws, foreign)
		return err
	})
	f.fails(vigia.KindNotFound, "another workspace's sealed DSN", func(ctx ctxT) error {
		_, err := s.SealedDSN(ctx, ws, foreign)
		return err
	})
	if b, err := s.SealedDSN(f.ctx, ws, wh); err != nil || string(b) != "sealed" {
		t.Fatalf("sealed DSN %q, %v", b, err)
	}

	// Updates touch the workspace's own connection only.
	c := byID
	c.Name, c.DataCountry, c.ScanTimezone, c.StatementTimeout = "dwh", vigia.Ptr("ES"), "Europe/Madrid", vigia.Ptr(30)
	c.Lineage.Aliases = []string{"postgres://proxy:5432"}
	f.must(s.UpdateConnection(f.ctx, c))
	c.Schedule = connection.Schedule{Enabled: true, Hour: vigia.Ptr(3), Minute: 15}
	f.must(s.UpdateSchedule(f.ctx, c))
	f.must(s.SetLineageIdentity(f.ctx, ws, wh, "postgres://db:5432", "dwh"))
	got, err := s.ConnectionByRef(f.ctx, ws, "dwh")
	f.must(err)
	if *got.DataCountry != "ES" || got.ScanTimezone != "Europe/Madrid" || *got.StatementTimeout != 30 || !got.Schedule.Enabled ||
		*got.Schedule.Hour != 3 || got.Schedule.Minute != 15 || got.Lineage.Namespace != "postgres://db:5432" || got.Lineage.Database != "dwh" ||
		!slices.Equal(got.Lineage.Aliases, []string{"postgres://proxy:5432"}) {
		t.Fatalf("updated connection %+v", got)
	}
	f.fails(vigia.KindConflict, "renaming onto a taken name", func(ctx ctxT) error {
		c2 := got
		c2.Name = "app"
		return s.UpdateConnection(ctx, c2)
	})
	intruder := got
	intruder.WorkspaceID, intruder.ID, intruder.Name = ws, foreign, "stolen"
	f.must(s.UpdateConnection(f.ctx, intruder))
	f.must(s.SetLineageIdentity(f.ctx, ws, foreign, "postgres://evil", "evil"))
	if fc, err := s.ConnectionByRef(f.ctx, other, foreign); err != nil || fc.Name != "warehouse" || fc.Lineage.Database != "" {
		t.Fatalf("another workspace's update reached the connection: %+v, %v", fc, err)
	}
}

func TestConnectionQueryLogAndEngineering(t *testing.T) {
	f := newFx(t)
	s := f.db.Connections()
	ws := f.workspace().WorkspaceID
	conn := f.connection(ws, "warehouse")
	e, err := s.Engineering(f.ctx, ws, conn)
	f.must(err)
	if e.OptIn || e.LastScan != nil || e.OpenIssues != 0 {
		t.Fatalf("engineering before a scan %+v", e)
	}
	scanID := vigia.NewID()
	f.must(f.db.Scans().CreateScan(f.ctx, scan.Scan{ID: scanID, WorkspaceID: ws, ConnectionID: conn, Status: "queued", Trigger: "manual", CreatedAt: at(1)}))

	q := func(stmt, op string, ms int, failed bool) source.QueryRecord {
		return source.QueryRecord{Statement: stmt, Operation: op, Duration: time.Duration(ms) * time.Millisecond, Rows: 10, Err: failed}
	}
	f.must(s.RecordQueries(f.ctx, ws, conn, &scanID, []source.QueryRecord{q("SELECT a", "scan", 2, false), q("SELECT a", "scan", 4, true), q("SELECT b", "scan", 1, false)}, at(2)))
	f.must(s.RecordQueries(f.ctx, ws, conn, nil, []source.QueryRecord{q("SELECT c", "discover", 3, false)}, at(3)))
	other := f.workspace().WorkspaceID

	all, err := s.QueryLog(f.ctx, ws, conn, connection.QueryLogFilter{Page: vigia.Page{Limit: 10}}, nil)
	f.must(err)
	stmt := func(e connection.QueryLogEntry) string { return e.Statement }
	if all.Total != 3 || !slices.Equal(names(all.Items, stmt), []string{"SELECT c", "SELECT a", "SELECT b"}) {
		t.Fatalf("query log: total %d, %v", all.Total, names(all.Items, stmt))
	}
	a := all.Items[1]
	if a.Executions != 2 || a.Failures != 1 || a.DurationMS != 6 || a.Rows != 20 || a.Endpoint != source.EndpointPrimary || a.ScanID == nil || *a.ScanID != scanID {
		t.Fatalf("grouped statement %+v", a)
	}
	page2, err := s.QueryLog(f.ctx, ws, conn, connection.QueryLogFilter{Page: vigia.Page{Limit: 2, Offset: 2}}, nil)
	f.must(err)
	if page2.Total != 3 || !slices.Equal(names(page2.Items, stmt), []string{"SELECT b"}) {
		t.Fatalf("second page %v", names(page2.Items, stmt))
	}
	byScan, err := s.QueryLog(f.ctx, ws, conn, connection.QueryLogFilter{ScanID: &scanID, Operation: vigia.Ptr("scan"), Page: vigia.Page{Limit: 10}}, nil)
	f.must(err)
	since, err := s.QueryLog(f.ctx, ws, conn, connection.QueryLogFilter{Page: vigia.Page{Limit: 10}}, vigia.Ptr(at(3)))
	f.must(err)
	if byScan.Total != 2 || since.Total != 1 || since.Items[0].Statement != "SELECT c" {
		t.Fatalf("filtered: by scan %d, since %v", byScan.Total, names(since.Items, stmt))
	}
	if foreign, err := s.QueryLog(f.ctx, other, conn, connection.QueryLogFilter{Page: vigia.Page{Limit: 10}}, nil); err != nil || foreign.Total != 0 {
		t.Fatalf("another workspace reads the log: %d, %v", foreign.Total, err)
	}

	e, err = s.Engineering(f.ctx, ws, conn)
	f.must(err)
	if e.LastScan == nil || e.LastScan.ID != scanID || e.LastScan.Status != "queued" {
		t.Fatalf("engineering after a scan %+v", e)
	}
	f.fails(vigia.KindNotFound, "another workspace's engineering view", func(ctx ctxT) error {
		_, err := s.Engineering(ctx, other, conn)
		return err
	})
}
