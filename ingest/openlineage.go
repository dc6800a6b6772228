package ingest

import (
	"encoding/json"
	"slices"
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
)

// Kinds of OpenLineage events (spec 2-0-2: RunEvent, JobEvent, DatasetEvent).
const (
	olRun     = "run"
	olJob     = "job"
	olDataset = "dataset"
)

// TypeOpenLineageKind is the field type of a body that is no RunEvent, JobEvent or
// DatasetEvent.
const TypeOpenLineageKind = "openlineage_kind_unsupported"

// OLRef names an OpenLineage dataset: namespace and name.
type OLRef struct {
	Namespace string
	Name      string
}

func (r OLRef) String() string { return r.Namespace + "/" + r.Name }

// OLColumn is one column (Field) of an output and a column (From) of an input it
// derives from; Direct when it is a plain copy.
type OLColumn struct {
	Out    OLRef
	Field  string
	In     OLRef
	From   string
	Direct bool
}

// OLEvent is a validated event that tells lineage.
type OLEvent struct {
	// Job is the merge key: namespace/name of the job, or dataset:namespace/name.
	Job string
	// Complete events carry the whole of a job's lineage: a RunEvent COMPLETE, a
	// JobEvent (static lineage), a DatasetEvent's columnLineage. The others add to it.
	Complete bool
	At       time.Time
	Inputs   []OLRef
	Outputs  []OLRef
	// Columns are, per output that carries the columnLineage facet, its column pairs
	// (sorted, without repeats; empty when the facet names none).
	Columns map[OLRef][]OLColumn
}

// RefusedEvent is an event of a batch that was not read, with why (never its content).
type RefusedEvent struct {
	Index  int
	Fields []vigia.FieldError
}

// OLBatch is a decoded body of OpenLineage events.
type OLBatch struct {
	// Events counts the events of the body, Accepted those read (an event that tells
	// nothing of lineage — a failed run, a DatasetEvent without columnLineage — is read
	// and is not in Lineage).
	Events   int
	Accepted int
	Refused  []RefusedEvent
	Lineage  []OLEvent
}

// DecodeOpenLineage validates a batch of events (RunEvents, JobEvents, DatasetEvents).
// With single, the body was one event: a refused event is KindInvalid. Otherwise a
// refused event is listed in the batch (its fields located by its index) and the
// others are read. More than MaxOpenLineageBatch events is KindInvalid.
func DecodeOpenLineage(events []json.RawMessage, single bool) (OLBatch, error) {
	b := OLBatch{Events: len(events), Refused: []RefusedEvent{}}
	if len(events) > MaxOpenLineageBatch {
		return b, vigia.Invalid(vigia.Field("too_long", map[string]any{"max_length": MaxOpenLineageBatch}))
	}
	for i, raw := range events {
		var loc []string
		if !single {
			loc = []string{itoa(i)}
		}
		ev, ok, fields := decodeOLEvent(raw, loc)
		if len(fields) > 0 {
			if single {
				return b, vigia.Invalid(fields...)
			}
			b.Refused = append(b.Refused, RefusedEvent{Index: i, Fields: fields})
			continue
		}
		b.Accepted++
		if ok {
			b.Lineage = append(b.Lineage, ev)
		}
	}
	return b, nil
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

type olTransformation struct {
	Type    string `json:"type"`
	Subtype string `json:"subtype"`
	Masking bool   `json:"masking"`
}

type olDatasetIn struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Facets    struct {
		ColumnLineage *struct {
			Fields map[string]struct {
				InputFields []struct {
					Namespace       string             `json:"namespace"`
					Name            string             `json:"name"`
					Field           string             `json:"field"`
					Transformations []olTransformation `json:"transformations"`
				} `json:"inputFields"`
				// TransformationType is the facet's older form: IDENTITY or MASKED.
				TransformationType string `json:"transformationType"`
			} `json:"fields"`
		} `json:"columnLineage"`
	} `json:"facets"`
}

// decodeOLEvent validates one event. An event that tells nothing of lineage (a failed
// or aborted run, a DatasetEvent without columnLineage) comes back with ok false.
func decodeOLEvent(raw json.RawMessage, loc []string) (OLEvent, bool, []vigia.FieldError) {
	at := func(l ...string) []string { return append(slices.Clone(loc), l...) }
	var in olEventIn
	if err := json.Unmarshal(raw, &in); err != nil {
		return OLEvent{}, false, []vigia.FieldError{vigia.Field("json_invalid", nil, loc...)}
	}
	var kind string
	switch {
	case len(in.Run) > 0 && string(in.Run) != "null" && in.Job != nil:
		kind = olRun
	case in.Job != nil && in.Dataset == nil:
		kind = olJob
	case in.Dataset != nil && in.Job == nil:
		kind = olDataset
	default:
		// Neither a run, a job nor a dataset event: say so, not which field is missing.
		return OLEvent{}, false, []vigia.FieldError{vigia.Field(TypeOpenLineageKind, nil, loc...)}
	}
	var fields []vigia.FieldError
	t, ok := parseEventTime(in.EventTime)
	if !ok {
		fields = append(fields, vigia.Field("datetime_parsing", nil, at("eventTime")...))
	}
	ev := OLEvent{At: t}
	if kind != olDataset {
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
		return OLEvent{}, false, fields
	}
	switch kind {
	case olRun:
		switch strings.ToUpper(in.EventType) {
		case "FAIL", "ABORT":
			return OLEvent{}, false, nil // a failed run tells nothing about lineage
		case "COMPLETE":
			ev.Complete = true
		}
		ev.Job = in.Job.Namespace + "/" + in.Job.Name
	case olJob:
		ev.Complete = true
		ev.Job = in.Job.Namespace + "/" + in.Job.Name
	case olDataset:
		// A dataset's static lineage is its columnLineage facet; without it the event
		// describes the dataset only.
		if in.Dataset.Facets.ColumnLineage == nil {
			return OLEvent{}, false, nil
		}
		ev.Complete = true
		ev.Job = "dataset:" + in.Dataset.Namespace + "/" + in.Dataset.Name
		in.Outputs = []olDatasetIn{*in.Dataset}
	}
	olFactsOf(&ev, in, &fields, at)
	if len(fields) > 0 {
		return OLEvent{}, false, fields
	}
	return ev, true, nil
}

// olFactsOf reads an event's inputs, outputs and column pairs into ev.
func olFactsOf(ev *OLEvent, in olEventIn, fields *[]vigia.FieldError, at func(...string) []string) {
	ev.Columns = map[OLRef][]OLColumn{}
	for _, d := range in.Inputs {
		ev.Inputs = append(ev.Inputs, OLRef{Namespace: d.Namespace, Name: d.Name})
	}
	for i, d := range in.Outputs {
		out := OLRef{Namespace: d.Namespace, Name: d.Name}
		ev.Outputs = append(ev.Outputs, out)
		cl := d.Facets.ColumnLineage
		if cl == nil {
			continue
		}
		pairs := []OLColumn{}
		for field, fl := range cl.Fields {
			for _, inf := range fl.InputFields {
				if !cleanName(field) || !cleanName(inf.Namespace) || !cleanName(inf.Name) || !cleanName(inf.Field) ||
					inf.Namespace == "" || inf.Name == "" || inf.Field == "" {
					*fields = append(*fields, vigia.Field("value_error", nil, at("outputs", itoa(i), "facets", "columnLineage")...))
					return
				}
				flows, direct := transformation(fl.TransformationType, inf.Transformations)
				if !flows {
					continue
				}
				pairs = append(pairs, OLColumn{Out: out, Field: field, In: OLRef{Namespace: inf.Namespace, Name: inf.Name}, From: inf.Field, Direct: direct})
			}
		}
		slices.SortFunc(pairs, func(a, b OLColumn) int {
			return strings.Compare(a.Field+"\x1f"+a.In.String()+"\x1f"+a.From, b.Field+"\x1f"+b.In.String()+"\x1f"+b.From)
		})
		ev.Columns[out] = slices.Compact(pairs)
	}
}

// transformation reads an input field's transformations: it flows into the output
// column when one of them is DIRECT (INDIRECT ones — filters, joins, sorts, groupings —
// only shape the rows), and the column is a plain copy (direct) when one is
// DIRECT/IDENTITY and none masks. Without transformations (older producers) the field
// flows, and the facet's deprecated transformationType IDENTITY says it is a copy.
func transformation(legacyType string, ts []olTransformation) (flows, direct bool) {
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
