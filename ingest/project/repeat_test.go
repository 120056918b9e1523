package project

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/headwater-data/headwater/ingest/fold"
	"github.com/headwater-data/headwater/ingest/olevent"
)

// TestStateEncodingRoundTrips checks the stored form of a dataset's state: random logs (schemas, mentions,
// drops, declarations) come back exactly, states in the earlier form (every observation an object in "log") read
// the same, and a busy dataset's log of repeated schemas takes a fraction of the bytes.
func TestStateEncodingRoundTrips(t *testing.T) {
	for seed := uint64(1); seed <= 30; seed++ {
		rng := rand.New(rand.NewPCG(seed, 3))
		st := &dsState{}
		for step := range 60 {
			o := variedObs(step + rng.IntN(60))
			o.T = int64(step*7 + rng.IntN(20))
			st.merge(&dsChange{obs: []fold.Obs{o}})
		}
		enc, err := st.encode() // sorts st.Log
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeState(enc)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Log, st.Log) || !reflect.DeepEqual(got.Schemas, st.Schemas) {
			t.Fatalf("seed %d: the log did not round-trip:\n got %+v\nwant %+v", seed, got.Log, st.Log)
		}
		legacy, err := packState(st) // the earlier form: dsState as it is
		if err != nil {
			t.Fatal(err)
		}
		old, err := decodeState(legacy)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(old.Log, st.Log) {
			t.Fatalf("seed %d: a state in the earlier form reads differently", seed)
		}
	}
	busy := &dsState{}
	for i := range 400 {
		busy.merge(&dsChange{obs: []fold.Obs{schemaObs(int64(1_795_990_000_000+i*731_506), "id", "status", "price")}})
	}
	enc, _ := busy.encode()
	legacyJSON, _ := json.Marshal(busy)
	raw, _ := storedJSON(enc)
	legacy, _ := packState(busy)
	t.Logf("400 repeated schema observations: JSON %d bytes (earlier form %d), stored %d bytes (earlier form %d)",
		len(raw), len(legacyJSON), len(enc), len(legacy))
	if len(raw)*4 > len(legacyJSON) {
		t.Fatalf("400 repeated schema observations: %d bytes of JSON, the earlier form %d", len(raw), len(legacyJSON))
	}
}

// schemaObs is a schema observation at t of string fields.
func schemaObs(t int64, paths ...string) fold.Obs {
	o := fold.Obs{T: t, Event: fmt.Sprint("s", t), Kind: fold.ObsSchema}
	for _, p := range paths {
		o.Fields = append(o.Fields, olevent.SchemaField{Path: p, Type: "string"})
	}
	return o
}
