package rulefile

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Item statuses of a decoded file: a rule to create, a check Vigia has no rule for, or
// a check that cannot be read.
const (
	StatusRule        = "rule"
	StatusUnsupported = "unsupported"
	StatusInvalid     = "invalid"
)

// Reason codes of decoded items (stable).
const (
	// CodeUnsupportedCheck: a check Vigia has no rule type for.
	CodeUnsupportedCheck = "unsupported_check"
	// CodeUnsupportedThreshold: a threshold Vigia's rule cannot hold (e.g. missing_count > 5).
	CodeUnsupportedThreshold = "unsupported_threshold"
	// CodeUnsupportedConfig: a check option Vigia's rule cannot honour (a filter, missing values ...).
	CodeUnsupportedConfig = "unsupported_config"
	// CodeUnsupportedFormat: a SodaCL valid format Vigia does not know.
	CodeUnsupportedFormat = "unsupported_format"
	// CodeMultipleValidity: several validity keys on one invalid_count.
	CodeMultipleValidity = "multiple_validity"
	// CodeUnsupportedSection: a part of the file that holds no table's checks.
	CodeUnsupportedSection = "unsupported_section"
	// CodeSyntax: the check cannot be read.
	CodeSyntax = "syntax"
	// CodeInvalidValue: a value of the check has the wrong type or is out of bounds.
	CodeInvalidValue = "invalid_value"
	// CodeMissingTable: the check names no table.
	CodeMissingTable = "missing_table"
)

// MaxItems bounds the checks of one file.
const MaxItems = 5000

// Item is one check of an imported file. Line (1-based) and Path say where it is; a
// rule to create has Status StatusRule, anything else a Code.
type Item struct {
	Line   int
	Path   string
	Status string
	Code   string
	Rule   Rule
}

// Decode reads a file in format (empty: detected). It returns the format read and one
// item per check; a file that cannot be read at all is a *ParseError and yields nothing.
// The file is parsed once.
func Decode(format string, body []byte) (string, []Item, error) {
	isJSON := false
	if t := bytes.TrimSpace(body); len(t) > 0 && t[0] == '{' {
		isJSON = true
	}
	if format == FormatGX || format == "" && isJSON {
		if !json.Valid(body) {
			return format, nil, &ParseError{Line: jsonErrorLine(body), Code: "json_invalid"}
		}
	}
	code := "yaml_invalid"
	if isJSON {
		code = "json_invalid"
	}
	root, err := parseTree(body, code)
	if err != nil {
		return format, nil, err
	}
	if format == "" {
		var ok bool
		if format, ok = detect(root, isJSON); !ok {
			return "", nil, &ParseError{Code: "format_unknown"}
		}
	}
	var items []Item
	switch format {
	case FormatSodaCL:
		items, err = decodeSodaCL(root)
	case FormatDBT:
		items, err = decodeDBT(root)
	case FormatGX:
		items, err = decodeGX(root)
	default:
		return "", nil, &ParseError{Code: "format_unknown"}
	}
	if err != nil {
		return format, nil, err
	}
	if len(items) > MaxItems {
		return format, nil, &ParseError{Code: "too_many_items"}
	}
	return format, items, nil
}

// Detect guesses a file's format: a JSON object with expectations is a GX suite; YAML
// with "checks for" sections is SodaCL; YAML with models or sources is a dbt file.
func Detect(body []byte) (string, bool) {
	t := bytes.TrimSpace(body)
	isJSON := len(t) > 0 && t[0] == '{'
	root, err := parseTree(body, "yaml_invalid")
	if err != nil {
		return "", false
	}
	return detect(root, isJSON)
}

func detect(root *node, isJSON bool) (string, bool) {
	if root.kind != mapNode {
		return "", false
	}
	if isJSON {
		if root.get("expectations") != nil {
			return FormatGX, true
		}
		return "", false
	}
	for _, k := range root.keys {
		if strings.HasPrefix(k, "checks for ") {
			return FormatSodaCL, true
		}
	}
	if root.get("models") != nil || root.get("sources") != nil {
		return FormatDBT, true
	}
	return "", false
}

// Severity names of the formats.
func severityFromDBT(s string) string {
	switch strings.ToLower(s) {
	case "error":
		return SeverityCritical
	case "warn":
		return SeverityWarning
	}
	return ""
}

func severityToDBT(s string) string {
	if s == SeverityCritical {
		return "error"
	}
	return "warn"
}

func validSeverity(s string) bool {
	return s == SeverityCritical || s == SeverityWarning || s == SeverityInfo
}
