package project

import (
	"fmt"
	"testing"

	"github.com/headwater-data/headwater/ingest/fold"
	"github.com/headwater-data/headwater/ingest/olevent"
)

// variedObs is the step-th observation of a made-up dataset: schemas of fields a..d (c with a stable field id),
// mentions, now and then a DROP or CREATE and a declaration; a third of the schemas and mentions observed on read.
func variedObs(step int) fold.Obs {
	o := fold.Obs{T: int64(step*7 + step%5), Event: fmt.Sprintf("e%d", step)}
	switch {
	case step%11 == 0:
		o.Kind, o.Keys, o.Prod = fold.ObsDecl, []string{"up"}, "p"
	case step%13 == 0:
		o.Kind, o.State = fold.ObsLife, []string{fold.LifeDrop, fold.LifeCreate}[(step/13)%2]
	case step%4 == 0:
		o.Kind, o.Paths = fold.ObsMention, []string{[]string{"a", "b", "d"}[step%3]}
	default:
		o.Kind = fold.ObsSchema
		for i, p := range []string{"a", "b", "c", "d"} {
			if i == 0 || (step>>i)&1 == 1 {
				f := olevent.SchemaField{Path: p, Type: []string{"int", "string"}[(step>>2)&1]}
				if p == "c" {
					f.FieldID = "c-id"
				}
				o.Fields = append(o.Fields, f)
			}
		}
	}
	if (o.Kind == fold.ObsSchema || o.Kind == fold.ObsMention) && step%3 == 0 {
		o.R = true
	}
	return o
}

// TestSealedStateRoundTripsItsEncodings checks the stored forms of a sealed dataset log: the chunks the log
// seals and the state holding its sealed base read back (decodeChunk, decodeState) to the same log, the same field
// histories, and the same bytes when written again.
func TestSealedStateRoundTripsItsEncodings(t *testing.T) {
	st := &dsState{}
	seals := 0
	for step := range 200 {
		st.merge(&dsChange{obs: []fold.Obs{variedObs(step)}})
		if ch := st.Seal(12, 5); ch != nil {
			seals++
			enc, err := encodeChunk(ch)
			if err != nil {
				t.Fatal(err)
			}
			back, err := decodeChunk(enc)
			if err != nil {
				t.Fatal(err)
			}
			if again, _ := encodeChunk(&back); string(again) != string(enc) || back.Seq != ch.Seq ||
				len(back.Obs) != len(ch.Obs) || (back.Base == nil) != (ch.Base == nil) {
				t.Fatalf("step %d: chunk %d did not round-trip", step, ch.Seq)
			}
		}
		enc, err := st.encode()
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeState(enc)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := got.encode()
		if string(again) != string(enc) || len(got.Log) != len(st.Log) ||
			fieldsDigest("k", got.FieldHistories()) != fieldsDigest("k", st.FieldHistories()) {
			t.Fatalf("step %d: the sealed state did not round-trip", step)
		}
		st = got
	}
	if seals < 10 || st.Base == nil {
		t.Fatalf("%d seals: the log was not sealed enough to test", seals)
	}
}

// TestStoredDatasetLogForm pins the JSON of a dataset state with a sealed base and of a chunk, as projection
// version 7 stores them (dsStateWire, fold.LogChunk): a change of a JSON name, of the field order or of the
// fold's output changes what is stored and needs a projection version.
func TestStoredDatasetLogForm(t *testing.T) {
	st := &dsState{Meta: map[string]stamped{}, Facets: map[string]stamped{}}
	var chunk *fold.LogChunk
	for step := range 16 {
		st.merge(&dsChange{obs: []fold.Obs{variedObs(step)}})
		if ch := st.Seal(4, 1); ch != nil {
			chunk = ch
		}
	}
	if chunk == nil || chunk.Base == nil {
		t.Fatal("the log sealed no chunk with a base")
	}
	enc, err := st.encode()
	if err != nil {
		t.Fatal(err)
	}
	state, _ := storedJSON(enc)
	cb, err := encodeChunk(chunk)
	if err != nil {
		t.Fatal(err)
	}
	chunkJSON, _ := storedJSON(cb)
	if string(state) != wantStoredState {
		t.Errorf("stored state:\n got %s\nwant %s", state, wantStoredState)
	}
	if string(chunkJSON) != wantStoredChunk {
		t.Errorf("stored chunk:\n got %s\nwant %s", chunkJSON, wantStoredChunk)
	}
}

// The stored forms, as written at ccee23d (before the log's fold moved to ingest/fold).
const (
	wantStoredState = `{"log":[{"t":0,"e":"e0","k":"decl","d":["up"],"pr":"p"},{"t":78,"e":"e11","k":"decl","d":["up"],"pr":"p"},{"t":94,"e":"e13","k":"life","s":"CREATE"}],"sr":[{"h":"d15702b9263bf322","t":[105],"r":true}],"schemas":{"d15702b9263bf322":[{"Path":"a","Type":"string","Description":"","FieldID":""},{"Path":"b","Type":"string","Description":"","FieldID":""},{"Path":"c","Type":"string","Description":"","FieldID":"c-id"},{"Path":"d","Type":"string","Description":"","FieldID":""}]},"base":{"t":102,"n":3,"h":[{"Path":"a","Type":"string","Description":"","FieldID":"","From":8,"To":253402300799999},{"Path":"a","Type":"int","Description":"","FieldID":"","From":24,"To":35,"Read":true},{"Path":"a","Type":"string","Description":"","FieldID":"","From":43,"To":51,"Read":true},{"Path":"a","Type":"int","Description":"","FieldID":"","From":67,"To":70,"Read":true},{"Path":"a","Type":"","Description":"","FieldID":"","From":86,"To":102,"Read":true},{"Path":"b","Type":"int","Description":"","FieldID":"","From":16,"To":35},{"Path":"b","Type":"int","Description":"","FieldID":"","From":24,"To":35,"Read":true},{"Path":"b","Type":"string","Description":"","FieldID":"","From":43,"To":51,"Read":true},{"Path":"b","Type":"string","Description":"","FieldID":"","From":51,"To":253402300799999},{"Path":"c","Type":"string","Description":"","FieldID":"c-id","From":35,"To":253402300799999},{"Path":"c","Type":"string","Description":"","FieldID":"c-id","From":43,"To":51,"Read":true},{"Path":"d","Type":"string","Description":"","FieldID":"","From":59,"To":253402300799999},{"Path":"d","Type":"int","Description":"","FieldID":"","From":67,"To":70,"Read":true}]}}`
	wantStoredChunk = `{"n":3,"from":59,"to":102,"base":{"t":59,"n":2,"h":[{"Path":"a","Type":"string","Description":"","FieldID":"","From":8,"To":253402300799999},{"Path":"a","Type":"int","Description":"","FieldID":"","From":24,"To":35,"Read":true},{"Path":"a","Type":"string","Description":"","FieldID":"","From":43,"To":51,"Read":true},{"Path":"b","Type":"int","Description":"","FieldID":"","From":16,"To":35},{"Path":"b","Type":"int","Description":"","FieldID":"","From":24,"To":35,"Read":true},{"Path":"b","Type":"string","Description":"","FieldID":"","From":43,"To":51,"Read":true},{"Path":"b","Type":"string","Description":"","FieldID":"","From":51,"To":253402300799999},{"Path":"c","Type":"string","Description":"","FieldID":"c-id","From":35,"To":253402300799999},{"Path":"c","Type":"string","Description":"","FieldID":"c-id","From":43,"To":51,"Read":true},{"Path":"d","Type":"","Description":"","FieldID":"","From":59,"To":253402300799999}]},"obs":[{"t":67,"h":"c76e914ee6493a9d","k":"schema","r":true},{"t":70,"h":"2b033bfbc8d1b132","k":"schema"},{"t":86,"e":"e12","k":"mention","p":["a"],"r":true},{"t":102,"h":"d15702b9263bf322","k":"schema"}],"schemas":{"2b033bfbc8d1b132":[{"Path":"a","Type":"int","Description":"","FieldID":""},{"Path":"b","Type":"int","Description":"","FieldID":""},{"Path":"d","Type":"int","Description":"","FieldID":""}],"c76e914ee6493a9d":[{"Path":"a","Type":"int","Description":"","FieldID":""},{"Path":"d","Type":"int","Description":"","FieldID":""}],"d15702b9263bf322":[{"Path":"a","Type":"string","Description":"","FieldID":""},{"Path":"b","Type":"string","Description":"","FieldID":""},{"Path":"c","Type":"string","Description":"","FieldID":"c-id"},{"Path":"d","Type":"string","Description":"","FieldID":""}]}}`
)
