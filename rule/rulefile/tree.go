package rulefile

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
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
// not_a_rules_file, format_unknown, too_many_items, empty).
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

// parseTree reads one YAML (or JSON) document into nodes. Aliases, anchors with merge
// keys and multiple documents are refused: rules files need none of them, and aliases
// are how a small file becomes a huge one.
func parseTree(body []byte, code string) (*node, error) {
	f, err := parser.ParseBytes(body, 0)
	if err != nil {
		line := 0
		var ye yaml.Error
		if errors.As(err, &ye) && ye.GetToken() != nil {
			line = ye.GetToken().Position.Line
		}
		return nil, &ParseError{Line: line, Code: code}
	}
	if len(f.Docs) == 0 || f.Docs[0] == nil || f.Docs[0].Body == nil {
		return nil, &ParseError{Code: "empty"}
	}
	if len(f.Docs) > 1 {
		line := 0
		if t := f.Docs[1].GetToken(); t != nil {
			line = t.Position.Line
		}
		return nil, &ParseError{Line: line, Code: code}
	}
	return convert(f.Docs[0].Body, 0, code)
}

func lineOf(n ast.Node) int {
	if n == nil || n.GetToken() == nil {
		return 0
	}
	return n.GetToken().Position.Line
}

func convert(n ast.Node, depth int, code string) (*node, error) {
	if depth > maxDepth {
		return nil, &ParseError{Line: lineOf(n), Code: code}
	}
	switch v := n.(type) {
	case *ast.MappingNode:
		out := &node{kind: mapNode, line: lineOf(v)}
		for _, mv := range v.Values {
			if err := addPair(out, mv, depth, code); err != nil {
				return nil, err
			}
		}
		if len(v.Values) > 0 {
			out.line = lineOf(v.Values[0].Key)
		}
		return out, nil
	case *ast.MappingValueNode:
		out := &node{kind: mapNode, line: lineOf(v.Key)}
		return out, addPair(out, v, depth, code)
	case *ast.SequenceNode:
		out := &node{kind: seqNode, line: lineOf(v)}
		for _, it := range v.Values {
			c, err := convert(it, depth+1, code)
			if err != nil {
				return nil, err
			}
			out.items = append(out.items, c)
		}
		return out, nil
	case *ast.TagNode:
		return convert(v.Value, depth+1, code)
	case *ast.CommentNode:
		return &node{kind: scalarNode, line: lineOf(v)}, nil
	case *ast.AliasNode, *ast.AnchorNode, *ast.MergeKeyNode:
		return nil, &ParseError{Line: lineOf(v), Code: code}
	case *ast.NullNode:
		return &node{kind: scalarNode, line: lineOf(v)}, nil
	case *ast.StringNode:
		return textNode(v.Value, lineOf(v))
	case *ast.LiteralNode:
		return textNode(v.Value.Value, lineOf(v))
	case *ast.BoolNode:
		return &node{kind: scalarNode, line: lineOf(v), value: v.Value}, nil
	case *ast.FloatNode:
		return &node{kind: scalarNode, line: lineOf(v), value: v.Value}, nil
	case *ast.InfinityNode, *ast.NanNode:
		return &node{kind: scalarNode, line: lineOf(n), value: strings.TrimSpace(n.String())}, nil
	case *ast.IntegerNode:
		switch x := v.Value.(type) {
		case int64:
			return &node{kind: scalarNode, line: lineOf(v), value: x}, nil
		case uint64:
			return &node{kind: scalarNode, line: lineOf(v), value: x}, nil
		}
		return &node{kind: scalarNode, line: lineOf(v), value: v.GetToken().Value}, nil
	case nil:
		return &node{kind: scalarNode}, nil
	}
	return nil, &ParseError{Line: lineOf(n), Code: code}
}

// textNode is a string scalar; a NUL or invalid UTF-8 (which YAML escapes can write)
// makes the file unreadable: no such text reaches a rule.
func textNode(s string, line int) (*node, error) {
	if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
		return nil, &ParseError{Line: line, Code: "value_error"}
	}
	return &node{kind: scalarNode, line: line, value: s}, nil
}

func addPair(out *node, mv *ast.MappingValueNode, depth int, code string) error {
	if _, merge := mv.Key.(*ast.MergeKeyNode); merge {
		return &ParseError{Line: lineOf(mv.Key), Code: code}
	}
	k, err := convert(mv.Key, depth+1, code)
	if err != nil {
		return err
	}
	key, ok := k.text()
	if !ok {
		return &ParseError{Line: lineOf(mv.Key), Code: code}
	}
	val, err := convert(mv.Value, depth+1, code)
	if err != nil {
		return err
	}
	if val.line == 0 {
		val.line = lineOf(mv.Key)
	}
	out.keys = append(out.keys, key)
	out.items = append(out.items, val)
	return nil
}
