package app_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A rehearsal asked during a blackout window of the connection is blocked with reason
// blackout and counts nothing; outside it, it runs. Windows: admin only, validated,
// another workspace's connection 404.
func TestRehearsalRespectsBlackoutWindows(t *testing.T) {
	e := newWF(t, "blackout")
	src := newSource(t, "postgres", e.root)
	src.exec(t, `CREATE TABLE contactos (id integer PRIMARY KEY, telefone text)`)
	var rows []string
	for i := 1; i <= 30; i++ {
		s := fmt.Sprint(912000000 + i*7)
		tel := s
		if i%2 == 0 {
			tel = "+351 " + s[:3] + " " + s[3:6] + " " + s[6:]
		}
		rows = append(rows, fmt.Sprintf("(%d, '%s')", i, tel))
	}
	src.exec(t, "INSERT INTO contactos VALUES "+strings.Join(rows, ", "))
	conn := e.connect(t, "crm", "postgres", src.dsn)
	e.scan(t, conn)
	ds := e.dataset(t, conn, "contactos")
	sg := findSuggestion(e.suggestions(t, "?category=parsing&dataset_id="+ds), "parse_standardize:telefone")
	if sg == nil {
		t.Fatal("no parsing suggestion")
	}
	path := "/api/v1/connections/" + conn + "/blackouts"
	now := time.Now().UTC()
	window := map[string]any{"windows": []any{map[string]any{"starts_at": now.Add(-time.Hour).Format(time.RFC3339),
		"ends_at": now.Add(time.Hour).Format(time.RFC3339), "note": "fecho do mês"}}}
	if r := e.Do(t, http.MethodPut, path, e.member, window); r.Status != 403 {
		t.Fatalf("member: %d", r.Status)
	}
	bad := map[string]any{"windows": []any{map[string]any{"starts_at": now.Format(time.RFC3339), "ends_at": now.Add(-time.Hour).Format(time.RFC3339)}}}
	if r := e.Do(t, http.MethodPut, path, e.admin, bad); r.Status != 422 {
		t.Fatalf("ends before it starts: %d %s", r.Status, r.Body)
	}
	if r := e.Do(t, http.MethodPut, path, e.admin, window); r.Status != 200 {
		t.Fatalf("put: %d %s", r.Status, r.Body)
	}
	list, total := e.list(t, path, e.tok)
	if len(list) != 1 || total != "1" || list[0]["note"] != "fecho do mês" {
		t.Fatalf("windows %v %s", list, total)
	}
	other := newWF(t, "blackout-other")
	if r := other.Do(t, http.MethodGet, path, other.admin, nil); r.Status != 404 {
		t.Fatalf("another workspace: %d", r.Status)
	}

	rehearse := func() suggestionOut {
		r := e.Do(t, http.MethodPost, "/api/v1/suggestions/"+sg.ID+"/rehearsal", e.member, nil)
		if r.Status != 200 {
			t.Fatalf("rehearsal: %d %s", r.Status, r.Body)
		}
		var out suggestionOut
		r.JSON(t, &out)
		return out
	}
	got := rehearse()
	if h := got.Rehearsal; h == nil || h.Status != "blocked" || h.Reason == nil || h.Reason.Code != "blackout" || h.AffectedRows != nil ||
		h.Reason.Message == "" {
		t.Fatalf("during the blackout: %+v", got.Rehearsal)
	}
	// The window over, the rehearsal counts.
	if r := e.Do(t, http.MethodPut, path, e.admin, map[string]any{"windows": []any{}}); r.Status != 200 {
		t.Fatalf("clear: %d", r.Status)
	}
	if h := rehearse().Rehearsal; h == nil || h.Status != "ok" || h.AffectedRows == nil || *h.AffectedRows != 15 {
		t.Fatalf("after the blackout: %+v", h)
	}
}
