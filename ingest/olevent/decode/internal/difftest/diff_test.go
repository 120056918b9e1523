package difftest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/ingest/olevent/decode"
	"github.com/headwater-data/headwater/ingest/olevent/decode/internal/oracle"
)

// pair is the decoder under test and the reference decoder, on one limit set and one settable clock.
type pair struct {
	fixed int // inputs with invalid text the reference decoder let through and the single pass refuses
	name  string
	now   time.Time
	cur   *decode.Decoder
	ref   *oracle.Decoder
}

// tightLimits reach every limit with ordinary events: short strings, shallow nesting, few facets and datasets.
func tightLimits() olevent.Limits {
	l := olevent.DefaultLimits()
	l.MaxStringBytes, l.MaxJSONDepth, l.MaxFacetsPerEntity, l.MaxDatasets = 48, 7, 4, 3
	return l
}

func newPairs(t testing.TB) []*pair {
	t.Helper()
	var out []*pair
	for _, l := range []struct {
		name string
		lim  olevent.Limits
	}{{"default", olevent.DefaultLimits()}, {"tight", tightLimits()}} {
		p := &pair{name: l.name, now: ExampleTime}
		clock := func() time.Time { return p.now }
		var err error
		if p.cur, err = decode.NewDecoder(l.lim, clock); err != nil {
			t.Fatal(err)
		}
		if p.ref, err = oracle.NewDecoder(l.lim, clock); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// clockFor runs the clock a minute after the event's own eventTime, so that the time bounds do not refuse the
// corpus (they are compared too: mutations move eventTime).
func clockFor(raw []byte) time.Time {
	var env struct {
		EventTime string `json:"eventTime"`
	}
	if json.Unmarshal(raw, &env) == nil {
		if t, err := time.Parse(time.RFC3339Nano, env.EventTime); err == nil {
			return t.Add(time.Minute)
		}
	}
	return ExampleTime
}

func validation(err error) (*olevent.ValidationError, bool) {
	if err == nil {
		return nil, true
	}
	var ve *olevent.ValidationError
	return ve, errors.As(err, &ve)
}

// diff compares the two decoders on raw: both refuse with the same field and rule, or both accept the same Event
// (and, for an accepted event, the consumer's DecodeValidated agrees too). It returns what differs, "" if nothing.
func (p *pair) diff(raw []byte) string {
	p.now = clockFor(raw)
	cur, curErr := p.cur.Decode(raw)
	ref, refErr := p.ref.Decode(raw)
	cve, ok1 := validation(curErr)
	rve, ok2 := validation(refErr)
	if !ok1 || !ok2 {
		return fmt.Sprintf("not a *ValidationError: cur %v ref %v", curErr, refErr)
	}
	switch {
	case cve == nil && rve == nil:
	case cve != nil && cve.Rule == olevent.RuleUTF8 && cve.Field == "$" && textDefect(raw) && (rve == nil || rve.Rule != olevent.RuleUTF8):
		p.fixed++ // the reference decoder's token walk missed the defect (ADR 0037): refusing it is the fix
		return ""
	case cve == nil || rve == nil:
		return fmt.Sprintf("accept/reject differs: cur %v, ref %v", cve, rve)
	case cve.Field != rve.Field || cve.Rule != rve.Rule:
		return fmt.Sprintf("error differs: cur %s/%s (%s), ref %s/%s (%s)", cve.Field, cve.Rule, cve.Message, rve.Field, rve.Rule, rve.Message)
	default:
		return ""
	}
	if d := eventDiff(cur, ref); d != "" {
		return "Decode: " + d
	}
	curV, err1 := p.cur.DecodeValidated(raw)
	refV, err2 := p.ref.DecodeValidated(raw)
	if err1 != nil || err2 != nil {
		return fmt.Sprintf("DecodeValidated refused an accepted event: cur %v ref %v", err1, err2)
	}
	if d := eventDiff(curV, refV); d != "" {
		return "DecodeValidated: " + d
	}
	return ""
}

// eventDiff compares two Events. Facet issues are compared by path and rule: their messages quote the facet
// parser's own error text, which names Go types.
func eventDiff(cur, ref olevent.Event) string {
	for _, ev := range []*olevent.Event{&cur, &ref} {
		issues := make([]olevent.FacetIssue, len(ev.FacetIssues))
		for i, fi := range ev.FacetIssues {
			if fi.Message == "" {
				return "facet issue without a message: " + fi.Path
			}
			issues[i] = olevent.FacetIssue{Path: fi.Path, Rule: fi.Rule}
		}
		ev.FacetIssues = issues
	}
	if reflect.DeepEqual(cur, ref) {
		return ""
	}
	return "events differ at " + firstDiff(reflect.ValueOf(cur), reflect.ValueOf(ref), "Event")
}

// firstDiff names the first field where a and b differ, with both values.
func firstDiff(a, b reflect.Value, path string) string {
	if a.Kind() != b.Kind() {
		return path
	}
	switch a.Kind() {
	case reflect.Struct:
		for i := range a.NumField() {
			if !reflect.DeepEqual(valueOf(a.Field(i)), valueOf(b.Field(i))) {
				return firstDiff(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name)
			}
		}
	case reflect.Pointer:
		if !a.IsNil() && !b.IsNil() {
			return firstDiff(a.Elem(), b.Elem(), path)
		}
	case reflect.Slice:
		if a.Len() == b.Len() && a.Type().Elem().Kind() != reflect.Uint8 {
			for i := range a.Len() {
				if !reflect.DeepEqual(valueOf(a.Index(i)), valueOf(b.Index(i))) {
					return firstDiff(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i))
				}
			}
		}
	}
	return fmt.Sprintf("%s: cur %s ref %s", path, show(a), show(b))
}

func valueOf(v reflect.Value) any {
	if !v.CanInterface() {
		return fmt.Sprintf("%v", v) // unexported: compare the rendering
	}
	return v.Interface()
}

func show(v reflect.Value) string {
	if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
		return fmt.Sprintf("%q", v.Bytes())
	}
	if v.Kind() == reflect.Map && v.Type().Elem().Kind() == reflect.Slice {
		var b bytes.Buffer
		fmt.Fprintf(&b, "(nil %v) {", v.IsNil())
		for _, k := range v.MapKeys() {
			fmt.Fprintf(&b, "%v: %q, ", k, v.MapIndex(k).Bytes())
		}
		return b.String() + "}"
	}
	return fmt.Sprintf("%+v", valueOf(v))
}

// counts tallies what the corpus exercised, so a test that compares nothing cannot pass.
type counts struct{ inputs, accepted, refused int }

func (c *counts) add(p *pair, raw []byte) {
	c.inputs++
	if _, err := p.ref.Decode(raw); err == nil {
		c.accepted++
	} else {
		c.refused++
	}
}

func corpus(t testing.TB) []Sample {
	t.Helper()
	fx, err := DecoderFixtures()
	if err != nil {
		t.Fatal(err)
	}
	ref, err := ReferenceExamples(ReferenceDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(ref) == 0 {
		t.Logf("shared/reference/openlineage is not beside this checkout: the corpus is the decoder's fixtures and the generator's events")
	}
	g, _, err := GeneratorEvents(300)
	if err != nil {
		t.Fatal(err)
	}
	out := append(append(fx, ref...), g...)
	t.Logf("corpus: %d decoder fixtures, %d reference examples, %d generator events", len(fx), len(ref), len(g))
	return out
}

// TestSinglePassMatchesReferenceDecoder: every corpus event as sent.
func TestSinglePassMatchesReferenceDecoder(t *testing.T) {
	var c counts
	for _, p := range newPairs(t) {
		for _, s := range corpus(t) {
			if d := p.diff(s.Raw); d != "" {
				t.Errorf("%s limits, %s: %s", p.name, s.Name, d)
			}
			c.add(p, s.Raw)
		}
	}
	t.Logf("%+v", c)
	if c.accepted < 300 || c.refused < 50 {
		t.Fatalf("the corpus exercised too little: %+v", c)
	}
}

// TestSinglePassMatchesReferenceDecoderOnMutations: structured mutations of every corpus event (each value
// replaced by other types, keys removed, duplicated and case-changed, bytes cut and flipped), so the refusals of
// every rule are compared, not only the accepted events.
func TestSinglePassMatchesReferenceDecoderOnMutations(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 37))
	var c counts
	pairs := newPairs(t)
	for _, s := range corpus(t) {
		for _, m := range mutations(rng, s.Raw, 40) {
			for _, p := range pairs {
				if d := p.diff(m); d != "" {
					_ = os.WriteFile(filepath.Join(os.TempDir(), fmt.Sprintf("hw-difftest-fail-%d.json", c.inputs)), m, 0o600) // kept for a look
					t.Errorf("%s limits, mutation of %s: %s\n input %s", p.name, s.Name, d, clip(m))
				}
				c.add(p, m)
			}
		}
	}
	t.Logf("%+v; refused now, let through before (invalid UTF-8 after escapes): %d, %d", c, pairs[0].fixed, pairs[1].fixed)
	if c.accepted < 1000 || c.refused < 1000 {
		t.Fatalf("the mutations exercised too little: %+v", c)
	}
}

func clip(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "..."
	}
	return string(b)
}

// mutations derives up to n variants of raw.
func mutations(rng *rand.Rand, raw []byte, n int) [][]byte {
	var out [][]byte
	var doc any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&doc) == nil {
		paths := allPaths(doc, nil, nil)
		for range n {
			if len(paths) == 0 {
				break
			}
			path := paths[rng.IntN(len(paths))]
			if b, ok := mutateAt(rng, doc, path); ok {
				out = append(out, b)
			}
		}
	}
	for range n / 4 {
		b := bytes.Clone(raw)
		switch rng.IntN(4) {
		case 0:
			b = b[:rng.IntN(len(b)+1)]
		case 1:
			if len(b) > 0 {
				const junk = "{}[]\",:0e.-\\ a\x00\xff"
				b[rng.IntN(len(b))] = junk[rng.IntN(len(junk))]
			}
		case 2:
			i := rng.IntN(len(b) + 1)
			b = append(b[:i:i], append([]byte(`"k":1,`), b[i:]...)...)
		default:
			i := rng.IntN(len(b) + 1)
			b = append(b[:i:i], append([]byte(`\ud800`), b[i:]...)...)
		}
		out = append(out, b)
	}
	return out
}

type step struct {
	key string
	idx int // -1 for an object key
}

func allPaths(v any, prefix []step, acc [][]step) [][]step {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := append(append([]step(nil), prefix...), step{key: k, idx: -1})
			acc = append(acc, p)
			acc = allPaths(x[k], p, acc)
		}
	case []any:
		for i, e := range x {
			p := append(append([]step(nil), prefix...), step{idx: i})
			acc = append(acc, p)
			acc = allPaths(e, p, acc)
		}
	}
	return acc
}

// replacements are what a mutated value becomes.
var replacements = []any{nil, json.Number("1"), json.Number("1.5e3"), "", "x", "START", "2026-03-01T11:00:00Z",
	"0195906a-1f2e-7c3d-8e4f-5a6b7c8d9e0f", true, []any{}, []any{map[string]any{}}, map[string]any{},
	map[string]any{"_deleted": true}, map[string]any{"fields": []any{map[string]any{"name": "a"}}},
	json.Number("9007199254740993"), "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz"}

// mutateAt changes the value at path (replace it, remove its key, or add a case variant of its key) and
// re-encodes the document; it works on a copy.
func mutateAt(rng *rand.Rand, doc any, path []step) ([]byte, bool) {
	cp := deepCopy(doc)
	parent := cp
	for _, s := range path[:len(path)-1] {
		parent = child(parent, s)
	}
	last := path[len(path)-1]
	switch m := parent.(type) {
	case map[string]any:
		switch rng.IntN(5) {
		case 0:
			delete(m, last.key)
		case 1:
			if v, ok := m[last.key]; ok {
				m[swapCase(last.key)] = v
			}
		default:
			m[last.key] = replacements[rng.IntN(len(replacements))]
		}
	case []any:
		if rng.IntN(4) == 0 {
			m[last.idx] = nil
		} else {
			m[last.idx] = replacements[rng.IntN(len(replacements))]
		}
	default:
		return nil, false
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(cp); err != nil {
		return nil, false
	}
	return b.Bytes(), true
}

func child(v any, s step) any {
	if s.idx >= 0 {
		return v.([]any)[s.idx]
	}
	return v.(map[string]any)[s.key]
}

func swapCase(k string) string {
	b := []byte(k)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z':
			b[i] = c - 32
			return string(b)
		case c >= 'A' && c <= 'Z':
			b[i] = c + 32
			return string(b)
		}
	}
	return k + "X"
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = deepCopy(e)
		}
		return a
	}
	return v
}

// textDefect says whether raw has invalid UTF-8 or an escaped lone surrogate (outside a string too: a test
// heuristic).
func textDefect(raw []byte) bool {
	if !utf8.Valid(raw) {
		return true
	}
	for i := 0; i+1 < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		if raw[i+1] != 'u' {
			i++
			continue
		}
		r, ok := hex4(raw, i+2)
		if !ok || !utf16.IsSurrogate(r) {
			continue
		}
		lo, ok2 := hex4(raw, i+8)
		if r >= 0xdc00 || i+7 >= len(raw) || raw[i+6] != '\\' || raw[i+7] != 'u' || !ok2 || lo < 0xdc00 || lo > 0xdfff {
			return true
		}
		i += 11
	}
	return false
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b[i:i+4]), 16, 32)
	return rune(n), err == nil
}
