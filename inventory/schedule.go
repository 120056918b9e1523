package inventory

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// cronSpan is how far ahead a cron expression is enumerated to find its longest gap (five weeks: every weekly
// and monthly pattern repeats within it, and February is covered by the month rule below).
const cronSpan = 35 * 24 * time.Hour

// ParseSchedule returns the longest gap between two scheduled runs of a schedule text, 0 when the text says
// there is no schedule ("", none, null, @once, asset- or dataset-triggered). Accepted: presets (@hourly, @daily,
// @weekly, @monthly, @yearly, @annually), Go durations (90m, 6h), ISO 8601 durations (PT1H, P1D) and five-field
// cron expressions (*, lists, ranges, steps; the longest gap of the pattern).
func ParseSchedule(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "", "none", "null", "@once", "@continuous", "asset", "dataset", "triggered by assets", "triggered by datasets":
		return 0, nil
	case "@hourly":
		return time.Hour, nil
	case "@daily", "@midnight":
		return 24 * time.Hour, nil
	case "@weekly":
		return 7 * 24 * time.Hour, nil
	case "@monthly":
		return 31 * 24 * time.Hour, nil
	case "@yearly", "@annually":
		return 366 * 24 * time.Hour, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return d, nil
	}
	if d, ok := isoDuration(s); ok {
		return d, nil
	}
	if len(strings.Fields(s)) == 5 {
		return cronGap(s)
	}
	return 0, fmt.Errorf("schedule: %q is not a preset, a duration or a five-field cron expression", s)
}

var isoRe = regexp.MustCompile(`^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$`)

func isoDuration(s string) (time.Duration, bool) {
	m := isoRe.FindStringSubmatch(strings.ToUpper(s))
	if m == nil || s == "P" || strings.HasSuffix(strings.ToUpper(s), "T") {
		return 0, false
	}
	units := []time.Duration{24 * time.Hour, time.Hour, time.Minute, time.Second}
	var d time.Duration
	for i, u := range units {
		if m[i+1] != "" {
			n, _ := strconv.Atoi(m[i+1])
			d += time.Duration(n) * u
		}
	}
	return d, d > 0
}

// cronField is the set of values one cron field allows.
type cronField map[int]bool

func parseCronField(f string, lo, hi int) (cronField, error) {
	out := cronField{}
	for part := range strings.SplitSeq(f, ",") {
		step := 1
		if i := strings.Index(part, "/"); i >= 0 {
			n, err := strconv.Atoi(part[i+1:])
			if err != nil || n < 1 {
				return nil, fmt.Errorf("step %q", part)
			}
			step, part = n, part[:i]
		}
		a, b := lo, hi
		if part != "*" {
			var err error
			if a, b, err = cronRange(part); err != nil {
				return nil, err
			}
		}
		if a < lo || b > hi || a > b {
			return nil, fmt.Errorf("range %q outside %d-%d", part, lo, hi)
		}
		for v := a; v <= b; v += step {
			out[v] = true
		}
	}
	return out, nil
}

func cronRange(part string) (int, int, error) {
	x, y, isRange := strings.Cut(part, "-")
	a, err := strconv.Atoi(x)
	if err != nil {
		return 0, 0, fmt.Errorf("value %q", part)
	}
	if !isRange {
		return a, a, nil
	}
	b, err := strconv.Atoi(y)
	if err != nil {
		return 0, 0, fmt.Errorf("value %q", part)
	}
	return a, b, nil
}

// cronGap enumerates the expression's fire times over cronSpan and returns the longest gap between two.
func cronGap(expr string) (time.Duration, error) {
	f := strings.Fields(expr)
	bounds := [5][2]int{{0, 59}, {0, 23}, {1, 31}, {1, 12}, {0, 7}}
	var fs [5]cronField
	for i := range f {
		v, err := parseCronField(f[i], bounds[i][0], bounds[i][1])
		if err != nil {
			return 0, fmt.Errorf("schedule: cron field %d of %q: %v", i+1, expr, err)
		}
		fs[i] = v
	}
	if fs[4][7] {
		fs[4][0] = true
	}
	if f[3] != "*" || (f[2] != "*" && len(fs[2]) < 28) {
		return monthlyGap(fs), nil // sparse day or month patterns: bounded by the months they allow
	}
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var first, prev time.Time
	var gap time.Duration
	for day := start; day.Before(start.Add(cronSpan)); day = day.AddDate(0, 0, 1) {
		if !dayMatches(fs, f, day) {
			continue
		}
		for h := range 24 {
			if !fs[1][h] {
				continue
			}
			for m := range 60 {
				if !fs[0][m] {
					continue
				}
				t := day.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute)
				if first.IsZero() {
					first = t
				} else {
					gap = max(gap, t.Sub(prev))
				}
				prev = t
			}
		}
	}
	if first.IsZero() {
		return 0, fmt.Errorf("schedule: cron %q never fires", expr)
	}
	if prev.Equal(first) {
		return cronSpan, nil
	}
	return gap, nil
}

// dayMatches applies cron's day rule: when both day-of-month and day-of-week are restricted, either matches.
func dayMatches(fs [5]cronField, f []string, day time.Time) bool {
	if !fs[3][int(day.Month())] {
		return false
	}
	dom, dow := fs[2][day.Day()], fs[4][int(day.Weekday())]
	switch {
	case f[2] == "*" && f[4] == "*":
		return true
	case f[2] == "*":
		return dow
	case f[4] == "*":
		return dom
	}
	return dom || dow
}

// monthlyGap is the gap of a pattern restricted to some days of some months: the longest stretch between the
// allowed months (in whole months of 31 days), at least 31 days.
func monthlyGap(fs [5]cronField) time.Duration {
	months := 0
	for m := 1; m <= 12; m++ {
		if fs[3][m] {
			months++
		}
	}
	if months == 0 {
		return 0
	}
	longest, run := 0, 0
	for i := 1; i <= 24; i++ { // two years, to wrap around December
		if fs[3][(i-1)%12+1] {
			run = 0
			continue
		}
		run++
		longest = max(longest, run)
	}
	return time.Duration(longest+1) * 31 * 24 * time.Hour
}
