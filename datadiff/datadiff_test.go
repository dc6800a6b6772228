package datadiff_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/datadiff"
	"github.com/vigia-data/vigia/source"
)

// slowSource answers nothing until its statement's context ends, as a source reading a
// huge table would.
type slowSource struct{ source.Source }

func (slowSource) Dialect() string { return "postgres" }

func (slowSource) QueryInt(ctx context.Context, _ string) (int64, bool, error) {
	<-ctx.Done()
	return 0, false, &source.Error{Reason: source.ReasonTimeout}
}

func (slowSource) QueryRows(ctx context.Context, _ string, _ int) ([][]*string, error) {
	<-ctx.Done()
	return nil, &source.Error{Reason: source.ReasonTimeout}
}

func TestTimeBudgetExceededIsAClear422(t *testing.T) {
	cols := []catalog.Column{{Name: "id", Class: source.ClassNumeric, DataType: "text"}, {Name: "v", Class: source.ClassText}}
	side := datadiff.Side{Source: slowSource{}, Schema: "public", Table: "t", Columns: cols}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	// slowSource answers only when its context ends: returning at all shows that the
	// budget stopped the work.
	_, err := datadiff.CompareSources(ctx, side, side, []string{"id"}, []string{"id", "v"}, 64, 10, nil)
	var ve *vigia.Error
	if !errors.As(err, &ve) || ve.Code != datadiff.CodeTimeBudget || ve.Kind != vigia.KindInvalid {
		t.Fatalf("err %v", err)
	}
}

// rowsSource answers fixed rows to every QueryRows: bucket sums first, then leaf rows.
type rowsSource struct {
	source.Source
	answers [][][]*string
	calls   int
}

func (s *rowsSource) Dialect() string { return "sqlite" }

func (s *rowsSource) QueryRows(_ context.Context, _ string, max int) ([][]*string, error) {
	a := s.answers[s.calls]
	s.calls++
	if len(a) > max {
		return nil, &source.Error{Reason: source.ReasonResult}
	}
	return a, nil
}

func str(v string) *string { return &v }

func TestDifferencesAreCountedPerKeyAndColumn(t *testing.T) {
	cols := []catalog.Column{{Name: "k", Class: source.ClassText}, {Name: "v", Class: source.ClassText}}
	row := func(vals ...string) []*string {
		out := make([]*string, len(vals))
		for i := range vals {
			out[i] = str(vals[i])
		}
		return out
	}
	a := &rowsSource{answers: [][][]*string{
		{row("1", "3", "10", "20"), row("2", "2", "5", "5")},
		{row("x", "aaaa1111", "bbbb"), row("y", "cccc", "dddd"), row("z", "eeee", "ffff")},
	}}
	b := &rowsSource{answers: [][][]*string{
		{row("1", "3", "11", "20"), row("2", "2", "5", "5")},
		{row("x", "aaaa1111", "bbbb"), row("y", "cccc", "0000"), row("w", "eeee", "ffff")},
	}}
	rep, err := datadiff.CompareSources(context.Background(), datadiff.Side{Source: a, Table: "t", Columns: cols},
		datadiff.Side{Source: b, Table: "t", Columns: cols}, []string{"k"}, []string{"k", "v"}, 64, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.RowsA != 5 || rep.RowsB != 5 || rep.Method.DifferingBuckets != 1 || rep.OnlyInA != 1 || rep.OnlyInB != 1 || rep.Changed != 1 ||
		rep.ChangedByColumn["v"] != 1 || len(rep.ChangedByColumn) != 1 || *rep.SampleOnlyInA[0][0] != "z" || *rep.SampleOnlyInB[0][0] != "w" ||
		*rep.SampleChanged[0][0] != "y" {
		t.Fatalf("report %+v", rep)
	}
	if rep.Method.Statements != 4 || rep.Method.RowsFetched != 10 {
		t.Fatalf("method %+v", rep.Method)
	}
}
