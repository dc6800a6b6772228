package confcode

import (
	"context"
	"encoding/json"
	"regexp"
	"sort"
	"strings"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/product"
)

var envUnsafe = regexp.MustCompile(`[^A-Z0-9]+`)

// EnvName is the environment variable an export names for an object's secret:
// prefix + the name in upper case, other characters as underscores.
func EnvName(prefix, name string) string {
	s := strings.Trim(envUnsafe.ReplaceAllString(strings.ToUpper(name), "_"), "_")
	if s == "" {
		s = "X"
	}
	return prefix + s
}

// Export prefixes of the environment variables that hold secrets.
const (
	DSNEnvPrefix        = "VIGIA_DSN_"
	WebhookURLEnvPrefix = "VIGIA_WEBHOOK_URL_"
)

// Export writes the principal's workspace as a configuration file: every connection,
// team, domain, notification channel and rule (dbt's own tests excepted), secrets never
// included — a DSN or a webhook URL is named by an environment variable
// (VIGIA_DSN_<NAME>, VIGIA_WEBHOOK_URL_<NAME>) that applying the file will read. Rule
// packs are not exported: the rules they added are, one by one. Needs an
// administrator's session.
func (s *Service) Export(ctx context.Context) (File, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleAdmin)
	if err != nil {
		return File{}, err
	}
	st, err := s.load(ctx, p.WorkspaceID)
	if err != nil {
		return File{}, err
	}
	f := File{Version: Version}
	for _, name := range sortedKeys(st.conns) {
		c := st.conns[name]
		out := Connection{Name: name, Kind: c.Kind, DSNEnv: EnvName(DSNEnvPrefix, name), DataCountry: c.DataCountry,
			StatementTimeoutS: c.StatementTimeout, LineageAliases: c.Lineage.Aliases}
		if c.ScanTimezone != "UTC" {
			tz := c.ScanTimezone
			out.ScanTimezone = &tz
		}
		if c.Schedule.Enabled {
			out.Schedule = &Schedule{Enabled: true, Hour: c.Schedule.Hour, Minute: c.Schedule.Minute}
		}
		f.Connections = append(f.Connections, out)
	}
	for _, name := range sortedKeys(st.teams) {
		t := Team{Name: name}
		for _, m := range st.teams[name].Members {
			t.Members = append(t.Members, strings.ToLower(m.Email))
		}
		sort.Strings(t.Members)
		f.Teams = append(f.Teams, t)
	}
	for _, name := range sortedKeys(st.domains) {
		d := st.domains[name]
		out := Domain{Name: name, Description: d.Description, OwnerName: d.OwnerName, Restricted: d.Restricted,
			Datasets: sortedSet(refs(st, d.DatasetIDs), nil), SLA: slaOut(d.SLA)}
		for _, g := range d.Teams {
			role := g.Role
			if role == product.RoleMember {
				role = ""
			}
			out.Teams = append(out.Teams, Grant{Team: g.TeamName, Role: role})
		}
		sort.Slice(out.Teams, func(i, j int) bool { return out.Teams[i].Team < out.Teams[j].Team })
		f.Domains = append(f.Domains, out)
	}
	for _, name := range sortedKeys(st.channels) {
		c := st.channels[name]
		out := Channel{Name: name, WebhookURLEnv: EnvName(WebhookURLEnvPrefix, name), Locale: c.Locale, Digest: c.Digest,
			MinSeverity: c.MinSeverity, EventKinds: sortedSet(c.EventKinds, nil)}
		if c.TeamID != nil {
			t := st.teamName[*c.TeamID]
			out.Team = &t
		}
		sc := ChannelScope{Domains: sortedSet(namesOf(c.Scope.DomainIDs, st.domainName), nil),
			Connections: sortedSet(namesOf(c.Scope.ConnectionIDs, st.connName), nil),
			Datasets:    sortedSet(refs(st, c.Scope.DatasetIDs), nil), IssueTypes: sortedSet(c.Scope.IssueTypes, nil)}
		if !c.Scope.IncludeAutoMonitors {
			f := false
			sc.IncludeAutoMonitors = &f
		}
		if len(sc.Domains)+len(sc.Connections)+len(sc.Datasets)+len(sc.IssueTypes) > 0 || sc.IncludeAutoMonitors != nil {
			out.Scope = &sc
		}
		f.Channels = append(f.Channels, out)
	}
	for _, key := range sortedKeys(st.rules) {
		ru := st.rules[key]
		out := Rule{Dataset: st.datasetRef[ru.DatasetID], Name: ru.Name, Type: ru.Type, Severity: ru.Severity}
		if !ru.Active {
			f := false
			out.Active = &f
		}
		v := paramsOut(ru.Params)
		params := RuleParams{Columns: v.Columns, Values: v.Values, Min: v.Min, Max: v.Max, MaxOrphanPct: v.MaxOrphanPct,
			MaxAgeHours: v.MaxAgeHours, MinRows: v.MinRows, MaxFailing: v.MaxFailing, Column: opt(v.Column), Pattern: opt(v.Pattern),
			RefColumn: opt(v.RefColumn), SQL: opt(v.SQL)}
		if v.RefDatasetID != "" {
			ref := st.datasetRef[v.RefDatasetID]
			params.RefDataset = &ref
		}
		if b, _ := json.Marshal(v); string(b) != "{}" {
			out.Params = &params
		}
		f.Rules = append(f.Rules, out)
	}
	return f, nil
}

func opt(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func refs(st state, ids []string) []string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		out = append(out, st.datasetRef[id])
	}
	return out
}

func namesOf(ids []string, byID map[string]string) []string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		out = append(out, byID[id])
	}
	return out
}

func slaOut(s product.SLA) *SLA {
	out := SLA{AvailabilityObjectivePct: s.AvailabilityObjectivePct, RetentionDays: s.RetentionDays, DimensionWeights: s.DimensionWeights}
	if len(s.DimensionTargets) > 0 {
		out.DimensionTargets = s.DimensionTargets
	}
	if out.AvailabilityObjectivePct == nil && out.RetentionDays == nil && out.DimensionTargets == nil && out.DimensionWeights == nil {
		return nil
	}
	return &out
}
