package product

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/vigia-data/vigia/quality"
)

// Bumps of a published version.
const (
	BumpInitial = "initial" // the first publication
	BumpMajor   = "major"   // breaks consumers
	BumpMinor   = "minor"   // compatible
	BumpNone    = "none"    // nothing changed (diffs only)
)

// Impacts of a change.
const (
	ImpactBreaking   = "breaking"
	ImpactCompatible = "compatible"
)

// Change kinds of a version diff.
const (
	ChangeDatasetAdded          = "dataset_added"
	ChangeDatasetRemoved        = "dataset_removed"
	ChangeContractColumnRemoved = "contract_column_removed"
	ChangeContractColumnAdded   = "contract_column_added"
	ChangeAvailabilityLowered   = "availability_objective_lowered"
	ChangeAvailabilityRaised    = "availability_objective_raised"
	ChangeAvailabilitySet       = "availability_objective_set"
	ChangeAvailabilityRemoved   = "availability_objective_removed"
	ChangeRetentionLowered      = "retention_lowered"
	ChangeRetentionRaised       = "retention_raised"
	ChangeRetentionSet          = "retention_set"
	ChangeRetentionRemoved      = "retention_removed"
	ChangeWeightsChanged        = "dimension_weights_changed"
	ChangeTargetLowered         = "dimension_target_lowered"
	ChangeTargetRemoved         = "dimension_target_removed"
	ChangeTargetAdded           = "dimension_target_added"
	ChangeTargetRaised          = "dimension_target_raised"
	ChangeNameChanged           = "name_changed"
	ChangeDescriptionChanged    = "description_changed"
	ChangeOwnerChanged          = "owner_changed"
	ChangeAccessChanged         = "access_changed"
	ChangeRepublished           = "republished"
)

// Snapshot is a domain as published: what versions compare.
type Snapshot struct {
	Name        string            `json:"name"`
	Description string            `json:"description"`
	OwnerName   *string           `json:"owner_name"`
	Restricted  bool              `json:"restricted"`
	Status      string            `json:"status"`
	SLA         SLA               `json:"sla"`
	Datasets    []SnapshotDataset `json:"datasets"`
}

// SnapshotDataset is a member dataset with the columns of its active contract.
type SnapshotDataset struct {
	ID              string   `json:"id"`
	Name            string   `json:"name"`
	ContractColumns []string `json:"contract_columns"`
}

// Change is one difference between two snapshots, with its impact on consumers.
type Change struct {
	Kind        string
	Impact      string
	DatasetID   string
	DatasetName string
	Column      string
	Dimension   string
	Field       string
	Before      any
	After       any
	// Restricted is true for a dataset the reader cannot see: no id, name or column.
	Restricted bool
}

// breaking lists the change kinds that break consumers (contract part 2): a dataset
// left, an active-contract column vanished, the SLA weakened, the weights changed, a
// target lowered or removed.
var breaking = map[string]bool{
	ChangeDatasetRemoved: true, ChangeContractColumnRemoved: true, ChangeAvailabilityLowered: true,
	ChangeAvailabilityRemoved: true, ChangeRetentionLowered: true, ChangeRetentionRemoved: true,
	ChangeWeightsChanged: true, ChangeTargetLowered: true, ChangeTargetRemoved: true,
}

func change(kind string) Change {
	c := Change{Kind: kind, Impact: ImpactCompatible}
	if breaking[kind] {
		c.Impact = ImpactBreaking
	}
	return c
}

// Diff lists what changed from one snapshot to another: datasets (by id), active
// contract columns, SLA fields, weights, targets, and the name, description, owner and
// access. The order is stable: datasets by name, then SLA, then the rest.
func Diff(from, to Snapshot) []Change {
	out := []Change{}
	fromDS := map[string]SnapshotDataset{}
	for _, d := range from.Datasets {
		fromDS[d.ID] = d
	}
	toDS := map[string]SnapshotDataset{}
	for _, d := range to.Datasets {
		toDS[d.ID] = d
	}
	var dsChanges []Change
	for _, d := range from.Datasets {
		if _, ok := toDS[d.ID]; !ok {
			c := change(ChangeDatasetRemoved)
			c.DatasetID, c.DatasetName = d.ID, d.Name
			dsChanges = append(dsChanges, c)
		}
	}
	for _, d := range to.Datasets {
		prev, ok := fromDS[d.ID]
		if !ok {
			c := change(ChangeDatasetAdded)
			c.DatasetID, c.DatasetName = d.ID, d.Name
			dsChanges = append(dsChanges, c)
			continue
		}
		was := map[string]bool{}
		for _, col := range prev.ContractColumns {
			was[col] = true
		}
		now := map[string]bool{}
		for _, col := range d.ContractColumns {
			now[col] = true
		}
		for _, col := range sortedStrings(prev.ContractColumns) {
			if !now[col] {
				c := change(ChangeContractColumnRemoved)
				c.DatasetID, c.DatasetName, c.Column = d.ID, d.Name, col
				dsChanges = append(dsChanges, c)
			}
		}
		for _, col := range sortedStrings(d.ContractColumns) {
			if !was[col] {
				c := change(ChangeContractColumnAdded)
				c.DatasetID, c.DatasetName, c.Column = d.ID, d.Name, col
				dsChanges = append(dsChanges, c)
			}
		}
	}
	sort.SliceStable(dsChanges, func(i, j int) bool {
		if dsChanges[i].DatasetName != dsChanges[j].DatasetName {
			return dsChanges[i].DatasetName < dsChanges[j].DatasetName
		}
		return dsChanges[i].DatasetID < dsChanges[j].DatasetID
	})
	out = append(out, dsChanges...)

	// SLA: availability objective and retention, higher is stronger.
	num := func(field, lowered, raised, set, removed string, a, b *float64) {
		switch {
		case a == nil && b == nil:
		case a == nil:
			c := change(set)
			c.Field, c.After = field, *b
			out = append(out, c)
		case b == nil:
			c := change(removed)
			c.Field, c.Before = field, *a
			out = append(out, c)
		case *b < *a:
			c := change(lowered)
			c.Field, c.Before, c.After = field, *a, *b
			out = append(out, c)
		case *b > *a:
			c := change(raised)
			c.Field, c.Before, c.After = field, *a, *b
			out = append(out, c)
		}
	}
	num("availability_objective_pct", ChangeAvailabilityLowered, ChangeAvailabilityRaised, ChangeAvailabilitySet,
		ChangeAvailabilityRemoved, from.SLA.AvailabilityObjectivePct, to.SLA.AvailabilityObjectivePct)
	num("retention_days", ChangeRetentionLowered, ChangeRetentionRaised, ChangeRetentionSet, ChangeRetentionRemoved,
		intF(from.SLA.RetentionDays), intF(to.SLA.RetentionDays))

	if !weightsEqual(from.SLA.DimensionWeights, to.SLA.DimensionWeights) {
		c := change(ChangeWeightsChanged)
		c.Field, c.Before, c.After = "dimension_weights", weightsOrNil(from.SLA.DimensionWeights), weightsOrNil(to.SLA.DimensionWeights)
		out = append(out, c)
	}
	for _, d := range quality.AllDimensions() {
		k := string(d)
		a, aok := from.SLA.DimensionTargets[k]
		b, bok := to.SLA.DimensionTargets[k]
		var c Change
		switch {
		case !aok && !bok:
			continue
		case !aok:
			c = change(ChangeTargetAdded)
			c.After = b
		case !bok:
			c = change(ChangeTargetRemoved)
			c.Before = a
		case b < a:
			c = change(ChangeTargetLowered)
			c.Before, c.After = a, b
		case b > a:
			c = change(ChangeTargetRaised)
			c.Before, c.After = a, b
		default:
			continue
		}
		c.Dimension, c.Field = k, "dimension_targets"
		out = append(out, c)
	}

	text := func(kind, field string, a, b any) {
		c := change(kind)
		c.Field, c.Before, c.After = field, a, b
		out = append(out, c)
	}
	if from.Name != to.Name {
		text(ChangeNameChanged, "name", from.Name, to.Name)
	}
	if from.Description != to.Description {
		text(ChangeDescriptionChanged, "description", nil, nil)
	}
	if deref(from.OwnerName) != deref(to.OwnerName) {
		text(ChangeOwnerChanged, "owner_name", from.OwnerName, to.OwnerName)
	}
	if from.Restricted != to.Restricted {
		text(ChangeAccessChanged, "restricted", from.Restricted, to.Restricted)
	}
	return out
}

// BumpOf returns the bump a list of changes calls for: major when one breaks
// consumers, minor when any changed, none otherwise.
func BumpOf(changes []Change) string {
	bump := BumpNone
	for _, c := range changes {
		if c.Impact == ImpactBreaking {
			return BumpMajor
		}
		bump = BumpMinor
	}
	return bump
}

// Next returns the version a bump leads to from v: major → (M+1).0, minor → M.(m+1),
// initial → 1.0 (or v itself for a domain already at a version without history).
func Next(v Version, bump string) Version {
	switch bump {
	case BumpMajor:
		return Version{Major: v.Major + 1}
	case BumpMinor:
		return Version{Major: v.Major, Minor: v.Minor + 1}
	case BumpInitial:
		if v.IsZero() {
			return Version{Major: 1}
		}
		return v
	}
	return v
}

// Counts summarizes a version or a diff.
type Counts struct {
	Datasets   int
	Changes    int
	Breaking   int
	Compatible int
}

// CountsOf counts the changes and the snapshot's datasets.
func CountsOf(s Snapshot, changes []Change) Counts {
	c := Counts{Datasets: len(s.Datasets), Changes: len(changes)}
	for _, ch := range changes {
		if ch.Impact == ImpactBreaking {
			c.Breaking++
		} else {
			c.Compatible++
		}
	}
	return c
}

// summaryPT are the Portuguese phrases of change kinds in a version's change_summary.
var summaryPT = map[string][2]string{ // singular, plural (with %d)
	ChangeDatasetAdded:          {"1 conjunto de dados adicionado", "%d conjuntos de dados adicionados"},
	ChangeDatasetRemoved:        {"1 conjunto de dados removido", "%d conjuntos de dados removidos"},
	ChangeContractColumnRemoved: {"1 coluna de contrato removida", "%d colunas de contrato removidas"},
	ChangeContractColumnAdded:   {"1 coluna de contrato adicionada", "%d colunas de contrato adicionadas"},
	ChangeAvailabilityLowered:   {"objetivo de disponibilidade baixado", "objetivo de disponibilidade baixado"},
	ChangeAvailabilityRaised:    {"objetivo de disponibilidade subido", "objetivo de disponibilidade subido"},
	ChangeAvailabilitySet:       {"objetivo de disponibilidade definido", "objetivo de disponibilidade definido"},
	ChangeAvailabilityRemoved:   {"objetivo de disponibilidade removido", "objetivo de disponibilidade removido"},
	ChangeRetentionLowered:      {"retenção reduzida", "retenção reduzida"},
	ChangeRetentionRaised:       {"retenção aumentada", "retenção aumentada"},
	ChangeRetentionSet:          {"retenção definida", "retenção definida"},
	ChangeRetentionRemoved:      {"retenção removida", "retenção removida"},
	ChangeWeightsChanged:        {"pesos das dimensões alterados", "pesos das dimensões alterados"},
	ChangeTargetLowered:         {"1 meta de dimensão baixada", "%d metas de dimensão baixadas"},
	ChangeTargetRemoved:         {"1 meta de dimensão removida", "%d metas de dimensão removidas"},
	ChangeTargetAdded:           {"1 meta de dimensão nova", "%d metas de dimensão novas"},
	ChangeTargetRaised:          {"1 meta de dimensão subida", "%d metas de dimensão subidas"},
	ChangeNameChanged:           {"nome alterado", "nome alterado"},
	ChangeDescriptionChanged:    {"descrição alterada", "descrição alterada"},
	ChangeOwnerChanged:          {"responsável alterado", "responsável alterado"},
	ChangeAccessChanged:         {"acesso alterado", "acesso alterado"},
	ChangeRepublished:           {"republicado após descontinuação", "republicado após descontinuação"},
}

// SummaryPT is a version's change_summary: breaking changes first, in Portuguese
// (section text stays Portuguese, like report headings).
func SummaryPT(bump string, changes []Change) string {
	if bump == BumpInitial {
		return "Primeira publicação."
	}
	counts := map[string]int{}
	var order []string
	for _, pass := range []string{ImpactBreaking, ImpactCompatible} {
		for _, c := range changes {
			if c.Impact != pass {
				continue
			}
			if counts[c.Kind] == 0 {
				order = append(order, c.Kind)
			}
			counts[c.Kind]++
		}
	}
	parts := make([]string, 0, len(order))
	for _, k := range order {
		ph := summaryPT[k]
		if counts[k] == 1 {
			parts = append(parts, ph[0])
		} else if strings.Contains(ph[1], "%d") {
			parts = append(parts, fmt.Sprintf(ph[1], counts[k]))
		} else {
			parts = append(parts, ph[1])
		}
	}
	if len(parts) == 0 {
		return "Sem alterações."
	}
	s := strings.Join(parts, "; ")
	return strings.ToUpper(s[:1]) + s[1:] + "."
}

// VersionRow is a published version as stored.
type VersionRow struct {
	DomainID      string
	WorkspaceID   string
	Version       Version
	Bump          string
	ChangeSummary string
	Changes       []Change
	Snapshot      Snapshot
	Counts        Counts
	PublishedAt   time.Time
	PublishedBy   string
}

// weightsEqual compares the weights scores would use: no weights means the default
// 20 percent each.
func weightsEqual(a, b map[string]float64) bool {
	eff := func(m map[string]float64) map[string]float64 {
		if m != nil {
			return m
		}
		out := map[string]float64{}
		for _, d := range quality.AllDimensions() {
			out[string(d)] = 20
		}
		return out
	}
	a, b = eff(a), eff(b)
	for _, d := range quality.AllDimensions() {
		if math.Abs(a[string(d)]-b[string(d)]) > 1e-9 {
			return false
		}
	}
	return true
}

func weightsOrNil(m map[string]float64) any {
	if m == nil {
		return nil
	}
	return cloneMap(m)
}

func intF(p *int) *float64 {
	if p == nil {
		return nil
	}
	v := float64(*p)
	return &v
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func sortedStrings(s []string) []string {
	out := append([]string{}, s...)
	sort.Strings(out)
	return out
}
