package ingest

import (
	"encoding/json"
	"testing"
)

func TestOpenLineageKinds(t *testing.T) {
	for _, c := range []struct {
		body     string
		refused  string
		job      string
		complete bool
	}{
		{`{"eventTime":"2026-11-20T10:00:00Z","job":{"namespace":"n","name":"j"},"inputs":[],"outputs":[]}`, "", "n/j", true},
		{`{"eventTime":"2021-11-03T10:53:52.427343","dataset":{"namespace":"n","name":"d","facets":{}}}`, "", "", false},
		{`{"eventTime":"2021-11-03T10:53:52.427343","dataset":{"namespace":"n","name":"d","facets":{"columnLineage":{"fields":{}}}}}`, "", "dataset:n/d", true},
		{`{"eventType":"FAIL","eventTime":"2026-11-20T10:00:00Z","run":{"runId":"x"},"job":{"namespace":"n","name":"j"}}`, "", "", false},
		{`{"eventTime":"2026-11-20T10:00:00Z","producer":"x"}`, TypeOpenLineageKind, "", false},
		{`{"eventType":"START","eventTime":"yesterday","run":{"runId":"x"},"job":{"namespace":"n","name":"j"}}`, "datetime_parsing", "", false},
		{`{"eventType":"START","eventTime":"2026-11-20T10:00:00Z","run":{"runId":"x"},"job":{"namespace":"n","name":"a\u0000b"}}`, "value_error", "", false},
	} {
		ev, _, fields := decodeOLEvent(json.RawMessage(c.body), []string{"body"})
		switch {
		case c.refused != "" && (len(fields) == 0 || fields[0].Type != c.refused):
			t.Errorf("%s: fields %+v, want %s", c.body, fields, c.refused)
		case c.refused == "" && len(fields) > 0:
			t.Errorf("%s: refused %+v", c.body, fields)
		case ev.Job != c.job || ev.Complete != c.complete:
			t.Errorf("%s: job %q complete %v", c.body, ev.Job, ev.Complete)
		}
	}
}
