// Package app wires Vigia's services and transports over one database. cmd/vigia
// uses it to serve, and the end-to-end tests use it to run the real handler stack.
package app

import (
	"context"
	"log/slog"
	"net"
	"net/url"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/graph"
	"github.com/vigia-data/vigia/graph/explorer"
	"github.com/vigia-data/vigia/i18n"
	"github.com/vigia-data/vigia/identity"
	"github.com/vigia-data/vigia/rest"
	"github.com/vigia-data/vigia/store"
)

// Config holds what the wiring needs beyond the database.
type Config struct {
	Version        string
	BuildSHA       string
	RateLimitToken int
	RateLimitIP    int
	RateWindow     time.Duration
	NATSURL        string
}

// App is the wired service graph.
type App struct {
	Config   Config
	Log      *slog.Logger
	DB       *store.DB
	Messages *i18n.Catalog
	Identity *identity.Service
	Catalog  *catalog.Service
}

// New wires the services over db (already migrated).
func New(cfg Config, db *store.DB, log *slog.Logger) (*App, error) {
	if log == nil {
		log = slog.Default()
	}
	msgs, err := i18n.New()
	if err != nil {
		return nil, err
	}
	clock := vigia.SystemClock{}
	return &App{Config: cfg, Log: log, DB: db, Messages: msgs,
		Identity: identity.NewService(db.Identity(), db, clock),
		Catalog:  catalog.NewService(db.Catalog()),
	}, nil
}

// Server builds the HTTP transport: /api/v1, /graphql and its explorer, /metrics.
func (a *App) Server() *rest.Server {
	gql := graph.NewHandler(&graph.Resolver{Catalog: a.Catalog}, a.Messages, a.Log)
	return rest.New(rest.Config{Version: a.Config.Version, BuildSHA: a.Config.BuildSHA,
		RateLimitToken: a.Config.RateLimitToken, RateLimitIP: a.Config.RateLimitIP, RateWindow: a.Config.RateWindow},
		rest.Deps{Identity: a.Identity, Catalog: a.Catalog, Messages: a.Messages, Database: a.DB.Ping,
			Broker: BrokerCheck(a.Config.NATSURL), GraphQL: gql, Explorer: explorer.Handler("/graphql")}, a.Log)
}

// BrokerCheck reports the message broker's reachability; readiness only reports it.
func BrokerCheck(natsURL string) func(ctx context.Context) string {
	if natsURL == "" {
		return func(context.Context) string { return "not_configured" }
	}
	return func(ctx context.Context) string {
		u, err := url.Parse(natsURL)
		if err != nil || u.Host == "" {
			return "unavailable"
		}
		d := net.Dialer{Timeout: time.Second}
		c, err := d.DialContext(ctx, "tcp", u.Host)
		if err != nil {
			return "unavailable"
		}
		_ = c.Close()
		return "ok"
	}
}
