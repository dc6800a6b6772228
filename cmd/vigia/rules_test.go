package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/store/storetest"
)

// Must show 5: `vigia rules import --dry-run` on a SodaCL file with one invalid check
// reports it with its line and imports nothing; without --dry-run the valid checks are
// imported, a second run finds them duplicates, and a file that cannot be read imports
// nothing and says at which line. No output repeats what the file holds.
func TestRulesImportDryRunReportsTheInvalidCheckByLine(t *testing.T) {
	t.Setenv("DATABASE_URL", storetest.MustURL(t))
	t.Setenv("VIGIA_SECRET_KEY", "rules-test-key")
	ctx := context.Background()
	var out, errb bytes.Buffer
	ws := mustRunCLI(t, ctx, &out, &errb, "workspace", "create", "cli-rules-"+vigia.NewUUID()[:8])
	pool := storetest.MustDB(t).Pool()
	conn, ds := vigia.NewID(), vigia.NewID()
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO connections (id, workspace_id, name, kind, dsn_encrypted) VALUES ($1, $2, 'loja', 'postgres', '\x00')`, []any{conn, ws}},
		{`INSERT INTO datasets (id, workspace_id, connection_id, schema_name, table_name) VALUES ($1, $2, $3, 'public', 'encomendas')`, []any{ds, ws, conn}},
		{`INSERT INTO dataset_columns (dataset_id, name, position, data_type, class, nullable, primary_key)
			VALUES ($1, 'id', 1, 'integer', 'numeric', false, true), ($1, 'cliente_id', 2, 'integer', 'numeric', true, false),
			       ($1, 'estado', 3, 'text', 'text', true, false)`, []any{ds}},
	} {
		if _, err := pool.Exec(ctx, q.sql, q.args...); err != nil {
			t.Fatal(err)
		}
	}
	rules := func() int {
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM rules WHERE workspace_id = $1`, ws).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "checks.yml")
	const secretColumn = "coluna_que_nao_existe"
	if err := os.WriteFile(file, []byte(`checks for public.encomendas:
  - missing_count(cliente_id) = 0
  - duplicate_count(id) = 0
  - missing_count(`+secretColumn+`) = 0
  - invalid_count(estado) = 0:
      valid values: [aberta, paga]
`), 0o600); err != nil {
		t.Fatal(err)
	}

	t.Run("DryRunReportsTheLineAndImportsNothing", func(t *testing.T) {
		out.Reset()
		errb.Reset()
		code := run(ctx, []string{"rules", "import", "--workspace", ws, "--dry-run", file}, &out, &errb)
		got := out.String()
		if code != exitRulesInvalid || !strings.Contains(got, "line 4: invalid: unknown_column at params.column") ||
			!strings.Contains(got, "line 2: would create not_null on public.encomendas") ||
			!strings.Contains(got, "created 3, duplicates 0, unsupported 0, invalid 1") || !strings.Contains(got, "dry run: nothing was imported") {
			t.Fatalf("exit %d\n%s\n%s", code, got, errb.String())
		}
		if strings.Contains(got+errb.String(), secretColumn) {
			t.Fatalf("the output repeats the file:\n%s%s", got, errb.String())
		}
		if n := rules(); n != 0 {
			t.Fatalf("a dry run created %d rules", n)
		}
	})

	t.Run("ImportCreatesTheValidChecksThenFindsDuplicates", func(t *testing.T) {
		out.Reset()
		if code := run(ctx, []string{"rules", "import", "--workspace", ws, file}, &out, &errb); code != exitRulesInvalid ||
			!strings.Contains(out.String(), "created 3, duplicates 0, unsupported 0, invalid 1") {
			t.Fatalf("exit %d\n%s", code, out.String())
		}
		if n := rules(); n != 3 {
			t.Fatalf("%d rules", n)
		}
		out.Reset()
		if code := run(ctx, []string{"rules", "import", "--workspace", ws, file}, &out, &errb); code != exitRulesInvalid ||
			!strings.Contains(out.String(), "created 0, duplicates 3, unsupported 0, invalid 1") || rules() != 3 {
			t.Fatalf("second import: exit %d\n%s", code, out.String())
		}
	})

	t.Run("UnreadableFileImportsNothingAndSaysWhere", func(t *testing.T) {
		bad := filepath.Join(dir, "bad.yml")
		if err := os.WriteFile(bad, []byte("checks for public.encomendas:\n  - row_count > 0\n  - [nao fechado\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		good := filepath.Join(dir, "good.yml")
		if err := os.WriteFile(good, []byte("checks for public.encomendas:\n  - row_count > 0\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		out.Reset()
		errb.Reset()
		code := run(ctx, []string{"rules", "import", "--workspace", ws, good, bad}, &out, &errb)
		if code == 0 || !strings.Contains(errb.String(), "bad.yml: line 3: cannot be read (yaml_invalid)") || strings.Contains(errb.String(), "fechado") {
			t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
		}
		if n := rules(); n != 3 {
			t.Fatalf("a run with an unreadable file imported: %d rules", n)
		}
	})

	t.Run("ExportWritesTheRules", func(t *testing.T) {
		got := mustRunCLI(t, ctx, &out, &errb, "rules", "export", "--workspace", ws, "--dataset", "public.encomendas", "--format", "sodacl")
		for _, s := range []string{"checks for public.encomendas:", "- missing_count(cliente_id) = 0", "- duplicate_count(id) = 0", "valid values:"} {
			if !strings.Contains(got, s) {
				t.Fatalf("missing %q:\n%s", s, got)
			}
		}
		errb.Reset()
		got = mustRunCLI(t, ctx, &out, &errb, "rules", "export", "--workspace", ws, "--dataset", "public.encomendas", "--format", "gx")
		if !strings.Contains(got, `"expectation_type": "expect_column_values_to_be_in_set"`) || !strings.Contains(errb.String(), "exported 3 rules, 0 unsupported") {
			t.Fatalf("gx:\n%s\n%s", got, errb.String())
		}
	})
}
