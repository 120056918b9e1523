package resolvers

import (
	"context"
	"time"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/inventory/canaries"
	"github.com/headwater-data/headwater/resolvers/model"
)

// The canary operations (ADR 0032): registration, retirement and the list go through the canary registry
// (package canaries: MANAGE_INVENTORY, audited); the checks run in package canary.

func (r *Resolver) registerCanary(ctx context.Context, in model.CanaryInput) (*model.Canary, error) {
	if r.canaryReg == nil {
		return nil, errNoTrust
	}
	c := canaries.Canary{Name: in.Name, From: canaryEnd(in.From), To: canaryEnd(in.To), Transformation: deref(in.Transformation)}
	if in.Job != nil {
		c.JobNamespace, c.JobName = in.Job.Namespace, in.Job.Name
	}
	c, err := r.canaryReg.Register(ctx, authz.FromContext(ctx), c)
	if err != nil {
		return nil, err
	}
	return canaryModel(c), nil
}

func (r *Resolver) retireCanary(ctx context.Context, name string) (bool, error) {
	if r.canaryReg == nil {
		return false, errNoTrust
	}
	if err := r.canaryReg.Retire(ctx, authz.FromContext(ctx), name); err != nil {
		return false, err
	}
	return true, nil
}

func (r *Resolver) canaries(ctx context.Context) ([]*model.Canary, error) {
	if r.canaryReg == nil {
		return nil, errNoTrust
	}
	all, err := r.canaryReg.List(ctx, authz.FromContext(ctx))
	if err != nil {
		return nil, err
	}
	out := make([]*model.Canary, len(all))
	for i, c := range all {
		out[i] = canaryModel(c)
	}
	return out, nil
}

func canaryEnd(e *model.CanaryEndInput) canaries.End {
	if e == nil {
		return canaries.End{}
	}
	return canaries.End{Namespace: e.Namespace, Name: e.Name, Field: deref(e.Field)}
}

func canaryModel(c canaries.Canary) *model.Canary {
	end := func(e canaries.End) *model.CanaryEnd {
		return &model.CanaryEnd{Namespace: e.Namespace, Name: e.Name, Field: optStr(e.Field)}
	}
	m := &model.Canary{Name: c.Name, From: end(c.From), To: end(c.To), Transformation: optStr(c.Transformation),
		RegisteredAt: c.RegisteredAt, RegisteredBy: c.RegisteredBy, RetiredAt: optTime(c.RetiredAt),
		CheckedAt: optTime(c.CheckedAt), FailingSince: optTime(c.FailingSince), Failure: optStr(c.Failure),
		Checks: int(c.Checks), Passes: int(c.Passes)}
	if c.JobName != "" {
		m.Job = &model.JobRefValue{Namespace: c.JobNamespace, Name: c.JobName}
	}
	if !c.CheckedAt.IsZero() {
		ok := c.OK
		m.Ok = &ok
	}
	return m
}

func optStr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
