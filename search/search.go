package search

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/seal"
)

// Search finds datasets and jobs by name, keeping only those the caller may describe. Pages are positioned
// after the last hit returned (never by an offset, which would count hidden hits), and a page scans on until it
// has a visible hit more than it returns or the matches run out, so whether a page is empty, and hasNextPage, depend
// only on what the caller may see. The exception is a page that reaches a scan bound (budget.go: hits per
// page, per request, per principal and second): it ends there with hasNextPage and a cursor after the last hit
// scanned. Cursors are sealed and bound to the caller and the query, so a position never shows which hit it names.
func (s *Searcher) Search(ctx context.Context, q string, first *int, after *string) (*api.SearchConnection, error) {
	if strings.TrimSpace(q) == "" {
		return nil, api.BadRequest("query: must not be empty")
	}
	subject := authz.FromContext(ctx).Subject
	cursorContext := "search\x00" + seal.Digest(subject) + "\x00" + q
	lim, pos, err := s.searchPage(first, after, cursorContext)
	if err != nil {
		return nil, err
	}
	scope, err := s.scope(ctx)
	if err != nil {
		return nil, err
	}
	found, pos, exhausted, err := s.searchScan(ctx, q, pos, lim, subject)
	if err != nil {
		return nil, err
	}
	c := &api.SearchConnection{Nodes: []api.SearchResult{}, PermissionsFiltered: !scope.Global,
		HasNextPage: len(found) > lim || !exhausted}
	for _, f := range found[:min(lim, len(found))] {
		c.Nodes = append(c.Nodes, f.node)
	}
	end := pos // a scan bound: continue after the last hit scanned
	if len(found) > 0 && (len(found) > lim || exhausted) {
		end = found[min(lim, len(found))-1].hit
	}
	if c.HasNextPage || len(found) > 0 {
		cur, err := s.searchCursor(end, cursorContext)
		if err != nil {
			return nil, err
		}
		c.EndCursor = &cur
	} else if after != nil && *after != "" {
		c.EndCursor = after
	}
	return c, nil
}

// searchScan reads hits after pos in batches until it has lim+1 visible ones, the matches run out (exhausted),
// or a scan bound is reached; it returns the visible hits and the last hit scanned.
func (s *Searcher) searchScan(ctx context.Context, q string, pos graph.SearchHit, lim int, subject string) (found []searchFound, last graph.SearchHit, exhausted bool, err error) {
	budget := s.requestBudget(ctx)
	for scanned := 0; len(found) <= lim; {
		n := budget.take(min(searchBatch, s.cfg.SearchScanPerPage-scanned))
		if n == 0 {
			return found, pos, false, nil
		}
		hits, err := s.store.SearchAfter(ctx, q, pos, n)
		if err != nil {
			return nil, pos, false, api.StoreErr(err)
		}
		budget.refund(n - len(hits))
		got, err := s.searchNodes(ctx, hits)
		if err != nil {
			return nil, pos, false, err
		}
		found = append(found, got...)
		scanned += len(hits)
		paid := s.scans.charge(ctx, subject, len(hits)) // waits while the principal is over its scan rate
		if len(hits) < n {
			return found, pos, true, nil
		}
		pos = hits[len(hits)-1]
		if !paid {
			return found, pos, false, nil
		}
	}
	return found, pos, false, nil
}

type searchFound struct {
	node api.SearchResult
	hit  graph.SearchHit
}

// searchNodes loads the hits the caller may describe, in hit order.
func (s *Searcher) searchNodes(ctx context.Context, hits []graph.SearchHit) ([]searchFound, error) {
	var dk, jk []string
	for _, h := range hits {
		if h.Label == graph.LabelDataset {
			dk = append(dk, h.Key)
		} else {
			jk = append(jk, h.Key)
		}
	}
	ds, err := s.nodes.DatasetsByKeys(ctx, dk, s.clock())
	if err != nil {
		return nil, err
	}
	js, err := s.nodes.JobsByKeys(ctx, jk)
	if err != nil {
		return nil, err
	}
	var out []searchFound
	for _, h := range hits {
		if d, ok := ds[h.Key]; ok && h.Label == graph.LabelDataset {
			out = append(out, searchFound{d, h})
		} else if j, ok := js[h.Key]; ok && h.Label != graph.LabelDataset {
			out = append(out, searchFound{j, h})
		}
	}
	return out, nil
}

// Search paging.
const (
	searchBatch = 500 // hits read per round (scan bounds: budget.go)
)

// searchCursor is the sealed position after a hit, for one caller and query.
func (s *Searcher) searchCursor(h graph.SearchHit, context string) (string, error) {
	b, _ := json.Marshal([]string{h.Label, h.Key, h.Name})
	return s.cursor.Seal(b, context)
}

func (s *Searcher) searchPage(first *int, after *string, context string) (int, graph.SearchHit, error) {
	limit := 20
	if first != nil {
		limit = *first
	}
	if limit < 1 || limit > api.MaxPage {
		return 0, graph.SearchHit{}, api.BadRequest("first: must be 1..%d", api.MaxPage)
	}
	if after == nil || *after == "" {
		return limit, graph.SearchHit{}, nil
	}
	bad := api.BadRequest("after: not a cursor of this search for this caller")
	raw, ok := s.cursor.Open(*after, context)
	var parts []string
	if !ok || json.Unmarshal(raw, &parts) != nil || len(parts) != 3 || parts[2] == "" {
		return 0, graph.SearchHit{}, bad
	}
	return limit, graph.SearchHit{Label: parts[0], Key: parts[1], Name: parts[2]}, nil
}
