package source_test

import (
	"testing"

	"github.com/vigia-data/vigia/source"
)

func TestValueWidthOfCommonTypes(t *testing.T) {
	for typ, want := range map[string]int{
		"integer": 4, "bigint": 8, "int(11)": 4, "bigint(20) unsigned": 8, "timestamp with time zone": 8, "timestamp(3) without time zone": 8,
		"date": 4, "boolean": 1, "tinyint(1)": 1, "smallint": 2, "double precision": 8, "uuid": 16, "datetime(6)": 8,
		"text": 0, "character varying(100)": 0, "varchar(30)": 0, "numeric(12,2)": 0, "jsonb": 0,
	} {
		if got := source.ValueWidth(typ); got != want {
			t.Errorf("%s: %d, want %d", typ, got, want)
		}
	}
}

func TestProfileBytesCountsNonNullValues(t *testing.T) {
	avg := 7.5
	cols := []source.Column{{Name: "id", DataType: "integer"}, {Name: "nome", DataType: "text"}, {Name: "valor", DataType: "numeric(10,2)"},
		{Name: "ausente", DataType: "bigint"}}
	p := &source.TableProfile{RowCount: 100, Columns: []source.ColumnProfile{
		{Name: "id"}, {Name: "nome", NullCount: 20, AvgLength: &avg}, {Name: "valor", NullCount: 100}}}
	// id 100×4 + nome 80×7.5 + valor all null + ausente not profiled.
	if got := source.ProfileBytes(cols, p); got != 1000 {
		t.Fatalf("bytes %d, want 1000", got)
	}
	if source.ProfileBytes(cols, nil) != 0 {
		t.Fatal("nil profile")
	}
}
