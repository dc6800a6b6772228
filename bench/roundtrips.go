package bench

import (
	"context"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
)

// RoundTrips is a pgx tracer (store.OpenTraced) that counts the statements and batches
// a process sends to the database: a bench's round trips per unit of work.
type RoundTrips struct{ n atomic.Int64 }

// N is the round trips counted so far.
func (r *RoundTrips) N() int64 { return r.n.Load() }

// TraceQueryStart counts a statement.
func (r *RoundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	r.n.Add(1)
	return ctx
}

// TraceQueryEnd does nothing.
func (r *RoundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TraceBatchStart counts a batch as one round trip.
func (r *RoundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	r.n.Add(1)
	return ctx
}

// TraceBatchQuery does nothing.
func (r *RoundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

// TraceBatchEnd does nothing.
func (r *RoundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}
