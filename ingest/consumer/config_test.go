package consumer

import (
	"strings"
	"testing"

	"github.com/headwater-data/headwater/ingest/project"
)

func validConfig() Config {
	return Config{BatchSize: DefaultBatchSize, BatchWait: DefaultBatchWait, Parallel: 1}
}

// The projector's cache bounds are MiB settings: 0 takes the projector's defaults, the rest must be within
// [0, 64 GiB], and an error names the setting.
func TestMemoryBoundsSettings(t *testing.T) {
	c := validConfig()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if b := c.MemoryBounds(); b != (project.MemoryBounds{}) {
		t.Fatalf("zero settings give %+v, want the projector's defaults (zero bounds)", b)
	}
	c.FoldStateMiB, c.JobStateMiB, c.RecentEventsMiB = 512, 128, 64
	if b := c.MemoryBounds(); b.FoldStateBytes != 512<<20 || b.JobStateBytes != 128<<20 || b.RecentEventsBytes != 64<<20 {
		t.Fatalf("bounds %+v", b)
	}
	for _, bad := range []struct {
		name string
		set  func(*Config)
	}{
		{"consumer.fold-state-mib", func(c *Config) { c.FoldStateMiB = -1 }},
		{"consumer.fold-state-mib", func(c *Config) { c.FoldStateMiB = maxCacheMiB + 1 }},
		{"consumer.job-state-mib", func(c *Config) { c.JobStateMiB = -1 }},
		{"consumer.job-state-mib", func(c *Config) { c.JobStateMiB = maxCacheMiB + 1 }},
		{"consumer.recent-events-mib", func(c *Config) { c.RecentEventsMiB = -1 }},
	} {
		c := validConfig()
		bad.set(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), bad.name) {
			t.Errorf("%s: error %v, want one naming the setting", bad.name, err)
		}
	}
}
