package authn

import (
	"testing"
	"time"
)

func TestConfigTokenCacheTTL(t *testing.T) {
	for _, ttl := range []time.Duration{0, time.Second, MaxTokenCacheTTL} {
		if err := (Config{TokenCacheTTL: ttl}).Validate(); err != nil {
			t.Errorf("ttl %s: %v", ttl, err)
		}
	}
	for _, ttl := range []time.Duration{-time.Second, MaxTokenCacheTTL + time.Second} {
		if err := (Config{TokenCacheTTL: ttl}).Validate(); err == nil {
			t.Errorf("ttl %s must be refused", ttl)
		}
	}
}
