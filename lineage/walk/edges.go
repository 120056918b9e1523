package walk

import (
	"slices"
	"time"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/graph"
)

// edgeCtx is what building an edge needs to know about the request.
type edgeCtx struct {
	asOf        int64
	pubs        map[string]bool
	evidence    map[api.EvidenceKind]bool // empty: all kinds
	columns     *api.TransformationFilter // column edges crossed (nil: all)
	staleMin    time.Duration
	staleFactor float64
}

// edgeFlags are the gap-relevant facts about one built edge.
type edgeFlags struct {
	declaredOnly       bool
	stale              bool
	runWithoutTerminal bool
}

// pair is one combination of the two legs of a path through a job (or a single relationship).
type pair struct{ in, out *graph.Rel }

func (p pair) main() *graph.Rel {
	if p.out != nil {
		return p.out
	}
	return p.in
}

func (p pair) kind() api.EvidenceKind {
	for _, r := range []*graph.Rel{p.in, p.out} {
		if r != nil && r.Kind != graph.KindObserved {
			return api.Declared
		}
	}
	return api.Observed
}

// pure says both legs are of one kind: a DECLARED path whose legs were both declared, not a declared leg joined
// to an observed one.
func (p pair) pure() bool {
	return p.in == nil || p.out == nil || p.in.Kind == p.out.Kind
}

// better says p describes its kind's evidence better than cur: a pure pair before a mixed one (so a DECLARED
// evidence's source, producer and event ids are the declaration's, not an observed leg's, when the declaration
// states both legs), then the later last observation.
func (p pair) better(cur pair) bool {
	if p.pure() != cur.pure() {
		return p.pure()
	}
	return p.lastObserved() > cur.lastObserved()
}

// lastObserved of a pair is the earlier of its legs' last observations: the path was whole then.
func (p pair) lastObserved() int64 {
	var t int64
	for _, r := range []*graph.Rel{p.in, p.out} {
		if r == nil {
			continue
		}
		if t == 0 || (r.LastObservedAt != 0 && r.LastObservedAt < t) {
			t = r.LastObservedAt
		}
	}
	return t
}

// selectInterval finds the interval of r in force at t with a publication that counts (graph.InForce, the
// predicate the hop read ran in Cypher).
func selectInterval(r *graph.Rel, t int64, pubs map[string]bool) (from, to int64, pub string, ok bool) {
	iv, ok := graph.InForce(r.Intervals(), t, pubs)
	return iv.From, iv.To, iv.Pub, ok
}

// inForce returns the pair's interval at t: the intersection of its legs' intervals.
func (p pair) inForce(ec edgeCtx) (from, to int64, pub string, ok bool) {
	from, to = 0, graph.OpenEnd
	for _, r := range []*graph.Rel{p.in, p.out} {
		if r == nil {
			continue
		}
		f, t, pb, found := selectInterval(r, ec.asOf, ec.pubs)
		if !found {
			return 0, 0, "", false
		}
		from, to, pub = max(from, f), min(to, t), pb
	}
	return from, to, pub, true
}

// intervals lists the pair's validity intervals: the intersections of its legs' intervals.
func (p pair) intervals() []api.Interval {
	a, b := p.in, p.out
	if a == nil {
		a, b = b, nil
	}
	var out []api.Interval
	for i := range a.Froms {
		if b == nil {
			out = appendInterval(out, a.Froms[i], at(a.Tos, i), at(a.Pubs, i))
			continue
		}
		for j := range b.Froms {
			f, t := max(a.Froms[i], b.Froms[j]), min(at(a.Tos, i), at(b.Tos, j))
			if f < t {
				out = appendInterval(out, f, t, at(b.Pubs, j))
			}
		}
	}
	return out
}

func at[T any](s []T, i int) T {
	var zero T
	if i < len(s) {
		return s[i]
	}
	return zero
}

func appendInterval(out []api.Interval, from, to int64, pub string) []api.Interval {
	p := api.Publication(pub)
	return append(out, api.Interval{ValidFrom: graph.FromMillis(from), ValidTo: timeOrNil(to), Publication: &p})
}

// buildEdge turns the pairs found between two nodes through one job (or none) into one edge. It returns nil when
// no pair is in force at asOf or the evidence filter leaves nothing.
func buildEdge(from, to string, job *graph.JobBrief, pairs []pair, ec edgeCtx) (*api.LineageEdge, edgeFlags) {
	best := map[api.EvidenceKind]pair{}
	var e api.LineageEdge
	var flags edgeFlags
	var last int64
	for _, p := range pairs {
		f, t, pub, ok := p.inForce(ec)
		k := p.kind()
		if !ok || (len(ec.evidence) > 0 && !ec.evidence[k]) {
			continue
		}
		if cur, seen := best[k]; !seen || p.better(cur) {
			best[k] = p
		}
		if len(best) == 1 || f > e.ValidFrom.UnixMilli() {
			e.ValidFrom, e.ValidTo = graph.FromMillis(f), timeOrNil(t)
			e.Intervals = p.intervals()
		}
		last = max(last, p.lastObserved())
		if k == api.Observed && (p.main().LastRunState == "START" || p.main().LastRunState == "RUNNING" || pub == graph.PubPending) {
			flags.runWithoutTerminal = true
		}
	}
	if len(best) == 0 {
		return nil, flags
	}
	jobKey := ""
	if job != nil {
		jobKey = job.Key
	}
	e.ID, e.From, e.To, e.JobKey = api.EdgeID(from, to, jobKey), from, to, jobKey
	e.LastObservedAt = timeOrNil(last)
	for _, k := range []api.EvidenceKind{api.Observed, api.Declared} {
		if p, ok := best[k]; ok {
			e.Evidence = append(e.Evidence, evidenceOf(k, p, ec))
		}
	}
	_, observed := best[api.Observed]
	flags.declaredOnly = !observed
	if observed && job != nil {
		e.Stale = ec.asOf-best[api.Observed].lastObserved() > staleThreshold(job, ec).Milliseconds()
	} else if observed {
		e.Stale = ec.asOf-best[api.Observed].lastObserved() > ec.staleMin.Milliseconds()
	}
	flags.stale = e.Stale
	e.Transformations = transformationsOf(best, ec.asOf)
	return &e, flags
}

// staleThreshold is StaleFactor times the job's usual interval between runs, at least StaleMin.
func staleThreshold(job *graph.JobBrief, ec edgeCtx) time.Duration {
	if job.Runs < 2 || job.LastSeenAt <= job.FirstSeenAt {
		return ec.staleMin
	}
	usual := time.Duration((job.LastSeenAt-job.FirstSeenAt)/(job.Runs-1)) * time.Millisecond
	return max(ec.staleMin, time.Duration(float64(usual)*ec.staleFactor))
}

// derivationOf is how a pair's evidence was derived: the main leg's derivation, except that an input leg the
// projector derived from an output's column lineage (the run did not list the input, issue 14 item 3) says so.
func derivationOf(p pair) string {
	if p.in != nil && p.in.Derivation == graph.DerivationColumnLineage {
		return graph.DerivationColumnLineage
	}
	return p.main().Derivation
}

func evidenceOf(k api.EvidenceKind, p pair, ec edgeCtx) api.Evidence {
	r := p.main()
	_, _, pub, _ := p.inForce(ec)
	observed := p.lastObserved()
	if observed == 0 {
		observed = r.FirstObservedAt
	}
	pb := api.Publication(pub)
	derivation := derivationOf(p)
	ev := api.Evidence{Kind: k, Producer: strOrNil(r.Producer), Source: strOrNil(derivation),
		EventIDs: slices.Clone(r.EventIDs), RunID: strOrNil(r.LastRunID), JobVersion: strOrNil(r.JobVersion),
		ObservedAt: graph.FromMillis(observed), Publication: &pb, Derivation: strOrNil(derivation)}
	if ev.EventIDs == nil {
		ev.EventIDs = []string{}
	}
	if r.LastRunState != "" {
		s := api.RunState(r.LastRunState)
		ev.RunState = &s
	}
	return ev
}

// transformationsOf are the transformations of the edge's best pair in force at asOf (graph.Rel.TransformationsAt):
// a column edge whose job started masking answers the kinds of its runs of that time.
func transformationsOf(best map[api.EvidenceKind]pair, asOf int64) []api.Transformation {
	out := []api.Transformation{}
	for _, k := range []api.EvidenceKind{api.Observed, api.Declared} {
		p, ok := best[k]
		if !ok {
			continue
		}
		types, subtypes, masking, descriptions := p.main().TransformationsAt(asOf)
		for i, t := range types {
			out = append(out, api.Transformation{Type: api.TransformationType(t), Subtype: strOrNil(at(subtypes, i)),
				Masking: at(masking, i), Description: strOrNil(at(descriptions, i))})
		}
		break
	}
	return out
}

func strOrNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// timeOrNil converts stored millis; 0 and OpenEnd become nil.
func timeOrNil(ms int64) *time.Time {
	if ms == 0 || ms >= graph.OpenEnd {
		return nil
	}
	t := graph.FromMillis(ms)
	return &t
}
