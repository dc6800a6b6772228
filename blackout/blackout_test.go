package blackout_test

import (
	"testing"
	"time"

	"github.com/vigia-data/vigia/blackout"
)

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// A weekly window is read in its zone: its occurrences follow the local clock across
// daylight-saving changes, an overnight window belongs to the day it starts, and the
// next occurrence is given when none is in force.
func TestWeeklyWindowFollowsLocalClock(t *testing.T) {
	// Saturday and Sunday 01:00-03:00 in Lisbon. 2026-03-29 (Sunday) the clocks jump
	// from 01:00 WET to 02:00 WEST: that night the window lasts one real hour.
	night := blackout.Weekly{Days: []time.Weekday{time.Saturday, time.Sunday}, Start: 60, End: 180, Timezone: "Europe/Lisbon"}
	for _, c := range []struct {
		name, at   string
		in         bool
		start, end string
	}{
		{"WinterSaturdayInside", "2026-03-28T02:59:00Z", true, "2026-03-28T01:00:00Z", "2026-03-28T03:00:00Z"},
		{"WinterSaturdayAfter", "2026-03-28T03:00:00Z", false, "", ""},
		{"SpringForwardInside", "2026-03-29T01:30:00Z", true, "2026-03-29T01:00:00Z", "2026-03-29T02:00:00Z"},
		{"SpringForwardOverAtLocalThree", "2026-03-29T02:00:00Z", false, "", ""},
		{"SummerSaturdayStartsAtMidnightUTC", "2026-04-04T00:00:00Z", true, "2026-04-04T00:00:00Z", "2026-04-04T02:00:00Z"},
		{"SummerBeforeLocalOne", "2026-04-03T23:59:00Z", false, "", ""},
		{"Weekday", "2026-04-01T01:30:00Z", false, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, e, ok := night.InForce(utc(c.at))
			if ok != c.in {
				t.Fatalf("in force %v, want %v (%s-%s)", ok, c.in, s, e)
			}
			if ok && (!s.Equal(utc(c.start)) || !e.Equal(utc(c.end))) {
				t.Fatalf("occurrence %s-%s, want %s-%s", s, e, c.start, c.end)
			}
		})
	}
	// The autumn change (2026-10-25, 02:00 WEST back to 01:00 WET) makes the Sunday
	// window three real hours: from local 01:00 (its first instance, WEST) to 03:00 WET.
	s, e, ok := night.InForce(utc("2026-10-25T02:30:00Z"))
	if !ok || e.Sub(s) != 3*time.Hour || !e.Equal(utc("2026-10-25T03:00:00Z")) {
		t.Fatalf("autumn night: %v %s-%s", ok, s, e)
	}

	// Friday 22:00 to 06:00 (overnight) in New York: Saturday 05:00 local is inside the
	// Friday occurrence; Saturday 22:00 is not (Saturday is not a day of the window).
	friday := blackout.Weekly{Days: []time.Weekday{time.Friday}, Start: 22 * 60, End: 6 * 60, Timezone: "America/New_York"}
	if s, e, ok := friday.InForce(utc("2026-11-28T10:00:00Z")); !ok || !s.Equal(utc("2026-11-28T03:00:00Z")) || !e.Equal(utc("2026-11-28T11:00:00Z")) {
		t.Fatalf("saturday morning: %v %s-%s", ok, s, e)
	}
	if _, _, ok := friday.InForce(utc("2026-11-29T03:30:00Z")); ok {
		t.Fatal("saturday night is in force")
	}
	// Out of force, the occurrence is the next one.
	s, e = friday.Occurrence(utc("2026-11-25T12:00:00Z"))
	if !s.Equal(utc("2026-11-28T03:00:00Z")) || !e.Equal(utc("2026-11-28T11:00:00Z")) {
		t.Fatalf("next occurrence %s-%s", s, e)
	}
}

func TestClockAndWeekdayNames(t *testing.T) {
	for in, want := range map[string]int{"00:00": 0, "09:30": 570, "23:59": 1439} {
		if got, ok := blackout.ParseClock(in); !ok || got != want || blackout.FormatClock(got) != in {
			t.Fatalf("%s: %d %v", in, got, ok)
		}
	}
	for _, bad := range []string{"24:00", "9:30", "09:60", "0930", "", "ab:cd"} {
		if _, ok := blackout.ParseClock(bad); ok {
			t.Fatalf("%q accepted", bad)
		}
	}
	if d, ok := blackout.WeekdayOf(" Sun "); !ok || d != time.Sunday {
		t.Fatal("sun")
	}
	if _, ok := blackout.WeekdayOf("sunday"); ok {
		t.Fatal("sunday accepted")
	}
}
