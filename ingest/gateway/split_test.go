package gateway

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	fastjson "github.com/goccy/go-json"

	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/ingest/olevent/decode"
)

// splitBatchBefore is splitBatch as it was before the single pass (ADR 0037): encoding/json.Valid over the body,
// then goccy/go-json into []json.RawMessage. It is the reference of the tests and the baseline of the benchmark.
func splitBatchBefore(body []byte) ([]json.RawMessage, *ErrorBody) {
	if !json.Valid(body) {
		if decode.TooDeep(body, olevent.MaxSyntaxDepth) {
			return nil, &ErrorBody{Field: "body", Rule: olevent.RuleMaxDepth,
				Message: "the batch nests deeper than any event may"}
		}
		return nil, &ErrorBody{Field: "body", Rule: olevent.RuleJSON, Message: "the batch body is not valid JSON: " + syntaxError(body)}
	}
	var items []json.RawMessage
	if err := fastjson.Unmarshal(body, &items); err != nil {
		return nil, &ErrorBody{Field: "body", Rule: ruleJSONArray, Message: "batch body must be a JSON array of OpenLineage events"}
	}
	return items, nil
}

func batchBodies(t testing.TB) [][]byte {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join("..", "olevent", "decode", "testdata", "*.json"))
	var events [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, bytes.TrimSpace(b))
	}
	if len(events) < 5 {
		t.Fatalf("fixtures: %v", files)
	}
	whole := append(append([]byte("[\n"), bytes.Join(events, []byte(" ,\n "))...), ']')
	return [][]byte{whole, []byte(`[]`), []byte(`null`), []byte(` [ {"a":1} , [2] , "x\ud800" , 1.5e3 ] `),
		[]byte(`{}`), []byte(`"x"`), []byte(`[1,]`), []byte(`[01]`), []byte("[\"\xff\"]"), []byte(`[{"a":1,"a":2}]`),
		[]byte(strings.Repeat("[", 10001) + strings.Repeat("]", 10001)), []byte(`[{"a":"b"}] x`), whole[:len(whole)/2]}
}

// TestSplitBatchMatchesBefore: the one-pass split refuses and splits every body as json.Valid plus goccy did.
func TestSplitBatchMatchesBefore(t *testing.T) {
	for _, body := range batchBodies(t) {
		got, gotErr := splitBatch(body)
		want, wantErr := splitBatchBefore(body)
		if !reflect.DeepEqual(gotErr, wantErr) {
			t.Errorf("body %.60q: error %+v, before %+v", body, gotErr, wantErr)
			continue
		}
		if len(got) != len(want) {
			t.Errorf("body %.60q: %d items, before %d", body, len(got), len(want))
			continue
		}
		for i := range got {
			if !bytes.Equal(got[i], want[i]) {
				t.Errorf("body %.60q item %d: %q, before %q", body, i, got[i], want[i])
			}
		}
	}
}

// BenchmarkSplitBatch: a batch of the decoder's fixtures, split before and after.
func BenchmarkSplitBatch(b *testing.B) {
	body := batchBodies(b)[0]
	for _, c := range []struct {
		name  string
		split func([]byte) int
	}{
		{"before", func(x []byte) int { items, _ := splitBatchBefore(x); return len(items) }},
		{"single", func(x []byte) int { items, _ := splitBatch(x); return len(items) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if c.split(body) == 0 {
					b.Fatal("no items")
				}
			}
		})
	}
}
