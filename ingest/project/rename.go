package project

import (
	"github.com/headwater-data/headwater/graph"
)

// rename applies a lifecycleStateChange RENAME: the node found by the previous identifier continues under the new
// identity (old name closed as RENAMED at the event time, new PRIMARY name opened). When neither name is known the
// node is created under the previous identity; when only the new name is known the old name is attached to it.
// When both names already name different nodes the rename is unresolved and nothing is merged.
func (w *txWriter) rename(prev, next *ident, r *rec) ([]unresolvedRow, error) {
	bound, err := w.lookup([]string{prev.canonical(), next.canonical()})
	if err != nil {
		return nil, err
	}
	pk, nk := bound[prev.canonical()], bound[next.canonical()]
	var key string
	switch {
	case len(pk) > 1 || len(nk) > 1 || (len(pk) == 1 && len(nk) == 1 && pk[0] != nk[0]):
		return []unresolvedRow{{prev.NS, prev.Name, reasonRenameConflict, r.ID, r.Time}}, nil
	case len(pk) == 1:
		key = pk[0]
	case len(nk) == 1:
		key = nk[0]
	default:
		key = prev.newKey()
	}
	_, err = w.run(`MERGE (d:Dataset {key: $key})
			ON CREATE SET d.namespace = $pns, d.name = $pname, d.env = $penv, d.createdAt = $t, d.identityAt = $t,
				d.searchName = toLower($pname), d.normVersion = $nv
		MERGE (pn:DatasetName {ident: $prev})
			ON CREATE SET pn.namespace = $pns, pn.name = $pname, pn.env = $penv
		MERGE (pn)-[pr:NAMES]->(d)
			ON CREATE SET pr.kind = 'RENAMED', pr.validFrom = $t, pr.validTo = $t
		SET pr.kind = 'RENAMED', pr.validTo = CASE WHEN pr.validTo > $t THEN $t ELSE pr.validTo END
		MERGE (nn:DatasetName {ident: $next})
			ON CREATE SET nn.namespace = $nns, nn.name = $nname, nn.env = $nenv
		MERGE (nn)-[nr:NAMES]->(d)
			ON CREATE SET nr.kind = 'PRIMARY', nr.validFrom = $t, nr.validTo = $open
		WITH d WHERE $t >= coalesce(d.identityAt, 0)
		SET d.namespace = $nns, d.name = $nname, d.searchName = toLower($nname), d.env = $nenv, d.identityAt = $t`,
		map[string]any{"key": key, "prev": prev.canonical(), "next": next.canonical(), "t": r.Time,
			"pns": prev.NS, "pname": prev.Name, "penv": prev.Env, "nns": next.NS, "nname": next.Name,
			"nenv": next.Env, "open": graph.OpenEnd, "nv": NormVersion})
	if err != nil {
		return nil, err
	}
	prev.Key, next.Key = key, key
	w.touch(key, graph.NameGenKey(prev.canonical()), graph.NameGenKey(next.canonical()))
	return nil, nil
}
