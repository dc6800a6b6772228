package app_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/vigia-data/vigia"
)

type suggestionOut struct {
	ID          string         `json:"id"`
	DatasetID   string         `json:"dataset_id"`
	Category    string         `json:"category"`
	Signature   string         `json:"signature"`
	Status      string         `json:"status"`
	Params      map[string]any `json:"params"`
	AIGenerated *bool          `json:"ai_generated"`
	AIModel     *string        `json:"ai_model"`
	Rehearsal   *struct {
		Version      int      `json:"version"`
		Status       string   `json:"status"`
		AffectedRows *int64   `json:"affected_rows"`
		TotalRows    *int64   `json:"total_rows"`
		Pct          *float64 `json:"pct"`
		Actor        string   `json:"actor"`
		Reason       *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"reason"`
	} `json:"rehearsal"`
	Impact struct {
		EstimatedRows       *int64  `json:"estimated_rows"`
		EstimatedRowsSample *int64  `json:"estimated_rows_sample"`
		RowsSource          string  `json:"rows_source"`
		RuleID              *string `json:"rule_id"`
	} `json:"impact"`
}

func (e *wfEnv) suggestions(t *testing.T, query string) []suggestionOut {
	t.Helper()
	r := e.Do(t, http.MethodGet, "/api/v1/suggestions"+query, e.member, nil)
	if r.Status != 200 {
		t.Fatalf("suggestions: %d %s", r.Status, r.Body)
	}
	var out []suggestionOut
	r.JSON(t, &out)
	return out
}

func findSuggestion(list []suggestionOut, sig string) *suggestionOut {
	for i := range list {
		if list[i].Signature == sig {
			return &list[i]
		}
	}
	return nil
}

// Must-show 1: phone numbers in three formats → parse_standardize:<col>; its rehearsal
// counts exactly the rows the database counts; a predicate calling a forbidden function
// or reading another table is blocked with its reason; only counts are stored.
func TestSuggestionsWithRehearsals(t *testing.T) {
	e := newWF(t, "suggest")
	src := newSource(t, "postgres", e.root)
	src.exec(t, `CREATE TABLE contactos (id integer PRIMARY KEY, telefone text)`)
	src.exec(t, `CREATE TABLE outra (id integer)`)
	var rows []string
	for i := 1; i <= 100; i++ {
		n := 912000000 + i*7
		s := fmt.Sprint(n)
		var tel string
		switch {
		case i <= 50:
			tel = fmt.Sprintf("+351 %s %s %s", s[:3], s[3:6], s[6:])
		case i <= 80:
			tel = s
		default:
			tel = fmt.Sprintf("(+351) %s-%s-%s", s[:3], s[3:6], s[6:])
		}
		rows = append(rows, fmt.Sprintf("(%d, '%s')", i, tel))
	}
	src.exec(t, "INSERT INTO contactos VALUES "+strings.Join(rows, ", "))
	conn := e.connect(t, "crm", "postgres", src.dsn)
	e.scan(t, conn)
	ds := e.dataset(t, conn, "contactos")

	parsing := e.suggestions(t, "?category=parsing&dataset_id="+ds)
	sg := findSuggestion(parsing, "parse_standardize:telefone")
	if sg == nil {
		t.Fatalf("no parse_standardize:telefone in %+v", parsing)
	}
	if sg.Category != "parsing" || sg.Status != "open" || sg.AIGenerated == nil || *sg.AIGenerated || sg.AIModel != nil || sg.Rehearsal != nil {
		t.Fatalf("suggestion %+v", sg)
	}
	if masks := sg.Params["masks"].([]any); len(masks) != 3 || sg.Params["target_mask"] != "+999 999 999 999" {
		t.Fatalf("masks %v", sg.Params)
	}
	if sg.Impact.RowsSource != "sample" || sg.Impact.EstimatedRowsSample == nil || *sg.Impact.EstimatedRowsSample != 50 {
		t.Fatalf("impact before rehearsal %+v", sg.Impact)
	}
	if rules := e.suggestions(t, "?category=rule&dataset_id="+ds); findSuggestion(rules, "not_null:telefone") == nil || findSuggestion(rules, "parse_standardize:telefone") != nil {
		t.Fatalf("rule suggestions %+v", rules)
	}

	rehearse := func(t *testing.T, cred string, body map[string]any, want int) suggestionOut {
		t.Helper()
		r := e.Do(t, http.MethodPost, "/api/v1/suggestions/"+sg.ID+"/rehearsal", cred, body)
		if r.Status != want {
			t.Fatalf("rehearsal: %d %s", r.Status, r.Body)
		}
		var out suggestionOut
		if want == 200 {
			r.JSON(t, &out)
		}
		return out
	}
	rehearse(t, e.viewer, nil, 403)
	rehearse(t, e.tok, nil, 403)
	ok := rehearse(t, e.member, nil, 200)
	var dbCount, total int64
	if err := src.db.QueryRow(`SELECT count(*) FILTER (WHERE telefone NOT LIKE '+351 ___ ___ ___'), count(*) FROM contactos`).Scan(&dbCount, &total); err != nil {
		t.Fatal(err)
	}
	h := ok.Rehearsal
	if h == nil || h.Status != "ok" || h.AffectedRows == nil || *h.AffectedRows != dbCount || *h.TotalRows != total || h.Reason != nil ||
		h.Pct == nil || *h.Pct != 50 || !strings.HasPrefix(h.Actor, "user:") || h.Version != 1 {
		t.Fatalf("rehearsal %+v (database counts %d of %d)", h, dbCount, total)
	}
	if ok.Impact.RowsSource != "rehearsal" || *ok.Impact.EstimatedRows != dbCount || *ok.Impact.EstimatedRowsSample != 50 {
		t.Fatalf("impact %+v", ok.Impact)
	}

	for _, c := range []struct{ predicate, code string }{
		{"pg_sleep(1) IS NULL", "forbidden"},
		{"id IN (SELECT id FROM outra)", "unknown_table"},
		{"md5(telefone) = 'x'", "function_not_allowed"},
		{"true; DELETE FROM contactos", "not_select"},
	} {
		got := rehearse(t, e.member, map[string]any{"predicate": c.predicate}, 200)
		if got.Rehearsal == nil || got.Rehearsal.Status != "blocked" || got.Rehearsal.Reason == nil || got.Rehearsal.Reason.Code != c.code ||
			got.Rehearsal.AffectedRows != nil || got.Rehearsal.Reason.Message == "" {
			t.Fatalf("%q: %+v", c.predicate, got.Rehearsal)
		}
		if got.Impact.RowsSource != "sample" {
			t.Fatalf("blocked rehearsal changed the impact: %+v", got.Impact)
		}
	}
	var n int64
	if err := src.db.QueryRow(`SELECT count(*) FROM contactos`).Scan(&n); err != nil || n != 100 {
		t.Fatalf("rows after the blocked rehearsals: %d %v", n, err)
	}

	// Nothing but counts is stored: no value, no SQL, no predicate. Ids and times are left
	// out of the text searched: their digits may hold "912" by chance.
	var stored string
	if err := e.DB.Pool().QueryRow(t.Context(), `SELECT (to_jsonb(s) - 'id' - 'workspace_id' - 'dataset_id' - 'rule_id'
		- 'created_at' - 'updated_at' || jsonb_build_object('rehearsal', s.rehearsal - 'ran_at' - 'requested_at' - 'actor'))::text
		FROM suggestions s WHERE id = $1`, sg.ID).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"912", "+351", "SELECT", "pg_sleep", "outra", "DELETE", "md5"} {
		if strings.Contains(stored, bad) {
			t.Fatalf("stored suggestion holds %q: %s", bad, stored)
		}
	}
	var keys string
	if err := e.DB.Pool().QueryRow(t.Context(), `SELECT string_agg(k, ',' ORDER BY k) FROM suggestions, jsonb_object_keys(rehearsal) k WHERE id = $1`, sg.ID).Scan(&keys); err != nil {
		t.Fatal(err)
	}
	if keys != "actor,affected_rows,duration_ms,pct,ran_at,reason,requested_at,status,total_rows,version" {
		t.Fatalf("rehearsal keys %s", keys)
	}

	// Accepting the rule suggestion creates the rule; a second decision is 409.
	nn := findSuggestion(e.suggestions(t, "?category=rule&dataset_id="+ds), "not_null:telefone")
	if r := e.Do(t, http.MethodPost, "/api/v1/suggestions/"+nn.ID+"/accept", e.viewer, nil); r.Status != 403 {
		t.Fatalf("viewer accept: %d", r.Status)
	}
	r := e.Do(t, http.MethodPost, "/api/v1/suggestions/"+nn.ID+"/accept", e.member, nil)
	if r.Status != 200 {
		t.Fatalf("accept: %d %s", r.Status, r.Body)
	}
	var acc suggestionOut
	r.JSON(t, &acc)
	if acc.Status != "accepted" || acc.Impact.RuleID == nil {
		t.Fatalf("accepted %+v", acc)
	}
	rule := e.get(t, "/api/v1/rules/"+*acc.Impact.RuleID, e.member)
	if rule["rule_type"] != "not_null" || rule["dataset_id"] != ds {
		t.Fatalf("rule %v", rule)
	}
	if r := e.Do(t, http.MethodPost, "/api/v1/suggestions/"+nn.ID+"/dismiss", e.member, nil); r.Status != 409 {
		t.Fatalf("dismiss accepted: %d %s", r.Status, r.Body)
	}
	if r := e.Do(t, http.MethodPost, "/api/v1/suggestions/"+sg.ID+"/dismiss", e.member, nil); r.Status != 200 {
		t.Fatalf("dismiss: %d %s", r.Status, r.Body)
	}
	// A new scan neither reopens nor duplicates them; the rule now exists, so no new not_null.
	e.scan(t, conn)
	all := e.suggestions(t, "?dataset_id="+ds)
	if s := findSuggestion(all, "parse_standardize:telefone"); s == nil || s.Status != "dismissed" {
		t.Fatalf("after rescan %+v", all)
	}
	if s := findSuggestion(all, "not_null:telefone"); s == nil || s.Status != "accepted" {
		t.Fatalf("after rescan %+v", all)
	}

	t.Run("OtherWorkspaceIs404", func(t *testing.T) {
		other := e.MustSession(t, e.MustWorkspace(t, "outro"), vigia.RoleAdmin)
		for _, p := range []string{"", "/accept", "/dismiss", "/rehearsal"} {
			m := http.MethodPost
			if p == "" {
				m = http.MethodGet
			}
			if r := e.Do(t, m, "/api/v1/suggestions/"+sg.ID+p, other, nil); r.Status != 404 {
				t.Fatalf("%s %s: %d %s", m, p, r.Status, r.Body)
			}
		}
		if r := e.Do(t, http.MethodGet, "/api/v1/suggestions", other, nil); r.Header.Get("X-Total-Count") != "0" {
			t.Fatalf("other workspace list: %s", r.Header.Get("X-Total-Count"))
		}
	})
}
