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

func dsStateOf(obs ...fold.Obs) *dsState {
	st := &dsState{}
	st.merge(&dsChange{obs: obs})
	return st
}

func digestOf(st *dsState) string {
	return fieldsDigest("k", fieldHistoriesFrom(st.Base, st.Log, st.Schemas))
}

// TestRepeatsLatestSchemaCases checks the cases the shortcut must refuse, each of which changes the fields.
func TestRepeatsLatestSchemaCases(t *testing.T) {
	mention := fold.Obs{T: 15, Event: "m", Kind: fold.ObsMention, Paths: []string{"x"}}
	drop := fold.Obs{T: 15, Event: "d", Kind: fold.ObsLife, State: fold.LifeDrop}
	cases := []struct {
		name   string
		log    []fold.Obs
		change []fold.Obs
		want   bool
	}{
		{"the schema in force, later", []fold.Obs{schemaObs(10, "a", "b")}, []fold.Obs{schemaObs(20, "a", "b")}, true},
		{"twice, later", []fold.Obs{schemaObs(10, "a")}, []fold.Obs{schemaObs(20, "a"), schemaObs(30, "a")}, true},
		{"a mention since", []fold.Obs{schemaObs(10, "a"), mention}, []fold.Obs{schemaObs(20, "a")}, false},
		{"a drop since", []fold.Obs{schemaObs(10, "a"), drop}, []fold.Obs{schemaObs(20, "a")}, false},
		{"another schema", []fold.Obs{schemaObs(10, "a")}, []fold.Obs{schemaObs(20, "a", "b")}, false},
		{"the same instant", []fold.Obs{schemaObs(10, "a")}, []fold.Obs{schemaObs(10, "a")}, false},
		{"earlier", []fold.Obs{schemaObs(10, "a"), schemaObs(30, "a", "b")}, []fold.Obs{schemaObs(20, "a", "b")}, false},
		{"with a mention", []fold.Obs{schemaObs(10, "a")}, []fold.Obs{schemaObs(20, "a"), {T: 21, Event: "m2", Kind: fold.ObsMention, Paths: []string{"z"}}}, false},
		{"nothing before", nil, []fold.Obs{schemaObs(20, "a")}, false},
	}
	for _, c := range cases {
		st := dsStateOf(c.log...)
		change := &dsChange{obs: c.change}
		if got := repeatsLatestSchema(st, change); got != c.want {
			t.Errorf("%s: repeatsLatestSchema = %v, want %v", c.name, got, c.want)
		}
	}
	// The refusals matter: with a mention since the last schema, the repeated schema closes the mentioned field.
	st := dsStateOf(schemaObs(10, "a"), mention)
	before := digestOf(st)
	st.merge(&dsChange{obs: []fold.Obs{schemaObs(20, "a")}})
	if digestOf(st) == before {
		t.Fatal("a schema after a mention left the fields as they were; the case above proves nothing")
	}
}

// TestRepeatsLatestSchemaNeverHidesAChange runs random histories (sealed as the projector seals them, late
// observations included) where a third of the changes repeat the schema in force, and checks that whenever the
// shortcut says the fields stay as they are, folding the log with the change gives the same digest.
func TestRepeatsLatestSchemaNeverHidesAChange(t *testing.T) {
	taken, refused := 0, 0
	for seed := uint64(1); seed <= 40; seed++ {
		rng := rand.New(rand.NewPCG(seed, 11))
		st := &dsState{}
		for step := range 80 {
			c := &dsChange{}
			if last := fold.LatestFoldable(st.Log); last != nil && rng.IntN(3) == 0 {
				o := fold.Obs{T: last.T + int64(rng.IntN(3)), Kind: fold.ObsSchema, Fields: st.Schemas[last.Hash], R: rng.IntN(3) == 0}
				if last.Kind != fold.ObsSchema {
					o.Fields = randomObs(rng, 0, "").Fields
				}
				c.obs = append(c.obs, o)
			} else {
				for n := 0; n < 1+rng.IntN(3); n++ {
					tm := int64(step*10 + rng.IntN(10))
					if rng.IntN(8) == 0 {
						tm -= int64(rng.IntN(100))
					}
					if st.Base != nil && tm <= st.Base.T {
						tm = st.Base.T + 1 // late events before the seal go through restore (dslog_test.go)
					}
					c.obs = append(c.obs, randomObs(rng, tm, fmt.Sprintf("e%d-%d", step, n)))
				}
			}
			before := digestOf(st)
			rep := repeatsLatestSchema(st, copyChange(c))
			st.merge(copyChange(c))
			if rep {
				taken++
				if after := digestOf(st); after != before {
					t.Fatalf("seed %d step %d: the shortcut was taken but the fields changed", seed, step)
				}
			} else {
				refused++
			}
			st.sealAt(12, 5)
		}
	}
	if taken < 200 || refused < 200 {
		t.Fatalf("shortcut taken %d times, refused %d: the histories did not exercise both", taken, refused)
	}
}

// TestStateEncodingRoundTrips checks the stored form of a dataset's state: random logs (schemas, mentions,
// drops, declarations) come back exactly, states in the earlier form (every observation an object in "log") read
// the same, and a busy dataset's log of repeated schemas takes a fraction of the bytes.
func TestStateEncodingRoundTrips(t *testing.T) {
	for seed := uint64(1); seed <= 30; seed++ {
		rng := rand.New(rand.NewPCG(seed, 3))
		st := &dsState{}
		for step := range 60 {
			o := randomObs(rng, int64(step*7+rng.IntN(20)), fmt.Sprintf("e%d", step))
			if rng.IntN(10) == 0 {
				o = fold.Obs{T: o.T, Event: o.Event, Kind: fold.ObsDecl, Keys: []string{"up"}, Prod: "p"}
			}
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
