package project

import (
	"context"
	"fmt"
	"strings"

	json "github.com/goccy/go-json"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/internal/ordered"
)

// UpgradeNoteV6 is what `headwater upgrade` says of projection version 6 (docs/adr/0066-temporal-tags.md).
const UpgradeNoteV6 = "projection version 6 (ADR 0066, 0068): tag histories and job tags rebuilt from the archive's tags facets"

// UpgradeNoteV9 is what `headwater upgrade` says of projection version 9 (docs/adr/0090-job-tag-history.md).
const UpgradeNoteV9 = "projection version 9 (ADR 0090): job tag logs and histories filled from the archive's job tags facets"

// UpgradeNoteV10 is what `headwater upgrade` says of projection version 10 (docs/adr/0091-column-transformation-history.md):
// UpgradeEvidence's fold of every job is a full one for a job with column lineage (checkpoint column version 3).
const UpgradeNoteV10 = "projection version 10 (ADR 0091): column edges' transformation histories refolded from all the runs of every job with column lineage"

// TagsUpgraded is what UpgradeTags rewrote.
type TagsUpgraded struct{ Datasets, Jobs int }

// UpgradeTags rebuilds the tag log, and so Dataset.tagHistory and tagNames, of the datasets named by already
// projected events' tags facets (projection version 6, tags.go). Replay cannot do it: it skips events already
// projected, and version 5 kept the latest tags facet only. envs are archived events (re-decoded, with the owned
// set they were accepted with); each is judged by today's rules (only owners' tags, an empty facet removes the
// tags), and its datasets are the ones its stored event was bound to (the stored payload's keys: the binding is
// the graph's, not the archive's). An event never projected (its Event node is missing) is left to the replay
// after the upgrade. Only datasets whose (canonical) namespace, or its part after '://', starts with namespacePrefix
// ("" for all) change.
// Job tags facets (ADR 0068) are written onto the stored event's job as its other descriptive properties are
// (latest by event time; jobs of any namespace under the prefix rule), and so into the job's tag log (projection
// version 9, ADR 0090). Idempotent: a facet already in a
// dataset's tag log is kept once, a job's latest stamp wins again. It returns how many datasets and jobs it
// rewrote.
func (p *Projector) UpgradeTags(ctx context.Context, envs []Envelope, namespacePrefix string) (TagsUpgraded, error) {
	byKey := map[string]*rec{}
	for _, env := range envs {
		r, err := buildRec(env, p.canon)
		if err != nil {
			continue // unprojectable events were quarantined
		}
		if r.Job != nil && r.Job.Tags != "" && namespaceUnder(r.Job.NS, namespacePrefix) {
			byKey[r.key()] = r
		}
		for _, d := range r.datasets() {
			if d.Meta != nil && d.Meta.Tags != nil && namespaceUnder(d.ID.NS, namespacePrefix) {
				byKey[r.key()] = r
				break
			}
		}
	}
	if len(byKey) == 0 {
		return TagsUpgraded{}, nil
	}
	var n TagsUpgraded
	err := p.inFoldedUpgrade(ctx, "tags", func(w *txWriter) (err error) {
		n, err = w.upgradeTags(byKey, namespacePrefix)
		return err
	})
	return n, err
}

// inFoldedUpgrade is the in-place upgrades' transaction over the dataset fold state (UpgradeTags, UpgradeBlocks):
// fn runs in one write transaction with a fold-state attempt, so what it writes is fenced and cached like a
// batch's writes, and the cache generations of what it touched are bumped after the commit. what names the
// upgrade in its error.
func (p *Projector) inFoldedUpgrade(ctx context.Context, what string, fn func(w *txWriter) error) error {
	var touched []string
	fold := p.fold.attempt()
	sess := p.store.Session(ctx, neo4j.AccessModeWrite)
	defer func() { _ = sess.Close(context.Background()) }()
	_, err := sess.ExecuteWrite(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
		w := &txWriter{ctx: ctx, tx: tx, token: newToken(), touched: map[string]bool{}, fold: fold.begin()}
		if err := fn(w); err != nil {
			return nil, err
		}
		touched = ordered.Keys(w.touched)
		return nil, fold.seal(w)
	}, neo4j.WithTxTimeout(p.store.TxTimeout()))
	fold.end(err == nil)
	if err != nil {
		return fmt.Errorf("upgrade %s: %w", what, err)
	}
	if len(touched) > 0 {
		if err := p.gens.Bump(ctx, touched); err != nil {
			return fmt.Errorf("%w: %w", ErrGenerationBump, err)
		}
	}
	return nil
}

// upgradeTags binds the archived events' datasets by their stored payloads and folds their tags facets into the
// datasets' states, then writes what derives from them.
func (w *txWriter) upgradeTags(byKey map[string]*rec, prefix string) (TagsUpgraded, error) {
	var n TagsUpgraded
	out, err := w.runAs("upgradeTags:read", `UNWIND $keys AS k MATCH (e:Event {key: k})
		RETURN e.key AS k, e.payload AS p`, map[string]any{"keys": toAny(ordered.Keys(byKey))})
	if err != nil {
		return n, err
	}
	changes := map[string]*dsChange{}
	var jobs []*rec
	var rewrite []any
	for _, row := range out {
		k, _ := row.Get("k")
		pl, _ := row.Get("p")
		stored, err := decodeRec(pl)
		if err != nil {
			return n, err
		}
		r := byKey[asStr(k)]
		if r.Job != nil && r.Job.Tags != "" && stored.Job != nil && namespaceUnder(r.Job.NS, prefix) {
			was := stored.Job.Tags
			stored.Job.Tags = r.Job.Tags // onto the job the stored event names (its dbt node's, ADR 0027)
			if stored.Principal == "" {
				stored.Principal = r.Principal // the job tag log's entry names the archive's sender (ADR 0090)
			}
			// an empty facet version 7 stored as none (ADR 0086): the payload says it too
			if was != r.Job.Tags {
				payload, err := encodePayload(stored)
				if err != nil {
					return n, err
				}
				rewrite = append(rewrite, map[string]any{"key": stored.key(), "payload": payload})
			}
			jobs = append(jobs, stored)
		}
		was := stored.datasets()
		for i, d := range r.datasets() {
			if d.Meta == nil || d.Meta.Tags == nil || !namespaceUnder(d.ID.NS, prefix) || i >= len(was) ||
				was[i].ID == nil || was[i].ID.canonical() != d.ID.canonical() || !was[i].ID.ok() {
				continue
			}
			c := changes[was[i].ID.Key]
			if c == nil {
				c = &dsChange{meta: map[string]stamped{}, facets: map[string]stamped{}}
				changes[was[i].ID.Key] = c
			}
			c.tags = append(c.tags, tagObs{T: r.Time, E: r.ID, B: r.Principal, V: d.Meta.Tags})
			v, _ := json.Marshal(d.Meta.Tags) // the latest facet, an empty one too, is the current list
			setStamped(c.meta, "tags", stamped{T: r.Time, E: r.ID, V: v})
		}
	}
	if n.Datasets, err = w.refoldDatasetChanges(changes); err != nil {
		return n, err
	}
	if len(rewrite) > 0 {
		if _, err := w.runAs("upgradeTags:payloads", `UNWIND $rows AS row
			MATCH (e:Event {key: row.key}) SET e.payload = row.payload`, map[string]any{"rows": rewrite}); err != nil {
			return n, err
		}
	}
	if len(jobs) > 0 {
		if _, err := w.upsertJobs(jobs); err != nil { // the job tags only: no job is refolded by a tag upgrade
			return n, err
		}
		seen := map[string]bool{}
		for _, r := range jobs {
			seen[r.Job.Key] = true
		}
		n.Jobs = len(seen)
	}
	return n, nil
}

// namespaceUnder says whether a dataset namespace, or its part after "://", starts with prefix (the upgrade's
// --namespace-prefix rule for identities).
func namespaceUnder(ns, prefix string) bool {
	if strings.HasPrefix(ns, prefix) {
		return true
	}
	_, rest, ok := strings.Cut(ns, "://")
	return ok && strings.HasPrefix(rest, prefix)
}
