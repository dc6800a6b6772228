package graph

import (
	"strconv"
	"testing"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/bi"
	"github.com/vigia-data/vigia/blackout"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/connection"
	"github.com/vigia-data/vigia/contract"
	"github.com/vigia-data/vigia/datadiff"
	"github.com/vigia-data/vigia/duplicates"
	"github.com/vigia-data/vigia/finops"
	"github.com/vigia-data/vigia/graph/generated"
	"github.com/vigia-data/vigia/incident"
	"github.com/vigia-data/vigia/issue"
	"github.com/vigia-data/vigia/knowledge"
	"github.com/vigia-data/vigia/lineage"
	"github.com/vigia-data/vigia/notify"
	"github.com/vigia-data/vigia/orchestrator"
	"github.com/vigia-data/vigia/product"
	"github.com/vigia-data/vigia/report"
	"github.com/vigia-data/vigia/rule"
	"github.com/vigia-data/vigia/scan"
	"github.com/vigia-data/vigia/suggest"
	"github.com/vigia-data/vigia/trust"
)

// The schema repeats for clients the defaults the services declare (page sizes, hops);
// every list field is here, so a new one cannot carry a default of its own.
func TestSchemaDefaultsAreTheServices(t *testing.T) {
	schema := generated.NewExecutableSchema(generated.Config{Resolvers: &Resolver{}}).Schema()
	want := map[string]map[string]int{
		"Query": {"datasets.limit": catalog.DatasetPageDefault, "issues.limit": issue.PageDefault, "incidents.limit": incident.PageDefault,
			"domains.limit": product.DomainPageDefault, "consumers.limit": trust.ConsumerPageDefault, "rules.limit": rule.PageDefault,
			"scans.limit": scan.ScanPageDefault, "signals.limit": scan.SignalPageDefault, "knowledgeGraph.hops": lineage.DefaultKnowledgeHops,
			"graphSnapshots.limit": lineage.SnapshotPageDefault,
			"teams.limit":          vigia.MaxLimit, "notificationChannels.limit": vigia.MaxLimit, "notifications.limit": notify.PageDefault,
			"notificationMutes.limit": vigia.MaxLimit, "ticketIntegrations.limit": vigia.MaxLimit,
			"rulePacks.limit": vigia.MaxLimit, "reconcileChecks.limit": datadiff.CheckPageDefault,
			"orchestratorRuns.limit": orchestrator.RunPageDefault,
			"knowledgeEntries.limit": knowledge.DefaultList, "reports.limit": report.PageDefault, "suggestions.limit": suggest.PageDefault,
			"biRefreshes.limit": bi.RefreshPageDefault, "duplicates.limit": duplicates.PageDefault, "chargeback.limit": finops.PageDefault,
			"aiSystems.limit": vigia.MaxLimit, "complianceVerticals.limit": vigia.MaxLimit},
		"NotificationChannel": {"deliveries.limit": notify.PageDefault},
		"Dataset": {"lineage.hops": lineage.DefaultTraverseHops, "contractVersions.limit": contract.PageDefault,
			"upstream.hops": lineage.DefaultTraverseHops, "downstream.hops": lineage.DefaultTraverseHops,
			"contractProposals.limit": contract.PageDefault},
		"Connection": {"queryLog.limit": connection.QueryLogPageDefault, "blackouts.limit": blackout.MaxWindows},
	}
	for typ, args := range want {
		seen := map[string]bool{}
		for _, f := range schema.Types[typ].Fields {
			for _, a := range f.Arguments {
				if a.Name != "limit" && a.Name != "hops" {
					continue
				}
				key := f.Name + "." + a.Name
				if typ == "Dataset" && key == "scoreHistory.limit" {
					continue // the kept history, not a page
				}
				def, ok := args[key]
				if !ok {
					t.Errorf("%s.%s has no service default in this table", typ, key)
					continue
				}
				seen[key] = true
				if a.DefaultValue == nil || a.DefaultValue.Raw != strconv.Itoa(def) {
					t.Errorf("%s.%s: schema default %v, service %d", typ, key, a.DefaultValue, def)
				}
			}
		}
		for key := range args {
			if !seen[key] {
				t.Errorf("%s.%s not in the schema", typ, key)
			}
		}
	}
}
