// Package product holds data products (domains): a group of datasets with teams and
// visibility, a status (draft, published, deprecated), a version MAJOR.MINOR whose bump
// publishing computes, and an SLA whose dimension weights the scan pipeline applies to
// the domain's datasets. It aggregates the datasets' verdicts, AI readiness, SLO
// attainment, consumers and metadata quality, and serves the public page and badge of a
// shared domain.
package product

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/event"
	"github.com/vigia-data/vigia/lineage"
	"github.com/vigia-data/vigia/trust"
)

// Share is a domain's public share: an opaque token, stored as its SHA-256 and sealed.
type Share struct {
	DomainID    string
	WorkspaceID string
	TokenHash   []byte
	TokenSealed []byte
	CreatedBy   string
	CreatedAt   time.Time
	RotatedAt   *time.Time
}

// DomainConsumer is a consumer of a data product: registered by hand (source manual,
// may name a notification channel for critical SLA breach notices) or derived from the
// consumer registry (reads of the domain's datasets in the last 30 days).
type DomainConsumer struct {
	ID             string
	DomainID       string
	WorkspaceID    string
	Name           string
	Kind           string // user, ai_system, dbt_exposure, external
	Source         string // manual, derived
	ChannelID      *string
	RegistryKind   *string // agent, application, pipeline, notebook (derived)
	Consumptions30 int
	Datasets30     int
	LastConsumedAt *time.Time
	CreatedBy      string
	CreatedAt      time.Time
}

// DatasetMeta is what the metadata-quality read knows of a dataset.
type DatasetMeta struct {
	ID        string
	Name      string
	HasDomain bool
	HasOwner  bool
}

// Store is the persistence data products need. Reads take the caller's viewer and
// apply the visibility rule: a restricted-access domain, and its datasets, are visible
// only with a team grant (admins see everything).
type Store interface {
	// Refs checks the ids a body names (vigia.CheckRefs).
	vigia.Refs
	// ManagedByConfig tells the domains configuration as code manages.
	vigia.ManagedLookup
	CreateDomain(ctx context.Context, d Domain, datasetIDs []string) error
	// DomainByID returns a domain with its teams, the member datasets v can see and v's
	// grant role; KindNotFound when absent, in another workspace or invisible to v.
	DomainByID(ctx context.Context, v catalog.Viewer, id string) (Domain, error)
	Domains(ctx context.Context, v catalog.Viewer, page vigia.Page) (vigia.List[Domain], error)
	// LockDomain locks the domain row until the transaction in ctx ends.
	LockDomain(ctx context.Context, id string) error
	UpdateDomain(ctx context.Context, d Domain) error
	// ReplaceMembers sets the members v can see to datasetIDs; members v cannot see stay.
	ReplaceMembers(ctx context.Context, v catalog.Viewer, domainID string, datasetIDs []string) error
	ReplaceGrants(ctx context.Context, domainID string, grants []TeamGrant) error
	TeamNames(ctx context.Context, workspaceID string, teamIDs []string) (map[string]string, error)
	// VisibleDatasetNames returns the names of the live datasets among ids v can see.
	VisibleDatasetNames(ctx context.Context, v catalog.Viewer, ids []string) (map[string]string, error)
	// AllMembers lists every member dataset (whoever can see it), by name.
	AllMembers(ctx context.Context, domainID string) ([]SnapshotDataset, error)
	// Versions lists the published versions, newest first.
	Versions(ctx context.Context, domainID string) ([]VersionRow, error)
	InsertVersion(ctx context.Context, r VersionRow) error
	// Coverage lists the finished scans in [from, to) that covered the members v can see.
	Coverage(ctx context.Context, v catalog.Viewer, domainID string, from, to time.Time) ([]Coverage, error)
	WorkspaceTimezone(ctx context.Context, workspaceID string) (string, error)
	Share(ctx context.Context, domainID string) (Share, bool, error)
	SaveShare(ctx context.Context, s Share) error
	DeleteShare(ctx context.Context, domainID string) (bool, error)
	// ShareByHash finds a live share; KindNotFound when none.
	ShareByHash(ctx context.Context, hash []byte) (Share, error)
	ManualConsumers(ctx context.Context, domainID string) ([]DomainConsumer, error)
	AddManualConsumer(ctx context.Context, c DomainConsumer) error
	DeleteManualConsumer(ctx context.Context, domainID, id string) (bool, error)
	// DatasetMeta lists the live datasets v can see with whether they have a domain and
	// an owner (an owner of one of their domains).
	DatasetMeta(ctx context.Context, v catalog.Viewer) ([]DatasetMeta, error)
	// AddActivity appends to the workspace activity log.
	AddActivity(ctx context.Context, a event.Activity) error
	// ScanMemberVerdicts lists every member of the domains holding a dataset whose
	// verdict the scan changed (a dataset.verdict_changed event of the scan), whoever can
	// see them.
	ScanMemberVerdicts(ctx context.Context, workspaceID, scanID string) ([]MemberVerdict, error)
	// InsertDomainVerdictEvent writes the event to the outbox, once per idempotency key.
	InsertDomainVerdictEvent(ctx context.Context, ev DomainVerdictEvent, at time.Time) error
	// DomainLinks returns the workspace's domains, their members and its live datasets.
	DomainLinks(ctx context.Context, workspaceID string) (DomainLinks, error)
	// ManagedDomains returns the domains on which one of the teams has a manager grant.
	ManagedDomains(ctx context.Context, workspaceID string, teamIDs []string) ([]string, error)
}

// Trust is what data products need of the trust feature.
type Trust interface {
	Assess(ctx context.Context, ids []string) (map[string]trust.Assessment, error)
	ConsumersOf(ctx context.Context, datasetIDs []string, since time.Time) ([]trust.Consumer, error)
}

// Lineage is the port to lineage: how many datasets lie downstream of each dataset,
// and the links between datasets (for domain suggestions).
type Lineage interface {
	DownstreamReach(ctx context.Context, datasetIDs []string) (map[string]int, error)
	DatasetLinks(ctx context.Context, workspaceID string) ([]lineage.Edge, error)
}

// Sealer seals share tokens at rest (secret.Box).
type Sealer interface {
	Seal(plaintext, aad []byte) ([]byte, error)
	Open(box, aad []byte) ([]byte, error)
}

// Tx runs a function in a transaction carried by ctx.
type Tx interface {
	InTx(ctx context.Context, fn func(ctx context.Context) error) error
}

// Config bounds the service.
type Config struct {
	// HistoryDays is the workspace history window of SLO reports (365 by default).
	HistoryDays int
	// PublicBaseURL prefixes the share links (empty: paths only).
	PublicBaseURL string
}

// Service manages and reads data products for the principal in ctx.
type Service struct {
	store   Store
	tx      Tx
	trust   Trust
	lineage Lineage
	sealer  Sealer
	clock   vigia.Clock
	cfg     Config
}

// NewService returns the data product service.
func NewService(store Store, tx Tx, tr Trust, lin Lineage, sealer Sealer, clock vigia.Clock, cfg Config) *Service {
	if cfg.HistoryDays <= 0 {
		cfg.HistoryDays = 365
	}
	return &Service{store: store, tx: tx, trust: tr, lineage: lin, sealer: sealer, clock: clock, cfg: cfg}
}

// log writes a domain change to the activity log, in the transaction in ctx.
func (s *Service) log(ctx context.Context, p vigia.Principal, action, domainID string, details map[string]any) error {
	if details == nil {
		details = map[string]any{}
	}
	return s.store.AddActivity(ctx, event.Activity{ID: vigia.NewID(), WorkspaceID: p.WorkspaceID, Actor: p.UserID, Action: action,
		SubjectType: "domain", SubjectID: domainID, Details: details, CreatedAt: s.clock.Now()})
}

// TeamGrantInput is a team's grant in a create or update.
type TeamGrantInput struct {
	TeamID string
	Role   string
}

// DomainInput creates a domain.
type DomainInput struct {
	Name        string
	Description string
	Restricted  bool
	OwnerName   *string
	DatasetIDs  []string
	Teams       []TeamGrantInput
	SLA         SLAPatch
}

// DomainPatch changes a domain; nil and unset fields keep their value.
type DomainPatch struct {
	Name        *string
	Description *string
	OwnerName   Opt[string]
	Restricted  *bool
	DatasetIDs  *[]string
	Teams       *[]TeamGrantInput
	SLA         *SLAPatch
}

func (s *Service) domain(ctx context.Context, id string) (Domain, vigia.Principal, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return Domain{}, p, err
	}
	if !vigia.ValidID(id) {
		return Domain{}, p, vigia.NotFound()
	}
	d, err := s.store.DomainByID(ctx, catalog.ViewerOf(p), id)
	return d, p, err
}

// lockManaged locks the domain row until the transaction in ctx ends (when id is
// well-formed: anything else is not found by managed), then loads it as managed does.
func (s *Service) lockManaged(ctx context.Context, id string) (Domain, vigia.Principal, error) {
	if vigia.ValidID(id) {
		if err := s.store.LockDomain(ctx, id); err != nil {
			return Domain{}, vigia.Principal{}, err
		}
	}
	return s.managed(ctx, id)
}

// managed returns a domain the caller may change: a session of a workspace admin, or
// of a member of a team with the manager grant on it. Returns KindNotFound when the
// caller cannot see the domain, KindForbidden with token_read_only for an API token and
// forbidden for anyone else.
func (s *Service) managed(ctx context.Context, id string) (Domain, vigia.Principal, error) {
	d, p, err := s.domain(ctx, id)
	if err != nil {
		return d, p, err
	}
	if _, err := vigia.RequireSession(ctx, vigia.RoleViewer); err != nil {
		return d, p, err
	}
	if p.Role != vigia.RoleAdmin && d.CallerRole != RoleManager {
		return d, p, vigia.Forbidden(vigia.CodeForbidden, "error.forbidden")
	}
	return d, p, nil
}

// DomainPageDefault is the page size of the domain list when limit is not given.
const DomainPageDefault = 500

// Domains lists the domains the caller can see, by name.
func (s *Service) Domains(ctx context.Context, page vigia.Page) (vigia.List[Domain], error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return vigia.List[Domain]{}, err
	}
	if err := page.Validate(); err != nil {
		return vigia.List[Domain]{}, err
	}
	return s.store.Domains(ctx, catalog.ViewerOf(p), page)
}

// Domain returns one domain. Returns KindNotFound when it does not exist, is in another
// workspace or is a restricted-access domain the caller has no grant on.
func (s *Service) Domain(ctx context.Context, id string) (Domain, error) {
	d, _, err := s.domain(ctx, id)
	return d, err
}

func (s *Service) validateText(name, description *string, owner Opt[string]) []vigia.FieldError {
	var fields []vigia.FieldError
	if name != nil {
		switch n := strings.TrimSpace(*name); {
		case n == "":
			fields = append(fields, vigia.Field("string_too_short", map[string]any{"min_length": 1}, "name"))
		case !validText(n, maxDomainName) || strings.ContainsAny(n, "\n\t"):
			fields = append(fields, vigia.Field("string_too_long", map[string]any{"max_length": maxDomainName}, "name"))
		}
	}
	if description != nil && !validText(*description, maxDescription) {
		fields = append(fields, vigia.Field("string_too_long", map[string]any{"max_length": maxDescription}, "description"))
	}
	if owner.Set && owner.Value != nil {
		o := strings.TrimSpace(*owner.Value)
		switch {
		case o == "":
			fields = append(fields, vigia.Field("string_too_short", map[string]any{"min_length": 1}, "owner_name"))
		case !validText(o, maxOwnerName) || strings.ContainsAny(o, "\n\t"):
			fields = append(fields, vigia.Field("string_too_long", map[string]any{"max_length": maxOwnerName}, "owner_name"))
		case strings.Contains(o, "@"):
			// An owner is shown on the public page: a name, never an email address.
			fields = append(fields, vigia.Field("owner_name_email", nil, "owner_name"))
		}
	}
	return fields
}

// grants checks team grants: known teams of the workspace, role member or manager.
func (s *Service) grants(ctx context.Context, workspaceID string, in []TeamGrantInput) ([]TeamGrant, error) {
	ids := make([]string, 0, len(in))
	for i, g := range in {
		if g.Role == "" {
			in[i].Role = RoleMember
		} else if g.Role != RoleMember && g.Role != RoleManager {
			return nil, vigia.Invalid(vigia.Field("enum", nil, "teams", "role"))
		}
		if !vigia.ValidID(g.TeamID) {
			return nil, vigia.NotFound()
		}
		ids = append(ids, g.TeamID)
	}
	names, err := s.store.TeamNames(ctx, workspaceID, ids)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	out := make([]TeamGrant, 0, len(in))
	for _, g := range in {
		name, ok := names[g.TeamID]
		if !ok {
			return nil, vigia.NotFound()
		}
		if seen[g.TeamID] {
			continue
		}
		seen[g.TeamID] = true
		out = append(out, TeamGrant{TeamID: g.TeamID, TeamName: name, Role: g.Role})
	}
	return out, nil
}

// members checks that the caller can see every dataset among ids (KindNotFound
// otherwise) and returns them without duplicates.
func (s *Service) members(ctx context.Context, v catalog.Viewer, ids []string) ([]string, error) {
	if len(ids) > maxDatasetsEdit {
		return nil, vigia.Invalid(vigia.Field("too_long", map[string]any{"max_length": maxDatasetsEdit}, "dataset_ids"))
	}
	uniq := make([]string, 0, len(ids))
	seen := map[string]bool{}
	for _, id := range ids {
		if !vigia.ValidID(id) {
			return nil, vigia.NotFound()
		}
		if !seen[id] {
			seen[id] = true
			uniq = append(uniq, id)
		}
	}
	if len(uniq) == 0 {
		return uniq, nil
	}
	names, err := s.store.VisibleDatasetNames(ctx, v, uniq)
	if err != nil {
		return nil, err
	}
	if len(names) != len(uniq) {
		return nil, vigia.NotFound()
	}
	return uniq, nil
}

// CreateDomain creates a draft domain (version 0.0 until its first publication) with
// its datasets, team grants and SLA: a session of a workspace admin. Returns
// KindInvalid for bad fields, KindNotFound for a dataset or team the caller cannot see,
// KindConflict (already_exists) for a taken name, and KindForbidden for tokens
// (token_read_only) and non-admins.
func (s *Service) CreateDomain(ctx context.Context, in DomainInput) (Domain, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleAdmin)
	if err != nil {
		return Domain{}, err
	}
	fields := s.validateText(&in.Name, &in.Description, Opt[string]{Set: in.OwnerName != nil, Value: in.OwnerName})
	sla, err := in.SLA.apply(SLA{DimensionTargets: map[string]float64{}}, "sla")
	if err != nil {
		fields = append(fields, vigia.AsError(err).Fields...)
	}
	if len(fields) > 0 {
		return Domain{}, vigia.Invalid(fields...)
	}
	now := s.clock.Now()
	d := Domain{ID: vigia.NewID(), WorkspaceID: p.WorkspaceID, Name: strings.TrimSpace(in.Name), Description: strings.TrimSpace(in.Description),
		Restricted: in.Restricted, Status: StatusDraft, OwnerName: trimmed(in.OwnerName), SLA: sla, CreatedAt: now, UpdatedAt: now}
	err = s.tx.InTx(ctx, func(ctx context.Context) error {
		ids, err := s.members(ctx, catalog.ViewerOf(p), in.DatasetIDs)
		if err != nil {
			return err
		}
		grants, err := s.grants(ctx, p.WorkspaceID, in.Teams)
		if err != nil {
			return err
		}
		if err := s.store.CreateDomain(ctx, d, ids); err != nil {
			return err
		}
		if err := s.store.ReplaceGrants(ctx, d.ID, grants); err != nil {
			return err
		}
		return s.log(ctx, p, "domain.created", d.ID, map[string]any{"restricted": d.Restricted, "datasets": len(ids), "teams": len(grants)})
	})
	if err != nil {
		return Domain{}, err
	}
	return s.store.DomainByID(ctx, catalog.ViewerOf(p), d.ID)
}

// UpdateDomain changes a domain's name, description, owner, datasets and SLA (a
// manager's or admin's session); its access (restricted, teams) only an admin's. SLA
// fields not sent keep their value, null clears one; new dimension weights apply to the
// domain's datasets from their next scan. Returns KindInvalid for bad fields (unknown
// dimension, weights not summing to 100, bounds), KindNotFound for an invisible domain,
// dataset or team, KindForbidden for tokens and people who may not manage it, and
// KindConflict (managed_by_config) for a domain configuration as code manages, outside
// apply.
func (s *Service) UpdateDomain(ctx context.Context, id string, patch DomainPatch) (Domain, error) {
	var out Domain
	err := s.tx.InTx(ctx, func(ctx context.Context) error {
		d, p, err := s.lockManaged(ctx, id)
		if err != nil {
			return err
		}
		if err := vigia.RefuseManaged(ctx, s.store, p.WorkspaceID, vigia.ManagedDomain, d.ID); err != nil {
			return err
		}
		before := d
		before.SLA = d.SLA.Clone()
		if (patch.Restricted != nil || patch.Teams != nil) && p.Role != vigia.RoleAdmin {
			return vigia.Forbidden(vigia.CodeForbidden, "error.forbidden")
		}
		fields := s.validateText(patch.Name, patch.Description, patch.OwnerName)
		if patch.SLA != nil {
			sla, err := patch.SLA.apply(d.SLA, "sla")
			if err != nil {
				fields = append(fields, vigia.AsError(err).Fields...)
			}
			d.SLA = sla
		}
		if len(fields) > 0 {
			return vigia.Invalid(fields...)
		}
		if err := s.ensureBaseline(ctx, before); err != nil {
			return err
		}
		if patch.Name != nil {
			d.Name = strings.TrimSpace(*patch.Name)
		}
		if patch.Description != nil {
			d.Description = strings.TrimSpace(*patch.Description)
		}
		if patch.OwnerName.Set {
			d.OwnerName = trimmed(patch.OwnerName.Value)
		}
		if patch.Restricted != nil {
			d.Restricted = *patch.Restricted
		}
		d.UpdatedAt = s.clock.Now()
		if err := s.store.UpdateDomain(ctx, d); err != nil {
			return err
		}
		if patch.DatasetIDs != nil {
			ids, err := s.members(ctx, catalog.ViewerOf(p), *patch.DatasetIDs)
			if err != nil {
				return err
			}
			if err := s.store.ReplaceMembers(ctx, catalog.ViewerOf(p), d.ID, ids); err != nil {
				return err
			}
		}
		if patch.Teams != nil {
			grants, err := s.grants(ctx, p.WorkspaceID, *patch.Teams)
			if err != nil {
				return err
			}
			if err := s.store.ReplaceGrants(ctx, d.ID, grants); err != nil {
				return err
			}
		}
		changed := []string{}
		for name, set := range map[string]bool{"name": patch.Name != nil, "description": patch.Description != nil,
			"owner_name": patch.OwnerName.Set, "restricted": patch.Restricted != nil, "dataset_ids": patch.DatasetIDs != nil,
			"teams": patch.Teams != nil, "sla": patch.SLA != nil} {
			if set {
				changed = append(changed, name)
			}
		}
		sort.Strings(changed)
		if err := s.log(ctx, p, "domain.updated", d.ID, map[string]any{"fields": changed}); err != nil {
			return err
		}
		out, err = s.store.DomainByID(ctx, catalog.ViewerOf(p), d.ID)
		return err
	})
	return out, err
}

// snapshot is the domain's current state as a version would keep it.
func (s *Service) snapshot(ctx context.Context, d Domain) (Snapshot, error) {
	members, err := s.store.AllMembers(ctx, d.ID)
	if err != nil {
		return Snapshot{}, err
	}
	return Snapshot{Name: d.Name, Description: d.Description, OwnerName: d.OwnerName, Restricted: d.Restricted,
		Status: StatusPublished, SLA: d.SLA.Clone(), Datasets: members}, nil
}

// ensureBaseline records, before a published domain's first change, the version it is
// at when no version was ever recorded (a domain created outside this feature, e.g.
// published at 1.0 before data products existed): its current state becomes that
// version's snapshot, so that the next publication compares with it.
func (s *Service) ensureBaseline(ctx context.Context, d Domain) error {
	if d.Status == StatusDraft || d.Version.IsZero() {
		return nil
	}
	versions, err := s.store.Versions(ctx, d.ID)
	if err != nil || len(versions) > 0 {
		return err
	}
	snap, err := s.snapshot(ctx, d)
	if err != nil {
		return err
	}
	at := d.CreatedAt
	if d.PublishedAt != nil {
		at = *d.PublishedAt
	}
	return s.store.InsertVersion(ctx, VersionRow{DomainID: d.ID, WorkspaceID: d.WorkspaceID, Version: d.Version, Bump: BumpInitial,
		ChangeSummary: SummaryPT(BumpInitial, nil), Changes: []Change{}, Snapshot: snap, Counts: CountsOf(snap, nil),
		PublishedAt: at, PublishedBy: "baseline"})
}

// Publish publishes the domain's current state as a new version: the first publication
// is 1.0 (bump initial); later ones compare with the last version and bump major when a
// change breaks consumers (a dataset left, an active-contract column vanished, the SLA
// weakened, the weights changed, a target lowered or removed), minor otherwise;
// republishing a deprecated domain without changes is a minor bump. A manager's or
// admin's session. Returns KindConflict (domain_unchanged) when a published domain has
// not changed since its last version, KindNotFound and KindForbidden as UpdateDomain.
func (s *Service) Publish(ctx context.Context, id string) (Domain, VersionRow, error) {
	var out Domain
	var row VersionRow
	err := s.tx.InTx(ctx, func(ctx context.Context) error {
		d, p, err := s.lockManaged(ctx, id)
		if err != nil {
			return err
		}
		if err := s.ensureBaseline(ctx, d); err != nil {
			return err
		}
		curr, err := s.snapshot(ctx, d)
		if err != nil {
			return err
		}
		versions, err := s.store.Versions(ctx, d.ID)
		if err != nil {
			return err
		}
		now := s.clock.Now()
		row = VersionRow{DomainID: d.ID, WorkspaceID: d.WorkspaceID, Snapshot: curr, PublishedAt: now, PublishedBy: p.UserID}
		if len(versions) == 0 {
			row.Bump, row.Changes = BumpInitial, []Change{}
		} else {
			row.Changes = Diff(versions[0].Snapshot, curr)
			row.Bump = BumpOf(row.Changes)
			if row.Bump == BumpNone {
				if d.Status != StatusDeprecated {
					return vigia.Conflict("domain_unchanged", "error.domain_unchanged", nil)
				}
				row.Changes = []Change{change(ChangeRepublished)}
				row.Bump = BumpMinor
			}
		}
		base := d.Version
		if len(versions) > 0 && base.Less(versions[0].Version) {
			base = versions[0].Version
		}
		row.Version = Next(base, row.Bump)
		row.ChangeSummary = SummaryPT(row.Bump, row.Changes)
		row.Counts = CountsOf(curr, row.Changes)
		if err := s.store.InsertVersion(ctx, row); err != nil {
			return err
		}
		d.Status, d.Version, d.PublishedAt, d.UpdatedAt = StatusPublished, row.Version, &now, now
		if err := s.store.UpdateDomain(ctx, d); err != nil {
			return err
		}
		if err := s.log(ctx, p, "domain.published", d.ID, map[string]any{"version": row.Version.String(), "bump": row.Bump}); err != nil {
			return err
		}
		out, err = s.store.DomainByID(ctx, catalog.ViewerOf(p), d.ID)
		return err
	})
	return out, row, err
}

// Deprecate marks a published domain deprecated: it keeps its version and its datasets,
// and every use case of its readiness gets the blocker deprecated. A manager's or
// admin's session. Returns KindConflict (domain_state) when the domain is not published.
func (s *Service) Deprecate(ctx context.Context, id string) (Domain, error) {
	var out Domain
	err := s.tx.InTx(ctx, func(ctx context.Context) error {
		d, p, err := s.lockManaged(ctx, id)
		if err != nil {
			return err
		}
		if d.Status != StatusPublished {
			return vigia.Conflict("domain_state", "error.domain_state", map[string]any{"status": d.Status})
		}
		d.Status, d.UpdatedAt = StatusDeprecated, s.clock.Now()
		if err := s.store.UpdateDomain(ctx, d); err != nil {
			return err
		}
		if err := s.log(ctx, p, "domain.deprecated", d.ID, map[string]any{"version": d.Version.String()}); err != nil {
			return err
		}
		out, err = s.store.DomainByID(ctx, catalog.ViewerOf(p), d.ID)
		return err
	})
	return out, err
}

// Versions lists the domain's published versions, newest first.
func (s *Service) Versions(ctx context.Context, id string) ([]VersionRow, error) {
	d, _, err := s.domain(ctx, id)
	if err != nil {
		return nil, err
	}
	return s.store.Versions(ctx, d.ID)
}

// VersionPage lists one page of the domain's published versions, newest first.
// Returns KindNotFound for a domain the caller cannot see.
func (s *Service) VersionPage(ctx context.Context, id string, page vigia.Page) (vigia.List[VersionRow], error) {
	vs, err := s.Versions(ctx, id)
	if err != nil {
		return vigia.List[VersionRow]{}, err
	}
	return paginate(vs, page), nil
}

// paginate cuts one page out of a full list.
func paginate[T any](all []T, page vigia.Page) vigia.List[T] {
	out := vigia.List[T]{Total: len(all), Items: []T{}}
	if page.Offset < len(all) {
		end := len(all)
		if page.Limit > 0 && page.Offset+page.Limit < end {
			end = page.Offset + page.Limit
		}
		out.Items = all[page.Offset:end]
	}
	return out
}

// DiffResult is the answer of /versions/{from}/diff/{to}.
type DiffResult struct {
	DomainID string
	// From is the source version (nil: latest of a domain never published).
	From *Version
	// To is the target version, or nil for current.
	To      *Version
	Bump    string
	Changes []Change
	Counts  Counts
	// NextVersion is the version publishing now would create (to = current only; nil
	// when nothing changed).
	NextVersion *Version
}

// DiffVersions compares two versions of a domain: from is a version or latest, to a
// version or current (the domain as it is now, with next_version). Dataset changes the
// caller cannot see are reported without id or name. Returns KindInvalid for a
// malformed version, current as source or latest as target, and KindNotFound for an
// unknown version or an invisible domain.
func (s *Service) DiffVersions(ctx context.Context, id, from, to string) (DiffResult, error) {
	var fields []vigia.FieldError
	fromV, fromOK := ParseVersion(from)
	switch {
	case from == "current":
		fields = append(fields, vigia.Field("version_current_as_source", nil, "from_version"))
	case from != "latest" && !fromOK:
		fields = append(fields, vigia.Field("version_format", nil, "from_version"))
	}
	toV, toOK := ParseVersion(to)
	switch {
	case to == "latest":
		fields = append(fields, vigia.Field("version_latest_as_target", nil, "to_version"))
	case to != "current" && !toOK:
		fields = append(fields, vigia.Field("version_format", nil, "to_version"))
	}
	if len(fields) > 0 {
		return DiffResult{}, vigia.Invalid(fields...)
	}
	d, p, err := s.domain(ctx, id)
	if err != nil {
		return DiffResult{}, err
	}
	versions, err := s.store.Versions(ctx, d.ID)
	if err != nil {
		return DiffResult{}, err
	}
	find := func(v Version) (VersionRow, bool) {
		for _, r := range versions {
			if r.Version == v {
				return r, true
			}
		}
		return VersionRow{}, false
	}
	out := DiffResult{DomainID: d.ID}
	var base Snapshot
	var baseVersion Version
	switch {
	case from == "latest" && len(versions) == 0 && (d.Status == StatusDraft || d.Version.IsZero()):
		base = Snapshot{Datasets: []SnapshotDataset{}}
	case from == "latest" && len(versions) == 0:
		// A published domain without recorded versions: its current state is its version.
		if base, err = s.snapshot(ctx, d); err != nil {
			return DiffResult{}, err
		}
		baseVersion = d.Version
		out.From = &baseVersion
	case from == "latest":
		base, baseVersion = versions[0].Snapshot, versions[0].Version
		out.From = &baseVersion
	default:
		r, ok := find(fromV)
		if !ok {
			return DiffResult{}, vigia.NotFound()
		}
		base, baseVersion = r.Snapshot, r.Version
		out.From = &baseVersion
	}
	var target Snapshot
	if to == "current" {
		if target, err = s.snapshot(ctx, d); err != nil {
			return DiffResult{}, err
		}
	} else {
		r, ok := find(toV)
		if !ok {
			return DiffResult{}, vigia.NotFound()
		}
		target = r.Snapshot
		tv := r.Version
		out.To = &tv
	}
	out.Changes = Diff(base, target)
	out.Bump = BumpOf(out.Changes)
	if out.From == nil {
		out.Bump = BumpInitial
	}
	if from == "latest" && to == "current" {
		if out.Bump == BumpNone && d.Status == StatusDeprecated {
			out.Bump, out.Changes = BumpMinor, []Change{change(ChangeRepublished)}
		}
		if out.Bump != BumpNone {
			cur := d.Version
			if out.From != nil && cur.Less(*out.From) {
				cur = *out.From
			}
			nv := Next(cur, out.Bump)
			out.NextVersion = &nv
		}
	}
	out.Counts = CountsOf(target, out.Changes)
	// Hide datasets the caller cannot see.
	ids := []string{}
	for _, c := range out.Changes {
		if c.DatasetID != "" {
			ids = append(ids, c.DatasetID)
		}
	}
	if len(ids) > 0 {
		visible, err := s.store.VisibleDatasetNames(ctx, catalog.ViewerOf(p), ids)
		if err != nil {
			return DiffResult{}, err
		}
		for i, c := range out.Changes {
			if c.DatasetID != "" {
				if _, ok := visible[c.DatasetID]; !ok {
					out.Changes[i].DatasetID, out.Changes[i].DatasetName, out.Changes[i].Column = "", "", ""
					out.Changes[i].Restricted = true
				}
			}
		}
	}
	return out, nil
}
