package guard

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"golang.org/x/time/rate"

	"github.com/headwater-data/headwater/authz"
)

// maxBudgetPrincipals bounds the principals whose buckets are kept; above it, full (idle) buckets are dropped.
const maxBudgetPrincipals = 10000

// costBudget charges each operation's complexity (at least 1) to its principal's token bucket, refilled on wall
// time; an operation the bucket cannot pay is refused with 429 RATE_LIMITED before it runs. It runs after the
// complexity limit, so any operation it sees fits in a bucket (the burst is at least MaxComplexity).
type costBudget struct {
	perSecond float64
	burst     int
	now       func() time.Time
	mu        sync.Mutex
	byKey     map[string]*rate.Limiter
}

var (
	_ graphql.HandlerExtension        = (*costBudget)(nil)
	_ graphql.OperationContextMutator = (*costBudget)(nil)
)

func newCostBudget(perSecond, burst int, now func() time.Time) *costBudget {
	return &costBudget{perSecond: float64(perSecond), burst: burst, now: now, byKey: map[string]*rate.Limiter{}}
}

func (*costBudget) ExtensionName() string                   { return "CostBudget" }
func (*costBudget) Validate(graphql.ExecutableSchema) error { return nil }

func (b *costBudget) MutateOperationContext(ctx context.Context, _ *graphql.OperationContext) *gqlerror.Error {
	cost := 1
	if s := extension.GetComplexityStats(ctx); s != nil {
		cost = max(cost, s.Complexity)
	}
	wait, ok := b.take(authz.FromContext(ctx), cost)
	if ok {
		return nil
	}
	return (&RequestError{rule: ruleCost, status: http.StatusTooManyRequests, code: CodeRateLimited, retryAfter: wait,
		msg: fmt.Sprintf("this principal's query budget (%d complexity per second) is spent; retry in %d s",
			int(b.perSecond), retrySeconds(wait))}).gqlError()
}

// take charges cost to p's bucket; when it cannot pay, it charges nothing and says how long to wait.
func (b *costBudget) take(p authz.Principal, cost int) (time.Duration, bool) {
	now := b.now()
	lim := b.limiter(p.Kind+"\x00"+p.Subject, now)
	if cost > b.burst {
		return time.Second, false
	}
	r := lim.ReserveN(now, cost)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return d, false
	}
	return 0, true
}

func (b *costBudget) limiter(key string, now time.Time) *rate.Limiter {
	b.mu.Lock()
	defer b.mu.Unlock()
	if lim, ok := b.byKey[key]; ok {
		return lim
	}
	if len(b.byKey) >= maxBudgetPrincipals {
		for k, l := range b.byKey {
			if l.TokensAt(now) >= float64(b.burst) {
				delete(b.byKey, k)
			}
		}
	}
	lim := rate.NewLimiter(rate.Limit(b.perSecond), b.burst)
	b.byKey[key] = lim
	return lim
}

// retrySeconds is a wait in whole seconds, at least 1 (the unit of Retry-After).
func retrySeconds(d time.Duration) int { return max(1, int(math.Ceil(d.Seconds()))) }
