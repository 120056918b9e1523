// Package producecheck decides whether a producer principal may write an event, and which namespaces the event
// may change. Every namespace an event can change needs the produce privilege: the job's, every output's, a
// DatasetEvent's dataset's and, for a RENAME, the namespace of the previous identifier (a rename moves a dataset
// out of it). Symlink namespaces are asked too but never refuse an event: a symlink into a namespace the producer
// does not own is left unbound by the projector. Namespaces are canonicalised exactly as projection will see them.
//
// The gateway asks it before making an event durable; the consumer asks it for events that arrive straight on a
// Kafka topic bound to a producer principal. The ownership.Set it returns travels with the event, so projection
// and replay decide from the grants in force when the event was accepted.
package producecheck

import (
	"context"
	"fmt"
	"strings"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/ingest/ownership"
)

// Policy answers produce permission on canonical namespaces (grantpolicy.GrantPolicy).
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

// named is one namespace an event names where it may change something, with the field that named it.
type named struct {
	field, ns string
	required  bool // the event is refused without PRODUCE here (false: symlinks, left unbound instead)
}

// Check returns the namespaces p owns among those ev can change, and the first denial (nil when p may write
// ev). With a nil guard or policy everything is owned.
func (g *Guard) Check(ctx context.Context, p authz.Principal, ev *olevent.Event) (ownership.Set, *Denial) {
	if g == nil || g.policy == nil {
		return ownership.All(), nil
	}
	var owned []string
	var denial *Denial
	asked := map[string]bool{}
	for _, n := range g.namespaces(ev) {
		ok, seen := asked[n.ns]
		if !seen {
			ok, _ = g.policy.CanProduce(ctx, p, n.ns, nil)
			asked[n.ns] = ok
			if ok {
				owned = append(owned, n.ns)
			}
		}
		if !ok && n.required && denial == nil {
			denial = &Denial{Field: n.field, Namespace: n.ns}
		}
	}
	return ownership.Of(owned), denial
}

// namespaces lists, in field order, the canonical namespaces ev can change.
func (g *Guard) namespaces(ev *olevent.Event) []named {
	var out []named
	if ev.Job != nil {
		ns := ev.Job.Namespace
		if cns, _, err := g.canon.Job(ev.Job.Namespace, ev.Job.Name); err == nil {
			ns = cns
		}
		out = append(out, named{"job.namespace", ns, true})
	}
	for i, o := range ev.Outputs {
		out = append(out, g.written(fmt.Sprintf("outputs[%d]", i), o)...)
	}
	if ev.Dataset != nil {
		out = append(out, g.written("dataset", *ev.Dataset)...)
	}
	if len(out) == 0 {
		out = append(out, named{"job.namespace", "", true}) // nothing names a namespace: refused
	}
	for i, in := range ev.Inputs {
		out = append(out, g.symlinks(fmt.Sprintf("inputs[%d]", i), in)...)
	}
	return out
}

// written lists the namespaces a written dataset (an output or a DatasetEvent's dataset) changes.
func (g *Guard) written(path string, d olevent.Dataset) []named {
	out := []named{{path + ".namespace", g.datasetNS(d.Namespace, d.Name), true}}
	if lc := d.Lifecycle; lc != nil && lc.PreviousIdentifier != nil && strings.EqualFold(lc.State, olevent.LifecycleRename) {
		prev := lc.PreviousIdentifier
		out = append(out, named{path + ".facets.lifecycleStateChange.previousIdentifier.namespace",
			g.datasetNS(prev.Namespace, prev.Name), true})
	}
	return append(out, g.symlinks(path, d)...)
}

func (g *Guard) symlinks(path string, d olevent.Dataset) []named {
	var out []named
	for i, s := range d.Symlinks {
		out = append(out, named{fmt.Sprintf("%s.facets.symlinks.identifiers[%d].namespace", path, i),
			g.datasetNS(s.Namespace, s.Name), false})
	}
	return out
}

func (g *Guard) datasetNS(ns, name string) string {
	if _, cns, _, err := g.canon.Dataset(ns, name); err == nil {
		return cns
	}
	return ns
}
