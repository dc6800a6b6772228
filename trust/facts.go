package trust

import (
	"regexp"

	"github.com/vigia-data/vigia/quality"
	"sort"
	"strings"
	"time"
)

// Facts is everything trust reads about one dataset, loaded for many datasets at once
// in a fixed number of queries (Store.Facts). Only counts, statistics, names and states:
// never a value of the data.
type Facts struct {
	DatasetID    string
	WorkspaceID  string
	ConnectionID string
	Schema       string
	Table        string
	Kind         string
	CreatedAt    time.Time
	// LatestScore is the overall score of the last scan; nil before one or when no
	// dimension could be computed.
	LatestScore *float64
	// Dimensions are the last score's dimensions (nil entries could not be computed).
	Dimensions map[string]*float64
	LastScanAt *time.Time
	// Profiled is true once a scan has saved a profile of the dataset.
	Profiled bool
	// Verdict is the last verdict: pass, warn, fail or unknown.
	Verdict  string
	RowCount *int64
	// RowCountExact is false when the last profile read the first rows only (a
	// cost-guarded view): RowCount is then the rows read, a lower bound.
	RowCountExact *bool
	// EmptyExpected is true when an active row_count_min rule with min_rows 0 says the
	// dataset may be empty (a staging table emptied by each load).
	EmptyExpected bool
	// LastFailure is the stable code of the last scan's failure to profile the dataset
	// when it came after its last profile (not_populated, permission_denied ...).
	LastFailure     *string
	LatestTimestamp *time.Time // newest value of the measuring timestamp column
	ProfiledAt      *time.Time
	// Issues are the dataset's open and acknowledged issues, as the store loads them.
	Issues []quality.VerdictIssue
	// CriticalIssues and WarningIssues count the standing issues, and CriticalIssueIDs and
	// WarningIssueIDs name them: quality.CountStanding over Issues (open, or acknowledged
	// except acknowledged schema_drift; modeling and bi_refresh never count), the count
	// the verdict reads too. See CountIssues.
	// Pipelines are the failing and late pipelines writing the dataset (filled by the
	// service from its Pipelines port, not by the store).
	Pipelines        []PipelineFact
	CriticalIssues   int
	WarningIssues    int
	CriticalIssueIDs []string
	WarningIssueIDs  []string
	// UnackedSchemaChanges counts open (not acknowledged) schema_drift issues; the
	// oldest was opened at OldestUnackedSchemaChange.
	UnackedSchemaChanges      int
	OldestUnackedSchemaChange *time.Time
	Columns                   []ColumnFact
	Domains                   []DomainFact
	QueriesPerDay             *float64 // nil: the source keeps no usage counter
	// Consumptions30d counts recorded reads of the dataset in the last 30 days.
	Consumptions30d int
	LastConsumedAt  *time.Time
	// Scans30d counts the profiles saved in the last 30 days.
	Scans30d int
	Contract ContractFact
	// Layer is bronze, silver or gold when the schema or table name says so.
	Layer *string
	// UsageClass is hot, active, cold or dead (see Store.Facts).
	UsageClass string
}

// CountIssues sets the standing-issue counts and ids from Issues with
// quality.CountStanding: the verdict, the trust score and decision and readiness count
// a dataset's issues the one same way.
func (f *Facts) CountIssues() {
	c := quality.CountStanding(f.Issues)
	f.CriticalIssues, f.WarningIssues, f.CriticalIssueIDs, f.WarningIssueIDs = c.Critical, c.Warning, c.CriticalIDs, c.WarningIDs
}

// Name is schema.table.
func (f Facts) Name() string {
	if f.Schema == "" {
		return f.Table
	}
	return f.Schema + "." + f.Table
}

// ColumnFact is a column as trust reads it: its name and detected semantic type.
type ColumnFact struct {
	Name         string
	DataType     string
	SemanticType string // "" when none was detected
	// SemanticMatches counts sampled values that looked like the semantic type.
	SemanticMatches int
	NullRate        *float64
	PrimaryKey      bool
}

// DomainFact is a domain the dataset belongs to.
type DomainFact struct {
	ID        string
	Name      string
	Status    string
	Version   string
	OwnerName *string
}

// ContractFact is the dataset's data contract as far as trust needs it.
type ContractFact struct {
	// Active is true when a producer-accepted contract exists.
	Active bool
	// Valid is false when the last check (after a scan, or when a version was accepted)
	// found the active contract broken; true without one.
	Valid bool
	// Version is the contract version the last check used ("" before one).
	Version string
	// Violations are the codes of what broke it (column_missing, type_changed,
	// required_has_nulls, quality_rule_failed), sorted.
	Violations []string
}

// piiSemanticTypes are the semantic types that hold personal data.
var piiSemanticTypes = map[string]bool{
	"nif": true, "nif_pt": true, "niss": true, "niss_pt": true, "cc_pt": true, "iban": true,
	"email": true, "phone": true, "phone_pt": true, "postal_code_pt": true, "postcode_pt": true,
	"person_name": true, "name": true, "address": true, "birth_date": true, "ip": true, "ip_address": true,
	"credit_card": true, "passport": true, "nss": true, "dni_es": true, "nie_es": true,
}

// PIINamePattern matches, case-insensitively, column names that say they hold personal
// data. It is written in the common subset of Go's and Postgres' regular expressions so
// that the store can filter with the very same rule.
const PIINamePattern = `(^|[-_. ])(nif|niss|nic|nss|cc|iban|e?mail|telefone|telemovel|phone|mobile|` +
	`nome|name|apelido|surname|morada|address|endereco|nascimento|birth|dob|cartao|card|passaporte|passport|ip)($|[-_. ]|[0-9])`

var piiNameRE = regexp.MustCompile("(?i)" + PIINamePattern)

// PIISemanticTypes returns the semantic types that hold personal data, sorted.
func PIISemanticTypes() []string { return sortedKeys(piiSemanticTypes) }

// UsageClassOf classifies a dataset's use: hot with 100+ queries a day or 100+ recorded
// reads in 30 days; active with 1+ of either; cold with some queries or a read in the
// last 180 days; dead otherwise. The store's FindDatasets applies the same thresholds.
func UsageClassOf(qpd *float64, reads30d int, lastRead *time.Time, now time.Time) string {
	// Unknown query usage (a source without counters) classifies by registered reads alone.
	queriesPerDay := 0.0
	if qpd != nil {
		queriesPerDay = *qpd
	}
	switch {
	case queriesPerDay >= 100 || reads30d >= 100:
		return "hot"
	case queriesPerDay >= 1 || reads30d >= 1:
		return "active"
	case queriesPerDay > 0 || lastRead != nil && now.Sub(*lastRead) <= 180*24*time.Hour:
		return "cold"
	}
	return "dead"
}

// PII says which columns hold personal data: columns whose sampled values were detected
// as a personal-data semantic type (nif, email, phone, iban, ...) and columns whose names
// say so. Unmasked are those whose sampled values actually look like the personal data
// (a detected semantic type with matches): a column named email whose values were hashed
// is PII but masked. Only names are returned, never values.
func PII(cols []ColumnFact) (columns, unmasked []string) {
	columns, unmasked = []string{}, []string{}
	for _, c := range cols {
		detected := piiSemanticTypes[strings.ToLower(c.SemanticType)] && c.SemanticMatches > 0
		if detected || piiNameRE.MatchString(c.Name) {
			columns = append(columns, c.Name)
			if detected {
				unmasked = append(unmasked, c.Name)
			}
		}
	}
	sort.Strings(columns)
	sort.Strings(unmasked)
	return columns, unmasked
}

// FreshnessOf returns the observed age of the newest row at now, in hours rounded to two
// decimals, and whether it is within sla; both nil without a measuring timestamp.
func FreshnessOf(f Facts, now time.Time, sla time.Duration) (ageHours *float64, met *bool) {
	if f.LatestTimestamp == nil {
		return nil, nil
	}
	age := now.Sub(*f.LatestTimestamp)
	h := round2(max(0, age.Hours()))
	ok := age <= sla
	return &h, &ok
}
