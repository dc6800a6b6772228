package app

import "github.com/vigia-data/vigia/graph"

// graphOps are the services of the GraphQL reads issue 23 brought to parity with REST:
// the same services the REST handlers call.
func (a *App) graphOps() graph.OpsServices {
	return graph.OpsServices{Teams: a.Teams, Notify: a.Notify, OnCall: a.OnCall, Tickets: a.Tickets,
		Issues: a.Issues, Incidents: a.Incidents,
		RulePacks: a.Rules, ReconcileChecks: a.Diff, Orchestrators: a.Orchestrators, IDE: a.IDE, Shares: a.Products,
		Account: a.Identity, DataPolicies: a.DataPolicies, Compliance: a.Compliance, Knowledge: a.Knowledge, Reports: a.Reports,
		Routines: a.Routines, Suggestions: a.Suggestions, Blackouts: a.Blackouts}
}
