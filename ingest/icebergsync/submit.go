package icebergsync

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/ingest/gateway"
)

// Submitter sends server-built events through the gateway's path (gateway.Gateway.SubmitFenced), checking fence
// (nil: none) right before producing.
type Submitter interface {
	SubmitFenced(ctx context.Context, events [][]byte, fence gateway.Fence) (gateway.Submission, error)
}

// SubmitPublisher publishes in-process, for the scheduled sync of `headwater serve`: the same per-event path as
// the batch endpoint (validation, the produce check for Principal, the archive through Kafka), without a token or
// an HTTP round trip. Principal is the catalog's service principal from the catalogs file; Fence is the sync's
// lease, checked by the gateway right before each batch is produced (ADR 0087; nil: none).
type SubmitPublisher struct {
	Sub       Submitter
	Principal authz.Principal
	Fence     gateway.Fence
}

// Publish implements Publisher: PublishBatch events a submission, all or nothing each; a refused event ends the
// sync with its field and rule.
func (p SubmitPublisher) Publish(ctx context.Context, events []json.RawMessage) ([]string, error) {
	ctx = authz.WithPrincipal(ctx, p.Principal)
	var ids []string
	for start := 0; start < len(events); start += PublishBatch {
		batch := events[start:min(start+PublishBatch, len(events))]
		raw := make([][]byte, len(batch))
		for i, e := range batch {
			raw[i] = e
		}
		sub, err := p.Sub.SubmitFenced(ctx, raw, p.Fence)
		if err != nil {
			return ids, fmt.Errorf("gateway: %w", err)
		}
		if !sub.Accepted {
			return ids, refusal(sub.Results, start)
		}
		for i, r := range sub.Results {
			if len(r.Warnings) > 0 { // the sync's own facets must read cleanly
				return ids, fmt.Errorf("gateway flagged event %d: %s: %s", start+i, r.Warnings[0].Path, r.Warnings[0].Message)
			}
			ids = append(ids, r.EventID)
		}
	}
	return ids, nil
}

func refusal(results []gateway.Result, offset int) error {
	for _, r := range results {
		if r.Status == "rejected" && r.Error != nil {
			return fmt.Errorf("gateway refused event %d: %s: %s (%s)", offset+r.Index, r.Error.Field, r.Error.Rule, r.Error.Message)
		}
	}
	return errors.New("gateway refused the batch")
}
