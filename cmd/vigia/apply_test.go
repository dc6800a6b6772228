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

// `vigia apply` prints the plan, applies it once (the second run says no changes),
// names a missing environment variable without any value, and never prints a DSN;
// `vigia export-config` writes the file back with the DSN named by a variable.
func TestApplyCommand(t *testing.T) {
	t.Setenv("DATABASE_URL", storetest.MustURL(t))
	t.Setenv("VIGIA_SECRET_KEY", "apply-test-key")
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	ctx := context.Background()
	const dsn = "postgres://vigia:cli-s3cret@127.0.0.1:5432/sales?sslmode=disable"
	var out, errb bytes.Buffer
	vigia := func(args ...string) int {
		out.Reset()
		errb.Reset()
		code := run(ctx, args, &out, &errb)
		if strings.Contains(out.String()+errb.String(), "s3cret") {
			t.Fatalf("vigia %v printed the DSN:\n%s\n%s", args, out.String(), errb.String())
		}
		return code
	}
	if code := vigia("workspace", "create", "cfgcli"); code != 0 {
		t.Fatalf("workspace: %d %s", code, errb.String())
	}
	file := filepath.Join(t.TempDir(), "vigia.yaml")
	if err := os.WriteFile(file, []byte("version: 1\nconnections:\n  - name: sales\n    kind: postgres\n    dsn_env: SALES_DSN\n"+
		"teams:\n  - name: Data\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	t.Run("MissingVariableNamed", func(t *testing.T) {
		if code := vigia("apply", "--workspace", "cfgcli", "-f", file); code == 0 || !strings.Contains(errb.String(), "environment variables not set: SALES_DSN") {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
	})
	t.Setenv("SALES_DSN", dsn)
	if code := vigia("apply", "--workspace", "cfgcli", "-f", file, "--dry-run"); code != 0 ||
		out.String() != "create connection \"sales\"\ncreate team \"Data\"\ndry run: 2 changes, nothing applied\n" {
		t.Fatalf("dry run: exit %d\n%s%s", code, out.String(), errb.String())
	}
	if code := vigia("apply", "--workspace", "cfgcli", "-f", file); code != 0 || !strings.HasSuffix(out.String(), "applied 2 changes\n") {
		t.Fatalf("apply: exit %d\n%s%s", code, out.String(), errb.String())
	}
	if code := vigia("apply", "--workspace", "cfgcli", "-f", file); code != 0 || out.String() != "no changes\n" {
		t.Fatalf("second apply: exit %d\n%s%s", code, out.String(), errb.String())
	}
	if code := vigia("export-config", "--workspace", "cfgcli"); code != 0 || !strings.Contains(out.String(), "dsn_env: VIGIA_DSN_SALES") ||
		!strings.Contains(out.String(), "name: Data") {
		t.Fatalf("export: exit %d\n%s%s", code, out.String(), errb.String())
	}
	t.Run("UnknownKeyWithLine", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "bad.yaml")
		if err := os.WriteFile(bad, []byte("version: 1\nteams:\n  - name: Data\n    lead: someone\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if code := vigia("apply", "--workspace", "cfgcli", "-f", bad); code == 0 || !strings.Contains(errb.String(), `line 4: unknown key "lead"`) ||
			strings.Contains(errb.String(), "someone") {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
	})
}
