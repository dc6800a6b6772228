package compliance

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/plan"
)

// Risk categories of the EU AI Act a system is registered with.
const (
	RiskHigh    = "high"
	RiskLimited = "limited"
	RiskMinimal = "minimal"
	RiskUnknown = "unknown"
)

// RiskCategories lists them.
var RiskCategories = []string{RiskHigh, RiskLimited, RiskMinimal, RiskUnknown}

// Dataset uses by an AI system.
const (
	UseTraining   = "training"
	UseValidation = "validation"
	UseTesting    = "testing"
	UseRetrieval  = "retrieval"
	UseInput      = "input"
)

// Uses lists them.
var Uses = []string{UseTraining, UseValidation, UseTesting, UseRetrieval, UseInput}

// Where a system, or one of its dataset links, comes from.
const (
	OriginRegistered     = "registered"      // registered with POST /compliance/ai-systems
	OriginDomainConsumer = "domain_consumer" // a consumer of kind ai_system of a domain: the domain's datasets, use input
	OriginConsumption    = "consumption"     // reads recorded through POST /trust/consumptions for purposes treino (training) or rag (retrieval)
)

// System gap codes (besides the datasets' own gaps).
const (
	GapNoDatasets          = "no_datasets"
	GapRiskNotClassified   = "risk_not_classified"
	GapNoIntendedPurpose   = "no_intended_purpose"
	GapRestrictedDatasets  = "datasets_not_visible"
	GapTrainingNotProfiled = "training_data_not_profiled"
)

// ConsumptionWindow is how far back recorded reads make a consumer an AI system's feed.
const ConsumptionWindow = 90 * 24 * time.Hour

// Limits of a registration.
const (
	MaxSystemName     = 200
	MaxSystemText     = 2000
	MaxSystemDatasets = 200
)

// RegisteredSystem is a system registered by a person.
type RegisteredSystem struct {
	ID, Name        string
	IntendedPurpose string
	Provider        string
	RiskCategory    string
	CreatedBy       string
	CreatedAt       time.Time
}

// SystemLink is one dataset an AI system uses, as one origin tells it. SystemID is set for
// registered links; derived links carry the name only.
type SystemLink struct {
	SystemID   string
	SystemName string
	DatasetID  string
	Use        string
	Origin     string
	// Via names the domain (domain_consumer) or the consumer kind (consumption).
	Via string
}

// AISystemStore keeps the register.
type AISystemStore interface {
	// AISystems reads the registered systems and every link (registered, from domain
	// consumers of kind ai_system, from reads since the given time) of the workspace.
	AISystems(ctx context.Context, workspaceID string, readsSince time.Time) ([]RegisteredSystem, []SystemLink, error)
	// CreateAISystem stores a registered system with its links; KindConflict
	// (ai_system_exists) when the name is taken.
	CreateAISystem(ctx context.Context, workspaceID string, s RegisteredSystem, links []SystemLink) error
	// DeleteAISystem removes a registered system; KindNotFound when absent.
	DeleteAISystem(ctx context.Context, workspaceID, id string) error
}

// AISystemDataset is one dataset of a system with how it is used.
type AISystemDataset struct {
	Dataset
	Uses    []string
	Origins []string
	Via     []string
}

// AISystem is one system of the register with its Article 10 facts.
type AISystem struct {
	ID              string
	Name            string
	Registered      bool
	Origins         []string
	IntendedPurpose string
	Provider        string
	RiskCategory    string
	CreatedBy       string
	CreatedAt       *time.Time
	// Datasets are those the caller can see; HiddenDatasets counts the others.
	Datasets       []AISystemDataset
	HiddenDatasets int
	Gaps           []string
	// GapCounts counts the system's datasets per dataset gap code.
	GapCounts map[string]int
}

// AISystemInput registers a system.
type AISystemInput struct {
	Name            string
	IntendedPurpose string
	Provider        string
	RiskCategory    string
	Datasets        []DatasetUse
}

// DatasetUse is one dataset a registered system uses.
type DatasetUse struct {
	DatasetID string
	Use       string
}

// SystemID is the id of a system known only through its consumers: the same for the same
// name (case-insensitive) in the same workspace, in the form of every id.
func SystemID(workspaceID, name string) string {
	h := sha256.Sum256([]byte("ai_system\x00" + workspaceID + "\x00" + strings.ToLower(name)))
	h[6] = h[6]&0x0f | 0x50
	h[8] = h[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

// AISystems lists a page of the register: the registered systems and those known
// through their consumers, by name; business plan (402 plan_limit otherwise).
func (s *Service) AISystems(ctx context.Context, page vigia.Page) (vigia.List[AISystem], error) {
	if err := page.Validate(); err != nil {
		return vigia.List[AISystem]{}, err
	}
	systems, _, err := s.register(ctx)
	if err != nil {
		return vigia.List[AISystem]{}, err
	}
	out := vigia.List[AISystem]{Total: len(systems), Items: []AISystem{}}
	if page.Offset < len(systems) {
		out.Items = systems[page.Offset:min(page.Offset+page.Limit, len(systems))]
	}
	return out, nil
}

// AISystem returns one system of the register with the Article 10 facts of its datasets;
// KindNotFound when no system has the id in the caller's workspace.
func (s *Service) AISystem(ctx context.Context, id string) (AISystem, error) {
	systems, _, err := s.register(ctx)
	if err != nil {
		return AISystem{}, err
	}
	for _, x := range systems {
		if x.ID == id {
			return x, nil
		}
	}
	return AISystem{}, vigia.NotFound()
}

// RegisterAISystem registers a system (member or admin session); datasets the caller
// cannot see are 404; KindInvalid for a bad body, KindConflict (ai_system_exists) for a
// name already registered.
func (s *Service) RegisterAISystem(ctx context.Context, in AISystemInput) (AISystem, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleMember)
	if err != nil {
		return AISystem{}, err
	}
	if err := s.plans.Require(ctx, plan.ComplianceDossiers); err != nil {
		return AISystem{}, err
	}
	in.Name = strings.TrimSpace(in.Name)
	var fields []vigia.FieldError
	if in.Name == "" {
		fields = append(fields, vigia.Field("string_too_short", map[string]any{"min_length": 1}, "name"))
	} else if utf8.RuneCountInString(in.Name) > MaxSystemName {
		fields = append(fields, vigia.Field("string_too_long", map[string]any{"max_length": MaxSystemName}, "name"))
	}
	for _, f := range []struct {
		v, name string
		max     int
	}{{in.IntendedPurpose, "intended_purpose", MaxSystemText}, {in.Provider, "provider", MaxSystemName}} {
		if utf8.RuneCountInString(f.v) > f.max {
			fields = append(fields, vigia.Field("string_too_long", map[string]any{"max_length": f.max}, f.name))
		}
	}
	if in.RiskCategory == "" {
		in.RiskCategory = RiskUnknown
	}
	if !slices.Contains(RiskCategories, in.RiskCategory) {
		fields = append(fields, vigia.Field("enum", nil, "risk_category"))
	}
	if len(in.Datasets) > MaxSystemDatasets {
		fields = append(fields, vigia.Field("too_long", map[string]any{"max_length": MaxSystemDatasets}, "datasets"))
	}
	for i, d := range in.Datasets {
		if !slices.Contains(Uses, d.Use) {
			fields = append(fields, vigia.Field("enum", nil, "datasets", fmt.Sprint(i), "use"))
		}
	}
	if len(fields) > 0 {
		return AISystem{}, vigia.Invalid(fields...)
	}
	v := catalog.ViewerOf(p)
	visible, err := s.visibleIDs(ctx, v)
	if err != nil {
		return AISystem{}, err
	}
	sys := RegisteredSystem{ID: vigia.NewID(), Name: in.Name, IntendedPurpose: in.IntendedPurpose, Provider: in.Provider,
		RiskCategory: in.RiskCategory, CreatedBy: "user:" + p.UserID, CreatedAt: s.clock.Now().UTC()}
	links := make([]SystemLink, 0, len(in.Datasets))
	seen := map[[2]string]bool{}
	for _, d := range in.Datasets {
		if !visible[d.DatasetID] {
			return AISystem{}, vigia.NotFound()
		}
		if k := [2]string{d.DatasetID, d.Use}; !seen[k] {
			seen[k] = true
			links = append(links, SystemLink{SystemID: sys.ID, SystemName: sys.Name, DatasetID: d.DatasetID, Use: d.Use, Origin: OriginRegistered})
		}
	}
	if err := s.aiStore.CreateAISystem(ctx, p.WorkspaceID, sys, links); err != nil {
		return AISystem{}, err
	}
	return s.AISystem(ctx, sys.ID)
}

// DeleteAISystem removes a registered system (admin session); systems known through
// their consumers stay while their consumers do. KindNotFound when no registered system
// has the id.
func (s *Service) DeleteAISystem(ctx context.Context, id string) error {
	p, err := vigia.RequireSession(ctx, vigia.RoleAdmin)
	if err != nil {
		return err
	}
	if err := s.plans.Require(ctx, plan.ComplianceDossiers); err != nil {
		return err
	}
	if !vigia.ValidID(id) {
		return vigia.NotFound()
	}
	return s.aiStore.DeleteAISystem(ctx, p.WorkspaceID, id)
}

func (s *Service) visibleIDs(ctx context.Context, v catalog.Viewer) (map[string]bool, error) {
	facts, err := s.store.Art10Facts(ctx, v)
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(facts))
	for _, f := range facts {
		out[f.ID] = true
	}
	return out, nil
}

// register builds the whole register for the caller.
func (s *Service) register(ctx context.Context) ([]AISystem, map[string]Dataset, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return nil, nil, err
	}
	if err := s.plans.Require(ctx, plan.ComplianceDossiers); err != nil {
		return nil, nil, err
	}
	dossier, err := s.Art10(ctx)
	if err != nil {
		return nil, nil, err
	}
	byID := make(map[string]Dataset, len(dossier.Datasets))
	for _, d := range dossier.Datasets {
		byID[d.ID] = d
	}
	regs, links, err := s.aiStore.AISystems(ctx, p.WorkspaceID, s.clock.Now().Add(-ConsumptionWindow))
	if err != nil {
		return nil, nil, err
	}
	return BuildRegister(p.WorkspaceID, regs, links, byID), byID, nil
}

// BuildRegister merges registered systems and links (a derived link joins the registered
// system of the same name, case-insensitive) and judges each system over the datasets in
// visible (the caller's; others are only counted). Systems come by name.
func BuildRegister(workspaceID string, regs []RegisteredSystem, links []SystemLink, visible map[string]Dataset) []AISystem {
	type entry struct {
		sys      AISystem
		datasets map[string]*AISystemDataset
		hidden   map[string]bool
	}
	byName := map[string]*entry{}
	var order []*entry
	get := func(name string) *entry {
		k := strings.ToLower(name)
		e := byName[k]
		if e == nil {
			e = &entry{sys: AISystem{ID: SystemID(workspaceID, name), Name: name, RiskCategory: RiskUnknown},
				datasets: map[string]*AISystemDataset{}, hidden: map[string]bool{}}
			byName[k] = e
			order = append(order, e)
		}
		return e
	}
	for _, r := range regs {
		e := get(r.Name)
		at := r.CreatedAt
		e.sys.ID, e.sys.Name, e.sys.Registered = r.ID, r.Name, true
		e.sys.IntendedPurpose, e.sys.Provider, e.sys.RiskCategory = r.IntendedPurpose, r.Provider, r.RiskCategory
		e.sys.CreatedBy, e.sys.CreatedAt = r.CreatedBy, &at
		e.sys.Origins = appendOnce(e.sys.Origins, OriginRegistered)
	}
	for _, l := range links {
		e := get(l.SystemName)
		e.sys.Origins = appendOnce(e.sys.Origins, l.Origin)
		d, ok := visible[l.DatasetID]
		if !ok {
			e.hidden[l.DatasetID] = true
			continue
		}
		sd := e.datasets[l.DatasetID]
		if sd == nil {
			sd = &AISystemDataset{Dataset: d}
			e.datasets[l.DatasetID] = sd
		}
		sd.Uses = appendOnce(sd.Uses, l.Use)
		sd.Origins = appendOnce(sd.Origins, l.Origin)
		if l.Via != "" {
			sd.Via = appendOnce(sd.Via, l.Via)
		}
	}
	out := make([]AISystem, 0, len(order))
	for _, e := range order {
		x := e.sys
		x.Datasets = []AISystemDataset{}
		x.GapCounts = map[string]int{}
		x.Gaps = []string{}
		for _, d := range e.datasets {
			sort.Strings(d.Uses)
			sort.Strings(d.Origins)
			sort.Strings(d.Via)
			x.Datasets = append(x.Datasets, *d)
			for _, g := range d.Gaps {
				x.GapCounts[g]++
			}
		}
		sort.Slice(x.Datasets, func(i, j int) bool {
			if x.Datasets[i].Name != x.Datasets[j].Name {
				return x.Datasets[i].Name < x.Datasets[j].Name
			}
			return x.Datasets[i].ID < x.Datasets[j].ID
		})
		x.HiddenDatasets = len(e.hidden)
		sort.Strings(x.Origins)
		add := func(ok bool, code string) {
			if ok {
				x.Gaps = append(x.Gaps, code)
			}
		}
		add(len(x.Datasets)+x.HiddenDatasets == 0, GapNoDatasets)
		add(x.RiskCategory == RiskUnknown, GapRiskNotClassified)
		add(strings.TrimSpace(x.IntendedPurpose) == "", GapNoIntendedPurpose)
		add(x.HiddenDatasets > 0, GapRestrictedDatasets)
		training := false
		for _, d := range x.Datasets {
			if slices.Contains(d.Uses, UseTraining) && !d.Profiled {
				training = true
			}
		}
		add(training, GapTrainingNotProfiled)
		out = append(out, x)
	}
	sort.SliceStable(out, func(i, j int) bool { return strings.ToLower(out[i].Name) < strings.ToLower(out[j].Name) })
	return out
}

func appendOnce(l []string, v string) []string {
	if slices.Contains(l, v) {
		return l
	}
	return append(l, v)
}

// CodeSystemExists is the 409 code of a name already registered.
const CodeSystemExists = "ai_system_exists"
