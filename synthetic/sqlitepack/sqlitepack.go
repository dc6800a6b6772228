// Package sqlitepack writes a synthetic pack as a SQLite database file: the tables of
// schema.sql with their primary and foreign keys, loaded parents first with the foreign
// keys enforced. It is the adapter that links the SQLite driver for package synthetic.
package sqlitepack

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver

	"github.com/vigia-data/vigia/synthetic"
)

// Writer implements synthetic.SQLiteWriter.
type Writer struct{}

// batchRows bounds the rows of one INSERT (SQLite allows 32766 variables).
const batchRows = 500

// WriteSQLite creates the database at path and loads the pack into it.
func (Writer) WriteSQLite(ctx context.Context, path string, p *synthetic.Pack) error {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)&_pragma=journal_mode(OFF)&_pragma=synchronous(OFF)")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	for _, t := range p.Tables {
		if _, err := tx.ExecContext(ctx, synthetic.CreateTable(t)); err != nil {
			return fmt.Errorf("create %s: %w", t.Name, err)
		}
		if err := insert(ctx, tx, t); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func insert(ctx context.Context, tx *sql.Tx, t *synthetic.Table) error {
	cols := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		cols[i] = `"` + strings.ReplaceAll(c.Name, `"`, `""`) + `"`
	}
	rowPH := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
	head := `INSERT INTO "` + strings.ReplaceAll(t.Name, `"`, `""`) + `" (` + strings.Join(cols, ", ") + ") VALUES "
	rows := max(1, min(batchRows, 32000/max(1, len(cols))))
	args := make([]any, 0, rows*len(cols))
	for start := 0; start < t.Rows; start += rows {
		if err := ctx.Err(); err != nil {
			return err
		}
		end := min(start+rows, t.Rows)
		args = args[:0]
		for r := start; r < end; r++ {
			for c, col := range t.Columns {
				v, null := t.Value(c, r)
				args = append(args, value(col, v, null))
			}
		}
		stmt := head + strings.TrimSuffix(strings.Repeat(rowPH+", ", end-start), ", ")
		if _, err := tx.ExecContext(ctx, stmt, args...); err != nil {
			return fmt.Errorf("insert %s: %w", t.Name, err)
		}
	}
	return nil
}

// value converts a generated value to what SQLite stores for the column's type.
func value(col synthetic.Column, v string, null bool) any {
	if null {
		return nil
	}
	switch col.SQLType {
	case synthetic.TypeBoolean:
		if v == "true" {
			return 1
		}
		return 0
	case synthetic.TypeInteger:
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return n
		}
	case synthetic.TypeNumeric:
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return f
		}
	}
	return v
}
