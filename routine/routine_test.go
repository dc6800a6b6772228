package routine_test

import (
	"testing"
	"time"

	"github.com/vigia-data/vigia/routine"
)

func TestNextRunIsInTheWorkspaceTimeZone(t *testing.T) {
	lisbon, err := time.LoadLocation("Europe/Lisbon")
	if err != nil {
		t.Skip("no time zone database: ", err)
	}
	saoPaulo, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		t.Skip("no time zone database: ", err)
	}
	weekly := routine.Definition{Key: routine.KeyWeeklyExecutiveReport, Cadence: routine.Weekly, Weekday: time.Monday, Hour: 8}
	daily := routine.Definition{Key: routine.KeyDailySLABreachDigest, Cadence: routine.Daily, Hour: 8}
	monthly := routine.Definition{Key: routine.KeyMonthlyChargeback, Cadence: routine.Monthly, Hour: 7}
	// Wednesday 25 November 2026, 10:00 UTC.
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		d    routine.Definition
		loc  *time.Location
		at   time.Time
		want time.Time
	}{
		{"WeeklyNextMondayLisbon", weekly, lisbon, now, time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)},
		{"WeeklyNextMondaySaoPaulo", weekly, saoPaulo, now, time.Date(2026, 11, 30, 11, 0, 0, 0, time.UTC)},
		{"DailyTomorrowLisbon", daily, lisbon, now, time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)},
		{"DailyTodayWhenBeforeTheHour", daily, saoPaulo, now, time.Date(2026, 11, 25, 11, 0, 0, 0, time.UTC)},
		{"WeeklyAtTheHourIsTheNextWeek", weekly, lisbon, time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC), time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC)},
		{"MonthlyFirstOfNextMonthLisbon", monthly, lisbon, now, time.Date(2026, 12, 1, 7, 0, 0, 0, time.UTC)},
		{"MonthlyAcrossTheYear", monthly, saoPaulo, time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), time.Date(2027, 1, 1, 10, 0, 0, 0, time.UTC)},
		{"MonthlyLaterTheSameDay", monthly, lisbon, time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 7, 0, 0, 0, time.UTC)},
		// Summer time: 08:00 in Lisbon is 07:00 UTC.
		{"DailyInSummerTime", daily, lisbon, time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC), time.Date(2026, 7, 2, 7, 0, 0, 0, time.UTC)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.d.Next(c.at, c.loc); !got.Equal(c.want) {
				t.Fatalf("next %s, want %s", got, c.want)
			}
		})
	}
}
