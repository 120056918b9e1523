package project

import (
	"sort"

	"github.com/headwater-data/headwater/ingest/normalize"
)

// UnresolvedIdentifier is a dataset identifier an event stated that the projection could not bind to one
// dataset: it could not be canonicalised, or its binding conflicted (the reasons in identity.go). The event's
// stored payload keeps them, so event(id) can name what the event lost instead of letting it vanish.
type UnresolvedIdentifier struct {
	Namespace, Name, Reason string
}

// UnresolvedInPayload lists, sorted and without repeats, the unresolved identifiers of a stored Event payload.
// An identifier that could not be canonicalised is named as the event sent it; a conflicting one canonically.
func UnresolvedInPayload(payload any) ([]UnresolvedIdentifier, error) {
	if payload == nil {
		return nil, nil
	}
	r, err := decodeRec(payload)
	if err != nil {
		return nil, err
	}
	seen := map[UnresolvedIdentifier]bool{}
	var out []UnresolvedIdentifier
	for _, id := range r.idents() {
		if id == nil || id.Unresolved == "" {
			continue
		}
		u := UnresolvedIdentifier{Namespace: id.RawNS, Name: id.RawName, Reason: id.Unresolved}
		if id.NS != "" {
			u.Namespace, u.Name = id.NS, id.Name
			// Payloads written before projection version 3 hold the namespace without its default port: name it
			// as it is canonical now (ADR 0026), as every answer does.
			if ns, err := normalize.CanonicalNamespace(id.NS); err == nil {
				u.Namespace = ns
			}
		}
		if !seen[u] {
			seen[u] = true
			out = append(out, u)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Reason < b.Reason
	})
	return out, nil
}
