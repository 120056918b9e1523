package olevent

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestCanonicalJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"b":1,"a":[true,null,"x"]}`, `{"a":[true,null,"x"],"b":1}`},
		{`{"n":1.0,"m":-0,"e":1e2,"f":0.1,"g":1E30}`, `{"e":100,"f":0.1,"g":1e+30,"m":0,"n":1}`},
		{`{"s":"a<b>&\u0041\n"}`, `{"s":"a<b>&A\n"}`},
		{`{"é":1,"z":2,"a":3}`, `{"a":3,"z":2,"é":1}`},
	}
	for _, tt := range tests {
		got, err := canonicalJSON([]byte(tt.in))
		if err != nil || string(got) != tt.want {
			t.Errorf("canonicalJSON(%s) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}

// The fast path of writeString must write exactly what encoding/json writes, or deterministic ids would change.
func TestWriteStringMatchesEncodingJSON(t *testing.T) {
	cases := []string{"", "plain", "a\"b", "back\\slash", "<html>&", "tab\there", "nul\x00", "del\x7f", "é", "\u2028",
		"\xff\xfe", "s3://bucket/path?x=1#frag"}
	for c := range 256 {
		cases = append(cases, "x"+string(rune(c))+"y", "x"+string([]byte{byte(c)})+"y")
	}
	for _, s := range cases {
		var fast, slow bytes.Buffer
		writeString(&fast, s)
		enc := json.NewEncoder(&slow)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(s)
		if want := strings.TrimSuffix(slow.String(), "\n"); fast.String() != want {
			t.Errorf("writeString(%q) = %s, encoding/json %s", s, fast.String(), want)
		}
	}
}
