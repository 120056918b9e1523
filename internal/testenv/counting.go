package testenv

import (
	"context"
	"sync/atomic"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// CountingDriver wraps a driver and counts the sessions it opens (every read opens one): the seam tests use to
// prove a cached path reads nothing from Neo4j.
type CountingDriver struct {
	neo4j.DriverWithContext
	sessions atomic.Int64
}

// NewSession counts and opens a session on the wrapped driver.
func (d *CountingDriver) NewSession(ctx context.Context, c neo4j.SessionConfig) neo4j.SessionWithContext {
	d.sessions.Add(1)
	return d.DriverWithContext.NewSession(ctx, c)
}

// Reads returns the sessions opened since the last call.
func (d *CountingDriver) Reads() int64 { return d.sessions.Swap(0) }
