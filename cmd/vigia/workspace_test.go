package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/vigia-data/vigia/store/storetest"
)

// `vigia workspace set NAME --plan` changes the plan; on free a token is refused with
// the plan_limit code, on team it is created; an unknown plan is refused.
func TestWorkspaceSetPlan(t *testing.T) {
	t.Setenv("DATABASE_URL", storetest.MustURL(t))
	t.Setenv("VIGIA_SECRET_KEY", "plan-test-key")
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	t.Setenv("LANG", "en_GB.UTF-8")
	ctx := context.Background()
	cli := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(ctx, args, &out, &errb)
		return code, out.String(), errb.String()
	}
	if code, _, e := cli("workspace", "create", "planos"); code != 0 {
		t.Fatalf("create: %d %s", code, e)
	}
	if code, out, e := cli("workspace", "set", "planos", "--plan", "free"); code != 0 || !strings.Contains(out, "plan=free") {
		t.Fatalf("set free: %d %q %s", code, out, e)
	}
	code, out, e := cli("token", "create", "--workspace", "planos")
	if code == 0 || strings.Contains(out, "svc_") || !strings.Contains(e, "plan_limit") {
		t.Fatalf("token on free: %d %q %q", code, out, e)
	}
	if code, out, e := cli("workspace", "set", "planos", "--plan", "team"); code != 0 || !strings.Contains(out, "plan=team") {
		t.Fatalf("set team: %d %q %s", code, out, e)
	}
	if code, out, e := cli("token", "create", "--workspace", "planos"); code != 0 || !strings.Contains(out, "svc_") {
		t.Fatalf("token on team: %d %q %s", code, out, e)
	}
	if code, _, e := cli("workspace", "set", "planos", "--plan", "gold"); code == 0 || strings.Contains(e, "gold") {
		t.Fatalf("unknown plan: %d %s", code, e)
	}
}
