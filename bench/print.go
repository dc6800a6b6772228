package bench

import (
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Print writes the report as readable tables: timings, ratios, targets with PASS/FAIL,
// and the distinct estimates against the exact counts.
func (r ProfileReport) Print(w io.Writer) {
	built := "reused"
	if r.Built {
		built = "built in " + fmtDuration(r.BuildTime)
	}
	fmt.Fprintf(w, "Profile benchmark: Postgres, %s rows x %d columns (%s, %s), database %s\n",
		groupDigits(r.Rows), r.Columns, fmtBytes(r.TableBytes), built, r.Database)
	fmt.Fprintf(w, "Medians of %d timed rounds after one untimed warm-up round; each round runs (a)-(e) and the replay once, interleaved (warm cache); (f) runs once.\n", r.Runs)
	fmt.Fprintf(w, "Profile's sessions run with JIT off (connect sets it); (a), (b), (c) and (f) run with the server's defaults.\n")
	if r.LoadBefore >= 0 && r.LoadAfter >= 0 {
		fmt.Fprintf(w, "Machine load (1-min average): %.2f at start, %.2f at end, on %d CPUs.\n", r.LoadBefore, r.LoadAfter, runtime.NumCPU())
	}
	fmt.Fprintf(w, "Profile: depth standard, %d statements, sample size %s: masks and semantic types on %s rows (%s), distinct estimates on %s rows (%s)\n\n",
		r.ProfileStatements, groupDigits(int64(r.RequestedSample)), groupDigits(int64(r.SampleSize)), r.SampleMethod,
		groupDigits(int64(r.DistinctSampleSize)), r.DistinctSampleMethod)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "measurement\tmedian\tmin\tmax\t")
	row := func(name string, t Timing) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", name, fmtDuration(t.Median), fmtDuration(t.Min()), fmtDuration(t.Max()))
	}
	row("(a) SELECT count(*)", r.CountStar)
	row("(b) hand-written single aggregate", r.HandAggregate)
	row("(b') the same in the connector's session setting (JIT off)", r.HandAggregateNoJIT)
	row(fmt.Sprintf("(c) per-column pattern, %d statements", r.PerColumnStatements), r.PerColumn)
	row("(d) Profile via connect.Open", r.Profile)
	row("      its aggregate statement (query log)", r.InProfileAggregate)
	row("      its sample statements + per-row work (query log)", r.InProfileSample)
	row("      the rest: estimation, freshness (query log)", r.InProfileFinish)
	row("(e) ProfileSQL aggregate alone (JIT off, as in Profile)", r.ProfileAggregate)
	fmt.Fprintf(tw, "    rest = (d) - (e)\t%s\t\t\t\n", fmtDuration(r.ProfileRest))
	row("    replay: masks sample read", r.SampleRead)
	row("    replay: masks + semantic types", r.MasksSemantic)
	row("    replay: distinct sample read (hashes)", r.DistinctSampleRead)
	row("    replay: distinct estimation (frequencies + estimator)", r.DistinctEstimation)
	row("(f) exact count(DISTINCT) of all columns", r.ExactDistinct)
	_ = tw.Flush()

	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ratio\tvalue\ttarget\tresult\thow")
	for _, t := range r.Targets {
		result := "FAIL"
		if t.Pass {
			result = "PASS"
		}
		target := "<= " + strconv.FormatFloat(t.Limit, 'f', 2, 64)
		value := strconv.FormatFloat(t.Value, 'f', 3, 64)
		if t.Name == "distinct truth inside CI95" {
			target = "all"
			value = strconv.FormatFloat(100*t.Value, 'f', 1, 64) + "%"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.Name, value, target, result, t.How)
	}
	fmt.Fprintf(tw, "profile / (b')\t%.3f\t\t\tinformation: against the hand-written aggregate with JIT off too\n", r.ProfileVsHandNoJIT)
	fmt.Fprintf(tw, "aggregate alone / (b)\t%.3f\t\t\tinformation: the generated aggregate against the hand-written one\n", r.AggregateVsHand)
	fmt.Fprintf(tw, "distinct sample + estimation / (b)\t%.3f\t\t\tinformation: the approximate distinct's own share, replayed\n", r.DistinctVsHand)
	fmt.Fprintf(tw, "sample statements / (a)\t%.3f\t\t\tinformation: Profile's own sample statements with all their per-row work (query log)\n", r.SampleVsCount)
	_ = tw.Flush()

	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "column\tclass\ttrue distinct\testimate (run 1)\tCI95 (run 1)\tmethod\trel.err median\tworst\tCI width median\tinside CI")
	for _, c := range r.Distinct {
		if len(c.Estimates) == 0 {
			fmt.Fprintf(tw, "%s\t%s\t%s\t-\t-\t-\t-\t-\t-\t-\n", c.Column, c.Class, groupDigits(c.True))
			continue
		}
		e := c.Estimates[0]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t[%s, %s]\t%s\t%s\t%s\t%s\t%d/%d\n", c.Column, c.Class, groupDigits(c.True),
			groupDigits(int64(e.Value+0.5)), groupDigits(int64(e.CI95[0]+0.5)), groupDigits(int64(e.CI95[1]+0.5)),
			e.Method, fmtPct(c.MedianRelErr), fmtPct(c.WorstRelErr), fmtPct(c.MedianWidth), c.Inside, len(c.Estimates))
	}
	_ = tw.Flush()

	verdict := "all targets PASS"
	if !r.Passed() {
		var failed []string
		for _, t := range r.Targets {
			if !t.Pass {
				failed = append(failed, t.Name)
			}
		}
		verdict = "FAIL: " + strings.Join(failed, "; ")
	}
	fmt.Fprintf(w, "\n%s\n", verdict)
}

func fmtPct(f float64) string {
	return strconv.FormatFloat(100*f, 'f', 1, 64) + "%"
}

func fmtBytes(n int64) string {
	const mib = 1 << 20
	if n >= 1<<30 {
		return strconv.FormatFloat(float64(n)/(1<<30), 'f', 2, 64) + " GiB"
	}
	return strconv.FormatFloat(float64(n)/mib, 'f', 1, 64) + " MiB"
}

// groupDigits writes n with thousands separators: 5,000,000.
func groupDigits(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
