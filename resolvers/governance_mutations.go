package resolvers

import (
	"context"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/governance/mutation"
	"github.com/headwater-data/headwater/resolvers/model"
)

// The governance mutations (ADR 0067): setTags, removeTags, block and unblock map their arguments and call the
// governance/mutation service, which checks the permissions, audits and publishes the event.

// errNoGovernance answers the mutations on a server wired without the service (no gateway in process).
var errNoGovernance = &api.Error{Class: api.ErrUnavailable, Message: "the governance mutations are not enabled on this server"}

func (r *Resolver) setTags(ctx context.Context, d api.DatasetRef, field *string, tags []*model.TagInput, reason *string) (*model.GovernanceChange, error) {
	if r.governance == nil {
		return nil, errNoGovernance
	}
	return changeOf(r.governance.SetTags(ctx, d.Namespace, d.Name, deref(field), tagsOf(tags), deref(reason)))
}

func (r *Resolver) removeTags(ctx context.Context, d api.DatasetRef, field *string, tags []*model.TagInput, reason *string) (*model.GovernanceChange, error) {
	if r.governance == nil {
		return nil, errNoGovernance
	}
	return changeOf(r.governance.RemoveTags(ctx, d.Namespace, d.Name, deref(field), tagsOf(tags), deref(reason)))
}

func (r *Resolver) block(ctx context.Context, t model.BlockTarget, reason string) (*model.GovernanceChange, error) {
	if r.governance == nil {
		return nil, errNoGovernance
	}
	return changeOf(r.governance.Block(ctx, targetOf(t), reason))
}

func (r *Resolver) unblock(ctx context.Context, t model.BlockTarget, reason *string) (*model.GovernanceChange, error) {
	if r.governance == nil {
		return nil, errNoGovernance
	}
	return changeOf(r.governance.Unblock(ctx, targetOf(t), deref(reason)))
}

func changeOf(a mutation.Accepted, err error) (*model.GovernanceChange, error) {
	if err != nil {
		return nil, err
	}
	return &model.GovernanceChange{Accepted: true, EventID: a.EventID, Projected: a.Projected}, nil
}

func tagsOf(in []*model.TagInput) []mutation.Tag {
	out := make([]mutation.Tag, 0, len(in))
	for _, t := range in {
		if t != nil {
			out = append(out, mutation.Tag{Key: t.Key, Value: deref(t.Value)})
		}
	}
	return out
}

func targetOf(t model.BlockTarget) mutation.Target {
	out := mutation.Target{Field: t.Field}
	if t.Dataset != nil {
		out.Namespace, out.Name = t.Dataset.Namespace, t.Dataset.Name
	}
	if e := t.Edge; e != nil && e.Job != nil && e.From != nil {
		out.Edge = &mutation.Edge{JobNamespace: e.Job.Namespace, JobName: e.Job.Name, From: *e.From}
	}
	return out
}
