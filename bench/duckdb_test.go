package bench

import (
	"context"
	"errors"
	"testing"

	"github.com/vigia-data/vigia/source"
	"github.com/vigia-data/vigia/source/connect"
)

// TestDuckDBProfileWithoutEngine: a build without the DuckDB connector answers ErrNoDuckDB
// before touching Postgres or the bench directory.
func TestDuckDBProfileWithoutEngine(t *testing.T) {
	if _, ok := connect.Registered()[source.DuckDB]; ok && parquetWriter {
		t.Skip("this test binary has DuckDB")
	}
	dir := t.TempDir() + "/never"
	_, err := RunDuckDBProfile(context.Background(), DuckDBProfileOptions{DSN: "postgres://nobody@127.0.0.1:1/x", Dir: dir}, nil)
	if !errors.Is(err, ErrNoDuckDB) {
		t.Fatalf("err %v, want ErrNoDuckDB", err)
	}
}

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{"1GB": 1e9, "256MB": 256e6, "512MiB": 512 << 20, "1.5 GiB": 3 << 29} {
		if got, err := parseBytes(in); err != nil || got != want {
			t.Errorf("%s: %d %v, want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "GB", "-1GB", "1 parsec"} {
		if _, err := parseBytes(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}
