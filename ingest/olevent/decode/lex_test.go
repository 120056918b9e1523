package decode

import (
	"strings"
	"testing"

	"github.com/headwater-data/headwater/ingest/olevent"
)

func TestLex(t *testing.T) {
	tests := []struct {
		raw  string
		rule string
		off  int
	}{
		{`{"a":"b"}`, "", -1},
		{`{"a":"\ud83d\ude00"}`, "", -1},
		{`{"a":"\\ud800"}`, "", -1}, // an escaped backslash, then text
		{`{"a":"\ud800"}`, olevent.RuleUTF8, 6},
		{`{"a":"\ud800\u0041"}`, olevent.RuleUTF8, 6},
		{`{"a":"\udc00\ud800"}`, olevent.RuleUTF8, 6},
		{"{\"a\":\"x\xff\"}", olevent.RuleUTF8, 7},
		{"{\"a\":\"x\xc3\"}", olevent.RuleUTF8, 7},
		{`{"a":"[[[[["}`, "", -1}, // brackets in strings do not nest
		{`{"a":[[[]]]}`, olevent.RuleMaxDepth, 7},
	}
	for _, tt := range tests {
		got := lex([]byte(tt.raw), 3)
		if got.rule != tt.rule || got.off != tt.off {
			t.Errorf("lex(%q) = %+v, want %s at %d", tt.raw, got, tt.rule, tt.off)
		}
	}
	if !TooDeep([]byte("\"\xff\""+strings.Repeat("[", 5)), 4) {
		t.Error("TooDeep must skip invalid text and still find the depth")
	}
}
