package rest

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/vigia-data/vigia/connection"
)

// ConnectionOut is a connection; credentials are never part of it.
type ConnectionOut struct {
	ID             string      `json:"id"`
	Name           string      `json:"name"`
	Kind           string      `json:"kind" enum:"postgres,mysql,sqlite,duckdb"`
	DataCountry    *string     `json:"data_country" doc:"ISO 3166-1 alpha-2; null = inherited from the workspace"`
	Country        CountryOut  `json:"country"`
	ScanTimezone   string      `json:"scan_timezone" doc:"IANA zone the schedule is read in"`
	Schedule       ScheduleOut `json:"schedule"`
	DatasetsCount  int         `json:"datasets_count"`
	LastScanAt     *time.Time  `json:"last_scan_at"`
	LastScanStatus *string     `json:"last_scan_status"`
	// StatementTimeoutS bounds every statement sent to the source.
	StatementTimeoutS *int             `json:"statement_timeout_s" doc:"Seconds one statement may run on the source (profile queries carry it as statement_timeout / max_statement_time); null: the installation's default"`
	OpenLineage       OpenLineageIDOut `json:"openlineage" doc:"How OpenLineage events name this connection's server (see docs/lineage.md)"`
	CreatedAt         time.Time        `json:"created_at"`
}

// OpenLineageIDOut is a connection's identity in OpenLineage events: the namespace and
// database its DSN names (no credential), and the extra namespaces declared for it.
type OpenLineageIDOut struct {
	Namespace *string  `json:"namespace" doc:"postgres://host:port or mysql://host:port (the naming spec's form) or sqlite:file:///path; null until known (the next scan derives it)"`
	Database  *string  `json:"database" doc:"The database dataset names start with (postgres: {database}.{schema}.{table}; mysql: {database}.{table}, where {database} is the schema); null when the DSN names none"`
	Aliases   []string `json:"aliases" doc:"Other namespaces of the same server (a proxy, a DNS alias) that pipelines use"`
}

// ScheduleOut is a daily scan at hour:minute in the connection's zone.
type ScheduleOut struct {
	Enabled  bool   `json:"enabled"`
	Hour     *int   `json:"hour"`
	ScanHour *int   `json:"scan_hour" doc:"Same as hour"`
	Minute   int    `json:"minute"`
	Timezone string `json:"timezone"`
}

// ConnectionIn creates a connection (admin session only).
type ConnectionIn struct {
	Name         string  `json:"name" maxLength:"100"`
	Kind         string  `json:"kind" enum:"postgres,mysql,sqlite,duckdb"`
	DSN          string  `json:"dsn" doc:"Connection string; stored encrypted, never returned"`
	DataCountry  *string `json:"data_country,omitempty"`
	ScanTimezone *string `json:"scan_timezone,omitempty"`
	// StatementTimeoutS and LineageAliases: see ConnectionOut.
	StatementTimeoutS *int     `json:"statement_timeout_s,omitempty" minimum:"1" maximum:"86400" doc:"Seconds one statement may run on the source; default the installation's"`
	LineageAliases    []string `json:"lineage_aliases,omitempty" maxItems:"20" doc:"Other OpenLineage namespaces of the server, e.g. postgres://pgbouncer.internal:6432"`
	Test              *bool    `json:"test,omitempty" doc:"Connect before saving (default true)"`
}

// ConnectionPatchIn changes a connection; absent fields keep their value, a null
// data_country inherits the workspace's again.
type ConnectionPatchIn struct {
	Name         *string         `json:"name,omitempty" maxLength:"100"`
	DataCountry  json.RawMessage `json:"data_country,omitempty" doc:"ISO 3166-1 alpha-2, or null to inherit"`
	ScanTimezone *string         `json:"scan_timezone,omitempty"`
	// StatementTimeoutS: seconds, or null for the default.
	StatementTimeoutS json.RawMessage `json:"statement_timeout_s,omitempty" doc:"Seconds (1-86400), or null for the installation's default"`
	LineageAliases    *[]string       `json:"lineage_aliases,omitempty" maxItems:"20" doc:"Replaces the OpenLineage aliases"`
}

// ScheduleIn changes a schedule; absent fields keep their value.
type ScheduleIn struct {
	Timezone *string `json:"timezone,omitempty" doc:"IANA name; without it the connection's zone stays"`
	Hour     *int    `json:"hour,omitempty" minimum:"0" maximum:"23"`
	ScanHour *int    `json:"scan_hour,omitempty" minimum:"0" maximum:"23"`
	Minute   *int    `json:"minute,omitempty" minimum:"0" maximum:"59"`
	Enabled  *bool   `json:"enabled,omitempty"`
}

// SourceQueryLogOut is a normalized statement sent to a source, without values.
type SourceQueryLogOut struct {
	Statement   string    `json:"statement"`
	Operation   string    `json:"operation" enum:"scan,discover,test"`
	ScanID      *string   `json:"scan_id"`
	Endpoint    string    `json:"endpoint" enum:"primary,replica"`
	Executions  int       `json:"executions"`
	DurationMS  float64   `json:"duration_ms" doc:"Total over the executions"`
	Rows        int64     `json:"rows"`
	Failures    int       `json:"failures"`
	FirstSeenAt time.Time `json:"first_seen_at"`
	LastSeenAt  time.Time `json:"last_seen_at"`
}

// EngineeringOut is a connection's engineering summary.
type EngineeringOut struct {
	OptIn      bool            `json:"opt_in"`
	LastScan   *ScanSummaryOut `json:"last_scan"`
	OpenIssues int             `json:"open_issues"`
}

// ScanSummaryOut is a connection's last scan.
type ScanSummaryOut struct {
	ID         string     `json:"id"`
	Status     string     `json:"status"`
	CreatedAt  time.Time  `json:"created_at"`
	FinishedAt *time.Time `json:"finished_at"`
}

// DemoPackOut is an industry seed pack.
type DemoPackOut struct {
	Key         string   `json:"key" enum:"erp,ecommerce,payments,health"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Industry    string   `json:"industry"`
	Tables      []string `json:"tables"`
	Defects     []string `json:"defects" doc:"The planted defects a scan finds"`
	Command     string   `json:"command" doc:"How to build and scan it"`
}

// ConnectorTypeOut is a registry type with its driver's state.
type ConnectorTypeOut struct {
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	Driver     string `json:"driver"`
	State      string `json:"state" enum:"available,not_built_in"`
	Dialect    string `json:"dialect"`
	DSNExample string `json:"dsn_example"`
}

// PresetOut is a public example source.
type PresetOut struct {
	Key         string `json:"key"`
	Name        string `json:"name"`
	Kind        string `json:"kind"`
	Description string `json:"description"`
	DSNTemplate string `json:"dsn_template"`
}

var connectionIDParam = param{Name: "connection_id", In: "path", Type: "string", Required: true, MaxLen: 64}

var queryLogParams = []param{
	{Name: "scan_id", In: "query", Type: "string", MaxLen: 64},
	{Name: "operation", In: "query", Type: "string", Enum: []string{"scan", "discover", "test"}},
	{Name: "days", In: "query", Type: "integer", Min: intp(1), Max: intp(366)},
}

func (s *Server) connectionRoutes() {
	s.register(operation{ID: "listConnections", Method: http.MethodGet, Path: "/api/v1/connections", Tag: "connections",
		Summary: "Connections of the workspace (never credentials)", Response: []ConnectionOut{}}, s.handleConnectionList)
	s.register(operation{ID: "createConnection", Method: http.MethodPost, Path: "/api/v1/connections", Tag: "connections",
		Summary: "Add a connection (admin session only)", Body: ConnectionIn{}, Response: ConnectionOut{}, Status: http.StatusCreated,
		Desc: "The DSN is validated without being echoed, encrypted with VIGIA_SECRET_KEY and never returned."}, s.handleConnectionCreate)
	s.register(operation{ID: "connectionPresets", Method: http.MethodGet, Path: "/api/v1/connections/presets", Tag: "connections",
		Summary: "Public example sources", Response: []PresetOut{}}, s.handleConnectionPresets)
	s.register(operation{ID: "connectionTypes", Method: http.MethodGet, Path: "/api/v1/connections/types", Tag: "connections",
		Summary: "Connector types with driver state", Response: []ConnectorTypeOut{}}, s.handleConnectionTypes)
	s.register(operation{ID: "demoPacks", Method: http.MethodGet, Path: "/api/v1/connections/demo/packs", Tag: "connections",
		Summary: "Industry demo packs (ERP, e-commerce, payments, health)", Response: []DemoPackOut{}}, s.handleDemoPacks)
	s.register(operation{ID: "getConnection", Method: http.MethodGet, Path: "/api/v1/connections/{connection_id}", Tag: "connections",
		Summary: "One connection", Params: []param{connectionIDParam}, Response: ConnectionOut{}}, s.handleConnectionGet)
	s.register(operation{ID: "updateConnection", Method: http.MethodPatch, Path: "/api/v1/connections/{connection_id}", Tag: "connections",
		Summary: "Change name, data country, scan time zone, statement timeout or OpenLineage aliases (admin session)", Params: []param{connectionIDParam},
		Body: ConnectionPatchIn{}, Response: ConnectionOut{}}, s.handleConnectionPatch)
	s.register(operation{ID: "connectionEngineering", Method: http.MethodGet, Path: "/api/v1/connections/{connection_id}/engineering",
		Tag: "connections", Summary: "Opt-in, last scan, open issues", Params: []param{connectionIDParam}, Response: EngineeringOut{}},
		s.handleConnectionEngineering)
	s.register(operation{ID: "connectionQueryLog", Method: http.MethodGet, Path: "/api/v1/connections/{connection_id}/query-log",
		Tag: "connections", Summary: "Normalized statements sent to the source, without values", List: true, ListDefault: connection.QueryLogPageDefault,
		Params: append([]param{connectionIDParam}, queryLogParams...), Response: []SourceQueryLogOut{}}, s.handleQueryLog)
	s.register(operation{ID: "connectionQueryLogExport", Method: http.MethodGet, Path: "/api/v1/connections/{connection_id}/query-log/export",
		Tag: "connections", Summary: "Query log as a CSV or JSON file", ContentType: "text/csv", Response: []SourceQueryLogOut{},
		Params: append([]param{connectionIDParam, {Name: "format", In: "query", Type: "string", Enum: []string{"csv", "json"}, Default: "csv"}},
			queryLogParams...)}, s.handleQueryLogExport)
	s.register(operation{ID: "updateConnectionSchedule", Method: http.MethodPatch, Path: "/api/v1/connections/{connection_id}/schedule",
		Tag: "connections", Summary: "Daily scan schedule, read in the connection's time zone (admin session)",
		Params: []param{connectionIDParam}, Body: ScheduleIn{}, Response: ScheduleOut{}}, s.handleScheduleUpdate)
}

func toConnectionOut(c connection.Connection) ConnectionOut {
	out := ConnectionOut{ID: c.ID, Name: c.Name, Kind: c.Kind, DataCountry: c.DataCountry, ScanTimezone: c.ScanTimezone,
		Schedule: toScheduleOut(c), DatasetsCount: c.DatasetsCount, LastScanAt: c.LastScanAt, LastScanStatus: c.LastScanStatus,
		CreatedAt: c.CreatedAt, Country: CountryOut{Effective: c.EffectiveCountry(), Source: "workspace"}, StatementTimeoutS: c.StatementTimeout,
		OpenLineage: OpenLineageIDOut{Namespace: optStr(c.Lineage.Namespace), Database: optStr(c.Lineage.Database), Aliases: c.Lineage.Aliases}}
	if out.OpenLineage.Aliases == nil {
		out.OpenLineage.Aliases = []string{}
	}
	if c.DataCountry != nil {
		out.Country.Source = "connection"
	}
	return out
}

func toScheduleOut(c connection.Connection) ScheduleOut {
	return ScheduleOut{Enabled: c.Schedule.Enabled, Hour: c.Schedule.Hour, ScanHour: c.Schedule.Hour, Minute: c.Schedule.Minute, Timezone: c.ScanTimezone}
}

func (s *Server) handleConnectionList(w http.ResponseWriter, r *http.Request, _ *input) {
	cs, err := s.deps.Connections.Connections(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]ConnectionOut, 0, len(cs))
	for _, c := range cs {
		out = append(out, toConnectionOut(c))
	}
	list(w, len(out), out)
}

func (s *Server) handleConnectionCreate(w http.ResponseWriter, r *http.Request, in *input) {
	var body ConnectionIn
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	test := body.Test == nil || *body.Test
	c, err := s.deps.Connections.Add(r.Context(), connection.AddInput{Name: body.Name, Kind: body.Kind, DSN: body.DSN,
		DataCountry: body.DataCountry, ScanTimezone: body.ScanTimezone, StatementTimeout: body.StatementTimeoutS,
		LineageAliases: body.LineageAliases, Test: test})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, toConnectionOut(c))
}

func (s *Server) handleConnectionPresets(w http.ResponseWriter, r *http.Request, _ *input) {
	out := []PresetOut{}
	for _, p := range s.deps.Connections.Presets() {
		out = append(out, PresetOut{Key: p.Key, Name: p.Name, Kind: p.Kind, Description: p.Description, DSNTemplate: p.DSNTemplate})
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleConnectionTypes(w http.ResponseWriter, r *http.Request, _ *input) {
	out := []ConnectorTypeOut{}
	for _, t := range s.deps.Connections.Types() {
		out = append(out, ConnectorTypeOut{Kind: t.Kind, Name: t.Name, Driver: t.Driver, State: t.State, Dialect: t.Dialect, DSNExample: t.DSNExample})
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleDemoPacks(w http.ResponseWriter, r *http.Request, _ *input) {
	out := []DemoPackOut{}
	for _, p := range s.deps.Connections.DemoPacks() {
		out = append(out, DemoPackOut{Key: p.Key, Name: p.Name, Description: p.Description, Industry: p.Industry,
			Tables: p.Tables, Defects: p.Defects, Command: "vigia demo --pack " + p.Key})
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleConnectionGet(w http.ResponseWriter, r *http.Request, in *input) {
	id := in.Path("connection_id")
	if !validID(id) {
		s.writeError(w, r, notFound())
		return
	}
	c, err := s.deps.Connections.Connection(r.Context(), id)
	s.reply(w, r, err, func() any { return toConnectionOut(c) })
}

func (s *Server) handleConnectionPatch(w http.ResponseWriter, r *http.Request, in *input) {
	id := in.Path("connection_id")
	if !validID(id) {
		s.writeError(w, r, notFound())
		return
	}
	var body ConnectionPatchIn
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	u := connection.Update{Name: body.Name, ScanTimezone: body.ScanTimezone}
	switch raw := strings.TrimSpace(string(body.DataCountry)); {
	case raw == "":
	case raw == "null":
		u.ClearDataCountry = true
	default:
		var cc string
		if err := json.Unmarshal(body.DataCountry, &cc); err != nil {
			s.writeError(w, r, invalid("country", "data_country"))
			return
		}
		u.DataCountry = &cc
	}
	switch raw := strings.TrimSpace(string(body.StatementTimeoutS)); {
	case raw == "":
	case raw == "null":
		u.ClearStatementTimeout = true
	default:
		var n int
		if err := json.Unmarshal(body.StatementTimeoutS, &n); err != nil {
			s.writeError(w, r, invalid("int_parsing", "statement_timeout_s"))
			return
		}
		u.StatementTimeout = &n
	}
	u.LineageAliases = body.LineageAliases
	c, err := s.deps.Connections.Update(r.Context(), id, u)
	s.reply(w, r, err, func() any { return toConnectionOut(c) })
}

func (s *Server) handleConnectionEngineering(w http.ResponseWriter, r *http.Request, in *input) {
	id := in.Path("connection_id")
	if !validID(id) {
		s.writeError(w, r, notFound())
		return
	}
	e, err := s.deps.Connections.Engineering(r.Context(), id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := EngineeringOut{OptIn: e.OptIn, OpenIssues: e.OpenIssues}
	if e.LastScan != nil {
		out.LastScan = &ScanSummaryOut{ID: e.LastScan.ID, Status: e.LastScan.Status, CreatedAt: e.LastScan.CreatedAt, FinishedAt: e.LastScan.FinishedAt}
	}
	writeJSON(w, http.StatusOK, out)
}

func queryLogFilter(in *input) connection.QueryLogFilter {
	f := connection.QueryLogFilter{ScanID: in.String("scan_id"), Operation: in.String("operation"), Page: in.Page()}
	if _, ok := in.values["days"]; ok {
		d := in.Int("days")
		f.Days = &d
	}
	return f
}

func (s *Server) handleQueryLog(w http.ResponseWriter, r *http.Request, in *input) {
	id := in.Path("connection_id")
	if !validID(id) {
		s.writeError(w, r, notFound())
		return
	}
	res, err := s.deps.Connections.QueryLog(r.Context(), id, queryLogFilter(in))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	list(w, res.Total, toQueryLogOut(res.Items))
}

func toQueryLogOut(es []connection.QueryLogEntry) []SourceQueryLogOut {
	out := make([]SourceQueryLogOut, 0, len(es))
	for _, e := range es {
		out = append(out, SourceQueryLogOut{Statement: e.Statement, Operation: e.Operation, ScanID: e.ScanID, Endpoint: e.Endpoint,
			Executions: e.Executions, DurationMS: e.DurationMS, Rows: e.Rows, Failures: e.Failures, FirstSeenAt: e.FirstSeenAt, LastSeenAt: e.LastSeenAt})
	}
	return out
}

// exportLimit bounds a query-log export.
const exportLimit = 10000

func (s *Server) handleQueryLogExport(w http.ResponseWriter, r *http.Request, in *input) {
	id := in.Path("connection_id")
	if !validID(id) {
		s.writeError(w, r, notFound())
		return
	}
	f := queryLogFilter(in)
	f.Page.Limit, f.Page.Offset = exportLimit, 0
	res, err := s.deps.Connections.QueryLog(r.Context(), id, f)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	rows := toQueryLogOut(res.Items)
	format := "csv"
	if v := in.String("format"); v != nil {
		format = *v
	}
	name := "query-log-" + id + "." + format
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	if format == "json" {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		b, _ := json.Marshal(rows)
		_, _ = w.Write(b)
		return
	}
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	_ = cw.Write([]string{"statement", "operation", "scan_id", "endpoint", "executions", "duration_ms", "rows", "failures", "first_seen_at", "last_seen_at"})
	for _, e := range rows {
		scanID := ""
		if e.ScanID != nil {
			scanID = *e.ScanID
		}
		_ = cw.Write([]string{csvCell(e.Statement), e.Operation, scanID, e.Endpoint, strconv.Itoa(e.Executions),
			strconv.FormatFloat(e.DurationMS, 'f', 3, 64), strconv.FormatInt(e.Rows, 10), strconv.Itoa(e.Failures),
			e.FirstSeenAt.UTC().Format(time.RFC3339), e.LastSeenAt.UTC().Format(time.RFC3339)})
	}
	cw.Flush()
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	_, _ = w.Write(buf.Bytes())
}

// csvCell neutralizes formula injection: a cell that a spreadsheet would evaluate gets
// a leading apostrophe.
func csvCell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

func (s *Server) handleScheduleUpdate(w http.ResponseWriter, r *http.Request, in *input) {
	id := in.Path("connection_id")
	if !validID(id) {
		s.writeError(w, r, notFound())
		return
	}
	var body ScheduleIn
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	hour := body.Hour
	if hour == nil {
		hour = body.ScanHour
	}
	c, err := s.deps.Connections.UpdateSchedule(r.Context(), id, connection.ScheduleUpdate{Timezone: body.Timezone, Hour: hour,
		Minute: body.Minute, Enabled: body.Enabled})
	s.reply(w, r, err, func() any { return toScheduleOut(c) })
}
