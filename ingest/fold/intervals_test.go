package fold

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/headwater-data/headwater/graph"
)

const open = graph.OpenEnd

func lists(start, at int64, pub string) Sighting {
	return Sighting{Start: start, Lists: true, ListedAt: at, Pub: pub}
}

func iv(from, to int64, pub string) graph.Interval {
	return graph.Interval{From: from, To: to, Pub: pub}
}

func closes(start, at int64) Sighting { return Sighting{Start: start, CanClose: true, CloseAt: at} }

func TestIntervals(t *testing.T) {
	P, A, W, N := graph.PubPublished, graph.PubAttempted, graph.PubWithheld, graph.PubPending
	cases := []struct {
		name string
		ev   []Sighting
		cuts []int64
		want []graph.Interval
	}{
		{"one complete run", []Sighting{lists(10, 10, P)}, nil, []graph.Interval{iv(10, open, P)}},
		{"later complete run omits", []Sighting{lists(10, 10, P), closes(30, 40)}, nil, []graph.Interval{iv(10, 40, P)}},
		{"omitting run that started before the listing run does not close",
			[]Sighting{lists(10, 12, P), closes(5, 40)}, nil, []graph.Interval{iv(12, open, P)}},
		{"silence and failed runs never close", []Sighting{lists(10, 10, P)}, nil, []graph.Interval{iv(10, open, P)}},
		{"fail only is attempted", []Sighting{lists(10, 10, A)}, nil, []graph.Interval{iv(10, open, A)}},
		{"later fail never demotes", []Sighting{lists(10, 10, P), lists(20, 20, A)}, nil, []graph.Interval{iv(10, open, P)}},
		{"running only is pending", []Sighting{lists(10, 10, N)}, nil, []graph.Interval{iv(10, open, N)}},
		{"withheld beats attempted", []Sighting{lists(10, 10, A), lists(20, 21, W)}, nil, []graph.Interval{iv(10, open, W)}},
		{"drop cuts, a later run reopens", []Sighting{lists(10, 10, P), lists(50, 50, P)}, []int64{25},
			[]graph.Interval{iv(10, 25, P), iv(50, open, P)}},
		{"close then reopen", []Sighting{lists(10, 10, P), closes(30, 40), lists(50, 55, A)}, nil,
			[]graph.Interval{iv(10, 40, P), iv(55, open, A)}},
		{"publication per interval", []Sighting{lists(10, 10, A), closes(30, 40), lists(50, 55, P), lists(60, 60, A)},
			nil, []graph.Interval{iv(10, 40, A), iv(55, open, P)}},
		{"listing at the closing instant survives", []Sighting{lists(10, 10, P), closes(30, 40), lists(35, 40, P)},
			nil, []graph.Interval{iv(10, open, P)}},
		{"closer before any listing does nothing", []Sighting{closes(1, 5), lists(10, 10, P)}, nil,
			[]graph.Interval{iv(10, open, P)}},
		{"no evidence", nil, []int64{5}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Intervals(tc.ev, tc.cuts)
			if len(got) == 0 && len(tc.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			for range 20 {
				ev := append([]Sighting(nil), tc.ev...)
				rng.Shuffle(len(ev), func(a, b int) { ev[a], ev[b] = ev[b], ev[a] })
				if again := Intervals(ev, tc.cuts); !reflect.DeepEqual(again, tc.want) {
					t.Fatalf("order dependent: %v vs %v", again, tc.want)
				}
			}
		})
	}
}
