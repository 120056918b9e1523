package jsontree

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

var wide = Limits{MaxDepth: 10000, MaxString: 1 << 30}

func TestParseSyntaxIsEncodingJSONs(t *testing.T) {
	for _, s := range []string{
		`{}`, ` { "a" : [ 1 , -0.5e+3 , true , false , null , "x\n\u00e9\ud83d\ude00" ] } `, `[]`, `"s"`, `0`, `-0`,
		`{"a":1,}`, `[1,]`, `01`, `1.`, `.5`, `1e`, `+1`, `{"a" 1}`, `{a:1}`, `"\x"`, `"\u12"`, "\"\t\"", `tru`,
		`nul`, `{"a":1}x`, `{"a":1} {}`, `[1 2]`, `{"a":{"b":[{}]}}`, `"\/"`, `1E5`, `-`, `--1`, `[`, `]`, ``, ` `,
	} {
		_, ok := Parse([]byte(s), wide)
		if want := json.Valid([]byte(s)); ok != want {
			t.Errorf("Parse(%q) ok = %v, json.Valid %v", s, ok, want)
		}
	}
}

func TestParseRefusesWhatTheDecoderRefuses(t *testing.T) {
	for name, c := range map[string]struct {
		src string
		lim Limits
	}{
		"duplicate key":           {`{"a":1,"b":2,"a":3}`, wide},
		"duplicate in big object": {`{` + manyKeys(40) + `,"k7":0}`, wide},
		"too deep":                {`{"a":[[{}]]}`, Limits{MaxDepth: 3, MaxString: 10}},
		"long value":              {`{"a":"12345678901"}`, Limits{MaxDepth: 3, MaxString: 10}},
		"long key":                {`{"12345678901":1}`, Limits{MaxDepth: 3, MaxString: 10}},
		"long after unescaping":   {`{"a":"\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"}`, Limits{MaxDepth: 3, MaxString: 10}},
		"invalid UTF-8":           {"{\"a\":\"\xff\"}", wide},
		"lone high surrogate":     {`{"a":"\ud800"}`, wide},
		"lone low surrogate":      {`{"a":"\udc00x"}`, wide},
		"reversed pair":           {`{"a":"\udc00\ud800"}`, wide},
	} {
		if _, ok := Parse([]byte(c.src), c.lim); ok {
			t.Errorf("%s: Parse(%s) accepted", name, c.src)
		}
	}
	if _, ok := Parse([]byte(`{"a":"\u00e9\u00e9\u00e9\u00e9\u00e9"}`), Limits{MaxDepth: 1, MaxString: 10}); !ok {
		t.Error("ten decoded bytes at the limit of ten refused")
	}
}

func manyKeys(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k` + string(rune('a'+i%26)) + string(rune('0'+i/26)) + `":0`)
	}
	return strings.ReplaceAll(b.String(), `"kh0"`, `"k7"`)
}

func TestTreeKeepsSpansAndValues(t *testing.T) {
	src := []byte(`{"a": { "x" : [1, 2.50] } ,"b":"q\"\u0041","c":null}`)
	d, ok := Parse(src, wide)
	if !ok {
		t.Fatal("refused")
	}
	a, _ := d.Get(d.Root(), "a")
	if got := string(d.Raw(a)); got != `{ "x" : [1, 2.50] }` {
		t.Errorf("span of a = %q", got)
	}
	b, _ := d.Get(d.Root(), "b")
	if d.Node(b).Str != `q"A` {
		t.Errorf("b = %q", d.Node(b).Str)
	}
	raw := d.Raw(a)
	_ = append(raw, 'z')
	if !bytes.Equal(src[len(src)-10:], []byte(`,"c":null}`)) {
		t.Error("appending to a span wrote into the source")
	}
	if _, ok := d.Get(d.Root(), "z"); ok {
		t.Error("Get found a missing key")
	}
}

// FuzzParse: Parse accepts exactly the valid JSON without duplicate keys, invalid UTF-8 or lone surrogates, and
// its tree holds what encoding/json reads.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":"c\u00e9"}],"d":null}`, `[true,false,-1.5e3]`, `"\ud83d\ude00"`, `{"a":1,"a":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		d, ok := Parse(src, wide)
		var want any
		dec := json.NewDecoder(bytes.NewReader(src))
		dec.UseNumber()
		stdOK := json.Valid(src) && dec.Decode(&want) == nil
		if ok && !stdOK {
			t.Fatalf("accepted what encoding/json refuses: %q", src)
		}
		if !ok {
			if stdOK && utf8.Valid(src) && !bytes.Contains(src, []byte(`\u`)) && !strings.Contains(string(src), `":`) {
				t.Fatalf("refused valid JSON without keys or escapes: %q", src)
			}
			return
		}
		if got := tree(d, d.Root()); !reflect.DeepEqual(got, want) {
			t.Fatalf("tree %#v, encoding/json %#v", got, want)
		}
	})
}

func tree(d *Doc, i int32) any {
	n := d.Node(i)
	switch n.Kind {
	case Object:
		m := map[string]any{}
		for _, mb := range d.Members(i) {
			m[mb.Key] = tree(d, mb.Val)
		}
		return m
	case Array:
		a := []any{}
		for _, e := range d.Elems(i) {
			a = append(a, tree(d, e))
		}
		return a
	case String:
		return n.Str
	case Number:
		return json.Number(n.Str)
	case True:
		return true
	case False:
		return false
	}
	return nil
}

// FuzzSplit: Split accepts exactly what encoding/json.Valid accepts, and its items are the elements
// encoding/json unmarshals into []json.RawMessage (for null, none).
func FuzzSplit(f *testing.F) {
	for _, s := range []string{`[{"a":1}, [2], "x\ud800", null , 1.5e3]`, `null`, `{}`, `[]`, ` [ 1 ] `, "[\"\xff\"]", `[01]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		items, isArray, ok := Split(src, 10000)
		if ok != json.Valid(src) {
			t.Fatalf("Split ok %v, json.Valid %v: %q", ok, !ok, src)
		}
		if !ok {
			return
		}
		var want []json.RawMessage
		err := json.Unmarshal(src, &want)
		if isArray != (err == nil) {
			t.Fatalf("isArray %v, unmarshal error %v: %q", isArray, err, src)
		}
		if err != nil {
			return
		}
		if len(items) != len(want) {
			t.Fatalf("%d items, want %d: %q", len(items), len(want), src)
		}
		for i := range items {
			if !bytes.Equal(items[i], want[i]) {
				t.Fatalf("item %d %q, want %q", i, items[i], want[i])
			}
		}
	})
}

func TestSplitDepth(t *testing.T) {
	deep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
	if _, _, ok := Split([]byte(deep), 10000); ok != json.Valid([]byte(deep)) {
		t.Fatalf("depth 10001: Split ok %v", ok)
	}
	ok10k := strings.Repeat("[", 10000) + strings.Repeat("]", 10000)
	if _, _, ok := Split([]byte(ok10k), 10000); ok != json.Valid([]byte(ok10k)) {
		t.Fatalf("depth 10000: Split ok %v", ok)
	}
}
