package eventstatus

import (
	"context"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/seal"
)

// Quarantine paging: a page reads at most quarantineScanMax records in event-id order (the unique index on the
// key), whoever they belong to, so its cost is bounded whatever the size of the quarantine.
const (
	defaultQuarantinePage = 20
	maxQuarantinePage     = 200
	quarantineScanMax     = 5000
)

// QuarantinedEvents lists the caller's own quarantined events in event-id order; a caller with a global describe
// grant (an administrator) sees every principal's. Quarantine reasons may name anything the event named, which
// is why no one else's are shown.
func (s *Service) QuarantinedEvents(ctx context.Context, first *int, after *string) (*api.QuarantinedEventConnection, error) {
	me := authz.FromContext(ctx).Subject
	scope, err := s.scope(ctx)
	if err != nil {
		return nil, err
	}
	principal := me
	if scope.Global {
		principal = ""
	} else if me == "" || me == authz.AnonymousSubject {
		return &api.QuarantinedEventConnection{Nodes: []*api.QuarantinedEvent{}}, nil
	}
	cursorContext := "quarantine\x00" + seal.Digest(me)
	limit, afterKey, err := s.quarantinePage(first, after, cursorContext)
	if err != nil {
		return nil, err
	}
	scan, err := s.store.QuarantinedPage(ctx, principal, afterKey, quarantineScanMax, limit+1)
	if err != nil {
		return nil, api.StoreErr(err)
	}
	out := &api.QuarantinedEventConnection{Nodes: []*api.QuarantinedEvent{}}
	rows, next := scan.Rows, ""
	switch {
	case len(rows) > limit:
		rows = rows[:limit]
		next = rows[limit-1].EventID
	case scan.Scanned == quarantineScanMax:
		next = scan.LastKey // the budget ended the page: the next one continues the scan
	}
	for _, r := range rows {
		out.Nodes = append(out.Nodes, quarantinedOf(r))
	}
	if next != "" {
		c, err := s.cursor.Seal([]byte(next), cursorContext)
		if err != nil {
			return nil, err
		}
		out.EndCursor, out.HasNextPage = &c, true
	}
	return out, nil
}

// quarantinePage reads first (1..maxQuarantinePage) and the event id a sealed cursor continues after.
func (s *Service) quarantinePage(first *int, after *string, context string) (int, string, error) {
	limit := defaultQuarantinePage
	if first != nil {
		limit = *first
	}
	if limit < 1 || limit > maxQuarantinePage {
		return 0, "", api.BadRequest("first: must be 1..%d", maxQuarantinePage)
	}
	if after == nil || *after == "" {
		return limit, "", nil
	}
	raw, ok := s.cursor.Open(*after, context)
	if !ok || len(raw) == 0 {
		return 0, "", api.BadRequest("after: not a cursor of quarantinedEvents for this caller")
	}
	return limit, string(raw), nil
}

func quarantinedOf(r graph.QuarantinedRow) *api.QuarantinedEvent {
	return &api.QuarantinedEvent{ID: r.EventID, Reason: r.Reason, Field: strOrNil(r.Field), Rule: strOrNil(r.Rule),
		Stage: r.Stage, Producer: strOrNil(r.Producer), Principal: r.Principal, ReceivedAt: timeOrNil(r.ReceivedAt)}
}
