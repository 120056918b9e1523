package schedule

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/headwater-data/headwater/graph"
)

// Lease is who holds a catalog's sync lease and until when, and the outcome of the holder's syncs (kept on the
// lease so every process, standby or not, reports the catalog's state in readiness).
type Lease struct {
	Holder string
	Until  time.Time
	// Token is the lease's fencing token: it grows each time the lease is taken (by another holder, or by the
	// same one after it lapsed), never at a renewal in force (ADR 0087).
	Token int64
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
		WITH l, (l.holder IS NULL OR l.holder = $holder OR coalesce(l.until, 0) < timestamp()) AS free,
		  coalesce(l.holder = $holder AND coalesce(l.until, 0) >= timestamp(), false) AS renewing
		SET l.token = CASE WHEN free AND NOT renewing THEN coalesce(l.token, 0) + 1 ELSE l.token END,
		    l.holder = CASE WHEN free THEN $holder ELSE l.holder END,
		    l.until = CASE WHEN free THEN timestamp() + $ttl ELSE l.until END
		RETURN l.holder AS holder, l.until AS until, coalesce(l.token, 0) AS token, l.lastSuccess AS lastSuccess, l.failingSince AS failingSince,
		  l.lastError AS lastError`,
		map[string]any{"catalog": catalog, "holder": holder, "ttl": ttl.Milliseconds()})
	if err != nil || len(recs) == 0 {
		return Lease{}, err
	}
	p := graph.Props(recs[0])
	return Lease{Holder: p.Str("holder"), Until: time.UnixMilli(p.Int("until")), Token: p.Int("token"), LastSuccess: millis(p.Int("lastSuccess")),
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

// ErrFenced is the error of a sync batch its lease refused (ADR 0087): the lease is no longer the one the sync
// began under, so the batch was not produced.
var ErrFenced = errors.New("the catalog sync lease is no longer this sync's")

// Held is the lease one sync runs under: the catalog, this process as holder, the lease's token, and how much of
// the lease must remain (by Neo4j's clock) for a batch to be produced (the holder's margin, ADR 0085).
type Held struct {
	Catalog, Holder string
	Token           int64
	MinRemaining    time.Duration
}

// LeaseFence is a sync's lease as the gateway's fence (gateway.Fence, ADR 0087): a batch is produced only while
// the lease is still h's (same holder, same token) with at least h.MinRemaining left.
type LeaseFence struct {
	Leases Neo4jLeases
	Held   Held
}

// Check reads the lease (one Neo4j read, its clock) and refuses with ErrFenced naming the catalog and the lease.
func (f LeaseFence) Check(ctx context.Context) error {
	h := f.Held
	recs, err := f.Leases.Store.ReadRecords(ctx, `MATCH (l:CatalogSyncLease {catalog: $catalog})
		RETURN l.holder AS holder, coalesce(l.token, 0) AS token, coalesce(l.until, 0) - timestamp() AS remaining`,
		map[string]any{"catalog": h.Catalog})
	if err != nil {
		return fmt.Errorf("catalog %s: reading the sync lease (holder %s, token %d): %w", h.Catalog, h.Holder, h.Token, err)
	}
	if len(recs) == 0 {
		return fmt.Errorf("%w: catalog %s: the lease (holder %s, token %d) is gone", ErrFenced, h.Catalog, h.Holder, h.Token)
	}
	p := graph.Props(recs[0])
	remaining := time.Duration(p.Int("remaining")) * time.Millisecond
	if p.Str("holder") != h.Holder || p.Int("token") != h.Token || remaining < h.MinRemaining {
		return fmt.Errorf("%w: catalog %s: the sync ran under the lease (holder %s, token %d); the lease is now holder %q, token %d, %s left (at least %s needed)",
			ErrFenced, h.Catalog, h.Holder, h.Token, p.Str("holder"), p.Int("token"), remaining.Round(time.Millisecond), h.MinRemaining)
	}
	return nil
}
