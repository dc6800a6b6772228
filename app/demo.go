package app

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/connection"
	"github.com/vigia-data/vigia/demo"
	"github.com/vigia-data/vigia/scan"
	"github.com/vigia-data/vigia/source"
)

// DemoOptions says which demo to build.
type DemoOptions struct {
	Workspace string   // default "demo"
	Packs     []string // default every pack
	// Dir holds the SQLite files of the packs (it must be inside the SQLite root).
	Dir string
	// PostgresDSN, when set, builds the packs in that Postgres database instead.
	PostgresDSN string
	// Format "parquet" writes each pack as Parquet files, one per table, in
	// FilesDir/<pack> (FilesDir must be inside the files root), and adds it as a duckdb
	// connection demo-<pack>-parquet; it needs a build with the duckdb connector. ""
	// or "sqlite" is the SQLite file.
	Format   string
	FilesDir string
	// Progress receives each scan's progress.
	Progress func(pack string, sc scan.Scan)
}

// DemoResult is what a demo built.
type DemoResult struct {
	WorkspaceID string
	Token       string
	Scans       map[string]scan.Scan
	Datasets    int
}

// demoSeed makes the demo data the same on every machine.
const demoSeed = 20261121

// SeedDemo builds the demo packs as sources, adds them as connections of the demo
// workspace, scans each once and prints nothing: it returns a fresh API token. A pack
// built for the first time is then changed so that the next scan finds schema drift.
func (a *App) SeedDemo(ctx context.Context, o DemoOptions) (DemoResult, error) {
	if o.Workspace == "" {
		o.Workspace = "demo"
	}
	if len(o.Packs) == 0 {
		o.Packs = demo.Keys()
	}
	res := DemoResult{Scans: map[string]scan.Scan{}}
	w, err := a.Identity.Workspace(ctx, o.Workspace)
	if vigia.IsKind(err, vigia.KindNotFound) {
		w, err = a.Identity.CreateWorkspace(ctx, o.Workspace, "PT")
	}
	if err != nil {
		return res, err
	}
	res.WorkspaceID = w.ID
	actx := AsAdmin(ctx, w.ID, "demo")
	for _, key := range o.Packs {
		if _, ok := demo.PackByKey(key); !ok {
			return res, vigia.Invalid(vigia.Field("enum", nil, "pack"))
		}
		kind, dsn, fresh, err := a.buildPack(ctx, o, key)
		if err != nil {
			return res, err
		}
		name := "demo-" + key
		if kind == string(source.DuckDB) {
			name = connection.ParquetPresetKey(key)
		}
		c, err := a.Connections.Connection(actx, name)
		if vigia.IsKind(err, vigia.KindNotFound) {
			c, err = a.Connections.Add(actx, connection.AddInput{Name: name, Kind: kind, DSN: dsn, Test: true})
		}
		if err != nil {
			return res, err
		}
		sc, err := a.Scans.TriggerScan(actx, c.ID, "demo")
		if err != nil {
			return res, err
		}
		sc, err = a.WaitScan(actx, sc.ID, func(s scan.Scan) {
			if o.Progress != nil {
				o.Progress(key, s)
			}
		})
		if err != nil {
			return res, err
		}
		res.Scans[key] = sc
		res.Datasets += sc.DatasetsDone
		if fresh && kind != string(source.DuckDB) {
			if err := a.mutatePack(ctx, o, kind, dsn, key); err != nil {
				return res, err
			}
		}
	}
	_, res.Token, err = a.Identity.CreateAPIToken(ctx, w.ID, "demo", "demo", nil)
	return res, err
}

// buildPack builds a pack's source when it does not exist yet.
func (a *App) buildPack(ctx context.Context, o DemoOptions, key string) (kind, dsn string, fresh bool, err error) {
	switch {
	case o.Format == "parquet" && o.PostgresDSN != "":
		return "", "", false, vigia.Invalid(vigia.Field("enum", nil, "format"))
	case o.Format == "parquet":
		return a.buildParquetPack(ctx, o, key)
	case o.Format != "" && o.Format != "sqlite":
		return "", "", false, vigia.Invalid(vigia.Field("enum", nil, "format"))
	}
	if o.PostgresDSN != "" {
		db, err := sql.Open("pgx", o.PostgresDSN)
		if err != nil {
			return "", "", false, vigia.Internal(fmt.Errorf("demo: open postgres"))
		}
		defer db.Close()
		if err := demo.Build(ctx, db, "postgres", key, demoSeed, 1); err != nil {
			return "", "", false, err
		}
		return "postgres", o.PostgresDSN, true, nil
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return "", "", false, vigia.Internal(err)
	}
	path := filepath.Join(o.Dir, "demo-"+key+".db")
	if _, err := os.Stat(path); err == nil {
		return "sqlite", path, false, nil
	}
	tmp := path + ".building"
	_ = os.Remove(tmp)
	db, err := sql.Open("sqlite", tmp)
	if err != nil {
		return "", "", false, vigia.Internal(err)
	}
	err = demo.Build(ctx, db, "sqlite", key, demoSeed, 1)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(tmp)
		return "", "", false, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", "", false, vigia.Internal(err)
	}
	return "sqlite", path, true, nil
}

func (a *App) mutatePack(ctx context.Context, o DemoOptions, kind, dsn, key string) error {
	driver := "sqlite"
	if kind == "postgres" {
		driver = "pgx"
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return vigia.Internal(fmt.Errorf("demo: open source for the next-scan change"))
	}
	defer db.Close()
	return demo.Mutate(ctx, db, kind, key)
}

// ParquetDemoDir is where the demo packs as Parquet files go under the files root (one
// directory per pack): what /connections/presets offers and `vigia demo --format parquet`
// writes.
func ParquetDemoDir(filesRoot string) string { return filepath.Join(filesRoot, "demo") }

// writeParquetPack writes each table of a demo pack's SQLite file as dir/<table>.parquet;
// nil in a build without the duckdb connector (app/demo_parquet_duckdb.go sets it).
var writeParquetPack func(ctx context.Context, sqliteFile, dir string) error

// buildParquetPack writes a pack as Parquet files in FilesDir/<pack>, from its SQLite
// file in Dir (built first when missing), unless the directory exists already.
func (a *App) buildParquetPack(ctx context.Context, o DemoOptions, key string) (kind, dsn string, fresh bool, err error) {
	if writeParquetPack == nil {
		return "", "", false, vigia.Invalid(vigia.Field("enum", nil, "format")) // not in a build without DuckDB
	}
	if o.FilesDir == "" {
		return "", "", false, vigia.Invalid(vigia.Field("missing", nil, "files_dir"))
	}
	dir := connection.ParquetDemoDir(o.FilesDir, key)
	if _, err := os.Stat(dir); err == nil {
		return string(source.DuckDB), dir, false, nil
	}
	sq := o
	sq.Format = ""
	_, sqliteFile, _, err := a.buildPack(ctx, sq, key)
	if err != nil {
		return "", "", false, err
	}
	if err := os.MkdirAll(o.FilesDir, 0o755); err != nil {
		return "", "", false, vigia.Internal(err)
	}
	tmp := dir + ".building"
	_ = os.RemoveAll(tmp)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return "", "", false, vigia.Internal(err)
	}
	if err := writeParquetPack(ctx, sqliteFile, tmp); err != nil {
		_ = os.RemoveAll(tmp)
		return "", "", false, err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return "", "", false, vigia.Internal(err)
	}
	return string(source.DuckDB), dir, true, nil
}
