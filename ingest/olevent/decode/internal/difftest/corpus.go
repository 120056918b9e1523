// Package difftest holds the differential tests of the single-pass decoder (ADR 0037): over real producer events
// (ingest/olevent/decode/testdata, the OpenLineage reference examples in shared/reference/openlineage when they
// are beside the checkout), the load generator's events and mutations of them, ingest/olevent/decode must accept
// and refuse exactly what the reference decoder (package oracle, the decoder before the single pass) does, with the
// same error field and rule, and decode accepted events into the same Event. It has no non-test code beyond the
// corpus.
package difftest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/headwater-data/headwater/loadtest/gen"
)

// Sample is one corpus event.
type Sample struct {
	Name string
	Raw  []byte
}

// here is this file's directory (the corpus paths are relative to it).
func here() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// DecoderFixtures are the decoder's own fixtures (producer events, edge cases and the fuzz seeds).
func DecoderFixtures() ([]Sample, error) {
	root := filepath.Join(here(), "..", "..", "testdata")
	return jsonFiles(root)
}

// ReferenceDir finds shared/reference/openlineage beside the checkout (it is not part of the repository); "" when
// it is not there.
func ReferenceDir() string {
	for dir := here(); ; dir = filepath.Dir(dir) {
		ref := filepath.Join(dir, "shared", "reference", "openlineage", "examples")
		if st, err := os.Stat(ref); err == nil && st.IsDir() {
			return ref
		}
		if filepath.Dir(dir) == dir {
			return ""
		}
	}
}

// ReferenceExamples are the OpenLineage producers' example events (arrays split into events), each also with its
// template placeholders replaced by real values (a UUID for runId, a time for eventTime) so that most are accepted.
func ReferenceExamples(dir string) ([]Sample, error) {
	if dir == "" {
		return nil, nil
	}
	files, err := jsonFiles(dir)
	if err != nil {
		return nil, err
	}
	var out []Sample
	for _, f := range files {
		if strings.HasPrefix(f.Name, "facet-instances"+string(filepath.Separator)) {
			out = append(out, facetEvents(f)...)
			continue
		}
		for i, raw := range splitArray(f.Raw) {
			name := f.Name
			if i > 0 || raw[0] != f.Raw[0] {
				name = fmt.Sprintf("%s[%d]", f.Name, i)
			}
			out = append(out, Sample{Name: name, Raw: raw})
			if sub := substitute(raw); !bytes.Equal(sub, raw) {
				out = append(out, Sample{Name: name + "+values", Raw: sub})
			}
		}
	}
	return out, nil
}

func splitArray(raw []byte) [][]byte {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] != '[' {
		return [][]byte{raw}
	}
	var items []json.RawMessage
	if json.Unmarshal(t, &items) != nil {
		return [][]byte{raw}
	}
	out := make([][]byte, 0, len(items))
	for _, it := range items {
		out = append(out, it)
	}
	return out
}

var (
	placeholderRunID = regexp.MustCompile(`"runId"\s*:\s*"[^"]*(\$\{|\{\{)[^"]*"`)
	placeholderTime  = regexp.MustCompile(`"(eventTime|nominalStartTime|nominalEndTime)"\s*:\s*"[^"]*(\$\{|\{\{)[^"]*"`)
	placeholderAny   = regexp.MustCompile(`"[^"]*(\$\{json-unit[^"]*|\{\{[^"]*\}\})[^"]*"`)
)

// ExampleTime is the eventTime substituted into the reference templates; tests run the decoders' clock at it.
var ExampleTime = time.Date(2026, 3, 1, 11, 0, 0, 0, time.UTC)

// substitute fills a template: placeholders replaced, and the envelope fields a template leaves out (producer,
// schemaURL, eventTime) added.
func substitute(raw []byte) []byte {
	out := placeholderRunID.ReplaceAll(raw, []byte(`"runId":"0195906a-1f2e-7c3d-8e4f-5a6b7c8d9e0f"`))
	out = placeholderTime.ReplaceAll(out, []byte(`"$1":"`+ExampleTime.Format(time.RFC3339)+`"`))
	out = placeholderAny.ReplaceAll(out, []byte(`"x"`))
	var env map[string]json.RawMessage
	if json.Unmarshal(out, &env) != nil {
		return out
	}
	var add strings.Builder
	for _, kv := range [][2]string{{"producer", "https://github.com/OpenLineage/OpenLineage/tree/1.31.0/integration/spark"},
		{"schemaURL", "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"}, {"eventTime", ExampleTime.Format(time.RFC3339)}} {
		if _, ok := env[kv[0]]; !ok {
			fmt.Fprintf(&add, "%q:%q,", kv[0], kv[1])
		}
	}
	if add.Len() == 0 {
		return out
	}
	t := bytes.TrimSpace(out)
	return append([]byte("{"+add.String()), t[1:]...)
}

// facetEvents wraps a facet instance ({"key": facet}) into the events that carry it where its kind says: a run,
// job, dataset, input or output facet (a lineage facet both on the job and on an output).
func facetEvents(f Sample) []Sample {
	kind := filepath.Base(filepath.Dir(f.Name))
	facets := string(bytes.TrimSpace(f.Raw))
	run, job, ds, in, out := "{}", "{}", "{}", "{}", "{}"
	var variants []string
	switch {
	case strings.HasSuffix(kind, "RunFacet"):
		run = facets
	case strings.HasSuffix(kind, "JobFacet"):
		job = facets
	case strings.HasSuffix(kind, "InputDatasetFacet"):
		in = facets
	case strings.HasSuffix(kind, "OutputDatasetFacet"):
		out = facets
	case strings.HasSuffix(kind, "DatasetFacet"):
		ds = facets
	default: // LineageFacet: job level and dataset level
		variants = append(variants, eventWith("{}", facets, "{}", "{}", "{}"))
		ds = facets
	}
	variants = append(variants, eventWith(run, job, ds, in, out))
	samples := make([]Sample, 0, len(variants))
	for i, v := range variants {
		samples = append(samples, Sample{Name: fmt.Sprintf("%s#%d", f.Name, i), Raw: []byte(v)})
	}
	return samples
}

func eventWith(run, job, ds, in, out string) string {
	return `{"eventType":"COMPLETE","eventTime":"` + ExampleTime.Format(time.RFC3339) + `",` +
		`"producer":"https://github.com/OpenLineage/OpenLineage/tree/1.31.0/integration/spark",` +
		`"schemaURL":"https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",` +
		`"run":{"runId":"0195906a-1f2e-7c3d-8e4f-5a6b7c8d9e0f","facets":` + run + `},` +
		`"job":{"namespace":"spark","name":"app.job","facets":` + job + `},` +
		`"inputs":[{"namespace":"s3://in","name":"a","facets":` + ds + `,"inputFacets":` + in + `}],` +
		`"outputs":[{"namespace":"s3://out","name":"b","facets":` + ds + `,"outputFacets":` + out + `}]}`
}

// GeneratorEvents are n events of the load generator (hwload), in delivery order, from seed 1.
func GeneratorEvents(n int) ([]Sample, time.Time, error) {
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	w, err := gen.NewWorld(gen.DefaultConfig(1, start))
	if err != nil {
		return nil, time.Time{}, err
	}
	s := w.NewStream()
	out := make([]Sample, 0, n)
	for i := range n {
		ev := s.Next()
		out = append(out, Sample{Name: fmt.Sprintf("hwload[%d]", i), Raw: ev.Body})
	}
	return out, start, nil
}

func jsonFiles(root string) ([]Sample, error) {
	var out []Sample
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if len(bytes.TrimSpace(b)) == 0 {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		out = append(out, Sample{Name: rel, Raw: fuzzSeed(b)})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, err
}

// fuzzSeed unwraps a go-fuzz corpus file ("go test fuzz v1" then []byte("...")); other files are as they are.
func fuzzSeed(b []byte) []byte {
	const header = "go test fuzz v1\n"
	if !bytes.HasPrefix(b, []byte(header)) {
		return b
	}
	lit := bytes.TrimSpace(b[len(header):])
	lit = bytes.TrimSuffix(bytes.TrimPrefix(lit, []byte("[]byte(")), []byte(")"))
	var s string
	if _, err := fmt.Sscanf(string(lit), "%q", &s); err != nil {
		return b
	}
	return []byte(s)
}
