// Package bench holds Vigia's performance benchmarks, run on this machine's local services
// and printed as readable reports (`vigia bench ...`).
//
// RunProfile measures the profiling path against a generated Postgres table: the standard
// profile (one aggregate statement plus one bounded sample) against a plain count(*), one
// hand-written aggregate of the same statistics, and the one-query-per-column-per-metric
// pattern of a naive profiler; it splits the profile into its aggregate and its sample
// phase and checks every distinct-count estimate against the exact count(DISTINCT).
// The targets it reports are checked, never tuned: a failing target is printed as FAIL.
package bench
