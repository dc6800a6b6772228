//go:build !race

package demo_test

// testScale is the row scale of the tests: 1 without the race detector (see race_on_test.go).
const testScale = 1.0
