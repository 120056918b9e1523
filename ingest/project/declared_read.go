package project

import "sort"

// DeclaredDataset is one dataset of a stored JobEvent: its node key and canonical name, and the raw dataset
// facets the event carried with it.
type DeclaredDataset struct {
	Key, Namespace, Name string
	Facets               map[string][]byte
}

// Declaration is what a stored JobEvent payload declares: the job's dbt unique id (when it has one), its
// inputs and outputs (those bound to a dataset node), sorted by name. The pre-release impact reads the
// project's current declarations back with it (ingest/declare, ADR 0056).
type Declaration struct {
	EventID, Producer string
	Time              int64
	DbtUniqueID       string
	Inputs, Outputs   []DeclaredDataset
}

// DeclarationInPayload reads a stored Event payload as a declaration.
func DeclarationInPayload(payload any) (Declaration, error) {
	r, err := decodeRec(payload)
	if err != nil {
		return Declaration{}, err
	}
	d := Declaration{EventID: r.ID, Producer: r.Producer, Time: r.Time, Inputs: declared(r.Inputs), Outputs: declared(r.Outputs)}
	if r.Job != nil {
		d.DbtUniqueID = r.Job.DbtUniqueID
	}
	return d, nil
}

func declared(ds []*dsRec) []DeclaredDataset {
	out := make([]DeclaredDataset, 0, len(ds))
	for _, d := range ds {
		if d == nil || d.ID == nil || !d.ID.ok() {
			continue
		}
		facets := make(map[string][]byte, len(d.Facets))
		for k, v := range d.Facets {
			facets[k] = v
		}
		out = append(out, DeclaredDataset{Key: d.ID.Key, Namespace: d.ID.NS, Name: d.ID.Name, Facets: facets})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
