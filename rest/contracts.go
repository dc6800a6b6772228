package rest

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/contract"
)

// ContractChangeOut is one difference between two contracts.
type ContractChangeOut struct {
	Kind     string  `json:"kind" enum:"added,removed,changed"`
	Property *string `json:"property" doc:"The column; null for a table-level quality check"`
	Field    *string `json:"field" doc:"physicalType, logicalType, required, unique, primaryKey, classification or quality; null when a whole column was added or removed"`
	Quality  *string `json:"quality" doc:"For quality changes: the check's identity (rule type and columns)"`
	Before   any     `json:"before"`
	After    any     `json:"after"`
	Breaking bool    `json:"breaking" doc:"True for a column removed, a type narrowed or converted, a required flag added, a quality check added or tightened"`
}

// ContractVersionItemOut is an accepted contract version in lists.
type ContractVersionItemOut struct {
	Version       string              `json:"version" doc:"MAJOR.MINOR.PATCH; the first accepted contract is 1.0.0"`
	Bump          string              `json:"bump" enum:"initial,major,minor"`
	ChangeSummary string              `json:"change_summary"`
	Changes       []ContractChangeOut `json:"changes" doc:"What changed from the version before"`
	ProposalID    *string             `json:"proposal_id"`
	AuthorID      string              `json:"author_id" doc:"The person who proposed it"`
	AcceptedBy    string              `json:"accepted_by" doc:"The person who accepted it"`
	CreatedAt     time.Time           `json:"created_at"`
}

// ContractVersionOut is one accepted version with its document.
type ContractVersionOut struct {
	ContractVersionItemOut
	Document contract.Document `json:"document" doc:"The ODCS v3 document as accepted"`
}

// ContractDiffOut compares two contracts.
type ContractDiffOut struct {
	From     string              `json:"from"`
	To       string              `json:"to"`
	Bump     string              `json:"bump" enum:"major,minor" doc:"The bump going from one to the other takes"`
	Breaking bool                `json:"breaking"`
	Changes  []ContractChangeOut `json:"changes"`
}

// ContractCommentOut is a comment on a proposal.
type ContractCommentOut struct {
	ID        string    `json:"id"`
	AuthorID  string    `json:"author_id"`
	Body      string    `json:"body"`
	CreatedAt time.Time `json:"created_at"`
}

// ContractProposalItemOut is a proposal in lists.
type ContractProposalItemOut struct {
	ID        string     `json:"id"`
	DatasetID string     `json:"dataset_id"`
	Status    string     `json:"status" enum:"open,accepted,rejected,withdrawn"`
	Origin    string     `json:"origin" enum:"observed,document" doc:"observed: the contract the data honoured when proposed; document: an uploaded ODCS document"`
	Summary   string     `json:"summary"`
	AuthorID  string     `json:"author_id"`
	DecidedBy *string    `json:"decided_by"`
	DecidedAt *time.Time `json:"decided_at"`
	Note      *string    `json:"note" doc:"The note of the decision"`
	Version   *string    `json:"version" doc:"The version an accepted proposal became"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt time.Time  `json:"updated_at"`
}

// ContractProposalOut is one proposal with its document, comments and how it compares
// with the active contract.
type ContractProposalOut struct {
	ContractProposalItemOut
	Bump     string               `json:"bump" enum:"initial,major,minor" doc:"The bump accepting it takes now (initial without an active contract)"`
	Changes  []ContractChangeOut  `json:"changes" doc:"Its differences from the active contract"`
	Comments []ContractCommentOut `json:"comments"`
	Document contract.Document    `json:"document"`
}

// ContractProposalIn creates a proposal.
type ContractProposalIn struct {
	Origin   string  `json:"origin" enum:"observed,document" doc:"observed proposes the contract the data honours now; document proposes the uploaded ODCS document"`
	Document any     `json:"document,omitempty" doc:"With origin document: an ODCS v3.0.x document describing one table, as a JSON object or as a string holding the YAML file; validated against the standard's JSON Schema"`
	Summary  *string `json:"summary,omitempty" maxLength:"2000"`
}

// ContractCommentIn comments a proposal.
type ContractCommentIn struct {
	Body string `json:"body" maxLength:"5000"`
}

// ContractDecisionIn is the optional note of an accept, reject or withdraw.
type ContractDecisionIn struct {
	Note *string `json:"note,omitempty" maxLength:"2000"`
}

// DomainContractMemberOut is a member dataset's contract state.
type DomainContractMemberOut struct {
	DatasetID string  `json:"dataset_id"`
	Name      string  `json:"name"`
	Version   *string `json:"version" doc:"Active contract version; null without one"`
	Valid     *bool   `json:"valid" doc:"Whether the last check honoured it; null without an active contract"`
	Columns   int     `json:"columns" doc:"Columns of the active contract"`
}

// DomainContractOut aggregates the members' active contracts.
type DomainContractOut struct {
	DomainID string                    `json:"domain_id"`
	Name     string                    `json:"name"`
	Version  string                    `json:"version" doc:"The domain's version"`
	Members  []DomainContractMemberOut `json:"members" doc:"The members the caller can see"`
	Document contract.Document         `json:"document" doc:"One ODCS document with a schema object per member with an active contract"`
}

var (
	contractSourceParam = param{Name: "source", In: "query", Type: "string", Enum: []string{"observed", "active"}, Default: "observed",
		Desc: "observed: what the data honours now; active: the producer-accepted contract (404 while no proposal was accepted)"}
	proposalIDParam = param{Name: "proposal_id", In: "path", Type: "string", Required: true, MaxLen: 64}
)

const yamlType = "application/yaml"

func (s *Server) contractRoutes() {
	base := "/api/v1/datasets/{dataset_id}"
	s.register(operation{ID: "datasetContract", Method: http.MethodGet, Path: base + "/contract", Tag: "contracts",
		Summary: "Data contract in the Open Data Contract Standard v3", ContentType: yamlType, Response: contract.Document{},
		Params: []param{datasetIDParam, contractSourceParam},
		Desc: "YAML by default; JSON when Accept names application/json. The observed contract lists every column with its physical and " +
			"logical type, required (declared NOT NULL, or no null in a whole-table profile), unique (the primary key's only column, or as many " +
			"exact distinct values as rows), primary key, classification (pii for personal data), the active rules as quality checks, " +
			"and the domain's SLA, owner and teams."}, s.handleContract)
	s.register(operation{ID: "datasetContractDBT", Method: http.MethodGet, Path: base + "/contract.dbt.yml", Tag: "contracts",
		Summary: "dbt properties file with the contract enforced, generated from the contract", ContentType: yamlType,
		Params: []param{datasetIDParam, contractSourceParam},
		Desc: "version 2, one model with config.contract.enforced true, columns with data_type, constraints (not_null, unique, primary_key) " +
			"and tests (not_null, unique, accepted_values)."}, s.handleContractDBT)
	s.register(operation{ID: "datasetContractVersions", Method: http.MethodGet, Path: base + "/contract/versions", Tag: "contracts",
		Summary: "Accepted contract versions, newest first", Params: []param{datasetIDParam}, List: true, ListDefault: contract.PageDefault,
		Response: []ContractVersionItemOut{}}, s.handleContractVersions)
	s.register(operation{ID: "datasetContractVersion", Method: http.MethodGet, Path: base + "/contract/versions/{number}", Tag: "contracts",
		Summary:  "One accepted contract version with its document",
		Params:   []param{datasetIDParam, {Name: "number", In: "path", Type: "string", Required: true, MaxLen: 32, Desc: "MAJOR.MINOR.PATCH"}},
		Response: ContractVersionOut{}}, s.handleContractVersion)
	s.register(operation{ID: "datasetContractDiff", Method: http.MethodGet, Path: base + "/contract/diff", Tag: "contracts",
		Summary: "Added, removed and changed properties between two contracts, with a breaking flag per change",
		Params: []param{datasetIDParam,
			{Name: "from", In: "query", Type: "string", MaxLen: 32, Desc: "A version number, active or observed (default active)"},
			{Name: "to", In: "query", Type: "string", MaxLen: 32, Desc: "A version number, active or observed (default observed)"}},
		Response: ContractDiffOut{}}, s.handleContractDiff)
	s.register(operation{ID: "datasetContractProposals", Method: http.MethodGet, Path: base + "/contract/proposals", Tag: "contracts",
		Summary: "Contract proposals, newest first", List: true, ListDefault: contract.PageDefault,
		Params:   []param{datasetIDParam, {Name: "status", In: "query", Type: "string", Enum: []string{"open", "accepted", "rejected", "withdrawn"}}},
		Response: []ContractProposalItemOut{}}, s.handleContractProposals)
	s.register(operation{ID: "createContractProposal", Method: http.MethodPost, Path: base + "/contract/proposals", Tag: "contracts",
		Summary: "Propose a contract (member or admin session)", Params: []param{datasetIDParam}, Body: ContractProposalIn{},
		Response: ContractProposalOut{}, Status: http.StatusCreated,
		Desc: "From the observed contract or an uploaded ODCS v3 document; an invalid document is 422 with the problems' locations under " +
			"body.document and nothing is saved."}, s.handleContractPropose)
	s.register(operation{ID: "getContractProposal", Method: http.MethodGet, Path: base + "/contract/proposals/{proposal_id}", Tag: "contracts",
		Summary: "One proposal with its document, comments and differences from the active contract",
		Params:  []param{datasetIDParam, proposalIDParam}, Response: ContractProposalOut{}}, s.handleContractProposal)
	s.register(operation{ID: "commentContractProposal", Method: http.MethodPost, Path: base + "/contract/proposals/{proposal_id}/comments",
		Tag: "contracts", Summary: "Comment a proposal (member or admin session)", Params: []param{datasetIDParam, proposalIDParam},
		Body: ContractCommentIn{}, Response: ContractCommentOut{}, Status: http.StatusCreated}, s.handleContractComment)
	decide := func(id, action, summary, desc string) {
		s.register(operation{ID: id, Method: http.MethodPost, Path: base + "/contract/proposals/{proposal_id}/" + action, Tag: "contracts",
			Summary: summary, Desc: desc, Params: []param{datasetIDParam, proposalIDParam}, Body: ContractDecisionIn{}, OptionalBody: true,
			Response: ContractProposalOut{}, Errors: map[int]string{http.StatusConflict: "proposal_not_open: the proposal was already decided"}},
			func(w http.ResponseWriter, r *http.Request, in *input) { s.handleContractDecide(w, r, in, action) })
	}
	decide("acceptContractProposal", contract.ActionAccept, "Accept a proposal: it becomes the next contract version",
		"An admin or a manager of one of the dataset's domains. The first accepted contract is 1.0.0; then major when a column is removed, "+
			"its type narrowed, a required flag added or a quality check added or tightened, minor otherwise.")
	decide("rejectContractProposal", contract.ActionReject, "Reject a proposal", "An admin or a manager of one of the dataset's domains.")
	decide("withdrawContractProposal", contract.ActionWithdraw, "Withdraw a proposal", "Its author or an admin.")
	s.register(operation{ID: "domainContract", Method: http.MethodGet, Path: "/api/v1/domains/{domain_id}/contract", Tag: "contracts",
		Summary: "The members' active contracts in one ODCS document",
		Params:  []param{{Name: "domain_id", In: "path", Type: "string", Required: true, MaxLen: 64}}, Response: DomainContractOut{}},
		s.handleDomainContract)
}

// wantsJSON reports whether the caller's Accept names JSON.
func wantsJSON(r *http.Request) bool {
	return strings.Contains(strings.ToLower(r.Header.Get("Accept")), "application/json")
}

func writeYAML(w http.ResponseWriter, b []byte) {
	w.Header().Set("Content-Type", yamlType+"; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

func sourceOf(in *input) string {
	if v := in.String("source"); v != nil {
		return *v
	}
	return contract.SourceObserved
}

func (s *Server) handleContract(w http.ResponseWriter, r *http.Request, in *input) {
	doc, err := s.deps.Contracts.Contract(r.Context(), in.Path("dataset_id"), sourceOf(in))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if wantsJSON(r) {
		writeJSON(w, http.StatusOK, doc)
		return
	}
	b, err := doc.YAML()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeYAML(w, b)
}

func (s *Server) handleContractDBT(w http.ResponseWriter, r *http.Request, in *input) {
	b, err := s.deps.Contracts.DBT(r.Context(), in.Path("dataset_id"), sourceOf(in))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeYAML(w, b)
}

func toContractChanges(cs []contract.Change) []ContractChangeOut {
	out := make([]ContractChangeOut, 0, len(cs))
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	for _, c := range cs {
		out = append(out, ContractChangeOut{Kind: c.Kind, Property: opt(c.Property), Field: opt(c.Field), Quality: opt(c.Quality),
			Before: c.Before, After: c.After, Breaking: c.Breaking})
	}
	return out
}

func toContractVersionItem(v contract.VersionRecord) ContractVersionItemOut {
	return ContractVersionItemOut{Version: v.Number.String(), Bump: v.Bump, ChangeSummary: v.Summary, Changes: toContractChanges(v.Changes),
		ProposalID: v.ProposalID, AuthorID: v.AuthorID, AcceptedBy: v.AcceptedBy, CreatedAt: v.CreatedAt}
}

func (s *Server) handleContractVersions(w http.ResponseWriter, r *http.Request, in *input) {
	res, err := s.deps.Contracts.Versions(r.Context(), in.Path("dataset_id"), in.Page())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]ContractVersionItemOut, 0, len(res.Items))
	for _, v := range res.Items {
		out = append(out, toContractVersionItem(v))
	}
	list(w, res.Total, out)
}

func (s *Server) handleContractVersion(w http.ResponseWriter, r *http.Request, in *input) {
	v, err := s.deps.Contracts.VersionByNumber(r.Context(), in.Path("dataset_id"), in.Path("number"))
	s.reply(w, r, err, func() any {
		return ContractVersionOut{ContractVersionItemOut: toContractVersionItem(v), Document: v.Document}
	})
}

func (s *Server) handleContractDiff(w http.ResponseWriter, r *http.Request, in *input) {
	d, err := s.deps.Contracts.Diff(r.Context(), in.Path("dataset_id"), in.String("from"), in.String("to"))
	s.reply(w, r, err, func() any {
		return ContractDiffOut{From: d.From, To: d.To, Bump: d.Bump, Breaking: d.Breaking, Changes: toContractChanges(d.Changes)}
	})
}

func toProposalItem(p contract.Proposal) ContractProposalItemOut {
	return ContractProposalItemOut{ID: p.ID, DatasetID: p.DatasetID, Status: p.Status, Origin: p.Origin, Summary: p.Summary, AuthorID: p.AuthorID,
		DecidedBy: p.DecidedBy, DecidedAt: p.DecidedAt, Note: p.Note, Version: p.Version, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
}

func toProposalOut(p contract.Proposal) ContractProposalOut {
	out := ContractProposalOut{ContractProposalItemOut: toProposalItem(p), Bump: p.Bump, Changes: toContractChanges(p.Changes),
		Comments: []ContractCommentOut{}, Document: p.Document}
	for _, c := range p.Comments {
		out.Comments = append(out.Comments, toCommentOut(c))
	}
	return out
}

func toCommentOut(c contract.Comment) ContractCommentOut {
	return ContractCommentOut{ID: c.ID, AuthorID: c.AuthorID, Body: c.Body, CreatedAt: c.CreatedAt}
}

func (s *Server) handleContractProposals(w http.ResponseWriter, r *http.Request, in *input) {
	res, err := s.deps.Contracts.Proposals(r.Context(), in.Path("dataset_id"), contract.ProposalFilter{Status: in.String("status"), Page: in.Page()})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]ContractProposalItemOut, 0, len(res.Items))
	for _, p := range res.Items {
		out = append(out, toProposalItem(p))
	}
	list(w, res.Total, out)
}

func (s *Server) handleContractProposal(w http.ResponseWriter, r *http.Request, in *input) {
	p, err := s.deps.Contracts.Proposal(r.Context(), in.Path("dataset_id"), in.Path("proposal_id"))
	s.reply(w, r, err, func() any { return toProposalOut(p) })
}

func (s *Server) handleContractPropose(w http.ResponseWriter, r *http.Request, in *input) {
	var body ContractProposalIn
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	pi := contract.ProposalInput{Origin: body.Origin}
	if body.Summary != nil {
		pi.Summary = *body.Summary
	}
	switch doc := body.Document.(type) {
	case nil:
	case string:
		pi.DocumentYAML = &doc
	default:
		raw, err := json.Marshal(doc)
		if err != nil {
			s.writeError(w, r, vigia.Invalid(vigia.Field("json_invalid", nil, "document")))
			return
		}
		pi.Document = raw
	}
	p, err := s.deps.Contracts.Propose(r.Context(), in.Path("dataset_id"), pi)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, toProposalOut(p))
}

func (s *Server) handleContractComment(w http.ResponseWriter, r *http.Request, in *input) {
	var body ContractCommentIn
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	c, err := s.deps.Contracts.Comment(r.Context(), in.Path("dataset_id"), in.Path("proposal_id"), body.Body)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, toCommentOut(c))
}

func (s *Server) handleContractDecide(w http.ResponseWriter, r *http.Request, in *input, action string) {
	var body ContractDecisionIn
	if err := decodeOptional(r, in, &body); err != nil {
		s.writeError(w, r, err)
		return
	}
	p, err := s.deps.Contracts.Decide(r.Context(), in.Path("dataset_id"), in.Path("proposal_id"), action, body.Note)
	s.reply(w, r, err, func() any { return toProposalOut(p) })
}

func (s *Server) handleDomainContract(w http.ResponseWriter, r *http.Request, in *input) {
	dc, err := s.deps.Contracts.DomainContract(r.Context(), in.Path("domain_id"))
	s.reply(w, r, err, func() any {
		out := DomainContractOut{DomainID: dc.DomainID, Name: dc.Name, Version: dc.Version, Members: []DomainContractMemberOut{}, Document: dc.Document}
		for _, m := range dc.Members {
			out.Members = append(out.Members, DomainContractMemberOut{DatasetID: m.DatasetID, Name: m.Name, Version: m.Version, Valid: m.Valid,
				Columns: m.Columns})
		}
		return out
	})
}
