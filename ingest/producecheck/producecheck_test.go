package producecheck

import (
	"context"
	"strings"
	"testing"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/ingest/olevent"
)

// allowOnly grants PRODUCE on a fixed set of canonical namespaces.
type allowOnly map[string]bool

func (a allowOnly) CanProduce(_ context.Context, _ authz.Principal, job string, outs []string) (bool, string) {
	for _, ns := range append([]string{job}, outs...) {
		if !a[ns] {
			return false, ns
		}
	}
	return true, ""
}

// lower canonicalises by lower-casing the namespace, enough to show the check sees canonical namespaces.
type lower struct{}

func (lower) Dataset(ns, name string) (string, string, string, error) {
	return "prod", strings.ToLower(ns), name, nil
}
func (lower) Job(ns, name string) (string, string, error) { return strings.ToLower(ns), name, nil }

func TestCheckNamesTheFieldOfTheFirstDeniedNamespace(t *testing.T) {
	g := New(allowOnly{"airflow": true, "s3://lake": true}, lower{})
	p := authz.Principal{Subject: "producer", Kind: "producer"}
	ev := func(job string, outs ...string) *olevent.Event {
		e := &olevent.Event{Job: &olevent.Job{Namespace: job, Name: "j"}}
		for _, o := range outs {
			e.Outputs = append(e.Outputs, olevent.Dataset{Namespace: o, Name: "t"})
		}
		return e
	}
	cases := []struct {
		name  string
		ev    *olevent.Event
		field string
	}{
		{"all granted, canonicalised", ev("AIRFLOW", "S3://LAKE"), ""},
		{"job namespace denied", ev("spark", "s3://lake"), "job.namespace"},
		{"second output denied", ev("airflow", "s3://lake", "s3://secret"), "outputs[1].namespace"},
		{"no outputs", ev("airflow"), ""},
		{"dataset event outside", &olevent.Event{Dataset: &olevent.Dataset{Namespace: "s3://other", Name: "x"}}, "dataset.namespace"},
	}
	for _, c := range cases {
		_, d := g.Check(context.Background(), p, c.ev)
		switch {
		case c.field == "" && d != nil:
			t.Errorf("%s: denied %v", c.name, d)
		case c.field != "" && (d == nil || d.Field != c.field):
			t.Errorf("%s: want denial on %s, got %v", c.name, c.field, d)
		}
	}
}

func TestNilPolicyAllows(t *testing.T) {
	owned, d := New(nil, lower{}).Check(context.Background(), authz.Principal{}, &olevent.Event{})
	if d != nil || owned.Restricted {
		t.Fatal(owned, d)
	}
}

// A RENAME moves a dataset out of its previous namespace: that namespace needs PRODUCE too, and the denial names
// the previousIdentifier field. An input's rename changes nothing (the projector ignores it) and needs nothing.
func TestCheckRenameNeedsProduceOnThePreviousNamespace(t *testing.T) {
	g := New(allowOnly{"airflow": true, "p2": true}, lower{})
	p := authz.Principal{Subject: "producer", Kind: "producer"}
	renamed := func(state string) olevent.Dataset {
		return olevent.Dataset{Namespace: "p2", Name: "moved", Lifecycle: &olevent.Lifecycle{State: state,
			PreviousIdentifier: &olevent.Identifier{Namespace: "V", Name: "victim"}}}
	}
	cases := []struct {
		name  string
		ev    *olevent.Event
		field string
	}{
		{"output rename out of V", &olevent.Event{Job: &olevent.Job{Namespace: "airflow", Name: "j"},
			Outputs: []olevent.Dataset{{Namespace: "p2", Name: "x"}, renamed("RENAME")}},
			"outputs[1].facets.lifecycleStateChange.previousIdentifier.namespace"},
		{"dataset event rename out of V", &olevent.Event{Dataset: new(renamed("rename"))},
			"dataset.facets.lifecycleStateChange.previousIdentifier.namespace"},
		{"not a rename", &olevent.Event{Dataset: new(renamed("CREATE"))}, ""},
		{"input rename", &olevent.Event{Job: &olevent.Job{Namespace: "airflow", Name: "j"},
			Inputs: []olevent.Dataset{renamed("RENAME")}}, ""},
	}
	for _, c := range cases {
		_, d := g.Check(context.Background(), p, c.ev)
		switch {
		case c.field == "" && d != nil:
			t.Errorf("%s: denied %v", c.name, d)
		case c.field != "" && (d == nil || d.Field != c.field || d.Namespace != "v"):
			t.Errorf("%s: want denial on %s (namespace v), got %v", c.name, c.field, d)
		}
	}
}

// The owned set lists the namespaces the event can change that the producer holds PRODUCE on; a symlink into
// another namespace does not refuse the event but is left out of the set.
func TestCheckOwnedSetLeavesOutForeignSymlinks(t *testing.T) {
	g := New(allowOnly{"airflow": true, "p2": true}, lower{})
	ev := &olevent.Event{Job: &olevent.Job{Namespace: "airflow", Name: "j"},
		Inputs:  []olevent.Dataset{{Namespace: "V", Name: "src", Symlinks: []olevent.Identifier{{Namespace: "p2", Name: "alias"}}}},
		Outputs: []olevent.Dataset{{Namespace: "p2", Name: "x", Symlinks: []olevent.Identifier{{Namespace: "V", Name: "vsquat"}}}}}
	owned, d := g.Check(context.Background(), authz.Principal{Subject: "producer"}, ev)
	if d != nil {
		t.Fatalf("a foreign symlink refused the event: %v", d)
	}
	if !owned.Restricted || !owned.Owns("p2") || !owned.Owns("airflow") || owned.Owns("v") {
		t.Fatalf("owned set %+v", owned)
	}
}
