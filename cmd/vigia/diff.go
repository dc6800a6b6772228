package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/bench"
	"github.com/vigia-data/vigia/datadiff"
)

// exitDiffDiffers is the exit status of `vigia diff` when the datasets differ.
const exitDiffDiffers = 5

func diffCommand(stdout, stderr io.Writer) *cobra.Command {
	var ws string
	var keys []string
	var budget time.Duration
	var sample int
	cmd := &cobra.Command{Use: "diff DATASET OTHER", Short: "Compare two datasets (ids) row by row on their sources; exit 5 when they differ",
		Args: cobra.ExactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			return withApp(c.Context(), stderr, func(a *app.App) error {
				w, err := a.Identity.Workspace(c.Context(), ws)
				if err != nil {
					return about(fmt.Sprintf("workspace %q", ws), err)
				}
				ctx := app.AsAdmin(c.Context(), w.ID, "cli")
				req := datadiff.Request{KeyColumns: keys, TimeBudget: budget, Sample: sample}
				start := time.Now()
				rep, err := a.Diff.Diff(ctx, args[0], args[1], req, func(stage string, done, total int) {
					fmt.Fprintf(stderr, "%s %d/%d  %v\n", stage, done, total, time.Since(start).Round(time.Millisecond))
				})
				if err != nil {
					return about("diff", err)
				}
				printDiff(stdout, rep)
				if rep.OnlyInA+rep.OnlyInB+rep.Changed > 0 {
					return exitError{code: exitDiffDiffers, msg: "the datasets differ"}
				}
				return nil
			})
		}}
	cmd.Flags().StringVar(&ws, "workspace", "", "workspace name or id")
	cmd.Flags().StringSliceVar(&keys, "key", nil, "key columns (comma-separated); default the primary key when both datasets have the same columns")
	cmd.Flags().DurationVar(&budget, "time-budget", 0, "bound of the whole diff (default 60s, at most 10m)")
	cmd.Flags().IntVar(&sample, "sample", 0, "keys listed per kind of difference (default 20, at most 100)")
	_ = cmd.MarkFlagRequired("workspace")
	return cmd
}

func printDiff(out io.Writer, rep datadiff.Report) {
	fmt.Fprintf(out, "key (%s): %s\n", rep.KeySource, strings.Join(rep.KeyColumns, ", "))
	fmt.Fprintf(out, "rows: %d / %d\n", rep.RowsA, rep.RowsB)
	fmt.Fprintf(out, "only in the first: %d\nonly in the other: %d\nchanged: %d\n", rep.OnlyInA, rep.OnlyInB, rep.Changed)
	for _, c := range rep.Columns {
		if n := rep.ChangedByColumn[c]; n > 0 {
			fmt.Fprintf(out, "  %s: %d\n", c, n)
		}
	}
	for _, s := range []struct {
		label string
		keys  [][]*string
	}{{"only in the first", rep.SampleOnlyInA}, {"only in the other", rep.SampleOnlyInB}, {"changed", rep.SampleChanged}} {
		for _, k := range s.keys {
			parts := make([]string, len(k))
			for i, v := range k {
				parts[i] = "NULL"
				if v != nil {
					parts[i] = *v
				}
			}
			fmt.Fprintf(out, "  %s: %s\n", s.label, strings.Join(parts, ", "))
		}
	}
	m := rep.Method
	fmt.Fprintf(out, "method %s: %d buckets, %d differing, %d statements, %d bytes from the sources, %v\n", m.Name, m.Buckets,
		m.DifferingBuckets, m.Statements, m.BytesTransferred, m.Duration.Round(time.Millisecond))
}

func benchDiffCommand(stdout, stderr io.Writer) *cobra.Command {
	var o bench.DiffOptions
	cmd := &cobra.Command{Use: "diff", Short: "Data diff of two Postgres tables differing in 10 rows, against one full hash aggregate of both",
		RunE: func(c *cobra.Command, _ []string) error {
			rep, err := bench.RunDiff(c.Context(), o, stderr)
			if err != nil {
				return err
			}
			rep.Print(stdout)
			if !rep.Passed() {
				return exitError{code: 4, msg: "some diff targets were not met"}
			}
			return nil
		}}
	cmd.Flags().StringVar(&o.DSN, "dsn", "", "admin Postgres URL (default the local server)")
	cmd.Flags().IntVar(&o.Rows, "rows", bench.DefaultDiffRows, "rows of each table")
	cmd.Flags().BoolVar(&o.Keep, "keep", true, "keep the tables so the next run skips building them")
	return cmd
}
