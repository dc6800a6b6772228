package synthetic_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/vigia-data/vigia/synthetic"
)

func TestCSVKeepsSpreadsheetsFromReadingFormulasAndQuotesPerRFC4180(t *testing.T) {
	tbl := &synthetic.Table{Name: "t", Rows: 3,
		Columns: []synthetic.Column{{Name: "id", SQLType: synthetic.TypeInteger}, {Name: "nota", SQLType: synthetic.TypeText, Nullable: true},
			{Name: "saldo", SQLType: synthetic.TypeNumeric, Scale: 2}},
		Values: [][]string{{"1", "2", "3"}, {"=HYPERLINK(\"x\")", "a,b", ""}, {"-12.50", "0.00", "3.10"}},
		Nulls:  [][]bool{{false, false, false}, {false, false, true}, {false, false, false}}}
	var b bytes.Buffer
	if err := synthetic.WriteCSV(&b, tbl); err != nil {
		t.Fatal(err)
	}
	want := "id,nota,saldo\r\n1,\"'=HYPERLINK(\"\"x\"\")\",-12.50\r\n2,\"a,b\",0.00\r\n3,,3.10\r\n"
	if b.String() != want {
		t.Fatalf("got %q, want %q", b.String(), want)
	}
}

func TestValidForUsesTheScansValidators(t *testing.T) {
	for _, c := range []struct {
		typ, v string
		ok     bool
	}{
		{"nif_pt", "123456789", true}, {"nif_pt", "123456780", false}, {"iban", "PT50000201231234567890154", true},
		{"postal_code_pt", "1000-001", true}, {"postal_code_pt", "1000001", false}, {"email", "a@example.com", true},
	} {
		if got := synthetic.ValidFor(c.typ, "PT", c.v); got != c.ok {
			t.Errorf("%s %q: got %v", c.typ, c.v, got)
		}
	}
	if !strings.HasPrefix(synthetic.CreateTable(&synthetic.Table{Name: "x", Columns: []synthetic.Column{{Name: "id", SQLType: synthetic.TypeInteger, PrimaryKey: true}}}), `CREATE TABLE "x"`) {
		t.Fatal("create table")
	}
}
