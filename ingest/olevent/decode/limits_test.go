package decode

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/ingest/olevent"
)

func TestLimitsValidate(t *testing.T) {
	if err := olevent.DefaultLimits().Validate(); err != nil {
		t.Fatalf("defaults invalid: %v", err)
	}
	tests := []struct {
		name  string
		mut   func(*olevent.Limits)
		limit string
	}{
		{"facets", func(l *olevent.Limits) { l.MaxFacetsPerEntity = 0 }, "MaxFacetsPerEntity"},
		{"depth", func(l *olevent.Limits) { l.MaxJSONDepth = 3 }, "MaxJSONDepth"},
		{"strings", func(l *olevent.Limits) { l.MaxStringBytes = -1 }, "MaxStringBytes"},
		{"datasets", func(l *olevent.Limits) { l.MaxDatasets = 0 }, "MaxDatasets"},
		{"future", func(l *olevent.Limits) { l.MaxFuture = 0 }, "MaxFuture"},
		{"horizon", func(l *olevent.Limits) { l.Horizon = -time.Hour }, "Horizon"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := olevent.DefaultLimits()
			tt.mut(&l)
			var le *olevent.InvalidLimitsError
			if err := l.Validate(); !errors.As(err, &le) || le.Limit != tt.limit {
				t.Fatalf("Validate = %v, want limit %s", err, tt.limit)
			}
			if _, err := NewDecoder(l, time.Now); err == nil {
				t.Fatal("NewDecoder accepted invalid limits")
			}
		})
	}
	if _, err := NewDecoder(olevent.DefaultLimits(), nil); !errors.Is(err, ErrNoClock) {
		t.Fatalf("NewDecoder without clock = %v", err)
	}
}

func TestDecodeLimits(t *testing.T) {
	lim := olevent.Limits{MaxFacetsPerEntity: 2, MaxJSONDepth: 8, MaxStringBytes: 80, MaxDatasets: 3,
		MaxFuture: time.Minute, Horizon: 24 * time.Hour}
	d := newTestDecoder(t, lim)
	tests := []struct {
		name   string
		mutate func(m map[string]any)
		field  string
		rule   string
	}{
		{"too many datasets", func(m map[string]any) {
			m["outputs"] = []any{dsDoc(1), dsDoc(2), dsDoc(3)}
		}, "outputs", olevent.RuleMaxDatasets},
		{"too many run facets", func(m map[string]any) {
			sub(m, "run")["facets"] = map[string]any{"a": map[string]any{}, "b": map[string]any{}, "c": map[string]any{}}
		}, "run.facets", olevent.RuleMaxFacets},
		{"too many facets on one dataset, counting input facets", func(m map[string]any) {
			in := item(m, "inputs", 0)
			in["facets"] = map[string]any{"a": map[string]any{}, "b": map[string]any{}}
			in["inputFacets"] = map[string]any{"c": map[string]any{}}
		}, "inputs[0]", olevent.RuleMaxFacets},
		{"string too long", func(m map[string]any) { item(m, "outputs", 0)["name"] = strings.Repeat("x", 81) }, "outputs[0].name", olevent.RuleMaxLength},
		{"key too long", func(m map[string]any) {
			sub(m, "job")["facets"] = map[string]any{strings.Repeat("k", 81): map[string]any{}}
		}, "job.facets", olevent.RuleMaxLength},
		{"too deep", func(m map[string]any) {
			sub(m, "run")["facets"] = map[string]any{"deep": map[string]any{"a": []any{[]any{[]any{[]any{[]any{}}}}}}}
		}, "run.facets.deep.a[0][0][0][0]", olevent.RuleMaxDepth},
		{"one minute ahead is fine, two are not", func(m map[string]any) { m["eventTime"] = "2026-03-01T12:02:00Z" }, "eventTime", olevent.RuleTooFarInFuture},
		{"horizon", func(m map[string]any) { m["eventTime"] = "2026-02-28T11:59:59Z" }, "eventTime", olevent.RuleBeforeHorizon},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := minimalRun()
			tt.mutate(m)
			_, err := d.Decode(mustJSON(t, m))
			ve := asValidation(t, err)
			if ve.Field != tt.field || ve.Rule != tt.rule {
				t.Fatalf("got %q/%q (%s), want %q/%q", ve.Field, ve.Rule, ve.Message, tt.field, tt.rule)
			}
		})
	}
	// At the limits exactly, the event passes.
	m := minimalRun()
	m["outputs"] = []any{dsDoc(1), dsDoc(2)}
	m["eventTime"] = "2026-03-01T12:01:00Z"
	sub(m, "run")["facets"] = map[string]any{"a": map[string]any{}, "b": map[string]any{}}
	item(m, "inputs", 0)["name"] = strings.Repeat("x", 80)
	decodeOK(t, d, mustJSON(t, m))
}

func dsDoc(i int) map[string]any {
	return map[string]any{"namespace": "s3://b", "name": fmt.Sprintf("k%d", i)}
}
