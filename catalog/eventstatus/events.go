package eventstatus

import (
	"context"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/project"
	"github.com/headwater-data/headwater/internal/rules"
)

// Event says what became of an event id the caller sent: PROJECTED, QUARANTINED, or PENDING (also for unknown
// ids). Event ids are scoped by producer principal (ADR 0019): the caller's own event is looked up, never another
// principal's under the same id. An id conflict (the caller reused the id for other content) answers QUARANTINED
// with rule id-conflict even though the first event under the id was projected.
func (s *Service) Event(ctx context.Context, id string) (*api.EventStatus, error) {
	st := &api.EventStatus{ID: id, State: api.EventPending}
	subject := authz.FromContext(ctx).Subject
	if subject == "" {
		return st, nil
	}
	row, err := s.store.EventStatus(ctx, graph.EventKey(subject, id))
	if err != nil {
		return nil, api.StoreErr(err)
	}
	switch {
	case row.Quarantined && (row.Rule == rules.IDConflict || !row.Projected):
		st.State, st.Reason, st.Field = api.EventQuarantined, strOrNil(row.Reason), strOrNil(row.Field)
		st.Producer, st.ReceivedAt, st.Rule = strOrNil(row.Producer), timeOrNil(row.ReceivedAt), strOrNil(row.Rule)
	case row.Projected:
		st.State, st.Producer = api.EventProjected, strOrNil(row.Event.Producer)
		st.EventType, st.EventTime, st.ReceivedAt = strOrNil(row.Event.EventType), timeOrNil(row.Event.EventTime), timeOrNil(row.Event.ReceivedAt)
		if st.UnresolvedIdentities, err = s.eventUnresolved(row); err != nil {
			return nil, err
		}
	}
	if row.Projected && row.Event.RunKey != "" {
		runs, err := s.runs.RunsByKeys(ctx, []string{row.Event.RunKey}) // shown only when the caller may describe it
		if err != nil {
			return nil, err
		}
		st.Run = runs[row.Event.RunKey]
	}
	return st, nil
}

// eventUnresolved lists the identifiers a projected event stated that name no single dataset (issue 14 item 1:
// nothing vanishes silently). Event ids are scoped by principal (ADR 0019), so only the producer that stated them
// asks: they name nothing it did not send itself.
func (s *Service) eventUnresolved(row graph.EventStatusRow) ([]*api.UnresolvedIdentity, error) {
	ids, err := project.UnresolvedInPayload(row.Payload)
	if err != nil {
		return nil, api.StoreErr(err)
	}
	out := make([]*api.UnresolvedIdentity, 0, len(ids))
	for _, u := range ids {
		out = append(out, &api.UnresolvedIdentity{Namespace: u.Namespace, Name: u.Name, Reason: u.Reason})
	}
	return out, nil
}
