package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/connection"
	"github.com/vigia-data/vigia/demo"
	"github.com/vigia-data/vigia/synthetic"
	"github.com/vigia-data/vigia/synthetic/sqlitepack"
)

// benchSyntheticCommand is `vigia bench synthetic`: a pack of many tables and rows from
// a scanned SQLite source, timed against the 30 s budget with its peak heap.
func benchSyntheticCommand(stdout, stderr io.Writer) *cobra.Command {
	var tables, rows, sourceRows int
	var keep bool
	var formats []string
	var cpuProfile string
	cmd := &cobra.Command{Use: "synthetic", Short: "Synthetic pack: 20 tables × 20,000 rows, time against the 30 s budget and peak heap",
		RunE: func(c *cobra.Command, _ []string) error {
			return withApp(c.Context(), stderr, func(a *app.App) error {
				return benchSynthetic(c.Context(), a, stdout, benchSyntheticOptions{tables: tables, rows: rows, sourceRows: sourceRows,
					keep: keep, formats: formats, cpuProfile: cpuProfile})
			})
		}}
	cmd.Flags().IntVar(&tables, "tables", synthetic.MaxPackTables, "tables of the source and the pack (1-20)")
	cmd.Flags().IntVar(&rows, "rows", synthetic.MaxRows, "rows per generated table (1-20000)")
	cmd.Flags().IntVar(&sourceRows, "source-rows", 5000, "rows per source table")
	cmd.Flags().BoolVar(&keep, "keep", false, "keep the workspace and the source file afterwards")
	cmd.Flags().StringSliceVar(&formats, "format", []string{synthetic.FormatSQLite, synthetic.FormatZIP}, "pack formats to time (sqlite, zip)")
	cmd.Flags().StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the packs (not of seeding and scanning) to this file")
	return cmd
}

type benchSyntheticOptions struct {
	tables, rows, sourceRows int
	keep                     bool
	formats                  []string
	cpuProfile               string
}

func benchSynthetic(ctx context.Context, a *app.App, out io.Writer, o benchSyntheticOptions) error {
	tables, rows, sourceRows, keep := o.tables, o.rows, o.sourceRows, o.keep
	for _, f := range o.formats {
		if f != synthetic.FormatSQLite && f != synthetic.FormatZIP {
			return fmt.Errorf("--format must be sqlite or zip")
		}
	}
	if tables < 1 || tables > synthetic.MaxPackTables {
		return fmt.Errorf("--tables must be 1-%d", synthetic.MaxPackTables)
	}
	root := a.Config.SQLiteRoot
	if root == "" {
		root = os.TempDir()
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	path := filepath.Join(root, "bench-synthetic-"+vigia.NewUUID()[:8]+".db")
	start := time.Now()
	if err := seedSyntheticSource(ctx, path, tables, sourceRows); err != nil {
		return err
	}
	w, err := a.Identity.CreateWorkspace(ctx, "bench-synthetic-"+vigia.NewUUID()[:8], "PT")
	if err != nil {
		return err
	}
	if !keep {
		defer func() {
			c, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, _ = a.DB.Pool().Exec(c, `DELETE FROM workspaces WHERE id = $1`, w.ID)
			_ = os.Remove(path)
		}()
	}
	actx := app.AsAdmin(ctx, w.ID, "bench")
	conn, err := a.Connections.Add(actx, connection.AddInput{Name: "bench", Kind: "sqlite", DSN: path, Test: true})
	if err != nil {
		return err
	}
	sc, err := a.Scans.TriggerScan(actx, conn.ID, "bench")
	if err != nil {
		return err
	}
	if sc, err = a.WaitScan(actx, sc.ID, nil); err != nil {
		return err
	}
	fmt.Fprintf(out, "source: %d tables × %d rows, seeded and scanned in %s (scan %s)\n", tables, sourceRows,
		time.Since(start).Round(time.Millisecond), sc.Status)

	// The bench's own service has no budget cut, so that it measures the time a pack
	// takes and compares it with the budget instead of stopping at it.
	svc := synthetic.NewService(a.Catalog, a.Products, a.Connections, a.SyntheticKnowledge(), sqlitepack.Writer{}, synthetic.Options{Budget: time.Hour})
	if o.cpuProfile != "" {
		stop, err := startCPUProfile(o.cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	for _, format := range o.formats {
		var peak uint64
		var mu sync.Mutex
		done := make(chan struct{})
		var wg sync.WaitGroup
		runtime.GC()
		base := liveHeap()
		wg.Go(func() {
			t := time.NewTicker(10 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-done:
					return
				case <-t.C:
					h := liveHeap()
					mu.Lock()
					peak = max(peak, h)
					mu.Unlock()
				}
			}
		})
		cpu0 := processCPU()
		t0 := time.Now()
		var generated time.Duration
		progress := func(s synthetic.Step) {
			if s.Stage == "generate" && s.Done == s.Total {
				generated = time.Since(t0)
			}
		}
		p, err := svc.Pack(actx, synthetic.PackRequest{ConnectionID: &conn.ID, RowsPerTable: rows, Seed: 1, Format: format, Progress: progress})
		packed := time.Since(t0)
		var size int64
		if err == nil {
			cw := &countingWriter{}
			if format == synthetic.FormatSQLite {
				err = svc.WriteSQLite(actx, p, cw)
			} else {
				err = synthetic.WriteZIP(cw, p)
			}
			size = cw.n
		}
		total := time.Since(t0)
		cpu := processCPU() - cpu0
		close(done)
		wg.Wait()
		if err != nil {
			return err
		}
		minUtility, verdicts := 100.0, map[string]int{}
		for _, ev := range p.Evaluations {
			minUtility = min(minUtility, ev.UtilityScore)
			verdicts[ev.PrivacyVerdict]++
		}
		within := "within"
		if packed > synthetic.Budget {
			within = "OVER"
		}
		fmt.Fprintf(out, "%s: %d tables × %d rows: generate %s, generate+evaluate %s (%s the %s budget), with the file %s (process CPU %s), %.1f MiB written, "+
			"peak heap %.0f MiB, min utility %.1f, verdicts %v\n", format, len(p.Tables), rows, generated.Round(time.Millisecond),
			packed.Round(time.Millisecond), within, synthetic.Budget, total.Round(time.Millisecond), cpu.Round(time.Millisecond), float64(size)/(1<<20), float64(peak-min(peak, base))/(1<<20), minUtility, verdicts)
	}
	return nil
}

type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

// seedSyntheticSource writes a SQLite source of tables tables named t01.. with rows rows
// each; every table but the first references the previous one (tNN_id).
func seedSyntheticSource(ctx context.Context, path string, tables, rows int) error {
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return err
	}
	defer db.Close()
	r := rand.New(rand.NewPCG(16, 20))
	states := []string{"aberto", "pago", "anulado", "pendente"}
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 1; i <= tables; i++ {
		name := fmt.Sprintf("t%02d", i)
		cols := "id INTEGER PRIMARY KEY, nif VARCHAR(9) NOT NULL, email VARCHAR(120), codigo_postal VARCHAR(8), valor NUMERIC(12,2) NOT NULL, " +
			"quantidade INTEGER NOT NULL, estado VARCHAR(12) NOT NULL, descricao VARCHAR(80), created_at TIMESTAMP NOT NULL"
		if i > 1 {
			cols += fmt.Sprintf(", t%02d_id INTEGER NOT NULL REFERENCES t%02d (id)", i-1, i-1)
		}
		if _, err := db.ExecContext(ctx, "CREATE TABLE "+name+" ("+cols+")"); err != nil {
			return err
		}
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		n := 9
		if i > 1 {
			n = 10
		}
		stmt, err := tx.PrepareContext(ctx, "INSERT INTO "+name+" VALUES ("+strings.TrimSuffix(strings.Repeat("?, ", n), ", ")+")")
		if err != nil {
			return err
		}
		for k := 1; k <= rows; k++ {
			person := demo.PersonName(r)
			var email any = demo.Email(r, person)
			if k%20 == 0 {
				email = nil
			}
			args := []any{k, demo.ValidNIF(r), email, demo.PostalCodePT(r), float64(r.IntN(1_000_000)) / 100, 1 + r.IntN(500),
				states[r.IntN(len(states))], demo.CompanyName(r), base.Add(time.Duration(r.IntN(365*24*3600)) * time.Second).Format("2006-01-02 15:04:05")}
			if i > 1 {
				args = append(args, 1+r.IntN(rows))
			}
			if _, err := stmt.ExecContext(ctx, args...); err != nil {
				return err
			}
		}
		stmt.Close()
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	return nil
}
