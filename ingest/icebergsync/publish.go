package icebergsync

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// maxGatewayAnswer caps what the sync reads of one gateway answer.
const maxGatewayAnswer = 8 << 20

// GatewayPublisher posts the sync's events to a Headwater gateway's batch endpoint under the sync's own token (a
// service principal with PRODUCE on the catalog's namespaces), so they pass the gateway's validation and
// ownership checks, are archived and replay like any producer's.
type GatewayPublisher struct {
	URL   string // the gateway's base URL (http://127.0.0.1:8080)
	Token string
	HTTP  *http.Client
}

// Publish implements Publisher: PublishBatch events a request; any event the gateway refuses ends the sync with
// that event's field and rule (the events accepted before it stay accepted: they are each complete).
func (p GatewayPublisher) Publish(ctx context.Context, events []json.RawMessage) ([]string, error) {
	var ids []string
	for start := 0; start < len(events); start += PublishBatch {
		got, err := p.post(ctx, events[start:min(start+PublishBatch, len(events))])
		ids = append(ids, got...)
		if err != nil {
			return ids, err
		}
	}
	return ids, nil
}

func (p GatewayPublisher) post(ctx context.Context, batch []json.RawMessage) ([]string, error) {
	body, err := json.Marshal(batch)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(p.URL, "/")+"/api/v1/lineage/batch", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+p.Token)
	resp, err := p.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	defer func() { _ = resp.Body.Close() }() // the answer is read in full below; a close error changes nothing
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxGatewayAnswer))
	if err != nil {
		return nil, fmt.Errorf("gateway: reading the answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("gateway: batch of %d events: HTTP %d: %s", len(batch), resp.StatusCode, truncate(raw))
	}
	var ans struct {
		Results []struct {
			Status   string            `json:"status"`
			EventID  string            `json:"eventId"`
			Warnings []json.RawMessage `json:"warnings"`
		} `json:"results"`
	}
	if err := json.Unmarshal(raw, &ans); err != nil {
		return nil, fmt.Errorf("gateway: answer: %w", err)
	}
	var ids []string
	for i, r := range ans.Results {
		if r.Status != "accepted" {
			return ids, fmt.Errorf("gateway refused event %d of the batch (%s): %s", i, r.Status, truncate(raw))
		}
		if len(r.Warnings) > 0 { // the sync's own facets must read cleanly
			return ids, fmt.Errorf("gateway flagged event %d of the batch: %s", i, truncate(raw))
		}
		ids = append(ids, r.EventID)
	}
	return ids, nil
}

func truncate(b []byte) string {
	const n = 512
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}
