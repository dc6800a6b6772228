package finops

import (
	"encoding/csv"
	"errors"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/vigia-data/vigia"
)

// MaxRateLines bounds one rates file.
const MaxRateLines = 100_000

// ParseRates reads a rates file: CSV lines currency,date,per_eur (a header line naming
// those columns and lines starting with # are skipped), e.g. "USD,2026-10-31,1.0832":
// 1.0832 US dollars for one euro on 31 October 2026, as the ECB's reference rates are
// published. It returns KindInvalid naming the line (never its content) of the first
// line that is not one.
func ParseRates(r io.Reader) ([]Rate, error) {
	cr := csv.NewReader(r)
	cr.Comment = '#'
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	var out []Rate
	for line := 1; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		at := strconv.Itoa(line)
		if err != nil || len(rec) != 3 {
			return nil, vigia.Invalid(vigia.Field("csv_line", nil, "line", at))
		}
		if line == 1 && strings.EqualFold(strings.TrimSpace(rec[0]), "currency") {
			continue
		}
		if len(out) == MaxRateLines {
			return nil, vigia.Invalid(vigia.Field("too_long", map[string]any{"max_length": MaxRateLines}, "lines"))
		}
		cur := strings.ToUpper(strings.TrimSpace(rec[0]))
		day, derr := time.Parse(time.DateOnly, strings.TrimSpace(rec[1]))
		rate, rerr := strconv.ParseFloat(strings.TrimSpace(rec[2]), 64)
		switch {
		case cur == Base || !known(cur):
			return nil, vigia.Invalid(vigia.Field("enum", nil, "line", at, "currency"))
		case derr != nil:
			return nil, vigia.Invalid(vigia.Field("date_parsing", nil, "line", at, "date"))
		case rerr != nil || !(rate > 0):
			return nil, vigia.Invalid(vigia.Field("greater_than", map[string]any{"gt": 0}, "line", at, "per_eur"))
		}
		out = append(out, Rate{Currency: cur, Date: day, PerEUR: rate})
	}
}
