package trust

import (
	"context"
	"fmt"

	"github.com/headwater-data/headwater/authz"
)

// CanaryRow is one active canary and the outcome of its latest check (package canary writes them; canaries.Canary).
type CanaryRow struct {
	Name                                    string
	FromNs, FromName, ToNs, ToName, JobNs   string
	JobName, FromField, ToField             string
	Checked, OK                             bool
	FailingSince, CheckedAt, Checks, Passes int64
	Failure                                 string
}

// canaries counts (narrowed by namespace to those with an end in it) the checked active canaries that pass, of all checked ones, as the caller may see them (it may
// describe both ends and the job); the items are the failing ones, with the reason and since when.
func (r *Report) canaries(ctx context.Context) (*Figure, error) {
	rows, err := r.svc.r.Canaries(ctx)
	if err != nil {
		return nil, err
	}
	var b checks
	for _, c := range rows {
		id := b.next()
		b.add(id, authz.PrivDescribe, datasetCand("", c.FromNs, c.FromName))
		b.add(id, authz.PrivDescribe, datasetCand("", c.ToNs, c.ToName))
		if c.JobName != "" {
			b.add(id, authz.PrivDescribe, jobCand("", c.JobNs, c.JobName))
		}
	}
	ok, err := r.allowed(ctx, &b)
	if err != nil {
		return nil, err
	}
	f := &Figure{Signal: SignalCanaries, Description: "registered known paths (canaries) that the latest check " +
		"found in the lineage answers, of all checked ones"}
	var g grouper
	for i, c := range rows {
		ns := r.Query.Namespace
		if !ok[i] || !c.Checked || (ns != "" && c.FromNs != ns && c.ToNs != ns) {
			continue
		}
		f.Denominator++
		f.Numerator += b2i(c.OK)
		g.add("namespace", c.ToNs, b2i(c.OK), 1)
		if c.OK {
			continue
		}
		since := fromMs(c.FailingSince)
		f.add(Item{Kind: ItemCanary, Name: c.Name, Namespace: c.ToNs, Status: "FAILING", Since: since, Count: c.Checks - c.Passes,
			Reason: c.Failure, Message: fmt.Sprintf("canary %s fails since %s ago: %s (%d of %d checks passed)", c.Name,
				age(r.Now.Sub(since)), c.Failure, c.Passes, c.Checks)})
	}
	f.Groups = g.groups()
	return f, nil
}
