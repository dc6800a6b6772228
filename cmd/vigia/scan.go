package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/connection"
	"github.com/vigia-data/vigia/scan"
)

func connectionCommand(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "connection", Short: "Manage connections to source databases"}
	var ws, name, kind, dsn, country, tz string
	var noTest bool
	var timeout time.Duration
	var aliases []string
	add := &cobra.Command{Use: "add", Short: "Add a connection; prints its id (the DSN is stored encrypted)",
		RunE: func(c *cobra.Command, _ []string) error {
			return withApp(c.Context(), stderr, func(a *app.App) error {
				w, err := a.Identity.Workspace(c.Context(), ws)
				if err != nil {
					return about(fmt.Sprintf("workspace %q", ws), err)
				}
				in := connection.AddInput{Name: name, Kind: kind, DSN: dsn, Test: !noTest, LineageAliases: aliases}
				if timeout > 0 {
					secs := int(timeout.Round(time.Second) / time.Second)
					in.StatementTimeout = &secs
				}
				if country != "" {
					in.DataCountry = &country
				}
				if tz != "" {
					in.ScanTimezone = &tz
				}
				conn, err := a.Connections.Add(app.AsAdmin(c.Context(), w.ID, "cli"), in)
				if err != nil {
					return about(fmt.Sprintf("connection %q", name), err)
				}
				fmt.Fprintln(stdout, conn.ID)
				return nil
			})
		}}
	add.Flags().StringVar(&ws, "workspace", "", "workspace name or id")
	add.Flags().StringVar(&name, "name", "", "connection name")
	add.Flags().StringVar(&kind, "kind", "", "postgres, mysql or sqlite")
	add.Flags().StringVar(&dsn, "dsn", "", "connection string (or file path for sqlite)")
	add.Flags().StringVar(&country, "country", "", "data country (ISO 3166-1 alpha-2); default inherited from the workspace")
	add.Flags().StringVar(&tz, "timezone", "", "IANA zone schedules are read in (default UTC)")
	add.Flags().BoolVar(&noTest, "no-test", false, "save without connecting first")
	add.Flags().DurationVar(&timeout, "statement-timeout", 0, "how long one statement may run on the source (e.g. 2m); default the installation's")
	add.Flags().StringSliceVar(&aliases, "lineage-alias", nil, "another OpenLineage namespace of the server, e.g. postgres://pgbouncer:6432 (repeatable)")
	for _, f := range []string{"workspace", "name", "kind", "dsn"} {
		_ = add.MarkFlagRequired(f)
	}
	var setWS, setConn, setCountry, setTZ, setTimeout string
	var setAliases []string
	set := &cobra.Command{Use: "set", Short: "Change a connection's data country or time zone",
		RunE: func(c *cobra.Command, _ []string) error {
			return withApp(c.Context(), stderr, func(a *app.App) error {
				w, err := a.Identity.Workspace(c.Context(), setWS)
				if err != nil {
					return about(fmt.Sprintf("workspace %q", setWS), err)
				}
				u := connection.Update{}
				switch setCountry {
				case "":
				case "inherit":
					u.ClearDataCountry = true
				default:
					u.DataCountry = &setCountry
				}
				if setTZ != "" {
					u.ScanTimezone = &setTZ
				}
				switch setTimeout {
				case "":
				case "default":
					u.ClearStatementTimeout = true
				default:
					d, err := time.ParseDuration(setTimeout)
					if err != nil {
						return fmt.Errorf("--statement-timeout: a duration such as 90s or 5m, or default")
					}
					secs := int(d.Round(time.Second) / time.Second)
					u.StatementTimeout = &secs
				}
				if c.Flags().Changed("lineage-alias") {
					u.LineageAliases = &setAliases
				}
				conn, err := a.Connections.Update(app.AsAdmin(c.Context(), w.ID, "cli"), setConn, u)
				if err != nil {
					return about(fmt.Sprintf("connection %q", setConn), err)
				}
				fmt.Fprintf(stdout, "%s: data country %s, time zone %s\n", conn.Name, conn.EffectiveCountry(), conn.ScanTimezone)
				return nil
			})
		}}
	set.Flags().StringVar(&setWS, "workspace", "", "workspace name or id")
	set.Flags().StringVar(&setConn, "connection", "", "connection name or id")
	set.Flags().StringVar(&setCountry, "country", "", "ISO 3166-1 alpha-2, or inherit")
	set.Flags().StringVar(&setTZ, "timezone", "", "IANA zone")
	set.Flags().StringVar(&setTimeout, "statement-timeout", "", "a duration such as 5m, or default")
	set.Flags().StringSliceVar(&setAliases, "lineage-alias", nil, "OpenLineage namespaces of the server under other names (replaces the list; --lineage-alias= empties it)")
	_ = set.MarkFlagRequired("workspace")
	_ = set.MarkFlagRequired("connection")
	cmd.AddCommand(add, set)
	return cmd
}

func scanCommand(stdout, stderr io.Writer) *cobra.Command {
	var ws, conn, server string
	var wait bool
	cmd := &cobra.Command{Use: "scan", Short: "Scan a connection; with --wait, follow it and exit non-zero if it fails",
		Long: "Scan a connection. Locally (DATABASE_URL) with --workspace; against a running server with --server URL\n" +
			"(or VIGIA_URL) and an API token in VIGIA_TOKEN, where the token names the workspace.",
		RunE: func(c *cobra.Command, _ []string) error {
			return localOrRemote(c, stderr, ws, server, func() error {
				return remoteScan(c.Context(), server, conn, wait, stdout)
			}, func(ctx context.Context, a *app.App) error {
				sc, err := a.Scans.TriggerScan(ctx, conn, "manual")
				if err != nil {
					return about(fmt.Sprintf("scan of connection %q", conn), err)
				}
				if !wait {
					fmt.Fprintln(stdout, sc.ID)
					return nil
				}
				return followScan(ctx, a, sc.ID, stdout)
			})
		}}
	cmd.Flags().StringVar(&ws, "workspace", "", "workspace name or id (local only; required there)")
	cmd.Flags().StringVar(&conn, "connection", "", "connection name or id")
	cmd.Flags().BoolVar(&wait, "wait", false, "work and follow the scan until it ends")
	serverFlag(cmd, &server)
	_ = cmd.MarkFlagRequired("connection")
	return cmd
}

func followScan(ctx context.Context, a *app.App, scanID string, out io.Writer) error {
	bar := newScanProgress(out)
	sc, err := a.WaitScan(ctx, scanID, func(s scan.Scan) { bar.update("scan", s) })
	bar.finish()
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "scan %s %s: %d datasets profiled, %d failed\n", sc.ID, sc.Status, sc.DatasetsDone, sc.DatasetsFailed)
	printFailures(out, sc)
	return scanExit(sc)
}

// Exit statuses of `vigia scan --wait` (and of `vigia demo` for its scans).
const (
	exitScanFailed       = 3 // the scan itself failed (source unreachable, discovery failed, every dataset failed ...)
	exitDatasetsFailed   = 4 // the scan finished but some datasets could not be profiled
	scanFailureListLimit = 50
)

// printFailures names each dataset the scan could not profile, with its stable code.
func printFailures(out io.Writer, sc scan.Scan) {
	for i, f := range sc.Failures {
		if i == scanFailureListLimit {
			fmt.Fprintf(out, "  ... and %d more (GET /api/v1/scans/%s lists them all)\n", len(sc.Failures)-i, sc.ID)
			break
		}
		fmt.Fprintf(out, "  failed: %s (%s)\n", f.Name, f.Code)
	}
}

// scanExit is the exit status a finished scan gives: 0 when every dataset was profiled.
func scanExit(sc scan.Scan) error {
	if sc.Status != scan.StatusSucceeded {
		code := "unknown"
		if sc.ErrorCode != nil {
			code = *sc.ErrorCode
		}
		return exitError{code: exitScanFailed, msg: "scan failed: " + code}
	}
	if sc.DatasetsFailed > 0 {
		return exitError{code: exitDatasetsFailed, msg: fmt.Sprintf("scan finished: %d datasets could not be profiled", sc.DatasetsFailed)}
	}
	return nil
}

// scanProgress draws a bar per scan on a terminal and plain lines elsewhere.
type scanProgress struct {
	out  io.Writer
	tty  bool
	bar  *progressbar.ProgressBar
	last string
}

func newScanProgress(out io.Writer) *scanProgress {
	tty := false
	if f, ok := out.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	return &scanProgress{out: out, tty: tty}
}

func (p *scanProgress) update(label string, sc scan.Scan) {
	current := ""
	if sc.CurrentDataset != nil {
		current = *sc.CurrentDataset
	}
	if !p.tty {
		line := fmt.Sprintf("%s %s: %s %d/%d %s", label, sc.ID[:8], sc.Status, sc.DatasetsDone, sc.DatasetsTotal, current)
		if line != p.last {
			fmt.Fprintln(p.out, line)
			p.last = line
		}
		return
	}
	if p.bar == nil || p.last != label+sc.ID {
		p.finish()
		p.bar = progressbar.NewOptions(max(sc.DatasetsTotal, 1), progressbar.OptionSetWriter(p.out), progressbar.OptionShowCount(),
			progressbar.OptionSetWidth(30), progressbar.OptionSetPredictTime(true), progressbar.OptionSetRenderBlankState(true))
		p.last = label + sc.ID
	}
	if sc.DatasetsTotal > 0 {
		p.bar.ChangeMax(sc.DatasetsTotal)
	}
	p.bar.Describe(fmt.Sprintf("%s %-32.32s", label, current))
	_ = p.bar.Set(sc.DatasetsDone)
}

func (p *scanProgress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
		fmt.Fprintln(p.out)
		p.bar = nil
	}
}
