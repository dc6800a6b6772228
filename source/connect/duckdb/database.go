//go:build duckdb

package duckdb

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/vigia-data/vigia/source"
	"github.com/vigia-data/vigia/source/connect"
)

// A DuckDB database file is attached read-only, as sourceCatalog, to an in-memory engine
// (catalog memoryCatalog, the default). DuckDB resolves a view's relative file path
// (read_parquet('orders.parquet')) against the process's working directory first and
// file_search_path only after, so the database's views cannot be run as stored: each
// view is re-created in the memory catalog, same schema and name, with its relative paths
// made absolute in the database file's directory and its table references qualified
// with sourceCatalog (views keep reading the re-created views). Every session's
// search_path lists the memory catalog's schemas before the database's, so "schema"."name"
// names the re-created view, and the database's tables as before. A view whose paths
// leave the files root, or that DuckDB cannot re-create, is left as stored (DuckDB
// refuses its relative paths: permission_denied).
const (
	sourceCatalog = "vigia_source"
	memoryCatalog = "memory"
)

// dbObject is a table or view of the attached database file.
type dbObject struct {
	schema, name string
	view         bool
	// sql is a view's CREATE VIEW text (duckdb_views().sql); columns its column names.
	sql     string
	columns []string
}

func objectKey(schema, name string) string {
	return strings.ToLower(schema) + "\x00" + strings.ToLower(name)
}

// readObjects lists the tables and views of the attached database.
func readObjects(ctx context.Context, conn *sql.Conn) ([]dbObject, error) {
	rows, err := conn.QueryContext(ctx, `SELECT t.table_schema, t.table_name, t.table_type = 'VIEW', coalesce(v.sql, ''),
  list(c.column_name ORDER BY c.ordinal_position)
FROM information_schema.tables AS t
JOIN information_schema.columns AS c
  ON c.table_catalog = t.table_catalog AND c.table_schema = t.table_schema AND c.table_name = t.table_name
LEFT JOIN duckdb_views() AS v
  ON v.database_name = t.table_catalog AND v.schema_name = t.table_schema AND v.view_name = t.table_name AND NOT v.internal
WHERE t.table_catalog = `+literal(sourceCatalog)+`
GROUP BY ALL ORDER BY 1, 2`)
	if err != nil {
		return nil, classifyOpen(err)
	}
	defer rows.Close()
	var out []dbObject
	for rows.Next() {
		var o dbObject
		var cols []any
		if err := rows.Scan(&o.schema, &o.name, &o.view, &o.sql, &cols); err != nil {
			return nil, newError("open", source.ReasonResult)
		}
		for _, c := range cols {
			s, _ := c.(string)
			o.columns = append(o.columns, s)
		}
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		return nil, classifyOpen(err)
	}
	return out, nil
}

// pathResolver resolves the file paths of a database's views: relative ones in the
// database file's directory, all of them confined to the files root the way
// connect.ConfinedPath confines a DSN.
type pathResolver struct {
	dir, root string
}

// resolve answers the absolute path DuckDB is to read for p, its path relative to the
// connection's directory when it is inside it ("" otherwise), and whether p stays inside
// the files root. A URL or a home-relative path is left alone (ok false, DuckDB refuses it).
func (r pathResolver) resolve(p string) (abs, rel string, ok bool) {
	if p == "" || strings.Contains(p, "://") || strings.HasPrefix(p, "~") {
		return "", "", false
	}
	abs = filepath.Clean(p)
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(r.dir, abs)
	}
	if !within(r.root, abs) {
		return "", "", false
	}
	// Symbolic links on the path's literal prefix (before any glob) must stay inside too.
	prefix := abs
	if i := strings.IndexAny(prefix, "*?[{"); i >= 0 {
		prefix = filepath.Dir(prefix[:i] + "x")
	}
	for q := prefix; within(r.root, q); q = filepath.Dir(q) {
		real, err := filepath.EvalSymlinks(q)
		if err != nil {
			continue // not there (yet): its parent decides
		}
		if !within(r.root, real) {
			return "", "", false
		}
		break
	}
	if x, err := filepath.Rel(r.dir, abs); err == nil && x != ".." && !strings.HasPrefix(x, "../") && x != "." {
		rel = filepath.ToSlash(x)
	}
	return abs, rel, true
}

// within reports whether p is root or below it (both clean and absolute).
func within(root, p string) bool {
	return p == root || strings.HasPrefix(p, strings.TrimSuffix(root, "/")+"/")
}

// viewRewrite is what rewriting one view's parse tree found.
type viewRewrite struct {
	// escapes is true when a path leaves the files root: the view is left as stored.
	escapes bool
	// datasets are the file datasets (source.FileDatasetName) the view reads inside the
	// connection's directory.
	datasets []string
	// absInside is true when the view names a file inside the connection's directory by
	// an absolute path (its lineage SQL then names it relatively).
	absInside bool
}

// rewriter rewrites the parse tree (json_serialize_sql) of a database's view.
type rewriter struct {
	paths   pathResolver
	objects map[string]dbObject
	// engine is true for the engine's copy (absolute paths, qualified tables), false for
	// lineage (paths inside the directory relative, names as written).
	engine bool
	schema string
	ctes   map[string]bool
	out    viewRewrite
}

func (w *rewriter) walk(v any) {
	switch n := v.(type) {
	case []any:
		for _, x := range n {
			w.walk(x)
		}
	case map[string]any:
		switch n["type"] {
		case "TABLE_FUNCTION":
			if fn, ok := n["function"].(map[string]any); ok {
				name, _ := fn["function_name"].(string)
				if readFuncs[strings.ToLower(name)] {
					if kids, ok := fn["children"].([]any); ok && len(kids) > 0 {
						w.pathArg(kids[0])
					}
				}
			}
		case "BASE_TABLE":
			w.baseTable(n)
		}
		for _, x := range n {
			w.walk(x)
		}
	}
}

// readFuncs read files by the path (or list of paths) of their first argument.
var readFuncs = map[string]bool{"read_parquet": true, "parquet_scan": true, "read_csv": true, "read_csv_auto": true,
	"read_json": true, "read_json_auto": true, "read_ndjson": true, "read_ndjson_auto": true, "read_json_objects": true}

// pathArg rewrites a path constant, or each constant of a list_value.
func (w *rewriter) pathArg(v any) {
	n, ok := v.(map[string]any)
	if !ok {
		return
	}
	switch n["class"] {
	case "CONSTANT":
		val, ok := n["value"].(map[string]any)
		if !ok {
			return
		}
		if p, ok := val["value"].(string); ok {
			val["value"] = w.path(p)
		}
	case "FUNCTION":
		if name, _ := n["function_name"].(string); name == "list_value" {
			kids, _ := n["children"].([]any)
			for _, k := range kids {
				w.pathArg(k)
			}
		}
	}
}

// path is p as the engine's copy (or the lineage SQL) names it.
func (w *rewriter) path(p string) string {
	abs, rel, ok := w.paths.resolve(p)
	if !ok {
		if p != "" && !strings.Contains(p, "://") {
			w.out.escapes = true
		}
		return p
	}
	if rel != "" {
		if ds := source.FileDatasetName(rel); ds != "" {
			w.out.datasets = append(w.out.datasets, ds)
		}
		if filepath.IsAbs(p) {
			w.out.absInside = true
		}
	}
	switch {
	case w.engine:
		return abs
	case rel != "" && filepath.IsAbs(p):
		return rel
	}
	return p
}

// baseTable rewrites a FROM name: a file read by DuckDB's replacement scan ('x.parquet')
// like a path; in the engine's copy, a table of the database qualified with its catalog
// and a view of it with the memory catalog (its re-created copy).
func (w *rewriter) baseTable(n map[string]any) {
	schema, _ := n["schema_name"].(string)
	name, _ := n["table_name"].(string)
	catalog, _ := n["catalog_name"].(string)
	if catalog != "" {
		return
	}
	if schema == "" && w.ctes[strings.ToLower(name)] {
		return
	}
	var obj dbObject
	found := false
	if schema != "" {
		obj, found = w.objects[objectKey(schema, name)]
	} else {
		for _, s := range []string{w.schema, "main"} {
			if obj, found = w.objects[objectKey(s, name)]; found {
				break
			}
		}
	}
	if !found {
		if schema == "" && formatOf(name) != "" || strings.ContainsAny(name, "/*") {
			n["table_name"] = w.path(name)
		}
		return
	}
	if !w.engine {
		return
	}
	n["schema_name"] = obj.schema
	n["catalog_name"] = sourceCatalog
	if obj.view {
		n["catalog_name"] = memoryCatalog
	}
}

// collectCTEs gathers the names of every common table expression in the tree.
func collectCTEs(v any, into map[string]bool) {
	switch n := v.(type) {
	case []any:
		for _, x := range n {
			collectCTEs(x, into)
		}
	case map[string]any:
		if m, ok := n["cte_map"].(map[string]any); ok {
			if entries, ok := m["map"].([]any); ok {
				for _, e := range entries {
					if kv, ok := e.(map[string]any); ok {
						if k, ok := kv["key"].(string); ok {
							into[strings.ToLower(k)] = true
						}
					}
				}
			}
		}
		for _, x := range n {
			collectCTEs(x, into)
		}
	}
}

// serializeSQL answers DuckDB's parse tree of one SELECT (nil when it is not one).
func serializeSQL(ctx context.Context, conn *sql.Conn, sel string) (map[string]any, error) {
	var out string
	if err := conn.QueryRowContext(ctx, "SELECT CAST(json_serialize_sql(CAST(? AS VARCHAR)) AS VARCHAR)", sel).Scan(&out); err != nil {
		return nil, classifyOpen(err)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.UseNumber()
	var tree map[string]any
	if err := dec.Decode(&tree); err != nil {
		return nil, nil
	}
	if bad, _ := tree["error"].(bool); bad {
		return nil, nil
	}
	return tree, nil
}

// deserializeSQL turns a parse tree back into SQL ("" when DuckDB cannot).
func deserializeSQL(ctx context.Context, conn *sql.Conn, tree map[string]any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(tree); err != nil {
		return ""
	}
	var out sql.NullString
	if err := conn.QueryRowContext(ctx, "SELECT json_deserialize_sql(CAST(? AS JSON))", buf.String()).Scan(&out); err != nil {
		return ""
	}
	return out.String
}

// rewriteView rewrites one view for the engine (copy) and for lineage (lineageSQL, ""
// when the stored text serves). copySQL is "" when the view is left as stored.
func rewriteView(ctx context.Context, conn *sql.Conn, paths pathResolver, objects map[string]dbObject, o dbObject) (copySQL, lineageSQL string, found viewRewrite, err error) {
	sel := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(connect.ViewSelect(strings.TrimSpace(o.sql))), ";"))
	tree, err := serializeSQL(ctx, conn, sel)
	if err != nil || tree == nil {
		return "", "", found, err
	}
	ctes := map[string]bool{}
	collectCTEs(tree, ctes)
	eng := &rewriter{paths: paths, objects: objects, engine: true, schema: o.schema, ctes: ctes}
	eng.walk(tree)
	found = eng.out
	if !found.escapes {
		copySQL = deserializeSQL(ctx, conn, tree)
	}
	if found.absInside {
		tree, err = serializeSQL(ctx, conn, sel)
		if err != nil || tree == nil {
			return copySQL, "", found, err
		}
		lin := &rewriter{paths: paths, objects: objects, schema: o.schema, ctes: ctes}
		lin.walk(tree)
		lineageSQL = deserializeSQL(ctx, conn, tree)
	}
	return copySQL, lineageSQL, found, nil
}

// attachDatabase re-creates the attached database's views in the memory catalog (see
// sourceCatalog) and sets the search_path on conn; it returns that search_path, which
// every other connection of the pool sets too.
func (d *dialect) attachDatabase(ctx context.Context, conn *sql.Conn) (string, error) {
	objects, err := readObjects(ctx, conn)
	if err != nil {
		return "", err
	}
	byKey := make(map[string]dbObject, len(objects))
	schemas := map[string]bool{}
	var order []string
	addSchema := func(s string) {
		if !schemas[s] {
			schemas[s] = true
			order = append(order, s)
		}
	}
	addSchema("main")
	for _, o := range objects {
		byKey[objectKey(o.schema, o.name)] = o
		addSchema(o.schema)
	}
	if schemas[source.FilesSchema] {
		// The database has its own schema files: its names win, no file dataset is added.
		d.noFiles = true
	}
	sourceSchemas := append([]string(nil), order...)
	addSchema(source.FilesSchema)
	var sp []string
	for _, s := range order {
		if s != "main" {
			if _, err := conn.ExecContext(ctx, "CREATE SCHEMA IF NOT EXISTS "+quote(memoryCatalog)+"."+quote(s)); err != nil {
				return "", classifyOpen(err)
			}
		}
		sp = append(sp, quote(memoryCatalog)+"."+quote(s))
	}
	for _, s := range sourceSchemas {
		sp = append(sp, quote(sourceCatalog)+"."+quote(s))
	}
	searchPath := strings.Join(sp, ",")
	if _, err := conn.ExecContext(ctx, "SET search_path = "+literal(searchPath)); err != nil {
		return "", classifyOpen(err)
	}
	paths := pathResolver{dir: d.dir, root: d.root}
	type pending struct {
		o    dbObject
		stmt string
	}
	var todo []pending
	d.lineageSQL, d.fileNames = map[[2]string]string{}, map[string]bool{}
	for i, o := range objects {
		if !o.view || i >= MaxDatasets {
			continue
		}
		copySQL, lineageSQL, found, err := rewriteView(ctx, conn, paths, byKey, o)
		if err != nil {
			return "", err
		}
		for _, ds := range found.datasets {
			d.fileNames[ds] = true
		}
		if lineageSQL != "" {
			d.lineageSQL[[2]string{o.schema, o.name}] = lineageSQL
		}
		if copySQL == "" {
			continue
		}
		cols := make([]string, len(o.columns))
		for j, c := range o.columns {
			cols[j] = quote(c)
		}
		todo = append(todo, pending{o: o, stmt: "CREATE VIEW " + quote(memoryCatalog) + "." + quote(o.schema) + "." + quote(o.name) +
			" (" + strings.Join(cols, ", ") + ") AS " + copySQL})
	}
	// Views over views: whatever binds is created, until a round creates nothing (the
	// rest stay as stored).
	for len(todo) > 0 {
		var left []pending
		for _, p := range todo {
			if _, err := conn.ExecContext(ctx, p.stmt); err != nil {
				if ctx.Err() != nil {
					return "", classifyOpen(err)
				}
				left = append(left, p)
			}
		}
		if len(left) == len(todo) {
			break
		}
		todo = left
	}
	return searchPath, nil
}
