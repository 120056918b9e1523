package compare

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/headwater-data/headwater/loadtest/drive"
)

// Root is a start dataset with its class (hub or ordinary).
type Root = drive.Root

// LineagePageQuery is the `lineage` operation with what the comparison needs: node ids, edge ends and job,
// and the cursor to continue a truncated answer.
const LineagePageQuery = `query Lineage($start: NodeRef!, $direction: Direction!, $depth: Int!, $maxNodes: Int, $asOf: Time, $after: String) {
  lineage(start: $start, direction: $direction, depth: $depth, granularity: DATASET, maxNodes: $maxNodes, asOf: $asOf, after: $after) {
    truncated
    cursor
    nodes { id }
    edges { from to job { id } }
  }
}`

// Headwater asks the GraphQL API and follows cursors until the answer is complete.
type Headwater struct {
	URL      string
	Token    string // bearer token; "" sends no header
	Client   drive.Doer
	MaxNodes int
	Timeout  time.Duration // per page
	MaxPages int           // safety bound on cursor following
}

// ErrHeadwater reports a failed or malformed GraphQL answer.
var ErrHeadwater = errors.New("headwater lineage query failed")

type pageAnswer struct {
	Data *struct {
		Lineage *struct {
			Truncated bool    `json:"truncated"`
			Cursor    *string `json:"cursor"`
			Nodes     []struct {
				ID string `json:"id"`
			} `json:"nodes"`
			Edges []struct {
				From string `json:"from"`
				To   string `json:"to"`
				Job  *struct {
					ID string `json:"id"`
				} `json:"job"`
			} `json:"edges"`
		} `json:"lineage"`
	} `json:"data"`
	Errors []struct {
		Message    string `json:"message"`
		Extensions struct {
			Code string `json:"code"`
		} `json:"extensions"`
	} `json:"errors"`
}

// Answer returns the complete answer (all pages) and the number of pages it took.
func (h *Headwater) Answer(ctx context.Context, root Root, down bool, depth int, asOf time.Time) (Answer, int, error) {
	a := NewAnswer()
	var after *string
	for page := 1; page <= max(1, h.MaxPages); page++ {
		p, err := h.page(ctx, root, down, depth, asOf, after)
		if err != nil {
			return Answer{}, page, err
		}
		if err := p.addTo(a); err != nil {
			return Answer{}, page, err
		}
		l := p.Data.Lineage
		if !l.Truncated {
			return a, page, nil
		}
		if l.Cursor == nil || *l.Cursor == "" {
			return Answer{}, page, fmt.Errorf("%w: truncated page without a cursor", ErrHeadwater)
		}
		after = l.Cursor
	}
	return Answer{}, h.MaxPages, fmt.Errorf("%w: still truncated after %d pages", ErrHeadwater, h.MaxPages)
}

func (h *Headwater) page(ctx context.Context, root Root, down bool, depth int, asOf time.Time, after *string) (*pageAnswer, error) {
	dir := "UPSTREAM"
	if down {
		dir = "DOWNSTREAM"
	}
	vars := map[string]any{"start": map[string]any{"dataset": map[string]any{"namespace": root.Namespace, "name": root.Name}},
		"direction": dir, "depth": depth, "maxNodes": h.MaxNodes, "asOf": asOf.UTC().Format(time.RFC3339Nano)}
	if after != nil {
		vars["after"] = *after
	}
	body, err := json.Marshal(map[string]any{"query": LineagePageQuery, "operationName": "Lineage", "variables": vars})
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, h.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if h.Token != "" {
		req.Header.Set("Authorization", "Bearer "+h.Token)
	}
	resp, err := h.Client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrHeadwater, err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%w: read answer: %w", ErrHeadwater, err)
	}
	var p pageAnswer
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("%w: http %d: %s", ErrHeadwater, resp.StatusCode, snippet(b))
	}
	if len(p.Errors) > 0 {
		return nil, fmt.Errorf("%w: %s: %s", ErrHeadwater, p.Errors[0].Extensions.Code, p.Errors[0].Message)
	}
	if p.Data == nil || p.Data.Lineage == nil {
		return nil, fmt.Errorf("%w: http %d without data", ErrHeadwater, resp.StatusCode)
	}
	return &p, nil
}

// addTo decodes the page's opaque ids (base64url of "<kind>:<key>", lineage/ids.go) into stable keys.
func (p *pageAnswer) addTo(a Answer) error {
	l := p.Data.Lineage
	for _, n := range l.Nodes {
		k, err := keyOf(n.ID, "D")
		if err != nil {
			return err
		}
		a.Nodes[k] = true
	}
	for _, e := range l.Edges {
		from, err := keyOf(e.From, "D")
		if err != nil {
			return err
		}
		to, err := keyOf(e.To, "D")
		if err != nil {
			return err
		}
		job := ""
		if e.Job != nil {
			if job, err = keyOf(e.Job.ID, "J"); err != nil {
				return err
			}
		}
		a.Edges[Edge{From: from, To: to, Job: job}] = true
	}
	return nil
}

// keyOf decodes a public id of the given kind.
func keyOf(id, kind string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(id)
	if err != nil {
		return "", fmt.Errorf("%w: id %q is not base64url: %w", ErrHeadwater, id, err)
	}
	k, key, ok := strings.Cut(string(b), ":")
	if !ok || k != kind || key == "" {
		return "", fmt.Errorf("%w: id %q is not a %s id", ErrHeadwater, id, kind)
	}
	return key, nil
}

const snippetLen = 200

func snippet(b []byte) string {
	if len(b) > snippetLen {
		return string(b[:snippetLen]) + "..."
	}
	return string(b)
}
