package catalog

import (
	"context"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/internal/permcheck"
)

// JobTags answers Job.tags: the job tags facet's tags (ADR 0068), a tag of a sensitive class only with
// VIEW_SENSITIVE on the job (one policy call, only when the job carries one). The job itself was already shown,
// so the caller may describe it.
func (s *Catalog) JobTags(ctx context.Context, j *api.Job) ([]*api.Tag, error) {
	set := s.gate.Settings()
	out := make([]*api.Tag, 0, len(j.TagNames))
	sensitive := false
	for _, t := range j.TagNames {
		sensitive = sensitive || set.Sensitive("", []string{t})
	}
	mayView := false
	if sensitive {
		b := permcheck.NewBatch()
		b.Add(j.Key, authz.PrivViewSensitive, authz.Candidate{Kind: authz.KindJob, Key: j.Key, Namespace: j.Namespace, Name: j.Name})
		if err := b.Run(ctx, s.gate, authz.FromContext(ctx)); err != nil {
			return nil, err
		}
		mayView = b.OK(j.Key)
	}
	for _, t := range j.TagNames {
		if set.Sensitive("", []string{t}) && !mayView {
			continue
		}
		out = append(out, &api.Tag{Name: t})
	}
	return out, nil
}
