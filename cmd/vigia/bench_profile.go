package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/vigia-data/vigia/bench"
)

// profileBenchCommand is `vigia bench profile`: the standard-depth profile of a
// 5,000,000-row, 20-column Postgres table against count(*), one hand-written aggregate and
// the per-column pattern, with the approximate distinct counts checked against the truth.
func profileBenchCommand(stdout, stderr io.Writer) *cobra.Command {
	var o bench.ProfileOptions
	cmd := &cobra.Command{Use: "profile", Short: "Profiling cost against count(*), a hand-written aggregate and per-column queries",
		RunE: func(c *cobra.Command, _ []string) error {
			rep, err := bench.RunProfile(c.Context(), o, stderr)
			if err != nil {
				return err
			}
			rep.Print(stdout)
			if !rep.Passed() {
				return exitError{code: 4, msg: "some profiling targets were not met"}
			}
			return nil
		}}
	cmd.Flags().StringVar(&o.DSN, "dsn", "", "admin Postgres URL (default the local server)")
	cmd.Flags().IntVar(&o.Rows, "rows", 5_000_000, "rows of the benchmark table")
	cmd.Flags().IntVar(&o.Runs, "runs", 3, "timed rounds (medians are reported)")
	cmd.Flags().BoolVar(&o.Keep, "keep", true, "keep the table so the next run skips building it")
	return cmd
}
