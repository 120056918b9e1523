package lineage

import (
	"encoding/json"
	"testing"

	"github.com/headwater-data/headwater/lineage/walk"
)

func TestCursorRoundTripAndBinding(t *testing.T) {
	c := cursorCodec{key: []byte("k")}
	st := cursorState{Subject: digest("alice"), Args: "args", AsOf: 42, State: walk.State{
		Frontier: []walk.Entry{{Key: "k1", Kind: walk.HopDataset, Down: true, Depth: 2, Skip: 3}}, Nodes: []byte("12345678")}}
	s, err := c.encode(st)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.decode(s, digest("alice"), "args")
	if err != nil || got.AsOf != 42 || got.Frontier[0] != st.Frontier[0] || string(got.Nodes) != "12345678" {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	for name, tc := range map[string]struct{ cur, sub, args string }{
		"other principal": {s, digest("bob"), "args"},
		"other args":      {s, digest("alice"), "args2"},
		"tampered":        {"e30" + s[3:], digest("alice"), "args"},
		"other key":       {mustEncode(t, cursorCodec{key: []byte("other")}, st), digest("alice"), "args"},
		"garbage":         {"nope", digest("alice"), "args"},
	} {
		if _, err := c.decode(tc.cur, tc.sub, tc.args); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

func mustEncode(t *testing.T, c cursorCodec, st cursorState) string {
	s, err := c.encode(st)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConfigValidate(t *testing.T) {
	good := Config{CursorKey: "0123456789abcdef0123456789abcdef"}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]Config{
		"short key":      {CursorKey: "short"},
		"depth over cap": {CursorKey: good.CursorKey, MaxDepth: DefaultMaxDepth + 1},
		"max nodes 1":    {CursorKey: good.CursorKey, MaxNodes: 1},
	} {
		if c.Validate() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if (Config{}).Validate() != nil {
		t.Fatal("an empty cursor key (random per process) must be accepted")
	}
	if d := good.WithDefaults(); d.MaxDepth != DefaultMaxDepth || d.FanOut != DefaultFanOut || d.MaxNodes != DefaultMaxNodes {
		t.Fatalf("defaults: %+v", d)
	}
}

// TestCursorLayoutUnchanged: the walk's continuation is embedded in the cursor state in the JSON order cursors had
// before the walk had a package of its own (v, p, a, t, f, r, n, e), so cursors issued before still verify.
func TestCursorLayoutUnchanged(t *testing.T) {
	st := cursorState{V: cursorVersion, Subject: "s", Args: "a", AsOf: 42, State: walk.State{
		Frontier: []walk.Entry{{Key: "k", Kind: walk.HopDataset, Down: true, Depth: 1}}, Reached: []byte{1}, Nodes: []byte{2}, Edges: []byte{3}}}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"v":2,"p":"s","a":"a","t":42,"f":[{"k":"k","t":"D","d":true,"h":1}],"r":"AQ==","n":"Ag==","e":"Aw=="}`
	if string(b) != want {
		t.Fatalf("cursor state JSON = %s, want %s", b, want)
	}
}
