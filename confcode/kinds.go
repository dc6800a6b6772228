package confcode

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/connection"
	"github.com/vigia-data/vigia/notify"
	"github.com/vigia-data/vigia/product"
	"github.com/vigia-data/vigia/rule"
)

// changed collects the names of the fields that differ.
type changed []string

func (c *changed) add(field string, differs bool) {
	if differs {
		*c = append(*c, field)
	}
}

func eqPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

func sortedSet(in []string, norm func(string) string) []string {
	out := make([]string, 0, len(in))
	for _, v := range in {
		if norm != nil {
			v = norm(v)
		}
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return out
}

func sameSet(a, b []string, norm func(string) string) bool {
	return slices.Equal(sortedSet(a, norm), sortedSet(b, norm))
}

func (r *run) connections(ctx context.Context) error {
	existing := map[string]string{}
	for name, c := range r.st.conns {
		existing[c.ID] = name
	}
	objs := make([]object, 0, len(r.file.Connections))
	for _, fc := range r.file.Connections {
		fc := fc
		dsn := r.secrets[fc.DSNEnv]
		tz := "UTC"
		if fc.ScanTimezone != nil {
			tz = *fc.ScanTimezone
		}
		var country *string
		if fc.DataCountry != nil {
			c := strings.ToUpper(*fc.DataCountry)
			country = &c
		}
		sched := Schedule{}
		if fc.Schedule != nil {
			sched = *fc.Schedule
		}
		objs = append(objs, object{name: fc.Name,
			diff: func(id string) ([]string, error) {
				cur := r.st.conns[fc.Name]
				if cur.Kind != fc.Kind {
					return nil, &FileError{Msg: "the kind of a connection cannot change"}
				}
				var ch changed
				same, err := r.s.d.Connections.SameDSN(ctx, id, dsn)
				if err != nil {
					return nil, err
				}
				ch.add("dsn", !same)
				ch.add("data_country", !eqPtr(cur.DataCountry, country))
				ch.add("scan_timezone", cur.ScanTimezone != tz)
				ch.add("statement_timeout_s", !eqPtr(cur.StatementTimeout, fc.StatementTimeoutS))
				ch.add("lineage_aliases", !sameSet(cur.Lineage.Aliases, canonicalAliases(fc.LineageAliases), nil))
				ch.add("schedule", !sameSchedule(cur.Schedule, sched))
				return ch, nil
			},
			create: func(ctx context.Context) (string, error) {
				c, err := r.s.d.Connections.Add(ctx, connection.AddInput{Name: fc.Name, Kind: fc.Kind, DSN: dsn, DataCountry: country,
					ScanTimezone: &tz, StatementTimeout: fc.StatementTimeoutS, LineageAliases: fc.LineageAliases})
				if err != nil {
					return "", err
				}
				if sched.Enabled {
					if _, err := r.s.d.Connections.UpdateSchedule(ctx, c.ID, scheduleUpdate(sched)); err != nil {
						return "", err
					}
				}
				return c.ID, nil
			},
			update: func(ctx context.Context, id string) error {
				cur := r.st.conns[fc.Name]
				if same, err := r.s.d.Connections.SameDSN(ctx, id, dsn); err != nil {
					return err
				} else if !same {
					if err := r.s.d.Connections.ReplaceDSN(ctx, id, dsn); err != nil {
						return err
					}
				}
				aliases := fc.LineageAliases
				if aliases == nil {
					aliases = []string{}
				}
				u := connection.Update{DataCountry: country, ClearDataCountry: country == nil, ScanTimezone: &tz,
					StatementTimeout: fc.StatementTimeoutS, ClearStatementTimeout: fc.StatementTimeoutS == nil, LineageAliases: &aliases}
				if _, err := r.s.d.Connections.Update(ctx, id, u); err != nil {
					return err
				}
				if !sameSchedule(cur.Schedule, sched) {
					if _, err := r.s.d.Connections.UpdateSchedule(ctx, id, scheduleUpdate(sched)); err != nil {
						return err
					}
				}
				return nil
			}})
	}
	// The product deletes no connection: under --prune one leaving the file is released.
	return r.reconcile(ctx, vigia.ManagedConnection, objs, existing, nil)
}

func canonicalAliases(in []string) []string {
	out := make([]string, 0, len(in))
	for _, a := range in {
		if ns, ok := vigia.CanonicalNamespace(a); ok {
			out = append(out, ns)
		} else {
			out = append(out, a)
		}
	}
	return out
}

func sameSchedule(cur connection.Schedule, want Schedule) bool {
	if !want.Enabled {
		return !cur.Enabled
	}
	return cur.Enabled && eqPtr(cur.Hour, want.Hour) && cur.Minute == want.Minute
}

func scheduleUpdate(s Schedule) connection.ScheduleUpdate {
	enabled, minute := s.Enabled, s.Minute
	u := connection.ScheduleUpdate{Enabled: &enabled}
	if s.Enabled {
		u.Hour, u.Minute = s.Hour, &minute
	}
	return u
}

func (r *run) teams(ctx context.Context) error {
	existing := map[string]string{}
	for name, t := range r.st.teams {
		existing[t.ID] = name
	}
	lower := strings.ToLower
	objs := make([]object, 0, len(r.file.Teams))
	for _, ft := range r.file.Teams {
		ft := ft
		objs = append(objs, object{name: ft.Name,
			diff: func(string) ([]string, error) {
				cur := r.st.teams[ft.Name]
				emails := make([]string, 0, len(cur.Members))
				for _, m := range cur.Members {
					emails = append(emails, m.Email)
				}
				var ch changed
				ch.add("members", !sameSet(emails, ft.Members, lower))
				return ch, nil
			},
			create: func(ctx context.Context) (string, error) {
				t, err := r.s.d.Teams.CreateTeam(ctx, ft.Name)
				if err != nil {
					return "", err
				}
				for _, m := range sortedSet(ft.Members, lower) {
					if _, err := r.s.d.Teams.AddMember(ctx, t.ID, m); err != nil {
						return "", memberError(m, err)
					}
				}
				return t.ID, nil
			},
			update: func(ctx context.Context, id string) error {
				want := sortedSet(ft.Members, lower)
				have := map[string]bool{}
				for _, m := range r.st.teams[ft.Name].Members {
					have[lower(m.Email)] = true
					if !slices.Contains(want, lower(m.Email)) {
						if err := r.s.d.Teams.RemoveMember(ctx, id, m.UserID); err != nil {
							return err
						}
					}
				}
				for _, m := range want {
					if !have[m] {
						if _, err := r.s.d.Teams.AddMember(ctx, id, m); err != nil {
							return memberError(m, err)
						}
					}
				}
				return nil
			}})
	}
	return r.reconcile(ctx, vigia.ManagedTeam, objs, existing, r.s.d.Teams.DeleteTeam)
}

func memberError(email string, err error) error {
	if vigia.IsKind(err, vigia.KindNotFound) {
		return unknownRef("member", email)
	}
	return err
}

func (r *run) datasetIDs(refs []string) ([]string, error) {
	out := make([]string, 0, len(refs))
	for _, ref := range refs {
		id, ok := r.st.datasetID[ref]
		if !ok {
			return nil, unknownRef("dataset", ref)
		}
		out = append(out, id)
	}
	return out, nil
}

func (r *run) datasetRefs(ids []string) []string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		out = append(out, r.st.datasetRef[id])
	}
	return out
}

func grantKey(team, role string) string {
	if role == "" {
		role = product.RoleMember
	}
	return team + " " + role
}

func (r *run) domains(ctx context.Context) error {
	existing := map[string]string{}
	for name, d := range r.st.domains {
		existing[d.ID] = name
	}
	objs := make([]object, 0, len(r.file.Domains))
	for _, fd := range r.file.Domains {
		fd := fd
		wantGrants := make([]string, 0, len(fd.Teams))
		for _, g := range fd.Teams {
			wantGrants = append(wantGrants, grantKey(g.Team, g.Role))
		}
		teams := func() (*[]product.TeamGrantInput, error) {
			out := make([]product.TeamGrantInput, 0, len(fd.Teams))
			for _, g := range fd.Teams {
				t, ok := r.st.teams[g.Team]
				if !ok {
					return nil, unknownRef("team", g.Team)
				}
				out = append(out, product.TeamGrantInput{TeamID: t.ID, Role: g.Role})
			}
			return &out, nil
		}
		objs = append(objs, object{name: fd.Name,
			check: func() error {
				if _, err := r.datasetIDs(fd.Datasets); err != nil {
					return err
				}
				for _, g := range fd.Teams {
					if _, ok := r.st.teams[g.Team]; !ok && !r.declaresTeam(g.Team) {
						return unknownRef("team", g.Team)
					}
				}
				return nil
			},
			diff: func(string) ([]string, error) {
				cur := r.st.domains[fd.Name]
				var ch changed
				ch.add("description", cur.Description != strings.TrimSpace(fd.Description))
				ch.add("owner_name", !eqPtr(cur.OwnerName, trimmed(fd.OwnerName)))
				ch.add("restricted", cur.Restricted != fd.Restricted)
				ch.add("datasets", !sameSet(r.datasetRefs(cur.DatasetIDs), fd.Datasets, nil))
				have := make([]string, 0, len(cur.Teams))
				for _, g := range cur.Teams {
					have = append(have, grantKey(g.TeamName, g.Role))
				}
				ch.add("teams", !sameSet(have, wantGrants, nil))
				ch.add("sla", !sameSLA(cur.SLA, fd.SLA))
				return ch, nil
			},
			create: func(ctx context.Context) (string, error) {
				ids, err := r.datasetIDs(fd.Datasets)
				if err != nil {
					return "", err
				}
				grants, err := teams()
				if err != nil {
					return "", err
				}
				d, err := r.s.d.Domains.CreateDomain(ctx, product.DomainInput{Name: fd.Name, Description: fd.Description,
					Restricted: fd.Restricted, OwnerName: trimmed(fd.OwnerName), DatasetIDs: ids, Teams: *grants, SLA: slaPatch(fd.SLA)})
				return d.ID, err
			},
			update: func(ctx context.Context, id string) error {
				ids, err := r.datasetIDs(fd.Datasets)
				if err != nil {
					return err
				}
				grants, err := teams()
				if err != nil {
					return err
				}
				sla := slaPatch(fd.SLA)
				desc := fd.Description
				_, err = r.s.d.Domains.UpdateDomain(ctx, id, product.DomainPatch{Description: &desc,
					OwnerName: product.Opt[string]{Set: true, Value: trimmed(fd.OwnerName)}, Restricted: &fd.Restricted,
					DatasetIDs: &ids, Teams: grants, SLA: &sla})
				return err
			}})
	}
	// The product deletes no domain (it deprecates them): under --prune one leaving the
	// file is released.
	return r.reconcile(ctx, vigia.ManagedDomain, objs, existing, nil)
}

func (r *run) declaresTeam(name string) bool {
	for _, t := range r.file.Teams {
		if t.Name == name {
			return true
		}
	}
	return false
}

func trimmed(s *string) *string {
	if s == nil {
		return nil
	}
	t := strings.TrimSpace(*s)
	return &t
}

func sameSLA(cur product.SLA, want *SLA) bool {
	w := SLA{}
	if want != nil {
		w = *want
	}
	targets := w.DimensionTargets
	if targets == nil {
		targets = map[string]float64{}
	}
	curTargets := cur.DimensionTargets
	if curTargets == nil {
		curTargets = map[string]float64{}
	}
	weightsEqual := (cur.DimensionWeights == nil) == (w.DimensionWeights == nil) && maps.Equal(cur.DimensionWeights, w.DimensionWeights)
	return eqPtr(cur.AvailabilityObjectivePct, w.AvailabilityObjectivePct) && eqPtr(cur.RetentionDays, w.RetentionDays) &&
		maps.Equal(curTargets, targets) && weightsEqual
}

// slaPatch sets every SLA field: what the file leaves out is cleared.
func slaPatch(s *SLA) product.SLAPatch {
	w := SLA{}
	if s != nil {
		w = *s
	}
	targets := w.DimensionTargets
	if targets == nil {
		targets = map[string]float64{}
	}
	p := product.SLAPatch{
		AvailabilityObjectivePct: product.Opt[float64]{Set: true, Value: w.AvailabilityObjectivePct},
		RetentionDays:            product.Opt[int]{Set: true, Value: w.RetentionDays},
		DimensionTargets:         product.Opt[map[string]float64]{Set: true, Value: &targets},
		DimensionWeights:         product.Opt[map[string]float64]{Set: true},
	}
	if w.DimensionWeights != nil {
		p.DimensionWeights.Value = &w.DimensionWeights
	}
	return p
}

func (r *run) channels(ctx context.Context) error {
	existing := map[string]string{}
	for name, c := range r.st.channels {
		existing[c.ID] = name
	}
	objs := make([]object, 0, len(r.file.Channels))
	for _, fc := range r.file.Channels {
		fc := fc
		url := r.secrets[fc.WebhookURLEnv]
		sev := fc.MinSeverity
		if sev == "" {
			sev = notify.SeverityWarning
		}
		kinds := fc.EventKinds
		if len(kinds) == 0 {
			kinds = []string{notify.EventKindAlerts}
		}
		scope := ChannelScope{}
		if fc.Scope != nil {
			scope = *fc.Scope
		}
		auto := scope.IncludeAutoMonitors == nil || *scope.IncludeAutoMonitors
		resolve := func() (notify.ScopeInput, *string, error) {
			in := notify.ScopeInput{DomainIDs: []string{}, ConnectionIDs: []string{}, IssueTypes: append([]string{}, scope.IssueTypes...),
				IncludeAutoMonitors: &auto}
			for _, n := range scope.Domains {
				d, ok := r.st.domains[n]
				if !ok {
					return in, nil, unknownRef("domain", n)
				}
				in.DomainIDs = append(in.DomainIDs, d.ID)
			}
			for _, n := range scope.Connections {
				c, ok := r.st.conns[n]
				if !ok {
					return in, nil, unknownRef("connection", n)
				}
				in.ConnectionIDs = append(in.ConnectionIDs, c.ID)
			}
			ids, err := r.datasetIDs(scope.Datasets)
			if err != nil {
				return in, nil, err
			}
			in.DatasetIDs = ids
			var teamID *string
			if fc.Team != nil {
				t, ok := r.st.teams[*fc.Team]
				if !ok {
					return in, nil, unknownRef("team", *fc.Team)
				}
				teamID = &t.ID
			}
			return in, teamID, nil
		}
		objs = append(objs, object{name: fc.Name,
			check: func() error {
				if _, err := r.datasetIDs(scope.Datasets); err != nil {
					return err
				}
				if fc.Team != nil && r.st.teams[*fc.Team].ID == "" && !r.declaresTeam(*fc.Team) {
					return unknownRef("team", *fc.Team)
				}
				return nil
			},
			diff: func(id string) ([]string, error) {
				cur := r.st.channels[fc.Name]
				var ch changed
				same, err := r.s.d.Channels.SameWebhookURL(ctx, id, url)
				if err != nil {
					return nil, err
				}
				ch.add("webhook_url", !same)
				curTeam := ""
				if cur.TeamID != nil {
					curTeam = r.st.teamName[*cur.TeamID]
				}
				wantTeam := ""
				if fc.Team != nil {
					wantTeam = *fc.Team
				}
				ch.add("team", curTeam != wantTeam)
				ch.add("locale", !eqPtr(cur.Locale, fc.Locale))
				ch.add("min_severity", cur.MinSeverity != sev)
				ch.add("digest", cur.Digest != fc.Digest)
				ch.add("event_kinds", !sameSet(cur.EventKinds, kinds, nil))
				ch.add("scope", !sameSet(r.names(cur.Scope.DomainIDs, r.st.domainName), scope.Domains, nil) ||
					!sameSet(r.names(cur.Scope.ConnectionIDs, r.st.connName), scope.Connections, nil) ||
					!sameSet(r.datasetRefs(cur.Scope.DatasetIDs), scope.Datasets, nil) ||
					!sameSet(cur.Scope.IssueTypes, scope.IssueTypes, nil) || cur.Scope.IncludeAutoMonitors != auto)
				return ch, nil
			},
			create: func(ctx context.Context) (string, error) {
				in, teamID, err := resolve()
				if err != nil {
					return "", err
				}
				// The signing secret is made here and not shown: rotating it reveals it.
				c, _, err := r.s.d.Channels.CreateChannel(ctx, notify.ChannelInput{Name: fc.Name, Kind: notify.KindWebhook, WebhookURL: url,
					Locale: fc.Locale, MinSeverity: &sev, Digest: &fc.Digest, EventKinds: kinds, Scope: &in, TeamID: teamID})
				return c.ID, err
			},
			update: func(ctx context.Context, id string) error {
				in, teamID, err := resolve()
				if err != nil {
					return err
				}
				up := notify.ChannelUpdate{MinSeverity: &sev, Digest: &fc.Digest, EventKinds: kinds, Scope: &in,
					Locale: fc.Locale, ClearLocale: fc.Locale == nil, TeamID: teamID, ClearTeam: teamID == nil}
				if same, err := r.s.d.Channels.SameWebhookURL(ctx, id, url); err != nil {
					return err
				} else if !same {
					up.WebhookURL = &url
				}
				_, err = r.s.d.Channels.UpdateChannel(ctx, id, up)
				return err
			}})
	}
	return r.reconcile(ctx, vigia.ManagedChannel, objs, existing, r.s.d.Channels.DeleteChannel)
}

func (r *run) names(ids []string, byID map[string]string) []string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		out = append(out, byID[id])
	}
	return out
}

func (r *run) rules(ctx context.Context) error {
	existing := map[string]string{}
	for key, ru := range r.st.rules {
		existing[ru.ID] = key
	}
	objs := make([]object, 0, len(r.file.Rules))
	for _, fr := range r.file.Rules {
		fr := fr
		sev := fr.Severity
		if sev == "" {
			sev = rule.SeverityWarning
		}
		active := fr.Active == nil || *fr.Active
		params := func() (rule.ParamsIn, error) { return r.paramsIn(fr.Params) }
		objs = append(objs, object{name: ruleKey(fr.Dataset, fr.Name),
			check: func() error {
				if _, ok := r.st.datasetID[fr.Dataset]; !ok {
					return unknownRef("dataset", fr.Dataset)
				}
				_, err := params()
				return err
			},
			diff: func(string) ([]string, error) {
				cur := r.st.rules[ruleKey(fr.Dataset, fr.Name)]
				if cur.Type != fr.Type {
					return nil, &FileError{Msg: "the type of a rule cannot change: give the rule another name"}
				}
				want, err := params()
				if err != nil {
					return nil, err
				}
				var ch changed
				ch.add("severity", cur.Severity != sev)
				ch.add("active", cur.Active != active)
				ch.add("params", !sameParams(cur.Params, want, fr.Type))
				return ch, nil
			},
			create: func(ctx context.Context) (string, error) {
				in, err := params()
				if err != nil {
					return "", err
				}
				ru, err := r.s.d.Rules.CreateRule(ctx, rule.CreateInput{DatasetID: r.st.datasetID[fr.Dataset], RuleType: fr.Type,
					Severity: sev, Name: fr.Name, Params: in, Active: &active})
				return ru.ID, err
			},
			update: func(ctx context.Context, id string) error {
				in, err := params()
				if err != nil {
					return err
				}
				_, err = r.s.d.Rules.UpdateRule(ctx, id, rule.Update{Severity: &sev, Params: &in, Active: &active})
				return err
			}})
	}
	return r.reconcile(ctx, vigia.ManagedRule, objs, existing, r.s.d.Rules.DeleteRule)
}

func (r *run) paramsIn(p *RuleParams) (rule.ParamsIn, error) {
	if p == nil {
		return rule.ParamsIn{}, nil
	}
	in := rule.ParamsIn{Column: p.Column, Columns: p.Columns, Values: p.Values, Pattern: p.Pattern, Min: p.Min, Max: p.Max,
		RefColumn: p.RefColumn, MaxOrphanPct: p.MaxOrphanPct, MaxAgeHours: p.MaxAgeHours, MinRows: p.MinRows, SQL: p.SQL, MaxFailing: p.MaxFailing}
	if p.RefDataset != nil {
		id, ok := r.st.datasetID[*p.RefDataset]
		if !ok {
			return in, unknownRef("dataset", *p.RefDataset)
		}
		in.RefDatasetID = &id
	}
	return in, nil
}

// sameParams compares a rule's parameters with the file's, as the rule feature
// normalises them (the file's, when invalid, differ: the update reports why).
func sameParams(cur rule.Params, want rule.ParamsIn, ruleType string) bool {
	norm, fields := want.Check(ruleType)
	if len(fields) > 0 {
		return false
	}
	a, _ := json.Marshal(paramsOut(cur))
	b, _ := json.Marshal(paramsOut(norm))
	return string(a) == string(b)
}

// paramsView is the part of a rule's parameters the file sets.
type paramsView struct {
	Column       string   `json:"column,omitempty"`
	Columns      []string `json:"columns,omitempty"`
	Values       []string `json:"values,omitempty"`
	Pattern      string   `json:"pattern,omitempty"`
	Min          *float64 `json:"min,omitempty"`
	Max          *float64 `json:"max,omitempty"`
	RefDatasetID string   `json:"ref_dataset_id,omitempty"`
	RefColumn    string   `json:"ref_column,omitempty"`
	MaxOrphanPct *float64 `json:"max_orphan_pct,omitempty"`
	MaxAgeHours  *float64 `json:"max_age_hours,omitempty"`
	MinRows      *float64 `json:"min_rows,omitempty"`
	SQL          string   `json:"sql,omitempty"`
	MaxFailing   *float64 `json:"max_failing,omitempty"`
}

func paramsOut(p rule.Params) paramsView {
	v := paramsView{Column: p.Column, Columns: p.Columns, Values: p.Values, Pattern: p.Pattern, Min: p.Min, Max: p.Max,
		RefDatasetID: p.RefDatasetID, RefColumn: p.RefColumn, MaxOrphanPct: p.MaxOrphanPct, MaxAgeHours: p.MaxAgeHours, SQL: p.SQL}
	if p.MinRows != nil {
		f := float64(*p.MinRows)
		v.MinRows = &f
	}
	if p.MaxFailing != nil {
		f := float64(*p.MaxFailing)
		v.MaxFailing = &f
	}
	return v
}

// rulePacks applies the file's rule packs where they would add rules; the rules a pack
// adds are the pack's (not managed one by one), so --prune leaves them.
func (r *run) rulePacks(ctx context.Context) error {
	for _, fp := range r.file.RulePacks {
		scope := rule.PackScope{}
		where := ""
		if fp.Connection != nil {
			c, ok := r.st.conns[*fp.Connection]
			if !ok && !r.exec && r.declaresConnection(*fp.Connection) {
				// A connection this apply creates has no dataset yet: the pack adds nothing.
				continue
			}
			if !ok {
				return about("rule_pack", fp.Pack, unknownRef("connection", *fp.Connection))
			}
			scope.ConnectionID, where = &c.ID, *fp.Connection
		} else {
			id, ok := r.st.datasetID[*fp.Dataset]
			if !ok {
				return about("rule_pack", fp.Pack, unknownRef("dataset", *fp.Dataset))
			}
			scope.DatasetID, where = &id, *fp.Dataset
		}
		plan, err := r.s.d.Rules.PreviewRulePack(ctx, fp.Pack, scope)
		if err != nil {
			return about("rule_pack", fp.Pack, err)
		}
		if plan.New == 0 {
			continue
		}
		r.changes = append(r.changes, Change{Action: ActionApply, Kind: "rule_pack", Name: fp.Pack + " on " + where,
			Detail: plural(plan.New, "new rule")})
		if r.exec {
			if _, err := r.s.d.Rules.ApplyRulePack(ctx, fp.Pack, scope); err != nil {
				return about("rule_pack", fp.Pack, err)
			}
		}
	}
	return nil
}

func (r *run) declaresConnection(name string) bool {
	for _, c := range r.file.Connections {
		if c.Name == name {
			return true
		}
	}
	return false
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}
