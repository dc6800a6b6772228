package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/client"
)

// datasetPage is how many datasets one request asks for (the contract's largest limit).
const datasetPage = 500

// datasetLine prints one dataset as `vigia datasets` does.
func datasetLine(out io.Writer, id, name, connection string, score *float64) {
	s := "-"
	if score != nil {
		s = fmt.Sprintf("%.1f", *score)
	}
	fmt.Fprintf(out, "%s %s %s score=%s\n", id, name, connection, s)
}

func datasetsCommand(stdout, stderr io.Writer) *cobra.Command {
	var ws, conn, q, server string
	cmd := &cobra.Command{Use: "datasets", Short: "List the datasets one can see: id, schema.table, connection, latest score",
		Long: "List datasets. Locally (DATABASE_URL) with --workspace; against a running server with --server URL\n" +
			"(or VIGIA_URL) and an API token in VIGIA_TOKEN, which sees what the token sees.",
		RunE: func(c *cobra.Command, _ []string) error {
			return localOrRemote(c, stderr, ws, server, func() error {
				return remoteDatasets(c.Context(), server, conn, q, stdout)
			}, func(ctx context.Context, a *app.App) error {
				f := catalog.DatasetFilter{Sort: catalog.SortName}
				if conn != "" {
					cn, err := a.Connections.Connection(ctx, conn)
					if err != nil {
						return about(fmt.Sprintf("connection %q", conn), err)
					}
					f.ConnectionID = &cn.ID
				}
				if q != "" {
					f.Q = &q
				}
				for offset := 0; ; offset += datasetPage {
					f.Page = vigia.Page{Limit: datasetPage, Offset: offset}
					res, err := a.Catalog.FindDatasets(ctx, f)
					if err != nil {
						return about("datasets", err)
					}
					for _, d := range res.Items {
						datasetLine(stdout, d.ID, d.Name(), d.ConnectionName, d.LatestScore)
					}
					if len(res.Items) < datasetPage {
						return nil
					}
				}
			})
		}}
	cmd.Flags().StringVar(&ws, "workspace", "", "workspace name or id (local only; required there)")
	cmd.Flags().StringVar(&conn, "connection", "", "only this connection's datasets (name or id)")
	cmd.Flags().StringVar(&q, "q", "", "search in schema, table and name")
	serverFlag(cmd, &server)
	return cmd
}

// remoteDatasets lists the datasets the token sees on a running server, page by page.
func remoteDatasets(ctx context.Context, server, conn, q string, out io.Writer) error {
	c, err := remoteClient(server)
	if err != nil {
		return err
	}
	params := client.ListDatasetsParams{}
	if conn != "" {
		id, err := remoteConnectionID(ctx, c, conn)
		if err != nil {
			return err
		}
		params.ConnectionId = &id
	}
	if q != "" {
		params.Q = &q
	}
	limit := datasetPage
	params.Limit = &limit
	for offset := 0; ; offset += datasetPage {
		params.Offset = &offset
		r, err := c.ListDatasetsWithResponse(ctx, &params)
		if err != nil {
			return err
		}
		if r.JSON200 == nil {
			if r.JSON422 != nil {
				return remoteInvalid("datasets", r.JSON422)
			}
			return remoteError("datasets", r.StatusCode(), firstError(r.JSON401, r.JSON403, r.JSON429))
		}
		for _, d := range *r.JSON200 {
			datasetLine(out, d.Id, d.Name, d.ConnectionName, d.LatestScore)
		}
		if len(*r.JSON200) < datasetPage {
			return nil
		}
	}
}
