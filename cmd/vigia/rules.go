package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/rule"
	"github.com/vigia-data/vigia/rule/rulefile"
)

// exitRulesInvalid is the exit status of an import with invalid checks (the others were
// imported, or on --dry-run would be).
const exitRulesInvalid = 3

// rulesCommand is `vigia rules export|import`: rules as code, in dbt, SodaCL or Great
// Expectations files a team keeps in its repository and CI.
func rulesCommand(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "rules", Short: "Rules as code: export and import dbt, SodaCL and Great Expectations files"}
	var ws, dataset, format, output string
	export := &cobra.Command{Use: "export", Short: "Write the active rules of a workspace or one dataset as a file",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return withApp(c.Context(), stderr, func(a *app.App) error {
				w, err := a.Identity.Workspace(c.Context(), ws)
				if err != nil {
					return about(fmt.Sprintf("workspace %q", ws), err)
				}
				ctx := app.AsAdmin(c.Context(), w.ID, "cli")
				var id *string
				if dataset != "" {
					d, err := findDataset(ctx, a, dataset)
					if err != nil {
						return about(fmt.Sprintf("dataset %q", dataset), err)
					}
					id = &d
				}
				exp, err := a.Rules.ExportRules(ctx, id, format)
				if err != nil {
					return about("export", err)
				}
				out := stdout
				if output != "" {
					f, err := os.Create(output)
					if err != nil {
						return fmt.Errorf("cannot write %s", output)
					}
					defer f.Close()
					out = f
				}
				if _, err := out.Write(exp.Body); err != nil {
					return fmt.Errorf("cannot write the export")
				}
				fmt.Fprintf(stderr, "exported %d rules, %d unsupported", exp.Exported, len(exp.Unsupported))
				if types := exp.UnsupportedTypes(); len(types) > 0 {
					fmt.Fprintf(stderr, " (%s)", strings.Join(types, ", "))
				}
				fmt.Fprintln(stderr)
				return nil
			})
		}}
	export.Flags().StringVar(&ws, "workspace", "", "workspace name or id")
	export.Flags().StringVar(&dataset, "dataset", "", "only this dataset (id or schema.table)")
	export.Flags().StringVar(&format, "format", rulefile.FormatSodaCL, "dbt, sodacl or gx (gx needs --dataset)")
	export.Flags().StringVarP(&output, "output", "o", "", "write to this file instead of the standard output")
	_ = export.MarkFlagRequired("workspace")

	var iws, iformat, iconn string
	var dry bool
	imp := &cobra.Command{Use: "import FILE...", Short: "Create rules from SodaCL, Great Expectations or dbt files (--dry-run shows what would happen)",
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return runRulesImport(c.Context(), stdout, stderr, iws, iformat, iconn, dry, args)
		}}
	imp.Flags().StringVar(&iws, "workspace", "", "workspace name or id")
	imp.Flags().StringVar(&iformat, "format", "", "dbt, sodacl or gx; default: detected per file")
	imp.Flags().StringVar(&iconn, "connection", "", "resolve table names among this connection's datasets (name or id)")
	imp.Flags().BoolVar(&dry, "dry-run", false, "show the result of every check and import nothing")
	_ = imp.MarkFlagRequired("workspace")
	cmd.AddCommand(export, imp)
	return cmd
}

// findDataset resolves a dataset by id or schema.table among the workspace's.
func findDataset(ctx context.Context, a *app.App, ref string) (string, error) {
	if vigia.ValidID(ref) {
		d, err := a.Catalog.Dataset(ctx, ref)
		return d.ID, err
	}
	for offset := 0; ; offset += vigia.MaxLimit {
		page, err := a.Catalog.FindDatasets(ctx, catalog.DatasetFilter{Page: vigia.Page{Limit: vigia.MaxLimit, Offset: offset}})
		if err != nil {
			return "", err
		}
		for _, d := range page.Items {
			if d.Schema+"."+d.Table == ref || d.Schema == "" && d.Table == ref {
				return d.ID, nil
			}
		}
		if len(page.Items) < vigia.MaxLimit {
			return "", vigia.NotFound()
		}
	}
}

// runRulesImport imports files one by one, each in its own transaction, after reading
// every one of them first: a file that cannot be read stops the command before anything
// is imported.
func runRulesImport(ctx context.Context, stdout, stderr io.Writer, ws, format, conn string, dry bool, paths []string) error {
	bodies := make([][]byte, len(paths))
	for i, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("cannot read %s", p)
		}
		bodies[i] = b
	}
	return withApp(ctx, stderr, func(a *app.App) error {
		w, err := a.Identity.Workspace(ctx, ws)
		if err != nil {
			return about(fmt.Sprintf("workspace %q", ws), err)
		}
		actx := app.AsAdmin(ctx, w.ID, "cli")
		var connID *string
		if conn != "" {
			cn, err := a.Connections.Connection(actx, conn)
			if err != nil {
				return about(fmt.Sprintf("connection %q", conn), err)
			}
			connID = &cn.ID
		}
		// Read every file first (a dry run changes nothing): one that cannot be read
		// stops the command with nothing imported.
		results := make([]rule.ImportResult, len(paths))
		for i, b := range bodies {
			res, err := a.Rules.ImportRules(actx, rule.ImportInput{Body: b, Format: format, ConnectionID: connID, DryRun: true})
			if err != nil {
				return about(paths[i], fileError(err))
			}
			results[i] = res
		}
		invalid := 0
		for i, b := range bodies {
			res := results[i]
			if !dry {
				if res, err = a.Rules.ImportRules(actx, rule.ImportInput{Body: b, Format: format, ConnectionID: connID}); err != nil {
					return about(paths[i], fileError(err))
				}
			}
			printImport(stdout, paths[i], res)
			invalid += res.Invalid
		}
		if dry {
			fmt.Fprintln(stdout, "dry run: nothing was imported")
		}
		if invalid > 0 {
			return exitError{code: exitRulesInvalid, msg: fmt.Sprintf("%d invalid checks", invalid)}
		}
		return nil
	})
}

// fileError says in words why a file cannot be read, with the line where reading
// stopped; the file's content is never repeated.
func fileError(err error) error {
	var ve *vigia.Error
	if !errors.As(err, &ve) || ve.Kind != vigia.KindInvalid || len(ve.Fields) != 1 {
		return err
	}
	f := ve.Fields[0]
	if len(f.Loc) == 2 && f.Loc[0] == "line" {
		return fmt.Errorf("line %s: cannot be read (%s)", f.Loc[1], f.Type)
	}
	if f.Type == "rules_file_unknown" || f.Type == "rules_format_unknown" || f.Type == "yaml_invalid" || f.Type == "json_invalid" {
		return fmt.Errorf("cannot be read (%s)", f.Type)
	}
	return err
}

// printImport writes one line per check and a summary: where the check is, what
// became of it, and why; never the check's text.
func printImport(out io.Writer, path string, res rule.ImportResult) {
	fmt.Fprintf(out, "%s (%s):\n", path, res.Format)
	for _, it := range res.Items {
		where := fmt.Sprintf("check %d", it.Index+1)
		if it.Line > 0 {
			where = fmt.Sprintf("line %d", it.Line)
		}
		if it.Path != "" {
			where += " (" + it.Path + ")"
		}
		what := it.Result
		switch it.Result {
		case rule.ImportCreated:
			what = fmt.Sprintf("%s %s on %s", map[bool]string{true: "would create", false: "created"}[res.DryRun], it.RuleType, it.DatasetName)
			if it.RuleID != "" {
				what += " (rule " + it.RuleID + ")"
			}
		case rule.ImportDuplicate:
			what = fmt.Sprintf("duplicate: %s on %s", it.RuleType, it.DatasetName)
			if it.DuplicateOf != "" {
				what += " is rule " + it.DuplicateOf
			} else if it.DuplicateOfItem != nil {
				what += fmt.Sprintf(" repeats check %d", *it.DuplicateOfItem+1)
			}
		case rule.ImportUnsupported:
			what = "unsupported: " + it.Code
		case rule.ImportInvalid:
			what = "invalid: " + it.Code
			if len(it.Loc) > 0 {
				what += " at " + strings.Join(it.Loc, ".")
			}
		}
		fmt.Fprintf(out, "  %s: %s\n", where, what)
	}
	fmt.Fprintf(out, "  created %d, duplicates %d, unsupported %d, invalid %d\n", res.Created, res.Duplicates, res.Unsupported, res.Invalid)
}
