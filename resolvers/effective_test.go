package resolvers

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/lineage/lineagetest"
)

const effectiveQ = `query($ns: String!, $name: String!, $asOf: Time, $infl: Boolean) {
  dataset(namespace: $ns, name: $name) {
    effectiveTags(asOf: $asOf, includeInfluenced: $infl) { partial permissionsFiltered
      tags { field { path } tag { name } class source effect sensitive origin { path dataset { name } } originTag { name }
             distance path { rule explanation edge { id from to job { name } } } explanation } gaps { kind message } }
    sensitivity(asOf: $asOf) { sensitive viewSensitive datasetTags { tag { name } }
      fields { field { path } tags { class source effect origin { path dataset { name } } explanation } } partial } } }`

type effTag struct {
	Field     *struct{ Path string }
	Tag       struct{ Name string }
	Class     string
	Source    string
	Effect    string
	Sensitive bool
	Origin    *struct {
		Path    string
		Dataset struct{ Name string }
	}
	Distance int
	Path     []struct {
		Rule        string
		Explanation string
	}
	Explanation string
}

type effAnswer struct {
	Data struct {
		Dataset struct {
			EffectiveTags struct {
				Partial             bool
				PermissionsFiltered bool
				Tags                []effTag
			}
			Sensitivity struct {
				Sensitive     bool
				ViewSensitive bool
				Fields        []struct {
					Field struct{ Path string }
					Tags  []effTag
				}
			}
		}
	}
	Errors []gqlError
}

func (w *world) effective(principal, name string, asOf *time.Time, influence bool) (effAnswer, []byte) {
	w.t.Helper()
	vars := map[string]any{"ns": w.fx.NS, "name": name, "infl": influence}
	if asOf != nil {
		vars["asOf"] = asOf.UTC().Format(time.RFC3339Nano)
	}
	body := w.post(principal, effectiveQ, vars)
	var a effAnswer
	if err := json.Unmarshal(body, &a); err != nil || len(a.Errors) > 0 {
		w.t.Fatalf("effectiveTags of %s as %s: %v %s", name, principal, err, body)
	}
	return a, body
}

// render lists the entries "field SOURCE class EFFECT <- origin (rules)", sorted.
func renderEff(ts []effTag) string {
	var out []string
	for _, t := range ts {
		f, o := "*", ""
		if t.Field != nil {
			f = t.Field.Path
		}
		if t.Source == "DERIVED" {
			var rules []string
			for _, s := range t.Path {
				rules = append(rules, s.Rule)
			}
			o = fmt.Sprintf(" <- %s.%s (%s)", t.Origin.Dataset.Name, t.Origin.Path, strings.Join(rules, ","))
		}
		out = append(out, fmt.Sprintf("%s %s %s %s%s", f, t.Source, t.Tag.Name, t.Effect, o))
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// governanceShape writes, in the leak world's visible pub prefix:
//
//	pub.gsrc.email (own tag email:pii.email=true) -(pub.gj1)-> pub.ga: e_id IDENTITY, e_t TRANSFORMATION,
//	  e_hash TRANSFORMATION masking, n AGGREGATION, k INDIRECT/JOIN
//	pub.ga -(pub.gj2)-> pub.gb: x <- e_id IDENTITY (closes at closeAt) and x <- e_t IDENTITY (two paths),
//	  y <- e_id IDENTITY (closes at closeAt), h <- e_hash IDENTITY
func governanceShape(w *world) (closeAt time.Time) {
	fx := w.fx
	src, a, b := fx.Dataset("pub.gsrc"), fx.Dataset("pub.ga"), fx.Dataset("pub.gb")
	j1, j2 := fx.Job("pub.gj1"), fx.Job("pub.gj2")
	fx.Flow(j1, []string{src}, []string{a})
	fx.Flow(j2, []string{a}, []string{b})
	f := func(ds, p string) string { return fx.Field(ds, p, fx.T0, time.Time{}) }
	email, eid, et, eh, n, k := f(src, "email"), f(a, "e_id"), f(a, "e_t"), f(a, "e_hash"), f(a, "n"), f(a, "k")
	x, y, h := f(b, "x"), f(b, "y"), f(b, "h")
	tr := func(typ, sub string, mask bool) lineagetest.Transform {
		return lineagetest.Transform{Type: typ, Subtype: sub, Masking: mask}
	}
	fx.ColumnFeeds(email, eid, j1, tr("DIRECT", "IDENTITY", false))
	fx.ColumnFeeds(email, et, j1, tr("DIRECT", "TRANSFORMATION", false))
	fx.ColumnFeeds(email, eh, j1, tr("DIRECT", "TRANSFORMATION", true))
	fx.ColumnFeeds(email, n, j1, tr("DIRECT", "AGGREGATION", false))
	fx.ColumnFeeds(email, k, j1, tr("INDIRECT", "JOIN", false))
	closeAt = fx.Now.Add(-24 * time.Hour)
	closing := lineagetest.Leg{Intervals: []lineagetest.Span{{From: fx.T0, To: closeAt}}, LastObserved: closeAt.Add(-time.Hour)}
	fx.ColumnFeedsLeg(eid, x, j2, closing, tr("DIRECT", "IDENTITY", false))
	fx.ColumnFeeds(et, x, j2, tr("DIRECT", "IDENTITY", false))
	fx.ColumnFeedsLeg(eid, y, j2, closing, tr("DIRECT", "IDENTITY", false))
	fx.ColumnFeeds(eh, h, j2, tr("DIRECT", "IDENTITY", false))
	fx.Exec(`MATCH (d:Dataset {key: $k}) SET d.tags = ['email:pii.email=true']`, map[string]any{"k": src})
	return closeAt
}

// TestEffectiveTagsExplained: a field's effective tags are its own (FACET) and those derived along column lineage
// upstream by the piiFlow rules, each with origin, path and rule: identity and transformation carry, masking stops
// (e_hash and h derive nothing), aggregation carries as AGGREGATED, a join key is INFLUENCED only when asked; x has
// two paths and keeps the tag after one closes, y loses it; asOf before the close answers with the graph of then.
// sensitivity lists the fields carrying or deriving the sensitive class (pii.email is below the policy's pii).
func TestEffectiveTagsExplained(t *testing.T) {
	w := newWorld(t, worldOpt{mode: authz.HiddenOmit})
	closeAt := governanceShape(w)
	src, _ := w.effective(w.admin, "pub.gsrc", nil, false)
	if got := renderEff(src.Data.Dataset.EffectiveTags.Tags); got != "email FACET email:pii.email=true CARRIED" {
		t.Errorf("gsrc effective tags:\n%s", got)
	}
	a, body := w.effective(w.admin, "pub.ga", nil, false)
	want := `e_id DERIVED pii.email CARRIED <- pub.gsrc.email (IDENTITY)
e_t DERIVED pii.email CARRIED <- pub.gsrc.email (TRANSFORMATION)
n DERIVED pii.email AGGREGATED <- pub.gsrc.email (AGGREGATION)`
	if got := renderEff(a.Data.Dataset.EffectiveTags.Tags); got != want {
		t.Errorf("ga effective tags:\n%s\nwant\n%s\n%s", got, want, body)
	}
	for _, tg := range a.Data.Dataset.EffectiveTags.Tags {
		if !tg.Sensitive || !strings.Contains(tg.Explanation, "derived from pub.gsrc.email (tag email:pii.email=true)") ||
			len(tg.Path) != 1 || tg.Path[0].Explanation == "" || tg.Distance != 1 {
			t.Errorf("ga entry not explained: %+v", tg)
		}
	}
	ai, _ := w.effective(w.admin, "pub.ga", nil, true)
	wantInfl := "e_id DERIVED pii.email CARRIED <- pub.gsrc.email (IDENTITY)\ne_t DERIVED pii.email CARRIED <- pub.gsrc.email (TRANSFORMATION)\n" +
		"k DERIVED pii.email INFLUENCED <- pub.gsrc.email (INDIRECT)\nn DERIVED pii.email AGGREGATED <- pub.gsrc.email (AGGREGATION)"
	if got := renderEff(ai.Data.Dataset.EffectiveTags.Tags); got != wantInfl {
		t.Errorf("ga with influence:\n%s", got)
	}
	now, _ := w.effective(w.admin, "pub.gb", nil, false)
	if got := renderEff(now.Data.Dataset.EffectiveTags.Tags); got != "x DERIVED pii.email CARRIED <- pub.gsrc.email (TRANSFORMATION,IDENTITY)" {
		t.Errorf("gb now (e_id -> x and e_id -> y closed; x holds through e_t):\n%s", got)
	}
	before := closeAt.Add(-time.Hour)
	then, _ := w.effective(w.admin, "pub.gb", &before, false)
	got := renderEff(then.Data.Dataset.EffectiveTags.Tags)
	if !strings.Contains(got, "y DERIVED pii.email CARRIED <- pub.gsrc.email (IDENTITY,IDENTITY)") ||
		!strings.Contains(got, "x DERIVED pii.email CARRIED") || strings.Contains(got, "h ") {
		t.Errorf("gb before the close: want x and y carried, h not:\n%s", got)
	}
	sens := now.Data.Dataset.Sensitivity
	if !sens.Sensitive || !sens.ViewSensitive || len(sens.Fields) != 1 || sens.Fields[0].Field.Path != "x" {
		t.Errorf("gb sensitivity now: %+v", sens)
	}
	if s := then.Data.Dataset.Sensitivity; len(s.Fields) != 2 {
		t.Errorf("gb sensitivity before the close: want x and y, got %+v", s)
	}
	// without VIEW_SENSITIVE: no sensitive tag, own or derived, and the sensitivity says why it is empty
	plain, body := w.effective(w.narrow, "pub.gb", &before, false)
	if len(plain.Data.Dataset.EffectiveTags.Tags) != 0 || plain.Data.Dataset.Sensitivity.Sensitive ||
		plain.Data.Dataset.Sensitivity.ViewSensitive || strings.Contains(string(body), "pii") {
		t.Errorf("narrow (no VIEW_SENSITIVE) should see no sensitive tag: %s", body)
	}
	if p, _ := w.effective(w.narrow, "pub.gsrc", nil, false); len(p.Data.Dataset.EffectiveTags.Tags) != 0 {
		t.Errorf("narrow should not see gsrc's own pii tag: %+v", p.Data.Dataset.EffectiveTags)
	}
	fq := `query($ns: String!) { dataset(namespace: $ns, name: "pub.gb") { fields { path effectiveTags { tags { class source origin { path } } } } } }`
	if body := string(w.post(w.admin, fq, map[string]any{"ns": w.fx.NS})); !strings.Contains(body, `{"path":"x","effectiveTags":{"tags":[{"class":"pii.email","source":"DERIVED","origin":{"path":"email"}}]}}`) ||
		!strings.Contains(body, `{"path":"y","effectiveTags":{"tags":[]}}`) {
		t.Errorf("Field.effectiveTags: %s", body)
	}
	n := 0
	for _, r := range w.audit.all() {
		if len(r.Nodes) > 0 {
			n++
		}
	}
	if n == 0 {
		t.Errorf("sensitive effective tags shown to admin should be audited: %+v", w.audit.all())
	}
}

// TestEffectiveTagsNeverNameAHiddenOrigin: pub.behind.c derives pii from pub.mid.c only through the hidden H1, and
// pub.out.c through a hidden job. The admin sees both; narrow2 (VIEW_SENSITIVE on pub) sees out.c's tag (the job
// withheld) and nothing at all on behind.c: the origin behind a hidden node is neither named nor counted nor
// hinted at, and the answers name no hidden node; narrow (no VIEW_SENSITIVE) sees neither.
func TestEffectiveTagsNeverNameAHiddenOrigin(t *testing.T) {
	w := newWorld(t, worldOpt{mode: authz.HiddenOmit})
	adm, _ := w.effective(w.admin, "pub.behind", nil, false)
	if got := renderEff(adm.Data.Dataset.EffectiveTags.Tags); got != "c DERIVED pii CARRIED <- pub.mid.c (IDENTITY,IDENTITY)" {
		t.Errorf("admin: behind.c should derive pii from mid.c through H1:\n%s", got)
	}
	beh, body := w.effective(w.narrow2, "pub.behind", nil, false)
	if len(beh.Data.Dataset.EffectiveTags.Tags) != 0 || beh.Data.Dataset.Sensitivity.Sensitive || beh.Data.Dataset.EffectiveTags.Partial ||
		!beh.Data.Dataset.EffectiveTags.PermissionsFiltered || strings.Contains(string(body), "pub.mid") {
		t.Errorf("narrow2: behind.c's only origin is behind a hidden dataset, nothing may show: %s", body)
	}
	w.noLeak("effectiveTags of pub.behind as narrow2", body)
	out, body := w.effective(w.narrow2, "pub.out", nil, false)
	if got := renderEff(out.Data.Dataset.EffectiveTags.Tags); got != "c DERIVED pii CARRIED <- pub.mid.c (IDENTITY)" {
		t.Errorf("narrow2: out.c derives pii from mid.c (hidden job):\n%s", got)
	}
	w.noLeak("effectiveTags of pub.out as narrow2", body)
	if p, body := w.effective(w.narrow, "pub.out", nil, false); len(p.Data.Dataset.EffectiveTags.Tags) != 0 {
		t.Errorf("narrow (no VIEW_SENSITIVE): %s", body)
	}
}
