package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/headwater-data/headwater/inventory"
	"github.com/headwater-data/headwater/inventory/joblist"
)

// InventoryCmd writes an expected-job inventory for a world as a plain JSON list (inventory/joblist's format,
// `headwater inventory register --kind list`), so the trust signals can be measured on a benchmark graph: a share
// of the world's own jobs (they report: the history loader and the stream write their runs) and, for the rest,
// jobs that never report, each expected to write one of the world's derived datasets (so answers through those
// datasets carry JOB_NOT_REPORTING). Deterministic for the same flags.
type InventoryCmd struct {
	WorldFlags
	Expected  int     `help:"Expected jobs in the list." default:"16000"`
	Reporting float64 `help:"Share of the expected jobs that are world jobs (the rest never report)." default:"0.7"`
	Schedule  string  `help:"Expected schedule of every listed job." default:"@daily"`
	File      string  `help:"Where to write the JSON list." required:""`
}

// Run writes the list.
func (c *InventoryCmd) Run(_ *env) error {
	if c.Expected <= 0 || c.Reporting < 0 || c.Reporting > 1 {
		return fmt.Errorf("--expected must be positive and --reporting within [0, 1]")
	}
	w, err := c.world(time.Now())
	if err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(c.Seed, 0x1e7e))
	order := r.Perm(len(w.Jobs))
	reporting := min(int(float64(c.Expected)*c.Reporting), len(w.Jobs))
	entries := make([]joblist.Entry, 0, c.Expected)
	for _, i := range order[:reporting] {
		j := w.Jobs[i]
		e := joblist.Entry{Namespace: j.Namespace, Name: j.Name, Schedule: c.Schedule, Criticality: "high"}
		for _, d := range j.Outputs {
			e.Outputs = append(e.Outputs, inventory.Dataset{Namespace: w.Datasets[d].Namespace, Name: w.Datasets[d].Name})
		}
		entries = append(entries, e)
	}
	for k := 0; len(entries) < c.Expected; k++ {
		j := w.Jobs[order[k%len(order)]] // a silent sibling of a world job, writing the same output
		d := w.Datasets[j.Outputs[0]]
		entries = append(entries, joblist.Entry{Namespace: j.Namespace, Name: fmt.Sprintf("%s.never_reports_%05d", j.Name, k),
			Schedule: c.Schedule, Criticality: "high", Outputs: []inventory.Dataset{{Namespace: d.Namespace, Name: d.Name}}})
	}
	f, err := os.Create(c.File)
	if err != nil {
		return err
	}
	if err := json.NewEncoder(f).Encode(entries); err != nil {
		_ = f.Close()
		return err
	}
	fmt.Fprintf(os.Stderr, "hwload inventory: %d expected jobs (%d of the world's, %d never reporting) in %s\n",
		len(entries), reporting, len(entries)-reporting, c.File)
	return f.Close()
}
