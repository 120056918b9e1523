// Package producecheck decides whether a producer principal may write an event: it needs the produce privilege
// on the job's namespace and on every output's namespace (canonicalised exactly as projection will see them).
// The gateway asks it before making an event durable; the consumer asks it for events that arrive straight on a
// Kafka topic bound to a producer principal.
package producecheck

import (
	"context"
	"fmt"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/ingest/olevent"
)

// Policy answers produce permission on canonical namespaces (authz.GrantPolicy).
type Policy interface {
	CanProduce(ctx context.Context, p authz.Principal, jobNamespace string, outputNamespaces []string) (bool, string)
}

// Canonicalizer canonicalises identities as projection does (normalize.Normalizer).
type Canonicalizer interface {
	Dataset(namespace, name string) (env, ns, nm string, err error)
	Job(namespace, name string) (ns, nm string, err error)
}

// Guard checks events against a principal's produce grants.
type Guard struct {
	policy Policy
	canon  Canonicalizer
}

// New returns a guard; a nil policy allows everything (authorization off).
func New(p Policy, c Canonicalizer) *Guard { return &Guard{policy: p, canon: c} }

// Denial says which field named the namespace the principal may not produce for.
type Denial struct {
	Field     string
	Namespace string
}

func (d *Denial) Error() string {
	return fmt.Sprintf("%s: the producer may not write events for namespace %q", d.Field, d.Namespace)
}

// Check returns nil when p may write ev, or the first denial.
func (g *Guard) Check(ctx context.Context, p authz.Principal, ev *olevent.Event) *Denial {
	if g == nil || g.policy == nil {
		return nil
	}
	fields := map[string]string{} // canonical namespace -> field that named it
	var jobNS string
	if ev.Job != nil {
		jobNS = ev.Job.Namespace
		if ns, _, err := g.canon.Job(ev.Job.Namespace, ev.Job.Name); err == nil {
			jobNS = ns
		}
		fields[jobNS] = "job.namespace"
	}
	var outs []string
	add := func(field string, d olevent.Dataset) {
		ns := d.Namespace
		if _, cns, _, err := g.canon.Dataset(d.Namespace, d.Name); err == nil {
			ns = cns
		}
		if _, seen := fields[ns]; !seen {
			fields[ns] = field
		}
		outs = append(outs, ns)
	}
	for i, o := range ev.Outputs {
		add(fmt.Sprintf("outputs[%d].namespace", i), o)
	}
	if ev.Dataset != nil {
		add("dataset.namespace", *ev.Dataset)
	}
	if jobNS == "" && len(outs) > 0 {
		jobNS = outs[0] // a DatasetEvent has no job: the dataset's namespace stands for it
	}
	ok, denied := g.policy.CanProduce(ctx, p, jobNS, outs)
	if ok {
		return nil
	}
	return &Denial{Field: fields[denied], Namespace: denied}
}
