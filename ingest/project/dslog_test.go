package project

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/headwater-data/headwater/ingest/fold"
	"github.com/headwater-data/headwater/ingest/olevent"
)

// randomObs is one event's observation of a dataset: mostly a schema, sometimes a mention, rarely a DROP or
// CREATE; a third of the schemas and mentions are observed on read. Fields a..d come and go; c keeps a stable
// field id so a re-created c reopens its history.
func randomObs(rng *rand.Rand, t int64, id string) fold.Obs {
	o := fold.Obs{T: t, Event: id}
	switch n := rng.IntN(20); {
	case n == 0:
		o.Kind, o.State = fold.ObsLife, []string{fold.LifeDrop, fold.LifeCreate}[rng.IntN(2)]
	case n < 4:
		o.Kind, o.Paths = fold.ObsMention, []string{[]string{"a", "b", "d"}[rng.IntN(3)]}
	default:
		o.Kind = fold.ObsSchema
		for _, p := range []string{"a", "b", "c", "d"} {
			if rng.IntN(4) != 0 {
				f := olevent.SchemaField{Path: p, Type: []string{"int", "string"}[rng.IntN(2)]}
				if p == "c" {
					f.FieldID = "c-id"
				}
				o.Fields = append(o.Fields, f)
			}
		}
	}
	if o.Kind != fold.ObsLife && rng.IntN(3) == 0 {
		o.R = true // observed on read: the read layer of the fold
	}
	return o
}

// TestSealedLogFoldsLikeTheWholeLog delivers random observation histories (mostly in time order, some late by
// a little or a lot) in batches, sealing with a small log limit and restoring chunks for late observations as the
// projector does (chunks and state round-trip through their encodings), and checks after every batch that the
// field histories and the latest update time equal those of the unsealed log.
func TestSealedLogFoldsLikeTheWholeLog(t *testing.T) {
	for seed := uint64(1); seed <= 60; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		sealed, whole := &dsState{}, &dsState{}
		chunks := map[int]dsChunk{}
		seals, restores := 0, 0
		for step := range 80 {
			c := &dsChange{}
			for n := 0; n < 1+rng.IntN(4); n++ {
				tm := int64(step*10 + rng.IntN(10))
				if rng.IntN(8) == 0 {
					tm -= int64(rng.IntN(400)) // late
				}
				c.obs = append(c.obs, randomObs(rng, tm, fmt.Sprintf("e%d-%d", step, n)))
			}
			if tm, late := sealed.lateFor(c); late {
				var back []dsChunk
				for seq, ch := range chunks {
					if ch.To >= tm && seq <= sealed.Base.Seq {
						back = append(back, ch)
						delete(chunks, seq)
					}
				}
				sort.Slice(back, func(i, j int) bool { return back[i].Seq < back[j].Seq })
				sealed.restore(back)
				restores++
			}
			sealed.merge(copyChange(c))
			whole.merge(copyChange(c))
			got := fieldsDigest("k", fieldHistoriesFrom(sealed.Base, sealed.Log, sealed.Schemas))
			want := fieldsDigest("k", fieldHistoriesFrom(nil, whole.Log, whole.Schemas))
			if got != want || sealed.lastUpdate() != whole.lastUpdate() {
				t.Fatalf("seed %d step %d: sealed log folds differently (updated %d vs %d)", seed, step,
					sealed.lastUpdate(), whole.lastUpdate())
			}
			if ch := sealed.sealAt(12, 5); ch != nil {
				seals++
				b, err := encodeChunk(ch)
				if err != nil {
					t.Fatal(err)
				}
				if chunks[ch.Seq], err = decodeChunk(b); err != nil {
					t.Fatal(err)
				}
			}
			enc, err := sealed.encode()
			if err != nil {
				t.Fatal(err)
			}
			if sealed, err = decodeState(enc); err != nil {
				t.Fatal(err)
			}
		}
		if seals == 0 || restores == 0 {
			t.Fatalf("seed %d: %d seals, %d restores: the history exercised neither", seed, seals, restores)
		}
	}
}

func copyChange(c *dsChange) *dsChange {
	out := &dsChange{meta: map[string]stamped{}, facets: map[string]stamped{}}
	for _, o := range c.obs {
		o.Fields = append([]olevent.SchemaField(nil), o.Fields...)
		out.obs = append(out.obs, o)
	}
	return out
}
