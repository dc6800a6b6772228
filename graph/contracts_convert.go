package graph

import (
	"github.com/vigia-data/vigia/contract"
	"github.com/vigia-data/vigia/graph/model"
)

func toDatasetContract(s contract.Summary) (*model.DatasetContract, error) {
	observed, err := s.Observed.JSON()
	if err != nil {
		return nil, err
	}
	out := &model.DatasetContract{Active: s.Active, ActiveVersion: s.ActiveVersion, Valid: s.Valid, Violations: s.Violations,
		Observed: string(observed)}
	if out.Violations == nil {
		out.Violations = []string{}
	}
	if s.ActiveDocument != nil {
		b, err := s.ActiveDocument.JSON()
		if err != nil {
			return nil, err
		}
		active := string(b)
		out.ActiveDocument = &active
	}
	return out, nil
}

func toContractVersions(vs []contract.VersionRecord) []model.ContractVersion {
	out := make([]model.ContractVersion, 0, len(vs))
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	for _, v := range vs {
		cv := model.ContractVersion{Version: v.Number.String(), Bump: v.Bump, ChangeSummary: v.Summary, Changes: []model.ContractChange{},
			ProposalID: v.ProposalID, AuthorID: v.AuthorID, AcceptedBy: v.AcceptedBy, CreatedAt: v.CreatedAt}
		for _, c := range v.Changes {
			cv.Changes = append(cv.Changes, model.ContractChange{Kind: c.Kind, Property: opt(c.Property), Field: opt(c.Field),
				Quality: opt(c.Quality), Breaking: c.Breaking, Before: valueText(c.Before), After: valueText(c.After)})
		}
		out = append(out, cv)
	}
	return out
}
