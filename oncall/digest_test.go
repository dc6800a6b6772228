package oncall_test

import (
	"testing"
	"time"

	"github.com/vigia-data/vigia/oncall"
)

func TestWeeklySlot(t *testing.T) {
	lisbon, err := time.LoadLocation("Europe/Lisbon")
	if err != nil {
		t.Skip("no time zone data")
	}
	tests := []struct {
		name string
		now  time.Time
		want time.Time
	}{
		{"MondayAfterEight", time.Date(2026, 11, 23, 9, 0, 0, 0, lisbon), time.Date(2026, 11, 23, 8, 0, 0, 0, lisbon)},
		{"MondayBeforeEight", time.Date(2026, 11, 23, 7, 59, 0, 0, lisbon), time.Date(2026, 11, 16, 8, 0, 0, 0, lisbon)},
		{"Sunday", time.Date(2026, 11, 22, 23, 0, 0, 0, lisbon), time.Date(2026, 11, 16, 8, 0, 0, 0, lisbon)},
		{"AcrossDST", time.Date(2026, 3, 30, 10, 0, 0, 0, lisbon), time.Date(2026, 3, 30, 8, 0, 0, 0, lisbon)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := oncall.WeeklySlot(tt.now.UTC(), lisbon); !got.Equal(tt.want) {
				t.Fatalf("WeeklySlot = %v, want %v", got, tt.want)
			}
		})
	}
}
