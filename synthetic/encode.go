package synthetic

import (
	"archive/zip"
	"bufio"
	"compress/flate"
	"encoding/csv"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"time"
)

// zipTime is every ZIP entry's modification time: a fixed instant keeps packs
// byte-identical.
var zipTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// WriteCSV writes a table as RFC 4180 CSV with a header row; NULL is an empty field,
// and a text value a spreadsheet would read as a formula (=, +, -, @, tab, CR first) is
// prefixed with a quote.
func WriteCSV(w io.Writer, t *Table) error {
	cw := csv.NewWriter(w)
	cw.UseCRLF = true
	header := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		header[i] = c.Name
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	rec := make([]string, len(t.Columns))
	for r := 0; r < t.Rows; r++ {
		for c, col := range t.Columns {
			v, null := t.Value(c, r)
			switch {
			case null:
				rec[c] = ""
			case col.SQLType == TypeText:
				rec[c] = defuse(v)
			default:
				rec[c] = v
			}
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// defuse keeps a spreadsheet from reading a text value as a formula.
func defuse(v string) string {
	if v != "" && strings.ContainsRune("=+-@\t\r", rune(v[0])) {
		return "'" + v
	}
	return v
}

// JSONRows returns a table's rows as a JSON array of objects: numbers as numbers,
// booleans as booleans, NULL as null.
func JSONRows(t *Table) []map[string]any {
	out := make([]map[string]any, t.Rows)
	for r := 0; r < t.Rows; r++ {
		row := make(map[string]any, len(t.Columns))
		for c, col := range t.Columns {
			v, null := t.Value(c, r)
			switch {
			case null:
				row[col.Name] = nil
			case col.SQLType == TypeInteger || col.SQLType == TypeNumeric:
				row[col.Name] = json.Number(v)
			case col.SQLType == TypeBoolean:
				row[col.Name] = v == "true"
			default:
				row[col.Name] = v
			}
		}
		out[r] = row
	}
	return out
}

// ManifestColumn describes a generated column in a manifest.
type ManifestColumn struct {
	Name            string  `json:"name"`
	Type            string  `json:"type"`
	Nullable        bool    `json:"nullable"`
	PrimaryKey      bool    `json:"primary_key"`
	Unique          bool    `json:"unique"`
	SemanticType    *string `json:"semantic_type"`
	References      *string `json:"references" doc:"table.column of a foreign key in the pack"`
	QuasiIdentifier bool    `json:"quasi_identifier"`
	PII             bool    `json:"pii"`
}

// ManifestColumns lists a table's columns for a manifest.
func ManifestColumns(t *Table) []ManifestColumn {
	out := make([]ManifestColumn, 0, len(t.Columns))
	for _, c := range t.Columns {
		mc := ManifestColumn{Name: c.Name, Type: columnType(c), Nullable: c.Nullable, PrimaryKey: c.PrimaryKey, Unique: c.Unique,
			QuasiIdentifier: c.QuasiIdentifier, PII: c.PII}
		if c.Semantic != "" {
			s := c.Semantic
			mc.SemanticType = &s
		}
		if c.Ref != nil {
			s := c.Ref.Table + "." + c.Ref.Column
			mc.References = &s
		}
		out = append(out, mc)
	}
	return out
}

func columnType(c Column) string {
	if c.SQLType == TypeNumeric {
		return "NUMERIC(18," + strconv.Itoa(c.Scale) + ")"
	}
	return c.SQLType
}

// SchemaSQL is the pack's DDL: one CREATE TABLE per table, parents first, with primary
// keys, NOT NULL and foreign keys; portable to Postgres and SQLite.
func SchemaSQL(p *Pack) string {
	var b strings.Builder
	b.WriteString("-- Vigia synthetic pack: generated from profiles, never from stored values.\n")
	for _, t := range p.Tables {
		b.WriteString(CreateTable(t))
		b.WriteString(";\n\n")
	}
	return b.String()
}

// CreateTable is one table's CREATE TABLE statement (without the semicolon).
func CreateTable(t *Table) string {
	var b strings.Builder
	b.WriteString("CREATE TABLE " + quoteIdent(t.Name) + " (\n")
	var pk []string
	var lines []string
	for _, c := range t.Columns {
		line := "  " + quoteIdent(c.Name) + " " + columnType(c)
		if !c.Nullable {
			line += " NOT NULL"
		}
		if c.Unique && !c.PrimaryKey {
			line += " UNIQUE"
		}
		if c.PrimaryKey {
			pk = append(pk, quoteIdent(c.Name))
		}
		lines = append(lines, line)
	}
	if len(pk) > 0 {
		lines = append(lines, "  PRIMARY KEY ("+strings.Join(pk, ", ")+")")
	}
	done := map[string]bool{}
	for _, c := range t.Columns {
		switch {
		case c.Ref == nil:
		case c.Ref.Group == "":
			lines = append(lines, "  FOREIGN KEY ("+quoteIdent(c.Name)+") REFERENCES "+quoteIdent(c.Ref.Table)+" ("+quoteIdent(c.Ref.Column)+")")
		case !done[c.Ref.Group]:
			// A composite key: one constraint over its columns, position by position.
			done[c.Ref.Group] = true
			var from, to []string
			for _, o := range t.Columns {
				if o.Ref != nil && o.Ref.Group == c.Ref.Group {
					from, to = append(from, quoteIdent(o.Name)), append(to, quoteIdent(o.Ref.Column))
				}
			}
			lines = append(lines, "  FOREIGN KEY ("+strings.Join(from, ", ")+") REFERENCES "+quoteIdent(c.Ref.Table)+" ("+strings.Join(to, ", ")+")")
		}
	}
	b.WriteString(strings.Join(lines, ",\n"))
	b.WriteString("\n)")
	return b.String()
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// WriteZIP writes the pack as a ZIP built on the fly: a CSV per table, schema.sql and
// manifest.json, each entry with the same fixed time so that the bytes depend only on
// the pack.
func WriteZIP(w io.Writer, p *Pack) error {
	manifest := PackManifest(p, FormatZIP)
	bw := bufio.NewWriterSize(w, 64<<10)
	zw := zip.NewWriter(bw)
	zw.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(out, flate.BestSpeed)
	})
	create := func(name string) (io.Writer, error) {
		return zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: zipTime})
	}
	for _, t := range p.Tables {
		f, err := create(t.Name + ".csv")
		if err != nil {
			return err
		}
		if err := WriteCSV(f, t); err != nil {
			return err
		}
	}
	f, err := create("schema.sql")
	if err != nil {
		return err
	}
	if _, err := io.WriteString(f, SchemaSQL(p)); err != nil {
		return err
	}
	f, err = create("manifest.json")
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(manifest); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return bw.Flush()
}

// EvaluationDoc is an evaluation as the pack manifest writes it.
type EvaluationDoc struct {
	UtilityScore      float64            `json:"utility_score"`
	UtilityComponents map[string]float64 `json:"utility_components"`
	UtilityWeights    map[string]float64 `json:"utility_weights"`
	PrivacyVerdict    string             `json:"privacy_verdict"`
	Key               *string            `json:"key"`
	Params            map[string]any     `json:"params"`
	KMin              *int               `json:"k_min"`
	KThreshold        int                `json:"k_threshold"`
	QuasiIdentifiers  []string           `json:"quasi_identifiers"`
}

// Doc converts an evaluation for a manifest.
func (ev Evaluation) Doc() EvaluationDoc {
	d := EvaluationDoc{UtilityScore: ev.UtilityScore, UtilityComponents: ev.UtilityComponents, UtilityWeights: ev.UtilityWeights,
		PrivacyVerdict: ev.PrivacyVerdict, Params: ev.Params, KMin: ev.KMin, KThreshold: ev.KThreshold, QuasiIdentifiers: ev.QuasiIdentifiers}
	if ev.Key != "" {
		k := ev.Key
		d.Key = &k
	}
	if d.Params == nil {
		d.Params = map[string]any{}
	}
	if d.QuasiIdentifiers == nil {
		d.QuasiIdentifiers = []string{}
	}
	return d
}

// ManifestTable is one table of a pack manifest.
type ManifestTable struct {
	Name       string           `json:"name"`
	DatasetID  string           `json:"dataset_id"`
	Source     string           `json:"source" doc:"schema.table of the profiled dataset"`
	Rows       int              `json:"rows"`
	File       string           `json:"file,omitempty"`
	Columns    []ManifestColumn `json:"columns"`
	Evaluation EvaluationDoc    `json:"evaluation"`
}

// Manifest is a pack's manifest.json.
type Manifest struct {
	Generator    string          `json:"generator"`
	Seed         int64           `json:"seed"`
	RowsPerTable int             `json:"rows_per_table"`
	Format       string          `json:"format"`
	Truncated    bool            `json:"truncated"`
	Tables       []ManifestTable `json:"tables"`
}

// PackManifest describes a pack: its tables in load order, their columns and
// evaluations.
func PackManifest(p *Pack, format string) Manifest {
	m := Manifest{Generator: "vigia-synthetic/1", Seed: p.Seed, RowsPerTable: p.RowsPerTable, Format: format, Truncated: p.Truncated}
	for i, t := range p.Tables {
		mt := ManifestTable{Name: t.Name, DatasetID: t.DatasetID, Source: t.Source.Name(), Rows: t.Rows, Columns: ManifestColumns(t),
			Evaluation: p.Evaluations[i].Doc()}
		if format == FormatZIP {
			mt.File = t.Name + ".csv"
		}
		m.Tables = append(m.Tables, mt)
	}
	return m
}
