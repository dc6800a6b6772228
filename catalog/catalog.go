// Package catalog holds the datasets Vigia watches, the connections they come from and
// their columns, with the visibility rules every read goes through.
package catalog

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/vigia-data/vigia"
)

// Dataset kinds (contract part 2).
const (
	KindTable            = "table"
	KindView             = "view"
	KindMaterializedView = "materialized_view"
	KindExternal         = "external"
	KindUnknown          = "unknown"
)

// Dataset is a table (or view) of a connected source.
type Dataset struct {
	ID             string
	WorkspaceID    string
	ConnectionID   string
	ConnectionName string
	Schema         string
	Table          string
	Kind           string
	Depth          *string // own profiling depth; nil = default
	DataCountry    *string // own data country; nil = inherited
	// ConnectionCountry and WorkspaceCountry complete the country resolution order.
	ConnectionCountry *string
	WorkspaceCountry  string
	LatestScore       *float64
	QueriesPerDay     *float64 // measured from the source's scan counters; nil while unknown
	Reach             int      // datasets downstream at any distance (kept by the lineage projector)
	LastScanAt        *time.Time
	CreatedAt         time.Time
	UpdatedAt         time.Time
	Columns           []Column // filled by Dataset (detail), not by lists
	// ScoreHistory (newest first) and Issues (open and acknowledged) fill the detail.
	ScoreHistory []ScorePoint
	Issues       []IssueSummary
	// Grants are the caller's team grants on the dataset's domains (filled by the store
	// for the viewer who reads); they raise the access role.
	Grants []DomainGrant
	// Trust holds the trust blockers and warnings; filled by trust.Service.DatasetDetail only.
	Trust *TrustBrief
	// RowCount is the last profile's row count (nil before one); RowCountExact is false
	// when that profile read the first rows only (a cost-guarded view), so RowCount
	// counts the rows read, a lower bound. Filled on the detail.
	RowCount      *int64
	RowCountExact *bool
	// LastFailure says why the last scan that tried could not profile the dataset, when
	// that happened after its last profile (or before any). Filled on the detail.
	LastFailure *ProfileFailure
	// ForeignKeys are the dataset's declared foreign keys. Filled on the detail.
	ForeignKeys []ForeignKey
}

// ProfileFailure is a scan's failure to profile a dataset, with its stable code
// (not_populated, permission_denied, timeout, query_failed ...).
type ProfileFailure struct {
	ScanID string
	Code   string
	At     time.Time
}

// DomainGrant is one of the caller's team grants on a domain the dataset belongs to.
type DomainGrant struct {
	DomainID   string
	Restricted bool
	Role       string // member or manager
}

// TrustBrief is the trust summary of the dataset detail: blockers and warnings.
type TrustBrief struct {
	Score    float64
	Grade    string
	Blockers []TrustItem
	Warnings []TrustItem
}

// TrustItem is a trust blocker or warning: key, pt-PT message and params.
type TrustItem struct {
	Key     string
	Message string
	Params  map[string]any
}

// ScorePoint is one scan's score with its five dimensions.
type ScorePoint struct {
	ScanID     string
	Score      *float64
	Dimensions map[string]*float64
	CreatedAt  time.Time
}

// IssueSummary is an issue as a dataset detail lists it.
type IssueSummary struct {
	ID          string
	DatasetID   string
	DatasetName string
	Type        string
	Subtype     *string
	Severity    string
	Status      string
	// Title is rendered in the reader's language from TitleKey and TitleParams when the
	// catalogue knows the key; else the text stored at creation.
	Title            string
	TitleKey         string
	TitleParams      map[string]any
	ResolutionReason *string
	SLABreachedAt    *time.Time
	AssigneeTeamID   *string
	AssigneeTeamName *string
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

// Name is the dataset's name as the contract shows it: schema.table.
func (d Dataset) Name() string {
	if d.Schema == "" {
		return d.Table
	}
	return d.Schema + "." + d.Table
}

// Country is the data country scans use and where it comes from.
type Country struct {
	Effective string
	Source    string // dataset, connection or workspace
}

// Country resolves the effective data country: dataset, then connection, then workspace.
func (d Dataset) Country() Country {
	switch {
	case d.DataCountry != nil:
		return Country{Effective: *d.DataCountry, Source: "dataset"}
	case d.ConnectionCountry != nil:
		return Country{Effective: *d.ConnectionCountry, Source: "connection"}
	case d.WorkspaceCountry != "":
		return Country{Effective: d.WorkspaceCountry, Source: "workspace"}
	}
	return Country{Effective: "PT", Source: "workspace"}
}

// Access roles on a dataset (contract part 2).
const (
	AccessViewer = "viewer"
	AccessEditor = "editor"
	AccessOwner  = "owner"
)

// AccessRole is the caller's role on a dataset: the workspace role mapped to
// viewer/editor/owner; a read-only token stays viewer whatever the role.
func AccessRole(p vigia.Principal) string {
	if p.ReadOnly {
		return AccessViewer
	}
	switch p.Role {
	case vigia.RoleAdmin:
		return AccessOwner
	case vigia.RoleMember:
		return AccessEditor
	}
	return AccessViewer
}

// DatasetAccessRole is the caller's role on a dataset (contract part 2): the workspace
// role mapped to viewer/editor/owner, raised by the team grants of the caller on the
// dataset's domains (a member grant gives editor, a manager grant owner). A grant on a
// restricted-access domain counts like any other: without one the dataset is not even
// visible. A read-only API token stays viewer whatever the role.
func DatasetAccessRole(p vigia.Principal, d Dataset) string {
	role := AccessRole(p)
	if p.ReadOnly {
		return role
	}
	rank := map[string]int{AccessViewer: 0, AccessEditor: 1, AccessOwner: 2}
	for _, g := range d.Grants {
		granted := AccessEditor
		if g.Role == "manager" {
			granted = AccessOwner
		}
		if rank[granted] > rank[role] {
			role = granted
		}
	}
	return role
}

// CostGuarded reports whether scans profile the dataset at depth basic: views and
// external tables without their own depth standard or deep.
func (d Dataset) CostGuarded() bool {
	if d.Kind != KindView && d.Kind != KindExternal {
		return false
	}
	return d.Depth == nil || *d.Depth == "basic"
}

// Column is a dataset column as the source declares it, with its last profile.
type Column struct {
	Name       string
	Position   int
	DataType   string
	Class      string
	Nullable   bool
	PrimaryKey bool
	Partition  bool
	Clustering bool
	// Unique is true when the column alone is the key of a unique constraint or index.
	Unique  bool
	Profile *ColumnProfile
	// Indexed: the column leads an index of the table (from discovery).
	Indexed bool
	// References are the declared foreign keys this column is part of, each with the
	// referenced column (filled on the detail).
	References []ColumnRef
}

// ColumnRef is a column's place in a declared foreign key: the referenced dataset and
// column.
type ColumnRef struct {
	Constraint string
	// DatasetID is the referenced dataset when Vigia knows it and the caller can see it.
	DatasetID *string
	// Schema and Table name the referenced table; blank when Restricted.
	Schema, Table string
	Column        string
	// Restricted: the referenced dataset exists but the caller cannot see it.
	Restricted bool
}

// ForeignKey is a declared foreign key of a dataset, as discovery read it from the
// source: its Columns reference RefColumns of the referenced table, position by position.
type ForeignKey struct {
	Name       string
	Columns    []string
	RefSchema  string
	RefTable   string
	RefColumns []string
	// RefDatasetID is the referenced dataset (same connection, not dropped) when the caller
	// can see it; Restricted when it exists but the caller cannot (names then blank).
	RefDatasetID *string
	Restricted   bool
}

// ColumnProfile is the stored last profile of a column: counts, statistics and masks,
// never values of text columns.
type ColumnProfile struct {
	NullCount int64   `json:"null_count"`
	NullRate  float64 `json:"null_rate"`
	// Estimated is true when the counts and extremes come from the first SampleSize rows
	// only (a cost-guarded view read over its first rows), not the whole dataset.
	Estimated  bool           `json:"estimated,omitempty"`
	SampleSize int            `json:"sample_size,omitempty"`
	Min        *vigia.Decimal `json:"min,omitempty"`
	Max        *vigia.Decimal `json:"max,omitempty"`
	MinTime    *time.Time     `json:"min_time,omitempty"`
	MaxTime    *time.Time     `json:"max_time,omitempty"`
	MinLength  *int           `json:"min_length,omitempty"`
	MaxLength  *int           `json:"max_length,omitempty"`
	AvgLength  *float64       `json:"avg_length,omitempty"`
	Distinct   *Estimate      `json:"distinct,omitempty"`
	Masks      []Mask         `json:"masks,omitempty"`
	Semantic   *Semantic      `json:"semantic,omitempty"`
	// Quantiles are equi-depth quantiles (every 5 %) of a numeric column's sampled values,
	// or of a temporal column's as Unix seconds (see source.ColumnProfile.Quantiles).
	Quantiles []float64 `json:"quantiles,omitempty"`
}

// Estimate is a number that may come from a sample.
type Estimate struct {
	Value      float64    `json:"value"`
	Estimated  bool       `json:"estimated"`
	SampleSize int        `json:"sample_size"`
	CI95       [2]float64 `json:"ci95"`
}

// Mask is a pattern mask (digit 9, letter A) with how many sampled values had it.
type Mask struct {
	Mask  string `json:"mask"`
	Count int    `json:"count"`
}

// Semantic is a column's semantic type measured on a sample.
type Semantic struct {
	Type       string `json:"type"`
	Region     string `json:"region,omitempty"`
	Estimated  bool   `json:"estimated"`
	SampleSize int    `json:"sample_size"`
	Matches    int    `json:"matches"`
	Valid      int    `json:"valid"`
}

// Dataset sorts.
const (
	SortName   = "name"
	SortUsage  = "usage"
	SortImpact = "impact"
)

// Verdicts are the values of a dataset's verdict (quality.Verdict), which the list
// filters on.
var Verdicts = []string{"pass", "warn", "fail", "unknown"}

// DatasetFilter selects datasets; nil fields do not filter.
type DatasetFilter struct {
	ConnectionID *string
	Q            *string
	Sort         string
	// Verdict keeps the datasets whose latest verdict is this one (pass, warn, fail or
	// unknown; unknown also before a dataset's first verdict).
	Verdict *string
	Page    vigia.Page
	// Cursor (opaque, from a previous page's last item: KeyOf(…).Cursor()) starts the
	// page after that item of the same order, with an offset of 0; After is its key,
	// set by the service.
	Cursor *string
	After  *DatasetKey
}

// Viewer is who reads, as far as visibility goes: the caller's teams and whether the
// caller is a workspace admin (who sees every dataset). Stores pass it to the SQL rule:
// vigia_dataset_visible per dataset, its set form vigia_hidden_datasets (the datasets a
// caller cannot see, excluded once by lists) and, for reads by id, the same rule inline
// (store.visibleRowSQL); store's tests hold the three to one answer.
type Viewer struct {
	WorkspaceID string
	TeamIDs     []string
	Admin       bool
}

// ViewerOf returns the visibility of a principal. API tokens have no teams and are never
// admins: they do not see restricted-access domains.
func ViewerOf(p vigia.Principal) Viewer {
	teams := p.TeamIDs
	if teams == nil {
		teams = []string{}
	}
	return Viewer{WorkspaceID: p.WorkspaceID, TeamIDs: teams, Admin: !p.ReadOnly && p.Role == vigia.RoleAdmin}
}

// Store is the persistence the catalog needs. Every method is scoped to a workspace.
type Store interface {
	// FindDatasets lists the workspace's live datasets with the total.
	FindDatasets(ctx context.Context, v Viewer, f DatasetFilter) (vigia.List[Dataset], error)
	// DatasetByID returns a dataset with its columns; KindNotFound if absent or in another workspace.
	DatasetByID(ctx context.Context, v Viewer, id string) (Dataset, error)
	// DatasetDetails returns the datasets of the workspace among ids with columns, score
	// history and open issues, in a fixed number of queries; missing ids are absent.
	DatasetDetails(ctx context.Context, v Viewer, ids []string, historyLimit int) (map[string]Dataset, error)
}

// Service answers catalog reads for the principal in ctx.
type Service struct {
	store  Store
	titles Titles
}

// Titles renders stored message keys in a language (the i18n catalogue).
type Titles interface {
	Has(key string) bool
	Message(lang, key string, params map[string]any) string
}

// NewService returns the catalog service; titles (may be nil) renders the open issues'
// titles in the reader's language.
func NewService(store Store, titles Titles) *Service { return &Service{store: store, titles: titles} }

// RenderTitle is an issue title in the request's language (vigia.Lang) from its message
// key and parameters; a title without a key the catalogue knows (or without a catalogue)
// is its stored text, as is one whose stored parameters lack one its message names (a
// row written before the message existed: text/template prints "<no value>" for it).
// Every read that shows issue titles renders them with it.
func RenderTitle(ctx context.Context, titles Titles, key string, params map[string]any, stored string) string {
	if titles != nil && key != "" && titles.Has(key) {
		if s := titles.Message(vigia.Lang(ctx), key, params); !strings.Contains(s, "<no value>") {
			return s
		}
	}
	return stored
}

// localize renders the dataset's open issues' titles in the request's language.
// Localize renders d's issue titles in the caller's language, as Dataset returns them:
// for a reader that loaded d itself (the detail's one-round-trip read).
func (s *Service) Localize(ctx context.Context, d Dataset) Dataset { return s.localize(ctx, d) }

func (s *Service) localize(ctx context.Context, d Dataset) Dataset {
	for i, is := range d.Issues {
		d.Issues[i].Title = RenderTitle(ctx, s.titles, is.TitleKey, is.TitleParams, is.Title)
	}
	return d
}

// DatasetPageDefault is the page size of the dataset list when limit is not given
// (contract: 500).
const DatasetPageDefault = 500

// FindDatasets lists the datasets the caller can see. Returns KindInvalid for a bad
// filter (the transports validate bounds first; this guards the service's own rules).
func (s *Service) FindDatasets(ctx context.Context, f DatasetFilter) (vigia.List[Dataset], error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return vigia.List[Dataset]{}, err
	}
	if f.Sort == "" {
		f.Sort = SortName
	}
	if err := f.Page.Validate(); err != nil {
		return vigia.List[Dataset]{}, err
	}
	if f.Q != nil {
		q := strings.TrimSpace(*f.Q)
		if q == "" {
			f.Q = nil
		} else {
			f.Q = &q
		}
	}
	if f.Verdict != nil && !slices.Contains(Verdicts, *f.Verdict) {
		return vigia.List[Dataset]{}, vigia.Invalid(vigia.Field("enum", nil, "verdict"))
	}
	f.After = nil
	if f.Cursor != nil {
		k, ok := decodeCursor(*f.Cursor, f.Sort)
		if !ok {
			return vigia.List[Dataset]{}, vigia.Invalid(vigia.Field("value_error", nil, "cursor"))
		}
		if f.Page.Offset != 0 {
			return vigia.List[Dataset]{}, vigia.Invalid(vigia.Field("value_error", nil, "offset"))
		}
		f.After = &k
	}
	if f.ConnectionID != nil && !vigia.ValidID(*f.ConnectionID) {
		// An id we never issue matches nothing; answer an empty page, not an error.
		return vigia.List[Dataset]{Items: []Dataset{}}, nil
	}
	return s.store.FindDatasets(ctx, ViewerOf(p), f)
}

// Dataset returns one dataset with its columns. Returns KindNotFound if it does not
// exist or the caller cannot see it.
func (s *Service) Dataset(ctx context.Context, id string) (Dataset, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return Dataset{}, err
	}
	if !vigia.ValidID(id) {
		return Dataset{}, vigia.NotFound()
	}
	d, err := s.store.DatasetByID(ctx, ViewerOf(p), id)
	if err != nil {
		return d, err
	}
	return s.localize(ctx, d), nil
}

// DeclaredForeignKeys returns the declared foreign keys of a dataset the caller can see
// (from the last discovery), with the referenced datasets the caller can see: join paths
// for referential-rule suggestions and synthetic packs.
func (s *Service) DeclaredForeignKeys(ctx context.Context, datasetID string) ([]ForeignKey, error) {
	d, err := s.Dataset(ctx, datasetID)
	if err != nil {
		return nil, err
	}
	if d.ForeignKeys == nil {
		return []ForeignKey{}, nil
	}
	return d.ForeignKeys, nil
}

// DatasetDetails loads many datasets' details at once (for GraphQL lists); ids the
// caller cannot see are simply absent.
func (s *Service) DatasetDetails(ctx context.Context, ids []string, historyLimit int) (map[string]Dataset, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return nil, err
	}
	valid := vigia.ValidIDs(ids)
	if historyLimit < 1 || historyLimit > 500 {
		historyLimit = 30
	}
	out, err := s.store.DatasetDetails(ctx, ViewerOf(p), valid, historyLimit)
	for id, d := range out {
		out[id] = s.localize(ctx, d)
	}
	return out, err
}
