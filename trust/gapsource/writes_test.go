package gapsource

import (
	"context"
	"testing"
	"time"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/trust"
)

type commitsOf []Commit

func (c commitsOf) Commits(_ context.Context, _ []string, before int64, _ int) ([]Commit, error) {
	var out []Commit
	for _, x := range c {
		if x.At <= before {
			out = append(out, x)
		}
	}
	return out, nil
}

// hideNamespace lets the caller describe every job but those of one namespace.
type hideNamespace string

func (h hideNamespace) Scope(context.Context, authz.Principal) (authz.Scope, error) {
	return authz.Scope{Fingerprint: "h"}, nil
}

func (h hideNamespace) Check(_ context.Context, _ authz.Principal, cs []authz.Check) ([]bool, error) {
	out := make([]bool, len(cs))
	for i, c := range cs {
		out[i] = c.Candidate.Namespace != string(h)
	}
	return out, nil
}

// A commit is reported when a job the caller may describe wrote it; one only a hidden job wrote counts as
// unreported (the figure must not tell a hidden job exists); commits inside the write grace are not judged yet.
func TestUnreportedWritesCountOnlyWritersTheCallerMaySee(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	sig, err := trust.NewService(nil, hideNamespace("secret"), trust.Config{WriteGrace: time.Hour}, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	ms := func(d time.Duration) int64 { return now.Add(-d).UnixMilli() }
	seen, hidden := trust.JobRef{Key: "j1", Namespace: "etl", Name: "load"}, trust.JobRef{Key: "j2", Namespace: "secret", Name: "x"}
	r := struct {
		Reader
		commitsOf
	}{nil, commitsOf{
		{DatasetKey: "a", Version: "1", At: ms(5 * time.Hour), Writers: []trust.JobRef{seen}},
		{DatasetKey: "a", Version: "2", At: ms(4 * time.Hour)},                                  // nobody reported it
		{DatasetKey: "a", Version: "3", At: ms(3 * time.Hour), Writers: []trust.JobRef{hidden}}, // only a hidden job
		{DatasetKey: "a", Version: "4", At: ms(10 * time.Minute)},                               // inside the grace
		{DatasetKey: "b", Version: "9", At: ms(2 * time.Hour), Writers: []trust.JobRef{hidden, seen}},
	}}
	got, err := New(sig, r, func() time.Time { return now }).UnreportedWrites(context.Background(), authz.Principal{Subject: "u"}, []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].DatasetKey != "a" || got[0].Unreported != 2 || got[0].Judged != 3 ||
		!got[0].Latest.Equal(time.UnixMilli(ms(3*time.Hour)).UTC()) {
		t.Fatalf("got %+v, want dataset a: 2 of 3 unreported, the newest 3 h ago; b reported by a job the caller sees", got)
	}
}
