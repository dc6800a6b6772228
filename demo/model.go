package demo

import (
	"strings"
	"text/template"
	"time"
)

// Column types are written once, in an abstract form, and mapped per dialect: "id" (integer
// primary key), "int", "text", "varchar(n)", "numeric(p,s)", "timestamp", "date", "uuid",
// "bool".
type column struct {
	name    string
	typ     string
	notNull bool
	unique  bool
	ref     string // parent table (its id) inside the pack, "" for none
	orphans bool   // rows point at missing parents on purpose: Postgres gets the FK NOT VALID
}

type table struct {
	name    string
	cols    []column
	uniques [][]string // composite UNIQUE constraints
	indexes [][]string // secondary indexes, created after the load
}

// view is a view of the pack. Its SQL is a text/template over viewDialect, so the same text
// serves SQLite and Postgres.
type view struct {
	name         string
	materialized bool // Postgres only; SQLite has no materialized views
	sql          string
}

// mutation is what Mutate changes: column types, and renames done as drop + add, the way an
// upstream team ships them (the new column lands at the end, with the old column's data).
type mutation struct {
	retypes []retype
	renames []rename
}

type retype struct{ table, column, typ string }

type rename struct{ table, from, to string }

// dialect maps the abstract model to one database's SQL.
type dialect struct {
	name   string // "sqlite" or "postgres"
	schema string // Postgres schema of the pack; unused by SQLite (main)
}

func (d dialect) pg() bool { return d.name == DialectPostgres }

// qual returns a table or view name as SQL refers to it.
func (d dialect) qual(name string) string {
	if d.pg() {
		return d.schema + "." + name
	}
	return name
}

func (d dialect) sqlType(abstract string) string {
	switch {
	case abstract == "id":
		if d.pg() {
			return "bigint"
		}
		return "INTEGER"
	case abstract == "int":
		if d.pg() {
			return "integer"
		}
		return "INTEGER"
	case abstract == "text":
		if d.pg() {
			return "text"
		}
		return "TEXT"
	case abstract == "timestamp":
		if d.pg() {
			return "timestamptz"
		}
		return "TIMESTAMP"
	case abstract == "date":
		if d.pg() {
			return "date"
		}
		return "DATE"
	case abstract == "uuid":
		// SQLite would give a column declared UUID numeric affinity.
		if d.pg() {
			return "uuid"
		}
		return "VARCHAR(36)"
	case abstract == "bool":
		if d.pg() {
			return "boolean"
		}
		return "BOOLEAN"
	case strings.HasPrefix(abstract, "varchar"), strings.HasPrefix(abstract, "numeric"):
		return strings.ToUpper(abstract)
	}
	return abstract
}

// createTable returns the CREATE TABLE statement. SQLite declares foreign keys inline (it
// cannot add them later); Postgres adds them after the load, see foreignKeys.
func (d dialect) createTable(t table) string {
	var b strings.Builder
	b.WriteString("CREATE TABLE ")
	b.WriteString(d.qual(t.name))
	b.WriteString(" (\n")
	for i, c := range t.cols {
		if i > 0 {
			b.WriteString(",\n")
		}
		b.WriteString("  ")
		b.WriteString(c.name)
		b.WriteByte(' ')
		b.WriteString(d.sqlType(c.typ))
		if c.typ == "id" {
			b.WriteString(" PRIMARY KEY")
		}
		if c.notNull && c.typ != "id" {
			b.WriteString(" NOT NULL")
		}
		if c.unique {
			b.WriteString(" UNIQUE")
		}
		if c.ref != "" && !d.pg() {
			b.WriteString(" REFERENCES ")
			b.WriteString(c.ref)
			b.WriteString(" (id)")
		}
	}
	for _, u := range t.uniques {
		b.WriteString(",\n  UNIQUE (")
		b.WriteString(strings.Join(u, ", "))
		b.WriteByte(')')
	}
	b.WriteString("\n)")
	return b.String()
}

// foreignKeys returns the ALTER TABLE statements that declare a Postgres table's foreign keys.
// A key whose rows were planted with orphans is NOT VALID: declared for the catalog and for
// new rows, not checked against the rows already there.
func (d dialect) foreignKeys(t table) []string {
	if !d.pg() {
		return nil
	}
	var out []string
	for _, c := range t.cols {
		if c.ref == "" {
			continue
		}
		s := "ALTER TABLE " + d.qual(t.name) + " ADD CONSTRAINT " + t.name + "_" + c.name + "_fkey FOREIGN KEY (" +
			c.name + ") REFERENCES " + d.qual(c.ref) + " (id)"
		if c.orphans {
			s += " NOT VALID"
		}
		out = append(out, s)
	}
	return out
}

func (d dialect) createIndexes(t table) []string {
	out := make([]string, 0, len(t.indexes))
	for _, cols := range t.indexes {
		out = append(out, "CREATE INDEX "+t.name+"_"+strings.Join(cols, "_")+"_idx ON "+d.qual(t.name)+
			" ("+strings.Join(cols, ", ")+")")
	}
	return out
}

// value converts a generated Go value to what the driver stores for the column. SQLite keeps
// timestamps as ISO 8601 text in UTC, the form its date functions and Vigia's profiler read.
func (d dialect) value(c column, v any) any {
	t, ok := v.(time.Time)
	if !ok || d.pg() {
		return v
	}
	if c.typ == "date" {
		return t.UTC().Format(time.DateOnly)
	}
	return t.UTC().Format(time.DateTime)
}

// viewDialect is what view templates see.
type viewDialect struct{ d dialect }

// S is the schema prefix of table names ("erp." in Postgres, "" in SQLite).
func (v viewDialect) S() string {
	if v.d.pg() {
		return v.d.schema + "."
	}
	return ""
}

// Today is the current date.
func (v viewDialect) Today() string {
	if v.d.pg() {
		return "CURRENT_DATE"
	}
	return "date('now')"
}

// DaysAgo is the date n days before today.
func (v viewDialect) DaysAgo(n int) string {
	if v.d.pg() {
		return "(CURRENT_DATE - " + itoa(n) + ")"
	}
	return "date('now', '-" + itoa(n) + " days')"
}

// Day is the date of a timestamp expression.
func (v viewDialect) Day(expr string) string {
	if v.d.pg() {
		return "CAST(" + expr + " AS date)"
	}
	return "date(" + expr + ")"
}

// Month is the yyyy-mm of a timestamp expression.
func (v viewDialect) Month(expr string) string {
	if v.d.pg() {
		return "to_char(" + expr + ", 'YYYY-MM')"
	}
	return "strftime('%Y-%m', " + expr + ")"
}

// viewSQL renders a view's SELECT for the dialect.
func (d dialect) viewSQL(v view) (string, error) {
	tmpl, err := template.New(v.name).Parse(v.sql)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := tmpl.Execute(&b, viewDialect{d}); err != nil {
		return "", err
	}
	return b.String(), nil
}

func (d dialect) createView(v view) (string, error) {
	body, err := d.viewSQL(v)
	if err != nil {
		return "", err
	}
	kind := "VIEW "
	if v.materialized {
		kind = "MATERIALIZED VIEW "
	}
	return "CREATE " + kind + d.qual(v.name) + " AS\n" + body, nil
}

func (d dialect) dropView(v view) string {
	if v.materialized {
		return "DROP MATERIALIZED VIEW IF EXISTS " + d.qual(v.name) + " CASCADE"
	}
	if d.pg() {
		return "DROP VIEW IF EXISTS " + d.qual(v.name) + " CASCADE"
	}
	return "DROP VIEW IF EXISTS " + d.qual(v.name)
}

func (d dialect) dropTable(t table) string {
	if d.pg() {
		return "DROP TABLE IF EXISTS " + d.qual(t.name) + " CASCADE"
	}
	return "DROP TABLE IF EXISTS " + d.qual(t.name)
}
