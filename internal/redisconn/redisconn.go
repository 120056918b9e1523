// Package redisconn opens the Redis client Headwater uses for its cache and generations.
// Redis is an accelerator: callers must stay correct when it is unreachable. The one thing that needs it is
// the governance mutations' per-dataset lease (governance/lease, ADR 0081): without Redis they refuse (UNAVAILABLE)
// rather than risk a lost update.
package redisconn

import (
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// Config is the Redis connection configuration.
type Config struct {
	Addr        string        `help:"Redis address (empty disables the cache)." default:"127.0.0.1:6379" env:"HEADWATER_REDIS_ADDR" yaml:"addr"`
	Password    string        `help:"Redis password." default:"" env:"HEADWATER_REDIS_PASSWORD" yaml:"password"`
	DB          int           `help:"Redis database number." default:"0" env:"HEADWATER_REDIS_DB" yaml:"db"`
	DialTimeout time.Duration `help:"Redis dial timeout." default:"500ms" env:"HEADWATER_REDIS_DIAL_TIMEOUT" yaml:"dialTimeout"`
	OpTimeout   time.Duration `help:"Redis read/write timeout; kept short so a slow Redis never slows answers much." default:"200ms" env:"HEADWATER_REDIS_OP_TIMEOUT" yaml:"opTimeout"`
}

// Validate reports the first invalid setting by name.
func (c Config) Validate() error {
	if c.DB < 0 {
		return errors.New("redis.db: must not be negative")
	}
	if c.Addr != "" && (c.DialTimeout <= 0 || c.OpTimeout <= 0) {
		return errors.New("redis.dial-timeout and redis.op-timeout: must be positive")
	}
	return nil
}

// Open returns a client, or nil when Addr is empty (cache disabled). It does not wait for Redis.
func Open(c Config) *redis.Client {
	if c.Addr == "" {
		return nil
	}
	return redis.NewClient(&redis.Options{
		Addr: c.Addr, Password: c.Password, DB: c.DB,
		DialTimeout: c.DialTimeout, ReadTimeout: c.OpTimeout, WriteTimeout: c.OpTimeout,
		MaxRetries: 1, PoolSize: 32,
	})
}
