package main

import (
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/vigia-data/vigia/netguard"
	"github.com/vigia-data/vigia/notify"
	"github.com/vigia-data/vigia/rest"
	"github.com/vigia-data/vigia/source"
	"github.com/vigia-data/vigia/store"
)

// config is read from the environment; flags override some fields.
type config struct {
	DatabaseURL   string
	Addr          string
	SecretKey     string
	Neo4jURI      string
	Neo4jUser     string
	Neo4jPassword string
	Neo4jDatabase string
	// Neo4jQueryTimeout (NEO4J_QUERY_TIMEOUT_SECONDS) and Neo4jMaxNeighbourEdges
	// (NEO4J_MAX_NEIGHBOUR_EDGES) bound every Neo4j transaction and neighbour query;
	// 0 takes neo4jgraph's defaults.
	Neo4jQueryTimeout      time.Duration
	Neo4jMaxNeighbourEdges int
	NATSURL                string
	RateLimitToken         int
	RateLimitIP            int
	RateLimitProbe         int
	// TrustedProxies (VIGIA_TRUSTED_PROXIES, CIDRs) are the load balancers whose
	// ForwardedHeader (VIGIA_FORWARDED_HEADER) names the client address.
	TrustedProxies     []netip.Prefix
	ForwardedHeader    string
	DrainDelay         time.Duration
	LogLevel           slog.Level
	SQLiteRoot         string
	FilesRoot          string
	FilesLimits        source.FilesLimits
	SourcesDenyPrivate bool
	Workers            int
	MaxActiveScans     int
	JobStaleAfter      time.Duration
	// Webhooks: VIGIA_WEBHOOK_ALLOW_HOSTS (development and tests only),
	// VIGIA_WEBHOOK_LEGACY_PREFIX ("-" sends no legacy headers), VIGIA_WEBHOOK_WORKERS,
	// VIGIA_PUBLIC_URL (links in events).
	WebhookAllowHosts   []string
	WebhookLegacyPrefix string
	WebhookWorkers      int
	PublicURL           string
	// EgressIPs (VIGIA_EGRESS_IPS: comma-separated addresses or CIDRs) are what
	// GET /public/egress-ips publishes.
	EgressIPs []netip.Prefix
	// devKeyNotice is where a command says that the development key is in use (nil:
	// the JSON log warns, as serve does).
	devKeyNotice io.Writer
}

func loadConfig() (config, error) {
	c := config{
		DatabaseURL:   env("DATABASE_URL", store.DefaultURL),
		Addr:          env("VIGIA_ADDR", "127.0.0.1:8080"),
		SecretKey:     os.Getenv("VIGIA_SECRET_KEY"),
		Neo4jURI:      os.Getenv("NEO4J_URI"),
		Neo4jUser:     env("NEO4J_USER", "neo4j"),
		Neo4jPassword: os.Getenv("NEO4J_PASSWORD"),
		Neo4jDatabase: env("NEO4J_DATABASE", "neo4j"),
		NATSURL:       os.Getenv("VIGIA_NATS_URL"),
	}
	var err error
	timeout, err := envInt("NEO4J_QUERY_TIMEOUT_SECONDS", 0)
	if err != nil {
		return c, err
	}
	c.Neo4jQueryTimeout = time.Duration(timeout) * time.Second
	if c.Neo4jMaxNeighbourEdges, err = envInt("NEO4J_MAX_NEIGHBOUR_EDGES", 0); err != nil {
		return c, err
	}
	if c.RateLimitToken, err = envInt("VIGIA_RATE_LIMIT_TOKEN", 600); err != nil {
		return c, err
	}
	if c.RateLimitIP, err = envInt("VIGIA_RATE_LIMIT_IP", 1200); err != nil {
		return c, err
	}
	if c.RateLimitProbe, err = envInt("VIGIA_RATE_LIMIT_PROBE", 6000); err != nil {
		return c, err
	}
	if c.TrustedProxies, err = rest.ParseTrustedProxies(os.Getenv("VIGIA_TRUSTED_PROXIES")); err != nil {
		return c, fmt.Errorf("VIGIA_TRUSTED_PROXIES: want comma-separated CIDRs or addresses (10.0.0.0/8, 192.0.2.7): %w", err)
	}
	switch h := env("VIGIA_FORWARDED_HEADER", rest.HeaderXForwardedFor); {
	case strings.EqualFold(h, rest.HeaderXForwardedFor):
		c.ForwardedHeader = rest.HeaderXForwardedFor
	case strings.EqualFold(h, rest.HeaderForwarded):
		c.ForwardedHeader = rest.HeaderForwarded
	default:
		return c, fmt.Errorf("VIGIA_FORWARDED_HEADER must be X-Forwarded-For or Forwarded")
	}
	if c.Workers, err = envInt("VIGIA_WORKERS", 2); err != nil {
		return c, err
	}
	if c.MaxActiveScans, err = envInt("VIGIA_MAX_ACTIVE_SCANS", 20); err != nil {
		return c, err
	}
	stale, err := envInt("VIGIA_JOB_STALE_SECONDS", 30)
	if err != nil {
		return c, err
	}
	c.JobStaleAfter = time.Duration(stale) * time.Second
	c.SourcesDenyPrivate = os.Getenv("VIGIA_SOURCES_DENY_PRIVATE") == "true"
	if c.EgressIPs, err = rest.ParseEgressIPs(os.Getenv("VIGIA_EGRESS_IPS")); err != nil {
		return c, fmt.Errorf("VIGIA_EGRESS_IPS: want comma-separated addresses or CIDRs (203.0.113.7, 198.51.100.0/28): %w", err)
	}
	c.WebhookAllowHosts = netguard.ParseAllowHosts(os.Getenv("VIGIA_WEBHOOK_ALLOW_HOSTS"))
	c.WebhookLegacyPrefix = os.Getenv("VIGIA_WEBHOOK_LEGACY_PREFIX")
	if c.WebhookWorkers, err = envInt("VIGIA_WEBHOOK_WORKERS", notify.DefaultWorkers); err != nil {
		return c, err
	}
	c.PublicURL = env("VIGIA_PUBLIC_URL", "http://"+c.Addr)
	c.SQLiteRoot = os.Getenv("VIGIA_SQLITE_ROOT")
	if c.SQLiteRoot == "" {
		c.SQLiteRoot = defaultDataDir()
	}
	c.FilesRoot = env("VIGIA_FILES_ROOT", filepath.Join(defaultDataDir(), "files"))
	c.FilesLimits.MemoryLimit = os.Getenv("VIGIA_DUCKDB_MEMORY_LIMIT")
	if c.FilesLimits.MemoryLimit != "" && !filesMemoryRE.MatchString(c.FilesLimits.MemoryLimit) {
		return c, fmt.Errorf("VIGIA_DUCKDB_MEMORY_LIMIT: want a size such as 512MB or 2GB")
	}
	if c.FilesLimits.Threads, err = envInt("VIGIA_DUCKDB_THREADS", 2); err != nil {
		return c, err
	}
	c.FilesLimits.TempDirectory = env("VIGIA_DUCKDB_TEMP_DIR", filepath.Join(defaultDataDir(), "duckdb-tmp"))
	drain, err := envInt("VIGIA_DRAIN_SECONDS", 2)
	if err != nil {
		return c, err
	}
	c.DrainDelay = time.Duration(drain) * time.Second
	if err := c.LogLevel.UnmarshalText([]byte(env("VIGIA_LOG_LEVEL", "info"))); err != nil {
		return c, fmt.Errorf("VIGIA_LOG_LEVEL: %w", err)
	}
	return c, nil
}

// String describes the configuration with every secret masked.
func (c config) String() string {
	return fmt.Sprintf("database=%s addr=%s secret_key=%s neo4j=%s trusted_proxies=%d", store.DatabaseName(c.DatabaseURL), c.Addr,
		mask(c.SecretKey), mask(c.Neo4jURI), len(c.TrustedProxies))
}

// defaultDataDir is where SQLite sources (and the demo packs) live by default.
// filesMemoryRE is what DuckDB's memory_limit accepts here (source/connect/duckdb.Limits).
var filesMemoryRE = regexp.MustCompile(`^[0-9]+(\.[0-9]+)? ?(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)$`)

func defaultDataDir() string {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "vigia")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share", "vigia")
	}
	return filepath.Join(os.TempDir(), "vigia")
}

func mask(s string) string {
	if s == "" {
		return "unset"
	}
	return "set"
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func envInt(name string, def int) (int, error) {
	v := os.Getenv(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s must be a positive integer", name)
	}
	return n, nil
}
