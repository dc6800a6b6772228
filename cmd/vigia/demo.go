package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/scan"
)

func demoCommand(stdout, stderr io.Writer) *cobra.Command {
	var packs []string
	var dsn, format string
	cmd := &cobra.Command{Use: "demo", Short: "Build demo sources (ERP, e-commerce, payments, health), scan them and print a token",
		RunE: func(c *cobra.Command, _ []string) error {
			cfg, err := loadConfig()
			if err != nil {
				return err
			}
			a, err := openCLIApp(c.Context(), cfg, stderr)
			if err != nil {
				return err
			}
			defer a.DB.Close()
			return runDemo(c.Context(), a, cfg, packs, dsn, format, stdout, false)
		}}
	cmd.Flags().StringSliceVar(&packs, "pack", nil, "erp, ecommerce, payments, health (default all)")
	cmd.Flags().StringVar(&dsn, "dsn", "", "build the packs in this Postgres database instead of SQLite files")
	cmd.Flags().StringVar(&format, "format", "sqlite", "sqlite, or parquet: one Parquet file per table under VIGIA_FILES_ROOT/demo/<pack>, scanned as a duckdb connection demo-<pack>-parquet (a build with DuckDB)")
	return cmd
}

// runDemo seeds the demo and prints the token and what to try.
func runDemo(ctx context.Context, a *app.App, cfg config, packs []string, dsn, format string, out io.Writer, serving bool) error {
	bar := newScanProgress(out)
	res, err := a.SeedDemo(ctx, app.DemoOptions{Packs: packs, Dir: filepath.Join(cfg.SQLiteRoot, "demo"), PostgresDSN: dsn,
		Format: format, FilesDir: app.ParquetDemoDir(cfg.FilesRoot),
		Progress: func(pack string, sc scan.Scan) { bar.update("demo "+pack, sc) }})
	bar.finish()
	if err != nil {
		return about("demo workspace", err)
	}
	base := "http://" + cfg.Addr
	var failed []string
	keys := make([]string, 0, len(res.Scans))
	for k := range res.Scans {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintf(out, "\nDemo workspace ready: %d datasets scanned in %d packs.\n", res.Datasets, len(res.Scans))
	for _, k := range keys {
		sc := res.Scans[k]
		if sc.Status == scan.StatusSucceeded && sc.DatasetsFailed == 0 {
			continue
		}
		failed = append(failed, k)
		fmt.Fprintf(out, "Pack %s: %s\n", k, scanFailureReason(sc, cfg, dsn == ""))
		printFailures(out, sc)
	}
	fmt.Fprintf(out, "API token (shown once): %s\n\n", res.Token)
	if !serving {
		fmt.Fprintf(out, "Start the server with `vigia serve` (or `make demo`), then try:\n")
	}
	fmt.Fprintf(out, "  curl -H 'Authorization: Bearer %s' %s/api/v1/datasets\n", res.Token, base)
	fmt.Fprintf(out, "  curl -H 'Authorization: Bearer %s' %s/api/v1/signals\n", res.Token, base)
	fmt.Fprintf(out, "  GraphQL explorer: %s/graphql#token=%s\n", base, res.Token)
	fmt.Fprintf(out, "  Web app:          %s/ui/#token=%s\n", base, res.Token)
	fmt.Fprintf(out, "  Scan again to see the schema drift planted for the next scan:\n")
	fmt.Fprintf(out, "    vigia scan --workspace demo --connection demo-erp --wait\n")
	if len(failed) > 0 {
		return exitError{code: exitScanFailed, msg: "some demo scans failed: " + strings.Join(failed, ", ")}
	}
	return nil
}

// scanFailureReason says why a demo scan did not profile everything: its stable code,
// and for a SQLite file refused by the SQLite root, the root it had to be under.
func scanFailureReason(sc scan.Scan, cfg config, sqlite bool) string {
	if sc.Status == scan.StatusSucceeded {
		return fmt.Sprintf("%d of %d datasets could not be profiled", sc.DatasetsFailed, sc.DatasetsTotal)
	}
	code := "unknown"
	if sc.ErrorCode != nil {
		code = *sc.ErrorCode
	}
	msg := "scan failed: " + code
	if code == "permission_denied" && sqlite {
		msg += fmt.Sprintf(" (SQLite files must be inside VIGIA_SQLITE_ROOT=%s)", cfg.SQLiteRoot)
	}
	return msg
}
