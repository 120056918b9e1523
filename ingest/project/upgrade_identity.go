package project

import (
	"context"
	"fmt"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/fold"
)

// Projection version 3 (docs/adr/0026-identity-in-answers.md) writes canonical namespaces with the default port
// OpenLineage's naming spec writes ("postgres://warehouse:5432", where versions 1 and 2 stored
// "postgres://warehouse") and gives Dataset and Job nodes a searchName. Keys hash the portless key form
// (normalize.KeyNamespace), so no key changes: UpgradeIdentities rewrites, in place and in batches, only what
// stores a canonical namespace as text:
//
//   - Dataset.namespace and Job.namespace (the current identity; ids, history, fields, edges are keyed and kept);
//   - DatasetName.ident and .namespace (every PRIMARY, RENAMED, SYMLINK and ALIAS name keeps its binding and its
//     interval; if a version-3 projector already created the new ident, the old one's bindings join it);
//   - UnresolvedIdentity.namespace and key (records of one identifier under both forms are merged);
//   - Event.subjectNamespace of DatasetEvents;
//   - searchName on every Dataset and Job.
//
// Event payloads are not rewritten (a year of them would be most of the database): the one place that shows a
// payload's namespace (event(id){unresolvedIdentities}) reads it in today's form, and owned sets recorded in the
// archive are read in today's form when replayed (ownedNow). An old identifier keeps resolving: a lookup
// canonicalises what the user typed, and "postgres://warehouse" canonicalises to "postgres://warehouse:5432".

// identityBatch is how many nodes one identity-upgrade transaction reads and rewrites.
const identityBatch = 500

// IdentityUpgrade counts what UpgradeIdentities rewrote.
type IdentityUpgrade struct {
	Datasets, Names, Jobs, Unresolved, DatasetEvents int
}

// identityStep rewrites one batch of one label after the cursor and returns the next cursor ("" when done).
type identityStep func(w *txWriter, scope, after string) (next string, n int, err error)

// UpgradeIdentities rewrites the stored canonical namespaces and search names in version 3's form. A non-empty
// scope limits it to namespaces that start with the scope, or whose part after "://" does (the e2e fixtures live
// under "<fx>-", "s3://<fx>-", "postgres://<fx>-", ...). It is idempotent.
func (p *Projector) UpgradeIdentities(ctx context.Context, scope string) (IdentityUpgrade, error) {
	var out IdentityUpgrade
	steps := []struct {
		n    *int
		step identityStep
	}{
		{&out.Datasets, p.upgradeDatasets}, {&out.Names, p.upgradeNames}, {&out.Jobs, p.upgradeJobs},
		{&out.Unresolved, p.upgradeUnresolved},
	}
	for _, s := range steps {
		for after := ""; ; {
			var next string
			var n int
			err := p.upgradeTx(ctx, func(w *txWriter) error {
				var err error
				next, n, err = s.step(w, scope, after)
				return err
			})
			if err != nil {
				return out, fmt.Errorf("upgrade identities: %w", err)
			}
			*s.n += n
			if next == "" {
				break
			}
			after = next
		}
	}
	n, err := p.upgradeSubjectNamespaces(ctx, scope)
	out.DatasetEvents = n
	if err != nil {
		return out, fmt.Errorf("upgrade identities: %w", err)
	}
	return out, nil
}

// inScope is the Cypher condition of the upgrade's scope on x.namespace.
const inScope = `($scope = '' OR x.namespace STARTS WITH $scope OR coalesce(split(x.namespace, '://')[1], '') STARTS WITH $scope)`

// page reads the next batch of nodes of a label in the order of their unique property (key or ident) and returns
// those in scope with the requested fields, and the cursor: the last node read, in scope or not ("" when none was
// read: the label is done).
func (w *txWriter) page(label, by, scope, after, fields string) ([]graph.Props, string, error) {
	out, err := w.run(`MATCH (x:`+label+`) WHERE x.`+by+` > $after WITH x ORDER BY x.`+by+` LIMIT $n
		WITH collect(x) AS xs
		RETURN CASE WHEN size(xs) = 0 THEN '' ELSE xs[-1].`+by+` END AS last,
			[x IN xs WHERE `+inScope+` | {id: x.`+by+`, `+fields+`}] AS rows`,
		map[string]any{"after": after, "n": identityBatch, "scope": scope})
	if err != nil || len(out) == 0 {
		return nil, "", err
	}
	last, _ := out[0].Get("last")
	rows, _ := out[0].Get("rows")
	var ps []graph.Props
	for _, r := range rows.([]any) {
		ps = append(ps, graph.PropsOf(r))
	}
	return ps, asStr(last), nil
}

// datasetNSNow is a stored dataset namespace in today's canonical form, and whether that differs. A stored
// namespace that no longer canonicalises is left as it is.
func (p *Projector) datasetNSNow(ns, name string) (string, bool) {
	_, c, _, err := p.canon.Dataset(ns, name)
	if err != nil || c == ns {
		return ns, false
	}
	return c, true
}

// upgradeDatasets writes each Dataset's current namespace in today's form and its searchName.
func (p *Projector) upgradeDatasets(w *txWriter, scope, after string) (string, int, error) {
	recs, next, err := w.page("Dataset", "key", scope, after,
		"ns: x.namespace, name: x.name, searchable: coalesce(x.searchName = toLower(x.name), false)")
	if err != nil {
		return "", 0, err
	}
	var rows []any
	for _, r := range recs {
		if !r.Has("ns") || !r.Has("name") {
			continue // no identity to rewrite
		}
		ns, changed := p.datasetNSNow(r.Str("ns"), r.Str("name"))
		if !changed && r.Bool("searchable") {
			continue
		}
		rows = append(rows, map[string]any{"key": r.Str("id"), "ns": ns})
		w.touch(r.Str("id"))
	}
	if len(rows) == 0 {
		return next, 0, nil
	}
	_, err = w.runAs("upgradeIdentities:datasets", `UNWIND $rows AS r MATCH (d:Dataset {key: r.key})
		SET d.namespace = r.ns, d.searchName = toLower(d.name), d.normVersion = $nv`,
		map[string]any{"rows": rows, "nv": NormVersion})
	return next, len(rows), err
}

// upgradeNames re-idents each DatasetName whose namespace changes form. Its NAMES relationships (kind, interval)
// stay; when the new ident already exists (a version-3 projector bound it before the upgrade), the old name's
// relationships move to it, each kept unless the same dataset is already bound by it, and the old node goes.
func (p *Projector) upgradeNames(w *txWriter, scope, after string) (string, int, error) {
	recs, next, err := w.page("DatasetName", "ident", scope, after, "ns: x.namespace, name: x.name, env: x.env")
	if err != nil {
		return "", 0, err
	}
	var rows []any
	for _, r := range recs {
		ns, changed := p.datasetNSNow(r.Str("ns"), r.Str("name"))
		if !changed {
			continue
		}
		ident := graph.DatasetIdent(r.Str("env"), ns, r.Str("name"))
		rows = append(rows, map[string]any{"old": r.Str("id"), "new": ident, "ns": ns})
		w.touch(graph.NameGenKey(r.Str("id")), graph.NameGenKey(ident))
	}
	if len(rows) == 0 {
		return next, 0, nil
	}
	_, err = w.runAs("upgradeIdentities:names", `UNWIND $rows AS r
		MATCH (o:DatasetName {ident: r.old})
		OPTIONAL MATCH (x:DatasetName {ident: r.new})
		WITH o, x, r
		FOREACH (_ IN CASE WHEN x IS NULL THEN [1] ELSE [] END | SET o.ident = r.new, o.namespace = r.ns)
		WITH o, x, r WHERE x IS NOT NULL
		OPTIONAL MATCH (o)-[b:NAMES]->(d:Dataset)
		WITH o, x, b, d
		CALL (o, x, b, d) {
			WITH * WHERE b IS NOT NULL AND NOT (x)-[:NAMES]->(d)
			CREATE (x)-[nb:NAMES]->(d) SET nb = properties(b)
		}
		WITH DISTINCT o
		DETACH DELETE o`, map[string]any{"rows": rows})
	if err != nil {
		return "", 0, err
	}
	var keys []any
	for _, r := range rows {
		keys = append(keys, r.(map[string]any)["new"])
	}
	bound, err := w.run(`UNWIND $idents AS i MATCH (:DatasetName {ident: i})-[:NAMES]->(d:Dataset) RETURN collect(DISTINCT d.key) AS ks`,
		map[string]any{"idents": keys})
	if err != nil {
		return "", 0, err
	}
	if len(bound) > 0 {
		ks, _ := bound[0].Get("ks")
		for _, k := range ks.([]any) {
			w.touch(asStr(k))
		}
	}
	return next, len(rows), nil
}

// upgradeJobs writes each Job's namespace in today's form (URI-like job namespaces follow the namespace rules)
// and its searchName.
func (p *Projector) upgradeJobs(w *txWriter, scope, after string) (string, int, error) {
	recs, next, err := w.page("Job", "key", scope, after,
		"ns: x.namespace, name: x.name, searchable: coalesce(x.searchName = toLower(x.name), false)")
	if err != nil {
		return "", 0, err
	}
	var rows []any
	for _, r := range recs {
		if !r.Has("ns") || !r.Has("name") {
			continue // a placeholder (no identity yet)
		}
		ns := r.Str("ns")
		if c, _, err := p.canon.Job(ns, r.Str("name")); err == nil {
			ns = c
		}
		if ns == r.Str("ns") && r.Bool("searchable") {
			continue
		}
		rows = append(rows, map[string]any{"key": r.Str("id"), "ns": ns})
		w.touch(r.Str("id"))
	}
	if len(rows) == 0 {
		return next, 0, nil
	}
	_, err = w.runAs("upgradeIdentities:jobs", `UNWIND $rows AS r MATCH (j:Job {key: r.key})
		SET j.namespace = r.ns, j.searchName = toLower(j.name)`, map[string]any{"rows": rows})
	return next, len(rows), err
}

// upgradeUnresolved re-keys the unresolved-identity records of canonical identifiers whose namespace changes
// form; records of one identifier under both forms become one (first and last seen, the last few event ids).
// Records of identifiers that never canonicalised name them as sent and stay.
func (p *Projector) upgradeUnresolved(w *txWriter, scope, after string) (string, int, error) {
	recs, next, err := w.page("UnresolvedIdentity", "key", scope, after, "ns: x.namespace, name: x.name, reason: x.reason")
	if err != nil {
		return "", 0, err
	}
	var rows []any
	for _, r := range recs {
		ns, changed := p.datasetNSNow(r.Str("ns"), r.Str("name"))
		if !changed {
			continue
		}
		rows = append(rows, map[string]any{"old": r.Str("id"), "ns": ns,
			"new": graph.UnresolvedKey(ns, r.Str("name"), r.Str("reason"))})
	}
	if len(rows) == 0 {
		return next, 0, nil
	}
	w.touch(UnresolvedGeneration)
	_, err = w.runAs("upgradeIdentities:unresolved", `UNWIND $rows AS r
		MATCH (o:UnresolvedIdentity {key: r.old})
		OPTIONAL MATCH (x:UnresolvedIdentity {key: r.new})
		FOREACH (_ IN CASE WHEN x IS NULL THEN [1] ELSE [] END | SET o.key = r.new, o.namespace = r.ns)
		FOREACH (_ IN CASE WHEN x IS NULL THEN [] ELSE [1] END |
			SET x.firstSeenAt = CASE WHEN o.firstSeenAt < x.firstSeenAt THEN o.firstSeenAt ELSE x.firstSeenAt END,
				x.lastSeenAt = CASE WHEN o.lastSeenAt > x.lastSeenAt THEN o.lastSeenAt ELSE x.lastSeenAt END,
				x.eventIds = (o.eventIds + [e IN x.eventIds WHERE NOT e IN o.eventIds])[-$few..]
			DETACH DELETE o)`, map[string]any{"rows": rows, "few": fold.MaxEventIDs})
	return next, len(rows), err
}

// upgradeSubjectNamespaces writes the subjectNamespace of DatasetEvents (Dump selects them by it) in today's form.
// DatasetEvents are few but not indexed by it: one label scan finds the distinct namespaces, one more rewrites them.
func (p *Projector) upgradeSubjectNamespaces(ctx context.Context, scope string) (int, error) {
	res, err := neo4j.ExecuteQuery(ctx, p.store.Driver, `MATCH (x:Event) WHERE x.subjectNamespace IS NOT NULL
		WITH DISTINCT x.subjectNamespace AS namespace
		WITH namespace, {namespace: namespace} AS x WHERE `+inScope+`
		RETURN collect(namespace) AS nss`, map[string]any{"scope": scope},
		neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(p.store.Database))
	if err != nil {
		return 0, err
	}
	nss, _ := res.Records[0].Get("nss")
	m := map[string]any{}
	var olds []any
	for _, ns := range nss.([]any) {
		if now, changed := p.datasetNSNow(asStr(ns), "x"); changed {
			m[asStr(ns)] = now
			olds = append(olds, ns)
		}
	}
	if len(olds) == 0 {
		return 0, nil
	}
	res, err = neo4j.ExecuteQuery(ctx, p.store.Driver, `MATCH (e:Event) WHERE e.subjectNamespace IN $olds
		SET e.subjectNamespace = $m[e.subjectNamespace]
		RETURN count(e) AS n`, map[string]any{"olds": olds, "m": m},
		neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(p.store.Database))
	if err != nil {
		return 0, err
	}
	n, _ := res.Records[0].Get("n")
	return int(asInt(n)), nil
}
