// Package connection manages the connections to customers' databases: credentials
// sealed at rest and never shown, data country, scan time zone and schedule, and the log
// of every statement Vigia sent to a source.
package connection

import (
	"context"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/secret"
	"github.com/vigia-data/vigia/source"
)

// Connection is a source database. Its DSN is never part of it.
type Connection struct {
	ID               string
	WorkspaceID      string
	Name             string
	Kind             string
	DataCountry      *string
	ScanTimezone     string
	Schedule         Schedule
	EngineeringOptIn bool
	// StatementTimeout is how long one statement may run on the source, in seconds
	// (every profile query carries it); nil: the installation's default.
	StatementTimeout *int
	// Lineage is the connection's identity in OpenLineage events.
	Lineage   LineageIdentity
	CreatedAt time.Time
	// Read-side extras.
	WorkspaceCountry string
	DatasetsCount    int
	LastScanAt       *time.Time
	LastScanStatus   *string
}

// LineageIdentity is how OpenLineage events name the connection's server: the namespace
// and database derived from the DSN by the naming spec (postgres://host:port and its
// database, mysql://host:port ...; nothing secret), and aliases: other namespaces the
// pipelines use for the same server (a proxy, a DNS alias), declared by an admin.
type LineageIdentity struct {
	Namespace string // "" until derived (before the first scan of an older connection)
	Database  string
	Aliases   []string
}

// DSNForms names the connection-string forms the connectors read, for messages that
// must say what is accepted without repeating what was sent.
const DSNForms = "PostgreSQL postgres://user:password@host:5432/database?sslmode=require or key=value pairs; " +
	"MySQL/MariaDB mysql://user:password@host:3306/database?params or user:password@tcp(host:3306)/database?params; " +
	"SQLite a file path inside the SQLite root"

// Bounds of the per-connection settings.
const (
	MaxStatementTimeout = 86400 // seconds
	MaxLineageAliases   = 20
	maxAliasLength      = 200
)

// Schedule is a daily scan at Hour:Minute in the connection's time zone.
type Schedule struct {
	Enabled bool
	Hour    *int
	Minute  int
}

// EffectiveCountry is the connection's data country, else the workspace's.
func (c Connection) EffectiveCountry() string {
	if c.DataCountry != nil {
		return *c.DataCountry
	}
	if c.WorkspaceCountry != "" {
		return c.WorkspaceCountry
	}
	return "PT"
}

// AddInput is a new connection.
type AddInput struct {
	Name         string
	Kind         string
	DSN          string
	DataCountry  *string
	ScanTimezone *string
	// StatementTimeout in seconds (1-86400); nil: the default.
	StatementTimeout *int
	// LineageAliases are extra OpenLineage namespaces of the server.
	LineageAliases []string
	// Test opens the source and pings it before saving.
	Test bool
}

// ScheduleUpdate changes a schedule; nil fields keep their value.
type ScheduleUpdate struct {
	Timezone *string
	Hour     *int
	Minute   *int
	Enabled  *bool
}

// Update changes a connection; nil fields keep their value. ClearDataCountry makes the
// connection inherit the workspace's country again.
type Update struct {
	Name             *string
	DataCountry      *string
	ClearDataCountry bool
	ScanTimezone     *string
	// StatementTimeout sets the timeout in seconds; ClearStatementTimeout goes back to
	// the default.
	StatementTimeout      *int
	ClearStatementTimeout bool
	// LineageAliases replaces the aliases when set.
	LineageAliases *[]string
}

// QueryLogPageDefault is the page size of the query log when limit is not given
// (contract: 100).
const QueryLogPageDefault = 100

// QueryLogFilter selects query-log entries.
type QueryLogFilter struct {
	ScanID    *string
	Operation *string
	Days      *int
	Page      vigia.Page
}

// QueryLogEntry is one normalized statement with how often and how long it ran.
type QueryLogEntry struct {
	Statement   string
	Operation   string
	ScanID      *string
	Endpoint    string
	Executions  int
	DurationMS  float64
	Rows        int64
	Failures    int
	FirstSeenAt time.Time
	LastSeenAt  time.Time
}

// Engineering is the connection's engineering summary.
type Engineering struct {
	OptIn      bool
	LastScan   *ScanSummary
	OpenIssues int
}

// ScanSummary is the last scan of a connection.
type ScanSummary struct {
	ID         string
	Status     string
	CreatedAt  time.Time
	FinishedAt *time.Time
}

// Store is the persistence connections need.
type Store interface {
	// ManagedByConfig tells the connections configuration as code manages.
	vigia.ManagedLookup
	// SetSealedDSN replaces a connection's sealed DSN.
	SetSealedDSN(ctx context.Context, workspaceID, id string, sealed []byte) error
	CreateConnection(ctx context.Context, c Connection, sealedDSN []byte) error
	Connections(ctx context.Context, workspaceID string) ([]Connection, error)
	// ConnectionByRef finds a connection by id or name; KindNotFound if none.
	ConnectionByRef(ctx context.Context, workspaceID, ref string) (Connection, error)
	SealedDSN(ctx context.Context, workspaceID, id string) ([]byte, error)
	UpdateSchedule(ctx context.Context, c Connection) error
	UpdateConnection(ctx context.Context, c Connection) error
	// SetLineageIdentity stores the namespace and database derived from the DSN.
	SetLineageIdentity(ctx context.Context, workspaceID, id, namespace, database string) error
	QueryLog(ctx context.Context, workspaceID, connectionID string, f QueryLogFilter, since *time.Time) (vigia.List[QueryLogEntry], error)
	RecordQueries(ctx context.Context, workspaceID, connectionID string, scanID *string, qs []source.QueryRecord, at time.Time) error
	Engineering(ctx context.Context, workspaceID, connectionID string) (Engineering, error)
}

// Sources opens customers' databases; the wiring passes the connectors with the guarded
// dialer, so this package imports no driver.
type Sources interface {
	// Open connects with o's recorder, label and statement timeout (0: the
	// installation's default); the wiring adds the dialer and the SQLite root.
	Open(ctx context.Context, kind source.Kind, dsn string, o source.Options) (source.Source, error)
	// ValidateDSN parses a DSN without connecting; its error never contains the DSN.
	ValidateDSN(kind source.Kind, dsn string) error
	// ServerIdentity is the OpenLineage namespace and database a DSN names (no
	// credential); ok false when it names none (a socket).
	ServerIdentity(kind source.Kind, dsn string) (namespace, database string, ok bool)
	// Drivers are the optional connectors this binary links (source.DuckDB when built
	// with the duckdb tag), with their driver and engine versions.
	Drivers() map[source.Kind]string
}

// DemoPack is an industry seed pack a newcomer can scan.
type DemoPack struct {
	Key         string
	Name        string
	Description string
	Industry    string
	Tables      []string
	Defects     []string
}

// ConnectorType is a kind of source with its driver's state.
type ConnectorType struct {
	Kind       string
	Name       string
	Driver     string
	State      string // available, or not_built_in (an optional connector this binary was built without)
	DSNExample string
	Dialect    string
}

// Preset is a public example source to start from.
type Preset struct {
	Key         string
	Name        string
	Kind        string
	Description string
	DSNTemplate string
}

// Service manages connections.
type Service struct {
	store Store
	box   *secret.Box
	open  Sources
	clock vigia.Clock
	packs []DemoPack
	// parquetDemoDir is where `vigia demo --format parquet` writes each pack's Parquet
	// files (one directory per pack under the files root); "" offers no such preset.
	parquetDemoDir string
}

// OfferParquetDemos makes Presets list, when this build has the duckdb connector, each
// demo pack as Parquet files in dir/<pack> (see ParquetDemoDir).
func (s *Service) OfferParquetDemos(dir string) { s.parquetDemoDir = dir }

// ParquetDemoDir is the directory of a pack's Parquet files under dir.
func ParquetDemoDir(dir, pack string) string { return filepath.Join(dir, pack) }

// NewService returns the connection service; packs are the demo packs offered.
func NewService(store Store, box *secret.Box, open Sources, clock vigia.Clock, packs []DemoPack) *Service {
	return &Service{store: store, box: box, open: open, clock: clock, packs: packs}
}

// DemoPacks lists the industry demo packs.
func (s *Service) DemoPacks() []DemoPack { return s.packs }

// Types lists the connectors this build ships, with their driver.
func (s *Service) Types() []ConnectorType {
	out := []ConnectorType{
		{Kind: "postgres", Name: "PostgreSQL", Driver: "pgx v5", State: "available", Dialect: "postgres",
			DSNExample: "postgres://user:password@host:5432/database?sslmode=require"},
		{Kind: "mysql", Name: "MySQL / MariaDB", Driver: "go-sql-driver/mysql", State: "available", Dialect: "mysql",
			DSNExample: "user:password@tcp(host:3306)/database"},
		{Kind: "sqlite", Name: "SQLite", Driver: "modernc.org/sqlite (pure Go)", State: "available", Dialect: "sqlite",
			DSNExample: "/var/lib/vigia/sqlite/file.db"},
	}
	duck := ConnectorType{Kind: string(source.DuckDB), Name: "DuckDB, Parquet, CSV, JSON files", Driver: "duckdb-go (not in this build)",
		State: StateNotBuiltIn, Dialect: string(source.DuckDB), DSNExample: "/var/lib/vigia/files/sales"}
	if v, ok := s.open.Drivers()[source.DuckDB]; ok {
		duck.Driver, duck.State = v, StateAvailable
	}
	return append(out, duck)
}

// Driver states of ConnectorType.
const (
	StateAvailable  = "available"
	StateNotBuiltIn = "not_built_in"
)

// Presets lists example sources: each demo pack as a SQLite file Vigia builds itself and,
// when this build has the duckdb connector and a files root, as a directory of Parquet
// files (one per table) that `vigia demo --pack KEY --format parquet` writes under the
// files root: its DSN template is that directory, a duckdb connection's DSN as is.
func (s *Service) Presets() []Preset {
	out := make([]Preset, 0, 2*len(s.packs))
	for _, p := range s.packs {
		out = append(out, Preset{Key: "demo-" + p.Key, Name: p.Name, Kind: "sqlite", Description: p.Description,
			DSNTemplate: "vigia demo --pack " + p.Key})
	}
	if _, ok := s.open.Drivers()[source.DuckDB]; !ok || s.parquetDemoDir == "" {
		return out
	}
	for _, p := range s.packs {
		out = append(out, Preset{Key: ParquetPresetKey(p.Key), Name: p.Name + " (Parquet)", Kind: string(source.DuckDB),
			Description: p.Description + " As Parquet files, one per table: `vigia demo --pack " + p.Key + " --format parquet` writes them here and scans them.",
			DSNTemplate: ParquetDemoDir(s.parquetDemoDir, p.Key)})
	}
	return out
}

// ParquetPresetKey is the preset key (and demo connection name) of a pack as Parquet files.
func ParquetPresetKey(pack string) string { return "demo-" + pack + "-parquet" }

var countryRE = regexp.MustCompile(`^[A-Z]{2}$`)

// Add creates a connection; admins only (a session, never an API token). The DSN is
// validated without being echoed, sealed with VIGIA_SECRET_KEY and never returned.
// Returns KindInvalid for bad input or a source that cannot be reached when Test is
// set, KindConflict for a taken name.
func (s *Service) Add(ctx context.Context, in AddInput) (Connection, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleAdmin)
	if err != nil {
		return Connection{}, err
	}
	in.Name = strings.TrimSpace(in.Name)
	var fields []vigia.FieldError
	if in.Name == "" || len([]rune(in.Name)) > 100 {
		fields = append(fields, vigia.Field("string_too_long", map[string]any{"min_length": 1, "max_length": 100}, "name"))
	}
	kindOK := in.Kind == string(source.DuckDB)
	for _, k := range source.Kinds() {
		kindOK = kindOK || string(k) == in.Kind
	}
	if !kindOK || source.IsReason(s.open.ValidateDSN(source.Kind(in.Kind), ""), source.ReasonUnsupported) {
		// An optional connector this binary was built without (see Types) is no kind here.
		fields = append(fields, vigia.Field("enum", nil, "kind"))
	} else if in.DSN == "" {
		fields = append(fields, vigia.Field("missing", nil, "dsn"))
	} else if err := s.open.ValidateDSN(source.Kind(in.Kind), in.DSN); err != nil {
		// The message lists the forms each kind accepts; the DSN itself is never echoed.
		fields = append(fields, vigia.Field("dsn_invalid", nil, "dsn"))
	}
	fields = append(fields, validStatementTimeout(in.StatementTimeout, "statement_timeout_s")...)
	aliases, afields := validAliases(in.LineageAliases, "lineage_aliases")
	fields = append(fields, afields...)
	if in.DataCountry != nil {
		c := strings.ToUpper(*in.DataCountry)
		in.DataCountry = &c
		if !countryRE.MatchString(c) {
			fields = append(fields, vigia.Field("country", nil, "data_country"))
		}
	}
	tz := "UTC"
	if in.ScanTimezone != nil {
		tz = *in.ScanTimezone
		if _, err := time.LoadLocation(tz); err != nil || tz == "" || tz == "Local" {
			fields = append(fields, vigia.Field("timezone", nil, "scan_timezone"))
		}
	}
	if len(fields) > 0 {
		return Connection{}, vigia.Invalid(fields...)
	}
	if in.Test {
		if err := s.ping(ctx, source.Kind(in.Kind), in.DSN); err != nil {
			return Connection{}, err
		}
	}
	c := Connection{ID: vigia.NewID(), WorkspaceID: p.WorkspaceID, Name: in.Name, Kind: in.Kind,
		DataCountry: in.DataCountry, ScanTimezone: tz, StatementTimeout: in.StatementTimeout, CreatedAt: s.clock.Now(),
		Lineage: LineageIdentity{Aliases: aliases}}
	if ns, db, ok := s.open.ServerIdentity(source.Kind(in.Kind), in.DSN); ok {
		c.Lineage.Namespace, c.Lineage.Database = ns, db
	}
	sealed, err := s.box.Seal([]byte(in.DSN), []byte(c.ID))
	if err != nil {
		return Connection{}, vigia.Internal(err)
	}
	if err := s.store.CreateConnection(ctx, c, sealed); err != nil {
		return Connection{}, err
	}
	return s.store.ConnectionByRef(ctx, p.WorkspaceID, c.ID)
}

func (s *Service) ping(ctx context.Context, kind source.Kind, dsn string) error {
	src, err := s.open.Open(ctx, kind, dsn, source.Options{})
	if err == nil {
		defer src.Close()
		err = src.Ping(ctx)
	}
	if err != nil {
		reason := "connection_failed"
		if se, ok := err.(*source.Error); ok && se.Reason != "" {
			reason = se.Reason
		}
		return vigia.Invalid(vigia.FieldError{Type: "connection_failed", Loc: []string{"dsn"}, Ctx: map[string]any{"reason": reason}})
	}
	return nil
}

// Connections lists the workspace's connections.
func (s *Service) Connections(ctx context.Context) ([]Connection, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return nil, err
	}
	return s.store.Connections(ctx, p.WorkspaceID)
}

// Connection returns one connection by id (or by name, for the CLI). Returns
// KindNotFound when it does not exist or belongs to another workspace.
func (s *Service) Connection(ctx context.Context, ref string) (Connection, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return Connection{}, err
	}
	return s.store.ConnectionByRef(ctx, p.WorkspaceID, ref)
}

// Open opens the connection's source with its sealed DSN, under the connection's
// statement timeout; rec receives every statement and label names the sessions on the
// source (see source.Options.Label). For the scan worker: the DSN lives only in this
// call. It also keeps the connection's OpenLineage identity in step with the DSN
// (connections made before it existed get it here).
func (s *Service) Open(ctx context.Context, c Connection, rec source.Recorder, label string) (source.Source, error) {
	sealed, err := s.store.SealedDSN(ctx, c.WorkspaceID, c.ID)
	if err != nil {
		return nil, err
	}
	dsn, err := s.box.Open(sealed, []byte(c.ID))
	if err != nil {
		return nil, vigia.Internal(err)
	}
	kind := source.Kind(c.Kind)
	if ns, db, ok := s.open.ServerIdentity(kind, string(dsn)); ok && (ns != c.Lineage.Namespace || db != c.Lineage.Database) {
		if err := s.store.SetLineageIdentity(ctx, c.WorkspaceID, c.ID, ns, db); err != nil {
			return nil, err
		}
	}
	o := source.Options{Recorder: rec, Label: label}
	if c.StatementTimeout != nil {
		o.StatementTimeout = time.Duration(*c.StatementTimeout) * time.Second
	}
	return s.open.Open(ctx, kind, string(dsn), o)
}

func validStatementTimeout(v *int, loc ...string) []vigia.FieldError {
	if v != nil && (*v < 1 || *v > MaxStatementTimeout) {
		return []vigia.FieldError{vigia.Field("less_than_equal", map[string]any{"ge": 1, "le": MaxStatementTimeout}, loc...)}
	}
	return nil
}

// validAliases checks OpenLineage namespaces declared for a server: at most
// MaxLineageAliases, each scheme://host[:port] of at most 200 characters (no user,
// password, path or query); they are kept canonical (lower-case host, default port).
func validAliases(in []string, loc ...string) ([]string, []vigia.FieldError) {
	if len(in) > MaxLineageAliases {
		return nil, []vigia.FieldError{vigia.Field("too_long", map[string]any{"max_length": MaxLineageAliases}, loc...)}
	}
	out := make([]string, 0, len(in))
	for i, a := range in {
		ns, ok := vigia.CanonicalNamespace(a)
		if !ok || len(a) > maxAliasLength {
			return nil, []vigia.FieldError{vigia.Field("namespace_invalid", nil, append(loc, strconv.Itoa(i))...)}
		}
		if !slices.Contains(out, ns) {
			out = append(out, ns)
		}
	}
	return out, nil
}

// Update changes a connection's name, data country, scan time zone, statement timeout or
// OpenLineage aliases; admins only.
// The next scan reads semantic types with the new country. Returns KindInvalid for bad
// values, KindNotFound for another workspace's connection, KindConflict for a taken name,
// or managed_by_config when configuration as code manages the connection.
func (s *Service) Update(ctx context.Context, id string, u Update) (Connection, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleAdmin)
	if err != nil {
		return Connection{}, err
	}
	c, err := s.store.ConnectionByRef(ctx, p.WorkspaceID, id)
	if err != nil {
		return Connection{}, err
	}
	if err := vigia.RefuseManaged(ctx, s.store, p.WorkspaceID, vigia.ManagedConnection, c.ID); err != nil {
		return Connection{}, err
	}
	var fields []vigia.FieldError
	if u.Name != nil {
		n := strings.TrimSpace(*u.Name)
		if n == "" || len([]rune(n)) > 100 {
			fields = append(fields, vigia.Field("string_too_long", map[string]any{"min_length": 1, "max_length": 100}, "name"))
		}
		c.Name = n
	}
	switch {
	case u.ClearDataCountry:
		c.DataCountry = nil
	case u.DataCountry != nil:
		cc := strings.ToUpper(*u.DataCountry)
		if !countryRE.MatchString(cc) {
			fields = append(fields, vigia.Field("country", nil, "data_country"))
		}
		c.DataCountry = &cc
	}
	if u.ScanTimezone != nil {
		if _, err := time.LoadLocation(*u.ScanTimezone); err != nil || *u.ScanTimezone == "" || *u.ScanTimezone == "Local" {
			fields = append(fields, vigia.Field("timezone", nil, "scan_timezone"))
		}
		c.ScanTimezone = *u.ScanTimezone
	}
	switch {
	case u.ClearStatementTimeout:
		c.StatementTimeout = nil
	case u.StatementTimeout != nil:
		fields = append(fields, validStatementTimeout(u.StatementTimeout, "statement_timeout_s")...)
		c.StatementTimeout = u.StatementTimeout
	}
	if u.LineageAliases != nil {
		aliases, afields := validAliases(*u.LineageAliases, "lineage_aliases")
		fields = append(fields, afields...)
		c.Lineage.Aliases = aliases
	}
	if len(fields) > 0 {
		return Connection{}, vigia.Invalid(fields...)
	}
	if err := s.store.UpdateConnection(ctx, c); err != nil {
		return Connection{}, err
	}
	return s.store.ConnectionByRef(ctx, p.WorkspaceID, c.ID)
}

// UpdateSchedule changes the scan schedule; admins only. Hour and minute are read in the
// connection's time zone; a new timezone replaces it, without it the zone stays.
// KindConflict (managed_by_config) when configuration as code manages the connection.
func (s *Service) UpdateSchedule(ctx context.Context, id string, u ScheduleUpdate) (Connection, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleAdmin)
	if err != nil {
		return Connection{}, err
	}
	c, err := s.store.ConnectionByRef(ctx, p.WorkspaceID, id)
	if err != nil {
		return Connection{}, err
	}
	if err := vigia.RefuseManaged(ctx, s.store, p.WorkspaceID, vigia.ManagedConnection, c.ID); err != nil {
		return Connection{}, err
	}
	var fields []vigia.FieldError
	if u.Timezone != nil {
		if _, err := time.LoadLocation(*u.Timezone); err != nil || *u.Timezone == "" || *u.Timezone == "Local" {
			fields = append(fields, vigia.Field("timezone", nil, "timezone"))
		} else {
			c.ScanTimezone = *u.Timezone
		}
	}
	if u.Hour != nil {
		if *u.Hour < 0 || *u.Hour > 23 {
			fields = append(fields, vigia.Field("less_than_equal", map[string]any{"ge": 0, "le": 23}, "hour"))
		}
		c.Schedule.Hour = u.Hour
	}
	if u.Minute != nil {
		if *u.Minute < 0 || *u.Minute > 59 {
			fields = append(fields, vigia.Field("less_than_equal", map[string]any{"ge": 0, "le": 59}, "minute"))
		}
		c.Schedule.Minute = *u.Minute
	}
	if u.Enabled != nil {
		c.Schedule.Enabled = *u.Enabled
	}
	if c.Schedule.Enabled && c.Schedule.Hour == nil {
		fields = append(fields, vigia.Field("missing", nil, "hour"))
	}
	if len(fields) > 0 {
		return Connection{}, vigia.Invalid(fields...)
	}
	if err := s.store.UpdateSchedule(ctx, c); err != nil {
		return Connection{}, err
	}
	return s.store.ConnectionByRef(ctx, p.WorkspaceID, c.ID)
}

// QueryLog lists the normalized statements sent to the connection's source, grouped by
// statement, operation, scan and endpoint. Returns KindNotFound for another workspace's
// connection.
func (s *Service) QueryLog(ctx context.Context, id string, f QueryLogFilter) (vigia.List[QueryLogEntry], error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return vigia.List[QueryLogEntry]{}, err
	}
	c, err := s.store.ConnectionByRef(ctx, p.WorkspaceID, id)
	if err != nil {
		return vigia.List[QueryLogEntry]{}, err
	}
	var since *time.Time
	if f.Days != nil {
		t := s.clock.Now().Add(-time.Duration(*f.Days) * 24 * time.Hour)
		since = &t
	}
	if f.ScanID != nil && !vigia.ValidID(*f.ScanID) {
		return vigia.List[QueryLogEntry]{Items: []QueryLogEntry{}}, nil
	}
	return s.store.QueryLog(ctx, p.WorkspaceID, c.ID, f, since)
}

// Engineering returns the connection's opt-in, last scan and open issues.
func (s *Service) Engineering(ctx context.Context, id string) (Engineering, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return Engineering{}, err
	}
	c, err := s.store.ConnectionByRef(ctx, p.WorkspaceID, id)
	if err != nil {
		return Engineering{}, err
	}
	return s.store.Engineering(ctx, p.WorkspaceID, c.ID)
}

// Recorder returns a query-log recorder for one operation on a connection: statements are
// buffered and written by Flush (one insert per batch, outside the caller's transaction).
func (s *Service) Recorder(c Connection, scanID *string) *Recorder {
	return &Recorder{store: s.store, conn: c, scanID: scanID, clock: s.clock}
}
