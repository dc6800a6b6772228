package sqllineage

import (
	"encoding/json"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/vigia-data/vigia/source"
)

// Reason codes of CheckCount (the rehearsal's contract codes).
const (
	countNotSelect          = "not_select"
	countForbidden          = "forbidden"
	countFunctionNotAllowed = "function_not_allowed"
	countUnknownTable       = "unknown_table"
)

// forbiddenFuncs read files, sleep, reach other servers or change settings: a
// rehearsal calling one is forbidden whatever the allowlist says.
var forbiddenFuncs = map[string]bool{
	"pg_sleep": true, "pg_sleep_for": true, "pg_sleep_until": true, "sleep": true, "benchmark": true,
	"pg_read_file": true, "pg_read_binary_file": true, "pg_ls_dir": true, "pg_stat_file": true, "lo_import": true, "lo_export": true,
	"load_file": true, "dblink": true, "dblink_exec": true, "set_config": true, "pg_terminate_backend": true,
	"pg_cancel_backend": true, "query_to_xml": true, "load_extension": true, "readfile": true, "writefile": true,
	"get_lock": true, "release_lock": true,
	// DuckDB: file readers, other databases, SQL given as text, the environment.
	"read_csv": true, "read_csv_auto": true, "read_parquet": true, "parquet_scan": true, "read_json": true,
	"read_json_auto": true, "read_ndjson": true, "read_ndjson_auto": true, "read_json_objects": true,
	"read_text": true, "read_blob": true, "glob": true, "sniff_csv": true, "parquet_metadata": true,
	"parquet_schema": true, "parquet_file_metadata": true, "parquet_kv_metadata": true, "read_xlsx": true,
	"sqlite_scan": true, "postgres_scan": true, "mysql_scan": true, "iceberg_scan": true, "delta_scan": true,
	"query": true, "query_table": true, "getenv": true, "duckdb_secrets": true,
}

// CheckCount implements suggest.Checker: sql must parse, with the dialect's real
// parser, as exactly one plain SELECT (no INTO, no locking clause), call only functions
// of allowed (lowercase names; forbiddenFuncs are forbidden) and read no table but t.
// It answers the contract's reason code, or "" when the count may run.
func (Parser) CheckCount(dialect, sql string, t source.Table, allowed map[string]bool) (string, error) {
	funcs, tables, ok := countParts(Dialect(dialect), sql)
	if !ok {
		return countNotSelect, nil
	}
	return countVerdict(Dialect(dialect), funcs, tables, t, allowed), nil
}

// CheckCountDuckDB is CheckCount for DuckDB, whose parser lineage/duckview runs: tree
// is what json_serialize_sql returned for the count (DuckDB serializes only a SELECT,
// and marks anything else as an error, which is not_select). Table functions count as
// functions: read_csv and the other file readers are forbidden, like a quoted file
// name in FROM, which names no table of the connection.
func (Parser) CheckCountDuckDB(tree []byte, t source.Table, allowed map[string]bool) (string, error) {
	var doc struct {
		Error      bool  `json:"error"`
		Statements []any `json:"statements"`
	}
	if err := json.Unmarshal(tree, &doc); err != nil || doc.Error || len(doc.Statements) != 1 {
		return countNotSelect, nil
	}
	var funcs []string
	var tables []source.Table
	walkDuckCount(doc.Statements[0], &funcs, &tables)
	return countVerdict(DuckDB, funcs, tables, t, allowed), nil
}

// walkDuckCount collects the functions (not operators) and tables of a DuckDB tree.
func walkDuckCount(v any, funcs *[]string, tables *[]source.Table) {
	switch x := v.(type) {
	case map[string]any:
		switch {
		case x["class"] == "FUNCTION" && x["is_operator"] != true:
			name := strings.ToLower(str(x["function_name"]))
			if name == "count_star" {
				name = "count"
			}
			*funcs = append(*funcs, name)
		case x["class"] == "WINDOW":
			*funcs = append(*funcs, strings.ToLower(str(x["function_name"])))
		case x["type"] == "BASE_TABLE":
			*tables = append(*tables, source.Table{Schema: str(x["schema_name"]), Name: str(x["table_name"])})
			if str(x["catalog_name"]) != "" {
				*tables = append(*tables, source.Table{Name: "\x00other database"})
			}
		}
		for _, c := range x {
			walkDuckCount(c, funcs, tables)
		}
	case []any:
		for _, c := range x {
			walkDuckCount(c, funcs, tables)
		}
	}
}

// countVerdict applies the rehearsal's rules to what a count calls and reads.
func countVerdict(d Dialect, funcs []string, tables []source.Table, t source.Table, allowed map[string]bool) string {
	for _, f := range funcs {
		if forbiddenFuncs[f] {
			return countForbidden
		}
	}
	for _, f := range funcs {
		if !allowed[f] {
			return countFunctionNotAllowed
		}
	}
	for _, tb := range tables {
		if !strings.EqualFold(tb.Name, t.Name) || (tb.Schema != "" && d != SQLite && !strings.EqualFold(tb.Schema, t.Schema)) {
			return countUnknownTable
		}
	}
	return ""
}

// countParts parses sql and lists the functions it calls (lowercase, the last part of
// a qualified name) and the tables it reads; ok is false unless it is one plain SELECT.
func countParts(d Dialect, sql string) (funcs []string, tables []source.Table, ok bool) {
	switch d {
	case Postgres, SQLite:
		text := sql
		if d == SQLite {
			text = sqliteToPostgres(sql)
		}
		tree, err := pg.Parse(text)
		if err != nil || len(tree.GetStmts()) != 1 {
			return nil, nil, false
		}
		sel := tree.GetStmts()[0].GetStmt().GetSelectStmt()
		if sel == nil || sel.GetIntoClause() != nil || len(sel.GetLockingClause()) > 0 {
			return nil, nil, false
		}
		js, err := pg.ParseToJSON(text)
		if err != nil {
			return nil, nil, false
		}
		var v any
		if err := json.Unmarshal([]byte(js), &v); err != nil {
			return nil, nil, false
		}
		walkPG(v, &funcs, &tables)
		return funcs, tables, true
	case MySQL:
		stmts, _, err := parser.New().Parse(sql, "", "")
		if err != nil || len(stmts) != 1 {
			return nil, nil, false
		}
		sel, isSel := stmts[0].(*ast.SelectStmt)
		if !isSel || sel.SelectIntoOpt != nil || (sel.LockInfo != nil && sel.LockInfo.LockType != ast.SelectLockNone) {
			return nil, nil, false
		}
		v := &countVisitor{}
		sel.Accept(v)
		return v.funcs, v.tables, true
	}
	return nil, nil, false
}

// walkPG collects FuncCall names and RangeVar tables from pg_query's JSON tree; a
// SELECT INTO or a data-modifying CTE is not a plain SELECT and is refused by the
// caller before (the CTE shows as an InsertStmt/UpdateStmt/DeleteStmt, reported here
// as a forbidden function name the allowlist never holds).
func walkPG(v any, funcs *[]string, tables *[]source.Table) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			switch k {
			case "FuncCall":
				if m, ok := c.(map[string]any); ok {
					*funcs = append(*funcs, pgFuncName(m))
				}
			case "RangeVar":
				if m, ok := c.(map[string]any); ok {
					s, _ := m["schemaname"].(string)
					n, _ := m["relname"].(string)
					*tables = append(*tables, source.Table{Schema: s, Name: n})
				}
			case "InsertStmt", "UpdateStmt", "DeleteStmt", "MergeStmt":
				*funcs = append(*funcs, "pg_terminate_backend") // forbidden: a write
			}
			walkPG(c, funcs, tables)
		}
	case []any:
		for _, c := range x {
			walkPG(c, funcs, tables)
		}
	}
}

func pgFuncName(m map[string]any) string {
	parts, _ := m["funcname"].([]any)
	name := ""
	for _, p := range parts {
		if pm, ok := p.(map[string]any); ok {
			if s, ok := pm["String"].(map[string]any); ok {
				name, _ = s["sval"].(string)
			}
		}
	}
	return strings.ToLower(name)
}

type countVisitor struct {
	funcs  []string
	tables []source.Table
}

func (v *countVisitor) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.FuncCallExpr:
		v.funcs = append(v.funcs, x.FnName.L)
	case *ast.AggregateFuncExpr:
		v.funcs = append(v.funcs, strings.ToLower(x.F))
	case *ast.WindowFuncExpr:
		v.funcs = append(v.funcs, strings.ToLower(x.Name))
	case *ast.TableName:
		v.tables = append(v.tables, source.Table{Schema: x.Schema.O, Name: x.Name.O})
	}
	return n, false
}

func (v *countVisitor) Leave(n ast.Node) (ast.Node, bool) { return n, true }
