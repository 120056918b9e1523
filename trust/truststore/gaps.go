package truststore

import (
	"context"

	"github.com/headwater-data/headwater/trust"
	"github.com/headwater-data/headwater/trust/gapsource"
)

// Canaries reads the active canaries with their latest check.
func (s *Store) Canaries(ctx context.Context) ([]trust.CanaryRow, error) {
	rows, err := s.read(ctx, `MATCH (c:Canary) WHERE c.retiredAt IS NULL
RETURN c.key AS name, c.fromNs AS fns, c.fromName AS fn, c.fromField AS ff, c.toNs AS tns, c.toName AS tn,
  c.toField AS tf, c.jobNs AS jns, c.jobName AS jn, c.checkedAt IS NOT NULL AS checked, coalesce(c.ok, false) AS ok,
  c.failingSince AS since, c.checkedAt AS at, c.checks AS checks, c.passes AS passes, c.failure AS failure
ORDER BY name LIMIT `+itoa(trust.MaxItemsKept), nil)
	if err != nil {
		return nil, err
	}
	out := make([]trust.CanaryRow, len(rows))
	for i, r := range rows {
		out[i] = trust.CanaryRow{Name: r.Str("name"), FromNs: r.Str("fns"), FromName: r.Str("fn"), FromField: r.Str("ff"),
			ToNs: r.Str("tns"), ToName: r.Str("tn"), ToField: r.Str("tf"), JobNs: r.Str("jns"), JobName: r.Str("jn"),
			Checked: r.Bool("checked"), OK: r.Bool("ok"), FailingSince: r.Int("since"), CheckedAt: r.Int("at"),
			Checks: r.Int("checks"), Passes: r.Int("passes"), Failure: r.Str("failure")}
	}
	return out, nil
}

// JobProducers reads, per job, the producer principals of its latest run's events (the run with the latest
// first event time, through the index on (jobKey, firstEventAt); its events through the index on runKey).
func (s *Store) JobProducers(ctx context.Context, jobKeys []string) (map[string][]gapsource.JobProducer, error) {
	rows, err := s.read(ctx, `UNWIND $jobs AS jk
CALL (jk) {
  MATCH (r:Run {jobKey: jk}) WHERE r.firstEventAt IS NOT NULL
  RETURN r ORDER BY r.firstEventAt DESC LIMIT 1
}
MATCH (e:Event {runKey: r.key}) WHERE e.principal IS NOT NULL AND e.principal <> ''
RETURN jk, e.principal AS p, max(e.receivedAt) AS last ORDER BY jk, p`, map[string]any{"jobs": jobKeys})
	if err != nil {
		return nil, err
	}
	out := make(map[string][]gapsource.JobProducer, len(rows))
	for _, r := range rows {
		out[r.Str("jk")] = append(out[r.Str("jk")], gapsource.JobProducer{Producer: r.Str("p"), Last: r.Int("last")})
	}
	return out, nil
}
