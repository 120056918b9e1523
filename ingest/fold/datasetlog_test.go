package fold

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"sort"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/olevent"
)

// randomObs is one event's observation of a dataset: mostly a schema, sometimes a mention, rarely a DROP or
// CREATE; a third of the schemas and mentions are observed on read. Fields a..d come and go; c keeps a stable
// field id so a re-created c reopens its history.
func randomObs(rng *rand.Rand, t int64, id string) Obs {
	o := Obs{T: t, Event: id}
	switch n := rng.IntN(20); {
	case n == 0:
		o.Kind, o.State = ObsLife, []string{LifeDrop, LifeCreate}[rng.IntN(2)]
	case n < 4:
		o.Kind, o.Paths = ObsMention, []string{[]string{"a", "b", "d"}[rng.IntN(3)]}
	default:
		o.Kind = ObsSchema
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
	if o.Kind != ObsLife && rng.IntN(3) == 0 {
		o.R = true // observed on read: the read layer of the fold
	}
	return o
}

// copyObs is a batch's observations as a fresh event would carry them (Merge takes the schemas' fields).
func copyObs(obs []Obs) []Obs {
	out := make([]Obs, 0, len(obs))
	for _, o := range obs {
		o.Fields = append([]olevent.SchemaField(nil), o.Fields...)
		out = append(out, o)
	}
	return out
}

// histLines renders every property of the histories that the projector derives its Field nodes from.
func histLines(hs []*FieldHist) string {
	var b strings.Builder
	for _, h := range hs {
		fmt.Fprintf(&b, "%s|%d|%d|%s|%s|%s|%t", h.Key("k"), h.From, h.To, h.Type, h.Description, h.FieldID, h.Read)
		for _, n := range h.Names {
			fmt.Fprintf(&b, " %s@%d", n.P, n.F)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// jsonRoundTrip passes v through its JSON (the stored form of the log's types) into out.
func jsonRoundTrip(t *testing.T, v, out any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
}

// TestDatasetLogTable checks each operation of the dataset log on small logs.
func TestDatasetLogTable(t *testing.T) {
	drop := Obs{T: 2, Event: "d", Kind: ObsLife, State: LifeDrop}
	decl := Obs{T: 1, Event: "x", Kind: ObsDecl, Keys: []string{"up"}}
	t.Run("Merge", func(t *testing.T) {
		var l DatasetLog
		l.Merge([]Obs{schemaObs(1, "a"), schemaObs(1, "a"), read(schemaObs(1, "a")), schemaObs(2, "a", "b"), drop})
		l.Merge([]Obs{schemaObs(2, "a", "b")})
		h1, h2 := SchemaHash(schemaObs(0, "a").Fields), SchemaHash(schemaObs(0, "a", "b").Fields)
		want := []Obs{{T: 1, Hash: h1, Kind: ObsSchema}, {T: 1, Hash: h1, Kind: ObsSchema, R: true},
			{T: 2, Hash: h2, Kind: ObsSchema}, drop}
		if !reflect.DeepEqual(l.Log, want) {
			t.Fatalf("log:\n got %+v\nwant %+v", l.Log, want)
		}
		if len(l.Schemas) != 2 || len(l.Schemas[h1]) != 1 || len(l.Schemas[h2]) != 2 {
			t.Fatalf("schemas: %v", l.Schemas)
		}
	})
	t.Run("Seal", func(t *testing.T) {
		var l DatasetLog
		l.Merge([]Obs{schemaObs(1, "a"), drop, decl, schemaObs(3, "b"), schemaObs(4, "b"), schemaObs(5, "c")})
		if l.Seal(4, 1) != nil {
			t.Fatal("sealed 4 schema observations with a limit of 4")
		}
		c := l.Seal(3, 1)
		if c == nil || c.Seq != 1 || c.From != math.MinInt64 || c.To != 4 || c.Base != nil || len(c.Obs) != 3 ||
			len(c.Schemas) != 2 {
			t.Fatalf("chunk %+v", c)
		}
		if l.Base == nil || l.Base.T != 4 || l.Base.Seq != 1 {
			t.Fatalf("base %+v", l.Base)
		}
		if got := renderHists(hists(l.Base.Hists)); got != "a[1,2) b[3,open)" {
			t.Fatalf("base histories %s", got)
		}
		kinds := []string{}
		for _, o := range l.Log {
			kinds = append(kinds, fmt.Sprint(o.Kind, "@", o.T))
		}
		if got := strings.Join(kinds, " "); got != "life@2 decl@1 schema@5" { // lifecycle and declarations stay
			t.Fatalf("log left %s", got)
		}
		if len(l.Schemas) != 1 { // only the kept observation's schema
			t.Fatalf("schemas left %v", l.Schemas)
		}
		l.Merge([]Obs{schemaObs(6, "c"), schemaObs(7, "c"), schemaObs(8, "d"), schemaObs(9, "d")})
		c2 := l.Seal(3, 1)
		if c2 == nil || c2.Seq != 2 || c2.From != 4 || c2.To != 8 || c2.Base == nil || c2.Base.T != 4 {
			t.Fatalf("second chunk %+v", c2)
		}
	})
	t.Run("LateFor", func(t *testing.T) {
		l := DatasetLog{Base: &LogBase{T: 4, Seq: 1}}
		for _, c := range []struct {
			obs  []Obs
			t    int64
			late bool
		}{
			{[]Obs{schemaObs(5, "a")}, 0, false},
			{[]Obs{schemaObs(5, "a"), schemaObs(3, "a"), {T: 2, Kind: ObsMention}}, 2, true},
			{[]Obs{schemaObs(4, "a")}, 4, true},
			{[]Obs{decl}, 0, false}, // the field fold does not read declarations
			{[]Obs{{T: 1, Kind: ObsLife, State: LifeDrop}}, 1, true},
		} {
			if tm, late := l.LateFor(c.obs); late != c.late || (late && tm != c.t) {
				t.Errorf("%+v: LateFor = %d %v, want %d %v", c.obs, tm, late, c.t, c.late)
			}
		}
		if _, late := (&DatasetLog{}).LateFor([]Obs{schemaObs(1, "a")}); late {
			t.Error("a log with no base: late")
		}
	})
	t.Run("Restore", func(t *testing.T) {
		var l, whole DatasetLog
		obs := []Obs{schemaObs(1, "a"), schemaObs(2, "b"), schemaObs(3, "c"), schemaObs(4, "d"), schemaObs(5, "e")}
		l.Merge(copyObs(obs))
		whole.Merge(copyObs(obs))
		c := l.Seal(2, 1)
		l.Restore(nil)
		if l.Base == nil {
			t.Fatal("restoring no chunks dropped the base")
		}
		l.Restore([]LogChunk{*c})
		if l.Base != nil || len(l.Log) != 5 || len(l.Schemas) != 5 {
			t.Fatalf("restored: base %+v, %d observations, %d schemas", l.Base, len(l.Log), len(l.Schemas))
		}
		if got, want := histLines(l.FieldHistories()), histLines(whole.FieldHistories()); got != want {
			t.Fatalf("restored log folds differently:\n%s\nwant\n%s", got, want)
		}
	})
	t.Run("LatestTime", func(t *testing.T) {
		l := DatasetLog{Log: []Obs{schemaObs(3, "a"), decl}}
		if l.LatestTime() != 3 {
			t.Fatalf("LatestTime %d", l.LatestTime())
		}
		l.Base = &LogBase{T: 9}
		if l.LatestTime() != 9 {
			t.Fatalf("LatestTime with a base %d", l.LatestTime())
		}
	})
}

func hists(hs []FieldHist) []*FieldHist {
	out := make([]*FieldHist, len(hs))
	for i := range hs {
		out[i] = &hs[i]
	}
	return out
}

// TestSealedLogFoldsLikeTheWholeLog delivers random observation histories (mostly in time order, some late by
// a little or a lot) in batches, sealing with a small log limit and restoring chunks for late observations as the
// projector does (chunks and log round-trip through their JSON), and checks after every batch that the field
// histories and the latest observation time equal those of the unsealed log.
func TestSealedLogFoldsLikeTheWholeLog(t *testing.T) {
	for seed := uint64(1); seed <= 60; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		sealed, whole := &DatasetLog{}, &DatasetLog{}
		chunks := map[int]LogChunk{}
		seals, restores := 0, 0
		for step := range 80 {
			var obs []Obs
			for n := 0; n < 1+rng.IntN(4); n++ {
				tm := int64(step*10 + rng.IntN(10))
				if rng.IntN(8) == 0 {
					tm -= int64(rng.IntN(400)) // late
				}
				obs = append(obs, randomObs(rng, tm, fmt.Sprintf("e%d-%d", step, n)))
			}
			if tm, late := sealed.LateFor(obs); late {
				var back []LogChunk
				for seq, ch := range chunks {
					if ch.To >= tm && seq <= sealed.Base.Seq {
						back = append(back, ch)
						delete(chunks, seq)
					}
				}
				sort.Slice(back, func(i, j int) bool { return back[i].Seq < back[j].Seq })
				sealed.Restore(back)
				restores++
			}
			sealed.Merge(copyObs(obs))
			whole.Merge(copyObs(obs))
			if got, want := histLines(sealed.FieldHistories()), histLines(whole.FieldHistories()); got != want ||
				sealed.LatestTime() != whole.LatestTime() {
				t.Fatalf("seed %d step %d: sealed log folds differently (latest %d vs %d):\n%s\nwant\n%s", seed, step,
					sealed.LatestTime(), whole.LatestTime(), got, want)
			}
			if ch := sealed.Seal(12, 5); ch != nil {
				seals++
				var back LogChunk
				jsonRoundTrip(t, ch, &back)
				chunks[ch.Seq] = back
			}
			next := &DatasetLog{}
			jsonRoundTrip(t, sealed, next)
			sealed = next
		}
		if seals == 0 || restores == 0 {
			t.Fatalf("seed %d: %d seals, %d restores: the history exercised neither", seed, seals, restores)
		}
	}
}

// TestRepeatsLatestSchemaCases checks the cases the shortcut must refuse, each of which changes the fields.
func TestRepeatsLatestSchemaCases(t *testing.T) {
	mention := Obs{T: 15, Event: "m", Kind: ObsMention, Paths: []string{"x"}}
	drop := Obs{T: 15, Event: "d", Kind: ObsLife, State: LifeDrop}
	cases := []struct {
		name   string
		log    []Obs
		change []Obs
		want   bool
	}{
		{"the schema in force, later", []Obs{schemaObs(10, "a", "b")}, []Obs{schemaObs(20, "a", "b")}, true},
		{"twice, later", []Obs{schemaObs(10, "a")}, []Obs{schemaObs(20, "a"), schemaObs(30, "a")}, true},
		{"a reader's, after the owner's", []Obs{schemaObs(10, "a")}, []Obs{read(schemaObs(20, "a"))}, true},
		{"the owner's, after a reader's", []Obs{read(schemaObs(10, "a"))}, []Obs{schemaObs(20, "a")}, false},
		{"a mention since", []Obs{schemaObs(10, "a"), mention}, []Obs{schemaObs(20, "a")}, false},
		{"a drop since", []Obs{schemaObs(10, "a"), drop}, []Obs{schemaObs(20, "a")}, false},
		{"another schema", []Obs{schemaObs(10, "a")}, []Obs{schemaObs(20, "a", "b")}, false},
		{"the same instant", []Obs{schemaObs(10, "a")}, []Obs{schemaObs(10, "a")}, false},
		{"earlier", []Obs{schemaObs(10, "a"), schemaObs(30, "a", "b")}, []Obs{schemaObs(20, "a", "b")}, false},
		{"with a mention", []Obs{schemaObs(10, "a")}, []Obs{schemaObs(20, "a"), {T: 21, Event: "m2", Kind: ObsMention, Paths: []string{"z"}}}, false},
		{"nothing before", nil, []Obs{schemaObs(20, "a")}, false},
		{"nothing new", []Obs{schemaObs(10, "a")}, nil, false},
	}
	for _, c := range cases {
		var l DatasetLog
		l.Merge(c.log)
		if got := l.RepeatsLatestSchema(c.change); got != c.want {
			t.Errorf("%s: RepeatsLatestSchema = %v, want %v", c.name, got, c.want)
		}
	}
	// The refusals matter: with a mention since the last schema, the repeated schema closes the mentioned field.
	var l DatasetLog
	l.Merge([]Obs{schemaObs(10, "a"), mention})
	before := histLines(l.FieldHistories())
	l.Merge([]Obs{schemaObs(20, "a")})
	if histLines(l.FieldHistories()) == before {
		t.Fatal("a schema after a mention left the fields as they were; the case above proves nothing")
	}
}

// TestRepeatsLatestSchemaNeverHidesAChange runs random histories (sealed as the projector seals them) where a
// third of the changes repeat the schema in force, and checks that whenever the shortcut says the fields stay as
// they are, folding the log with the change gives the same histories.
func TestRepeatsLatestSchemaNeverHidesAChange(t *testing.T) {
	taken, refused := 0, 0
	for seed := uint64(1); seed <= 40; seed++ {
		rng := rand.New(rand.NewPCG(seed, 11))
		l := &DatasetLog{}
		for step := range 80 {
			var obs []Obs
			if last := LatestFoldable(l.Log); last != nil && rng.IntN(3) == 0 {
				o := Obs{T: last.T + int64(rng.IntN(3)), Kind: ObsSchema, Fields: l.Schemas[last.Hash], R: rng.IntN(3) == 0}
				if last.Kind != ObsSchema {
					o.Fields = randomObs(rng, 0, "").Fields
				}
				obs = append(obs, o)
			} else {
				for n := 0; n < 1+rng.IntN(3); n++ {
					tm := int64(step*10 + rng.IntN(10))
					if rng.IntN(8) == 0 {
						tm -= int64(rng.IntN(100))
					}
					if l.Base != nil && tm <= l.Base.T {
						tm = l.Base.T + 1 // late events before the seal go through Restore (above)
					}
					obs = append(obs, randomObs(rng, tm, fmt.Sprintf("e%d-%d", step, n)))
				}
			}
			before := histLines(l.FieldHistories())
			rep := l.RepeatsLatestSchema(copyObs(obs))
			l.Merge(copyObs(obs))
			if rep {
				taken++
				if after := histLines(l.FieldHistories()); after != before {
					t.Fatalf("seed %d step %d: the shortcut was taken but the fields changed", seed, step)
				}
			} else {
				refused++
			}
			l.Seal(12, 5)
		}
	}
	if taken < 200 || refused < 200 {
		t.Fatalf("shortcut taken %d times, refused %d: the histories did not exercise both", taken, refused)
	}
}

// Two folds from one sealed base that each rename the base's renamed field leave each other's histories (and the
// base) as they were: a rename never appends into the base's Names array (no Neo4j).
func TestFieldFoldsFromOneBaseShareNoNames(t *testing.T) {
	names := make([]FieldName, 2, 8) // room to append in place
	names[0], names[1] = FieldName{P: "a", F: 0}, FieldName{P: "b", F: 10}
	base := &LogBase{T: 10, Hists: []FieldHist{{Path: "b", FieldID: "1", From: 0, To: graph.OpenEnd, Names: names}}}
	renameTo := func(path string) []*FieldHist {
		l := DatasetLog{Base: base, Log: []Obs{{T: 20, Kind: ObsSchema, Hash: path,
			Fields: []olevent.SchemaField{{Path: path, FieldID: "1"}}}}}
		return l.FieldHistories()
	}
	first := renameTo("c")
	second := renameTo("d")
	if got := first[0].Names[len(first[0].Names)-1].P; got != "c" {
		t.Fatalf("the first fold's last name is %q after a second fold from the same base, want c", got)
	}
	if second[0].Names[2].P != "d" || len(base.Hists[0].Names) != 2 {
		t.Fatalf("second fold %v, base %v", second[0].Names, base.Hists[0].Names)
	}
}
