package routine_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/vigia-data/vigia/routine"
)

type fixedClock time.Time

func (c fixedClock) Now() time.Time { return time.Time(c) }

// zoneStore answers the workspace's time zone and keeps the recorded run; the other
// methods are not used by a run of the monthly routine.
type zoneStore struct {
	routine.Store
	tz     string
	status string
}

func (s *zoneStore) TimeZone(context.Context, string) (string, error) { return s.tz, nil }
func (s *zoneStore) RecordRun(_ context.Context, _, _ string, _ time.Time, status string, _ json.RawMessage, _ *string) error {
	s.status = status
	return nil
}

type monthCharges struct{ months []time.Time }

func (c *monthCharges) MonthSnapshot(_ context.Context, _ string, month time.Time) (any, error) {
	c.months = append(c.months, month)
	return map[string]string{"month": month.Format("2006-01")}, nil
}

// The monthly chargeback snapshot asks for the month before in the workspace's time zone:
// run at 07:00 on 1 November in Tokyo (still 31 October in UTC) it takes October, from
// midnight on 1 October local time.
func TestMonthlyChargebackTakesTheMonthInTheWorkspaceTimeZone(t *testing.T) {
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Skip("no time zone database: ", err)
	}
	store := &zoneStore{tz: "Asia/Tokyo"}
	charges := &monthCharges{}
	now := time.Date(2026, 11, 1, 7, 0, 0, 0, tokyo)
	svc := routine.NewService(store, nil, nil, charges, nil, fixedClock(now.UTC()))
	if err := svc.Run(context.Background(), "ws", routine.KeyMonthlyChargeback); err != nil {
		t.Fatal(err)
	}
	want := time.Date(2026, 10, 1, 0, 0, 0, 0, tokyo)
	if store.status != routine.StatusSucceeded || len(charges.months) != 1 || !charges.months[0].Equal(want) ||
		charges.months[0].Format("2006-01") != "2026-10" {
		t.Fatalf("status %q, months %v; want %v", store.status, charges.months, want)
	}
}
