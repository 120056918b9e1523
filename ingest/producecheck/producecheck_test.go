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
		d := g.Check(context.Background(), p, c.ev)
		switch {
		case c.field == "" && d != nil:
			t.Errorf("%s: denied %v", c.name, d)
		case c.field != "" && (d == nil || d.Field != c.field):
			t.Errorf("%s: want denial on %s, got %v", c.name, c.field, d)
		}
	}
}

func TestNilPolicyAllows(t *testing.T) {
	if d := New(nil, lower{}).Check(context.Background(), authz.Principal{}, &olevent.Event{}); d != nil {
		t.Fatal(d)
	}
}
