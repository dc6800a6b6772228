package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigia-data/vigia/store/storetest"
)

func TestFXLoadReadsARatesFile(t *testing.T) {
	t.Setenv("DATABASE_URL", storetest.MustURL(t))
	t.Setenv("VIGIA_SECRET_KEY", "fx-test-key")
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	t.Setenv("LANG", "en_GB.UTF-8")
	dir := t.TempDir()
	good := filepath.Join(dir, "rates.csv")
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(good, []byte("currency,date,per_eur\nUSD,2026-10-31,1.0832\nGBP,2026-10-31,0.8421\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("USD,2026-10-31,1.08\nZZZ_SECRET,2026-10-31,1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cli := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(context.Background(), args, &out, &errb)
		return code, out.String(), errb.String()
	}
	if code, out, e := cli("fx", "load", good); code != 0 || !strings.Contains(out, "2 rates loaded") {
		t.Fatalf("load: %d %q %s", code, out, e)
	}
	if code, out, e := cli("fx", "load", bad); code == 0 || strings.Contains(e, "ZZZ_SECRET") || strings.Contains(out, "loaded") {
		t.Fatalf("bad file: %d %q %q", code, out, e)
	}
}
