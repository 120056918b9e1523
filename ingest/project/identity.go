package project

import (
	"sort"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/fold"
)

// Reasons recorded on UnresolvedIdentity nodes.
const (
	reasonSymlinkConflict = "symlink names another dataset"
	reasonRenameConflict  = "rename target already names another dataset"
	reasonTwoNodes        = "identifier bound to two datasets"
	// An event may bind names only where its producer holds PRODUCE (ownership.go).
	reasonForeignSymlink = "symlink into a namespace its producer does not own"
	reasonForeignRename  = "rename from a namespace its producer does not own"
)

// unresolvedRow is one UnresolvedIdentity observation.
type unresolvedRow struct {
	ns, name, reason, eventID string
	t                         int64
}

// bindIdentities resolves every dataset identifier of the batch to a Dataset key: renames first (in event-time
// order), then symlinks, then plain names, creating Dataset nodes for new identities. Conflicts are recorded as
// UnresolvedIdentity and the identifier is left unbound; nothing is merged.
func (w *txWriter) bindIdentities(recs []*rec) error {
	sorted := append([]*rec(nil), recs...)
	sortEvents(sorted)
	var unres []unresolvedRow
	for _, r := range sorted {
		for _, id := range r.idents() {
			if id.Unresolved != "" {
				ns, name := id.RawNS, id.RawName
				if id.NS != "" { // canonical (refused by ownership, not by canonicalisation): shown where it names
					ns, name = id.NS, id.Name
				}
				unres = append(unres, unresolvedRow{ns, name, id.Unresolved, r.ID, r.Time})
			}
		}
	}
	for _, r := range sorted {
		for _, d := range r.datasets() {
			if d.Lifecycle == fold.LifeRename && d.Prev != nil && d.Prev.Unresolved == "" && d.ID.Unresolved == "" {
				u, err := w.rename(d.Prev, d.ID, r)
				if err != nil {
					return err
				}
				unres = append(unres, u...)
			}
		}
	}
	u, err := w.bindSymlinks(sorted)
	if err != nil {
		return err
	}
	unres = append(unres, u...)
	u, err = w.bindPlain(sorted)
	if err != nil {
		return err
	}
	unres = append(unres, u...)
	return w.recordUnresolved(unres)
}

// lookup returns the dataset keys each canonical identifier is bound to.
func (w *txWriter) lookup(idents []string) (map[string][]string, error) {
	out, err := w.run(`UNWIND $idents AS i
		MATCH (:DatasetName {ident: i})-[:NAMES]->(d:Dataset)
		RETURN i, collect(DISTINCT d.key) AS keys`, map[string]any{"idents": toAny(idents)})
	if err != nil {
		return nil, err
	}
	m := map[string][]string{}
	for _, rec := range out {
		i, _ := rec.Get("i")
		keys, _ := rec.Get("keys")
		for _, k := range keys.([]any) {
			m[i.(string)] = append(m[i.(string)], k.(string))
		}
	}
	return m, nil
}

// bindRow is one identifier to bind (or create) with the earliest time it was seen.
type bindRow struct {
	id *ident
	t  int64
}

// bindPlain binds every identifier not yet bound; an unbound one creates its own Dataset node (PRIMARY name).
func (w *txWriter) bindPlain(recs []*rec) ([]unresolvedRow, error) {
	rows := map[string]*bindRow{}
	var order []string
	var all []struct {
		id *ident
		r  *rec
	}
	for _, r := range recs {
		for _, id := range r.idents() {
			if id.Unresolved != "" || id.Key != "" {
				continue
			}
			all = append(all, struct {
				id *ident
				r  *rec
			}{id, r})
			c := id.canonical()
			if b, ok := rows[c]; !ok {
				rows[c] = &bindRow{id: id, t: r.Time}
				order = append(order, c)
			} else if r.Time < b.t {
				b.t = r.Time
			}
		}
	}
	if len(order) == 0 {
		return nil, nil
	}
	sort.Strings(order)
	params := make([]any, 0, len(order))
	for _, c := range order {
		b := rows[c]
		params = append(params, map[string]any{"ident": c, "ns": b.id.NS, "name": b.id.Name, "env": b.id.Env,
			"key": b.id.newKey(), "t": b.t})
	}
	out, err := w.run(`UNWIND $rows AS row
		MERGE (n:DatasetName {ident: row.ident})
			ON CREATE SET n.namespace = row.ns, n.name = row.name, n.env = row.env
		WITH n, row
		OPTIONAL MATCH (n)-[:NAMES]->(b:Dataset)
		WITH n, row, collect(DISTINCT b.key) AS bound
		FOREACH (_ IN CASE WHEN size(bound) = 0 THEN [1] ELSE [] END |
			MERGE (d:Dataset {key: row.key})
				ON CREATE SET d.namespace = row.ns, d.name = row.name, d.env = row.env, d.createdAt = row.t,
					d.searchName = toLower(row.name), d.normVersion = $nv
			MERGE (n)-[r:NAMES]->(d)
				ON CREATE SET r.kind = 'PRIMARY', r.validFrom = row.t, r.validTo = $open)
		WITH n, row, CASE WHEN size(bound) = 0 THEN [row.key] ELSE bound END AS keys
		OPTIONAL MATCH (n)-[r:NAMES]->(d:Dataset) WHERE size(keys) = 1 AND r.validFrom > row.t
			AND (r.kind <> 'RENAMED' OR r.validTo > row.t)
		SET r.validFrom = row.t, d.createdAt = CASE WHEN d.createdAt > row.t THEN row.t ELSE d.createdAt END
		RETURN row.ident AS ident, keys`, map[string]any{"rows": params, "open": graph.OpenEnd, "nv": NormVersion})
	if err != nil {
		return nil, err
	}
	keys := map[string][]string{}
	for _, rec := range out {
		i, _ := rec.Get("ident")
		ks, _ := rec.Get("keys")
		for _, k := range ks.([]any) {
			keys[i.(string)] = append(keys[i.(string)], k.(string))
		}
	}
	var unres []unresolvedRow
	for _, a := range all {
		ks := keys[a.id.canonical()]
		switch len(ks) {
		case 1:
			a.id.Key = ks[0]
			w.touch(ks[0], graph.NameGenKey(a.id.canonical()))
		default:
			a.id.Unresolved = reasonTwoNodes
			unres = append(unres, unresolvedRow{a.id.NS, a.id.Name, reasonTwoNodes, a.r.ID, a.r.Time})
		}
	}
	return unres, nil
}

// bindSymlinks binds the symlinks of each dataset to that dataset; a symlink already naming another dataset is
// unresolved.
func (w *txWriter) bindSymlinks(recs []*rec) ([]unresolvedRow, error) {
	var unres []unresolvedRow
	for _, r := range recs {
		for _, d := range r.datasets() {
			if len(d.Symlinks) == 0 || !d.ID.ok() && d.ID.Unresolved != "" {
				continue
			}
			if d.ID.Key == "" {
				if _, err := w.bindPlain([]*rec{{ID: r.ID, Time: r.Time, Subject: &dsRec{ID: d.ID}}}); err != nil {
					return nil, err
				}
			}
			if !d.ID.ok() {
				continue
			}
			u, err := w.bindSymlinksOf(d, r)
			if err != nil {
				return nil, err
			}
			unres = append(unres, u...)
		}
	}
	return unres, nil
}

func (w *txWriter) bindSymlinksOf(d *dsRec, r *rec) ([]unresolvedRow, error) {
	var unres []unresolvedRow
	for _, s := range d.Symlinks {
		if s.Unresolved != "" || s.canonical() == d.ID.canonical() {
			continue
		}
		out, err := w.run(`MERGE (n:DatasetName {ident: $ident})
				ON CREATE SET n.namespace = $ns, n.name = $name, n.env = $env
			WITH n
			OPTIONAL MATCH (n)-[:NAMES]->(b:Dataset)
			WITH n, collect(DISTINCT b.key) AS bound
			MATCH (d:Dataset {key: $target})
			FOREACH (_ IN CASE WHEN size(bound) = 0 THEN [1] ELSE [] END |
				CREATE (n)-[:NAMES {kind: 'SYMLINK', validFrom: $t, validTo: $open}]->(d))
			WITH n, d, bound
			OPTIONAL MATCH (n)-[r:NAMES {kind: 'SYMLINK'}]->(d) WHERE r.validFrom > $t
			SET r.validFrom = $t
			RETURN bound`, map[string]any{"ident": s.canonical(), "ns": s.NS, "name": s.Name, "env": s.Env,
			"target": d.ID.Key, "t": r.Time, "open": graph.OpenEnd})
		if err != nil {
			return nil, err
		}
		bound := []any{}
		if len(out) > 0 {
			b, _ := out[0].Get("bound")
			bound = b.([]any)
		}
		w.touch(graph.NameGenKey(s.canonical()))
		if len(bound) == 0 || (len(bound) == 1 && bound[0] == d.ID.Key) {
			s.Key = d.ID.Key
			continue
		}
		s.Unresolved = reasonSymlinkConflict
		unres = append(unres, unresolvedRow{s.NS, s.Name, reasonSymlinkConflict, r.ID, r.Time})
	}
	return unres, nil
}

// recordUnresolved MERGEs UnresolvedIdentity records.
func (w *txWriter) recordUnresolved(rows []unresolvedRow) error {
	if len(rows) == 0 {
		return nil
	}
	w.unresolved += len(rows)
	params := make([]any, 0, len(rows))
	for _, u := range rows {
		params = append(params, map[string]any{"key": graph.UnresolvedKey(u.ns, u.name, u.reason), "ns": u.ns,
			"name": u.name, "reason": u.reason, "t": u.t, "e": u.eventID})
		w.touch(graph.UnresolvedKey(u.ns, u.name, u.reason))
	}
	_, err := w.run(`UNWIND $rows AS row
		MERGE (u:UnresolvedIdentity {key: row.key})
			ON CREATE SET u.namespace = row.ns, u.name = row.name, u.reason = row.reason,
				u.firstSeenAt = row.t, u.lastSeenAt = row.t, u.eventIds = []
		SET u.firstSeenAt = CASE WHEN row.t < u.firstSeenAt THEN row.t ELSE u.firstSeenAt END,
			u.lastSeenAt = CASE WHEN row.t > u.lastSeenAt THEN row.t ELSE u.lastSeenAt END,
			u.eventIds = CASE WHEN row.e IN u.eventIds THEN u.eventIds
				ELSE (u.eventIds + row.e)[-$few..] END`, map[string]any{"rows": params, "few": fold.MaxEventIDs})
	return err
}

func toAny[T any](in []T) []any {
	out := make([]any, len(in))
	for i, v := range in {
		out[i] = v
	}
	return out
}
