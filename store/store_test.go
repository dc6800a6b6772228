package store_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/identity"
	"github.com/vigia-data/vigia/internal/pgtx"
	"github.com/vigia-data/vigia/store"
	"github.com/vigia-data/vigia/store/storetest"
)

func TestInTx(t *testing.T) {
	t.Parallel()
	db := storetest.MustDB(t)
	ctx := context.Background()
	ids := db.Identity()
	newWS := func() identity.Workspace {
		id := vigia.NewID()
		return identity.Workspace{ID: id, Name: "intx-" + id, DataCountry: "PT", Timezone: "UTC", CreatedAt: t0}
	}
	// This test commits: it removes what it wrote.
	var written []string
	t.Cleanup(func() {
		_, _ = db.Pool().Exec(context.Background(), `DELETE FROM workspaces WHERE id = ANY($1::uuid[])`, written)
	})
	exists := func(id string) bool {
		_, err := ids.WorkspaceByRef(ctx, id)
		return err == nil
	}

	committed, rolledBack, panicked := newWS(), newWS(), newWS()
	written = append(written, committed.ID, rolledBack.ID, panicked.ID)
	f := func(ctx context.Context) error {
		if _, ok := pgtx.From(ctx); !ok {
			t.Error("no transaction in fn's context")
		}
		// A nested call joins the outer transaction.
		return db.InTx(ctx, func(ctx context.Context) error { return ids.CreateWorkspace(ctx, committed) })
	}
	if err := db.InTx(ctx, f); err != nil || !exists(committed.ID) {
		t.Fatalf("committed: %v, exists %v", err, exists(committed.ID))
	}
	boom := errors.New("boom")
	err := db.InTx(ctx, func(ctx context.Context) error {
		if err := ids.CreateWorkspace(ctx, rolledBack); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) || exists(rolledBack.ID) {
		t.Fatalf("rolled back: %v, exists %v", err, exists(rolledBack.ID))
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the panic did not reach the caller")
			}
		}()
		_ = db.InTx(ctx, func(ctx context.Context) error {
			_ = ids.CreateWorkspace(ctx, panicked)
			panic("boom")
		})
	}()
	if exists(panicked.ID) {
		t.Fatal("a panicking transaction committed")
	}
	// A failed commit (a unique name taken by the committed workspace) is a conflict.
	dup := newWS()
	dup.Name = committed.Name
	if err := db.InTx(ctx, func(ctx context.Context) error { return ids.CreateWorkspace(ctx, dup) }); !vigia.IsKind(err, vigia.KindConflict) {
		t.Fatalf("a taken name in a transaction: %v", err)
	}
}

func TestOpenPingAndNames(t *testing.T) {
	t.Parallel()
	u := storetest.MustURL(t)
	ctx := context.Background()

	// Open creates a missing database, and the pool answers.
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	name := "vigia_test_open_" + strings.ReplaceAll(vigia.NewUUID()[:8], "-", "")
	pu.Path = "/" + name
	t.Cleanup(func() {
		admin, err := pgx.Connect(context.Background(), u)
		if err == nil {
			_, _ = admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
			_ = admin.Close(context.Background())
		}
	})
	db, err := store.Open(ctx, pu.String())
	if err != nil {
		t.Fatalf("open a missing database: %v", err)
	}
	if err := db.Ping(ctx); err != nil {
		t.Fatalf("ping: %v", err)
	}
	db.Close()
	if got := store.DatabaseName(pu.String()); got != name {
		t.Fatalf("database name %q", got)
	}
	if got := store.DatabaseName("::not a url"); got != "" {
		t.Fatalf("database name of a bad URL %q", got)
	}

	// Errors never carry the URL or its password.
	for _, dsn := range []string{
		"postgres://vigia:s3cr3t-pw@127.0.0.1:1/x?sslmode=disable&connect_timeout=2", // nothing listens
		"postgres://nobody:s3cr3t-pw@" + pu.Host + "/x?sslmode=disable",              // refused by the server
		"postgres://vigia:s3cr3t-pw@[::1",                                            // not a URL
	} {
		_, err := store.Open(ctx, dsn)
		if err == nil {
			t.Fatalf("open %q succeeded", dsn)
		}
		if msg := err.Error(); strings.Contains(msg, "s3cr3t-pw") || strings.Contains(msg, "127.0.0.1:1") {
			t.Fatalf("an open error shows the URL: %q", msg)
		}
	}
}
