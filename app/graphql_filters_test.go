package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// failLatestVerdict turns the dataset's latest verdict into a fail of its critical
// not_null rule on id (the parity fixture's rule), as a scan that saw nulls in id would
// have stored it.
func failLatestVerdict(t *testing.T, f *parityFixture, datasetID string) {
	t.Helper()
	tag, err := f.env.DB.Pool().Exec(context.Background(), `UPDATE verdicts v SET verdict = 'fail',
		detail = jsonb_build_object('verdict', 'fail', 'reasons', '[]'::jsonb, 'failing_rules', jsonb_build_array(
			jsonb_build_object('rule_id', r.id::text, 'rule_type', r.rule_type, 'column', 'id', 'severity', 'critical', 'status', 'fail')))
		FROM rules r WHERE r.dataset_id = v.dataset_id AND r.rule_type = 'not_null' AND v.dataset_id = $1
		AND v.seq = (SELECT max(seq) FROM verdicts WHERE dataset_id = $1)`, datasetID)
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("fail verdict: %v (%d rows)", err, tag.RowsAffected())
	}
}

// ids of a REST list or a GraphQL page's items.
func itemIDs(items []any) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, it.(map[string]any)["id"].(string))
	}
	slices.Sort(out)
	return out
}

// The verdict filter of the dataset list answers, in REST and in GraphQL, the datasets
// whose verdict read (GET /datasets/{id}/verdict) is that verdict; a bad value is 422
// in REST and the same code in GraphQL.
func TestDatasetListVerdictFilterMatchesEachVerdictRead(t *testing.T) {
	f := newParityFixture(t)
	failLatestVerdict(t, f, f.ids["dataset"][0])
	var all []struct{ ID string }
	f.env.Do(t, "GET", "/api/v1/datasets", f.tok, nil).JSON(t, &all)
	want := map[string][]string{}
	for _, d := range all {
		var v struct{ Verdict string }
		f.env.Do(t, "GET", "/api/v1/datasets/"+d.ID+"/verdict", f.tok, nil).JSON(t, &v)
		want[v.Verdict] = append(want[v.Verdict], d.ID)
	}
	if !slices.Contains(want["fail"], f.ids["dataset"][0]) || len(want["fail"]) == len(all) {
		t.Fatalf("the fixture needs failing and other datasets: %v", want)
	}
	for _, verdict := range []string{"pass", "warn", "fail", "unknown"} {
		exp := append([]string{}, want[verdict]...)
		slices.Sort(exp)
		r := f.env.Do(t, "GET", "/api/v1/datasets?verdict="+verdict, f.tok, nil)
		var rest []any
		r.JSON(t, &rest)
		if got := itemIDs(rest); !slices.Equal(got, exp) || r.Header.Get("X-Total-Count") != strconv.Itoa(len(exp)) {
			t.Fatalf("REST verdict=%s: %v (total %s), want %v", verdict, got, r.Header.Get("X-Total-Count"), exp)
		}
		out := f.env.GraphQL(t, f.tok, `query($v: String){ datasets(verdict: $v){ total items { id } } }`, map[string]any{"v": verdict})
		items, _ := dig(out["data"], "datasets.items").([]any)
		if got := itemIDs(items); out["errors"] != nil || !slices.Equal(got, exp) || dig(out["data"], "datasets.total") != float64(len(exp)) {
			t.Fatalf("GraphQL verdict=%s: %v %v, want %v", verdict, out["errors"], got, exp)
		}
	}
	// A page of the filtered list: total stays the filtered count.
	if len(want["pass"]) > 1 {
		r := f.env.Do(t, "GET", "/api/v1/datasets?verdict=pass&limit=1", f.tok, nil)
		if r.Header.Get("X-Total-Count") != strconv.Itoa(len(want["pass"])) {
			t.Fatalf("paged total %s, want %d", r.Header.Get("X-Total-Count"), len(want["pass"]))
		}
	}
	assertBadFilter(t, f, "/api/v1/datasets?verdict=falha", `{ datasets(verdict: "falha"){ total } }`)
}

// The severity filter of the incident list answers, in REST and in GraphQL, the
// incidents of that severity among all of them; with status=open, the open ones.
func TestIncidentListSeverityFilterMatchesTheList(t *testing.T) {
	f := newParityFixture(t)
	var all []struct{ ID, Severity, Status string }
	f.env.Do(t, "GET", "/api/v1/incidents", f.tok, nil).JSON(t, &all)
	critical := 0
	for _, sev := range []string{"info", "warning", "critical"} {
		for _, status := range []string{"", "open"} {
			exp := []string{}
			for _, in := range all {
				if in.Severity == sev && (status == "" || in.Status == status) {
					exp = append(exp, in.ID)
				}
			}
			slices.Sort(exp)
			if sev == "critical" && status == "open" {
				critical = len(exp)
			}
			path := "/api/v1/incidents?severity=" + sev
			vars := map[string]any{"s": sev}
			if status != "" {
				path += "&status=" + status
				vars["st"] = status
			}
			r := f.env.Do(t, "GET", path, f.tok, nil)
			var rest []any
			r.JSON(t, &rest)
			if got := itemIDs(rest); !slices.Equal(got, exp) || r.Header.Get("X-Total-Count") != strconv.Itoa(len(exp)) {
				t.Fatalf("REST %s: %v (total %s), want %v", path, got, r.Header.Get("X-Total-Count"), exp)
			}
			out := f.env.GraphQL(t, f.tok, `query($s: String, $st: String){ incidents(severity: $s, status: $st){ total items { id severity } } }`, vars)
			items, _ := dig(out["data"], "incidents.items").([]any)
			if got := itemIDs(items); out["errors"] != nil || !slices.Equal(got, exp) || dig(out["data"], "incidents.total") != float64(len(exp)) {
				t.Fatalf("GraphQL %v: %v %v, want %v", vars, out["errors"], got, exp)
			}
		}
	}
	// The fixture's incident groups a critical and a warning issue: critical.
	if critical == 0 {
		t.Fatalf("the fixture has no open critical incident: %v", all)
	}
	assertBadFilter(t, f, "/api/v1/incidents?severity=grave", `{ incidents(severity: "grave"){ total } }`)
}

// assertBadFilter checks a filter value outside its enum: REST 422 and GraphQL the
// same stable code, neither echoing the value.
func assertBadFilter(t *testing.T, f *parityFixture, path, query string) {
	t.Helper()
	r := f.env.Do(t, "GET", path, f.tok, nil)
	var body struct{ Code string }
	_ = json.Unmarshal(r.Body, &body)
	if r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("%s: %d %s", path, r.Status, r.Body)
	}
	out := f.env.GraphQL(t, f.tok, query, nil)
	errs, _ := out["errors"].([]any)
	if len(errs) == 0 {
		t.Fatalf("%s: no error: %v", query, out)
	}
	code, _ := dig(errs[0], "extensions.code").(string)
	if code == "" || body.Code != "" && code != body.Code {
		t.Fatalf("%s: code %q, REST %q (%s)", query, code, body.Code, r.Body)
	}
	b, _ := json.Marshal(out)
	if slices.ContainsFunc([]string{"falha", "grave"}, func(s string) bool {
		return strings.Contains(string(r.Body), s) || strings.Contains(string(b), s)
	}) {
		t.Fatalf("the error echoes the value: %s %s", r.Body, b)
	}
}
