package confcode

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/connection"
	"github.com/vigia-data/vigia/notify"
	"github.com/vigia-data/vigia/product"
	"github.com/vigia-data/vigia/rule"
	"github.com/vigia-data/vigia/team"
)

// Connections is what apply needs of connections.
type Connections interface {
	Connections(ctx context.Context) ([]connection.Connection, error)
	Add(ctx context.Context, in connection.AddInput) (connection.Connection, error)
	Update(ctx context.Context, id string, u connection.Update) (connection.Connection, error)
	UpdateSchedule(ctx context.Context, id string, u connection.ScheduleUpdate) (connection.Connection, error)
	SameDSN(ctx context.Context, id, dsn string) (bool, error)
	ReplaceDSN(ctx context.Context, id, dsn string) error
}

// Teams is what apply needs of teams.
type Teams interface {
	Teams(ctx context.Context) ([]team.Team, error)
	Team(ctx context.Context, id string) (team.Team, error)
	CreateTeam(ctx context.Context, name string) (team.Team, error)
	DeleteTeam(ctx context.Context, id string) error
	AddMember(ctx context.Context, teamID, userRef string) (team.Team, error)
	RemoveMember(ctx context.Context, teamID, userID string) error
}

// Domains is what apply needs of data products.
type Domains interface {
	Domains(ctx context.Context, page vigia.Page) (vigia.List[product.Domain], error)
	CreateDomain(ctx context.Context, in product.DomainInput) (product.Domain, error)
	UpdateDomain(ctx context.Context, id string, patch product.DomainPatch) (product.Domain, error)
}

// Channels is what apply needs of notification channels.
type Channels interface {
	Channels(ctx context.Context) ([]notify.Channel, error)
	CreateChannel(ctx context.Context, in notify.ChannelInput) (notify.Channel, string, error)
	UpdateChannel(ctx context.Context, id string, up notify.ChannelUpdate) (notify.Channel, error)
	DeleteChannel(ctx context.Context, id string) error
	SameWebhookURL(ctx context.Context, id, url string) (bool, error)
}

// Rules is what apply needs of rules and rule packs.
type Rules interface {
	Rules(ctx context.Context, f rule.Filter) (vigia.List[rule.Rule], error)
	CreateRule(ctx context.Context, in rule.CreateInput) (rule.Rule, error)
	UpdateRule(ctx context.Context, id string, u rule.Update) (rule.Rule, error)
	DeleteRule(ctx context.Context, id string) error
	PreviewRulePack(ctx context.Context, name string, scope rule.PackScope) (rule.PackPlan, error)
	ApplyRulePack(ctx context.Context, name string, scope rule.PackScope) (rule.PackPlan, error)
}

// Datasets is what apply needs of the catalog.
type Datasets interface {
	FindDatasets(ctx context.Context, f catalog.DatasetFilter) (vigia.List[catalog.Dataset], error)
}

// Store keeps the marks of managed objects.
type Store interface {
	// Managed lists the workspace's managed objects: kind → object id → name.
	Managed(ctx context.Context, workspaceID string) (map[string]map[string]string, error)
	MarkManaged(ctx context.Context, workspaceID, kind, id, name string, at time.Time) error
	Unmark(ctx context.Context, workspaceID, kind, id string) error
}

// Tx runs fn in one transaction carried by ctx.
type Tx interface {
	InTx(ctx context.Context, fn func(ctx context.Context) error) error
}

// Deps are the services apply calls.
type Deps struct {
	Connections Connections
	Teams       Teams
	Domains     Domains
	Channels    Channels
	Rules       Rules
	Datasets    Datasets
	Store       Store
	Tx          Tx
	Clock       vigia.Clock
}

// Service plans, applies and exports configuration files.
type Service struct{ d Deps }

// NewService returns the configuration-as-code service.
func NewService(d Deps) *Service { return &Service{d: d} }

// Plan actions.
const (
	ActionCreate = "create"
	ActionUpdate = "update"
	ActionDelete = "delete"
	// ActionManage marks an existing object of the file's name, equal to the file, as
	// managed: nothing of it changes.
	ActionManage = "manage"
	// ActionRelease stops managing an object the product cannot delete (a connection,
	// a domain) that left the file, under --prune.
	ActionRelease = "release"
	// ActionApply applies a rule pack that would add rules.
	ActionApply = "apply"
)

// kindOrder is the order of the plan and of its application: what others name comes first.
var kindOrder = []string{vigia.ManagedConnection, vigia.ManagedTeam, vigia.ManagedDomain, vigia.ManagedChannel, vigia.ManagedRule, "rule_pack"}

// Change is one step of a plan.
type Change struct {
	Action string
	Kind   string
	Name   string
	// Fields names what an update changes.
	Fields []string
	// Detail says more (the new rules of a rule pack).
	Detail string
}

// String is the change as the plan prints it; it never holds a value of a secret.
func (c Change) String() string {
	s := fmt.Sprintf("%s %s %q", c.Action, strings.ReplaceAll(c.Kind, "_", " "), c.Name)
	if len(c.Fields) > 0 {
		s += " (" + strings.Join(c.Fields, ", ") + ")"
	}
	if c.Detail != "" {
		s += ": " + c.Detail
	}
	return s
}

// Plan is what an apply changes, in a stable order.
type Plan struct {
	Changes []Change
}

// Empty reports whether applying changes nothing.
func (p Plan) Empty() bool { return len(p.Changes) == 0 }

// Options are apply's flags.
type Options struct {
	DryRun bool
	Prune  bool
}

func sortChanges(cs []Change) {
	rank := map[string]int{}
	for i, k := range kindOrder {
		rank[k] = i
	}
	sort.SliceStable(cs, func(i, j int) bool {
		if rank[cs[i].Kind] != rank[cs[j].Kind] {
			return rank[cs[i].Kind] < rank[cs[j].Kind]
		}
		return cs[i].Name < cs[j].Name
	})
}

// Apply brings the principal's workspace to the file: it reads the environment
// variables the file names (all missing ones are reported by name), plans, and unless
// opts.DryRun makes every change in one transaction — any error leaves the workspace
// as it was. Needs an administrator's session. Returns the plan (made or to make).
func (s *Service) Apply(ctx context.Context, f File, env Env, opts Options) (Plan, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleAdmin)
	if err != nil {
		return Plan{}, err
	}
	sec, err := secrets(f, env)
	if err != nil {
		return Plan{}, err
	}
	var plan Plan
	err = s.d.Tx.InTx(vigia.WithConfigApply(ctx), func(ctx context.Context) error {
		r := &run{s: s, ws: p.WorkspaceID, file: f, secrets: sec, opts: opts, exec: !opts.DryRun}
		if err := r.steps(ctx); err != nil {
			return err
		}
		plan.Changes = r.changes
		if opts.DryRun {
			return errDryRun
		}
		return nil
	})
	if err == errDryRun {
		err = nil
	}
	sortChanges(plan.Changes)
	return plan, err
}

// errDryRun rolls a dry run's transaction back: a plan reads only, but its reads run
// where the apply's would.
var errDryRun = fmt.Errorf("dry run")
