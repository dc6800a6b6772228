package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

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
	rebuild := &cobra.Command{Use: "rebuild", Short: "Re-project the lineage/knowledge graph from Postgres into the graph backend",
		RunE: func(c *cobra.Command, _ []string) error {
			return withApp(c.Context(), stderr, func(a *app.App) error {
				if ws != "" {
					w, err := a.Identity.Workspace(c.Context(), ws)
					if err != nil {
						return about(fmt.Sprintf("workspace %q", ws), err)
					}
					if err := a.Lineage.RebuildWorkspace(c.Context(), w.ID); err != nil {
						return about(fmt.Sprintf("graph of workspace %q", ws), err)
					}
					fmt.Fprintln(stdout, "rebuilt 1 workspace")
					return nil
				}
				n, err := a.Lineage.Rebuild(c.Context())
				if err != nil {
					return err
				}
				fmt.Fprintf(stdout, "rebuilt %d workspaces\n", n)
				return nil
			})
		}}
	rebuild.Flags().StringVar(&ws, "workspace", "", "only this workspace (name or id); default all")
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
