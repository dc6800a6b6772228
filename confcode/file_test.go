package confcode_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/vigia-data/vigia/confcode"
)

func TestParseRefusesWithLines(t *testing.T) {
	cases := []struct {
		name, file string
		want       []string
		secret     string
	}{
		{"UnknownKey", "version: 1\nchannels:\n  - name: a\n    webhook_url_env: A\n    colour: blue\n", []string{`line 5: unknown key "colour"`}, "blue"},
		{"UnknownSection", "version: 1\npolicies: []\n", []string{`line 2: unknown key "policies"`}, ""},
		{"WrongTypeWithoutItsValue", "version: 1\nconnections:\n  - name: w\n    kind: postgres\n    dsn_env: W\n    statement_timeout_s: abc-secret\n",
			[]string{"line 6: a value of the wrong type"}, "abc-secret"},
		{"URLInTheFile", "version: 1\nchannels:\n  - name: ops\n    webhook_url: https://hooks.example.com/t0ken\n    webhook_url_env: OPS\n",
			[]string{`line 3: channel "ops": a webhook URL never goes in the file`}, "t0ken"},
		{"DuplicateNames", "version: 1\nteams:\n  - name: A\n  - name: A\n", []string{`line 4: teams: the name "A" appears twice`}, ""},
		{"EveryProblemListed", "version: 2\nteams:\n  - members: [a@b.pt]\nconnections:\n  - name: w\n    dsn_env: 'not a name'\n",
			[]string{"line 1: version must be 1", "line 3: teams item without a name", `line 5: connection "w": dsn_env must name an environment variable`,
				`line 5: connection "w": kind is required`}, ""},
		{"PackScope", "version: 1\nrule_packs:\n  - pack: p\n", []string{"line 3: rule_packs: pack and exactly one of connection or dataset are required"}, ""},
		{"TwoDocuments", "version: 1\n---\nversion: 1\n", []string{"more than one YAML document"}, ""},
		{"NotYAML", "version: [1\n", []string{"not valid YAML"}, ""},
		{"Empty", "", []string{"the file is empty"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := confcode.Parse(strings.NewReader(c.file))
			if err == nil {
				t.Fatal("accepted")
			}
			var fe *confcode.FileError
			if !errors.As(err, &fe) {
				t.Fatalf("not a FileError: %v", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q does not say %q", err, w)
				}
			}
			if c.secret != "" && strings.Contains(err.Error(), c.secret) {
				t.Fatalf("error repeats a value: %v", err)
			}
		})
	}
}

func TestEncodeParsesBack(t *testing.T) {
	in := "version: 1\nconnections:\n  - name: w\n    kind: postgres\n    dsn_env: W_DSN\n    schedule: {enabled: true, hour: 2}\n" +
		"domains:\n  - name: D\n    sla: {retention_days: 30, dimension_targets: {completude: 90}}\n"
	f, err := confcode.Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := confcode.Encode(&b, f); err != nil {
		t.Fatal(err)
	}
	g, err := confcode.Parse(strings.NewReader(b.String()))
	if err != nil {
		t.Fatalf("the encoded file does not parse: %v\n%s", err, b.String())
	}
	if g.Connections[0].DSNEnv != "W_DSN" || *g.Connections[0].Schedule.Hour != 2 || *g.Domains[0].SLA.RetentionDays != 30 ||
		g.Domains[0].SLA.DimensionTargets["completude"] != 90 {
		t.Fatalf("round trip lost fields:\n%s", b.String())
	}
}

func TestEnvName(t *testing.T) {
	for in, want := range map[string]string{"warehouse": "VIGIA_DSN_WAREHOUSE", "Sales DB (eu)": "VIGIA_DSN_SALES_DB_EU", "***": "VIGIA_DSN_X"} {
		if got := confcode.EnvName(confcode.DSNEnvPrefix, in); got != want {
			t.Fatalf("EnvName(%q) = %q, want %q", in, got, want)
		}
	}
}
