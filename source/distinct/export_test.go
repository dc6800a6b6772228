package distinct

// Parts exposes the estimator's steps to the tests: the hybrid's value before it is
// moved, the close-fit range and the 95% interval before clamping.
func Parts(s Sample, population int64) (hybrid, likelyLo, likelyHi, lower, upper float64) {
	e := estimator{s: s, n: float64(s.N), d: float64(s.D), bigN: float64(population)}
	e.q = e.n / e.bigN
	e.f1, e.f2 = float64(s.Freq[1]), float64(s.Freq[2])
	hybrid = e.d
	switch {
	case e.skewed() && e.f1 > 0:
		hybrid = e.shlosser()
	case e.f1 > 0:
		hybrid = e.chaoLin()
	}
	likelyLo, likelyHi, _ = e.likelyBounds()
	lower, upper, _ = e.confidenceBounds()
	return hybrid, likelyLo, likelyHi, lower, upper
}
