package ttlcache

import (
	"testing"
	"time"
)

func TestExpiryBoundAndRacingDrop(t *testing.T) {
	now := time.Unix(0, 0)
	c := New[int](time.Second, 2, func() time.Time { return now })
	_, _, g := c.Get("a")
	c.Put("a", 1, g)
	if v, ok, _ := c.Get("a"); !ok || v != 1 {
		t.Fatalf("get a = %v %v", v, ok)
	}
	now = now.Add(time.Second)
	if _, ok, _ := c.Get("a"); ok {
		t.Fatal("entry outlived its TTL")
	}
	_, _, g = c.Get("b")
	c.Put("b", 2, g)
	c.Put("c", 3, g)
	c.Put("d", 4, g)
	if c.Len() > 2 {
		t.Fatalf("len %d > max 2", c.Len())
	}
	_, _, g = c.Get("e") // a read starts...
	c.Drop("b")          // ...an invalidation lands...
	c.Put("e", 5, g)     // ...and the racing read is not cached
	if _, ok, _ := c.Get("e"); ok {
		t.Fatal("a read that raced with Drop was cached")
	}
	if _, ok, _ := c.Get("b"); ok {
		t.Fatal("dropped entry still served")
	}
}
