package project

import (
	"context"
	"sort"

	"github.com/headwater-data/headwater/ingest/fold"
	"github.com/headwater-data/headwater/internal/ordered"
)

// UpgradeNoteV7 is what `headwater upgrade` says of projection version 7's blocks
// (docs/adr/0067-governance-tags-and-blocks-by-mutation.md).
const UpgradeNoteV7 = "projection version 7 (ADR 0067): block histories rebuilt from the archive's headwater_governance_block facets"

// UpgradeBlocks rebuilds the block log, and so Dataset.blockHistory, of the datasets named by already projected
// events' headwater_governance_block facets (projection version 7, blocks.go): version 6 kept the facet as an
// opaque dataset facet and replay skips events already projected. It is UpgradeTags' rule for the block facet:
// archived envelopes re-decoded with the owned set they were accepted with (only owners' blocks count), each
// dataset the one its stored event was bound to, events never projected left to the replay, only datasets whose
// namespace (or its part after '://') starts with namespacePrefix. Idempotent: a facet already in a block log is
// kept once. It returns how many datasets it rewrote.
func (p *Projector) UpgradeBlocks(ctx context.Context, envs []Envelope, namespacePrefix string) (int, error) {
	byKey := map[string]*rec{}
	for _, env := range envs {
		r, err := buildRec(env, p.canon)
		if err != nil {
			continue // unprojectable events were quarantined
		}
		for _, d := range r.datasets() {
			if d.Meta != nil && d.Meta.Blocks != nil && namespaceUnder(d.ID.NS, namespacePrefix) {
				byKey[r.key()] = r
				break
			}
		}
	}
	if len(byKey) == 0 {
		return 0, nil
	}
	var n int
	err := p.inFoldedUpgrade(ctx, "blocks", func(w *txWriter) (err error) {
		n, err = w.upgradeBlocks(byKey, namespacePrefix)
		return err
	})
	return n, err
}

// upgradeBlocks binds the archived events' datasets by their stored payloads and folds their block facets into
// the datasets' states, then writes what derives from them.
func (w *txWriter) upgradeBlocks(byKey map[string]*rec, prefix string) (int, error) {
	out, err := w.runAs("upgradeBlocks:read", `UNWIND $keys AS k MATCH (e:Event {key: k})
		RETURN e.key AS k, e.payload AS p`, map[string]any{"keys": toAny(ordered.Keys(byKey))})
	if err != nil {
		return 0, err
	}
	changes := map[string]*dsChange{}
	for _, row := range out {
		k, _ := row.Get("k")
		pl, _ := row.Get("p")
		stored, err := decodeRec(pl)
		if err != nil {
			return 0, err
		}
		r := byKey[asStr(k)]
		was := stored.datasets()
		for i, d := range r.datasets() {
			if d.Meta == nil || d.Meta.Blocks == nil || !namespaceUnder(d.ID.NS, prefix) || i >= len(was) ||
				was[i].ID == nil || was[i].ID.canonical() != d.ID.canonical() || !was[i].ID.ok() {
				continue
			}
			c := changes[was[i].ID.Key]
			if c == nil {
				c = &dsChange{meta: map[string]stamped{}, facets: map[string]stamped{}}
				changes[was[i].ID.Key] = c
			}
			c.blocks = append(c.blocks, blockObs{T: r.Time, E: r.ID, B: r.Principal, V: *d.Meta.Blocks})
		}
	}
	return w.refoldDatasetChanges(changes)
}

// refoldDatasetChanges is the in-place upgrades' dataset step (upgradeTags, upgradeBlocks): each change joins its
// dataset's fold state and the dataset's derived properties are rewritten; datasets with no node are skipped. It
// returns how many datasets it rewrote.
func (w *txWriter) refoldDatasetChanges(changes map[string]*dsChange) (int, error) {
	keys := ordered.Keys(changes)
	sort.Strings(keys)
	states, err := w.datasetStates(keys)
	if err != nil {
		return 0, err
	}
	n := 0
	dw := dsWrites{declLogs: map[string][]fold.Obs{}}
	for _, k := range keys {
		st, d := states[k], w.fold.works[k]
		if st == nil || d == nil {
			continue // no such node
		}
		c := changes[k]
		c.own()
		d.changes, d.save = append(d.changes, c), true
		if err := w.deriveDataset(&dw, d, c); err != nil {
			return n, err
		}
		n++
	}
	return n, w.writeDatasets(&dw)
}
