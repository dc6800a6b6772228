package lineage

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/vigia-data/vigia"
)

// Bounds of OpenLineage input.
const (
	// MaxOpenLineageBatch is how many events one batch may carry.
	MaxOpenLineageBatch = 1000
	// maxOLDatasets bounds the inputs and outputs of one event.
	maxOLDatasets = 1000
	// maxOLName bounds a namespace or a name.
	maxOLName = 1000
	// maxUnmatchedNames bounds the unmatched names a result lists.
	maxUnmatchedNames = 100
)

// Kinds of OpenLineage events (spec 2-0-2: RunEvent, JobEvent, DatasetEvent).
const (
	olRun     = "run"
	olJob     = "job"
	olDataset = "dataset"
)

// Field types of refused events.
const (
	// TypeOpenLineageKind: the body is no RunEvent, JobEvent or DatasetEvent.
	TypeOpenLineageKind = "openlineage_kind_unsupported"
)

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
	Refused        []RefusedEvent
}

// RefusedEvent is an event of a batch that was not read, with why (never its content).
type RefusedEvent struct {
	Index  int
	Fields []vigia.FieldError
}

// olEventIn is the part of an OpenLineage event lineage reads.
type olEventIn struct {
	EventType string          `json:"eventType"`
	EventTime string          `json:"eventTime"`
	Run       json.RawMessage `json:"run"`
	Job       *struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"job"`
	Dataset *olDatasetIn  `json:"dataset"`
	Inputs  []olDatasetIn `json:"inputs"`
	Outputs []olDatasetIn `json:"outputs"`
}

type olDatasetIn struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Facets    struct {
		ColumnLineage *struct {
			Fields map[string]struct {
				InputFields []struct {
					Namespace       string `json:"namespace"`
					Name            string `json:"name"`
					Field           string `json:"field"`
					Transformations []struct {
						Type    string `json:"type"`
						Subtype string `json:"subtype"`
						Masking bool   `json:"masking"`
					} `json:"transformations"`
				} `json:"inputFields"`
				// TransformationType is the facet's older form: IDENTITY or MASKED.
				TransformationType string `json:"transformationType"`
			} `json:"fields"`
		} `json:"columnLineage"`
	} `json:"facets"`
}

// olEvent is a validated event as the merge reads it.
type olEvent struct {
	kind string
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
// With single, the body was one event: a refused event is KindInvalid. Otherwise a
// refused event is listed in the result and the others are read.
func (s *Service) OpenLineageEvents(ctx context.Context, events []json.RawMessage, single bool) (OpenLineageResult, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return OpenLineageResult{}, err
	}
	res := OpenLineageResult{Events: len(events), Refused: []RefusedEvent{}, UnmatchedNames: []string{}}
	if len(events) > MaxOpenLineageBatch {
		return res, vigia.Invalid(vigia.Field("too_long", map[string]any{"max_length": MaxOpenLineageBatch}))
	}
	var valid []olEvent
	for i, raw := range events {
		var loc []string
		if !single {
			loc = []string{itoa(i)}
		}
		ev, fields := decodeOpenLineage(raw, loc)
		if len(fields) > 0 {
			if single {
				return res, vigia.Invalid(fields...)
			}
			res.Refused = append(res.Refused, RefusedEvent{Index: i, Fields: fields})
			continue
		}
		res.Accepted++
		if ev.job != "" {
			valid = append(valid, ev)
		}
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

// decodeOpenLineage validates one event. An event that tells nothing of lineage (a
// failed or aborted run, a DatasetEvent without columnLineage) comes back with no job.
func decodeOpenLineage(raw json.RawMessage, loc []string) (olEvent, []vigia.FieldError) {
	at := func(l ...string) []string { return append(slices.Clone(loc), l...) }
	var in olEventIn
	if err := json.Unmarshal(raw, &in); err != nil {
		return olEvent{}, []vigia.FieldError{vigia.Field("json_invalid", nil, loc...)}
	}
	var ev olEvent
	switch {
	case len(in.Run) > 0 && string(in.Run) != "null" && in.Job != nil:
		ev.kind = olRun
	case in.Job != nil && in.Dataset == nil:
		ev.kind = olJob
	case in.Dataset != nil && in.Job == nil:
		ev.kind = olDataset
	default:
		// Neither a run, a job nor a dataset event: say so, not which field is missing.
		return olEvent{}, []vigia.FieldError{vigia.Field(TypeOpenLineageKind, nil, loc...)}
	}
	var fields []vigia.FieldError
	t, ok := parseEventTime(in.EventTime)
	if !ok {
		fields = append(fields, vigia.Field("datetime_parsing", nil, at("eventTime")...))
	}
	ev.at = t
	if ev.kind != olDataset {
		if in.Job.Namespace == "" || in.Job.Name == "" || !cleanName(in.Job.Namespace) || !cleanName(in.Job.Name) {
			fields = append(fields, vigia.Field("value_error", map[string]any{"min_length": 1, "max_length": maxOLName}, at("job")...))
		}
	}
	if len(in.Inputs) > maxOLDatasets || len(in.Outputs) > maxOLDatasets {
		fields = append(fields, vigia.Field("too_long", map[string]any{"max_length": maxOLDatasets}, at("inputs")...))
	}
	check := func(d olDatasetIn, l ...string) {
		if !cleanName(d.Namespace) || !cleanName(d.Name) || d.Namespace == "" || d.Name == "" {
			fields = append(fields, vigia.Field("value_error", map[string]any{"min_length": 1, "max_length": maxOLName}, at(l...)...))
		}
	}
	for i, d := range in.Inputs {
		check(d, "inputs", itoa(i))
	}
	for i, d := range in.Outputs {
		check(d, "outputs", itoa(i))
	}
	if in.Dataset != nil {
		check(*in.Dataset, "dataset")
	}
	if len(fields) > 0 {
		return olEvent{}, fields
	}
	switch ev.kind {
	case olRun:
		switch strings.ToUpper(in.EventType) {
		case "FAIL", "ABORT":
			return ev, nil // a failed run tells nothing about lineage
		case "COMPLETE":
			ev.complete = true
		}
		ev.job = in.Job.Namespace + "/" + in.Job.Name
	case olJob:
		ev.complete = true
		ev.job = in.Job.Namespace + "/" + in.Job.Name
	case olDataset:
		// A dataset's static lineage is its columnLineage facet; without it the event
		// describes the dataset only.
		if in.Dataset.Facets.ColumnLineage == nil {
			return ev, nil
		}
		ev.complete = true
		ev.job = "dataset:" + in.Dataset.Namespace + "/" + in.Dataset.Name
		in.Outputs = []olDatasetIn{*in.Dataset}
	}
	ev.facts = olFactsOf(in, &fields, at)
	if len(fields) > 0 {
		return olEvent{}, fields
	}
	return ev, nil
}

// olFactsOf reads an event's inputs, outputs and column pairs.
func olFactsOf(in olEventIn, fields *[]vigia.FieldError, at func(...string) []string) olFacts {
	f := olFacts{columns: map[olRef][]olPair{}}
	for _, d := range in.Inputs {
		f.inputs = append(f.inputs, olRef{NS: d.Namespace, Name: d.Name})
	}
	for i, d := range in.Outputs {
		out := olRef{NS: d.Namespace, Name: d.Name}
		f.outputs = append(f.outputs, out)
		cl := d.Facets.ColumnLineage
		if cl == nil {
			continue
		}
		pairs := []olPair{}
		for field, fl := range cl.Fields {
			for _, inf := range fl.InputFields {
				if !cleanName(field) || !cleanName(inf.Namespace) || !cleanName(inf.Name) || !cleanName(inf.Field) ||
					inf.Namespace == "" || inf.Name == "" || inf.Field == "" {
					*fields = append(*fields, vigia.Field("value_error", nil, at("outputs", itoa(i), "facets", "columnLineage")...))
					return f
				}
				flows, direct := transformation(fl.TransformationType, inf.Transformations)
				if !flows {
					continue
				}
				pairs = append(pairs, olPair{Out: out, Field: field, In: olRef{NS: inf.Namespace, Name: inf.Name}, From: inf.Field, Direct: direct})
			}
		}
		slices.SortFunc(pairs, func(a, b olPair) int {
			return strings.Compare(a.Field+"\x1f"+a.In.String()+"\x1f"+a.From, b.Field+"\x1f"+b.In.String()+"\x1f"+b.From)
		})
		f.columns[out] = slices.Compact(pairs)
	}
	return f
}

// transformation reads an input field's transformations: it flows into the output
// column when one of them is DIRECT (INDIRECT ones — filters, joins, sorts, groupings —
// only shape the rows), and the column is a plain copy (direct) when one is
// DIRECT/IDENTITY and none masks. Without transformations (older producers) the field
// flows, and the facet's deprecated transformationType IDENTITY says it is a copy.
func transformation(legacyType string, ts []struct {
	Type    string `json:"type"`
	Subtype string `json:"subtype"`
	Masking bool   `json:"masking"`
}) (flows, direct bool) {
	if len(ts) == 0 {
		return true, strings.EqualFold(legacyType, "IDENTITY")
	}
	masked := false
	for _, t := range ts {
		if strings.EqualFold(t.Type, "DIRECT") {
			flows = true
			if strings.EqualFold(t.Subtype, "IDENTITY") {
				direct = true
			}
		}
		masked = masked || t.Masking
	}
	return flows, direct && !masked
}

// parseEventTime reads an eventTime: RFC 3339, or without a zone (as some clients send
// it), then read as UTC.
func parseEventTime(s string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// cleanName reports whether a namespace, name or field can be stored: not too long, no
// NUL or other control characters.
func cleanName(s string) bool {
	if len(s) > maxOLName {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
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
