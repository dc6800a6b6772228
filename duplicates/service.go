// Package duplicates finds clusters of duplicate records of one entity (customers,
// suppliers, patients…) within and across the tables of a connection, and across the
// workspace's connections, after each scan (the after-scan consumer "duplicates"). Across
// connections only keyed hashes of the normalized keys and fields meet (see Encoder). The tables compared are those whose profiles
// show identifying columns (a NIF, an e-mail, a phone, by semantic type or by name, and a
// name) and that have a key. The source computes the blocking keys (the normalized NIF,
// e-mail, phone and name) in one bounded read per table; Vigia groups the rows sharing a
// key, compares the candidate pairs with edit and Jaro-Winkler similarities, and links
// the pairs that match into clusters. The values live in memory for that run only:
// clusters name datasets and row keys, with confidences, never other values.
// Confidence is 1 only for exact matches; confidence_band is exact, high or low, and
// reference_precision the precision of that band measured on the labelled reference set
// (see ReferenceSet). Every figure is deterministic: no language model.
package duplicates

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/connection"
	"github.com/vigia-data/vigia/rulesql"
	"github.com/vigia-data/vigia/source"
)

// Bounds of one run.
const (
	// MaxRowsPerDataset is how many rows of one table one run reads (by key order).
	MaxRowsPerDataset = 20000
	// MaxClusters bounds the clusters kept per connection (strongest first).
	MaxClusters = 5000
	// MaxKeyLen bounds a stored row key; longer keys are not kept.
	MaxKeyLen = 200
	// PageDefault is the default page of the list.
	PageDefault = 50
)

// Scopes of a cluster: within one connection (its run compares values), or across the
// workspace's connections (the workspace run compares hashes only, see Encoder).
const (
	ScopeConnection = "connection"
	ScopeWorkspace  = "workspace"
)

// StoredCluster is a cluster as it is kept and listed.
type StoredCluster struct {
	ID string
	// ConnectionID is the connection of a cluster of scope connection; nil across
	// connections.
	ConnectionID *string
	Scope        string
	// ConnectionIDs are the connections of the (listed) members' datasets.
	ConnectionIDs      []string
	Confidence         float64
	Band               string
	ReferencePrecision *float64
	MatchedOn          []string
	Members            []StoredMember
	ComputedAt         time.Time
}

// StoredMember is a cluster's record: dataset, row key and confidence.
type StoredMember struct {
	DatasetID    string
	ConnectionID string
	DatasetName  string
	RowKey       string
	Confidence   float64
}

// Filter narrows the list.
type Filter struct {
	DatasetID *string
	Band      *string
}

// Store keeps clusters.
type Store interface {
	// ConnectionTables lists the connection's tables (not views) still present, with
	// their columns and last profiles.
	ConnectionTables(ctx context.Context, workspaceID, connectionID string) ([]catalog.Dataset, error)
	// ReplaceClusters replaces the connection's clusters with cs.
	ReplaceClusters(ctx context.Context, workspaceID, connectionID string, cs []StoredCluster) error
	// TableConnections lists the workspace's connections that have live tables, by id.
	TableConnections(ctx context.Context, workspaceID string) ([]string, error)
	// ReplaceWorkspaceClusters replaces the workspace's cross-connection clusters with cs,
	// serialized per workspace.
	ReplaceWorkspaceClusters(ctx context.Context, workspaceID string, cs []StoredCluster) error
	// Clusters lists the clusters with two members or more among the datasets v can see
	// (only those members), strongest first.
	Clusters(ctx context.Context, v catalog.Viewer, f Filter, page vigia.Page) (vigia.List[StoredCluster], error)
}

// Connections opens a connection's source.
type Connections interface {
	Connection(ctx context.Context, ref string) (connection.Connection, error)
	Open(ctx context.Context, c connection.Connection, rec source.Recorder, label string) (source.Source, error)
}

// Datasets reads a dataset the caller can see.
type Datasets interface {
	Dataset(ctx context.Context, id string) (catalog.Dataset, error)
}

// Service computes and lists duplicate clusters.
type Service struct {
	store    Store
	datasets Datasets
	conns    Connections
	clock    vigia.Clock
	log      *slog.Logger
	// blackouts: no clustering read during a blackout window of the connection; nil:
	// no windows.
	blackouts Blackouts
}

// Blackouts answers whether a blackout window of a connection is in force.
type Blackouts interface {
	// Refuse returns KindConflict (blackout_active) when a window of the connection is
	// in force at at, else nil.
	Refuse(ctx context.Context, workspaceID, connectionID string, at time.Time) error
}

// WithBlackouts makes the after-scan clustering skip a scan that ends during a
// blackout window of its connection (the clusters of the last run stay).
func (s *Service) WithBlackouts(b Blackouts) *Service {
	s.blackouts = b
	return s
}

// NewService returns the duplicates service.
func NewService(store Store, datasets Datasets, conns Connections, clock vigia.Clock, log *slog.Logger) *Service {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{store: store, datasets: datasets, conns: conns, clock: clock, log: log}
}

// Plan is what one table contributes: its key columns and the column (or columns, for
// a name in two parts) of each field.
type Plan struct {
	Dataset catalog.Dataset
	Key     []string
	Fields  map[string][]string
}

var (
	nifNames   = regexp.MustCompile(`^(nif|nipc|nif_?cliente|nif_?fornecedor|contribuinte|n_?contribuinte|numero_?contribuinte|vat|vat_?(number|id)|tax_?id|nif_?nipc)$`)
	emailNames = regexp.MustCompile(`^(e_?mail|email_?\w*|\w*_e?mail|correio_?eletronico)$`)
	phoneNames = regexp.MustCompile(`^(telefone|telemovel|telemóvel|tel|phone|phone_?number|mobile|telephone|contacto|telefone_?\w*|\w*_phone)$`)
	fullNames  = regexp.MustCompile(`^(nome|name|nome_?completo|full_?name|razao_?social|designacao|customer_?name|nome_?cliente|nome_?fornecedor|supplier_?name|patient_?name|nome_?utente|nome_?doente)$`)
	firstNames = regexp.MustCompile(`^(first_?name|given_?name|nome_?proprio|primeiro_?nome)$`)
	lastNames  = regexp.MustCompile(`^(last_?name|surname|family_?name|apelido|apelidos)$`)
)

// PlanFor decides whether a table's records can be compared: a key (its primary key, or
// a single-column unique key), a name or at least two identifying fields, and one of
// NIF, e-mail and phone. ok is false otherwise.
func PlanFor(d catalog.Dataset) (Plan, bool) {
	if d.Kind != "" && d.Kind != source.TableKindTable {
		return Plan{}, false
	}
	p := Plan{Dataset: d, Fields: map[string][]string{}}
	for _, c := range d.Columns {
		if c.PrimaryKey {
			p.Key = append(p.Key, c.Name)
		}
	}
	if len(p.Key) == 0 {
		for _, c := range d.Columns {
			if c.Unique {
				p.Key = []string{c.Name}
				break
			}
		}
	}
	if len(p.Key) == 0 {
		return Plan{}, false
	}
	var first, last string
	for _, c := range d.Columns {
		if slices.Contains(p.Key, c.Name) && len(p.Key) == 1 && c.Class != source.ClassText {
			continue // a surrogate key is no identifier
		}
		name := strings.ToLower(c.Name)
		sem := ""
		if c.Profile != nil && c.Profile.Semantic != nil {
			sem = c.Profile.Semantic.Type
		}
		text := c.Class == source.ClassText
		var f string
		switch {
		case sem == "nif_pt" || (nifNames.MatchString(name) && (text || c.Class == source.ClassNumeric)):
			f = FieldNIF
		case sem == "email" || (emailNames.MatchString(name) && text):
			f = FieldEmail
		case sem == "phone" || sem == "phone_pt" || (phoneNames.MatchString(name) && (text || c.Class == source.ClassNumeric)):
			f = FieldPhone
		case text && sem == "" && fullNames.MatchString(name):
			f = FieldName
		case text && sem == "" && firstNames.MatchString(name):
			first = c.Name
		case text && sem == "" && lastNames.MatchString(name):
			last = c.Name
		}
		if f != "" && p.Fields[f] == nil {
			p.Fields[f] = []string{c.Name}
		}
	}
	if p.Fields[FieldName] == nil && first != "" && last != "" {
		p.Fields[FieldName] = []string{first, last}
	}
	ids := 0
	for _, f := range []string{FieldNIF, FieldEmail, FieldPhone} {
		if p.Fields[f] != nil {
			ids++
		}
	}
	if ids == 0 || len(p.Fields) < 2 {
		return Plan{}, false
	}
	return p, true
}

// Query is the read of one table: its key columns as text and each field normalized
// in the source (the blocking keys), ordered by key, at most MaxRowsPerDataset rows.
func (p Plan) Query(d rulesql.Dialect) string {
	q := func(c string) string { return rulesql.QuoteIdent(d, c) }
	asText := func(e string) string {
		if d == rulesql.MySQL {
			return "CAST(" + e + " AS CHAR)"
		}
		return "CAST(" + e + " AS TEXT)"
	}
	strip := func(e string, chars ...string) string {
		for _, c := range chars {
			e = "replace(" + e + ", '" + c + "', '')"
		}
		return e
	}
	var cols []string
	for _, k := range p.Key {
		cols = append(cols, asText(q(k)))
	}
	for _, f := range fieldOrder {
		cs := p.Fields[f]
		if cs == nil {
			cols = append(cols, "NULL")
			continue
		}
		v := "trim(" + asText(q(cs[0])) + ")"
		switch f {
		case FieldNIF:
			cols = append(cols, strip("upper("+v+")", " ", "-", ".", "PT"))
		case FieldEmail:
			cols = append(cols, "lower("+v+")")
		case FieldPhone:
			e := strip(v, " ", "-", "(", ")", ".", "+", "/")
			if d == rulesql.SQLite {
				cols = append(cols, "substr("+e+", -9)")
			} else {
				cols = append(cols, "right("+e+", 9)")
			}
		case FieldName:
			if len(cs) == 2 {
				other := "trim(" + asText(q(cs[1])) + ")"
				if d == rulesql.MySQL {
					v = "CONCAT_WS(' ', " + v + ", " + other + ")"
				} else {
					v = "coalesce(" + v + ", '') || ' ' || coalesce(" + other + ", '')"
				}
			}
			cols = append(cols, "lower("+v+")")
		}
	}
	table := rulesql.QuoteIdent(d, p.Dataset.Table)
	if d != rulesql.SQLite && p.Dataset.Schema != "" {
		table = rulesql.QuoteIdent(d, p.Dataset.Schema) + "." + table
	}
	order := make([]string, len(p.Key))
	for i, k := range p.Key {
		order[i] = q(k)
	}
	return fmt.Sprintf("SELECT %s FROM %s ORDER BY %s LIMIT %d", strings.Join(cols, ", "), table, strings.Join(order, ", "), MaxRowsPerDataset)
}

// records turns a table's rows into normalized records.
func (p Plan) records(ds int, rows [][]*string) []Record {
	nk := len(p.Key)
	out := make([]Record, 0, len(rows))
	for _, row := range rows {
		if len(row) != nk+4 {
			continue
		}
		key, ok := rowKey(row[:nk])
		if !ok {
			continue
		}
		s := func(i int) string {
			if row[nk+i] == nil {
				return ""
			}
			return *row[nk+i]
		}
		out = append(out, Record{Dataset: ds, Key: key, NIF: s(0), Email: s(1), Phone: s(2), Name: s(3)}.Normalize())
	}
	return out
}

// rowKey is a row's key: the value of a one-column key, or the JSON array of a
// composite key's values.
func rowKey(vals []*string) (string, bool) {
	ks := make([]string, len(vals))
	for i, v := range vals {
		if v == nil {
			return "", false
		}
		ks[i] = *v
	}
	k := ks[0]
	if len(ks) > 1 {
		b, _ := json.Marshal(ks)
		k = string(b)
	}
	return k, len(k) <= MaxKeyLen
}

// AfterScan is the after-scan consumer "duplicates": the connection's clusters,
// computed again from its tables.
func (s *Service) AfterScan(ctx context.Context, workspaceID, connectionID, scanID string) error {
	if s.blackouts != nil {
		err := s.blackouts.Refuse(ctx, workspaceID, connectionID, s.clock.Now())
		if vigia.IsKind(err, vigia.KindConflict) {
			s.log.InfoContext(ctx, "duplicate clustering skipped: blackout window", "scan_id", scanID)
			return nil
		}
		if err != nil {
			return err
		}
	}
	tables, err := s.store.ConnectionTables(ctx, workspaceID, connectionID)
	if err != nil {
		return err
	}
	var plans []Plan
	for _, d := range tables {
		if p, ok := PlanFor(d); ok {
			plans = append(plans, p)
		}
	}
	var clusters []StoredCluster
	if len(plans) > 0 {
		clusters, err = s.run(ctx, connectionID, plans)
		if err != nil {
			return err
		}
	}
	if err := s.store.ReplaceClusters(ctx, workspaceID, connectionID, clusters); err != nil {
		return err
	}
	// The scanned connection's tables were just read: not again for the cross clusters.
	return s.runAcross(ctx, workspaceID, connectionID, tables)
}

// RunAcross computes the workspace's cross-connection clusters again: every connection
// with comparable tables is read (one bounded read per table, MaxRowsPerDataset rows, at
// most MaxCrossRecords records in all), its records reduced to keyed hashes at once (see
// Encoder) and the values dropped before the next source is read; records of different
// connections are then matched on the hashes (MatchAcross). Fewer than two such
// connections leave no cross-connection cluster. A source that cannot be opened or a
// table that cannot be read contributes nothing (logged without values).
func (s *Service) RunAcross(ctx context.Context, workspaceID string) error {
	return s.runAcross(ctx, workspaceID, "", nil)
}

// runAcross is RunAcross with the tables of one connection (known, non-empty id)
// already read.
func (s *Service) runAcross(ctx context.Context, workspaceID, known string, knownTables []catalog.Dataset) error {
	conns, err := s.store.TableConnections(ctx, workspaceID)
	if err != nil {
		return err
	}
	type connPlans struct {
		id    string
		plans []Plan
	}
	var with []connPlans
	for _, id := range conns {
		tables := knownTables
		if known == "" || id != known {
			if tables, err = s.store.ConnectionTables(ctx, workspaceID, id); err != nil {
				return err
			}
		}
		var plans []Plan
		for _, d := range tables {
			if p, ok := PlanFor(d); ok {
				plans = append(plans, p)
			}
		}
		if len(plans) > 0 {
			with = append(with, connPlans{id: id, plans: plans})
		}
	}
	if len(with) < 2 {
		return s.store.ReplaceWorkspaceClusters(ctx, workspaceID, nil)
	}
	enc := NewEncoder()
	var recs []Encoded
	var plans []Plan
	var planConn []string
	full := false
	for ci, cp := range with {
		if full {
			break
		}
		_, err := s.readConnection(ctx, cp.id, cp.plans, func(p Plan, rows []Record) bool {
			plans, planConn = append(plans, p), append(planConn, cp.id)
			for _, r := range rows {
				if len(recs) == MaxCrossRecords {
					full = true
					return false
				}
				r.Dataset = len(plans) - 1
				recs = append(recs, enc.Encode(ci, r))
			}
			return true
		})
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			s.log.WarnContext(ctx, "duplicates: connection not read for the cross-connection run", "connection_id", cp.id, "error", err)
			continue
		}
	}
	if full {
		s.log.InfoContext(ctx, "duplicates: cross-connection records truncated", "workspace_id", workspaceID, "max_records", MaxCrossRecords)
	}
	found, truncated := MatchAcross(recs)
	if truncated {
		s.log.InfoContext(ctx, "duplicates: cross-connection candidate pairs truncated", "workspace_id", workspaceID, "max_pairs", MaxPairs)
	}
	ref := ReferencePrecisionAcross()
	now := s.clock.Now()
	out := make([]StoredCluster, 0, min(len(found), MaxClusters))
	for _, f := range found {
		if len(out) == MaxClusters {
			break
		}
		sc := StoredCluster{Scope: ScopeWorkspace, Confidence: f.Confidence, Band: f.Band, MatchedOn: f.MatchedOn, ComputedAt: now}
		if v, ok := ref.ByBand[f.Band]; ok {
			sc.ReferencePrecision = &v
		}
		h := sha256.New()
		h.Write([]byte("workspace\x00" + workspaceID))
		for _, m := range f.Members {
			d := plans[m.Dataset].Dataset
			sc.Members = append(sc.Members, StoredMember{DatasetID: d.ID, ConnectionID: planConn[m.Dataset], DatasetName: d.Name(), RowKey: m.Key, Confidence: m.Confidence})
			h.Write([]byte("\x00" + d.ID + "\x00" + m.Key))
		}
		sc.ID = clusterID(h.Sum(nil))
		out = append(out, sc)
	}
	return s.store.ReplaceWorkspaceClusters(ctx, workspaceID, out)
}

// readConnection opens a connection's source and reads each plan's records, handing
// them to take table by table (the records are not kept here); take returns false to
// stop. It returns how many tables were read.
func (s *Service) readConnection(ctx context.Context, connectionID string, plans []Plan, take func(Plan, []Record) bool) (int, error) {
	c, err := s.conns.Connection(ctx, connectionID)
	if err != nil {
		return 0, err
	}
	src, err := s.conns.Open(ctx, c, nil, "vigia duplicates")
	if err != nil {
		return 0, err
	}
	defer src.Close()
	dialect := rulesql.Dialect(src.Dialect())
	read := 0
	for _, p := range plans {
		rows, err := src.QueryRows(ctx, p.Query(dialect), MaxRowsPerDataset)
		if err != nil {
			if ctx.Err() != nil {
				return read, ctx.Err()
			}
			// A table this run cannot read (permissions, a column gone since the scan)
			// contributes nothing; the error names no value.
			s.log.WarnContext(ctx, "duplicates: table not read", "dataset_id", p.Dataset.ID, "error", err)
			continue
		}
		read++
		if !take(p, p.records(0, rows)) {
			break
		}
	}
	return read, nil
}

func (s *Service) run(ctx context.Context, connectionID string, plans []Plan) ([]StoredCluster, error) {
	var recs []Record
	var read []Plan
	if _, err := s.readConnection(ctx, connectionID, plans, func(p Plan, rows []Record) bool {
		read = append(read, p)
		for _, r := range rows {
			r.Dataset = len(read) - 1
			recs = append(recs, r)
		}
		return true
	}); err != nil {
		return nil, err
	}
	plans = read
	found, truncated := Match(recs)
	if truncated {
		s.log.InfoContext(ctx, "duplicates: candidate pairs truncated", "connection_id", connectionID, "max_pairs", MaxPairs)
	}
	ref := ReferencePrecision()
	now := s.clock.Now()
	out := make([]StoredCluster, 0, min(len(found), MaxClusters))
	for _, f := range found {
		if len(out) == MaxClusters {
			break
		}
		sc := StoredCluster{ConnectionID: &connectionID, Scope: ScopeConnection, ConnectionIDs: []string{connectionID}, Confidence: f.Confidence,
			Band: f.Band, MatchedOn: f.MatchedOn, ComputedAt: now}
		if v, ok := ref.ByBand[f.Band]; ok {
			sc.ReferencePrecision = &v
		}
		h := sha256.New()
		h.Write([]byte(connectionID))
		for _, m := range f.Members {
			d := plans[m.Dataset].Dataset
			sc.Members = append(sc.Members, StoredMember{DatasetID: d.ID, ConnectionID: connectionID, DatasetName: d.Name(), RowKey: m.Key, Confidence: m.Confidence})
			h.Write([]byte("\x00" + d.ID + "\x00" + m.Key))
		}
		sc.ID = clusterID(h.Sum(nil))
		out = append(out, sc)
	}
	return out, nil
}

// clusterID is a UUID-shaped id from the members' hash: the same members keep their id
// from one scan to the next.
func clusterID(sum []byte) string {
	b := sum[:16]
	b[6] = (b[6] & 0x0f) | 0x80
	b[8] = (b[8] & 0x3f) | 0x80
	x := hex.EncodeToString(b)
	return x[:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:]
}

// Bands lists the confidence bands.
func Bands() []string { return []string{BandExact, BandHigh, BandLow} }

// List lists the clusters among the datasets the caller can see, strongest first; a
// dataset filter the caller cannot see is not found.
func (s *Service) List(ctx context.Context, f Filter, page vigia.Page) (vigia.List[StoredCluster], error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return vigia.List[StoredCluster]{}, err
	}
	if f.DatasetID != nil {
		if _, err := s.datasets.Dataset(ctx, *f.DatasetID); err != nil {
			return vigia.List[StoredCluster]{}, err
		}
	}
	if f.Band != nil && !slices.Contains(Bands(), *f.Band) {
		return vigia.List[StoredCluster]{}, vigia.Invalid(vigia.Field("enum", nil, "band"))
	}
	return s.store.Clusters(ctx, catalog.ViewerOf(p), f, page)
}
