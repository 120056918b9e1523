package fold

import (
	"sort"

	"github.com/headwater-data/headwater/graph"
)

// Sighting is what one run (or declaration) said of a subject (a dataset in one direction, or a column
// mapping): either it lists the subject (Lists, at ListedAt, with per-run publication Pub) or, when it is able to
// close (a COMPLETE run, or a later declaration), it omits it and closes at CloseAt. Start orders runs: only a
// sighting that started after the latest listing run closes the interval. Sightings are the fold's input; its
// output is graph.Interval, the stored form (the API's evidence of an edge is lineage.Evidence, another thing).
type Sighting struct {
	Start    int64
	Lists    bool
	ListedAt int64
	Pub      string
	CanClose bool
	CloseAt  int64
}

type point struct {
	t     int64
	open  bool
	cut   bool
	start int64
	pub   string
}

// pubRank orders publication states: the best evidence in an interval wins.
func pubRank(p string) int {
	switch p {
	case graph.PubPublished:
		return 4
	case graph.PubWithheld:
		return 3
	case graph.PubAttempted:
		return 2
	case graph.PubPending:
		return 1
	}
	return 0
}

// Intervals derives the validity intervals of one subject from its evidence and its cut times (DROP or RENAME of
// the dataset). An interval opens at the first listing; it closes at the close time of the first later closing
// evidence that omits the subject, or at a cut. Silence never closes. The result is independent of input order.
func Intervals(ev []Sighting, cuts []int64) []graph.Interval {
	return foldIntervals(foldState{}, ev, cuts).intervals()
}

// foldState is the state of the interval fold at some time: the intervals closed so far, the open one, and the
// start of the latest run that listed the subject in the open interval. Folding evidence whose points all lie
// after that time into it gives the same result as folding everything at once (see checkpoint.go).
type foldState struct {
	Closed        []graph.Interval `json:"c,omitempty"`
	Open          *graph.Interval  `json:"o,omitempty"`
	LastListStart int64            `json:"l,omitempty"`
}

// foldIntervals folds evidence and cuts, in time order, into a copy of st.
func foldIntervals(st foldState, ev []Sighting, cuts []int64) foldState {
	pts := make([]point, 0, len(ev)+len(cuts))
	for _, e := range ev {
		switch {
		case e.Lists:
			pts = append(pts, point{t: e.ListedAt, open: true, start: e.Start, pub: e.Pub})
		case e.CanClose:
			pts = append(pts, point{t: e.CloseAt, start: e.Start})
		}
	}
	for _, c := range cuts {
		pts = append(pts, point{t: c, cut: true})
	}
	sort.Slice(pts, func(i, j int) bool { return pointLess(pts[i], pts[j]) })
	out := foldState{Closed: append([]graph.Interval(nil), st.Closed...), LastListStart: st.LastListStart}
	if st.Open != nil {
		o := *st.Open
		out.Open = &o
	}
	for _, p := range pts {
		switch {
		case p.open && out.Open == nil:
			out.Open, out.LastListStart = &graph.Interval{From: p.t, To: graph.OpenEnd, Pub: p.pub}, p.start
		case p.open:
			out.LastListStart = max(out.LastListStart, p.start)
			if pubRank(p.pub) > pubRank(out.Open.Pub) {
				out.Open.Pub = p.pub
			}
		case out.Open != nil && (p.cut || p.start > out.LastListStart):
			out.Open.To = p.t
			out.Closed, out.Open = append(out.Closed, *out.Open), nil
		}
	}
	return out
}

// intervals renders the state: closed intervals then the open one, empty ones dropped, touching ones joined.
func (st foldState) intervals() []graph.Interval {
	all := append([]graph.Interval(nil), st.Closed...)
	if st.Open != nil {
		all = append(all, *st.Open)
	}
	return dropEmpty(all)
}

// pointLess: time; at one instant closes and cuts come before opens (a listing at the same instant survives);
// then the remaining fields make the order total.
func pointLess(a, b point) bool {
	if a.t != b.t {
		return a.t < b.t
	}
	if a.open != b.open {
		return !a.open
	}
	if a.cut != b.cut {
		return a.cut
	}
	if a.start != b.start {
		return a.start < b.start
	}
	return pubRank(a.pub) < pubRank(b.pub)
}

// dropEmpty removes empty intervals and joins touching intervals of the same publication state.
func dropEmpty(in []graph.Interval) []graph.Interval {
	out := in[:0]
	for _, iv := range in {
		switch {
		case iv.To <= iv.From:
		case len(out) > 0 && out[len(out)-1].To == iv.From && out[len(out)-1].Pub == iv.Pub:
			out[len(out)-1].To = iv.To
		default:
			out = append(out, iv)
		}
	}
	return out
}
