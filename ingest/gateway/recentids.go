package gateway

import "sync"

// recentIDs remembers the content digest of the last max events this gateway accepted, by (principal, event id),
// so a producer that reuses one of its recent ids for other content is answered 409 at once. It is bounded by
// count (oldest accepted forgotten first; entries hold at most a 256-byte id, the principal and a 71-byte
// digest); a conflict it has forgotten, or one accepted by another gateway instance, is caught by the projector
// (rule id-conflict, visible in event(id)). Events are scoped by principal, so two producers never conflict.
type recentIDs struct {
	mu    sync.Mutex
	max   int
	byKey map[string]string // principal + "\x1f" + id -> digest
	order []string          // ring of keys in acceptance order
	next  int
}

func newRecentIDs(max int) *recentIDs {
	return &recentIDs{max: max, byKey: make(map[string]string, max)}
}

func recentKey(principal, id string) string { return principal + "\x1f" + id }

// conflicts tells whether the principal's id was recently accepted with another digest.
func (c *recentIDs) conflicts(principal, id, digest string) bool {
	if c.max <= 0 || digest == "" {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.byKey[recentKey(principal, id)]
	return ok && d != digest
}

// remember records accepted events; an id already remembered keeps its first digest.
func (c *recentIDs) remember(principal string, ids, digests []string) {
	if c.max <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, id := range ids {
		k := recentKey(principal, id)
		if _, ok := c.byKey[k]; ok || digests[i] == "" {
			continue
		}
		if len(c.order) < c.max {
			c.order = append(c.order, k)
		} else {
			delete(c.byKey, c.order[c.next])
			c.order[c.next] = k
			c.next = (c.next + 1) % c.max
		}
		c.byKey[k] = digests[i]
	}
}
