package main

import (
	"testing"
	"time"
)

func TestParseLifetime(t *testing.T) {
	for in, want := range map[string]time.Duration{"90d": 90 * 24 * time.Hour, "1d": 24 * time.Hour, "12h": 12 * time.Hour, "1h30m": 90 * time.Minute} {
		if got, err := parseLifetime(in); err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0d", "-3d", "d", "x", "-1h", "0s", "3w"} {
		if _, err := parseLifetime(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}
