package parsers

import (
	"fmt"
	"strings"
	"time"
)

// dateLayouts are the date and timestamp forms accepted in front matter and
// headers, tried in order.
var dateLayouts = []string{
	time.DateOnly,
	time.RFC3339Nano,
	"2006-01-02T15:04:05",
	"2006-01-02T15:04",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05 Z07:00",
	"2006-01-02 15:04:05 -0700",
	"2006-01-02 15:04:05 -0700 MST", // Go's time.Time.String
	"2006-01-02 15:04:05",
	"2006-01-02 15:04Z07:00",
	"2006-01-02 15:04 Z07:00",
	"2006-01-02 15:04 -0700",
	"2006-01-02 15:04",
	"2006-1-2", // unpadded month or day, as some hand-written front matter has
	"2006/01/02",
	"02-Jan-2006", // PEP headers
	"2-Jan-2006",
	"02 Jan 2006",
	"2 Jan 2006",
	"Jan 2, 2006",
	"January 2, 2006",
	"2 January 2006",
}

// parseDate turns a date or timestamp string into YYYY-MM-DD. A timestamp
// keeps the calendar date it was written in: "2026-03-04T23:30:00-05:00" is
// 2026-03-04, not the UTC date.
func parseDate(s string) (string, bool) {
	s = strings.TrimSpace(strings.Trim(strings.TrimSpace(s), `"'`))
	if s == "" {
		return "", false
	}
	for _, layout := range dateLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			if t.Year() < 1 || t.Year() > 9999 {
				return "", false
			}
			return t.Format(time.DateOnly), true
		}
	}
	return "", false
}

// dateValue turns a decoded front-matter value (a string, or a time.Time for
// a YAML-native timestamp) into YYYY-MM-DD.
func dateValue(v any) (string, bool) {
	switch x := v.(type) {
	case time.Time:
		if x.IsZero() {
			return "", false
		}
		return x.Format(time.DateOnly), true
	case string:
		return parseDate(x)
	case nil:
		return "", false
	default:
		return parseDate(fmt.Sprint(x))
	}
}
