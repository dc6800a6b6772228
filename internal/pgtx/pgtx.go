// Package pgtx carries a pgx transaction in a context. The store opens transactions
// (store.DB.InTx) and the job queue enqueues inside the caller's one; both read it
// here, so neither adapter imports the other.
package pgtx

import (
	"context"

	"github.com/jackc/pgx/v5"
)

type key struct{}

// With returns ctx carrying tx.
func With(ctx context.Context, tx pgx.Tx) context.Context {
	return context.WithValue(ctx, key{}, tx)
}

// From returns the transaction riding in ctx, if any.
func From(ctx context.Context) (pgx.Tx, bool) {
	tx, ok := ctx.Value(key{}).(pgx.Tx)
	return tx, ok
}
