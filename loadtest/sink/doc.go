// Package sink delivers generated OpenLineage events to Headwater: the HTTP gateway (single and batch
// endpoints, honouring 429/503 Retry-After), straight into Kafka as the OpenLineage Kafka transport does
// (murmur2 partitioning on the transport's key), or a newline-delimited JSON file for replay.
//
// Every sink answers per event, so a driver can tell accepted from rejected events and learn the eventId the
// gateway assigned.
package sink

import (
	"context"

	"github.com/headwater-data/headwater/loadtest/gen"
)

// Result is the outcome of one event.
type Result struct {
	EventID   string // the gateway's eventId (HTTP only; empty otherwise)
	Status    int    // HTTP status of the last attempt (0 for Kafka and file)
	Attempts  int    // how many times it was sent (retries after 429/503 included)
	Throttled int    // how many attempts were answered 429 or 503
	Err       error  // nil when accepted
	Reason    string // the gateway's reason for refusing this event of an accepted batch (its batch item's reason)
}

// Sink delivers events in order and answers one Result per event. An error return means the sink itself
// failed (the per-event Results then are not meaningful).
type Sink interface {
	Send(ctx context.Context, events []gen.Event) ([]Result, error)
	Close() error
}
