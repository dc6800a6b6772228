package contract

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/rule"
	"github.com/vigia-data/vigia/trust"
)

// DomainInfo is what a contract takes from a domain the dataset belongs to: its name,
// owner, SLA and the teams granted on it.
type DomainInfo struct {
	ID                       string
	Name                     string
	OwnerName                *string
	AvailabilityObjectivePct *float64
	RetentionDays            *int
	DimensionTargets         map[string]float64
	Teams                    []TeamGrant
}

// TeamGrant is a team's grant on a domain.
type TeamGrant struct {
	TeamID string
	Name   string
	Role   string // member or manager
}

// Observed is what the observed contract is rendered from.
type Observed struct {
	Dataset catalog.Dataset
	Rules   []rule.Rule // the dataset's active rules, as the reader may see them
	Domains []DomainInfo
}

// Classifications of a contract property.
const (
	ClassificationPII      = "pii"
	ClassificationInternal = "internal"
)

// ObservedDocument renders the contract the data currently honours: every column with
// its physical and logical type; required when the source declares it NOT NULL or the
// last profile, read over the whole table, found no null in a non-empty table; unique
// when it is the primary key's only column, the source declares it alone unique, or the
// last exact profile counted as many distinct values as rows and no null; the primary
// key; the classification (pii for a column trust counts as personal data); the active
// rules as quality checks; the SLA, owner and teams of its domain (the first by name
// when several).
func ObservedDocument(o Observed) Document {
	d := o.Dataset
	doc := Document{APIVersion: APIVersion, Kind: "DataContract", ID: d.ID, Name: d.Name(), Version: "0.0.0", Status: "draft",
		CustomProperties: []CustomProperty{{Property: "vigiaDatasetId", Value: d.ID}}}
	if d.ConnectionName != "" {
		doc.CustomProperties = append(doc.CustomProperties, CustomProperty{Property: "vigiaConnection", Value: d.ConnectionName})
	}
	cols := append([]catalog.Column{}, d.Columns...)
	sort.SliceStable(cols, func(i, j int) bool { return cols[i].Position < cols[j].Position })
	rows, rowsExact := int64(-1), false
	if d.RowCount != nil {
		rows = *d.RowCount
		rowsExact = d.RowCountExact == nil || *d.RowCountExact
	}
	pkCount := 0
	for _, c := range cols {
		if c.PrimaryKey {
			pkCount++
		}
	}
	facts := make([]trust.ColumnFact, 0, len(cols))
	for _, c := range cols {
		f := trust.ColumnFact{Name: c.Name}
		if c.Profile != nil && c.Profile.Semantic != nil {
			f.SemanticType, f.SemanticMatches = c.Profile.Semantic.Type, c.Profile.Semantic.Matches
		}
		facts = append(facts, f)
	}
	pii, _ := trust.PII(facts)
	isPII := map[string]bool{}
	for _, n := range pii {
		isPII[n] = true
	}
	obj := Object{Name: d.Table, PhysicalName: d.Name(), PhysicalType: d.Kind, LogicalType: "object", Properties: []Property{}}
	pkPos := 0
	byName := map[string]int{}
	for _, c := range cols {
		p := Property{Name: c.Name, PhysicalType: c.DataType, LogicalType: LogicalType(c.Class, c.DataType),
			PrimaryKey: c.PrimaryKey, Partitioned: c.Partition, Classification: ClassificationInternal}
		if c.PrimaryKey {
			pkPos++
			p.PrimaryKeyPosition = pkPos
		}
		if isPII[c.Name] {
			p.Classification = ClassificationPII
		}
		prof := c.Profile
		exact := prof != nil && !prof.Estimated && rowsExact && rows > 0
		p.Required = !c.Nullable || c.PrimaryKey || exact && prof.NullCount == 0
		p.Unique = c.PrimaryKey && pkCount == 1 || c.Unique ||
			exact && prof.NullCount == 0 && prof.Distinct != nil && !prof.Distinct.Estimated && int64(prof.Distinct.Value) == rows
		byName[c.Name] = len(obj.Properties)
		obj.Properties = append(obj.Properties, p)
	}
	for _, r := range o.Rules {
		if !r.Active {
			continue
		}
		q := QualityOf(r)
		keys := r.Params.KeyColumns()
		if i, ok := byName[firstOf(keys)]; ok && len(keys) == 1 && r.Type != rule.TypeCustomSQL {
			obj.Properties[i].Quality = append(obj.Properties[i].Quality, q)
			continue
		}
		obj.Quality = append(obj.Quality, q)
	}
	doc.Schema = []Object{obj}
	domains := append([]DomainInfo{}, o.Domains...)
	sort.SliceStable(domains, func(i, j int) bool { return domains[i].Name < domains[j].Name })
	if len(domains) > 0 {
		dm := domains[0]
		doc.Domain, doc.DataProduct = dm.Name, dm.Name
		doc.SLAProperties = slaOf(dm)
	}
	for _, dm := range domains {
		if dm.OwnerName != nil && *dm.OwnerName != "" {
			doc.Team = append(doc.Team, TeamMember{Name: *dm.OwnerName, Role: "owner"})
		}
		for _, t := range dm.Teams {
			doc.Team = append(doc.Team, TeamMember{Name: t.Name, Role: "domain " + t.Role})
		}
	}
	return doc
}

func firstOf(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// slaOf lists a domain's SLA as ODCS service-level properties.
func slaOf(dm DomainInfo) []SLAProperty {
	var out []SLAProperty
	if dm.AvailabilityObjectivePct != nil {
		out = append(out, SLAProperty{Property: "availability", Value: *dm.AvailabilityObjectivePct, Unit: "percent"})
	}
	if dm.RetentionDays != nil {
		out = append(out, SLAProperty{Property: "retention", Value: *dm.RetentionDays, Unit: "d"})
	}
	dims := make([]string, 0, len(dm.DimensionTargets))
	for k := range dm.DimensionTargets {
		dims = append(dims, k)
	}
	sort.Strings(dims)
	for _, k := range dims {
		out = append(out, SLAProperty{Property: "qualityTarget." + k, Value: dm.DimensionTargets[k], Unit: "score"})
	}
	return out
}

// dimensionOf maps a rule type to an ODCS quality dimension.
var dimensionOf = map[string]string{
	rule.TypeNotNull: "completeness", rule.TypeUnique: "uniqueness", rule.TypeAcceptedValues: "conformity",
	rule.TypePattern: "conformity", rule.TypeRange: "conformity", rule.TypeReferential: "consistency",
	rule.TypeFreshness: "timeliness", rule.TypeRowCountMin: "completeness", rule.TypeCustomSQL: "accuracy",
}

// QualityOf renders a rule as a custom quality check of the engine vigia. A reference
// dataset the reader cannot see is already absent from the rule's parameters.
func QualityOf(r rule.Rule) Quality {
	params := map[string]any{}
	if b, err := json.Marshal(r.Params); err == nil {
		_ = json.Unmarshal(b, &params)
	}
	return Quality{Type: "custom", Name: r.Name, Dimension: dimensionOf[r.Type], Severity: r.Severity, Engine: EngineVigia,
		Implementation: map[string]any{"rule_type": r.Type, "params": params}}
}

// LogicalType is the ODCS logical type of a column from its class and physical type.
func LogicalType(class, dataType string) string {
	t := strings.ToLower(strings.TrimSpace(dataType))
	switch {
	case strings.HasSuffix(t, "[]") || strings.HasPrefix(t, "array"):
		return "array"
	case class == "boolean" || t == "boolean" || t == "bool" || strings.HasPrefix(t, "tinyint(1)"):
		return "boolean"
	case class == "numeric":
		if integerRank(t) > 0 {
			return "integer"
		}
		return "number"
	case class == "temporal":
		return "date"
	case class == "text":
		return "string"
	case t == "json" || t == "jsonb":
		return "object"
	case t == "uuid" || strings.Contains(t, "char") || strings.Contains(t, "text"):
		return "string"
	}
	return "string"
}
