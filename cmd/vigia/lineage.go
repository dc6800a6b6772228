package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/ingest"
	"github.com/vigia-data/vigia/lineage"
)

// graphCommand is `vigia graph rebuild`: re-project the lineage and knowledge graph
// from the record into the configured backend.
func graphCommand(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "graph", Short: "The lineage and knowledge graph"}
	var ws string
	var restart bool
	rebuild := &cobra.Command{Use: "rebuild", Short: "Re-project the lineage/knowledge graph from Postgres into the graph backend",
		Long: `Re-project the lineage/knowledge graph from Postgres into the graph backend.

The record is written back in steps of ` + fmt.Sprint(lineage.RebuildBatch) + ` rows, each saved as it lands: a rebuild that
stops (an error, Ctrl-C) resumes after its last saved step when run again. --restart
starts it from zero instead.`,
		RunE: func(c *cobra.Command, _ []string) error {
			return withApp(c.Context(), stderr, func(a *app.App) error {
				bar := newRebuildProgress(stderr)
				defer bar.finish()
				opts := lineage.RebuildOptions{Restart: restart, Progress: bar.update}
				if ws != "" {
					w, err := a.Identity.Workspace(c.Context(), ws)
					if err != nil {
						return about(fmt.Sprintf("workspace %q", ws), err)
					}
					if err := a.Lineage.RebuildWorkspace(c.Context(), w.ID, opts); err != nil {
						return about(fmt.Sprintf("graph of workspace %q", ws), err)
					}
					bar.finish()
					fmt.Fprintln(stdout, "rebuilt 1 workspace")
					return nil
				}
				n, err := a.Lineage.Rebuild(c.Context(), opts)
				if err != nil {
					return err
				}
				bar.finish()
				fmt.Fprintf(stdout, "rebuilt %d workspaces\n", n)
				return nil
			})
		}}
	rebuild.Flags().StringVar(&ws, "workspace", "", "only this workspace (name or id); default all")
	rebuild.Flags().BoolVar(&restart, "restart", false, "discard an unfinished rebuild's progress and start from zero")
	cmd.AddCommand(rebuild)
	return cmd
}

// lineageCommand holds the lineage imports: dbt manifests and declaration files.
func lineageCommand(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "lineage", Short: "Import and declare lineage"}
	var ws string
	var replace bool
	importDBT := &cobra.Command{Use: "import-dbt MANIFEST.json", Short: "Import dbt lineage (depends_on, column lineage, exposures) from a manifest",
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return runImport(c.Context(), stdout, stderr, ws, args[0], func(ctx context.Context, a *app.App, b []byte) (lineage.ImportResult, error) {
				// The permission first: a manifest the caller may not import is not parsed.
				if err := a.Lineage.MayImportDBT(ctx); err != nil {
					return lineage.ImportResult{}, err
				}
				m, err := ingest.DecodeDBTManifest(b)
				if err != nil {
					return lineage.ImportResult{}, err
				}
				return a.Lineage.ImportDBTManifest(ctx, m, lineage.ImportOptions{Replace: replace})
			})
		}}
	importDBT.Flags().StringVar(&ws, "workspace", "", "workspace name or id")
	importDBT.Flags().BoolVar(&replace, "replace", false, "replace the project's lineage even when the manifest matches nothing or far less of it")
	_ = importDBT.MarkFlagRequired("workspace")
	var declWS string
	declare := &cobra.Command{Use: "declare FILE.yaml", Short: "Replace the declared edges and exposures with a YAML file",
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return runImport(c.Context(), stdout, stderr, declWS, args[0], func(ctx context.Context, a *app.App, b []byte) (lineage.ImportResult, error) {
				if err := a.Lineage.MayDeclare(ctx); err != nil {
					return lineage.ImportResult{}, err
				}
				f, err := ingest.DecodeDeclarations(b)
				if err != nil {
					return lineage.ImportResult{}, err
				}
				return a.Lineage.LoadDeclarations(ctx, f)
			})
		}}
	declare.Flags().StringVar(&declWS, "workspace", "", "workspace name or id")
	_ = declare.MarkFlagRequired("workspace")
	cmd.AddCommand(importDBT, declare)
	return cmd
}

// printUnmatched lists the names an import matched to no dataset.
func printUnmatched(out io.Writer, total any, names []string) {
	if len(names) == 0 {
		return
	}
	fmt.Fprintf(out, "unmatched (%v):\n", total)
	for _, n := range names {
		fmt.Fprintf(out, "  %s\n", n)
	}
}

func runImport(ctx context.Context, stdout, stderr io.Writer, ws, path string,
	fn func(ctx context.Context, a *app.App, b []byte) (lineage.ImportResult, error)) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("cannot read %s", path)
	}
	return withApp(ctx, stderr, func(a *app.App) error {
		w, err := a.Identity.Workspace(ctx, ws)
		if err != nil {
			return about(fmt.Sprintf("workspace %q", ws), err)
		}
		res, err := fn(app.AsAdmin(ctx, w.ID, "cli"), a, b)
		var ve *vigia.Error
		if errors.As(err, &ve) && ve.Code == lineage.CodeDBTImportWouldErase {
			fmt.Fprintf(stdout, "refused: the manifest gives %v of the project's %v edges and exposures; nothing changed (--replace replaces anyway)\n",
				ve.Params["matched"], ve.Params["current"])
			if names, _ := ve.Detail["unmatched_names"].([]string); len(names) > 0 {
				printUnmatched(stdout, ve.Params["unmatched"], names)
			}
			return exitError{code: 1, msg: lineage.CodeDBTImportWouldErase}
		}
		if err != nil {
			return about(path, err)
		}
		fmt.Fprintf(stdout, "edges %d, exposures %d, destinations %d, unmatched %d\n", res.Edges, res.Exposures, res.Destinations, res.Unmatched)
		if res.Replaced {
			fmt.Fprintln(stdout, "replaced the project's previous lineage (--replace)")
		}
		printUnmatched(stdout, res.Unmatched, res.UnmatchedNames)
		return nil
	})
}

// rebuildProgress draws a bar per workspace rebuild on a terminal, and elsewhere a
// line at each phase and every rebuildProgressEvery steps.
type rebuildProgress struct {
	out  io.Writer
	tty  bool
	bar  *progressbar.ProgressBar
	ws   string
	last lineage.RebuildPhase
}

const rebuildProgressEvery = 20

func newRebuildProgress(out io.Writer) *rebuildProgress {
	tty := false
	if f, ok := out.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	return &rebuildProgress{out: out, tty: tty}
}

func (p *rebuildProgress) update(st lineage.RebuildState, c lineage.RecordCounts) {
	total := c.Datasets + c.Exposures + c.Edges
	done := min(st.NodesWritten+st.EdgesWritten, total)
	label := "graph " + st.WorkspaceID[:min(8, len(st.WorkspaceID))]
	if !p.tty {
		if st.Phase != p.last || st.WorkspaceID != p.ws || st.Batches%rebuildProgressEvery == 0 {
			fmt.Fprintf(p.out, "%s: %s, %d/%d rows written\n", label, st.Phase, done, total)
		}
		p.ws, p.last = st.WorkspaceID, st.Phase
		return
	}
	if p.bar == nil || p.ws != st.WorkspaceID {
		p.finish()
		p.bar = progressbar.NewOptions64(max(total, 1), progressbar.OptionSetWriter(p.out), progressbar.OptionShowCount(),
			progressbar.OptionSetWidth(30), progressbar.OptionSetPredictTime(true), progressbar.OptionSetRenderBlankState(true))
		p.ws = st.WorkspaceID
	}
	p.bar.Describe(fmt.Sprintf("%s %-9s", label, st.Phase))
	_ = p.bar.Set64(done)
}

func (p *rebuildProgress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
		fmt.Fprintln(p.out)
		p.bar = nil
	}
}
