package validate

import (
	"context"
	"strings"

	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/connection"
	"github.com/vigia-data/vigia/rule"
	"github.com/vigia-data/vigia/rulesql"
	"github.com/vigia-data/vigia/source"
)

// Connections opens the reference's source for referential lookups.
type Connections interface {
	Connection(ctx context.Context, ref string) (connection.Connection, error)
	Open(ctx context.Context, c connection.Connection, rec source.Recorder, label string) (source.Source, error)
}

// sessionLabel names validation sessions on the source.
const sessionLabel = "vigia validate"

// sourceRefs looks referential keys up on the reference's source, live: Vigia keeps no
// key of any dataset. Only the batch's distinct keys travel to the source, in
// statements that answer counts; the keys missing from the reference are found by
// splitting the key set where the count falls short (group testing), so a batch whose
// keys are all present costs one statement.
type sourceRefs struct {
	datasets Datasets
	conns    Connections
	dataset  catalog.Dataset
	src      source.Source
	srcErr   bool
}

// Column reads the reference column's class from the catalog, as the caller sees it: a
// reference the caller cannot see is never looked up (its keys would be revealed).
func (s *sourceRefs) Column(ctx context.Context, r rule.ScanRule) (bool, string) {
	ref, err := s.datasets.Dataset(ctx, r.Ref.ID)
	if err != nil {
		return false, NotApplicableReferenceHidden
	}
	for _, c := range ref.Columns {
		if c.Name == r.Params.RefColumn {
			return c.Class == source.ClassNumeric, ""
		}
	}
	return false, NotApplicableReferenceGone
}

// Missing returns the keys the reference does not hold.
func (s *sourceRefs) Missing(ctx context.Context, r rule.ScanRule, numeric bool, keys map[string]string) (map[string]bool, string) {
	src, na := s.open(ctx)
	if na != "" {
		return nil, na
	}
	d := rulesql.Dialect(src.Dialect())
	col := rulesql.QuoteIdent(d, r.Params.RefColumn)
	from := rulesql.TableRef(d, rulesql.Table{Schema: r.Ref.Schema, Name: r.Ref.Table})
	list := make([]string, 0, len(keys))
	for k := range keys {
		list = append(list, k)
	}
	missing := map[string]bool{}
	budget := MaxLookups
	// present counts the distinct reference values among part's keys.
	present := func(part []string) (int64, bool) {
		budget--
		lits := make([]string, len(part))
		for i, k := range part {
			lits[i] = keys[k]
		}
		n, _, err := src.QueryInt(ctx, "SELECT COUNT(DISTINCT "+col+") FROM "+from+" WHERE "+col+" IN ("+strings.Join(lits, ", ")+")")
		return n, err == nil
	}
	var split func(part []string, found int64) bool
	split = func(part []string, found int64) bool {
		switch {
		case found >= int64(len(part)):
			return true
		case found == 0:
			for _, k := range part {
				missing[k] = true
			}
			return true
		case budget <= 1:
			return false
		}
		half := len(part) / 2
		a, b := part[:half], part[half:]
		na, ok := present(a)
		if !ok {
			return false
		}
		// The halves hold disjoint keys: b's count is found minus a's.
		return split(a, na) && split(b, found-na)
	}
	n, ok := present(list)
	if !ok {
		return nil, NotApplicableReferenceGone
	}
	if !split(list, n) {
		if budget <= 1 {
			return nil, NotApplicableReferenceBudget
		}
		return nil, NotApplicableReferenceGone
	}
	return missing, ""
}

// open opens the dataset's source once per validation.
func (s *sourceRefs) open(ctx context.Context) (source.Source, string) {
	if s.src != nil {
		return s.src, ""
	}
	if s.srcErr {
		return nil, NotApplicableReferenceGone
	}
	c, err := s.conns.Connection(ctx, s.dataset.ConnectionID)
	if err == nil {
		s.src, err = s.conns.Open(ctx, c, nil, sessionLabel)
	}
	if err != nil {
		s.srcErr = true
		return nil, NotApplicableReferenceGone
	}
	return s.src, ""
}

// close closes the source if one was opened.
func (s *sourceRefs) close() {
	if s.src != nil {
		_ = s.src.Close()
	}
}
