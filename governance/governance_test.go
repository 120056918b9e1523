package governance

import (
	"fmt"
	"strings"
	"testing"

	"github.com/headwater-data/headwater/api"
)

func tr(spec string) []api.Transformation {
	var out []api.Transformation
	for s := range strings.FieldsSeq(spec) {
		parts := strings.Split(s, "/")
		t := api.Transformation{Type: api.TransformationType(parts[0])}
		if len(parts) > 1 && parts[1] != "" {
			sub := parts[1]
			t.Subtype = &sub
		}
		t.Masking = len(parts) > 2 && parts[2] == "mask"
		out = append(out, t)
	}
	return out
}

func TestJudge(t *testing.T) {
	stop := Rules{Aggregation: AggregationStops}
	for _, c := range []struct {
		ts     string
		rules  Rules
		rule   api.PiiRule
		effect api.PiiEffect
		stop   api.PiiStopReason
	}{
		{"DIRECT/IDENTITY", DefaultRules, api.PiiRuleIdentity, api.PiiCarried, ""},
		{"DIRECT/TRANSFORMATION", DefaultRules, api.PiiRuleTransformation, api.PiiCarried, ""},
		{"DIRECT/TRANSFORMATION/mask", DefaultRules, api.PiiRuleMasked, "", api.PiiStopMasked},
		{"DIRECT/AGGREGATION", DefaultRules, api.PiiRuleAggregation, api.PiiAggregated, ""},
		{"DIRECT/AGGREGATION", stop, api.PiiRuleAggregation, "", api.PiiStopAggregation},
		{"DIRECT/AGGREGATION/mask", DefaultRules, api.PiiRuleMasked, "", api.PiiStopMasked},
		{"INDIRECT/JOIN", DefaultRules, api.PiiRuleIndirect, api.PiiInfluenced, ""},
		{"INDIRECT/FILTER INDIRECT/CONDITIONAL", DefaultRules, api.PiiRuleIndirect, api.PiiInfluenced, ""},
		// case when: the value in a branch is a DIRECT transformation, the condition INDIRECT: it carries
		{"DIRECT/TRANSFORMATION INDIRECT/CONDITIONAL", DefaultRules, api.PiiRuleTransformation, api.PiiCarried, ""},
		{"DIRECT/TRANSFORMATION/mask INDIRECT/FILTER", DefaultRules, api.PiiRuleMasked, "", api.PiiStopMasked},
		{"DIRECT/IDENTITY DIRECT/TRANSFORMATION/mask", DefaultRules, api.PiiRuleIdentity, api.PiiCarried, ""},
		{"DIRECT/", DefaultRules, api.PiiRuleTransformation, api.PiiCarried, ""},
		{"", DefaultRules, api.PiiRuleUnknown, api.PiiCarried, ""},
	} {
		t.Run(fmt.Sprintf("%s/%s", c.ts, c.rules.Aggregation), func(t *testing.T) {
			got := Judge(tr(c.ts), c.rules)
			if got.Rule != c.rule || got.Effect != c.effect || got.Stop != c.stop {
				t.Fatalf("Judge(%s) = %+v, want %s %s %s", c.ts, got, c.rule, c.effect, c.stop)
			}
		})
	}
}

func TestParseTagAndClasses(t *testing.T) {
	for raw, want := range map[string]Tag{
		"pii":                {Class: "pii", Raw: "pii"},
		"email:PII.Email":    {Field: "email", Class: "pii.email", Raw: "email:PII.Email"},
		"a.b:c:pii=true":     {Field: "a.b:c", Class: "pii", Value: "true", Raw: "a.b:c:pii=true"},
		"owner=team:finance": {Class: "owner", Value: "team:finance", Raw: "owner=team:finance"},
	} {
		if got := ParseTag(raw); got != want {
			t.Errorf("ParseTag(%q) = %+v, want %+v", raw, got, want)
		}
	}
	if !Within("pii.email", "pii") || Within("piix", "pii") || !Within("pii", "pii") || Within("pii", "pii.email") {
		t.Error("Within")
	}
}

func TestConfig(t *testing.T) {
	c, err := Parse([]byte("version: 1\nclasses:\n  - name: pii\n  - name: pii.email\n    aggregation: STOP\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.RulesOf("pii.email.work").Aggregation != AggregationStops || c.RulesOf("pii").Aggregation != AggregationCarries ||
		c.RulesOf("other") != DefaultRules {
		t.Errorf("RulesOf: %+v", c)
	}
	for _, bad := range []string{"version: 2\n", "version: 1\nclasses: [{name: \"a:b\"}]\n",
		"version: 1\nclasses: [{name: pii, aggregation: MAYBE}]\n", "version: 1\nclasses: [{name: pii}, {name: PII}]\n",
		"version: 1\nunknown: 1\n"} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

// edges builds column edges "a>b:SPEC" (SPEC as in tr, '+' between transformations).
func edges(specs ...string) []*api.LineageEdge {
	var out []*api.LineageEdge
	for _, s := range specs {
		ft, spec, _ := strings.Cut(s, ":")
		from, to, _ := strings.Cut(ft, ">")
		out = append(out, &api.LineageEdge{ID: ft, From: from, To: to, Transformations: tr(strings.ReplaceAll(spec, "+", " "))})
	}
	return out
}

func render(f Flow) string {
	var b strings.Builder
	for _, r := range f.Reached {
		var p []string
		for _, h := range r.Path {
			p = append(p, h.Edge.To+"("+string(h.Step.Rule)+")")
		}
		fmt.Fprintf(&b, "%s %s from %s via %s\n", r.ID, r.Effect, r.Origin, strings.Join(p, ","))
	}
	for _, s := range f.Stops {
		e := ""
		if s.Edge != nil {
			e = " at " + s.Edge.ID
		}
		fmt.Fprintf(&b, "stop %s %s%s\n", s.ID, s.Reason, e)
	}
	return b.String()
}

func TestPropagate(t *testing.T) {
	shape := edges("e>id:DIRECT/IDENTITY", "id>t:DIRECT/TRANSFORMATION", "e>h:DIRECT/TRANSFORMATION/mask",
		"h>h2:DIRECT/IDENTITY", "id>agg:DIRECT/AGGREGATION", "agg>agg2:DIRECT/IDENTITY", "id>j:INDIRECT/JOIN",
		"j>j2:DIRECT/IDENTITY", "t>cw:DIRECT/TRANSFORMATION+INDIRECT/CONDITIONAL")
	for _, c := range []struct {
		name string
		in   Input
		want string
	}{
		{"defaults", Input{Origins: []Origin{{"e", DefaultRules}}, Edges: shape, Depth: 10}, `id CARRIED from e via id(IDENTITY)
t CARRIED from e via id(IDENTITY),t(TRANSFORMATION)
cw CARRIED from e via id(IDENTITY),t(TRANSFORMATION),cw(TRANSFORMATION)
agg AGGREGATED from e via id(IDENTITY),agg(AGGREGATION)
agg2 AGGREGATED from e via id(IDENTITY),agg(AGGREGATION),agg2(IDENTITY)
j INFLUENCED from e via id(IDENTITY),j(INDIRECT)
stop e MASKED at e>h
`},
		{"aggregation stops", Input{Origins: []Origin{{"e", Rules{Aggregation: AggregationStops}}}, Edges: shape, Depth: 10}, `id CARRIED from e via id(IDENTITY)
t CARRIED from e via id(IDENTITY),t(TRANSFORMATION)
cw CARRIED from e via id(IDENTITY),t(TRANSFORMATION),cw(TRANSFORMATION)
j INFLUENCED from e via id(IDENTITY),j(INDIRECT)
stop e MASKED at e>h
stop id AGGREGATION at id>agg
`},
		{"depth", Input{Origins: []Origin{{"e", DefaultRules}}, Edges: shape, Depth: 1}, `id CARRIED from e via id(IDENTITY)
stop e MASKED at e>h
stop id DEPTH
`},
		{"blocked, waiting, no column lineage", Input{Origins: []Origin{{"e", DefaultRules}}, Edges: shape, Depth: 10,
			Blocked: map[string]bool{"t": true}, Waiting: map[string]bool{"agg": true}, NoColumn: map[string]bool{"agg2": true}}, `id CARRIED from e via id(IDENTITY)
agg AGGREGATED from e via id(IDENTITY),agg(AGGREGATION)
agg2 AGGREGATED from e via id(IDENTITY),agg(AGGREGATION),agg2(IDENTITY)
j INFLUENCED from e via id(IDENTITY),j(INDIRECT)
stop agg BUDGET
stop agg2 NO_COLUMN_LINEAGE
stop e MASKED at e>h
stop id PERMISSIONS
`},
		// explicit blocks (ADR 0067) are judged before the rules: a blocked field is not entered, a blocked edge
		// not crossed (the aggregation behind it is never judged), each a BLOCKED stop at the edge
		{"explicit blocks", Input{Origins: []Origin{{"e", DefaultRules}}, Edges: shape, Depth: 10,
			Explicit: Blocks{Fields: map[string]Block{"t": {By: "gov", Reason: "masked downstream"}},
				Edges: map[EdgeRef]Block{{From: "id", To: "agg"}: {By: "gov", Reason: "recomputed"}}}}, `id CARRIED from e via id(IDENTITY)
j INFLUENCED from e via id(IDENTITY),j(INDIRECT)
stop e MASKED at e>h
stop id BLOCKED at id>agg
stop id BLOCKED at id>t
`},
		// a blocked origin lets nothing through, whatever its edges' rules (the masked edge is BLOCKED too)
		{"a blocked origin", Input{Origins: []Origin{{"e", DefaultRules}}, Edges: shape, Depth: 10,
			Explicit: Blocks{Fields: map[string]Block{"e": {By: "gov", Reason: "r"}}}}, `stop e BLOCKED at e>h
stop e BLOCKED at e>id
`},
		// a carried path beats a shorter aggregated one; of two origins the nearer one is named
		{"strongest effect first", Input{Origins: []Origin{{"a", DefaultRules}, {"b", DefaultRules}},
			Edges: edges("a>x:DIRECT/AGGREGATION", "b>m:DIRECT/IDENTITY", "m>x:DIRECT/IDENTITY", "b>y:DIRECT/IDENTITY", "a>y:DIRECT/IDENTITY"), Depth: 5},
			`m CARRIED from b via m(IDENTITY)
y CARRIED from a via y(IDENTITY)
x CARRIED from b via m(IDENTITY),x(IDENTITY)
`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := render(Propagate(c.in)); got != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}
