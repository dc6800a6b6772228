package app

import (
	"context"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/scan"
)

// AsAdmin returns ctx acting for a workspace as its administrator: for the command line,
// which runs on the server's host with the server's credentials.
func AsAdmin(ctx context.Context, workspaceID, actor string) context.Context {
	return vigia.WithPrincipal(ctx, vigia.Principal{WorkspaceID: workspaceID, UserID: actor, Role: vigia.RoleAdmin})
}

// WaitScan works scan jobs in this process until the scan finishes (a running server
// may work it instead), reporting its progress as it changes. ctx must carry a
// principal of the scan's workspace. A succeeded scan is returned once its after-scan
// steps (lineage, incidents, domain verdict events: the consumers of its
// scan.succeeded event) are done too — WaitScan works their job as well — so what
// derives from the scan can be read when it returns; it is the one way tests and the
// command line wait for derived state.
func (a *App) WaitScan(ctx context.Context, scanID string, progress func(scan.Scan)) (scan.Scan, error) {
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		for wctx.Err() == nil {
			ran, err := a.Jobs.RunOne(wctx, scan.JobKind, scan.AfterJobKind)
			if err != nil && wctx.Err() == nil {
				a.Log.Warn("local scan worker", "cause", err.Error())
			}
			if !ran {
				select {
				case <-wctx.Done():
				case <-time.After(200 * time.Millisecond):
				}
			}
		}
	}()
	var last scan.Scan
	for {
		sc, err := a.Scans.Scan(ctx, scanID)
		if err != nil {
			return sc, err
		}
		if progress != nil && (sc.Status != last.Status || sc.DatasetsDone != last.DatasetsDone ||
			sc.DatasetsTotal != last.DatasetsTotal || !equalPtr(sc.CurrentDataset, last.CurrentDataset)) {
			progress(sc)
		}
		last = sc
		if sc.Finished() {
			done, err := a.Scans.AfterScanDone(ctx, scanID)
			if err != nil || done {
				return sc, err
			}
		}
		select {
		case <-ctx.Done():
			return sc, ctx.Err()
		case <-time.After(150 * time.Millisecond):
		}
	}
}

func equalPtr(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
