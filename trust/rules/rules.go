// Package rules holds the trust signals' decision rules, pure functions of their inputs with no I/O: an
// expected job's status from its schedule and its matched jobs' latest event, whether it counts in the reporting
// figure, a producer's quiet threshold from its P95 gap, an edge's staleness threshold, and the ages people read
// (ADR 0031, ADR 0034). Package trust and the lineage gaps apply them; their table tests live here.
package rules

import (
	"fmt"
	"slices"
	"time"
)

// Status is what an expected job's evidence says.
type Status string

// Expected-job statuses.
const (
	// StatusReporting: a matched job reported within the schedule plus grace.
	StatusReporting Status = "REPORTING"
	// StatusLate: a matched job reported, but not within the schedule plus grace.
	StatusLate Status = "LATE"
	// StatusNeverReported: no reported job matches the expected job (by its source's rules).
	StatusNeverReported Status = "NEVER_REPORTED"
	// StatusNoSchedule: no schedule is known; never counted as missing.
	StatusNoSchedule Status = "NO_SCHEDULE"
	// StatusPaused: the source says it is paused; never counted as missing.
	StatusPaused Status = "PAUSED"
)

// StatusOf decides an expected job's status from its interval (0: no schedule), whether it is paused, whether
// any reported job matches it and the latest event time of those (zero: none).
func StatusOf(interval time.Duration, paused, matched bool, last, now time.Time, grace time.Duration) Status {
	switch {
	case paused:
		return StatusPaused
	case !matched:
		return StatusNeverReported
	case interval <= 0:
		return StatusNoSchedule
	case !last.IsZero() && now.Sub(last) <= interval+grace:
		return StatusReporting
	}
	return StatusLate
}

// Scheduled reports whether the status counts in the reporting figure's denominator: a schedule is known and
// the job is not paused.
func Scheduled(interval time.Duration, paused bool) bool { return interval > 0 && !paused }

// P95Gap is the 95th percentile (nearest rank) of the gaps between consecutive distinct active minutes; 0 when
// there are fewer than two.
func P95Gap(minutes []int64) time.Duration {
	ms := slices.Clone(minutes)
	slices.Sort(ms)
	ms = slices.Compact(ms)
	if len(ms) < 2 {
		return 0
	}
	gaps := make([]int64, len(ms)-1)
	for i := 1; i < len(ms); i++ {
		gaps[i-1] = ms[i] - ms[i-1]
	}
	slices.Sort(gaps)
	rank := (95*len(gaps) + 99) / 100 // nearest rank: ceil(0.95 n)
	return time.Duration(gaps[rank-1]) * time.Minute
}

// QuietThreshold is factor times the P95 gap, at least min.
func QuietThreshold(p95 time.Duration, factor float64, min time.Duration) time.Duration {
	return max(min, time.Duration(float64(p95)*factor))
}

// StaleThreshold is the lineage rule for an observed edge: factor times the job's usual interval between runs
// ((last - first) / (runs - 1)), at least min.
func StaleThreshold(first, last time.Time, runs int64, factor float64, min time.Duration) time.Duration {
	if runs < 2 || !last.After(first) {
		return min
	}
	usual := last.Sub(first) / time.Duration(runs-1)
	return max(min, time.Duration(float64(usual)*factor))
}

// Age renders a duration for people: "40 days", "3 h", "12 min".
func Age(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%d days", int(d/(24*time.Hour)))
	case d >= 2*time.Hour:
		return fmt.Sprintf("%d h", int(d/time.Hour))
	case d >= time.Minute:
		return fmt.Sprintf("%d min", int(d/time.Minute))
	}
	return fmt.Sprintf("%d s", int(d/time.Second))
}
