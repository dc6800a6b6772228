package lineage

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/ingest"
)

// maxUnmatchedNames bounds the unmatched names a result lists.
const maxUnmatchedNames = 100

// OpenLineageResult says what a batch of OpenLineage events changed.
type OpenLineageResult struct {
	Events   int
	Accepted int
	// Edges and Destinations are what the jobs the events touched now give.
	Edges        int
	Destinations int
	// Unmatched counts the input datasets that are no dataset of the workspace (another
	// server, another database, or a table Vigia does not watch); UnmatchedNames lists
	// them as namespace/name (at most 100).
	Unmatched      int
	UnmatchedNames []string
	Refused        []ingest.RefusedEvent
}

// olEvent is a validated event as the merge reads it.
type olEvent struct {
	// complete events carry the whole of a job's lineage: a RunEvent COMPLETE, a
	// JobEvent (static lineage). The others add to it.
	complete bool
	at       time.Time
	job      string // the merge key: namespace/name of the job, or dataset:namespace/name
	facts    olFacts
}

// olRef names an OpenLineage dataset.
type olRef struct {
	NS   string `json:"ns"`
	Name string `json:"name"`
}

func (r olRef) String() string { return r.NS + "/" + r.Name }

// olPair is one column of an output and a column of an input it derives from.
type olPair struct {
	Out    olRef  `json:"out"`
	Field  string `json:"field"`
	In     olRef  `json:"in"`
	From   string `json:"from"`
	Direct bool   `json:"direct"`
}

// olFacts is what one event tells: its inputs, its outputs, and per output with a
// columnLineage facet, the column pairs.
type olFacts struct {
	inputs, outputs []olRef
	columns         map[olRef][]olPair // outputs that carry the facet
}

// olState is what the events of one job told, merged so that arrival order and repeats
// do not matter:
//
//   - the datasets of the latest complete event by eventTime (a COMPLETE run, a JobEvent);
//   - per output, the column pairs of the latest complete event that carried the
//     columnLineage facet for it (an event without the facet tells nothing of columns);
//   - facts of other events (START, RUNNING, OTHER, a DatasetEvent) newer than the
//     latest complete event, each with the latest eventTime it was seen at: they add,
//     never remove, and a newer complete event supersedes them.
type olState struct {
	CompleteAt time.Time    `json:"complete_at"`
	Inputs     []olRef      `json:"inputs"`
	Outputs    []olRef      `json:"outputs"`
	Columns    []olColumns  `json:"columns"`
	Extra      []olExtraFct `json:"extra"`
}

// olColumns are an output's column pairs and the time of the event that gave them.
type olColumns struct {
	Out   olRef     `json:"out"`
	At    time.Time `json:"at"`
	Pairs []olPair  `json:"pairs"`
}

// olExtraFct is a fact of a non-complete event with the latest time it was seen at.
type olExtraFct struct {
	At   time.Time `json:"at"`
	Role string    `json:"role"` // in, out, col
	Ref  olRef     `json:"ref"`
	Pair *olPair   `json:"pair,omitempty"`
}

func (f olExtraFct) key() string {
	if f.Pair != nil {
		p := f.Pair
		return strings.Join([]string{"col", p.Out.NS, p.Out.Name, p.Field, p.In.NS, p.In.Name, p.From}, "\x1f")
	}
	return strings.Join([]string{f.Role, f.Ref.NS, f.Ref.Name}, "\x1f")
}

// merge folds one event into the state (see olState). It reports whether the state
// changed.
func (st *olState) merge(ev olEvent) bool {
	before, _ := json.Marshal(st)
	if ev.complete {
		if st.CompleteAt.IsZero() || !ev.at.Before(st.CompleteAt) {
			st.CompleteAt = ev.at
			st.Inputs, st.Outputs = sortedRefs(ev.facts.inputs), sortedRefs(ev.facts.outputs)
			kept := st.Extra[:0]
			for _, f := range st.Extra {
				if f.At.After(ev.at) {
					kept = append(kept, f)
				}
			}
			st.Extra = kept
		}
		for out, pairs := range ev.facts.columns {
			i := slices.IndexFunc(st.Columns, func(c olColumns) bool { return c.Out == out })
			switch {
			case i < 0:
				st.Columns = append(st.Columns, olColumns{Out: out, At: ev.at, Pairs: pairs})
			case !ev.at.Before(st.Columns[i].At):
				st.Columns[i] = olColumns{Out: out, At: ev.at, Pairs: pairs}
			}
		}
	} else if st.CompleteAt.IsZero() || ev.at.After(st.CompleteAt) {
		var facts []olExtraFct
		for _, r := range ev.facts.inputs {
			facts = append(facts, olExtraFct{At: ev.at, Role: "in", Ref: r})
		}
		for _, r := range ev.facts.outputs {
			facts = append(facts, olExtraFct{At: ev.at, Role: "out", Ref: r})
		}
		for _, pairs := range ev.facts.columns {
			for _, p := range pairs {
				facts = append(facts, olExtraFct{At: ev.at, Role: "col", Pair: &p})
			}
		}
		idx := make(map[string]int, len(st.Extra))
		for i, f := range st.Extra {
			idx[f.key()] = i
		}
		for _, f := range facts {
			if i, ok := idx[f.key()]; ok {
				if f.At.After(st.Extra[i].At) {
					st.Extra[i] = f
				}
				continue
			}
			idx[f.key()] = len(st.Extra)
			st.Extra = append(st.Extra, f)
		}
	}
	sort.Slice(st.Columns, func(i, j int) bool { return st.Columns[i].Out.String() < st.Columns[j].Out.String() })
	sort.Slice(st.Extra, func(i, j int) bool { return st.Extra[i].key() < st.Extra[j].key() })
	after, _ := json.Marshal(st)
	return string(before) != string(after)
}

// effective is what the state says the job reads and writes now.
func (st *olState) effective() (inputs, outputs []olRef, pairs []olPair) {
	in, out := map[olRef]bool{}, map[olRef]bool{}
	for _, r := range st.Inputs {
		in[r] = true
	}
	for _, r := range st.Outputs {
		out[r] = true
	}
	for _, f := range st.Extra {
		switch f.Role {
		case "in":
			in[f.Ref] = true
		case "out":
			out[f.Ref] = true
		}
	}
	seen := map[olPair]bool{}
	add := func(p olPair) {
		if out[p.Out] && !seen[p] {
			seen[p] = true
			pairs = append(pairs, p)
			in[p.In] = true // a column flows from it: it is read
		}
	}
	for _, c := range st.Columns {
		for _, p := range c.Pairs {
			add(p)
		}
	}
	for _, f := range st.Extra {
		if f.Pair != nil {
			add(*f.Pair)
		}
	}
	for r := range in {
		inputs = append(inputs, r)
	}
	for r := range out {
		outputs = append(outputs, r)
	}
	return sortedRefs(inputs), sortedRefs(outputs), pairs
}

func sortedRefs(rs []olRef) []olRef {
	out := slices.Clone(rs)
	slices.SortFunc(out, func(a, b olRef) int { return strings.Compare(a.String(), b.String()) })
	return slices.Compact(out)
}

// OpenLineageEvents reads OpenLineage events (a marked write for tokens): RunEvents,
// JobEvents (static lineage) and DatasetEvents, in any order and repeated. Each job's
// events are merged by eventTime (see olState) and the job's openlineage edges and
// destinations replaced by what the merge says: every input feeds every output, with the
// columnLineage facet's column map (direct for DIRECT/IDENTITY transformations).
//
// A dataset is namespace + name as the OpenLineage naming spec writes them: it is one
// of the workspace's datasets only when the namespace names the server of the dataset's
// connection (the server its DSN names, or a declared alias) and the name its database,
// schema and table (postgres {database}.{schema}.{table}, mysql {database}.{table}). An
// output that is no dataset of the workspace is a destination outside the warehouse.
//
// The batch comes decoded (ingest.DecodeOpenLineage): its refused events are listed in
// the result.
func (s *Service) OpenLineageEvents(ctx context.Context, batch ingest.OLBatch) (OpenLineageResult, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return OpenLineageResult{}, err
	}
	res := OpenLineageResult{Events: batch.Events, Accepted: batch.Accepted, Refused: batch.Refused, UnmatchedNames: []string{}}
	if res.Refused == nil {
		res.Refused = []ingest.RefusedEvent{}
	}
	valid := make([]olEvent, 0, len(batch.Lineage))
	for _, ev := range batch.Lineage {
		valid = append(valid, olEventOf(ev))
	}
	if len(valid) == 0 {
		return res, nil
	}
	names, err := s.store.FindByName(ctx, p.WorkspaceID)
	if err != nil {
		return res, err
	}
	ix := newOLIndex(names)
	jobs := map[string]bool{}
	for _, ev := range valid {
		jobs[ev.job] = true
	}
	keys := make([]string, 0, len(jobs))
	for k := range jobs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	unmatched := map[string]bool{}
	err = s.tx.InTx(ctx, func(ctx context.Context) error {
		stored, err := s.store.LockOpenLineageJobs(ctx, p.WorkspaceID, keys)
		if err != nil {
			return err
		}
		states := map[string]*olState{}
		for _, k := range keys {
			st := &olState{}
			if b := stored[k]; len(b) > 0 {
				if err := json.Unmarshal(b, st); err != nil {
					return vigia.Internal(err)
				}
			}
			states[k] = st
		}
		changed := map[string]bool{}
		for _, ev := range valid {
			if states[ev.job].merge(ev) {
				changed[ev.job] = true
			}
		}
		for _, k := range keys {
			st := states[k]
			if changed[k] {
				b, err := json.Marshal(st)
				if err != nil {
					return vigia.Internal(err)
				}
				if err := s.store.PutOpenLineageJob(ctx, p.WorkspaceID, k, b); err != nil {
					return err
				}
			}
			edges, dests, miss := ix.edges(st)
			for _, m := range miss {
				unmatched[m] = true
			}
			res.Edges += len(edges)
			res.Destinations += len(dests)
			if !changed[k] {
				continue
			}
			if _, err := s.replaceOrigin(ctx, p.WorkspaceID, KindOpenLineage, originOpenLineage+k, edges, dests); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return OpenLineageResult{}, err
	}
	res.Unmatched = len(unmatched)
	for m := range unmatched {
		res.UnmatchedNames = append(res.UnmatchedNames, m)
	}
	sort.Strings(res.UnmatchedNames)
	if len(res.UnmatchedNames) > maxUnmatchedNames {
		res.UnmatchedNames = res.UnmatchedNames[:maxUnmatchedNames]
	}
	s.projectNow(ctx, p.WorkspaceID)
	return res, nil
}

// olEventOf is a decoded event as the merge reads it: the stored state has its own
// types (olRef, olPair), kept apart from the decoding's.
func olEventOf(in ingest.OLEvent) olEvent {
	ref := func(r ingest.OLRef) olRef { return olRef{NS: r.Namespace, Name: r.Name} }
	refs := func(rs []ingest.OLRef) []olRef {
		var out []olRef
		for _, r := range rs {
			out = append(out, ref(r))
		}
		return out
	}
	ev := olEvent{complete: in.Complete, at: in.At, job: in.Job,
		facts: olFacts{inputs: refs(in.Inputs), outputs: refs(in.Outputs), columns: map[olRef][]olPair{}}}
	for out, cols := range in.Columns {
		pairs := make([]olPair, 0, len(cols))
		for _, c := range cols {
			pairs = append(pairs, olPair{Out: ref(c.Out), Field: c.Field, In: ref(c.In), From: c.From, Direct: c.Direct})
		}
		ev.facts.columns[ref(out)] = pairs
	}
	return ev
}

// olIndex matches OpenLineage datasets with the workspace's datasets.
type olIndex struct {
	// byNS lists, per canonical namespace, the datasets of the connections it names.
	byNS map[string][]NamedDataset
}

func newOLIndex(ds []NamedDataset) olIndex {
	ix := olIndex{byNS: map[string][]NamedDataset{}}
	for _, d := range ds {
		for _, ns := range d.Namespaces {
			if c, ok := vigia.CanonicalNamespace(ns); ok {
				ix.byNS[c] = append(ix.byNS[c], d)
			}
		}
	}
	return ix
}

// match finds the dataset an OpenLineage dataset names: the namespace must name the
// connection's server and the name its database, then the schema and table (exactly,
// else one match ignoring case, as producers may fold unquoted names).
func (ix olIndex) match(r olRef) (string, bool) {
	ns, ok := vigia.CanonicalNamespace(r.NS)
	if !ok {
		return "", false
	}
	var exact, folded []string
	for _, d := range ix.byNS[ns] {
		var want string
		switch d.ConnectionKind {
		case "postgres":
			if d.Database == "" {
				continue
			}
			want = d.Database + "." + d.Schema + "." + d.Table
		case "mysql":
			if d.Database != "" && !strings.EqualFold(d.Database, d.Schema) {
				continue
			}
			want = d.Schema + "." + d.Table
		case "sqlite":
			if r.Name == d.Table || strings.EqualFold(r.Name, d.Table) {
				want = r.Name
			} else {
				want = d.Schema + "." + d.Table
			}
		default:
			continue
		}
		switch {
		case r.Name == want:
			exact = append(exact, d.ID)
		case strings.EqualFold(r.Name, want):
			folded = append(folded, d.ID)
		}
	}
	if len(exact) > 0 {
		exact = dedupe(exact)
		return exact[0], len(exact) == 1
	}
	folded = dedupe(folded)
	if len(folded) == 1 {
		return folded[0], true
	}
	return "", false
}

// edges turns a job's merged state into openlineage edges (each matched input feeds
// each matched output), destinations (outputs that are no dataset of the workspace) and
// the unmatched inputs' names.
func (ix olIndex) edges(st *olState) ([]RecordEdge, []ExposureInput, []string) {
	inputs, outputs, pairs := st.effective()
	var inIDs []string
	inID := map[olRef]string{}
	var unmatched []string
	for _, r := range inputs {
		if id, ok := ix.match(r); ok {
			inID[r] = id
			inIDs = append(inIDs, id)
		} else {
			unmatched = append(unmatched, r.String())
		}
	}
	inIDs = dedupe(inIDs)
	var edges []RecordEdge
	var dests []ExposureInput
	for _, out := range outputs {
		dst, ok := ix.match(out)
		if !ok {
			name := out.String()
			if len(name) > 200 {
				name = name[len(name)-200:]
			}
			dests = append(dests, ExposureInput{Name: name, Type: ExposureTypeDestination, DatasetIDs: inIDs})
			continue
		}
		cols := map[string][]ColumnPair{}
		for _, p := range pairs {
			if p.Out != out {
				continue
			}
			if src, ok := inID[p.In]; ok {
				cols[src] = append(cols[src], ColumnPair{From: p.From, To: p.Field, Direct: p.Direct})
			}
		}
		for _, src := range inIDs {
			if src == dst {
				continue
			}
			c := cols[src]
			slices.SortFunc(c, func(a, b ColumnPair) int { return strings.Compare(a.To+"\x00"+a.From, b.To+"\x00"+b.From) })
			c = slices.Compact(c)
			edges = append(edges, RecordEdge{Edge: Edge{Source: src, Target: dst, Columns: c, ColumnLevel: len(c) > 0}})
		}
	}
	return edges, dests, unmatched
}
