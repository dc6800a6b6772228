package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/client"
	"github.com/vigia-data/vigia/orchestrator"
)

// runLine is one orchestrator run as `vigia orchestrator runs` and `report` print it.
type runLine struct {
	ID, Orchestrator, Pipeline, RunID, Status string
	StartedAt                                 time.Time
	EndedAt                                   *time.Time
	Inputs, Outputs, Unmatched                int
}

func printRun(out io.Writer, l runLine) {
	ended := "-"
	if l.EndedAt != nil {
		ended = l.EndedAt.UTC().Format(time.RFC3339)
	}
	fmt.Fprintf(out, "%s %s %s run=%s %s started=%s ended=%s inputs=%d outputs=%d unmatched=%d\n", l.ID, l.Orchestrator, l.Pipeline,
		l.RunID, l.Status, l.StartedAt.UTC().Format(time.RFC3339), ended, l.Inputs, l.Outputs, l.Unmatched)
}

func lineOfRun(r orchestrator.Run) runLine {
	return runLine{ID: r.ID, Orchestrator: r.Orchestrator, Pipeline: r.Pipeline, RunID: r.RunID, Status: r.Status, StartedAt: r.StartedAt,
		EndedAt: r.EndedAt, Inputs: len(r.Inputs), Outputs: len(r.Outputs), Unmatched: len(r.Unmatched)}
}

func lineOfClientRun(r client.OrchestratorRunOut) runLine {
	l := runLine{ID: r.Id, Orchestrator: r.Orchestrator, Pipeline: r.Pipeline, RunID: r.RunId, Status: string(r.Status), StartedAt: r.StartedAt,
		EndedAt: r.EndedAt}
	for _, c := range []struct {
		n  *int
		xs *[]string
	}{{&l.Inputs, r.Inputs}, {&l.Outputs, r.Outputs}, {&l.Unmatched, r.Unmatched}} {
		if c.xs != nil {
			*c.n = len(*c.xs)
		}
	}
	return l
}

// runReport is what `vigia orchestrator report` sends: datasets by id or schema.table.
type runReport struct {
	orchestrator, pipeline, runID, status, started, ended string
	inputs, outputs                                       []string
}

// times parses the report's RFC 3339 times.
func (r runReport) times() (*time.Time, *time.Time, error) {
	parse := func(flag, v string) (*time.Time, error) {
		if v == "" {
			return nil, nil
		}
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return nil, fmt.Errorf("--%s: want an RFC 3339 time such as 2026-11-25T06:00:00Z", flag)
		}
		return &t, nil
	}
	s, err := parse("started-at", r.started)
	if err != nil {
		return nil, nil, err
	}
	e, err := parse("ended-at", r.ended)
	return s, e, err
}

func orchestratorCommand(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "orchestrator", Short: "Pipeline runs reported by orchestrators (Airflow, Dagster, Prefect, dbt …)"}
	var ws, server, orch, pipeline, status, dataset string
	var limit int
	list := &cobra.Command{Use: "runs", Short: "List reported runs, newest first",
		Long: "List the runs orchestrators reported (POST /api/v1/orchestrator-runs), newest first, with filters. Locally\n" +
			"(DATABASE_URL) with --workspace; against a running server with --server URL (or VIGIA_URL) and an API token in\n" +
			"VIGIA_TOKEN.",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if limit < 1 || limit > vigia.MaxLimit {
				return fmt.Errorf("--limit must be between 1 and %d", vigia.MaxLimit)
			}
			return localOrRemote(c, stderr, ws, server, func() error {
				return remoteRuns(c.Context(), server, orch, pipeline, status, dataset, limit, stdout)
			}, func(ctx context.Context, a *app.App) error {
				f := orchestrator.RunFilter{Orchestrator: flagValue(orch), Pipeline: flagValue(pipeline), Status: flagValue(status),
					Page: vigia.Page{Limit: limit}}
				if dataset != "" {
					id, err := findDataset(ctx, a, dataset)
					if err != nil {
						return about(fmt.Sprintf("dataset %q", dataset), err)
					}
					f.DatasetID = &id
				}
				l, err := a.Orchestrators.Runs(ctx, f)
				if err != nil {
					return about("orchestrator runs", err)
				}
				for _, r := range l.Items {
					printRun(stdout, lineOfRun(r))
				}
				fmt.Fprintf(stderr, "%d of %d runs\n", len(l.Items), l.Total)
				return nil
			})
		}}
	list.Flags().StringVar(&ws, "workspace", "", "workspace name or id (local only; required there)")
	list.Flags().StringVar(&orch, "orchestrator", "", "only this orchestrator")
	list.Flags().StringVar(&pipeline, "pipeline", "", "only this pipeline")
	list.Flags().StringVar(&status, "status", "", "only this status: "+strings.Join(orchestrator.Statuses, ", "))
	list.Flags().StringVar(&dataset, "dataset", "", "only runs that read or wrote this dataset (id or schema.table)")
	list.Flags().IntVar(&limit, "limit", 100, "at most this many runs")
	serverFlag(list, &server)

	var rws, rserver string
	var rep runReport
	report := &cobra.Command{Use: "report", Short: "Report a run (a marked write: an API token may make it)",
		Long: "Record one run of a pipeline with the datasets it read (--input) and wrote (--output), by id or schema.table;\n" +
			"a later report of the same orchestrator, pipeline and run id replaces it (START then COMPLETE). A failing or\n" +
			"late writer becomes a signal and, past its threshold, a pipeline issue of the datasets it wrote. Locally with\n" +
			"--workspace, or against a running server with --server URL (or VIGIA_URL) and VIGIA_TOKEN. Prints the run.",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			started, ended, err := rep.times()
			if err != nil {
				return err
			}
			return localOrRemote(c, stderr, rws, rserver, func() error {
				return remoteReport(c.Context(), rserver, rep, started, ended, stdout, stderr)
			}, func(ctx context.Context, a *app.App) error {
				in := orchestrator.RunInput{Orchestrator: rep.orchestrator, Pipeline: rep.pipeline, RunID: rep.runID, Status: rep.status,
					StartedAt: started, EndedAt: ended}
				for _, side := range []struct {
					refs []string
					into *[]orchestrator.DatasetRef
				}{{rep.inputs, &in.Inputs}, {rep.outputs, &in.Outputs}} {
					for _, ref := range side.refs {
						id, err := findDataset(ctx, a, ref)
						if err != nil {
							return about(fmt.Sprintf("dataset %q", ref), err)
						}
						*side.into = append(*side.into, orchestrator.DatasetRef{DatasetID: id})
					}
				}
				r, created, err := a.Orchestrators.RecordRun(ctx, in)
				if err != nil {
					return about("run", err)
				}
				printRun(stdout, lineOfRun(r))
				fmt.Fprintln(stderr, recordedWord(created))
				return nil
			})
		}}
	report.Flags().StringVar(&rws, "workspace", "", "workspace name or id (local only; required there)")
	report.Flags().StringVar(&rep.orchestrator, "orchestrator", "", "airflow, dagster, prefect, dbt or any lower-case name")
	report.Flags().StringVar(&rep.pipeline, "pipeline", "", "the pipeline, DAG or job")
	report.Flags().StringVar(&rep.runID, "run-id", "", "the orchestrator's run id")
	report.Flags().StringVar(&rep.status, "status", "", strings.Join(orchestrator.Statuses, ", "))
	report.Flags().StringVar(&rep.started, "started-at", "", "RFC 3339 start")
	report.Flags().StringVar(&rep.ended, "ended-at", "", "RFC 3339 end (not before the start)")
	report.Flags().StringArrayVar(&rep.inputs, "input", nil, "a dataset the run read (id or schema.table; repeatable)")
	report.Flags().StringArrayVar(&rep.outputs, "output", nil, "a dataset the run wrote (id or schema.table; repeatable)")
	serverFlag(report, &rserver)
	cmd.AddCommand(list, report)
	return cmd
}

func recordedWord(created bool) string {
	if created {
		return "recorded"
	}
	return "replaced the earlier report of this run"
}

// remoteRuns lists the runs the token sees on a running server.
func remoteRuns(ctx context.Context, server, orch, pipeline, status, dataset string, limit int, out io.Writer) error {
	c, err := remoteClient(server)
	if err != nil {
		return err
	}
	params := client.ListOrchestratorRunsParams{Orchestrator: flagValue(orch), Pipeline: flagValue(pipeline), Limit: &limit}
	if status != "" {
		s := client.ListOrchestratorRunsParamsStatus(status)
		params.Status = &s
	}
	if dataset != "" {
		id, err := remoteDatasetID(ctx, c, dataset)
		if err != nil {
			return err
		}
		params.DatasetId = &id
	}
	r, err := c.ListOrchestratorRunsWithResponse(ctx, &params)
	if err != nil {
		return err
	}
	if r.JSON200 == nil {
		if r.JSON422 != nil {
			return remoteInvalid("orchestrator runs", r.JSON422)
		}
		return remoteError("orchestrator runs", r.StatusCode(), firstError(r.JSON401, r.JSON403, r.JSON429))
	}
	for _, x := range *r.JSON200 {
		printRun(out, lineOfClientRun(x))
	}
	return nil
}

// remoteReport records a run on a running server (POST /orchestrator-runs).
func remoteReport(ctx context.Context, server string, rep runReport, started, ended *time.Time, out, info io.Writer) error {
	c, err := remoteClient(server)
	if err != nil {
		return err
	}
	body := client.OrchestratorRunIn{Orchestrator: rep.orchestrator, Pipeline: rep.pipeline, RunId: rep.runID,
		Status: client.OrchestratorRunInStatus(rep.status), StartedAt: started, EndedAt: ended}
	for _, side := range []struct {
		refs []string
		into **[]client.RunDatasetIn
	}{{rep.inputs, &body.Inputs}, {rep.outputs, &body.Outputs}} {
		if len(side.refs) == 0 {
			continue
		}
		list := make([]client.RunDatasetIn, 0, len(side.refs))
		for _, ref := range side.refs {
			id, err := remoteDatasetID(ctx, c, ref)
			if err != nil {
				return err
			}
			list = append(list, client.RunDatasetIn{DatasetId: &id})
		}
		*side.into = &list
	}
	r, err := c.RecordOrchestratorRunWithResponse(ctx, body)
	if err != nil {
		return err
	}
	got, created := r.JSON201, true
	if got == nil {
		got, created = r.JSON200, false
	}
	if got == nil {
		if r.JSON422 != nil {
			return remoteInvalid("run", r.JSON422)
		}
		return remoteError("run", r.StatusCode(), firstError(r.JSON401, r.JSON403, r.JSON404, r.JSON413, r.JSON429))
	}
	printRun(out, lineOfClientRun(*got))
	fmt.Fprintln(info, recordedWord(created))
	return nil
}
