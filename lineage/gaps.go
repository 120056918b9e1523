package lineage

import (
	"context"
	"slices"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/lineage/trustgaps"
)

// TrustSource is what the answer path asks of the trust signals (trust.Service; ADR 0032).
type TrustSource = trustgaps.Source

// trustComputer computes one answer's trust gaps and coverage (trustgaps.Computer).
type trustComputer interface {
	Compute(ctx context.Context, p authz.Principal, scope authz.Scope, nodes []api.Node, edges []*api.LineageEdge,
		jobs []string, t int64) ([]api.Gap, *api.AnswerCoverage, error)
	Unreported(ctx context.Context, p authz.Principal, scope authz.Scope, nodes []api.Node, t int64) ([]api.Gap, error)
}

// trustGaps decorates the answerer (outside the results tier, so nothing it adds is cached: it depends on the
// clock and the inventory, not on the graph generations the cache validates) with the gaps the trust signals
// give: JOB_NOT_REPORTING, PRODUCER_STALE and the answer's coverage.
type trustGaps struct {
	inner answerer
	gaps  trustComputer
}

var _ answerer = trustGaps{}

func (g trustGaps) answer(ctx context.Context, q request) (page, error) {
	pg, err := g.inner.answer(ctx, q)
	if err != nil {
		return page{}, err
	}
	gr := pg.graph
	var jobs []string
	for _, n := range gr.Nodes {
		if j, ok := n.(*api.Job); ok {
			jobs = append(jobs, j.Key)
		}
	}
	gaps, cov, err := g.gaps.Compute(ctx, q.principal, q.scope, gr.Nodes, gr.Edges, jobs, q.t)
	if err != nil {
		return page{}, err
	}
	gr.Gaps = append(slices.Clip(gr.Gaps), gaps...)
	gr.Coverage = cov
	return pg, nil
}

// impactTrust adds the trust gaps and coverage to an impact report.
func (g trustGaps) impact(ctx context.Context, r *api.ImpactReport, p authz.Principal, scope authz.Scope, nodes []api.Node,
	edges []*api.LineageEdge, t int64) error {
	var jobs []string
	for _, j := range r.Jobs {
		jobs = append(jobs, j.Key)
	}
	gaps, cov, err := g.gaps.Compute(ctx, p, scope, nodes, edges, jobs, t)
	if err != nil {
		return err
	}
	r.Gaps = append(slices.Clip(r.Gaps), gaps...)
	r.Coverage = cov
	return nil
}

// unreportedOn appends to gaps the UNREPORTED_WRITE gaps of the datasets an answer beyond lineage and impact
// includes (piiFlow, effective tags, sensitivity; ADR 0063): nodes are what the answer shows (visible to the
// caller), each Field standing for its dataset. Without a trust source the gaps are unchanged.
func (s *Service) unreportedOn(ctx context.Context, q flowRequest, gaps []api.Gap, nodes []api.Node) ([]api.Gap, error) {
	if s.trust == nil || len(nodes) == 0 {
		return gaps, nil
	}
	more, err := s.trust.gaps.Unreported(ctx, q.principal, q.scope, nodes, q.t)
	if err != nil {
		return nil, err
	}
	return append(slices.Clip(gaps), more...), nil
}
