// Package contract holds data contracts in the Open Data Contract Standard (ODCS v3):
// the observed contract a dataset's data honours now, producer proposals (from the
// observed contract or an uploaded document) with comments, their acceptance by domain
// managers or admins into numbered versions (semver: major when a change breaks the
// contract), diffs between versions, the check of the active contract after every scan
// (a violation opens an issue of type contract and makes the trust decision's
// contract.valid false), the effect of schema changes on it, and its dbt rendering.
package contract

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/event"
	"github.com/vigia-data/vigia/product"
	"github.com/vigia-data/vigia/rule"
)

// Proposal statuses.
const (
	ProposalOpen      = "open"
	ProposalAccepted  = "accepted"
	ProposalRejected  = "rejected"
	ProposalWithdrawn = "withdrawn"
)

// Proposal origins.
const (
	OriginObserved = "observed"
	OriginDocument = "document"
)

// Sources of a contract read.
const (
	SourceObserved = "observed"
	SourceActive   = "active"
)

// Bounds of proposals and comments.
const (
	MaxSummary     = 2000 // characters of a proposal's summary and a decision's note
	MaxComment     = 5000 // characters of a comment
	PageDefault    = 100  // versions and proposals per page when limit is not given
	MaxDocumentLen = 1 << 20
)

// VersionRecord is an accepted contract version.
type VersionRecord struct {
	ID          string
	WorkspaceID string
	DatasetID   string
	Number      Version
	Bump        string
	Document    Document
	Changes     []Change
	Summary     string
	ProposalID  *string
	AuthorID    string // who proposed it
	AcceptedBy  string
	CreatedAt   time.Time
}

// Proposal is a contract proposed for a dataset, in review until accepted, rejected or
// withdrawn.
type Proposal struct {
	ID          string
	WorkspaceID string
	DatasetID   string
	Status      string
	Origin      string
	Summary     string
	Document    Document
	AuthorID    string
	CreatedAt   time.Time
	UpdatedAt   time.Time
	DecidedBy   *string
	DecidedAt   *time.Time
	Note        *string
	Version     *string // the version an accepted proposal became
	Comments    []Comment
	// Changes and Bump compare the proposal with the active contract at read time.
	Changes []Change
	Bump    string
}

// Comment is a comment on a proposal.
type Comment struct {
	ID         string
	ProposalID string
	AuthorID   string
	Body       string
	CreatedAt  time.Time
}

// Subject is a dataset with an active contract, as a check after a scan reads it.
type Subject struct {
	WorkspaceID string
	DatasetID   string
	DatasetName string
	Active      VersionRecord
	Columns     []catalog.Column
	Rules       []RuleState
}

// CheckResult is the outcome of checking one dataset against its active contract.
type CheckResult struct {
	WorkspaceID string
	DatasetID   string
	DatasetName string
	ScanID      *string
	Version     string
	Violations  []Violation
	At          time.Time
}

// State is a dataset's contract state for trust: an accepted version exists, and the
// last check honoured it (true while none ran).
type State struct {
	Active     bool
	Valid      bool
	Version    string
	Violations []Violation
	CheckedAt  *time.Time
}

// Store is the persistence of contracts. Reads are scoped by the dataset the service
// already checked the caller may see.
type Store interface {
	DatasetDomains(ctx context.Context, datasetID string) ([]DomainInfo, error)
	// ActiveVersion returns the newest version; false when none was accepted.
	ActiveVersion(ctx context.Context, datasetID string) (VersionRecord, bool, error)
	// ActiveVersions returns the newest version of each dataset among ids that has one.
	ActiveVersions(ctx context.Context, datasetIDs []string) (map[string]VersionRecord, error)
	// Versions lists a dataset's versions, newest first.
	Versions(ctx context.Context, datasetID string, page vigia.Page) (vigia.List[VersionRecord], error)
	// VersionByNumber returns one version; KindNotFound when absent.
	VersionByNumber(ctx context.Context, datasetID string, v Version) (VersionRecord, error)
	CreateVersion(ctx context.Context, v VersionRecord) error
	// Proposals lists a dataset's proposals, newest first, optionally by status.
	Proposals(ctx context.Context, datasetID string, status *string, page vigia.Page) (vigia.List[Proposal], error)
	// Proposal returns a dataset's proposal with its comments; KindNotFound when absent.
	Proposal(ctx context.Context, datasetID, id string) (Proposal, error)
	CreateProposal(ctx context.Context, p Proposal) error
	// DecideProposal moves an open proposal to its new status; KindConflict when it
	// was no longer open.
	DecideProposal(ctx context.Context, p Proposal) error
	AddComment(ctx context.Context, c Comment) error
	// Subjects lists the datasets of a connection that have an active contract, with
	// their columns and active rules' last statuses.
	Subjects(ctx context.Context, workspaceID, connectionID string, datasetIDs []string) ([]Subject, error)
	// SaveCheck keeps the check's outcome as the dataset's contract state, and opens
	// (one per dataset) or resolves the dataset's issue of type contract.
	SaveCheck(ctx context.Context, r CheckResult) error
	// States returns the contract state of each dataset among ids that has an active
	// contract.
	States(ctx context.Context, datasetIDs []string) (map[string]State, error)
	// DatasetNames returns schema.table of the datasets among ids.
	DatasetNames(ctx context.Context, datasetIDs []string) (map[string]string, error)
	AddActivity(ctx context.Context, a event.Activity) error
}

// Tx runs a function in a transaction carried by ctx.
type Tx interface {
	InTx(ctx context.Context, fn func(ctx context.Context) error) error
}

// Datasets is what contracts need of the catalog: a visible dataset with its columns.
type Datasets interface {
	Dataset(ctx context.Context, id string) (catalog.Dataset, error)
}

// Rules is what contracts need of rules: the dataset's rules as the caller may see them.
type Rules interface {
	Rules(ctx context.Context, f rule.Filter) (vigia.List[rule.Rule], error)
}

// Domains is what contracts need of data products: a domain the caller may see.
type Domains interface {
	Domain(ctx context.Context, id string) (product.Domain, error)
}

// Service answers contract reads and runs proposals.
type Service struct {
	store    Store
	tx       Tx
	datasets Datasets
	rules    Rules
	domains  Domains
	clock    vigia.Clock
}

// NewService returns the contract service.
func NewService(store Store, tx Tx, datasets Datasets, rules Rules, domains Domains, clock vigia.Clock) *Service {
	return &Service{store: store, tx: tx, datasets: datasets, rules: rules, domains: domains, clock: clock}
}

// dataset returns the visible dataset; KindNotFound otherwise.
func (s *Service) dataset(ctx context.Context, id string) (catalog.Dataset, error) {
	if !vigia.ValidID(id) {
		return catalog.Dataset{}, vigia.NotFound()
	}
	return s.datasets.Dataset(ctx, id)
}

// observed renders the dataset's observed contract.
func (s *Service) observed(ctx context.Context, d catalog.Dataset) (Document, error) {
	id := d.ID
	rules, err := s.rules.Rules(ctx, rule.Filter{DatasetID: &id, Page: vigia.Page{Limit: vigia.MaxLimit}})
	if err != nil {
		return Document{}, err
	}
	domains, err := s.store.DatasetDomains(ctx, d.ID)
	if err != nil {
		return Document{}, err
	}
	return ObservedDocument(Observed{Dataset: d, Rules: rules.Items, Domains: domains}), nil
}

// Contract returns the dataset's contract: observed (what the data honours now) or
// active (the newest accepted version). Returns KindNotFound when the caller cannot
// see the dataset, and for active while no proposal was accepted; KindInvalid for
// another source.
func (s *Service) Contract(ctx context.Context, datasetID, source string) (Document, error) {
	if source == "" {
		source = SourceObserved
	}
	if source != SourceObserved && source != SourceActive {
		return Document{}, vigia.Invalid(vigia.Field("enum", nil, "source"))
	}
	d, err := s.dataset(ctx, datasetID)
	if err != nil {
		return Document{}, err
	}
	if source == SourceObserved {
		return s.observed(ctx, d)
	}
	v, ok, err := s.store.ActiveVersion(ctx, d.ID)
	if err != nil {
		return Document{}, err
	}
	if !ok {
		return Document{}, vigia.NotFound()
	}
	return v.Document, nil
}

// DBT returns the dbt properties file generated from the dataset's contract (source as
// in Contract).
func (s *Service) DBT(ctx context.Context, datasetID, source string) ([]byte, error) {
	doc, err := s.Contract(ctx, datasetID, source)
	if err != nil {
		return nil, err
	}
	return DBT(doc)
}

// Versions lists the dataset's accepted versions, newest first.
func (s *Service) Versions(ctx context.Context, datasetID string, page vigia.Page) (vigia.List[VersionRecord], error) {
	if err := page.Validate(); err != nil {
		return vigia.List[VersionRecord]{}, err
	}
	d, err := s.dataset(ctx, datasetID)
	if err != nil {
		return vigia.List[VersionRecord]{}, err
	}
	return s.store.Versions(ctx, d.ID, page)
}

// VersionByNumber returns one version (MAJOR.MINOR.PATCH); KindInvalid for another
// form, KindNotFound when absent.
func (s *Service) VersionByNumber(ctx context.Context, datasetID, number string) (VersionRecord, error) {
	n, err := ParseVersion(number, "number")
	if err != nil {
		return VersionRecord{}, err
	}
	d, err := s.dataset(ctx, datasetID)
	if err != nil {
		return VersionRecord{}, err
	}
	v, err := s.store.VersionByNumber(ctx, d.ID, n)
	if err != nil {
		return VersionRecord{}, err
	}
	// Only the newest version is the active contract; an older one was superseded.
	if active, ok, err := s.store.ActiveVersion(ctx, d.ID); err != nil {
		return VersionRecord{}, err
	} else if ok && active.Number != v.Number {
		v.Document.Status = "deprecated"
	}
	return v, nil
}

// DiffResult compares two contracts.
type DiffResult struct {
	From     string
	To       string
	Bump     string
	Breaking bool
	Changes  []Change
}

// Diff compares two of the dataset's contracts, each named by a version number,
// "active" or "observed" (from defaults to active, to to observed). Returns
// KindNotFound for a version that does not exist (active before any accepted
// proposal), KindInvalid for a name in another form.
func (s *Service) Diff(ctx context.Context, datasetID string, from, to *string) (DiffResult, error) {
	f, t := SourceActive, SourceObserved
	if from != nil {
		f = *from
	}
	if to != nil {
		t = *to
	}
	var fields []vigia.FieldError
	for _, x := range []struct{ name, v string }{{"from", f}, {"to", t}} {
		if x.v != SourceActive && x.v != SourceObserved {
			fields = append(fields, vigia.FieldsOf(func() error { _, err := ParseVersion(x.v, x.name); return err }())...)
		}
	}
	if len(fields) > 0 {
		return DiffResult{}, vigia.Invalid(fields...)
	}
	d, err := s.dataset(ctx, datasetID)
	if err != nil {
		return DiffResult{}, err
	}
	load := func(name string) (Document, error) {
		switch name {
		case SourceObserved:
			return s.observed(ctx, d)
		case SourceActive:
			v, ok, err := s.store.ActiveVersion(ctx, d.ID)
			if err == nil && !ok {
				err = vigia.NotFound()
			}
			return v.Document, err
		}
		n, _ := ParseVersion(name)
		v, err := s.store.VersionByNumber(ctx, d.ID, n)
		return v.Document, err
	}
	a, err := load(f)
	if err != nil {
		return DiffResult{}, err
	}
	b, err := load(t)
	if err != nil {
		return DiffResult{}, err
	}
	changes := Diff(a, b)
	bump := BumpOf(changes)
	return DiffResult{From: f, To: t, Bump: bump, Breaking: bump == BumpMajor, Changes: changes}, nil
}

// ProposalFilter selects proposals.
type ProposalFilter struct {
	Status *string
	Page   vigia.Page
}

var proposalStatuses = []string{ProposalOpen, ProposalAccepted, ProposalRejected, ProposalWithdrawn}

// Proposals lists the dataset's proposals, newest first.
func (s *Service) Proposals(ctx context.Context, datasetID string, f ProposalFilter) (vigia.List[Proposal], error) {
	fields := vigia.FieldsOf(f.Page.Validate())
	if f.Status != nil && !contains(proposalStatuses, *f.Status) {
		fields = append(fields, vigia.Field("enum", nil, "status"))
	}
	if len(fields) > 0 {
		return vigia.List[Proposal]{}, vigia.Invalid(fields...)
	}
	d, err := s.dataset(ctx, datasetID)
	if err != nil {
		return vigia.List[Proposal]{}, err
	}
	return s.store.Proposals(ctx, d.ID, f.Status, f.Page)
}

// Proposal returns one proposal with its comments and how it compares with the active
// contract (the changes and the bump accepting it would take).
func (s *Service) Proposal(ctx context.Context, datasetID, id string) (Proposal, error) {
	d, err := s.dataset(ctx, datasetID)
	if err != nil {
		return Proposal{}, err
	}
	if !vigia.ValidID(id) {
		return Proposal{}, vigia.NotFound()
	}
	p, err := s.store.Proposal(ctx, d.ID, id)
	if err != nil {
		return Proposal{}, err
	}
	active, ok, err := s.store.ActiveVersion(ctx, d.ID)
	if err != nil {
		return Proposal{}, err
	}
	s.compare(&p, active, ok)
	return p, nil
}

func (s *Service) compare(p *Proposal, active VersionRecord, ok bool) {
	if !ok {
		p.Changes, p.Bump = Diff(Document{}, p.Document), BumpInitial
		return
	}
	p.Changes = Diff(active.Document, p.Document)
	p.Bump = BumpOf(p.Changes)
}

// ProposalInput creates a proposal: from the observed contract, or from an uploaded
// ODCS document (raw JSON).
type ProposalInput struct {
	Origin string
	// Document is the uploaded document as JSON; DocumentYAML the same as YAML text.
	Document     []byte
	DocumentYAML *string
	Summary      string
}

// Propose creates a proposal for the dataset. A member's or admin's session. An
// uploaded document must validate against the ODCS v3.0.2 JSON Schema and describe one
// table (KindInvalid at document…, nothing saved).
func (s *Service) Propose(ctx context.Context, datasetID string, in ProposalInput) (Proposal, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleMember)
	if err != nil {
		return Proposal{}, err
	}
	var fields []vigia.FieldError
	if in.DocumentYAML != nil {
		j, err := yaml.YAMLToJSON([]byte(*in.DocumentYAML))
		if err != nil || len(bytes.TrimSpace(j)) == 0 || bytes.Equal(bytes.TrimSpace(j), []byte("null")) {
			// The parser's message quotes the text: never returned.
			return Proposal{}, vigia.Invalid(vigia.Field("value_error", nil, "document"))
		}
		in.Document = j
	}
	if in.Origin != OriginObserved && in.Origin != OriginDocument {
		fields = append(fields, vigia.Field("enum", nil, "origin"))
	}
	if len([]rune(in.Summary)) > MaxSummary {
		fields = append(fields, vigia.Field("string_too_long", map[string]any{"max_length": MaxSummary}, "summary"))
	}
	if in.Origin == OriginObserved && len(in.Document) > 0 {
		fields = append(fields, vigia.Field("extra_forbidden", nil, "document"))
	}
	if in.Origin == OriginDocument && len(in.Document) == 0 {
		fields = append(fields, vigia.Field("missing", nil, "document"))
	}
	var doc Document
	if in.Origin == OriginDocument && len(in.Document) > 0 {
		d, err := ParseDocument(in.Document, "document")
		if err != nil {
			fields = append(fields, vigia.FieldsOf(err)...)
		}
		doc = d
	}
	if len(fields) > 0 {
		return Proposal{}, vigia.Invalid(fields...)
	}
	d, err := s.dataset(ctx, datasetID)
	if err != nil {
		return Proposal{}, err
	}
	if in.Origin == OriginObserved {
		if doc, err = s.observed(ctx, d); err != nil {
			return Proposal{}, err
		}
	}
	now := s.clock.Now()
	doc.APIVersion, doc.Kind, doc.ID, doc.Status = APIVersion, "DataContract", d.ID, "proposed"
	if doc.Name == "" {
		doc.Name = d.Name()
	}
	prop := Proposal{ID: vigia.NewID(), WorkspaceID: p.WorkspaceID, DatasetID: d.ID, Status: ProposalOpen, Origin: in.Origin,
		Summary: in.Summary, Document: doc, AuthorID: p.UserID, CreatedAt: now, UpdatedAt: now, Comments: []Comment{}}
	err = s.tx.InTx(ctx, func(ctx context.Context) error {
		active, ok, err := s.store.ActiveVersion(ctx, d.ID)
		if err != nil {
			return err
		}
		s.compare(&prop, active, ok)
		if err := s.store.CreateProposal(ctx, prop); err != nil {
			return err
		}
		return s.log(ctx, p, "contract.proposal_created", d.ID, map[string]any{"proposal_id": prop.ID, "origin": in.Origin})
	})
	return prop, err
}

// Comment adds a comment to a proposal. A member's or admin's session.
func (s *Service) Comment(ctx context.Context, datasetID, proposalID, body string) (Comment, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleMember)
	if err != nil {
		return Comment{}, err
	}
	switch n := len([]rune(body)); {
	case len(body) == 0 || isBlank(body):
		return Comment{}, vigia.Invalid(vigia.Field("missing", nil, "body"))
	case n > MaxComment:
		return Comment{}, vigia.Invalid(vigia.Field("string_too_long", map[string]any{"max_length": MaxComment}, "body"))
	}
	d, err := s.dataset(ctx, datasetID)
	if err != nil {
		return Comment{}, err
	}
	if !vigia.ValidID(proposalID) {
		return Comment{}, vigia.NotFound()
	}
	c := Comment{ID: vigia.NewID(), ProposalID: proposalID, AuthorID: p.UserID, Body: body, CreatedAt: s.clock.Now()}
	err = s.tx.InTx(ctx, func(ctx context.Context) error {
		if _, err := s.store.Proposal(ctx, d.ID, proposalID); err != nil {
			return err
		}
		if err := s.store.AddComment(ctx, c); err != nil {
			return err
		}
		return s.log(ctx, p, "contract.proposal_commented", d.ID, map[string]any{"proposal_id": proposalID})
	})
	return c, err
}

// Decision actions on a proposal.
const (
	ActionAccept   = "accept"
	ActionReject   = "reject"
	ActionWithdraw = "withdraw"
)

// Decide accepts, rejects or withdraws an open proposal. Accepting and rejecting take an
// admin or a manager of one of the dataset's domains; withdrawing its author or an
// admin (else KindForbidden). Accepting creates the next version (1.0.0 first; then a
// major bump when the change breaks the active contract, else minor) and checks the
// dataset against it at once. KindConflict (proposal_not_open) when the proposal was
// already decided.
func (s *Service) Decide(ctx context.Context, datasetID, proposalID, action string, note *string) (Proposal, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleMember)
	if err != nil {
		return Proposal{}, err
	}
	if note != nil && len([]rune(*note)) > MaxSummary {
		return Proposal{}, vigia.Invalid(vigia.Field("string_too_long", map[string]any{"max_length": MaxSummary}, "note"))
	}
	d, err := s.dataset(ctx, datasetID)
	if err != nil {
		return Proposal{}, err
	}
	if !vigia.ValidID(proposalID) {
		return Proposal{}, vigia.NotFound()
	}
	var out Proposal
	err = s.tx.InTx(ctx, func(ctx context.Context) error {
		prop, err := s.store.Proposal(ctx, d.ID, proposalID)
		if err != nil {
			return err
		}
		switch action {
		case ActionWithdraw:
			if p.Role != vigia.RoleAdmin && prop.AuthorID != p.UserID {
				return vigia.Forbidden(vigia.CodeForbidden, "error.forbidden")
			}
		default:
			ok, err := s.mayAccept(ctx, p, d.ID)
			if err != nil {
				return err
			}
			if !ok {
				return vigia.Forbidden(vigia.CodeForbidden, "error.forbidden")
			}
		}
		if prop.Status != ProposalOpen {
			return notOpen()
		}
		now := s.clock.Now()
		prop.Status = map[string]string{ActionAccept: ProposalAccepted, ActionReject: ProposalRejected, ActionWithdraw: ProposalWithdrawn}[action]
		prop.DecidedBy, prop.DecidedAt, prop.Note, prop.UpdatedAt = &p.UserID, &now, note, now
		active, ok, err := s.store.ActiveVersion(ctx, d.ID)
		if err != nil {
			return err
		}
		s.compare(&prop, active, ok)
		details := map[string]any{"proposal_id": prop.ID}
		if action == ActionAccept {
			next := active.Number.Next(prop.Bump)
			doc := prop.Document
			doc.Version, doc.Status = next.String(), "active"
			v := VersionRecord{ID: vigia.NewID(), WorkspaceID: p.WorkspaceID, DatasetID: d.ID, Number: next, Bump: prop.Bump,
				Document: doc, Changes: prop.Changes, Summary: ChangeSummary(prop.Changes), ProposalID: &prop.ID, AuthorID: prop.AuthorID,
				AcceptedBy: p.UserID, CreatedAt: now}
			if prop.Summary != "" {
				v.Summary = prop.Summary + " — " + v.Summary
			}
			if err := s.store.CreateVersion(ctx, v); err != nil {
				return err
			}
			number := next.String()
			prop.Version = &number
			details["version"] = number
		}
		if err := s.store.DecideProposal(ctx, prop); err != nil {
			return err
		}
		if action == ActionAccept {
			if err := s.checkNow(ctx, p.WorkspaceID, d.ID, now); err != nil {
				return err
			}
		}
		out = prop
		return s.log(ctx, p, "contract.proposal_"+prop.Status, d.ID, details)
	})
	if err != nil {
		return Proposal{}, err
	}
	out.Comments = nil
	return s.Proposal(ctx, datasetID, out.ID)
}

func notOpen() error {
	return vigia.Conflict("proposal_not_open", "error.contract_proposal_not_open", nil)
}

// mayAccept says whether the caller accepts and rejects the dataset's proposals: an
// admin, or a member of a team with the manager grant on one of its domains.
func (s *Service) mayAccept(ctx context.Context, p vigia.Principal, datasetID string) (bool, error) {
	if p.Role == vigia.RoleAdmin {
		return true, nil
	}
	domains, err := s.store.DatasetDomains(ctx, datasetID)
	if err != nil {
		return false, err
	}
	teams := map[string]bool{}
	for _, t := range p.TeamIDs {
		teams[t] = true
	}
	for _, dm := range domains {
		for _, g := range dm.Teams {
			if g.Role == product.RoleManager && teams[g.TeamID] {
				return true, nil
			}
		}
	}
	return false, nil
}

// checkNow checks one dataset against its active contract with its current columns.
func (s *Service) checkNow(ctx context.Context, workspaceID, datasetID string, now time.Time) error {
	subjects, err := s.store.Subjects(ctx, workspaceID, "", []string{datasetID})
	if err != nil {
		return err
	}
	for _, sub := range subjects {
		if err := s.store.SaveCheck(ctx, checkOf(sub, nil, now)); err != nil {
			return err
		}
	}
	return nil
}

func checkOf(sub Subject, scanID *string, now time.Time) CheckResult {
	return CheckResult{WorkspaceID: sub.WorkspaceID, DatasetID: sub.DatasetID, DatasetName: sub.DatasetName, ScanID: scanID,
		Version: sub.Active.Number.String(), Violations: Check(sub.Active.Document, sub.Columns, sub.Rules), At: now}
}

// AfterScan checks every dataset of the scanned connection that has an active contract
// against it (a scan.Consumer of the scan.succeeded event, idempotent): the outcome
// becomes the dataset's contract state, and a violation opens the dataset's issue of
// type contract (one at a time), which the first check that holds again resolves.
func (s *Service) AfterScan(ctx context.Context, workspaceID, connectionID, scanID string) error {
	subjects, err := s.store.Subjects(ctx, workspaceID, connectionID, nil)
	if err != nil {
		return err
	}
	now := s.clock.Now()
	for _, sub := range subjects {
		if err := s.tx.InTx(ctx, func(ctx context.Context) error {
			return s.store.SaveCheck(ctx, checkOf(sub, &scanID, now))
		}); err != nil {
			return err
		}
	}
	return nil
}

// SchemaChangeEffects says, for each scan's column changes of a dataset, what they do
// to its active contract (none, compatible, breaking); nil entries without an active
// contract. The caller already checked the dataset is visible.
func (s *Service) SchemaChangeEffects(ctx context.Context, datasetID string, sets [][]ColumnChange) ([]*string, error) {
	out := make([]*string, len(sets))
	v, ok, err := s.store.ActiveVersion(ctx, datasetID)
	if err != nil || !ok {
		return out, err
	}
	for i, set := range sets {
		e := EffectOf(v.Document, set)
		out[i] = &e
	}
	return out, nil
}

// DomainContract is the aggregate of a domain's members' active contracts.
type DomainContract struct {
	DomainID string
	Name     string
	Version  string
	Members  []MemberContract
	// Document holds one schema object per member with an active contract.
	Document Document
}

// MemberContract is one member dataset's contract state.
type MemberContract struct {
	DatasetID string
	Name      string
	Version   *string
	Valid     *bool
	Columns   int
}

// DomainContract aggregates the active contracts of the domain's members the caller
// can see into one ODCS document (one schema object per dataset); members without one
// are listed with a null version. KindNotFound when the caller cannot see the domain.
func (s *Service) DomainContract(ctx context.Context, domainID string) (DomainContract, error) {
	dm, err := s.domains.Domain(ctx, domainID)
	if err != nil {
		return DomainContract{}, err
	}
	active, err := s.store.ActiveVersions(ctx, dm.DatasetIDs)
	if err != nil {
		return DomainContract{}, err
	}
	states, err := s.store.States(ctx, dm.DatasetIDs)
	if err != nil {
		return DomainContract{}, err
	}
	names, err := s.store.DatasetNames(ctx, dm.DatasetIDs)
	if err != nil {
		return DomainContract{}, err
	}
	out := DomainContract{DomainID: dm.ID, Name: dm.Name, Version: dm.Version.String(), Members: []MemberContract{},
		Document: Document{APIVersion: APIVersion, Kind: "DataContract", ID: dm.ID, Name: dm.Name, Version: dm.Version.String() + ".0",
			Status: "active", Domain: dm.Name, DataProduct: dm.Name, Schema: []Object{}}}
	for _, id := range dm.DatasetIDs {
		v, ok := active[id]
		m := MemberContract{DatasetID: id, Name: names[id]}
		if ok {
			t := v.Document.Table()
			number := v.Number.String()
			m.Version, m.Columns = &number, len(t.Properties)
			valid := true
			if st, ok := states[id]; ok {
				valid = st.Valid
			}
			m.Valid = &valid
			out.Document.Schema = append(out.Document.Schema, t)
		}
		out.Members = append(out.Members, m)
	}
	return out, nil
}

// States returns the contract state of each dataset among ids (for trust and products);
// datasets without an active contract are absent.
func (s *Service) States(ctx context.Context, datasetIDs []string) (map[string]State, error) {
	return s.store.States(ctx, vigia.ValidIDs(datasetIDs))
}

func (s *Service) log(ctx context.Context, p vigia.Principal, action, datasetID string, details map[string]any) error {
	return s.store.AddActivity(ctx, event.Activity{ID: vigia.NewID(), WorkspaceID: p.WorkspaceID, Actor: p.UserID, Action: action,
		SubjectType: "dataset", SubjectID: datasetID, Details: details, CreatedAt: s.clock.Now()})
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func isBlank(s string) bool {
	for _, r := range s {
		if r != ' ' && r != '\t' && r != '\n' && r != '\r' {
			return false
		}
	}
	return true
}

// MarshalDocument is the JSON form kept by the store.
func MarshalDocument(d Document) ([]byte, error) { return json.Marshal(d) }

// Summary is a dataset's contract at a glance: the active version and whether the last
// check honoured it, with the observed and active documents.
type Summary struct {
	Active         bool
	ActiveVersion  *string
	Valid          bool
	Violations     []string
	Observed       Document
	ActiveDocument *Document
}

// Summary returns the dataset's contract summary; KindNotFound when the caller cannot
// see the dataset.
func (s *Service) Summary(ctx context.Context, datasetID string) (Summary, error) {
	d, err := s.dataset(ctx, datasetID)
	if err != nil {
		return Summary{}, err
	}
	obs, err := s.observed(ctx, d)
	if err != nil {
		return Summary{}, err
	}
	out := Summary{Valid: true, Violations: []string{}, Observed: obs}
	v, ok, err := s.store.ActiveVersion(ctx, d.ID)
	if err != nil || !ok {
		return out, err
	}
	number := v.Number.String()
	out.Active, out.ActiveVersion, out.ActiveDocument = true, &number, &v.Document
	states, err := s.store.States(ctx, []string{d.ID})
	if err != nil {
		return Summary{}, err
	}
	if st, ok := states[d.ID]; ok {
		out.Valid, out.Violations = st.Valid, Codes(st.Violations)
	}
	return out, nil
}
