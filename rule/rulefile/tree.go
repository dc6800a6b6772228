package rulefile

import (
	"bytes"
	"errors"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// node is a YAML (or JSON) value with the line it starts on, so every item of an import
// can say where it came from without repeating what it holds.
type node struct {
	kind  nodeKind
	line  int
	keys  []string // mapping keys, in file order
	items []*node  // mapping values (aligned with keys) or sequence items
	value any      // scalar: string, int64, uint64, float64, bool or nil
}

type nodeKind int

const (
	scalarNode nodeKind = iota
	mapNode
	seqNode
)

// get returns a mapping's value for key, nil when absent or not a mapping.
func (n *node) get(key string) *node {
	if n == nil || n.kind != mapNode {
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return n.items[i]
		}
	}
	return nil
}

// text returns a scalar as text (numbers and booleans as written in YAML's core schema).
func (n *node) text() (string, bool) {
	if n == nil || n.kind != scalarNode {
		return "", false
	}
	switch v := n.value.(type) {
	case string:
		return v, true
	case int64:
		return strconv.FormatInt(v, 10), true
	case uint64:
		return strconv.FormatUint(v, 10), true
	case float64:
		return formatNumber(v), true
	case bool:
		return strconv.FormatBool(v), true
	}
	return "", false
}

// str returns a scalar string only.
func (n *node) str() (string, bool) {
	if n == nil || n.kind != scalarNode {
		return "", false
	}
	s, ok := n.value.(string)
	return s, ok
}

// number returns a numeric scalar (a string is not a number).
func (n *node) number() (float64, bool) {
	if n == nil || n.kind != scalarNode {
		return 0, false
	}
	switch v := n.value.(type) {
	case int64:
		return float64(v), true
	case uint64:
		return float64(v), true
	case float64:
		return v, true
	}
	return 0, false
}

// ParseError is a file that cannot be read at all: nothing of it is imported. Line is
// where the reader stopped (0 when unknown); Code is stable (yaml_invalid, json_invalid,
// not_a_rules_file, format_unknown, too_many_items, empty, value_error).
type ParseError struct {
	Line int
	Code string
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return e.Code + " at line " + strconv.Itoa(e.Line)
	}
	return e.Code
}

// maxDepth bounds the nesting of a file: rule files are shallow, and a deep document is
// a way to make a reader work.
const maxDepth = 32

// yamlLine finds the line in the YAML reader's error ("yaml: line 3: ..."); the rest of
// the message, which may quote the file, is dropped.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// scannerProblems are the YAML reader's scanner errors, whose line it counts from 1; its
// parser errors count from 0 (go.yaml.in/yaml/v3, decode.go: parser.fail).
var scannerProblems = []string{
	"block sequence entries are not allowed in this context", "could not find expected ':'",
	"could not find expected directive name", "did not find expected alphabetic or numeric character",
	"did not find expected comment or line break", "did not find expected digit or '.' character",
	"did not find expected hexdecimal number", "did not find expected version number",
	"did not find expected whitespace or line break", "did not find expected whitespace", "did not find the expected '>'",
	"found a tab character that violates indentation", "found a tab character where an indentation space is expected",
	"found an indentation indicator equal to 0", "found character that cannot start any token",
	"found extremely long version number", "found invalid Unicode character escape code",
	"found unexpected document indicator", "found unexpected end of stream", "found unexpected non-alphabetical character",
	"found unknown directive name", "found unknown escape character", "mapping keys are not allowed in this context",
	"mapping values are not allowed in this context",
}

// errorLine is the 1-based line a YAML error names: where the reader stopped, or where the
// structure it was reading began.
func errorLine(msg string) int {
	line := 0
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
	}
	for _, p := range scannerProblems {
		if strings.HasSuffix(msg, p) {
			return max(line, 1)
		}
	}
	return line + 1
}

// parseTree reads one YAML (or JSON) document into nodes. The reader (go.yaml.in/yaml/v3)
// bounds nesting and works in linear time; aliases, anchors, merge keys and several
// documents are refused: rules files need none of them, and aliases are how a small file
// becomes a huge one.
func parseTree(body []byte, code string) (*node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(body))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &ParseError{Code: "empty"}
		}
		return nil, &ParseError{Line: errorLine(err.Error()), Code: code}
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		return nil, &ParseError{Line: next.Line, Code: code}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, &ParseError{Code: "empty"}
	}
	return convert(doc.Content[0], 0, code)
}

func convert(n *yaml.Node, depth int, code string) (*node, error) {
	if depth > maxDepth || n.Anchor != "" || n.Kind == yaml.AliasNode || n.Tag == "!!merge" {
		return nil, &ParseError{Line: n.Line, Code: code}
	}
	switch n.Kind {
	case yaml.MappingNode:
		out := &node{kind: mapNode, line: n.Line}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, err := convert(n.Content[i], depth+1, code)
			if err != nil {
				return nil, err
			}
			key, ok := k.text()
			if !ok || n.Content[i].Tag == "!!merge" {
				return nil, &ParseError{Line: n.Content[i].Line, Code: code}
			}
			v, err := convert(n.Content[i+1], depth+1, code)
			if err != nil {
				return nil, err
			}
			out.keys = append(out.keys, key)
			out.items = append(out.items, v)
		}
		return out, nil
	case yaml.SequenceNode:
		out := &node{kind: seqNode, line: n.Line}
		for _, it := range n.Content {
			c, err := convert(it, depth+1, code)
			if err != nil {
				return nil, err
			}
			out.items = append(out.items, c)
		}
		return out, nil
	case yaml.ScalarNode:
		return scalar(n, code)
	}
	return nil, &ParseError{Line: n.Line, Code: code}
}

// scalar reads a scalar by its resolved tag. A string holding a NUL or invalid UTF-8
// (which YAML escapes can write) makes the file unreadable: no such text reaches a rule.
func scalar(n *yaml.Node, code string) (*node, error) {
	out := &node{kind: scalarNode, line: n.Line}
	switch n.ShortTag() {
	case "!!null":
		return out, nil
	case "!!bool":
		var b bool
		if n.Decode(&b) != nil {
			return nil, &ParseError{Line: n.Line, Code: code}
		}
		out.value = b
	case "!!int":
		var i int64
		if n.Decode(&i) == nil {
			out.value = i
			break
		}
		var u uint64
		if n.Decode(&u) != nil {
			return nil, &ParseError{Line: n.Line, Code: code}
		}
		out.value = u
	case "!!float":
		var f float64
		if n.Decode(&f) != nil {
			return nil, &ParseError{Line: n.Line, Code: code}
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			out.value = strings.TrimSpace(n.Value) // not a number a rule can hold: read as text
			break
		}
		out.value = f
	default:
		if !utf8.ValidString(n.Value) || strings.IndexByte(n.Value, 0) >= 0 {
			return nil, &ParseError{Line: n.Line, Code: "value_error"}
		}
		out.value = n.Value
	}
	return out, nil
}
