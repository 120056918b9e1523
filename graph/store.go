package graph

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j/config"
)

// Config is the Neo4j connection configuration.
type Config struct {
	URI          string        `help:"Neo4j Bolt URI." default:"bolt://127.0.0.1:7687" env:"HEADWATER_NEO4J_URI" yaml:"uri"`
	User         string        `help:"Neo4j user (empty when auth is disabled)." default:"" env:"HEADWATER_NEO4J_USER" yaml:"user"`
	Password     string        `help:"Neo4j password." default:"" env:"HEADWATER_NEO4J_PASSWORD" yaml:"password" secret:"true"`
	Database     string        `help:"Neo4j database name." default:"neo4j" env:"HEADWATER_NEO4J_DATABASE" yaml:"database"`
	MaxPoolSize  int           `help:"Maximum Bolt connections." default:"50" env:"HEADWATER_NEO4J_MAX_POOL" yaml:"maxPoolSize"`
	ConnectWait  time.Duration `help:"How long to wait for Neo4j at start." default:"30s" env:"HEADWATER_NEO4J_CONNECT_WAIT" yaml:"connectWait"`
	QueryTimeout time.Duration `help:"Default transaction timeout." default:"30s" env:"HEADWATER_NEO4J_QUERY_TIMEOUT" yaml:"queryTimeout"`
}

// Validate reports the first invalid setting by name.
func (c Config) Validate() error {
	switch {
	case c.URI == "":
		return errors.New("neo4j.uri: must not be empty")
	case c.Database == "":
		return errors.New("neo4j.database: must not be empty")
	case c.MaxPoolSize < 1:
		return fmt.Errorf("neo4j.max-pool-size: must be at least 1, got %d", c.MaxPoolSize)
	case c.QueryTimeout <= 0:
		return errors.New("neo4j.query-timeout: must be positive")
	}
	return nil
}

// Store owns the Neo4j driver and the database name.
type Store struct {
	Driver   neo4j.DriverWithContext
	Database string
	timeout  time.Duration
}

// Open connects to Neo4j and waits (up to ConnectWait) until it answers.
func Open(ctx context.Context, c Config) (*Store, error) {
	auth := neo4j.NoAuth()
	if c.User != "" {
		auth = neo4j.BasicAuth(c.User, c.Password, "")
	}
	drv, err := neo4j.NewDriverWithContext(c.URI, auth, func(cfg *config.Config) {
		cfg.MaxConnectionPoolSize = c.MaxPoolSize
		cfg.ConnectionAcquisitionTimeout = 10 * time.Second
		cfg.SocketConnectTimeout = 5 * time.Second
	})
	if err != nil {
		return nil, fmt.Errorf("neo4j driver for %s: %w", c.URI, err)
	}
	deadline := time.Now().Add(c.ConnectWait)
	for {
		err = drv.VerifyConnectivity(ctx)
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if err != nil {
		_ = drv.Close(context.Background())
		return nil, fmt.Errorf("neo4j at %s not reachable: %w", c.URI, err)
	}
	return &Store{Driver: drv, Database: c.Database, timeout: c.QueryTimeout}, nil
}

// Close closes the driver.
func (s *Store) Close(ctx context.Context) error { return s.Driver.Close(ctx) }

// Ping checks that the database answers a trivial query.
func (s *Store) Ping(ctx context.Context) error {
	_, err := neo4j.ExecuteQuery(ctx, s.Driver, "RETURN 1", nil, neo4j.EagerResultTransformer,
		neo4j.ExecuteQueryWithDatabase(s.Database))
	return err
}

// Session opens a session on the configured database.
func (s *Store) Session(ctx context.Context, mode neo4j.AccessMode) neo4j.SessionWithContext {
	return s.Driver.NewSession(ctx, neo4j.SessionConfig{DatabaseName: s.Database, AccessMode: mode})
}

// TxTimeout is the default transaction timeout to pass with neo4j.WithTxTimeout.
func (s *Store) TxTimeout() time.Duration { return s.timeout }

// IsContention reports whether err ended a transaction that waited too long for other work on the same nodes: the
// transaction timeout (which ends a wait for a lock another transaction holds), a lock-acquisition timeout, a
// deadlock, or the driver's retries of such transient errors running out. Such a failure says nothing about the
// events in the transaction, so the consumer retries them rather than quarantine one that fails alone (ADR 0048).
func IsContention(err error) bool {
	if _, ok := errors.AsType[*neo4j.TransactionExecutionLimit](err); ok {
		return true
	}
	ne, ok := errors.AsType[*neo4j.Neo4jError](err)
	if !ok {
		return false
	}
	switch ne.Code {
	case "Neo.TransientError.Transaction.LockAcquisitionTimeout", "Neo.TransientError.Transaction.DeadlockDetected",
		"Neo.TransientError.Transaction.Terminated", "Neo.TransientError.Transaction.LockClientStopped",
		// Neo4j 5 ends a transaction that timed out waiting for a lock with this one.
		"Neo.ClientError.Transaction.LockClientStopped", "Neo.ClientError.Transaction.Terminated":
		return true
	}
	return strings.HasPrefix(ne.Code, "Neo.ClientError.Transaction.TransactionTimedOut")
}
