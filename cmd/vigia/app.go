package main

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/bench"
	"github.com/vigia-data/vigia/lineage/neo4jgraph"
	"github.com/vigia-data/vigia/store"
)

// openCLIApp opens the app for a command other than serve: a development key is said
// once, in words, on stderr (never on stdout, which scripts read).
func openCLIApp(ctx context.Context, cfg config, stderr io.Writer) (*app.App, error) {
	cfg.devKeyNotice = stderr
	return openApp(ctx, cfg, stderr)
}

const devKeyNotice = "vigia: warning: VIGIA_SECRET_KEY is not set, so stored credentials are encrypted with the " +
	"development key in your config directory (vigia/dev-secret-key). Set VIGIA_SECRET_KEY in production.\n"

// openApp connects to the database, applies migrations and wires the services.
func openApp(ctx context.Context, cfg config, logOut io.Writer) (*app.App, error) {
	return openAppCounted(ctx, cfg, logOut, nil)
}

// openAppCounted is openApp whose database round trips are counted by trips (nil:
// not counted): a bench's figure that does not depend on the machine's load.
func openAppCounted(ctx context.Context, cfg config, logOut io.Writer, trips *bench.RoundTrips) (*app.App, error) {
	log := slog.New(slog.NewJSONHandler(logOut, &slog.HandlerOptions{Level: cfg.LogLevel}))
	var db *store.DB
	var err error
	if trips != nil {
		db, err = store.OpenTraced(ctx, cfg.DatabaseURL, trips)
	} else {
		db, err = store.Open(ctx, cfg.DatabaseURL)
	}
	if err != nil {
		return nil, err
	}
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	a, err := app.New(app.Config{Version: version, BuildSHA: sha(), RateLimitToken: cfg.RateLimitToken,
		RateLimitIP: cfg.RateLimitIP, RateLimitProbe: cfg.RateLimitProbe, TrustedProxies: cfg.TrustedProxies,
		ForwardedHeader: cfg.ForwardedHeader, NATSURL: cfg.NATSURL, SecretKey: cfg.SecretKey, SQLiteRoot: cfg.SQLiteRoot,
		FilesRoot: cfg.FilesRoot, FilesLimits: cfg.FilesLimits,
		SourcesDenyPrivate: cfg.SourcesDenyPrivate, Workers: cfg.Workers, MaxActiveScans: cfg.MaxActiveScans,
		JobStaleAfter: cfg.JobStaleAfter, JobHeartbeat: max(time.Second, cfg.JobStaleAfter/5),
		Neo4j: neo4jgraph.Config{URI: cfg.Neo4jURI, User: cfg.Neo4jUser, Password: cfg.Neo4jPassword, Database: cfg.Neo4jDatabase,
			QueryTimeout: cfg.Neo4jQueryTimeout, MaxNeighbourEdges: cfg.Neo4jMaxNeighbourEdges},
		WebhookAllowHosts: cfg.WebhookAllowHosts, WebhookLegacyPrefix: cfg.WebhookLegacyPrefix, WebhookWorkers: cfg.WebhookWorkers,
		PublicURL: cfg.PublicURL, EgressIPs: cfg.EgressIPs, DevelopmentKeyNotice: notice(cfg.devKeyNotice)}, db, log)
	if err != nil {
		db.Close()
		return nil, err
	}
	return a, nil
}

// sha is the 7-hex build sha; "0000000" marks a build without one.
func sha() string {
	if len(buildSHA) >= 7 {
		return buildSHA[:7]
	}
	return "0000000"
}

func notice(w io.Writer) func() {
	if w == nil {
		return nil
	}
	return func() { _, _ = io.WriteString(w, devKeyNotice) }
}
