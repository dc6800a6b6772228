//go:build race

package demo_test

// testScale keeps builds small under the race detector, which slows the pure-Go SQLite
// about fifty times; the non-race run builds every pack at scale 1.
const testScale = 0.1
