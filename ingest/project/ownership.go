package project

import (
	"maps"
	"slices"
	"strings"

	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/ingest/ownership"
)

// Producers change only what they own (docs/adr/0018-producers-change-only-what-they-own.md). The gateway refuses
// an event whose job, outputs, DatasetEvent dataset or RENAME previous identifier lie outside the producer's
// PRODUCE grants; what an accepted event names elsewhere it may read but not change. applyOwnership turns an
// event's rec into what it may change, once, before the rec is stored, so every recomputation from stored recs and
// every replay decides the same way:
//
//   - inputs (and, defensively, written datasets outside the owned set) are reads: their lifecycle changes
//     (RENAME, DROP, ...), documentation, ownership, tags, lineage facet and facet deletions are dropped; their
//     schema and the fields they name are kept as observed on read (fold.Obs.R), their other facets never win over
//     an owner's;
//   - a RENAME whose previous identifier lies outside the owned set is not applied: the identifier is unresolved;
//   - a symlink into a namespace outside the owned set is not bound: it is an unresolved identity.
func applyOwnership(r *rec, owned ownership.Set) {
	for _, d := range r.Inputs {
		d.asRead()
	}
	written := r.Outputs
	if r.Subject != nil {
		written = append(slices.Clip(written), r.Subject)
	}
	for _, d := range written {
		if !owned.Owns(d.ID.NS) {
			d.asRead()
		}
		if d.Prev != nil && d.Prev.Unresolved == "" && !owned.Owns(d.Prev.NS) {
			d.Lifecycle, d.Prev.Unresolved = "", reasonForeignRename
		}
	}
	for _, d := range r.datasets() {
		for _, s := range d.Symlinks {
			if s.Unresolved == "" && !owned.Owns(s.NS) {
				s.Unresolved = reasonForeignSymlink
			}
		}
	}
}

// ownedNow is the owned set in today's canonical form. The set was canonicalised when the event was accepted, by
// the rules of that time: an archive written by projection version 2 names "postgres://db", which is
// "postgres://db:5432" now (ADR 0026), and replaying it must find the event's outputs owned as they were. Canonical
// namespaces canonicalise to themselves, so a set recorded today is unchanged.
func ownedNow(s ownership.Set, canon Canonicalizer) ownership.Set {
	if !s.Restricted || len(s.Namespaces) == 0 {
		return s
	}
	out := make([]string, 0, len(s.Namespaces))
	for _, ns := range s.Namespaces {
		var c string
		var err error
		if strings.Contains(ns, "://") {
			_, c, _, err = canon.Dataset(ns, "x")
		} else {
			c, _, err = canon.Job(ns, "x")
		}
		if err != nil {
			c = ns // not a namespace any event can name now: it owns nothing new
		}
		out = append(out, c)
	}
	return ownership.Of(out)
}

// ownerFacets are the dataset facets whose meaning only a dataset's owners may state.
var ownerFacets = []string{olevent.FacetLifecycle, olevent.FacetDocumentation, olevent.FacetOwnership,
	olevent.FacetTags, olevent.FacetLineage, olevent.FacetGovernanceBlock}

// asRead keeps of a dataset what a reader may record about it.
func (d *dsRec) asRead() {
	d.Read = true
	d.Lifecycle, d.Prev, d.Meta, d.Deleted = "", nil, nil, nil
	d.HasLineage, d.Declared, d.DeclFields = false, nil, nil
	if len(d.Facets) > 0 {
		f := maps.Clone(d.Facets)
		for _, k := range ownerFacets {
			delete(f, k)
		}
		d.Facets = f
	}
}
