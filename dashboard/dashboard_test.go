package dashboard_test

import (
	"testing"
	"time"

	"github.com/vigia-data/vigia/dashboard"
)

func TestComposeSharesAndAttainment(t *testing.T) {
	g := dashboard.Compose(dashboard.Facts{Datasets: 3, WithOwner: 1, ClosedInScope: 3, ClosedWithinSLA: 2}, 30, time.Now())
	if g.Coverage.WithOwner.Pct == nil || *g.Coverage.WithOwner.Pct != 33.3 || g.SLA.Breached != 1 || *g.SLA.AttainmentPct != 66.7 {
		t.Fatalf("%+v", g)
	}
	g = dashboard.Compose(dashboard.Facts{}, 30, time.Now())
	if g.Coverage.Profiled.Pct != nil || g.SLA.AttainmentPct != nil {
		t.Fatalf("empty workspace: %+v", g)
	}
}
