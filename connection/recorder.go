package connection

import (
	"context"
	"sync"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/source"
)

// Recorder buffers the statements a source sends and writes them to the query log.
type Recorder struct {
	store  Store
	conn   Connection
	scanID *string
	clock  vigia.Clock

	mu  sync.Mutex
	buf []source.QueryRecord
}

// Record keeps one statement (already normalized by the source package).
func (r *Recorder) Record(_ context.Context, q source.QueryRecord) {
	r.mu.Lock()
	r.buf = append(r.buf, q)
	r.mu.Unlock()
}

// Flush writes the buffered statements.
func (r *Recorder) Flush(ctx context.Context) error {
	r.mu.Lock()
	qs := r.buf
	r.buf = nil
	r.mu.Unlock()
	if len(qs) == 0 {
		return nil
	}
	return r.store.RecordQueries(ctx, r.conn.WorkspaceID, r.conn.ID, r.scanID, qs, r.clock.Now())
}
