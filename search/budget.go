package search

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Search scan bounds (issue 13 item 12). A search page scans hits in batches, skipping those the caller may not
// see; these bound how many it scans, so hidden matches cannot make a request or a principal costly. A page that
// reaches a bound ends there with hasNextPage and a cursor after the last hit scanned: paging on finds the rest.

// searchBudget is what all search fields of one request may still scan together.
type searchBudget struct {
	mu   sync.Mutex
	left int
}

type searchBudgetKey struct{}

// WithRequestBudget returns a context carrying one request's search scan budget (Config.SearchScanPerRequest
// hits shared by every search field of the request). Without it each search field gets a budget of its own.
func (s *Searcher) WithRequestBudget(ctx context.Context) context.Context {
	return context.WithValue(ctx, searchBudgetKey{}, &searchBudget{left: s.cfg.SearchScanPerRequest})
}

func (s *Searcher) requestBudget(ctx context.Context) *searchBudget {
	if b, ok := ctx.Value(searchBudgetKey{}).(*searchBudget); ok {
		return b
	}
	return &searchBudget{left: s.cfg.SearchScanPerRequest}
}

// take reserves up to want hits for the next round (what is left, at most) and returns how many; concurrent
// search fields of one request cannot together read more than the budget.
func (b *searchBudget) take(want int) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := max(0, min(want, b.left))
	b.left -= n
	return n
}

// refund returns the part of a reservation the round did not read.
func (b *searchBudget) refund(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.left += n
}

// principalScans rate-limits the hits each principal's searches scan (Config.SearchScanPerPrincipal per second,
// a burst of twice that): a principal over its rate waits, so parallel or repeated searches cannot multiply the
// per-request bound. It holds at most maxSearchPrincipals limiters.
type principalScans struct {
	mu    sync.Mutex
	rate  rate.Limit
	burst int
	lims  map[string]*rate.Limiter
}

// maxSearchPrincipals bounds the per-principal search limiters kept in memory; past it an arbitrary one is
// forgotten (it restarts with a full burst).
const maxSearchPrincipals = 10_000

func newPrincipalScans(perSecond int) *principalScans {
	return &principalScans{rate: rate.Limit(perSecond), burst: 2 * perSecond, lims: map[string]*rate.Limiter{}}
}

func (p *principalScans) limiter(subject string) *rate.Limiter {
	p.mu.Lock()
	defer p.mu.Unlock()
	if l, ok := p.lims[subject]; ok {
		return l
	}
	if len(p.lims) >= maxSearchPrincipals {
		for k := range p.lims {
			delete(p.lims, k)
			break
		}
	}
	l := rate.NewLimiter(p.rate, p.burst)
	p.lims[subject] = l
	return l
}

// charge records n hits scanned by subject and waits while the principal is over its rate (at most
// maxSearchWait per round). It reports false when the wait would be longer or ctx ended: the page stops there.
func (p *principalScans) charge(ctx context.Context, subject string, n int) bool {
	if n <= 0 {
		return true
	}
	r := p.limiter(subject).ReserveN(time.Now(), min(n, p.burst))
	if !r.OK() {
		return false
	}
	d := r.Delay()
	if d == 0 {
		return true
	}
	if d > maxSearchWait {
		r.Cancel()
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		r.Cancel()
		return false
	}
}

// maxSearchWait is the longest a search round waits for its principal's scan rate.
const maxSearchWait = 2 * time.Second
