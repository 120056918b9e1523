package lineage

import (
	"strconv"
	"testing"
	"time"

	"github.com/headwater-data/headwater/graph"
)

func TestStartCacheBoundedAndExpires(t *testing.T) {
	now := time.Date(2026, 11, 29, 20, 0, 0, 0, time.UTC)
	c := newStartCache(StartCacheTTL, func() time.Time { return now })
	for i := range maxStartCacheEntries + 20 {
		c.put(strconv.Itoa(i), graph.DatasetRow{Key: strconv.Itoa(i), Tags: []string{"t"}}, graph.NameBinding{})
	}
	if n := c.len(); n > maxStartCacheEntries {
		t.Fatalf("start cache holds %d entries, bound %d", n, maxStartCacheEntries)
	}
	last := strconv.Itoa(maxStartCacheEntries + 19)
	row, _, ok := c.get(last)
	if !ok || row.Key != last {
		t.Fatalf("the newest entry must be kept: %+v %v", row, ok)
	}
	row.Tags[0] = "changed"
	if again, _, _ := c.get(last); again.Tags[0] != "t" {
		t.Error("readers share the cached row's tags")
	}
	now = now.Add(StartCacheTTL)
	if _, _, ok := c.get(last); ok {
		t.Error("an entry at its TTL must be resolved again")
	}
}
