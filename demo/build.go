package demo

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/vigia-data/vigia"
)

// Build creates the pack's schema, data and views in db and replaces an earlier copy of the
// same pack (its tables and views are dropped first; nothing else is touched). dialect is
// "sqlite" (db opened with modernc.org/sqlite, driver "sqlite") or "postgres" (pgx stdlib,
// driver "pgx"; the pack gets its own schema, Pack.Schema). The data is a function of seed,
// rowsScale and the current hour: timestamps are laid out backwards from the start of the
// hour, so a table meant to be fresh is fresh when scanned and the stale one is months old.
// rowsScale multiplies the base row counts (1 = a few thousand rows per main table; values
// below 1 mean 1).
//
// In SQLite each pack needs a file of its own (tables of different packs share names); in
// Postgres all four packs can live in one database, each in its schema.
//
// Build returns KindInvalid for an unknown pack or dialect or a rowsScale above MaxRowsScale,
// KindConflict (code demo_pack_conflict) when a SQLite file already holds another pack, and
// KindInternal when the database refuses a statement.
func Build(ctx context.Context, db *sql.DB, dialect, key string, seed int64, rowsScale int) error {
	return BuildWith(ctx, db, dialect, key, Options{Seed: seed, Scale: float64(max(rowsScale, 1))})
}

// Options tune BuildWith.
type Options struct {
	Seed int64
	// Scale multiplies the base row counts; 0 means 1. Fractions down to MinRowsScale give
	// small packs for quick tests; every planted defect keeps at least one row.
	Scale float64
	// Now anchors the timestamps (truncated to the hour); zero means time.Now(). Two builds
	// with the same seed, scale and anchor hold the same rows.
	Now time.Time
}

// BuildWith is Build with a fractional scale and a chosen anchor time. It returns
// KindInvalid for an unknown pack or dialect or a scale outside [MinRowsScale,
// MaxRowsScale], KindConflict when a SQLite file already holds another pack, and
// KindInternal when the database refuses a statement.
func BuildWith(ctx context.Context, db *sql.DB, dialect, key string, opts Options) error {
	p, d, err := resolve(dialect, key)
	if err != nil {
		return err
	}
	if opts.Scale == 0 {
		opts.Scale = 1
	}
	if !(opts.Scale >= MinRowsScale && opts.Scale <= MaxRowsScale) { // NaN too
		return vigia.Invalid(vigia.Field("range", map[string]any{"ge": MinRowsScale, "le": MaxRowsScale}, "rows_scale"))
	}
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	rows := p.fill(newGen(opts.Seed, p.salt, opts.Scale, opts.Now.UTC().Truncate(time.Hour)))

	err = withTx(ctx, db, d, func(tx *sql.Tx) error {
		if !d.pg() {
			if err := checkNoOtherPack(ctx, tx, p); err != nil {
				return err
			}
		}
		for i := len(p.views) - 1; i >= 0; i-- {
			if d.pg() || !p.views[i].materialized {
				if err := exec(ctx, tx, "drop view "+p.views[i].name, d.dropView(p.views[i])); err != nil {
					return err
				}
			}
		}
		for i := len(p.tables) - 1; i >= 0; i-- {
			if err := exec(ctx, tx, "drop table "+p.tables[i].name, d.dropTable(p.tables[i])); err != nil {
				return err
			}
		}
		if d.pg() {
			if err := exec(ctx, tx, "create schema", "CREATE SCHEMA IF NOT EXISTS "+p.Schema); err != nil {
				return err
			}
		}
		for _, t := range p.tables {
			if err := exec(ctx, tx, "create table "+t.name, d.createTable(t)); err != nil {
				return err
			}
			if err := insertRows(ctx, tx, d, t, rows[t.name]); err != nil {
				return err
			}
		}
		// Keys and indexes come after the load, as pg_restore does: it is faster, and lets a
		// NOT VALID key sit over the planted orphans.
		for _, t := range p.tables {
			stmts := append(d.foreignKeys(t), d.createIndexes(t)...)
			for _, s := range stmts {
				if err := exec(ctx, tx, "constraints of "+t.name, s); err != nil {
					return err
				}
			}
		}
		return createViews(ctx, tx, d, p.views)
	})
	if err != nil {
		return err
	}
	if d.pg() {
		// Fresh statistics, so catalog row estimates match the data from the first scan.
		for _, t := range p.tables {
			if _, err := db.ExecContext(ctx, "ANALYZE "+d.qual(t.name)); err != nil {
				return failed("analyze "+t.name, err)
			}
		}
	}
	return nil
}

// Mutate applies the pack's "next scan" changes to a database Build filled, so that the
// second scan finds drift: at least one column changes type (an integer code becomes text)
// and, in the ERP pack, a column is dropped and one with a similar name added in its place.
// Views are dropped and recreated around the change, as a migration would. Mutate on a
// database it already changed does nothing.
//
// Mutate returns KindInvalid for an unknown pack or dialect, and KindInternal when the
// database refuses a statement (for example when the pack was never built there).
func Mutate(ctx context.Context, db *sql.DB, dialect, key string) error {
	p, d, err := resolve(dialect, key)
	if err != nil {
		return err
	}
	return withTx(ctx, db, d, func(tx *sql.Tx) error {
		done, err := mutated(ctx, tx, d, p.mutation)
		if err != nil || done {
			return err
		}
		for i := len(p.views) - 1; i >= 0; i-- {
			if d.pg() || !p.views[i].materialized {
				if err := exec(ctx, tx, "drop view "+p.views[i].name, d.dropView(p.views[i])); err != nil {
					return err
				}
			}
		}
		if d.pg() {
			err = mutatePostgres(ctx, tx, d, p.mutation)
		} else {
			err = mutateSQLite(ctx, tx, d, p.tables, p.mutation)
		}
		if err != nil {
			return err
		}
		return createViews(ctx, tx, d, p.views)
	})
}

// checkNoOtherPack refuses to build into a SQLite file that holds another pack: SQLite has
// no schemas, so packs share table names (clientes) and replacing ours would drop theirs.
func checkNoOtherPack(ctx context.Context, tx *sql.Tx, p *packDef) error {
	ours := map[string]bool{}
	for _, t := range p.tables {
		ours[t.name] = true
	}
	for _, other := range defs() {
		if other.Key == p.Key {
			continue
		}
		for _, t := range other.tables {
			if ours[t.name] {
				continue
			}
			var n int
			err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?", t.name).Scan(&n)
			if err != nil {
				return failed("look for other packs", err)
			}
			if n > 0 {
				return vigia.Conflict("demo_pack_conflict", "error.demo_pack_conflict", map[string]any{"pack": other.Key})
			}
		}
	}
	return nil
}

func resolve(dialectName, key string) (*packDef, dialect, error) {
	p, ok := defByKey(key)
	if !ok {
		return nil, dialect{}, vigia.Invalid(vigia.Field("enum",
			map[string]any{"expected": strings.Join(Keys(), ", ")}, "pack"))
	}
	if dialectName != DialectSQLite && dialectName != DialectPostgres {
		return nil, dialect{}, vigia.Invalid(vigia.Field("enum",
			map[string]any{"expected": DialectSQLite + ", " + DialectPostgres}, "dialect"))
	}
	return p, dialect{name: dialectName, schema: p.Schema}, nil
}

// withTx runs fn in one transaction on one connection. In SQLite it turns foreign-key
// enforcement off for that connection while fn runs (the pragma is a no-op inside a
// transaction), because orphans are planted and tables are rebuilt; it restores the
// connection's setting afterwards.
func withTx(ctx context.Context, db *sql.DB, d dialect, fn func(tx *sql.Tx) error) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return failed("connect", err)
	}
	defer conn.Close()
	if !d.pg() {
		var fk int
		if err := conn.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk); err != nil {
			return failed("read foreign_keys", err)
		}
		if fk != 0 {
			if _, err := conn.ExecContext(ctx, "PRAGMA foreign_keys = OFF"); err != nil {
				return failed("foreign_keys off", err)
			}
			defer func() { _, _ = conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA foreign_keys = ON") }()
		}
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return failed("begin", err)
	}
	defer func() { _ = tx.Rollback() }()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return failed("commit", err)
	}
	return nil
}

// failed wraps a database error: the cause is for the log, the step says where it happened.
func failed(step string, err error) error {
	if err == nil {
		return nil
	}
	return vigia.Internal(fmt.Errorf("demo: %s: %w", step, err))
}

func exec(ctx context.Context, tx *sql.Tx, step, stmt string) error {
	_, err := tx.ExecContext(ctx, stmt)
	return failed(step, err)
}

func createViews(ctx context.Context, tx *sql.Tx, d dialect, views []view) error {
	for _, v := range views {
		if v.materialized && !d.pg() {
			continue
		}
		stmt, err := d.createView(v)
		if err != nil {
			return failed("render view "+v.name, err)
		}
		if err := exec(ctx, tx, "create view "+v.name, stmt); err != nil {
			return err
		}
	}
	return nil
}

// insertRows loads rows with multi-row INSERTs: one round trip per few hundred rows keeps a
// pack's load well under a second on either database.
func insertRows(ctx context.Context, tx *sql.Tx, d dialect, t table, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	ncol := len(t.cols)
	per := min(400, 30000/ncol)
	names := make([]string, ncol)
	for i, c := range t.cols {
		names[i] = c.name
	}
	head := "INSERT INTO " + d.qual(t.name) + " (" + strings.Join(names, ", ") + ") VALUES "
	stmtFor := func(n int) string {
		var b strings.Builder
		b.WriteString(head)
		p := 1
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteByte('(')
			for j := 0; j < ncol; j++ {
				if j > 0 {
					b.WriteByte(',')
				}
				if d.pg() {
					b.WriteByte('$')
					b.WriteString(itoa(p))
				} else {
					b.WriteByte('?')
				}
				p++
			}
			b.WriteByte(')')
		}
		return b.String()
	}
	full := stmtFor(per)
	args := make([]any, 0, per*ncol)
	for start := 0; start < len(rows); start += per {
		end := min(start+per, len(rows))
		args = args[:0]
		for _, row := range rows[start:end] {
			if len(row) != ncol {
				return failed("insert into "+t.name, fmt.Errorf("row has %d values for %d columns", len(row), ncol))
			}
			for j, v := range row {
				args = append(args, d.value(t.cols[j], v))
			}
		}
		stmt := full
		if end-start != per {
			stmt = stmtFor(end - start)
		}
		if _, err := tx.ExecContext(ctx, stmt, args...); err != nil {
			// The driver's message can quote a value; keep only where it failed.
			return vigia.Internal(fmt.Errorf("demo: insert into %s (rows %d-%d) failed: %w", t.name, start+1, end, errCode(err)))
		}
	}
	return nil
}

// errCode reduces a driver error to its SQLSTATE or SQLite result code, without the message
// text that could quote a value.
func errCode(err error) error {
	var st interface{ SQLState() string }
	if errors.As(err, &st) {
		return fmt.Errorf("sqlstate %s", st.SQLState())
	}
	var sc interface{ Code() int }
	if errors.As(err, &sc) {
		return fmt.Errorf("sqlite code %d", sc.Code())
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("%T", err)
}

// columnType returns the declared type of a column, lower-case ("integer", "text", ...), and
// false when the column does not exist.
func columnType(ctx context.Context, tx *sql.Tx, d dialect, tbl, col string) (string, bool, error) {
	var typ string
	var err error
	if d.pg() {
		err = tx.QueryRowContext(ctx, `SELECT data_type FROM information_schema.columns
			WHERE table_schema = $1 AND table_name = $2 AND column_name = $3`, d.schema, tbl, col).Scan(&typ)
	} else {
		err = tx.QueryRowContext(ctx, `SELECT type FROM pragma_table_info(?) WHERE name = ?`, tbl, col).Scan(&typ)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, failed("read type of "+tbl+"."+col, err)
	}
	return strings.ToLower(typ), true, nil
}

// mutated reports whether Mutate already ran: the first retyped column has its new type.
func mutated(ctx context.Context, tx *sql.Tx, d dialect, m mutation) (bool, error) {
	rt := m.retypes[0]
	typ, ok, err := columnType(ctx, tx, d, rt.table, rt.column)
	if err != nil {
		return false, err
	}
	if !ok {
		return false, failed("mutate", fmt.Errorf("column %s.%s not found; build the pack first", rt.table, rt.column))
	}
	return strings.HasPrefix(typ, strings.ToLower(d.sqlType(rt.typ))), nil
}

func mutatePostgres(ctx context.Context, tx *sql.Tx, d dialect, m mutation) error {
	for _, rt := range m.retypes {
		typ := d.sqlType(rt.typ)
		stmt := "ALTER TABLE " + d.qual(rt.table) + " ALTER COLUMN " + rt.column + " TYPE " + typ +
			" USING CAST(" + rt.column + " AS " + typ + ")"
		if err := exec(ctx, tx, "retype "+rt.table+"."+rt.column, stmt); err != nil {
			return err
		}
	}
	for _, rn := range m.renames {
		typ, ok, err := columnType(ctx, tx, d, rn.table, rn.from)
		if err != nil {
			return err
		}
		if !ok {
			return failed("rename", fmt.Errorf("column %s.%s not found", rn.table, rn.from))
		}
		if typ == "character varying" {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT character_maximum_length FROM information_schema.columns
				WHERE table_schema = $1 AND table_name = $2 AND column_name = $3`, d.schema, rn.table, rn.from).Scan(&n); err != nil {
				return failed("rename", err)
			}
			typ = "varchar(" + itoa(n) + ")"
		}
		t := d.qual(rn.table)
		for _, s := range []string{
			"ALTER TABLE " + t + " ADD COLUMN " + rn.to + " " + typ,
			"UPDATE " + t + " SET " + rn.to + " = " + rn.from,
			"ALTER TABLE " + t + " DROP COLUMN " + rn.from,
		} {
			if err := exec(ctx, tx, "rename "+rn.table+"."+rn.from, s); err != nil {
				return err
			}
		}
	}
	return nil
}

// mutateSQLite rebuilds every table the mutation touches, since SQLite cannot change a
// column's type: create the new shape, copy, drop the old table, rename, re-index (the
// procedure of SQLite's ALTER TABLE documentation). Foreign keys are off on the connection.
func mutateSQLite(ctx context.Context, tx *sql.Tx, d dialect, tables []table, m mutation) error {
	for _, t := range tables {
		newT, exprs, touched := applyMutation(d, t, m)
		if !touched {
			continue
		}
		tmp := newT
		tmp.name = t.name + "__vigia_novo"
		names := make([]string, len(newT.cols))
		for i, c := range newT.cols {
			names[i] = c.name
		}
		stmts := []string{
			d.createTable(tmp),
			"INSERT INTO " + tmp.name + " (" + strings.Join(names, ", ") + ") SELECT " + strings.Join(exprs, ", ") + " FROM " + t.name,
			"DROP TABLE " + t.name,
			"ALTER TABLE " + tmp.name + " RENAME TO " + t.name,
		}
		stmts = append(stmts, d.createIndexes(newT)...)
		for _, s := range stmts {
			if err := exec(ctx, tx, "rebuild "+t.name, s); err != nil {
				return err
			}
		}
	}
	return nil
}

// applyMutation returns a table's shape after the mutation and, per new column, the SQL
// expression that fills it from the old table.
func applyMutation(d dialect, t table, m mutation) (table, []string, bool) {
	out := t
	out.cols = nil
	var exprs []string
	touched := false
	var added []column
	var addedExprs []string
	for _, c := range t.cols {
		expr := c.name
		for _, rt := range m.retypes {
			if rt.table == t.name && rt.column == c.name {
				c.typ = rt.typ
				expr = "CAST(" + c.name + " AS " + d.sqlType(rt.typ) + ")"
				touched = true
			}
		}
		renamed := false
		for _, rn := range m.renames {
			if rn.table == t.name && rn.from == c.name {
				nc := c
				nc.name = rn.to
				added = append(added, nc)
				addedExprs = append(addedExprs, c.name)
				renamed, touched = true, true
			}
		}
		if renamed {
			continue
		}
		out.cols = append(out.cols, c)
		exprs = append(exprs, expr)
	}
	out.cols = append(out.cols, added...)
	exprs = append(exprs, addedExprs...)
	return out, exprs, touched
}
