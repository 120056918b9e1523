package guard

import (
	"sync"

	"github.com/headwater-data/headwater/authz"
)

// principalGate bounds the GraphQL requests each principal has in flight. A request over the bound is refused at
// once (it never waits), so one principal cannot occupy the server's CPU with parses and validations, and the
// refusal costs nothing. Idle principals hold no memory.
type principalGate struct {
	mu       sync.Mutex
	max      int
	inFlight map[string]int
}

func newPrincipalGate(max int) *principalGate {
	return &principalGate{max: max, inFlight: map[string]int{}}
}

// enter takes a slot for p; ok is false when p already has max requests in flight. release must be called once.
func (g *principalGate) enter(p authz.Principal) (release func(), ok bool) {
	k := p.Kind + "\x00" + p.Subject
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.inFlight[k] >= g.max {
		return nil, false
	}
	g.inFlight[k]++
	return func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.inFlight[k]--; g.inFlight[k] <= 0 {
			delete(g.inFlight, k)
		}
	}, true
}
