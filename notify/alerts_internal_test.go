package notify

import (
	"strings"
	"testing"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/i18n"
)

// The alerts of one incident are aggregated: the incident lists the channel's alert
// ids of its issues, incidents without any of them are left out, and params count
// alerts and incidents. (The incidents feature supplies the incidents through the
// Incidents port; here they are given directly.)
func TestAlertsBodyAggregatesIncidents(t *testing.T) {
	msgs, err := i18n.New()
	if err != nil {
		t.Fatal(err)
	}
	s := NewService(nil, nil, nil, nil, msgs, vigia.SystemClock{}, nil, nil, Config{})
	d := DatasetFacts{ID: "ds1", Name: "public.vendas"}
	items := []alertItem{
		{notifID: "al1", issue: AlertIssue{ID: "is1", Type: "anomaly", Severity: "critical", Title: "Volume em queda"}, ds: d},
		{notifID: "al2", issue: AlertIssue{ID: "is2", Type: "schema_drift", Severity: "warning", Title: "Coluna removida"}, ds: d},
		{notifID: "al3", issue: AlertIssue{ID: "is3", Type: "anomaly", Severity: "warning", Title: "Nulos"}, ds: d},
	}
	scope, down := "column", 4
	incidents := []IncidentImpact{
		{ID: "in1", IssueIDs: []string{"is1", "is2"}, ImpactScope: &scope, ImpactColumns: []string{"total"}, DownstreamCount: &down},
		{ID: "in2", IssueIDs: []string{"is9"}},
	}
	b := s.alertsBody(i18n.EN, "ws1", time.Unix(0, 0), items, incidents)
	if len(b.Alerts) != 3 || len(b.Incidents) != 1 {
		t.Fatalf("alerts %d, incidents %d", len(b.Alerts), len(b.Incidents))
	}
	in := b.Incidents[0]
	if in.ID != "in1" || len(in.AlertIDs) != 2 || in.AlertIDs[0] != "al1" || in.AlertIDs[1] != "al2" || *in.DownstreamCount != 4 ||
		in.ExposuresCount != nil {
		t.Fatalf("incident %+v", in)
	}
	if b.Params["count"] != 3 || b.Params["alerts"] != 3 || b.Params["incidents"] != 1 {
		t.Fatalf("params %v", b.Params)
	}
	if b.Title != "3 new alert(s) on «public.vendas»" || b.Body != "Critical: 1; warning: 2.\n- Volume em queda\n- Coluna removida\n- Nulos" {
		t.Fatalf("title %q body %q", b.Title, b.Body)
	}
	enc, err := b.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if want := `"incidents":[{"id":"in1","title":null,"root_dataset_id":null,"issue_ids":["is1","is2"],"alert_ids":["al1","al2"],` +
		`"impact_scope":"column","impact_columns":["total"],"downstream_count":4,"downstream_column_count":null,"exposures_count":null}]`; !strings.Contains(string(enc), want) {
		t.Fatalf("encoded %s", enc)
	}
}
