package main

import (
	"errors"
	"io"

	"github.com/spf13/cobra"

	"github.com/vigia-data/vigia/bench"
)

// profileBenchCommand is `vigia bench profile`: the standard-depth profile of a
// 5,000,000-row, 20-column Postgres table against count(*), one hand-written aggregate and
// the per-column pattern, with the approximate distinct counts checked against the truth.
func profileBenchCommand(stdout, stderr io.Writer) *cobra.Command {
	var o bench.ProfileOptions
	var engine, dir, memoryLimit string
	var threads int
	cmd := &cobra.Command{Use: "profile", Short: "Profiling cost against count(*), a hand-written aggregate and per-column queries",
		RunE: func(c *cobra.Command, _ []string) error {
			switch engine {
			case "postgres":
			case "duckdb":
				return runDuckDBProfileBench(c, bench.DuckDBProfileOptions{DSN: o.DSN, Database: o.Database, Rows: o.Rows, Runs: o.Runs, Keep: o.Keep,
					Dir: dir, MemoryLimit: memoryLimit, Threads: threads}, stdout, stderr)
			default:
				return exitError{code: 2, msg: "--engine must be postgres or duckdb"}
			}
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
	cmd.Flags().StringVar(&o.Database, "database", bench.DefaultProfileDatabase, "dedicated Postgres database of the benchmark table")
	cmd.Flags().IntVar(&o.Rows, "rows", 5_000_000, "rows of the benchmark table")
	cmd.Flags().IntVar(&o.Runs, "runs", 3, "timed rounds (medians are reported)")
	cmd.Flags().BoolVar(&o.Keep, "keep", true, "keep the table so the next run skips building it")
	cmd.Flags().StringVar(&engine, "engine", "postgres", "engine profiled: postgres, or duckdb (the table as a Parquet file, against Postgres on the same rows)")
	cmd.Flags().StringVar(&dir, "dir", bench.DefaultDuckDBDir(), "with --engine duckdb: the bench directory keeping the Parquet file")
	cmd.Flags().StringVar(&memoryLimit, "memory-limit", "", "with --engine duckdb: the DuckDB session's memory_limit (default the connector's, 1GB)")
	cmd.Flags().IntVar(&threads, "threads", 0, "with --engine duckdb: the DuckDB session's threads (default the connector's, 2)")
	return cmd
}

// runDuckDBProfileBench is `vigia bench profile --engine duckdb`, through the duckdb
// connector this binary registered (built with the duckdb tag, as `make build` does).
func runDuckDBProfileBench(c *cobra.Command, o bench.DuckDBProfileOptions, stdout, stderr io.Writer) error {
	rep, err := bench.RunDuckDBProfile(c.Context(), o, stderr)
	if errors.Is(err, bench.ErrNoDuckDB) {
		return exitError{code: 2, msg: "this build of vigia has no DuckDB: build it with -tags duckdb (make build)"}
	}
	if err != nil {
		return err
	}
	rep.Print(stdout)
	if !rep.Passed() {
		return exitError{code: 4, msg: "some profiling targets were not met"}
	}
	return nil
}
