package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/synthetic"
)

// syntheticCommand is `vigia synthetic pack`: a multi-table synthetic pack written to a
// file, with progress on stderr.
func syntheticCommand(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "synthetic", Short: "Synthetic data generated from profiles, never from stored values"}
	var ws, conn, domain, format, out string
	var datasets []string
	var rows, maxTables int
	var seed int64
	pack := &cobra.Command{Use: "pack", Short: "Write a synthetic pack of a connection, a domain or datasets (ZIP of CSVs with schema.sql, or SQLite)",
		RunE: func(c *cobra.Command, _ []string) error {
			scopes := 0
			for _, set := range []bool{conn != "", domain != "", len(datasets) > 0} {
				if set {
					scopes++
				}
			}
			if scopes != 1 {
				return fmt.Errorf("give exactly one of --connection, --domain, --dataset")
			}
			return withApp(c.Context(), stderr, func(a *app.App) error {
				w, err := a.Identity.Workspace(c.Context(), ws)
				if err != nil {
					return about(fmt.Sprintf("workspace %q", ws), err)
				}
				ctx := app.AsAdmin(c.Context(), w.ID, "cli")
				req := synthetic.PackRequest{RowsPerTable: rows, Seed: seed, Format: format, MaxTables: maxTables,
					Progress: newPackProgress(stderr).step}
				switch {
				case conn != "":
					cn, err := a.Connections.Connection(ctx, conn)
					if err != nil {
						return about(fmt.Sprintf("connection %q", conn), err)
					}
					req.ConnectionID = &cn.ID
				case domain != "":
					req.DomainID = &domain
				default:
					req.DatasetIDs = datasets
				}
				return writePack(ctx, a, req, out, stdout)
			})
		}}
	f := pack.Flags()
	f.StringVar(&ws, "workspace", "", "workspace name or id")
	f.StringVar(&conn, "connection", "", "every profiled table of this connection (name or id)")
	f.StringVar(&domain, "domain", "", "every profiled table of this data product (id)")
	f.StringSliceVar(&datasets, "dataset", nil, "a dataset id (repeatable, at most 20)")
	f.IntVar(&rows, "rows", synthetic.DefaultPackRows, "rows per table (1-20000)")
	f.IntVar(&maxTables, "max-tables", synthetic.MaxPackTables, "tables at most (1-20)")
	f.Int64Var(&seed, "seed", 0, "seed of the generator: the same seed over the same profiles writes the same bytes")
	f.StringVar(&format, "format", synthetic.FormatZIP, "zip or sqlite")
	f.StringVarP(&out, "output", "o", "", "file to write")
	for _, name := range []string{"workspace", "output"} {
		_ = pack.MarkFlagRequired(name)
	}
	cmd.AddCommand(pack)
	return cmd
}

// writePack generates, evaluates and writes a pack to path (a privacy fail or the budget
// leave no file).
func writePack(ctx context.Context, a *app.App, req synthetic.PackRequest, path string, stdout io.Writer) error {
	p, err := a.Synthetic.Pack(ctx, req)
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	if req.Format == synthetic.FormatSQLite {
		err = a.Synthetic.WriteSQLite(ctx, p, bw)
	} else {
		err = synthetic.WriteZIP(bw, p)
	}
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
		return err
	}
	for i, t := range p.Tables {
		ev := p.Evaluations[i]
		fmt.Fprintf(stdout, "%s: %d rows, utility %.1f, privacy %s\n", t.Name, t.Rows, ev.UtilityScore, ev.PrivacyVerdict)
	}
	fmt.Fprintln(stdout, path)
	return nil
}

// packProgress prints a pack's steps: a line per stage and table off a terminal, the
// same line rewritten on one.
type packProgress struct {
	out io.Writer
	tty bool
}

func newPackProgress(out io.Writer) *packProgress {
	tty := false
	if f, ok := out.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	return &packProgress{out: out, tty: tty}
}

func (p *packProgress) step(s synthetic.Step) {
	line := fmt.Sprintf("%s %d/%d tables (%s)", s.Stage, s.Done, s.Total, s.Table)
	if !p.tty {
		fmt.Fprintln(p.out, line)
		return
	}
	fmt.Fprintf(p.out, "\r\033[K%s", line)
	if s.Stage == "evaluate" && s.Done == s.Total {
		fmt.Fprintln(p.out)
	}
}
