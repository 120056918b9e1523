package gen_test

import (
	"encoding/json"
	"testing"

	"github.com/headwater-data/headwater/ingest/normalize"
	"github.com/headwater-data/headwater/loadtest/gen"
)

// TestIdentitiesAreCanonical: the history loader writes the world's identities as they are, so they must be
// exactly what the projector's canonicaliser makes of them, environment included.
func TestIdentitiesAreCanonical(t *testing.T) {
	c := smallConfig(21)
	c.RenameShare = 0.05
	w, err := gen.NewWorld(c)
	if err != nil {
		t.Fatal(err)
	}
	n, err := normalize.New(normalize.Config{Environments: gen.Environments(c.Prefix), DefaultEnv: "unmapped"})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range w.Datasets {
		env, ns, name, err := n.Dataset(d.Namespace, d.Name)
		if err != nil || env != d.Env || ns != d.Namespace || name != d.Name {
			t.Fatalf("%s %s (%s): canonical %s %s (%s), err %v", d.Namespace, d.Name, d.Env, ns, name, env, err)
		}
	}
	for _, j := range w.Jobs {
		if ns, name, err := n.Job(j.Namespace, j.Name); err != nil || ns != j.Namespace || name != j.Name {
			t.Fatalf("job %s %s: canonical %s %s, err %v", j.Namespace, j.Name, ns, name, err)
		}
	}
	s := w.NewStream()
	for range 5000 { // renamed outputs too
		var e struct {
			Outputs []struct{ Namespace, Name string } `json:"outputs"`
		}
		_ = json.Unmarshal(s.Next().Body, &e)
		for _, o := range e.Outputs {
			if _, ns, name, err := n.Dataset(o.Namespace, o.Name); err != nil || ns != o.Namespace || name != o.Name {
				t.Fatalf("output %s %s not canonical: %s %s %v", o.Namespace, o.Name, ns, name, err)
			}
		}
	}
	if s.Stats().Renames == 0 {
		t.Fatal("no renames checked")
	}
}
