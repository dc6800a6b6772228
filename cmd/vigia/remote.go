package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/client"
	"github.com/vigia-data/vigia/scan"
)

// Remote mode: the commands an API token may run (scans so far) also work against a
// running server through the generated client, with --server URL (or VIGIA_URL) and the
// token in VIGIA_TOKEN, instead of against a local DATABASE_URL.

// serverFlag adds --server to cmd, defaulting to $VIGIA_URL.
func serverFlag(cmd *cobra.Command, server *string) {
	cmd.Flags().StringVar(server, "server", os.Getenv("VIGIA_URL"),
		"a running Vigia's base URL (default $VIGIA_URL); the API token is read from $VIGIA_TOKEN")
}

// remoteClient is the generated client for server with the token of VIGIA_TOKEN.
func remoteClient(server string) (*client.ClientWithResponses, error) {
	u, err := url.Parse(server)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--server / VIGIA_URL: want an http or https URL such as https://vigia.example.com")
	}
	token := strings.TrimSpace(os.Getenv("VIGIA_TOKEN"))
	if token == "" {
		return nil, fmt.Errorf("VIGIA_TOKEN is not set: a remote command needs an API token (vigia token create)")
	}
	return client.NewClientWithResponses(strings.TrimSuffix(server, "/"),
		client.WithHTTPClient(&http.Client{Timeout: 60 * time.Second}), client.WithRequestEditorFn(client.BearerToken(token)))
}

// remoteError says what a server refused: the operation, the status and the stable code.
func remoteError(what string, status int, e *client.Error) error {
	code := ""
	if e != nil && e.Code != nil {
		code = " (" + *e.Code + ")"
	}
	return fmt.Errorf("%s: the server answered %d %s%s", what, status, http.StatusText(status), code)
}

// remoteInvalid says which fields a server refused (422), by location and type.
func remoteInvalid(what string, v *client.ValidationError) error {
	parts := make([]string, 0, len(v.Detail))
	for _, item := range v.Detail {
		loc := ""
		if item.Loc != nil {
			loc = strings.Join(*item.Loc, ".")
		}
		parts = append(parts, loc+": "+item.Type)
	}
	return fmt.Errorf("%s: the server refused the request (%s): %s", what, v.Code, strings.Join(parts, "; "))
}

// remoteConnectionID finds a connection the token can see by name or id.
func remoteConnectionID(ctx context.Context, c *client.ClientWithResponses, nameOrID string) (string, error) {
	r, err := c.ListConnectionsWithResponse(ctx)
	if err != nil {
		return "", err
	}
	if r.JSON200 == nil {
		return "", remoteError("list connections", r.StatusCode(), firstError(r.JSON401, r.JSON403, r.JSON429))
	}
	for _, conn := range *r.JSON200 {
		if conn.Id == nameOrID || conn.Name == nameOrID {
			return conn.Id, nil
		}
	}
	return "", fmt.Errorf("connection %q: not found on the server", nameOrID)
}

func firstError(errs ...*client.Error) *client.Error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// remoteScan triggers a scan on the server; with wait it follows the scan until it ends
// and exits as the local `vigia scan --wait` does.
func remoteScan(ctx context.Context, server, conn string, wait bool, out io.Writer) error {
	c, err := remoteClient(server)
	if err != nil {
		return err
	}
	id, err := remoteConnectionID(ctx, c, conn)
	if err != nil {
		return err
	}
	r, err := c.TriggerScanWithResponse(ctx, client.ScanIn{ConnectionId: id})
	if err != nil {
		return err
	}
	if r.JSON202 == nil {
		if r.JSON422 != nil {
			return remoteInvalid(fmt.Sprintf("scan of connection %q", conn), r.JSON422)
		}
		return remoteError(fmt.Sprintf("scan of connection %q", conn), r.StatusCode(), firstError(r.JSON401, r.JSON403, r.JSON404, r.JSON429))
	}
	if !wait {
		fmt.Fprintln(out, r.JSON202.Id)
		return nil
	}
	bar := newScanProgress(out)
	for {
		g, err := c.GetScanWithResponse(ctx, r.JSON202.Id)
		if err != nil {
			bar.finish()
			return err
		}
		if g.JSON200 == nil {
			bar.finish()
			return remoteError("scan "+r.JSON202.Id, g.StatusCode(), firstError(g.JSON401, g.JSON403, g.JSON404, g.JSON429))
		}
		sc := scanFromClient(g.JSON200)
		bar.update("scan", sc)
		if sc.Finished() {
			bar.finish()
			fmt.Fprintf(out, "scan %s %s: %d datasets profiled, %d failed\n", sc.ID, sc.Status, sc.DatasetsDone, sc.DatasetsFailed)
			printFailures(out, sc)
			return scanExit(sc)
		}
		select {
		case <-ctx.Done():
			bar.finish()
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// scanFromClient is the scan as the local command prints it.
func scanFromClient(s *client.ScanDetailOut) scan.Scan {
	sc := scan.Scan{ID: s.Id, ConnectionID: s.ConnectionId, ConnectionName: s.ConnectionName, Status: string(s.Status),
		Trigger: s.Trigger, Attempt: int(s.Attempt), DatasetsTotal: int(s.DatasetsTotal), DatasetsDone: int(s.DatasetsDone),
		DatasetsFailed: int(s.DatasetsFailed), CurrentDataset: s.CurrentDataset, ErrorCode: s.ErrorCode, CreatedAt: s.CreatedAt,
		StartedAt: s.StartedAt, FinishedAt: s.FinishedAt}
	if s.Failures != nil {
		for _, f := range *s.Failures {
			sc.Failures = append(sc.Failures, scan.Failure{DatasetID: f.DatasetId, Name: f.Name, Code: f.Code, At: f.FailedAt})
		}
	}
	return sc
}

// remoteDatasetID finds a dataset the token can see by id or by schema.table.
func remoteDatasetID(ctx context.Context, c *client.ClientWithResponses, ref string) (string, error) {
	if g, err := c.GetDatasetWithResponse(ctx, ref); err == nil && g.JSON200 != nil {
		return g.JSON200.Id, nil
	}
	limit := datasetPage
	r, err := c.ListDatasetsWithResponse(ctx, &client.ListDatasetsParams{Q: &ref, Limit: &limit})
	if err != nil {
		return "", err
	}
	if r.JSON200 == nil {
		return "", remoteError("datasets", r.StatusCode(), firstError(r.JSON401, r.JSON403, r.JSON429))
	}
	var found []string
	for _, d := range *r.JSON200 {
		if d.Name == ref {
			found = append(found, d.Id)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return "", fmt.Errorf("dataset %q: not found on the server", ref)
	}
	return "", fmt.Errorf("dataset %q: %d datasets have that name on the server; give its id", ref, len(found))
}

// remoteRulesExport writes the server's export of the active rules (a workspace's, or
// one dataset's) to out and says on info what the X-Rules-* headers count.
func remoteRulesExport(ctx context.Context, server, dataset, format string, out, info io.Writer) error {
	c, err := remoteClient(server)
	if err != nil {
		return err
	}
	var (
		status int
		body   []byte
		header http.Header
	)
	if dataset != "" {
		id, err := remoteDatasetID(ctx, c, dataset)
		if err != nil {
			return err
		}
		r, err := c.ExportDatasetRulesWithResponse(ctx, id, &client.ExportDatasetRulesParams{Format: client.ExportDatasetRulesParamsFormat(format)})
		if err != nil {
			return err
		}
		if r.JSON422 != nil {
			return remoteInvalid("export", r.JSON422)
		}
		status, body, header = r.StatusCode(), r.Body, r.HTTPResponse.Header
		if status != http.StatusOK {
			return remoteError("export", status, firstError(r.JSON401, r.JSON403, r.JSON404, r.JSON429))
		}
	} else {
		f := client.ExportRulesParamsFormat(format)
		r, err := c.ExportRulesWithResponse(ctx, &client.ExportRulesParams{Format: &f})
		if err != nil {
			return err
		}
		if r.JSON422 != nil {
			return remoteInvalid("export", r.JSON422)
		}
		status, body, header = r.StatusCode(), r.Body, r.HTTPResponse.Header
		if status != http.StatusOK {
			return remoteError("export", status, firstError(r.JSON401, r.JSON403, r.JSON429))
		}
	}
	if _, err := out.Write(body); err != nil {
		return fmt.Errorf("cannot write the export")
	}
	fmt.Fprintf(info, "exported %s rules, %s unsupported", header.Get("X-Rules-Exported"), header.Get("X-Rules-Unsupported"))
	if types := header.Get("X-Rules-Unsupported-Types"); types != "" {
		fmt.Fprintf(info, " (%s)", types)
	}
	fmt.Fprintln(info)
	return nil
}

// localOrRemote runs a command that works both ways: remote against --server (the API
// token names the workspace, so --workspace is refused), else local as an admin of
// the workspace --workspace names in the local database.
func localOrRemote(c *cobra.Command, stderr io.Writer, ws, server string, remote func() error,
	local func(ctx context.Context, a *app.App) error) error {
	if server != "" {
		if c.Flags().Changed("workspace") {
			return fmt.Errorf("--workspace is for a local database; against --server the API token names the workspace")
		}
		return remote()
	}
	if ws == "" {
		return fmt.Errorf(`required flag(s) "workspace" not set`)
	}
	return withApp(c.Context(), stderr, func(a *app.App) error {
		w, err := a.Identity.Workspace(c.Context(), ws)
		if err != nil {
			return about(fmt.Sprintf("workspace %q", ws), err)
		}
		return local(app.AsAdmin(c.Context(), w.ID, "cli"), a)
	})
}
