package rest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/product"
)

// nullable is a PATCH field: absent keeps the value, null clears it, a value sets it.
type nullable[T any] struct {
	Set   bool
	Value *T
}

// UnmarshalJSON records that the field was sent, and its value or null.
func (n *nullable[T]) UnmarshalJSON(b []byte) error {
	n.Set = true
	if string(b) == "null" {
		n.Value = nil
		return nil
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	n.Value = &v
	return nil
}

// Schema documents the field as its value type or null.
func (nullable[T]) Schema(r huma.Registry) *huma.Schema {
	s := *r.Schema(reflect.TypeOf((*T)(nil)).Elem(), true, "")
	s.Nullable = true
	return &s
}

func (n nullable[T]) opt() product.Opt[T] { return product.Opt[T]{Set: n.Set, Value: n.Value} }

// SLAOut is a domain's SLA.
type SLAOut struct {
	AvailabilityObjectivePct *float64           `json:"availability_objective_pct" doc:"50-100 percent of days"`
	RetentionDays            *int               `json:"retention_days" doc:"1-36500"`
	DimensionTargets         map[string]float64 `json:"dimension_targets" doc:"0-100 per dimension"`
	DimensionWeights         map[string]float64 `json:"dimension_weights" nullable:"true" doc:"Percent per dimension, sum 100, an omitted dimension weighs 0; null = default weights (20 each)"`
}

// SLAIn sets SLA fields: a field not sent keeps its value, null clears it.
type SLAIn struct {
	AvailabilityObjectivePct nullable[float64]            `json:"availability_objective_pct" doc:"50-100"`
	RetentionDays            nullable[int]                `json:"retention_days" doc:"1-36500"`
	DimensionTargets         nullable[map[string]float64] `json:"dimension_targets" doc:"0-100 per dimension; replaces the targets; an unknown dimension gives 422"`
	DimensionWeights         nullable[map[string]float64] `json:"dimension_weights" doc:"Percent per dimension summing to 100 (an omitted dimension weighs 0); unknown dimension or another sum gives 422; applies from the next scan"`
}

func (in *SLAIn) patch() product.SLAPatch {
	return product.SLAPatch{AvailabilityObjectivePct: in.AvailabilityObjectivePct.opt(), RetentionDays: in.RetentionDays.opt(),
		DimensionTargets: in.DimensionTargets.opt(), DimensionWeights: in.DimensionWeights.opt()}
}

// TeamGrantOut is a team's grant on a domain.
type TeamGrantOut struct {
	TeamID   string `json:"team_id"`
	TeamName string `json:"team_name"`
	Role     string `json:"role" enum:"member,manager"`
}

// TeamGrantIn grants a team access to a domain.
type TeamGrantIn struct {
	TeamID string `json:"team_id" maxLength:"64"`
	Role   string `json:"role,omitempty" enum:"member,manager" doc:"member (default) reads; manager also manages the domain"`
}

// DomainOut is a data product.
type DomainOut struct {
	ID           string         `json:"id"`
	Name         string         `json:"name"`
	Description  string         `json:"description"`
	Status       string         `json:"status" enum:"draft,published,deprecated"`
	Version      string         `json:"version" doc:"MAJOR.MINOR of the last publication; 0.0 for a draft never published"`
	PublishedAt  *time.Time     `json:"published_at" doc:"Last publication; null until the first"`
	Restricted   bool           `json:"restricted" doc:"Readable only with a team grant"`
	OwnerName    *string        `json:"owner_name"`
	SLA          SLAOut         `json:"sla"`
	Teams        []TeamGrantOut `json:"teams"`
	DatasetIDs   []string       `json:"dataset_ids" doc:"Member datasets the caller can see"`
	DatasetCount int            `json:"dataset_count" doc:"Counts only datasets the caller can see"`
	CreatedAt    time.Time      `json:"created_at"`
	UpdatedAt    time.Time      `json:"updated_at"`
}

// DomainIn creates a domain (a draft).
type DomainIn struct {
	Name        string        `json:"name" maxLength:"200"`
	Description string        `json:"description,omitempty" maxLength:"2000"`
	Restricted  bool          `json:"restricted,omitempty"`
	OwnerName   *string       `json:"owner_name,omitempty" maxLength:"200" doc:"A person's or team's name, never an email address"`
	DatasetIDs  []string      `json:"dataset_ids,omitempty"`
	Teams       []TeamGrantIn `json:"teams,omitempty"`
	SLA         *SLAIn        `json:"sla,omitempty"`
}

// DomainPatchIn changes a domain; fields not sent keep their value.
type DomainPatchIn struct {
	Name        *string          `json:"name,omitempty" maxLength:"200"`
	Description *string          `json:"description,omitempty" maxLength:"2000"`
	OwnerName   nullable[string] `json:"owner_name" doc:"null clears it"`
	Restricted  *bool            `json:"restricted,omitempty" doc:"Admins only"`
	DatasetIDs  *[]string        `json:"dataset_ids,omitempty" doc:"Replaces the members the caller can see"`
	Teams       *[]TeamGrantIn   `json:"teams,omitempty" doc:"Replaces the grants; admins only"`
	SLA         *SLAIn           `json:"sla,omitempty"`
}

// VersionCountsOut counts a version's datasets and changes.
type VersionCountsOut struct {
	Datasets   int `json:"datasets"`
	Changes    int `json:"changes"`
	Breaking   int `json:"breaking"`
	Compatible int `json:"compatible"`
}

// DomainVersionOut is a published version.
type DomainVersionOut struct {
	Version       string           `json:"version"`
	Bump          string           `json:"bump" enum:"initial,major,minor"`
	ChangeSummary string           `json:"change_summary" doc:"pt-PT"`
	Counts        VersionCountsOut `json:"counts"`
	PublishedAt   time.Time        `json:"published_at"`
}

// PublishOut is the domain after a publication, with the new version.
type PublishOut struct {
	Domain  DomainOut        `json:"domain"`
	Version DomainVersionOut `json:"version"`
}

// ChangeOut is one change between two versions, with its impact.
type ChangeOut struct {
	Kind        string  `json:"kind" doc:"e.g. dataset_removed, dimension_weights_changed, dimension_target_raised"`
	Impact      string  `json:"impact" enum:"breaking,compatible"`
	DatasetID   *string `json:"dataset_id,omitempty"`
	DatasetName *string `json:"dataset_name,omitempty"`
	Column      *string `json:"column,omitempty"`
	Dimension   *string `json:"dimension,omitempty"`
	Field       *string `json:"field,omitempty"`
	Before      any     `json:"before"`
	After       any     `json:"after"`
	Restricted  bool    `json:"restricted" doc:"A dataset the caller cannot see: no id, name or column"`
}

// DomainDiffOut compares two versions.
type DomainDiffOut struct {
	DomainID    string           `json:"domain_id"`
	FromVersion *string          `json:"from_version" doc:"null: the domain was never published"`
	ToVersion   string           `json:"to_version" doc:"A version or current"`
	Bump        string           `json:"bump" enum:"initial,major,minor,none"`
	NextVersion *string          `json:"next_version" doc:"from latest to current: the version publishing now would create (null when nothing changed)"`
	Changes     []ChangeOut      `json:"changes"`
	Counts      VersionCountsOut `json:"counts"`
}

// DatasetVerdictItemOut is a member's verdict.
type DatasetVerdictItemOut struct {
	DatasetID   string   `json:"dataset_id"`
	DatasetName string   `json:"dataset_name"`
	Verdict     string   `json:"verdict" enum:"pass,warn,fail,unknown"`
	Score       *float64 `json:"score"`
}

// DomainVerdictOut is a domain's aggregated verdict.
type DomainVerdictOut struct {
	DomainID string                  `json:"domain_id"`
	Verdict  string                  `json:"verdict" enum:"pass,warn,fail,unknown" doc:"The worst of its datasets' (fail, warn, unknown, pass)"`
	Score    *float64                `json:"score" doc:"Mean of the datasets' latest scores"`
	Counts   map[string]int          `json:"counts"`
	Datasets []DatasetVerdictItemOut `json:"datasets"`
}

// ReadinessItemOut is a blocker or warning code.
type ReadinessItemOut struct {
	Code   string         `json:"code" doc:"e.g. deprecated, no_datasets, draft, retention_short, or a dataset finding (params.datasets counts them)"`
	Params map[string]any `json:"params"`
}

// DomainUseCaseOut is a domain's readiness for one use case.
type DomainUseCaseOut struct {
	Status        string             `json:"status" enum:"ready,ready_with_warnings,not_ready"`
	Score         *float64           `json:"score"`
	DatasetsReady int                `json:"datasets_ready"`
	DatasetsTotal int                `json:"datasets_total"`
	Blockers      []ReadinessItemOut `json:"blockers"`
	Warnings      []ReadinessItemOut `json:"warnings"`
}

// DomainUseCasesOut holds the four use cases.
type DomainUseCasesOut struct {
	RAG    DomainUseCaseOut `json:"rag"`
	ML     DomainUseCaseOut `json:"ml"`
	Agente DomainUseCaseOut `json:"agente"`
	BI     DomainUseCaseOut `json:"bi"`
}

// ConsumerCountsOut counts consumers by kind.
type ConsumerCountsOut struct {
	Total  int            `json:"total"`
	ByKind map[string]int `json:"by_kind" doc:"user, ai_system, dbt_exposure, external"`
}

// DomainReadinessOut is a domain's readiness.
type DomainReadinessOut struct {
	DomainID  string            `json:"domain_id"`
	UseCases  DomainUseCasesOut `json:"use_cases"`
	Consumers ConsumerCountsOut `json:"consumers"`
}

// SLOBreakdownOut counts violated days by reason.
type SLOBreakdownOut struct {
	DimensionTarget int `json:"dimension_target"`
	VerdictFail     int `json:"verdict_fail"`
	NotProfiled     int `json:"not_profiled"`
}

// SLODatasetOut is a dataset's month.
type SLODatasetOut struct {
	DatasetID                string          `json:"dataset_id"`
	DatasetName              string          `json:"dataset_name"`
	AvailabilityPct          *float64        `json:"availability_pct"`
	AvailabilityMetDays      int             `json:"availability_met_days"`
	AvailabilityViolatedDays int             `json:"availability_violated_days"`
	HistoryDays              int             `json:"history_days"`
	Breakdown                SLOBreakdownOut `json:"breakdown"`
}

// SLOOut is a domain's SLO attainment in a month.
type SLOOut struct {
	DomainID                 string          `json:"domain_id"`
	Month                    string          `json:"month" doc:"YYYY-MM"`
	Timezone                 string          `json:"timezone" doc:"Days are read in the workspace's zone"`
	ObjectivePct             *float64        `json:"objective_pct"`
	ObjectiveMet             *bool           `json:"objective_met"`
	AvailabilityPct          *float64        `json:"availability_pct"`
	AvailabilityMetDays      int             `json:"availability_met_days"`
	AvailabilityViolatedDays int             `json:"availability_violated_days"`
	HistoryDays              int             `json:"history_days" doc:"Sum over the datasets"`
	Breakdown                SLOBreakdownOut `json:"breakdown"`
	Datasets                 []SLODatasetOut `json:"datasets"`
}

// DomainConsumerOut is a consumer of a data product.
type DomainConsumerOut struct {
	ID              string     `json:"id"`
	Name            string     `json:"name"`
	Kind            string     `json:"kind" enum:"user,ai_system,dbt_exposure,external"`
	Source          string     `json:"source" enum:"manual,derived"`
	ChannelID       *string    `json:"channel_id" doc:"Receives critical SLA breach notices (manual consumers)"`
	ConsumerKind    *string    `json:"consumer_kind" doc:"Registry kind of a derived consumer: agent, application, pipeline, notebook"`
	Consumptions30d int        `json:"consumptions_30d"`
	Datasets30d     int        `json:"datasets_30d"`
	LastConsumedAt  *time.Time `json:"last_consumed_at"`
	CreatedAt       time.Time  `json:"created_at"`
}

// DomainConsumerIn registers a consumer by hand.
type DomainConsumerIn struct {
	Name      string  `json:"name" maxLength:"200"`
	Kind      string  `json:"kind" enum:"user,ai_system,dbt_exposure,external"`
	ChannelID *string `json:"channel_id,omitempty" maxLength:"64"`
}

// DomainFactsDatasetOut is a member in the domain's trust facts.
type DomainFactsDatasetOut struct {
	DatasetID     string           `json:"dataset_id"`
	DatasetName   string           `json:"dataset_name"`
	Verdict       string           `json:"verdict" enum:"pass,warn,fail,unknown"`
	Score         *float64         `json:"score"`
	TrustScore    float64          `json:"trust_score"`
	TrustGrade    string           `json:"trust_grade" enum:"A,B,C,D,E"`
	OpenIncidents OpenIncidentsOut `json:"open_incidents"`
	LastScanAt    *time.Time       `json:"last_scan_at"`
}

// DomainFactsBodyOut are a domain's trust facts.
type DomainFactsBodyOut struct {
	Verdict   string                  `json:"verdict" enum:"pass,warn,fail,unknown"`
	Score     *float64                `json:"score"`
	SLA       SLAOut                  `json:"sla"`
	SLOMonth  MonthAttainmentOut      `json:"slo_month"`
	Readiness map[string]string       `json:"readiness" doc:"Status per use case: rag, ml, agente, bi"`
	Datasets  []DomainFactsDatasetOut `json:"datasets"`
}

// DomainTrustFactsOut is the trust facts envelope of a domain.
type DomainTrustFactsOut struct {
	SchemaVersion string             `json:"schema_version"`
	Kind          string             `json:"kind" enum:"domain"`
	Subject       FactsSubjectOut    `json:"subject"`
	GeneratedAt   time.Time          `json:"generated_at"`
	Facts         DomainFactsBodyOut `json:"facts"`
}

// ReachDatasetOut is a dataset listed by a metadata problem.
type ReachDatasetOut struct {
	DatasetID       string `json:"dataset_id"`
	DatasetName     string `json:"dataset_name"`
	DownstreamReach int    `json:"downstream_reach"`
}

// SuggestionOut says where a fix comes from.
type SuggestionOut struct {
	Channel string `json:"channel" enum:"lineage,domain,scan"`
	Action  string `json:"action"`
}

// MetadataProblemOut is one metadata problem.
type MetadataProblemOut struct {
	Code       string            `json:"code" doc:"missing_owner, missing_domain (catalog); missing_description, missing_sla, not_profiled, no_timestamp (domain)"`
	Count      int               `json:"count"`
	Datasets   []ReachDatasetOut `json:"datasets" doc:"Up to 5 by downstream reach, largest first, ties by name"`
	Suggestion *SuggestionOut    `json:"suggestion"`
}

// MetadataQualityOut is the metadata-quality read.
type MetadataQualityOut struct {
	DomainID      *string              `json:"domain_id"`
	DatasetsTotal int                  `json:"datasets_total"`
	Score         float64              `json:"score" doc:"Share of checks passed, 0-100"`
	Problems      []MetadataProblemOut `json:"problems"`
}

// PublicShareOut is a domain's public share.
type PublicShareOut struct {
	DomainID  string     `json:"domain_id"`
	Enabled   bool       `json:"enabled"`
	Token     *string    `json:"token"`
	PageURL   *string    `json:"page_url"`
	BadgeURL  *string    `json:"badge_url"`
	CreatedAt *time.Time `json:"created_at"`
	RotatedAt *time.Time `json:"rotated_at"`
}

// MonthAttainmentOut is a month's SLO attainment.
type MonthAttainmentOut struct {
	Month           string   `json:"month"`
	AvailabilityPct *float64 `json:"availability_pct"`
	MetDays         int      `json:"met_days"`
	ViolatedDays    int      `json:"violated_days"`
	ObjectivePct    *float64 `json:"objective_pct"`
	ObjectiveMet    *bool    `json:"objective_met"`
}

// PublicReadinessOut is the readiness status per use case.
type PublicReadinessOut struct {
	RAG    string `json:"rag" enum:"ready,ready_with_warnings,not_ready"`
	ML     string `json:"ml" enum:"ready,ready_with_warnings,not_ready"`
	Agente string `json:"agente" enum:"ready,ready_with_warnings,not_ready"`
	BI     string `json:"bi" enum:"ready,ready_with_warnings,not_ready"`
}

// PublicDatasetOut is a dataset on the public page.
type PublicDatasetOut struct {
	Name    string   `json:"name"`
	Verdict string   `json:"verdict" enum:"pass,warn,fail,unknown"`
	Score   *float64 `json:"score"`
}

// PublicDomainOut is the public page of a shared data product: these fields only.
type PublicDomainOut struct {
	Name            string             `json:"name"`
	Description     string             `json:"description"`
	OwnerName       *string            `json:"owner_name"`
	Version         string             `json:"version"`
	Status          string             `json:"status" enum:"draft,published,deprecated"`
	Score           *float64           `json:"score"`
	SLA             SLAOut             `json:"sla"`
	MonthAttainment MonthAttainmentOut `json:"month_attainment"`
	Readiness       PublicReadinessOut `json:"readiness"`
	Datasets        []PublicDatasetOut `json:"datasets"`
	GeneratedAt     time.Time          `json:"generated_at"`
}

var (
	domainIDParam   = param{Name: "domain_id", In: "path", Type: "string", Required: true, MaxLen: 64}
	shareTokenParam = param{Name: "token", In: "path", Type: "string", Required: true, MaxLen: 64}
)

func (s *Server) productRoutes() {
	s.register(operation{ID: "listDomains", Method: http.MethodGet, Path: "/api/v1/domains", Tag: "catalog",
		Summary: "Data products the caller can see", List: true, ListDefault: product.DomainPageDefault, Response: []DomainOut{}}, s.handleDomainList)
	s.register(operation{ID: "createDomain", Method: http.MethodPost, Path: "/api/v1/domains", Tag: "catalog", Status: http.StatusCreated,
		Summary: "Create a draft data product (admin session)", Body: DomainIn{}, Response: DomainOut{}}, s.handleDomainCreate)
	s.register(operation{ID: "getDomain", Method: http.MethodGet, Path: "/api/v1/domains/{domain_id}", Tag: "catalog",
		Summary: "One data product: status, version, published_at, sla", Params: []param{domainIDParam}, Response: DomainOut{}}, s.handleDomainGet)
	s.register(operation{ID: "updateDomain", Method: http.MethodPatch, Path: "/api/v1/domains/{domain_id}", Tag: "catalog",
		Summary: "Change a data product (session of an admin or a domain manager)", Params: []param{domainIDParam}, Body: DomainPatchIn{},
		Response: DomainOut{}, Desc: "SLA fields not sent keep their value; null clears one. An unknown dimension or dimension_weights " +
			"not summing to 100 give 422. New weights apply to the domain's datasets from their next scan (a dataset in several domains " +
			"with different weights keeps the default weights)."}, s.handleDomainUpdate)
	s.register(operation{ID: "publishDomain", Method: http.MethodPost, Path: "/api/v1/domains/{domain_id}/publish", Tag: "catalog",
		Summary: "Publish the current state as a new version (major when it breaks consumers, minor otherwise)", Params: []param{domainIDParam},
		Response: PublishOut{}, Errors: map[int]string{http.StatusConflict: "domain_unchanged: nothing changed since the last version"},
		Desc: "409 domain_unchanged when nothing changed since the last version."}, s.handleDomainPublish)
	s.register(operation{ID: "deprecateDomain", Method: http.MethodPost, Path: "/api/v1/domains/{domain_id}/deprecate", Tag: "catalog",
		Summary: "Deprecate a published data product", Params: []param{domainIDParam}, Response: DomainOut{},
		Errors: map[int]string{http.StatusConflict: "domain_state: the domain is not published (a draft cannot be deprecated)"},
		Desc:   "409 domain_state when the domain is not published."}, s.handleDomainDeprecate)
	s.register(operation{ID: "listDomainVersions", Method: http.MethodGet, Path: "/api/v1/domains/{domain_id}/versions", Tag: "catalog",
		Summary: "Published versions, newest first", List: true, Params: []param{domainIDParam}, Response: []DomainVersionOut{}}, s.handleDomainVersions)
	s.register(operation{ID: "diffDomainVersions", Method: http.MethodGet, Path: "/api/v1/domains/{domain_id}/versions/{from_version}/diff/{to_version}",
		Tag: "catalog", Summary: "Changes between two versions with their impact",
		Params: []param{domainIDParam, {Name: "from_version", In: "path", Type: "string", Required: true, MaxLen: 16, Desc: "MAJOR.MINOR or latest"},
			{Name: "to_version", In: "path", Type: "string", Required: true, MaxLen: 16, Desc: "MAJOR.MINOR or current"}},
		Response: DomainDiffOut{}, Desc: "from latest to current compares the current state with the last version and returns next_version; " +
			"latest as target or current as source gives 422."}, s.handleDomainDiff)
	reg := func(id, suffix, summary string, resp any, params []param, h func(w http.ResponseWriter, r *http.Request, in *input)) {
		s.register(operation{ID: id, Method: http.MethodGet, Path: "/api/v1/domains/{domain_id}" + suffix, Tag: "catalog",
			Summary: summary, Params: append([]param{domainIDParam}, params...), Response: resp}, h)
	}
	reg("domainVerdict", "/verdict", "Aggregated verdict of the datasets the caller can see", DomainVerdictOut{}, nil, s.handleDomainVerdict)
	reg("domainReadiness", "/readiness", "Readiness per use case (rag, ml, agente, bi) with blocker and warning codes, consumers by kind",
		DomainReadinessOut{}, nil, s.handleDomainReadiness)
	reg("domainSLO", "/slo", "SLO attainment per month and dataset", SLOOut{},
		[]param{{Name: "month", In: "query", Type: "string", MaxLen: 7, Desc: "YYYY-MM; the current month by default"}}, s.handleDomainSLO)
	reg("domainTrustFacts", "/trust-facts", "Trust facts envelope with schema_version", DomainTrustFactsOut{}, nil, s.handleDomainTrustFacts)
	reg("domainMetadataQuality", "/metadata-quality", "Metadata problems of the domain and its datasets", MetadataQualityOut{}, nil, s.handleDomainMetadataQuality)
	s.register(operation{ID: "listDomainConsumers", Method: http.MethodGet, Path: "/api/v1/domains/{domain_id}/consumers", Tag: "consumers",
		Summary: "Consumers of the data product: manual, then derived (reads in the last 30 days)", List: true, Params: []param{domainIDParam},
		Response: []DomainConsumerOut{}}, s.handleDomainConsumers)
	s.register(operation{ID: "addDomainConsumer", Method: http.MethodPost, Path: "/api/v1/domains/{domain_id}/consumers", Tag: "consumers",
		Summary: "Register a consumer of the data product by hand", Params: []param{domainIDParam}, Body: DomainConsumerIn{},
		Response: DomainConsumerOut{}, Status: http.StatusCreated}, s.handleDomainConsumerAdd)
	s.register(operation{ID: "deleteDomainConsumer", Method: http.MethodDelete, Path: "/api/v1/domains/{domain_id}/consumers/{consumer_id}",
		Tag: "consumers", Summary: "Remove a consumer registered by hand", Status: http.StatusNoContent,
		Params: []param{domainIDParam, {Name: "consumer_id", In: "path", Type: "string", Required: true, MaxLen: 64}}}, s.handleDomainConsumerDelete)
	shareOp := func(id, method, path, summary string, status int, resp any, h func(w http.ResponseWriter, r *http.Request, in *input)) {
		op := operation{ID: id, Method: method, Path: "/api/v1/domains/{domain_id}/public-share" + path, Tag: "catalog",
			Summary: summary, Params: []param{domainIDParam}, Response: resp, Status: status}
		if method == http.MethodPut {
			op.Also = map[int]alsoAnswer{http.StatusCreated: {Desc: "Shared for the first time: a new token", Body: PublicShareOut{}}}
		}
		s.register(op, h)
	}
	shareOp("getPublicShare", http.MethodGet, "", "The public share of the data product (managers)", 0, PublicShareOut{}, s.handleShareGet)
	shareOp("enablePublicShare", http.MethodPut, "", "Share the data product publicly: 201 with a new token, 200 with the live one", 0,
		PublicShareOut{}, s.handleSharePut)
	shareOp("rotatePublicShare", http.MethodPost, "/rotate", "Replace the share token; the old one answers 404 at once", 0, PublicShareOut{}, s.handleShareRotate)
	shareOp("revokePublicShare", http.MethodDelete, "", "Stop sharing; the token answers 404 at once", http.StatusNoContent, nil, s.handleShareDelete)
	s.register(operation{ID: "publicDomain", Method: http.MethodGet, Path: "/api/v1/public/domains/{token}", Tag: "catalog", Public: true,
		Summary: "Public page of a shared data product", Params: []param{shareTokenParam}, Response: PublicDomainOut{},
		Headers: map[string]string{"ETag": "Version of the page", "Cache-Control": "no-cache"},
		Also:    map[int]alsoAnswer{http.StatusNotModified: {Desc: "If-None-Match names the current ETag"}},
		Desc: "These fields only: never emails, internal ids, columns or samples. ETag (If-None-Match gives 304), Cache-Control no-cache; " +
			"404 for an unknown or revoked token; per-IP rate limit."}, s.handlePublicDomain)
	s.register(operation{ID: "publicDomainBadge", Method: http.MethodGet, Path: "/api/v1/public/badge/domains/{token}.svg", Tag: "catalog",
		Public: true, Summary: "SVG badge of a shared data product: verdict and score", Params: []param{shareTokenParam},
		ContentType: "image/svg+xml", Headers: map[string]string{"ETag": "Version of the badge", "Cache-Control": "public, max-age=3600"},
		Also: map[int]alsoAnswer{http.StatusNotModified: {Desc: "If-None-Match names the current ETag"}},
		Desc: "ETag, Cache-Control public, max-age=3600; 404 for an unknown or revoked token; per-IP rate limit."},
		s.handlePublicBadge)
	s.register(operation{ID: "catalogMetadataQuality", Method: http.MethodGet, Path: "/api/v1/catalog/metadata-quality", Tag: "catalog",
		Summary: "Datasets missing an owner or a domain, listed by downstream reach", Response: MetadataQualityOut{}}, s.handleCatalogMetadataQuality)
	s.publicLimiter = newLimiter(s.cfg.RateLimitPublic, s.cfg.RateWindow, s.now)
}

func toSLAOut(sla product.SLA) SLAOut {
	t := sla.DimensionTargets
	if t == nil {
		t = map[string]float64{}
	}
	return SLAOut{AvailabilityObjectivePct: sla.AvailabilityObjectivePct, RetentionDays: sla.RetentionDays, DimensionTargets: t,
		DimensionWeights: sla.DimensionWeights}
}

func toDomainOut(d product.Domain) DomainOut {
	out := DomainOut{ID: d.ID, Name: d.Name, Description: d.Description, Status: d.Status, Version: d.Version.String(), PublishedAt: d.PublishedAt,
		Restricted: d.Restricted, OwnerName: d.OwnerName, SLA: toSLAOut(d.SLA), Teams: make([]TeamGrantOut, 0, len(d.Teams)),
		DatasetIDs: nonNilStrings(d.DatasetIDs), DatasetCount: len(d.DatasetIDs), CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt}
	for _, t := range d.Teams {
		out.Teams = append(out.Teams, TeamGrantOut{TeamID: t.TeamID, TeamName: t.TeamName, Role: t.Role})
	}
	return out
}

func toGrants(in []TeamGrantIn) []product.TeamGrantInput {
	out := make([]product.TeamGrantInput, 0, len(in))
	for _, g := range in {
		out = append(out, product.TeamGrantInput{TeamID: g.TeamID, Role: g.Role})
	}
	return out
}

func (s *Server) handleDomainList(w http.ResponseWriter, r *http.Request, in *input) {
	res, err := s.deps.Products.Domains(r.Context(), in.Page())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]DomainOut, 0, len(res.Items))
	for _, d := range res.Items {
		out = append(out, toDomainOut(d))
	}
	list(w, res.Total, out)
}

func (s *Server) handleDomainCreate(w http.ResponseWriter, r *http.Request, in *input) {
	var body DomainIn
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	di := product.DomainInput{Name: body.Name, Description: body.Description, Restricted: body.Restricted, OwnerName: body.OwnerName,
		DatasetIDs: body.DatasetIDs, Teams: toGrants(body.Teams)}
	if body.SLA != nil {
		di.SLA = body.SLA.patch()
	}
	d, err := s.deps.Products.CreateDomain(r.Context(), di)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Location", "/api/v1/domains/"+d.ID)
	writeJSON(w, http.StatusCreated, toDomainOut(d))
}

func (s *Server) handleDomainGet(w http.ResponseWriter, r *http.Request, in *input) {
	d, err := s.deps.Products.Domain(r.Context(), in.Path("domain_id"))
	s.reply(w, r, err, func() any { return toDomainOut(d) })
}

func (s *Server) handleDomainUpdate(w http.ResponseWriter, r *http.Request, in *input) {
	var body DomainPatchIn
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	p := product.DomainPatch{Name: body.Name, Description: body.Description, OwnerName: body.OwnerName.opt(), Restricted: body.Restricted,
		DatasetIDs: body.DatasetIDs}
	if body.Teams != nil {
		g := toGrants(*body.Teams)
		p.Teams = &g
	}
	if body.SLA != nil {
		sp := body.SLA.patch()
		p.SLA = &sp
	}
	d, err := s.deps.Products.UpdateDomain(r.Context(), in.Path("domain_id"), p)
	s.reply(w, r, err, func() any { return toDomainOut(d) })
}

func toVersionOut(v product.VersionRow) DomainVersionOut {
	return DomainVersionOut{Version: v.Version.String(), Bump: v.Bump, ChangeSummary: v.ChangeSummary, PublishedAt: v.PublishedAt,
		Counts: VersionCountsOut{Datasets: v.Counts.Datasets, Changes: v.Counts.Changes, Breaking: v.Counts.Breaking, Compatible: v.Counts.Compatible}}
}

func (s *Server) handleDomainPublish(w http.ResponseWriter, r *http.Request, in *input) {
	d, v, err := s.deps.Products.Publish(r.Context(), in.Path("domain_id"))
	s.reply(w, r, err, func() any { return PublishOut{Domain: toDomainOut(d), Version: toVersionOut(v)} })
}

func (s *Server) handleDomainDeprecate(w http.ResponseWriter, r *http.Request, in *input) {
	d, err := s.deps.Products.Deprecate(r.Context(), in.Path("domain_id"))
	s.reply(w, r, err, func() any { return toDomainOut(d) })
}

func (s *Server) handleDomainVersions(w http.ResponseWriter, r *http.Request, in *input) {
	res, err := s.deps.Products.VersionPage(r.Context(), in.Path("domain_id"), in.Page())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]DomainVersionOut, 0, len(res.Items))
	for _, v := range res.Items {
		out = append(out, toVersionOut(v))
	}
	list(w, res.Total, out)
}

func strp(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func (s *Server) handleDomainDiff(w http.ResponseWriter, r *http.Request, in *input) {
	d, err := s.deps.Products.DiffVersions(r.Context(), in.Path("domain_id"), in.Path("from_version"), in.Path("to_version"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := DomainDiffOut{DomainID: d.DomainID, ToVersion: "current", Bump: d.Bump, Changes: make([]ChangeOut, 0, len(d.Changes)),
		Counts: VersionCountsOut{Datasets: d.Counts.Datasets, Changes: d.Counts.Changes, Breaking: d.Counts.Breaking, Compatible: d.Counts.Compatible}}
	if d.From != nil {
		out.FromVersion = strp(d.From.String())
	}
	if d.To != nil {
		out.ToVersion = d.To.String()
	}
	if d.NextVersion != nil {
		out.NextVersion = strp(d.NextVersion.String())
	}
	for _, c := range d.Changes {
		out.Changes = append(out.Changes, ChangeOut{Kind: c.Kind, Impact: c.Impact, DatasetID: strp(c.DatasetID), DatasetName: strp(c.DatasetName),
			Column: strp(c.Column), Dimension: strp(c.Dimension), Field: strp(c.Field), Before: c.Before, After: c.After, Restricted: c.Restricted})
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleDomainVerdict(w http.ResponseWriter, r *http.Request, in *input) {
	v, err := s.deps.Products.Verdict(r.Context(), in.Path("domain_id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := DomainVerdictOut{DomainID: v.DomainID, Verdict: v.Verdict, Score: v.Score, Counts: v.Counts, Datasets: make([]DatasetVerdictItemOut, 0, len(v.Datasets))}
	for _, d := range v.Datasets {
		out.Datasets = append(out.Datasets, DatasetVerdictItemOut{DatasetID: d.DatasetID, DatasetName: d.DatasetName, Verdict: d.Verdict, Score: d.Score})
	}
	writeJSON(w, http.StatusOK, out)
}

func toItemsOut(is []product.ReadinessItem) []ReadinessItemOut {
	out := make([]ReadinessItemOut, 0, len(is))
	for _, i := range is {
		out = append(out, ReadinessItemOut{Code: i.Code, Params: nonNilMap(i.Params)})
	}
	return out
}

func toDomainUseCaseOut(u product.UseCaseReadiness) DomainUseCaseOut {
	return DomainUseCaseOut{Status: u.Status, Score: u.Score, DatasetsReady: u.DatasetsReady, DatasetsTotal: u.DatasetsTotal,
		Blockers: toItemsOut(u.Blockers), Warnings: toItemsOut(u.Warnings)}
}

func (s *Server) handleDomainReadiness(w http.ResponseWriter, r *http.Request, in *input) {
	rd, err := s.deps.Products.Readiness(r.Context(), in.Path("domain_id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, DomainReadinessOut{DomainID: rd.DomainID,
		UseCases: DomainUseCasesOut{RAG: toDomainUseCaseOut(rd.UseCase(product.UseRAG)), ML: toDomainUseCaseOut(rd.UseCase(product.UseML)),
			Agente: toDomainUseCaseOut(rd.UseCase(product.UseAgente)), BI: toDomainUseCaseOut(rd.UseCase(product.UseBI))},
		Consumers: ConsumerCountsOut{Total: rd.Consumers.Total, ByKind: rd.Consumers.ByKind}})
}

func toBreakdown(m map[string]int) SLOBreakdownOut {
	return SLOBreakdownOut{DimensionTarget: m[product.ViolationDimensionTarget], VerdictFail: m[product.ViolationVerdictFail],
		NotProfiled: m[product.ViolationNotProfiled]}
}

func (s *Server) handleDomainSLO(w http.ResponseWriter, r *http.Request, in *input) {
	rep, err := s.deps.Products.SLO(r.Context(), in.Path("domain_id"), in.String("month"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := SLOOut{DomainID: in.Path("domain_id"), Month: rep.Month, Timezone: rep.Timezone, ObjectivePct: rep.ObjectivePct, ObjectiveMet: rep.ObjectiveMet,
		AvailabilityPct: rep.AvailabilityPct, AvailabilityMetDays: rep.MetDays, AvailabilityViolatedDays: rep.ViolatedDays,
		HistoryDays: rep.HistoryDays, Breakdown: toBreakdown(rep.Breakdown), Datasets: make([]SLODatasetOut, 0, len(rep.Datasets))}
	for _, d := range rep.Datasets {
		out.Datasets = append(out.Datasets, SLODatasetOut{DatasetID: d.DatasetID, DatasetName: d.DatasetName, AvailabilityPct: d.AvailabilityPct,
			AvailabilityMetDays: d.MetDays, AvailabilityViolatedDays: d.ViolatedDays, HistoryDays: d.HistoryDays, Breakdown: toBreakdown(d.Breakdown)})
	}
	writeJSON(w, http.StatusOK, out)
}

func toDomainConsumerOut(c product.DomainConsumer) DomainConsumerOut {
	return DomainConsumerOut{ID: c.ID, Name: c.Name, Kind: c.Kind, Source: c.Source, ChannelID: c.ChannelID, ConsumerKind: c.RegistryKind,
		Consumptions30d: c.Consumptions30, Datasets30d: c.Datasets30, LastConsumedAt: c.LastConsumedAt, CreatedAt: c.CreatedAt}
}

func (s *Server) handleDomainConsumers(w http.ResponseWriter, r *http.Request, in *input) {
	res, err := s.deps.Products.ConsumerPage(r.Context(), in.Path("domain_id"), in.Page())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]DomainConsumerOut, 0, len(res.Items))
	for _, c := range res.Items {
		out = append(out, toDomainConsumerOut(c))
	}
	list(w, res.Total, out)
}

func (s *Server) handleDomainConsumerAdd(w http.ResponseWriter, r *http.Request, in *input) {
	var body DomainConsumerIn
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	c, err := s.deps.Products.AddConsumer(r.Context(), in.Path("domain_id"), product.ConsumerInput{Name: body.Name, Kind: body.Kind, ChannelID: body.ChannelID})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, toDomainConsumerOut(c))
}

func (s *Server) handleDomainConsumerDelete(w http.ResponseWriter, r *http.Request, in *input) {
	if err := s.deps.Products.DeleteConsumer(r.Context(), in.Path("domain_id"), in.Path("consumer_id")); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func toMonthOut(m product.MonthAttainment) MonthAttainmentOut {
	return MonthAttainmentOut{Month: m.Month, AvailabilityPct: m.AvailabilityPct, MetDays: m.MetDays, ViolatedDays: m.ViolatedDays,
		ObjectivePct: m.ObjectivePct, ObjectiveMet: m.ObjectiveMet}
}

func (s *Server) handleDomainTrustFacts(w http.ResponseWriter, r *http.Request, in *input) {
	f, err := s.deps.Products.TrustFacts(r.Context(), in.Path("domain_id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	status, version := f.Domain.Status, f.Domain.Version.String()
	readiness := map[string]string{}
	for _, u := range f.Readiness.UseCases {
		readiness[u.UseCase] = u.Status
	}
	out := DomainTrustFactsOut{SchemaVersion: f.SchemaVersion, Kind: "domain", GeneratedAt: f.GeneratedAt,
		Subject: FactsSubjectOut{ID: f.Domain.ID, Name: f.Domain.Name, Status: &status, Version: &version},
		Facts: DomainFactsBodyOut{Verdict: f.Verdict.Verdict, Score: f.Verdict.Score, SLA: toSLAOut(f.Domain.SLA), Readiness: readiness,
			SLOMonth: toMonthOut(product.MonthAttainment{Month: f.SLO.Month, AvailabilityPct: f.SLO.AvailabilityPct, MetDays: f.SLO.MetDays,
				ViolatedDays: f.SLO.ViolatedDays, ObjectivePct: f.SLO.ObjectivePct, ObjectiveMet: f.SLO.ObjectiveMet}),
			Datasets: make([]DomainFactsDatasetOut, 0, len(f.Datasets))}}
	for _, d := range f.Datasets {
		out.Facts.Datasets = append(out.Facts.Datasets, DomainFactsDatasetOut{DatasetID: d.DatasetID, DatasetName: d.DatasetName, Verdict: d.Verdict,
			Score: d.Score, TrustScore: d.TrustScore, TrustGrade: d.TrustGrade, OpenIncidents: OpenIncidentsOut{Critical: d.OpenCritical, Warning: d.OpenWarning},
			LastScanAt: d.LastScanAt})
	}
	writeJSON(w, http.StatusOK, out)
}

func toMetadataOut(m product.MetadataQuality) MetadataQualityOut {
	out := MetadataQualityOut{DomainID: m.DomainID, DatasetsTotal: m.DatasetsTotal, Score: m.Score, Problems: make([]MetadataProblemOut, 0, len(m.Problems))}
	for _, p := range m.Problems {
		po := MetadataProblemOut{Code: p.Code, Count: p.Count, Datasets: make([]ReachDatasetOut, 0, len(p.Datasets))}
		for _, d := range p.Datasets {
			po.Datasets = append(po.Datasets, ReachDatasetOut{DatasetID: d.DatasetID, DatasetName: d.DatasetName, DownstreamReach: d.DownstreamReach})
		}
		if p.Suggestion != nil {
			po.Suggestion = &SuggestionOut{Channel: p.Suggestion.Channel, Action: p.Suggestion.Action}
		}
		out.Problems = append(out.Problems, po)
	}
	return out
}

func (s *Server) handleDomainMetadataQuality(w http.ResponseWriter, r *http.Request, in *input) {
	m, err := s.deps.Products.MetadataQuality(r.Context(), in.Path("domain_id"))
	s.reply(w, r, err, func() any { return toMetadataOut(m) })
}

func (s *Server) handleCatalogMetadataQuality(w http.ResponseWriter, r *http.Request, _ *input) {
	m, err := s.deps.Products.CatalogMetadataQuality(r.Context())
	s.reply(w, r, err, func() any { return toMetadataOut(m) })
}

func toShareOut(sh product.ShareInfo) PublicShareOut {
	return PublicShareOut{DomainID: sh.DomainID, Enabled: sh.Enabled, Token: sh.Token, PageURL: sh.PageURL, BadgeURL: sh.BadgeURL,
		CreatedAt: sh.CreatedAt, RotatedAt: sh.RotatedAt}
}

func (s *Server) handleShareGet(w http.ResponseWriter, r *http.Request, in *input) {
	sh, err := s.deps.Products.PublicShare(r.Context(), in.Path("domain_id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, toShareOut(sh))
}

func (s *Server) handleSharePut(w http.ResponseWriter, r *http.Request, in *input) {
	sh, created, err := s.deps.Products.EnableShare(r.Context(), in.Path("domain_id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, status, toShareOut(sh))
}

func (s *Server) handleShareRotate(w http.ResponseWriter, r *http.Request, in *input) {
	sh, err := s.deps.Products.RotateShare(r.Context(), in.Path("domain_id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, toShareOut(sh))
}

func (s *Server) handleShareDelete(w http.ResponseWriter, r *http.Request, in *input) {
	if err := s.deps.Products.RevokeShare(r.Context(), in.Path("domain_id")); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// publicAllowed applies the public pages' own per-IP limit.
func (s *Server) publicAllowed(w http.ResponseWriter, r *http.Request) bool {
	q := s.publicLimiter.take("public:" + s.clientAddr.of(r))
	setRateHeaders(w, q)
	if !q.Allowed {
		s.writeError(w, r, vigia.RateLimited(vigia.CodeRateLimited, secondsUntil(q.Reset, s.now())))
		return false
	}
	return true
}

// etagOf is a strong validator of a representation.
func etagOf(b []byte) string {
	h := sha256.Sum256(b)
	return `"` + hex.EncodeToString(h[:16]) + `"`
}

// notModified answers 304 when the request's If-None-Match names etag.
func notModified(w http.ResponseWriter, r *http.Request, etag string) bool {
	for _, t := range strings.Split(r.Header.Get("If-None-Match"), ",") {
		t = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(t), "W/"))
		if t == etag || t == "*" {
			w.WriteHeader(http.StatusNotModified)
			return true
		}
	}
	return false
}

func toPublicOut(p product.PublicPage) PublicDomainOut {
	out := PublicDomainOut{Name: p.Name, Description: p.Description, OwnerName: p.OwnerName, Version: p.Version, Status: p.Status,
		Score: p.Score, SLA: toSLAOut(p.SLA), MonthAttainment: toMonthOut(p.Month), GeneratedAt: p.GeneratedAt,
		Readiness: PublicReadinessOut{RAG: p.Readiness[product.UseRAG], ML: p.Readiness[product.UseML], Agente: p.Readiness[product.UseAgente],
			BI: p.Readiness[product.UseBI]}, Datasets: make([]PublicDatasetOut, 0, len(p.Datasets))}
	for _, d := range p.Datasets {
		out.Datasets = append(out.Datasets, PublicDatasetOut{Name: d.Name, Verdict: d.Verdict, Score: d.Score})
	}
	return out
}

func (s *Server) handlePublicDomain(w http.ResponseWriter, r *http.Request, in *input) {
	if !s.publicAllowed(w, r) {
		return
	}
	p, err := s.deps.Products.PublicPage(r.Context(), in.Path("token"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := toPublicOut(p)
	// The validator covers the content, not the moment it was generated.
	stable := out
	stable.GeneratedAt = time.Time{}
	b, err := json.Marshal(stable)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	etag := etagOf(b)
	w.Header().Set("ETag", etag)
	w.Header().Set("Cache-Control", "no-cache")
	if notModified(w, r, etag) {
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handlePublicBadge(w http.ResponseWriter, r *http.Request, in *input) {
	if !s.publicAllowed(w, r) {
		return
	}
	svg, err := s.deps.Products.PublicBadge(r.Context(), in.Path("token"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	etag := etagOf(svg)
	w.Header().Set("ETag", etag)
	w.Header().Set("Cache-Control", "public, max-age=3600")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	if notModified(w, r, etag) {
		return
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(svg)
}
