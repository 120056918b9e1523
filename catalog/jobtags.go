package catalog

import (
	"context"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/internal/permcheck"
)

// JobTags answers Job.tags: the job tags facet's tags (ADR 0068) in force at the job's asOf (ADR 0090), a tag of
// a sensitive class only with VIEW_SENSITIVE on the job (one policy call, only when the job carries one). The job
// itself was already shown, so the caller may describe it.
func (s *Catalog) JobTags(ctx context.Context, j *api.Job) ([]*api.Tag, error) {
	set := s.gate.Settings()
	out := make([]*api.Tag, 0, len(j.TagNames))
	sensitive := false
	for _, t := range j.TagNames {
		sensitive = sensitive || set.Sensitive("", []string{t})
	}
	mayView := false
	if sensitive {
		var err error
		if mayView, err = s.mayViewJobSensitive(ctx, j); err != nil {
			return nil, err
		}
	}
	for _, t := range j.TagNames {
		if set.Sensitive("", []string{t}) && !mayView {
			continue
		}
		out = append(out, &api.Tag{Name: t})
	}
	return out, nil
}

// JobTagHistories answers Job.tagHistory (projection version 9, ADR 0090): every job tag with the stretches it was
// in force, who set it and with which event, by name then start. An entry of a sensitive class only with
// VIEW_SENSITIVE on the job, left out whole otherwise (its name, times and principal never shown);
// PermissionsFiltered whenever the caller lacks VIEW_SENSITIVE on the job, whether or not there was one (one
// policy call). The job itself was already shown (a job the caller may not describe is answered as missing, so
// its history never is); a sensitive entry shown records the job in the request's audit.
// Many jobs of one request are answered at once (the resolvers' loader, as Field.tagHistory's, ADR 0088): one
// policy call for all of them, whatever the count.
func (s *Catalog) JobTagHistories(ctx context.Context, jobs []*api.Job) (map[*api.Job]*api.TagHistory, error) {
	b := permcheck.NewBatch()
	for _, j := range jobs {
		b.Add(j.Key, authz.PrivViewSensitive, jobCandidate(j))
	}
	if err := b.Run(ctx, s.gate, authz.FromContext(ctx)); err != nil {
		return nil, err
	}
	out := make(map[*api.Job]*api.TagHistory, len(jobs))
	for _, j := range jobs {
		out[j] = s.jobTagHistory(ctx, j, b.OK(j.Key))
	}
	return out, nil
}

// jobTagHistory renders a job's history, without the sensitive entries unless mayView.
func (s *Catalog) jobTagHistory(ctx context.Context, j *api.Job, mayView bool) *api.TagHistory {
	set := s.gate.Settings()
	out := &api.TagHistory{Entries: []*api.TagInterval{}, PermissionsFiltered: !mayView}
	shownSensitive := false
	for _, iv := range j.TagIntervals {
		sensitive := set.Sensitive("", []string{iv.Name})
		if sensitive && !mayView {
			continue
		}
		shownSensitive = shownSensitive || sensitive
		e := *iv
		e.Sensitive = sensitive
		out.Entries = append(out.Entries, &e)
	}
	if a := authz.RequestAuditFrom(ctx); a != nil && shownSensitive {
		a.Touched(jobCandidate(j))
	}
	return out
}

// mayViewJobSensitive checks VIEW_SENSITIVE on the job (one policy call).
func (s *Catalog) mayViewJobSensitive(ctx context.Context, j *api.Job) (bool, error) {
	b := permcheck.NewBatch()
	b.Add(j.Key, authz.PrivViewSensitive, jobCandidate(j))
	if err := b.Run(ctx, s.gate, authz.FromContext(ctx)); err != nil {
		return false, err
	}
	return b.OK(j.Key), nil
}

func jobCandidate(j *api.Job) authz.Candidate {
	return authz.Candidate{Kind: authz.KindJob, Key: j.Key, Namespace: j.Namespace, Name: j.Name}
}
