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
	"github.com/vigia-data/vigia/bi"
	"github.com/vigia-data/vigia/client"
)

// refreshLine is one BI refresh as `vigia bi refreshes` prints it: no URL (a dashboard
// link may carry a tool's token), only names and counts.
type refreshLine struct {
	ID, Tool, BIDatasetID, BIDatasetName, RefreshID, Status string
	StartedAt                                               time.Time
	EndedAt                                                 *time.Time
	Datasets, Unmatched                                     int
	Dashboards                                              []string
}

func printRefresh(out io.Writer, l refreshLine) {
	ended := "-"
	if l.EndedAt != nil {
		ended = l.EndedAt.UTC().Format(time.RFC3339)
	}
	dash := "-"
	if len(l.Dashboards) > 0 {
		dash = strings.Join(l.Dashboards, ",")
	}
	fmt.Fprintf(out, "%s %s %s %q refresh=%s %s started=%s ended=%s datasets=%d unmatched=%d dashboards=%q\n", l.ID, l.Tool,
		l.BIDatasetID, l.BIDatasetName, l.RefreshID, l.Status, l.StartedAt.UTC().Format(time.RFC3339), ended, l.Datasets, l.Unmatched, dash)
}

func biCommand(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "bi", Short: "The BI refresh feed (Power BI, Tableau, Looker, Metabase dataset refreshes)"}
	var ws, tool, status, biDataset, dataset, server string
	var limit int
	list := &cobra.Command{Use: "refreshes", Short: "List recorded BI refreshes, newest first",
		Long: "List the refreshes BI tools reported (POST /api/v1/bi/refreshes), newest first, with filters. Locally\n" +
			"(DATABASE_URL) with --workspace; against a running server with --server URL (or VIGIA_URL) and an API token\n" +
			"in VIGIA_TOKEN. One line per refresh: id, tool, BI dataset id and name, refresh id, status, times, how many\n" +
			"warehouse datasets it read (and named that matched none) and its dashboards.",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if limit < 1 || limit > vigia.MaxLimit {
				return fmt.Errorf("--limit must be between 1 and %d", vigia.MaxLimit)
			}
			return localOrRemote(c, stderr, ws, server, func() error {
				return remoteRefreshes(c.Context(), server, tool, status, biDataset, dataset, limit, stdout)
			}, func(ctx context.Context, a *app.App) error {
				f := bi.RefreshFilter{Tool: flagValue(tool), Status: flagValue(status), BIDatasetID: flagValue(biDataset),
					Page: vigia.Page{Limit: limit}}
				if dataset != "" {
					id, err := findDataset(ctx, a, dataset)
					if err != nil {
						return about(fmt.Sprintf("dataset %q", dataset), err)
					}
					f.DatasetID = &id
				}
				l, err := a.BI.Refreshes(ctx, f)
				if err != nil {
					return about("bi refreshes", err)
				}
				for _, r := range l.Items {
					line := refreshLine{ID: r.ID, Tool: r.Tool, BIDatasetID: r.BIDatasetID, BIDatasetName: r.BIDatasetName, RefreshID: r.RefreshID,
						Status: r.Status, StartedAt: r.StartedAt, EndedAt: r.EndedAt, Datasets: len(r.Inputs), Unmatched: len(r.Unmatched)}
					for _, d := range r.Dashboards {
						line.Dashboards = append(line.Dashboards, d.Name)
					}
					printRefresh(stdout, line)
				}
				fmt.Fprintf(stderr, "%d of %d refreshes\n", len(l.Items), l.Total)
				return nil
			})
		}}
	list.Flags().StringVar(&ws, "workspace", "", "workspace name or id (local only; required there)")
	list.Flags().StringVar(&tool, "tool", "", "only this tool: "+strings.Join(bi.Tools, ", "))
	list.Flags().StringVar(&status, "status", "", "only this status: "+strings.Join(bi.Statuses, ", "))
	list.Flags().StringVar(&biDataset, "bi-dataset", "", "only this BI dataset (the tool's id)")
	list.Flags().StringVar(&dataset, "dataset", "", "only refreshes of BI datasets reading this dataset (id or schema.table)")
	list.Flags().IntVar(&limit, "limit", bi.RefreshPageDefault, "at most this many refreshes")
	serverFlag(list, &server)
	cmd.AddCommand(list)
	return cmd
}

// flagValue is a filter from a flag: nil when not given.
func flagValue(v string) *string {
	if v == "" {
		return nil
	}
	return &v
}

// remoteRefreshes lists the refreshes the token sees on a running server.
func remoteRefreshes(ctx context.Context, server, tool, status, biDataset, dataset string, limit int, out io.Writer) error {
	c, err := remoteClient(server)
	if err != nil {
		return err
	}
	params := client.ListBIRefreshesParams{BiDatasetId: flagValue(biDataset), Limit: &limit}
	if tool != "" {
		t := client.ListBIRefreshesParamsTool(tool)
		params.Tool = &t
	}
	if status != "" {
		s := client.ListBIRefreshesParamsStatus(status)
		params.Status = &s
	}
	if dataset != "" {
		id, err := remoteDatasetID(ctx, c, dataset)
		if err != nil {
			return err
		}
		params.DatasetId = &id
	}
	r, err := c.ListBIRefreshesWithResponse(ctx, &params)
	if err != nil {
		return err
	}
	if r.JSON200 == nil {
		if r.JSON422 != nil {
			return remoteInvalid("bi refreshes", r.JSON422)
		}
		return remoteError("bi refreshes", r.StatusCode(), firstError(r.JSON401, r.JSON403, r.JSON429))
	}
	for _, x := range *r.JSON200 {
		line := refreshLine{ID: x.Id, Tool: string(x.Tool), BIDatasetID: x.BiDatasetId, BIDatasetName: x.BiDatasetName, RefreshID: x.RefreshId,
			Status: string(x.Status), StartedAt: x.StartedAt, EndedAt: x.EndedAt}
		if x.Datasets != nil {
			line.Datasets = len(*x.Datasets)
		}
		if x.Unmatched != nil {
			line.Unmatched = len(*x.Unmatched)
		}
		if x.Dashboards != nil {
			for _, d := range *x.Dashboards {
				line.Dashboards = append(line.Dashboards, d.Name)
			}
		}
		printRefresh(out, line)
	}
	return nil
}
