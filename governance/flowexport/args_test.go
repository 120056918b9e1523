package flowexport

import (
	"net/url"
	"strings"
	"testing"
)

func TestArgs(t *testing.T) {
	a, err := Args(url.Values{"tag": {"pii"}, "namespace": {"pg://x"}, "name": {"t"}, "field": {"email"}, "depth": {"3"},
		"asOf": {"2026-12-01T00:00:00Z"}})
	if err != nil || a.Tag != "pii" || a.From == nil || a.From.Field == nil || a.From.Field.Field != "email" || *a.Depth != 3 || a.AsOf == nil {
		t.Fatalf("Args: %+v %v", a, err)
	}
	if a, err := Args(url.Values{"tag": {"pii"}, "namespace": {"pg://x"}, "name": {"t"}}); err != nil || a.From.Dataset == nil {
		t.Errorf("dataset from: %+v %v", a, err)
	}
	if a, err := Args(url.Values{"tag": {"pii"}}); err != nil || a.From != nil {
		t.Errorf("graph-wide: %+v %v", a, err)
	}
	for param, q := range map[string]url.Values{
		"tag:": {}, "colour:": {"tag": {"pii"}, "colour": {"x"}}, "depth:": {"tag": {"pii"}, "depth": {"deep"}},
		"asOf:": {"tag": {"pii"}, "asOf": {"now"}}, "namespace, name:": {"tag": {"pii"}, "field": {"email"}},
		"tag: give it once": {"tag": {"pii", "x"}}, "name: longer": {"tag": {"pii"}, "name": {strings.Repeat("n", maxParamBytes+1)}},
	} {
		if _, err := Args(q); err == nil || !strings.Contains(err.Error(), param) {
			t.Errorf("%v: want an error naming %q, got %v", q, param, err)
		}
	}
}
