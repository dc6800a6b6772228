package quality_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vigia-data/vigia/quality"
)

func col(pos int, name, typ string) quality.ColumnShape {
	return quality.ColumnShape{Name: name, Type: typ, Position: pos}
}

func TestDiffColumns(t *testing.T) {
	base := []quality.ColumnShape{col(1, "id", "integer"), col(2, "cust_name", "varchar(100)"), col(3, "amount", "numeric(10,2)")}
	tests := []struct {
		name string
		prev []quality.ColumnShape
		curr []quality.ColumnShape
		want quality.Drift
	}{
		{
			name: "NoChange",
			prev: base, curr: base,
			want: quality.Drift{Added: []quality.ColumnShape{}, Dropped: []quality.ColumnShape{}, TypeChanged: []quality.TypeChange{}, Renames: []quality.RenameSuggestion{}},
		},
		{
			name: "CatalogSpellingIsNoChange",
			prev: base,
			curr: []quality.ColumnShape{col(1, "id", "INT4"), col(2, "cust_name", "character varying (100)"), col(3, "amount", "DECIMAL(10, 2)")},
			want: quality.Drift{Added: []quality.ColumnShape{}, Dropped: []quality.ColumnShape{}, TypeChanged: []quality.TypeChange{}, Renames: []quality.RenameSuggestion{}},
		},
		{
			name: "AddedOnlyIsWarning",
			prev: base,
			curr: append(append([]quality.ColumnShape{}, base...), col(4, "created_at", "timestamptz")),
			want: quality.Drift{Added: []quality.ColumnShape{col(4, "created_at", "timestamptz")}, Dropped: []quality.ColumnShape{},
				TypeChanged: []quality.TypeChange{}, Renames: []quality.RenameSuggestion{}, Severity: quality.SeverityWarning},
		},
		{
			name: "DroppedIsCriticalAndStructural",
			prev: base,
			curr: base[:2],
			want: quality.Drift{Added: []quality.ColumnShape{}, Dropped: []quality.ColumnShape{col(3, "amount", "numeric(10,2)")},
				TypeChanged: []quality.TypeChange{}, Renames: []quality.RenameSuggestion{}, Severity: quality.SeverityCritical, Structural: true},
		},
		{
			name: "NarrowingTypeIsCritical",
			prev: base,
			curr: []quality.ColumnShape{col(1, "id", "integer"), col(2, "cust_name", "varchar(100)"), col(3, "amount", "integer")},
			want: quality.Drift{Added: []quality.ColumnShape{}, Dropped: []quality.ColumnShape{},
				TypeChanged: []quality.TypeChange{{Column: "amount", From: "numeric(10,2)", To: "integer"}},
				Renames:     []quality.RenameSuggestion{}, Severity: quality.SeverityCritical, Structural: true},
		},
		{
			name: "WideningTypeIsStructuralWarning",
			prev: base,
			curr: []quality.ColumnShape{col(1, "id", "bigint"), col(2, "cust_name", "varchar(255)"), col(3, "amount", "numeric(12,2)")},
			want: quality.Drift{Added: []quality.ColumnShape{}, Dropped: []quality.ColumnShape{},
				TypeChanged: []quality.TypeChange{
					{Column: "id", From: "integer", To: "bigint", Widening: true},
					{Column: "cust_name", From: "varchar(100)", To: "varchar(255)", Widening: true},
					{Column: "amount", From: "numeric(10,2)", To: "numeric(12,2)", Widening: true},
				},
				Renames: []quality.RenameSuggestion{}, Severity: quality.SeverityWarning, Structural: true},
		},
		{
			name: "RenameBySimilarName",
			prev: base,
			curr: []quality.ColumnShape{col(1, "id", "integer"), col(3, "amount", "numeric(10,2)"), col(4, "customer_name", "varchar(100)")},
			want: quality.Drift{Added: []quality.ColumnShape{col(4, "customer_name", "varchar(100)")}, Dropped: []quality.ColumnShape{col(2, "cust_name", "varchar(100)")},
				TypeChanged: []quality.TypeChange{},
				Renames:     []quality.RenameSuggestion{{From: "cust_name", To: "customer_name", Type: "varchar(100)", Similarity: 1, Reason: "similar_name"}},
				Severity:    quality.SeverityCritical, Structural: true},
		},
		{
			name: "RenameBySamePositionAndType",
			prev: base,
			curr: []quality.ColumnShape{col(1, "id", "integer"), col(2, "nome", "varchar(100)"), col(3, "amount", "numeric(10,2)")},
			want: quality.Drift{Added: []quality.ColumnShape{col(2, "nome", "varchar(100)")}, Dropped: []quality.ColumnShape{col(2, "cust_name", "varchar(100)")},
				TypeChanged: []quality.TypeChange{},
				Renames:     []quality.RenameSuggestion{{From: "cust_name", To: "nome", Type: "varchar(100)", Similarity: 0.38, Reason: "same_position"}},
				Severity:    quality.SeverityCritical, Structural: true},
		},
		{
			name: "NoRenameAcrossTypes",
			prev: base,
			curr: []quality.ColumnShape{col(1, "id", "integer"), col(2, "cust_name", "varchar(100)"), col(3, "amount_eur", "bigint")},
			want: quality.Drift{Added: []quality.ColumnShape{col(3, "amount_eur", "bigint")}, Dropped: []quality.ColumnShape{col(3, "amount", "numeric(10,2)")},
				TypeChanged: []quality.TypeChange{}, Renames: []quality.RenameSuggestion{}, Severity: quality.SeverityCritical, Structural: true},
		},
		{
			name: "NoRenameForDissimilarNames",
			prev: []quality.ColumnShape{col(1, "first_name", "text"), col(2, "x", "int")},
			curr: []quality.ColumnShape{col(1, "x", "int"), col(2, "last_name", "text")},
			want: quality.Drift{Added: []quality.ColumnShape{col(2, "last_name", "text")}, Dropped: []quality.ColumnShape{col(1, "first_name", "text")},
				TypeChanged: []quality.TypeChange{}, Renames: []quality.RenameSuggestion{}, Severity: quality.SeverityCritical, Structural: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := quality.DiffColumns(tt.prev, tt.curr)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("drift (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDiffColumnsPairsEachColumnOnce(t *testing.T) {
	prev := []quality.ColumnShape{col(1, "created", "timestamp"), col(2, "updated", "timestamp")}
	curr := []quality.ColumnShape{col(3, "created_at", "timestamp"), col(4, "updated_at", "timestamp")}
	got := quality.DiffColumns(prev, curr).Renames
	want := []quality.RenameSuggestion{
		{From: "created", To: "created_at", Type: "timestamp", Similarity: 0.78, Reason: "similar_name"},
		{From: "updated", To: "updated_at", Type: "timestamp", Similarity: 0.78, Reason: "similar_name"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("renames (-want +got):\n%s", diff)
	}
}

func TestNameSimilarity(t *testing.T) {
	tests := []struct {
		a, b    string
		atLeast float64
		below   float64
	}{
		{"cust_name", "customer_name", 0.7, 1.01},
		{"created", "created_at", 0.7, 1.01},
		{"CustomerName", "customer_name", 1, 1.01},
		{"first_name", "last_name", 0, 0.7},
		{"amount", "status", 0, 0.5},
		{"e", "email", 0, 0.7},
	}
	for _, tt := range tests {
		t.Run(tt.a+"~"+tt.b, func(t *testing.T) {
			got := quality.NameSimilarity(tt.a, tt.b)
			if got < tt.atLeast || got >= tt.below {
				t.Fatalf("NameSimilarity = %v, want in [%v, %v)", got, tt.atLeast, tt.below)
			}
		})
	}
}

func TestNormalizeType(t *testing.T) {
	tests := map[string]string{
		"INT4":                        "integer",
		"int(11)":                     "integer",
		"int(11) unsigned":            "integer unsigned",
		"int unsigned":                "integer unsigned",
		"character varying(255)":      "varchar(255)",
		"Numeric( 10 , 2 )":           "numeric(10,2)",
		"timestamp with time zone":    "timestamptz",
		"timestamp(3) with time zone": "timestamptz(3)",
		"timestamp without time zone": "timestamp",
		"double":                      "double precision",
		"text":                        "text",
	}
	for in, want := range tests {
		t.Run(in, func(t *testing.T) {
			if got := quality.NormalizeType(in); got != want {
				t.Fatalf("NormalizeType(%q) = %q, want %q", in, got, want)
			}
		})
	}
}

func TestDiffColumnsWidening(t *testing.T) {
	tests := []struct {
		from, to string
		want     bool
	}{
		{"smallint", "integer", true},
		{"bigint", "integer", false},
		{"varchar(10)", "text", true},
		{"varchar(10)", "varchar", true},
		{"varchar(10)", "varchar(5)", false},
		{"char(3)", "varchar(10)", true},
		{"real", "double precision", true},
		{"numeric(10,2)", "numeric(10,4)", false},
		{"numeric(10,2)", "numeric(12,4)", true},
		{"numeric(10)", "numeric(12,2)", true},
		{"numeric(10,2)", "numeric", true},
		{"integer", "numeric", true},
		{"integer", "text", false},
		{"timestamp", "timestamptz", false},
		{"timestamp(3)", "timestamp(6)", true},
	}
	for _, tt := range tests {
		t.Run(tt.from+"→"+tt.to, func(t *testing.T) {
			d := quality.DiffColumns([]quality.ColumnShape{col(1, "c", tt.from)}, []quality.ColumnShape{col(1, "c", tt.to)})
			if len(d.TypeChanged) != 1 {
				t.Fatalf("type changes = %v", d.TypeChanged)
			}
			if got := d.TypeChanged[0].Widening; got != tt.want {
				t.Fatalf("widening = %v, want %v", got, tt.want)
			}
		})
	}
}
