package schedule

import (
	"context"
	"time"

	"github.com/headwater-data/headwater/graph"
)

// Lease is who holds a catalog's sync lease and until when, and the outcome of the holder's syncs (kept on the
// lease so every process, standby or not, reports the catalog's state in readiness).
type Lease struct {
	Holder string
	Until  time.Time
	// LastSuccess is when a sync of the catalog last succeeded (zero: never).
	LastSuccess time.Time
	// FailingSince is when the syncs began to fail (zero: the last one succeeded); LastError says why, short.
	FailingSince time.Time
	LastError    string
}

// Neo4jLeases keeps the one-active-syncer leases as CatalogSyncLease nodes, one per catalog name, in Headwater's
// own graph (every serve process already reaches it). Expiry is judged by Neo4j's clock only, so processes with
// skewed clocks agree on who holds a lease.
type Neo4jLeases struct {
	Store *graph.Store
}

// Acquire takes or renews the lease for holder when it is free, expired or already holder's, and returns the
// lease as it stands afterwards (held by holder or by another). The node is locked (a write) before its holder is
// read, so two processes racing for an expired lease cannot both win.
func (l Neo4jLeases) Acquire(ctx context.Context, catalog, holder string, ttl time.Duration) (Lease, error) {
	recs, err := l.Store.WriteRecords(ctx, `MERGE (l:CatalogSyncLease {catalog: $catalog})
		SET l.lockedAt = timestamp()
		WITH l, (l.holder IS NULL OR l.holder = $holder OR coalesce(l.until, 0) < timestamp()) AS free
		SET l.holder = CASE WHEN free THEN $holder ELSE l.holder END,
		    l.until = CASE WHEN free THEN timestamp() + $ttl ELSE l.until END
		RETURN l.holder AS holder, l.until AS until, l.lastSuccess AS lastSuccess, l.failingSince AS failingSince,
		  l.lastError AS lastError`,
		map[string]any{"catalog": catalog, "holder": holder, "ttl": ttl.Milliseconds()})
	if err != nil || len(recs) == 0 {
		return Lease{}, err
	}
	p := graph.Props(recs[0])
	return Lease{Holder: p.Str("holder"), Until: time.UnixMilli(p.Int("until")), LastSuccess: millis(p.Int("lastSuccess")),
		FailingSince: millis(p.Int("failingSince")), LastError: p.Str("lastError")}, nil
}

// Report records the outcome of holder's sync on the lease (nothing when another holds it now): a success
// clears the failure; a failure keeps the first failure's time.
func (l Neo4jLeases) Report(ctx context.Context, catalog, holder string, at time.Time, syncErr string) error {
	_, err := l.Store.WriteRecords(ctx, `MATCH (l:CatalogSyncLease {catalog: $catalog}) WHERE l.holder = $holder
		SET l.lastSuccess = CASE WHEN $err = '' THEN $at ELSE l.lastSuccess END,
		    l.failingSince = CASE WHEN $err = '' THEN null ELSE coalesce(l.failingSince, $at) END,
		    l.lastError = CASE WHEN $err = '' THEN null ELSE $err END`,
		map[string]any{"catalog": catalog, "holder": holder, "at": at.UnixMilli(), "err": syncErr})
	return err
}

func millis(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// Release gives the lease up when holder holds it (at shutdown: a standby takes over at once, not after the TTL).
func (l Neo4jLeases) Release(ctx context.Context, catalog, holder string) error {
	_, err := l.Store.WriteRecords(ctx, `MATCH (l:CatalogSyncLease {catalog: $catalog}) WHERE l.holder = $holder
		SET l.holder = null, l.until = 0`, map[string]any{"catalog": catalog, "holder": holder})
	return err
}
