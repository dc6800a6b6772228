package rest

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/rule"
	"github.com/vigia-data/vigia/rule/rulefile"
)

// Headers of a rules export (contract: /rules/export).
const (
	HeaderRulesExported         = "X-Rules-Exported"
	HeaderRulesUnsupported      = "X-Rules-Unsupported"
	HeaderRulesUnsupportedTypes = "X-Rules-Unsupported-Types"
)

var rulesExportHeaders = map[string]string{
	HeaderRulesExported:         "Rules written to the file",
	HeaderRulesUnsupported:      "Active rules the format cannot express (listed in the file's header, or in meta.vigia.unsupported of a GX suite)",
	HeaderRulesUnsupportedTypes: "Comma-separated rule types of the unsupported rules; empty when none",
}

// GXSuiteOut documents a Great Expectations suite as exported.
type GXSuiteOut struct {
	ExpectationSuiteName string             `json:"expectation_suite_name" doc:"schema.table of the dataset"`
	Expectations         []GXExpectationOut `json:"expectations"`
	Meta                 GXSuiteMetaOut     `json:"meta"`
}

// GXExpectationOut is one expectation of a suite.
type GXExpectationOut struct {
	ExpectationType string         `json:"expectation_type" doc:"e.g. expect_column_values_to_not_be_null, expect_compound_columns_to_be_unique"`
	Kwargs          map[string]any `json:"kwargs"`
	Meta            map[string]any `json:"meta,omitempty" doc:"severity and name of the Vigia rule"`
}

// GXSuiteMetaOut is the suite's meta: what Vigia exported and left out.
type GXSuiteMetaOut struct {
	Vigia GXExportOut `json:"vigia"`
}

// GXExportOut counts the export and lists the rules the suite cannot express.
type GXExportOut struct {
	Exported    int                `json:"exported"`
	Unsupported []GXUnsupportedOut `json:"unsupported"`
}

// GXUnsupportedOut is a rule left out of a suite.
type GXUnsupportedOut struct {
	RuleID   string `json:"rule_id"`
	RuleType string `json:"rule_type"`
	Reason   string `json:"reason" enum:"no_equivalent,threshold_count,threshold_percent,reference_not_visible"`
}

// RulesImportOut is the result of an import.
type RulesImportOut struct {
	Format      string               `json:"format" enum:"dbt,sodacl,gx" doc:"The format read (given or detected)"`
	DryRun      bool                 `json:"dry_run" doc:"true: nothing was created"`
	Created     int                  `json:"created" doc:"Rules created (on a dry run: that would be)"`
	Duplicates  int                  `json:"duplicates"`
	Unsupported int                  `json:"unsupported"`
	Invalid     int                  `json:"invalid"`
	Items       []RulesImportItemOut `json:"items" doc:"One per check of the file, in file order"`
}

// RulesImportItemOut is the result of one check of an imported file. It never repeats
// what the file holds: the dataset is the one the check resolved to.
type RulesImportItemOut struct {
	Index  int      `json:"index" doc:"Position of the check in the file (0-based)"`
	Line   *int     `json:"line" doc:"Line of the check in the file (1-based)"`
	Path   *string  `json:"path" doc:"Where the check sits in a dbt file or GX suite, e.g. expectations[3]"`
	Result string   `json:"result" enum:"created,duplicate,unsupported,invalid"`
	Code   *string  `json:"code" doc:"Why unsupported (unsupported_check, unsupported_threshold, unsupported_config, unsupported_format, multiple_validity, unsupported_section) or invalid (syntax, invalid_value, missing_table, unknown_dataset, ambiguous_dataset, unknown_reference, unknown_column, sql_not_read_only, ...)"`
	Loc    []string `json:"loc,omitempty" doc:"The rule parameter an invalid check failed on, e.g. [params, column]"`
	// RuleType is the Vigia rule type the check reads as.
	RuleType        *string `json:"rule_type"`
	DatasetID       *string `json:"dataset_id"`
	DatasetName     *string `json:"dataset_name"`
	RuleID          *string `json:"rule_id" doc:"The rule created; null on a dry run"`
	DuplicateOf     *string `json:"duplicate_of" doc:"The existing equivalent rule"`
	DuplicateOfItem *int    `json:"duplicate_of_item" doc:"The earlier check of the same file this one repeats"`
}

var exportFormatParam = param{Name: "format", In: "query", Type: "string", Required: true, Enum: rule.ExportFormats,
	Desc: "dbt (a property file with data tests), sodacl (a checks file) or gx (an expectation suite, JSON)"}

func (s *Server) ruleFileRoutes() {
	s.register(operation{ID: "getDatasetRulesDBT", Method: http.MethodGet, Path: "/api/v1/datasets/{dataset_id}/rules.dbt.yml", Tag: "rules",
		Summary: "The dataset's active rules as dbt tests", ContentType: "application/yaml", Params: []param{datasetIDParam},
		Headers: rulesExportHeaders,
		Desc: "A dbt property file (version 2) whose sources are the monitored tables (a source per schema), with the rules as data tests: " +
			"not_null, unique, accepted_values, relationships; dbt_utils.unique_combination_of_columns, dbt_utils.accepted_range, " +
			"dbt_utils.recency, dbt_expectations.expect_column_values_to_match_regex, dbt_expectations.expect_table_row_count_to_be_between. " +
			"Severity maps to config.severity and an allowance of failing rows to error_if/warn_if. Rules dbt cannot express are listed in the " +
			"header comment. Same as /rules/export?format=dbt."}, s.handleDatasetRulesDBT)
	s.register(operation{ID: "exportDatasetRules", Method: http.MethodGet, Path: "/api/v1/datasets/{dataset_id}/rules/export", Tag: "rules",
		Summary: "The dataset's active rules as a dbt, SodaCL or Great Expectations file", ContentType: "application/yaml",
		Response: GXSuiteOut{}, Params: []param{datasetIDParam, exportFormatParam}, Headers: rulesExportHeaders,
		Desc: "dbt and sodacl answer YAML, gx a JSON expectation suite. Rules a format cannot express are listed in the file's header " +
			"(gx: meta.vigia.unsupported) and counted in the X-Rules-* headers. A referential rule whose reference dataset the caller " +
			"cannot see is always unsupported (reference_not_visible): no export names that dataset."}, s.handleDatasetRulesExport)
	s.register(operation{ID: "exportRules", Method: http.MethodGet, Path: "/api/v1/rules/export", Tag: "rules",
		Summary: "The active rules of every dataset the caller can see, in one file", ContentType: "application/yaml",
		Params: []param{{Name: "format", In: "query", Type: "string", Enum: rule.WorkspaceExportFormats, Default: rulefile.FormatSodaCL,
			Desc: "sodacl (a checks for section per dataset) or dbt"}}, Headers: rulesExportHeaders}, s.handleRulesExport)
	s.register(operation{ID: "importRules", Method: http.MethodPost, Path: "/api/v1/rules/import", Tag: "rules",
		Summary: "Import rules from a SodaCL, Great Expectations or dbt file (member or admin session)", Response: RulesImportOut{},
		BodyMedia: []string{"application/yaml", "application/json", "text/plain", "application/octet-stream", "multipart/form-data"},
		MaxBody:   rule.MaxImportBody,
		Params: []param{
			{Name: "format", In: "query", Type: "string", Enum: rulefile.Formats(), Desc: "Default: detected from the file"},
			{Name: "dry_run", In: "query", Type: "boolean", Default: false, Desc: "Answer what would happen; create nothing"},
			{Name: "connection_id", In: "query", Type: "string", MaxLen: 64, Desc: "Resolve table names among this connection's datasets only"},
		},
		Errors: map[int]string{http.StatusRequestEntityTooLarge: "payload_too_large: the file is over " + strconv.Itoa(rule.MaxImportBody) + " bytes",
			http.StatusNotFound: "connection_id names no connection the caller can see"},
		Desc: "The body is the file itself, or multipart/form-data with one file part (file) and optionally format. SodaCL: missing_count, " +
			"duplicate_count (several columns too), invalid_count with valid values, valid regex, valid format (email, uuid, integer, " +
			"positive integer, date iso 8601) or valid min/max, freshness(col) < 90m (d, h, m, s), row_count, reference checks, and " +
			"user-defined metrics with a query (custom_sql). GX: expectation_type + kwargs (not null, unique, compound unique, in set, " +
			"regex, between, table row count). dbt: sources and models with tests or data_tests (generic, dbt_utils and dbt_expectations). " +
			"Tables are resolved by schema.table (or table alone when one dataset has that name) among the datasets the caller can see. " +
			"Each check gets a result: created, duplicate (duplicate_of an equivalent rule: same type and parameters, whatever the name " +
			"or severity; or duplicate_of_item), unsupported with a code, or invalid with its line or path. The rules are created in one " +
			"transaction. A file that cannot be read is 422 rules_file_invalid (ctx: reason and line) and creates nothing."}, s.handleRulesImport)
}

func (s *Server) writeRulesExport(w http.ResponseWriter, r *http.Request, exp rule.Export, err error) {
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set(HeaderRulesExported, strconv.Itoa(exp.Exported))
	w.Header().Set(HeaderRulesUnsupported, strconv.Itoa(len(exp.Unsupported)))
	w.Header().Set(HeaderRulesUnsupportedTypes, strings.Join(exp.UnsupportedTypes(), ","))
	w.Header().Set("Content-Type", rulefile.ContentType(exp.Format)+"; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(exp.Body)))
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(exp.Body)
}

func (s *Server) handleDatasetRulesDBT(w http.ResponseWriter, r *http.Request, in *input) {
	id := in.Path("dataset_id")
	exp, err := s.deps.Workflow.Rules.ExportRules(r.Context(), &id, rulefile.FormatDBT)
	s.writeRulesExport(w, r, exp, err)
}

func (s *Server) handleDatasetRulesExport(w http.ResponseWriter, r *http.Request, in *input) {
	id := in.Path("dataset_id")
	exp, err := s.deps.Workflow.Rules.ExportRules(r.Context(), &id, *in.String("format"))
	s.writeRulesExport(w, r, exp, err)
}

func (s *Server) handleRulesExport(w http.ResponseWriter, r *http.Request, in *input) {
	exp, err := s.deps.Workflow.Rules.ExportRules(r.Context(), nil, *in.String("format"))
	s.writeRulesExport(w, r, exp, err)
}

func (s *Server) handleRulesImport(w http.ResponseWriter, r *http.Request, in *input) {
	body, format, err := readRulesFile(r, rule.MaxImportBody)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if f := in.String("format"); f != nil {
		format = *f
	}
	dry := in.Bool("dry_run")
	res, err := s.deps.Workflow.Rules.ImportRules(r.Context(), rule.ImportInput{Body: body, Format: format,
		ConnectionID: in.String("connection_id"), DryRun: dry != nil && *dry})
	s.reply(w, r, err, func() any { return toRulesImportOut(res) })
}

func tooLarge() error {
	return &vigia.Error{Kind: vigia.KindTooLarge, Code: vigia.CodePayloadTooLarge, Key: "error.payload_too_large"}
}

// readRulesFile reads an imported file: the body itself, or the one file part of a
// multipart form (with an optional format field). The file is bounded by max (413)
// and must be UTF-8 text without NUL (422 value_error at body).
func readRulesFile(r *http.Request, max int64) ([]byte, string, error) {
	mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var file []byte
	format := ""
	if mt == "multipart/form-data" && params["boundary"] != "" {
		// The form's framing adds a little to the file; the file itself is bounded below.
		mr := multipart.NewReader(http.MaxBytesReader(nil, r.Body, max+64<<10), params["boundary"])
		files := 0
		for {
			part, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, "", readError(err)
			}
			b, err := io.ReadAll(io.LimitReader(part, max+1))
			if err != nil {
				return nil, "", readError(err)
			}
			switch {
			case part.FormName() == "format":
				format = strings.TrimSpace(string(b))
			case part.FormName() == "file" || part.FileName() != "":
				files++
				if files > 1 {
					return nil, "", vigia.Invalid(vigia.Field("too_long", map[string]any{"max_length": 1}, "file"))
				}
				if int64(len(b)) > max {
					return nil, "", tooLarge()
				}
				file = b
			}
		}
		if files == 0 {
			return nil, "", vigia.Invalid(vigia.Field("missing", nil, "file"))
		}
	} else {
		b, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, max))
		if err != nil {
			return nil, "", readError(err)
		}
		file = b
	}
	if len(bytes.TrimSpace(file)) == 0 {
		return nil, "", vigia.Invalid(vigia.Field("missing", nil))
	}
	if !utf8.Valid(file) || bytes.IndexByte(file, 0) >= 0 {
		return nil, "", vigia.Invalid(vigia.Field("value_error", nil))
	}
	if t := bytes.TrimSpace(file); t[0] == '{' || t[0] == '[' || t[0] == '"' {
		// JSON (a GX suite): an escape must not smuggle a NUL or a lone surrogate in.
		if err := vigia.CheckJSONText(t); err != nil {
			return nil, "", err
		}
	}
	return file, format, nil
}

func readError(err error) error {
	var big *http.MaxBytesError
	if errors.As(err, &big) {
		return tooLarge()
	}
	return vigia.Invalid(vigia.Field("value_error", nil))
}

func optInt(n int) *int {
	if n == 0 {
		return nil
	}
	return &n
}

func toRulesImportOut(res rule.ImportResult) RulesImportOut {
	out := RulesImportOut{Format: res.Format, DryRun: res.DryRun, Created: res.Created, Duplicates: res.Duplicates,
		Unsupported: res.Unsupported, Invalid: res.Invalid, Items: make([]RulesImportItemOut, 0, len(res.Items))}
	for _, it := range res.Items {
		out.Items = append(out.Items, RulesImportItemOut{Index: it.Index, Line: optInt(it.Line), Path: optStr(it.Path), Result: it.Result,
			Code: optStr(it.Code), Loc: it.Loc, RuleType: optStr(it.RuleType), DatasetID: optStr(it.DatasetID),
			DatasetName: optStr(it.DatasetName), RuleID: optStr(it.RuleID), DuplicateOf: optStr(it.DuplicateOf),
			DuplicateOfItem: it.DuplicateOfItem})
	}
	return out
}
