package lineage

import (
	"context"
	"time"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/graph"
)

// Quarantine paging: a page reads at most QuarantineScanMax records in event-id order (the unique index on the
// key), whoever they belong to, so its cost is bounded whatever the size of the quarantine.
const (
	DefaultQuarantinePage = 20
	MaxQuarantinePage     = 200
	QuarantineScanMax     = 5000
)

// QuarantinedEvent is one event Headwater refused or could not project, as its producer may see it.
type QuarantinedEvent struct {
	ID         string
	Reason     string
	Field      *string
	Rule       *string
	Stage      string // gateway (refused before it was accepted) or consumer (refused or failed after)
	Producer   *string
	Principal  string
	ReceivedAt *time.Time
}

// QuarantinedEventConnection is one page of quarantined events, in event-id order.
type QuarantinedEventConnection struct {
	Nodes       []*QuarantinedEvent
	EndCursor   *string
	HasNextPage bool
}

// QuarantinedEvents lists the caller's own quarantined events in event-id order; a caller with a global describe
// grant (an administrator) sees every principal's. Quarantine reasons may name anything the event named, which
// is why no one else's are shown.
func (s *Service) QuarantinedEvents(ctx context.Context, first *int, after *string) (*QuarantinedEventConnection, error) {
	me := authz.FromContext(ctx).Subject
	scope, err := s.scope(ctx)
	if err != nil {
		return nil, err
	}
	principal := me
	if scope.Global {
		principal = ""
	} else if me == "" || me == authz.AnonymousSubject {
		return &QuarantinedEventConnection{Nodes: []*QuarantinedEvent{}}, nil
	}
	cursorContext := "quarantine\x00" + digest(me)
	limit, afterKey, err := s.quarantinePage(first, after, cursorContext)
	if err != nil {
		return nil, err
	}
	scan, err := s.store.QuarantinedPage(ctx, principal, afterKey, QuarantineScanMax, limit+1)
	if err != nil {
		return nil, storeErr(err)
	}
	out := &QuarantinedEventConnection{Nodes: []*QuarantinedEvent{}}
	rows, next := scan.Rows, ""
	switch {
	case len(rows) > limit:
		rows = rows[:limit]
		next = rows[limit-1].EventID
	case scan.Scanned == QuarantineScanMax:
		next = scan.LastKey // the budget ended the page: the next one continues the scan
	}
	for _, r := range rows {
		out.Nodes = append(out.Nodes, quarantinedOf(r))
	}
	if next != "" {
		c, err := s.cursor.seal([]byte(next), cursorContext)
		if err != nil {
			return nil, err
		}
		out.EndCursor, out.HasNextPage = &c, true
	}
	return out, nil
}

// quarantinePage reads first (1..MaxQuarantinePage) and the event id a sealed cursor continues after.
func (s *Service) quarantinePage(first *int, after *string, context string) (int, string, error) {
	limit := DefaultQuarantinePage
	if first != nil {
		limit = *first
	}
	if limit < 1 || limit > MaxQuarantinePage {
		return 0, "", badRequest("first: must be 1..%d", MaxQuarantinePage)
	}
	if after == nil || *after == "" {
		return limit, "", nil
	}
	raw, ok := s.cursor.open(*after, context)
	if !ok || len(raw) == 0 {
		return 0, "", badRequest("after: not a cursor of quarantinedEvents for this caller")
	}
	return limit, string(raw), nil
}

func quarantinedOf(r graph.QuarantinedRow) *QuarantinedEvent {
	return &QuarantinedEvent{ID: r.EventID, Reason: r.Reason, Field: strOrNil(r.Field), Rule: strOrNil(r.Rule),
		Stage: r.Stage, Producer: strOrNil(r.Producer), Principal: r.Principal, ReceivedAt: timeOrNil(r.ReceivedAt)}
}
