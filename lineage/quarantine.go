package lineage

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/graph"
)

// Quarantine paging.
const (
	DefaultQuarantinePage = 20
	MaxQuarantinePage     = 200
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

// QuarantinedEventConnection is one page of quarantined events, newest first.
type QuarantinedEventConnection struct {
	Nodes       []*QuarantinedEvent
	EndCursor   *string
	HasNextPage bool
}

// ownEvent says whether the caller is the named producer principal that sent the event (projected or
// quarantined). The anonymous principal owns nothing: it stands for every caller without a token.
func ownEvent(ctx context.Context, row graph.EventStatusRow) bool {
	me := authz.FromContext(ctx).Subject
	if me == "" || me == authz.AnonymousSubject {
		return false
	}
	return (row.Projected && row.EventPrincipal == me) || (!row.Projected && row.Quarantined && row.Principal == me)
}

// QuarantinedEvents lists the caller's own quarantined events, newest first; a caller with a global describe
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
	limit, pos, err := s.quarantinePage(first, after, cursorContext)
	if err != nil {
		return nil, err
	}
	rows, err := s.store.QuarantinedPage(ctx, principal, pos, limit+1)
	if err != nil {
		return nil, storeErr(err)
	}
	out := &QuarantinedEventConnection{Nodes: []*QuarantinedEvent{}}
	if len(rows) > limit {
		rows, out.HasNextPage = rows[:limit], true
	}
	for _, r := range rows {
		out.Nodes = append(out.Nodes, quarantinedOf(r))
	}
	if out.HasNextPage {
		last := rows[len(rows)-1]
		b, _ := json.Marshal([]string{strconv.FormatInt(last.ReceivedAt, 10), last.EventID})
		c, err := s.cursor.seal(b, cursorContext)
		if err != nil {
			return nil, err
		}
		out.EndCursor = &c
	}
	return out, nil
}

func (s *Service) quarantinePage(first *int, after *string, context string) (int, graph.QuarantinePos, error) {
	limit := DefaultQuarantinePage
	if first != nil {
		limit = *first
	}
	if limit < 1 || limit > MaxQuarantinePage {
		return 0, graph.QuarantinePos{}, badRequest("first: must be 1..%d", MaxQuarantinePage)
	}
	if after == nil || *after == "" {
		return limit, graph.QuarantinePos{}, nil
	}
	bad := badRequest("after: not a cursor of quarantinedEvents for this caller")
	raw, ok := s.cursor.open(*after, context)
	var parts []string
	if !ok || json.Unmarshal(raw, &parts) != nil || len(parts) != 2 || parts[1] == "" {
		return 0, graph.QuarantinePos{}, bad
	}
	at, err := strconv.ParseInt(parts[0], 10, 64)
	if err != nil {
		return 0, graph.QuarantinePos{}, bad
	}
	return limit, graph.QuarantinePos{ReceivedAt: at, EventID: parts[1]}, nil
}

func quarantinedOf(r graph.QuarantinedRow) *QuarantinedEvent {
	return &QuarantinedEvent{ID: r.EventID, Reason: r.Reason, Field: strOrNil(r.Field), Rule: strOrNil(r.Rule),
		Stage: r.Stage, Producer: strOrNil(r.Producer), Principal: r.Principal, ReceivedAt: timeOrNil(r.ReceivedAt)}
}
