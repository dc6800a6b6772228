package confcode

import (
	"context"
	"fmt"
	"strings"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/connection"
	"github.com/vigia-data/vigia/notify"
	"github.com/vigia-data/vigia/product"
	"github.com/vigia-data/vigia/rule"
	"github.com/vigia-data/vigia/team"
)

// run is one plan (exec false) or apply (exec true) of a file.
type run struct {
	s       *Service
	ws      string
	file    File
	secrets map[string]string
	opts    Options
	exec    bool
	st      state
	changes []Change
}

// state is the workspace as the file sees it, by name.
type state struct {
	conns      map[string]connection.Connection
	connName   map[string]string
	teams      map[string]team.Team
	teamName   map[string]string
	domains    map[string]product.Domain
	domainName map[string]string
	channels   map[string]notify.Channel
	rules      map[string]rule.Rule // by ruleKey
	datasetID  map[string]string    // "connection/schema.table" → id
	datasetRef map[string]string    // id → "connection/schema.table"
	managed    map[string]map[string]string
}

func ruleKey(datasetRef, name string) string { return datasetRef + ": " + name }

// load reads the workspace's objects.
func (s *Service) load(ctx context.Context, ws string) (state, error) {
	st := state{conns: map[string]connection.Connection{}, connName: map[string]string{}, teams: map[string]team.Team{},
		teamName: map[string]string{}, domains: map[string]product.Domain{}, domainName: map[string]string{},
		channels: map[string]notify.Channel{}, rules: map[string]rule.Rule{}, datasetID: map[string]string{}, datasetRef: map[string]string{}}
	conns, err := s.d.Connections.Connections(ctx)
	if err != nil {
		return st, err
	}
	for _, c := range conns {
		st.conns[c.Name], st.connName[c.ID] = c, c.Name
	}
	for offset := 0; ; offset += vigia.MaxLimit {
		page, err := s.d.Datasets.FindDatasets(ctx, catalog.DatasetFilter{Page: vigia.Page{Limit: vigia.MaxLimit, Offset: offset}})
		if err != nil {
			return st, err
		}
		for _, d := range page.Items {
			ref := st.connName[d.ConnectionID] + "/" + d.Schema + "." + d.Table
			if d.Schema == "" {
				ref = st.connName[d.ConnectionID] + "/" + d.Table
			}
			st.datasetID[ref], st.datasetRef[d.ID] = d.ID, ref
		}
		if len(page.Items) < vigia.MaxLimit {
			break
		}
	}
	teams, err := s.d.Teams.Teams(ctx)
	if err != nil {
		return st, err
	}
	for _, t := range teams {
		full, err := s.d.Teams.Team(ctx, t.ID)
		if err != nil {
			return st, err
		}
		st.teams[t.Name], st.teamName[t.ID] = full, t.Name
	}
	for offset := 0; ; offset += vigia.MaxLimit {
		page, err := s.d.Domains.Domains(ctx, vigia.Page{Limit: vigia.MaxLimit, Offset: offset})
		if err != nil {
			return st, err
		}
		for _, d := range page.Items {
			st.domains[d.Name], st.domainName[d.ID] = d, d.Name
		}
		if len(page.Items) < vigia.MaxLimit {
			break
		}
	}
	chans, err := s.d.Channels.Channels(ctx)
	if err != nil {
		return st, err
	}
	for _, c := range chans {
		st.channels[c.Name] = c
	}
	for offset := 0; ; offset += vigia.MaxLimit {
		page, err := s.d.Rules.Rules(ctx, rule.Filter{Page: vigia.Page{Limit: vigia.MaxLimit, Offset: offset}})
		if err != nil {
			return st, err
		}
		for _, r := range page.Items {
			if r.Type == "dbt_test" {
				continue // dbt's own tests: their truth is the dbt project
			}
			st.rules[ruleKey(st.datasetRef[r.DatasetID], r.Name)] = r
		}
		if len(page.Items) < vigia.MaxLimit {
			break
		}
	}
	st.managed, err = s.d.Store.Managed(ctx, ws)
	return st, err
}

// object is one declared object of a kind, as the generic reconciliation sees it.
type object struct {
	name string
	// check validates the names the object uses (nil: none to check).
	check  func() error
	diff   func(id string) ([]string, error)
	create func(ctx context.Context) (string, error)
	update func(ctx context.Context, id string) error
}

// reconcile plans (and under exec makes) one kind's changes: create what is missing,
// update what differs, mark as managed, and under --prune delete (or release, when
// del is nil) the managed objects the file no longer names.
func (r *run) reconcile(ctx context.Context, kind string, objs []object, existing map[string]string,
	del func(ctx context.Context, id string) error) error {
	byName := map[string]string{}
	for id, name := range existing {
		byName[name] = id
	}
	declared := map[string]bool{}
	now := r.s.d.Clock.Now()
	for _, o := range objs {
		declared[o.name] = true
		if o.check != nil {
			if err := o.check(); err != nil {
				return about(kind, o.name, err)
			}
		}
		id, ok := byName[o.name]
		if !ok {
			r.changes = append(r.changes, Change{Action: ActionCreate, Kind: kind, Name: o.name})
			if !r.exec {
				continue
			}
			newID, err := o.create(ctx)
			if err != nil {
				return about(kind, o.name, err)
			}
			if err := r.s.d.Store.MarkManaged(ctx, r.ws, kind, newID, o.name, now); err != nil {
				return err
			}
			continue
		}
		fields, err := o.diff(id)
		if err != nil {
			return about(kind, o.name, err)
		}
		_, managed := r.st.managed[kind][id]
		switch {
		case len(fields) > 0:
			r.changes = append(r.changes, Change{Action: ActionUpdate, Kind: kind, Name: o.name, Fields: fields})
			if r.exec {
				if err := o.update(ctx, id); err != nil {
					return about(kind, o.name, err)
				}
			}
		case !managed:
			r.changes = append(r.changes, Change{Action: ActionManage, Kind: kind, Name: o.name})
		}
		if r.exec && (len(fields) > 0 || !managed) {
			if err := r.s.d.Store.MarkManaged(ctx, r.ws, kind, id, o.name, now); err != nil {
				return err
			}
		}
	}
	for id := range r.st.managed[kind] {
		name, exists := existing[id]
		switch {
		case !exists:
			// Gone some other way (a cascade): the mark goes silently.
			if r.exec {
				if err := r.s.d.Store.Unmark(ctx, r.ws, kind, id); err != nil {
					return err
				}
			}
		case !declared[name] && r.opts.Prune:
			action := ActionDelete
			if del == nil {
				action = ActionRelease
			}
			r.changes = append(r.changes, Change{Action: action, Kind: kind, Name: name})
			if !r.exec {
				continue
			}
			if del != nil {
				if err := del(ctx, id); err != nil {
					return about(kind, name, err)
				}
			}
			if err := r.s.d.Store.Unmark(ctx, r.ws, kind, id); err != nil {
				return err
			}
		}
	}
	return nil
}

// ObjectError is an error of one object of the file.
type ObjectError struct {
	Kind, Name string
	Err        error
}

func (e *ObjectError) Error() string { return fmt.Sprintf("%s %q: %v", e.Kind, e.Name, e.Err) }
func (e *ObjectError) Unwrap() error { return e.Err }

func about(kind, name string, err error) error {
	if _, ok := err.(*ObjectError); ok {
		return err
	}
	return &ObjectError{Kind: strings.ReplaceAll(kind, "_", " "), Name: name, Err: err}
}

// unknownRef is the error of a name the file uses that the workspace does not have.
func unknownRef(what, name string) error {
	return &FileError{Msg: fmt.Sprintf("unknown %s %q", what, name)}
}

// steps reconciles every kind in order; under exec the state is read again before each
// kind, so that later kinds find what earlier ones created.
func (r *run) steps(ctx context.Context) error {
	for _, step := range []func(context.Context) error{r.connections, r.teams, r.domains, r.channels, r.rules, r.rulePacks} {
		if r.exec || r.st.conns == nil {
			st, err := r.s.load(ctx, r.ws)
			if err != nil {
				return err
			}
			r.st = st
		}
		if err := step(ctx); err != nil {
			return err
		}
	}
	return nil
}
