package connection_test

import (
	"path/filepath"
	"testing"

	"github.com/vigia-data/vigia/connection"
	"github.com/vigia-data/vigia/source"
)

// drivers is a connection.Sources that only answers which optional connectors it links.
type drivers struct {
	connection.Sources
	linked map[source.Kind]string
}

func (d drivers) Drivers() map[source.Kind]string { return d.linked }

// The demo packs as Parquet files are a preset of kind duckdb only when the build links
// the duckdb connector and a files root is set; their DSN template is the directory
// `vigia demo --format parquet` writes, usable as a duckdb DSN as is.
func TestPresetsOfferParquetDemosOnlyWithDuckDB(t *testing.T) {
	packs := []connection.DemoPack{{Key: "erp", Name: "ERP", Description: "Faturas."}, {Key: "health", Name: "Saúde"}}
	dir := filepath.Join(t.TempDir(), "demo")
	for _, c := range []struct {
		name   string
		linked map[source.Kind]string
		dir    string
		duck   int
	}{
		{"withoutDuckDB", map[source.Kind]string{}, dir, 0},
		{"withoutFilesRoot", map[source.Kind]string{source.DuckDB: "duckdb-go"}, "", 0},
		{"withDuckDB", map[source.Kind]string{source.DuckDB: "duckdb-go"}, dir, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := connection.NewService(nil, nil, drivers{linked: c.linked}, nil, packs)
			if c.dir != "" {
				s.OfferParquetDemos(c.dir)
			}
			var sqlite, duck []connection.Preset
			for _, p := range s.Presets() {
				switch p.Kind {
				case "sqlite":
					sqlite = append(sqlite, p)
				case string(source.DuckDB):
					duck = append(duck, p)
				default:
					t.Fatalf("preset kind %q", p.Kind)
				}
			}
			if len(sqlite) != 2 || len(duck) != c.duck {
				t.Fatalf("presets: %d sqlite, %d duckdb; want 2, %d", len(sqlite), len(duck), c.duck)
			}
			for i, p := range duck {
				if want := filepath.Join(dir, packs[i].Key); p.DSNTemplate != want || p.Key != "demo-"+packs[i].Key+"-parquet" {
					t.Fatalf("preset %+v, want DSN %s", p, want)
				}
			}
		})
	}
}
