package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/confcode"
)

// applyCommand is `vigia apply -f vigia.yaml [--dry-run] [--prune]`: configuration as
// code.
func applyCommand(stdout, stderr io.Writer) *cobra.Command {
	var ws, file string
	var dry, prune bool
	cmd := &cobra.Command{Use: "apply", Short: "Bring a workspace to a configuration file (configuration as code)",
		Long: "Bring a workspace to a vigia.yaml file: connections (DSNs read from the environment variables the file\n" +
			"names), schedules, teams, domains, notification channels, rules and rule packs. The plan (create, update,\n" +
			"delete per object) is printed; --dry-run changes nothing; --prune deletes the managed objects the file no\n" +
			"longer names. Objects the file creates are managed: the API refuses to change them (409 managed_by_config).",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runApply(c.Context(), stdout, stderr, ws, file, confcode.Options{DryRun: dry, Prune: prune})
		}}
	cmd.Flags().StringVar(&ws, "workspace", "", "workspace name or id")
	cmd.Flags().StringVarP(&file, "file", "f", "", "the configuration file (vigia.yaml)")
	cmd.Flags().BoolVar(&dry, "dry-run", false, "print the plan and change nothing")
	cmd.Flags().BoolVar(&prune, "prune", false, "delete managed objects the file no longer names")
	_ = cmd.MarkFlagRequired("workspace")
	_ = cmd.MarkFlagRequired("file")
	return cmd
}

func runApply(ctx context.Context, stdout, stderr io.Writer, ws, path string, opts confcode.Options) error {
	fh, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("cannot read %s", path)
	}
	f, err := confcode.Parse(fh)
	fh.Close()
	if err != nil {
		return about(path, err)
	}
	return withApp(ctx, stderr, func(a *app.App) error {
		w, err := a.Identity.Workspace(ctx, ws)
		if err != nil {
			return about(fmt.Sprintf("workspace %q", ws), err)
		}
		plan, err := a.ConfigAsCode.Apply(app.AsAdmin(ctx, w.ID, "config"), f, os.LookupEnv, opts)
		if err != nil {
			return applyError(path, err)
		}
		printPlan(stdout, plan, opts.DryRun)
		return nil
	})
}

// applyError names the file and the object an error is about; nothing was applied.
func applyError(path string, err error) error {
	var oe *confcode.ObjectError
	if errors.As(err, &oe) {
		return about(path, about(fmt.Sprintf("%s %q", oe.Kind, oe.Name), oe.Err))
	}
	return about(path, err)
}

func printPlan(out io.Writer, plan confcode.Plan, dry bool) {
	for _, c := range plan.Changes {
		fmt.Fprintln(out, c.String())
	}
	switch {
	case plan.Empty():
		fmt.Fprintln(out, "no changes")
	case dry:
		fmt.Fprintf(out, "dry run: %d changes, nothing applied\n", len(plan.Changes))
	default:
		fmt.Fprintf(out, "applied %d changes\n", len(plan.Changes))
	}
}

// exportConfigCommand is `vigia export-config`: the workspace as a configuration file.
func exportConfigCommand(stdout, stderr io.Writer) *cobra.Command {
	var ws, output string
	cmd := &cobra.Command{Use: "export-config", Short: "Write a workspace as a configuration file (secrets never included)",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx := c.Context()
			return withApp(ctx, stderr, func(a *app.App) error {
				w, err := a.Identity.Workspace(ctx, ws)
				if err != nil {
					return about(fmt.Sprintf("workspace %q", ws), err)
				}
				f, err := a.ConfigAsCode.Export(app.AsAdmin(ctx, w.ID, "config"))
				if err != nil {
					return about("export", err)
				}
				out := stdout
				if output != "" {
					fh, err := os.Create(output)
					if err != nil {
						return fmt.Errorf("cannot write %s", output)
					}
					defer fh.Close()
					out = fh
				}
				if err := confcode.Encode(out, f); err != nil {
					return fmt.Errorf("cannot write the configuration")
				}
				return nil
			})
		}}
	cmd.Flags().StringVar(&ws, "workspace", "", "workspace name or id")
	cmd.Flags().StringVarP(&output, "output", "o", "", "write to this file instead of the standard output")
	_ = cmd.MarkFlagRequired("workspace")
	return cmd
}
