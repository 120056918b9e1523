package release

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/lineage/agreement"
)

// Rule names of the CI outcome (`--fail-on <rule>=<N>d`).
const (
	// RuleRemovedColumnRead fails when a removed or retyped column is read downstream (column lineage) by a job
	// observed within N days.
	RuleRemovedColumnRead = "removed-column-read-within"
	// RuleRemovedModelRead fails when a removed (or renamed) model's relation has a downstream reader observed within
	// N days.
	RuleRemovedModelRead = "removed-model-read-within"
	// MaxRuleDays bounds N.
	MaxRuleDays = 3650
)

// Rule is one configured CI rule.
type Rule struct {
	Name string
	Days int
}

// ParseRule reads `<name>=<N>d` (or `<name>=<N>`).
func ParseRule(s string) (Rule, error) {
	name, v, ok := strings.Cut(strings.TrimSpace(s), "=")
	if !ok || (name != RuleRemovedColumnRead && name != RuleRemovedModelRead) {
		return Rule{}, fmt.Errorf("fail-on: %q: must be %s=<N>d or %s=<N>d", s, RuleRemovedColumnRead, RuleRemovedModelRead)
	}
	n, err := strconv.Atoi(strings.TrimSuffix(v, "d"))
	if err != nil || n < 0 || n > MaxRuleDays {
		return Rule{}, fmt.Errorf("fail-on: %q: N must be whole days from 0 to %d", s, MaxRuleDays)
	}
	return Rule{Name: name, Days: n}, nil
}

// Violations lists what breaks the rules, one line each (empty: the rules pass).
func Violations(r *api.ReleaseImpact, rules []Rule) []string {
	var out []string
	within := func(ev *api.ImpactEvidence, days int) bool {
		return ev != nil && ev.Observed && ev.DaysAgo != nil && *ev.DaysAgo <= days
	}
	for _, rule := range rules {
		for _, c := range r.Changes {
			switch {
			case rule.Name == RuleRemovedColumnRead && (c.Kind == api.ChangeColumnRemoved || c.Kind == api.ChangeColumnRetyped):
				for _, f := range c.Fields {
					if within(f.Evidence, rule.Days) {
						out = append(out, fmt.Sprintf("%s=%dd: %s; read into %s.%s by %s (%s)", rule.Name, rule.Days, c.Summary,
							f.Dataset, f.Field, orUnknown(f.Job), f.Evidence.Label))
					}
				}
			case rule.Name == RuleRemovedModelRead && (c.Kind == api.ChangeModelRemoved || c.Kind == api.ChangeModelRenamed):
				for _, d := range c.Datasets {
					if d.Direct && within(d.Evidence, rule.Days) {
						out = append(out, fmt.Sprintf("%s=%dd: %s; read by %s into %s (%s)", rule.Name, rule.Days, c.Summary,
							strings.Join(d.Jobs, ", "), d.Name, d.Evidence.Label))
					}
				}
			}
		}
	}
	return out
}

func orUnknown(s string) string {
	if s == "" {
		return "a job you may not see"
	}
	return s
}

// Markdown renders the report for a pull-request comment; violations (from Violations) are listed first.
func Markdown(r *api.ReleaseImpact, violations []string) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("## Headwater pre-release impact: dbt project `%s`\n\n", r.Project)
	if r.CurrentDeclaredAt != nil {
		p("Compared with the declarations imported at %s; lineage as of %s.\n\n", r.CurrentDeclaredAt.Format("2006-01-02 15:04 MST"), r.AsOf.Format("2006-01-02 15:04 MST"))
	} else {
		p("The project has no declarations in Headwater yet: everything is new.\n\n")
	}
	if len(violations) > 0 {
		p("### :x: Failing rules\n\n")
		for _, v := range violations {
			p("- %s\n", v)
		}
		p("\n")
	}
	d := r.Diff
	p("### Changes\n\n")
	p("| change | node | detail |\n|---|---|---|\n")
	for _, n := range d.Added {
		p("| added | `%s` | `%s` |\n", n.UniqueID, n.Dataset)
	}
	for _, n := range d.Removed {
		p("| removed | `%s` | `%s` |\n", n.UniqueID, n.Dataset)
	}
	for _, n := range d.Renamed {
		p("| renamed (%s) | `%s` → `%s` | `%s` → `%s` |\n", n.Source, n.From, n.To, n.FromDataset, n.ToDataset)
	}
	for _, c := range d.Columns {
		detail := "`" + c.Column + "`"
		switch c.Change {
		case api.DiffRetyped:
			detail += fmt.Sprintf(" %s → %s", deref(c.FromType), deref(c.ToType))
		case api.DiffAdded, api.DiffRemoved:
		}
		p("| column %s | `%s` | %s |\n", strings.ToLower(string(c.Change)), c.UniqueID, detail)
	}
	for _, c := range d.Dependencies {
		p("| dependency %s | `%s` | `%s` |\n", strings.ToLower(string(c.Change)), c.UniqueID, c.Dependency)
	}
	if len(d.Added)+len(d.Removed)+len(d.Renamed)+len(d.Columns)+len(d.Dependencies) == 0 {
		p("| none | | |\n")
	}
	p("\n### Impact\n\n")
	if len(r.Changes) == 0 {
		p("Nothing downstream can notice these changes.\n\n")
	}
	for _, c := range r.Changes {
		p("#### %s\n\n", c.Summary)
		if len(c.Fields) > 0 {
			p("| field | | distance | via job | evidence |\n|---|---|---|---|---|\n")
			for _, f := range c.Fields {
				p("| `%s.%s` | %s | %d | %s | %s |\n", f.Dataset, f.Field, directness(f.Direct), f.Distance, code(f.Job), label(f.Evidence))
			}
			p("\n")
		}
		if len(c.Datasets) > 0 {
			p("| dataset | | distance | written by | evidence | owners |\n|---|---|---|---|---|---|\n")
			for _, ds := range c.Datasets {
				p("| `%s` | %s | %d | %s | %s | %s |\n", ds.Name, directness(ds.Direct), ds.Distance, codes(ds.Jobs), label(ds.Evidence), strings.Join(ds.Owners, ", "))
			}
			p("\n")
		} else {
			p("No dataset downstream that you may see.\n\n")
		}
		for _, x := range c.Exposures {
			p("- %s\n", exposureLine(x))
		}
		if len(c.Exposures) > 0 {
			p("\n")
		}
		if len(c.Jobs) > 0 {
			var js []string
			for _, j := range c.Jobs {
				js = append(js, fmt.Sprintf("`%s` (%s, %s)", j.Name, directness(j.Direct), label(j.Evidence)))
			}
			p("Jobs: %s\n\n", strings.Join(js, "; "))
		}
		if len(c.Gaps) > 0 || c.Truncated {
			p("Limits of this answer:\n")
			if c.Truncated {
				p("- partial: a walk budget stopped before everything downstream was seen\n")
			}
			for _, g := range c.Gaps {
				p("- %s: %s\n", g.Kind, g.Message)
			}
			p("\n")
		}
	}
	if a := r.DeclaredVersusObserved; a != nil {
		agreementSection(&b, a)
	}
	if len(r.Owners) > 0 {
		p("**Owners of what is affected:** %s\n\n", strings.Join(r.Owners, ", "))
	}
	if r.Partial {
		p("**Partial:** a budget stopped the assessment (at most %d changes, %d nodes and depth %d per change).\n\n", MaxChanges, MaxNodes, Depth)
	}
	if r.PermissionsFiltered {
		p("_Only what you may see is shown and counted._\n")
	}
	return b.String()
}

func directness(direct bool) string {
	if direct {
		return "direct"
	}
	return "indirect"
}

func label(e *api.ImpactEvidence) string {
	if e == nil {
		return ""
	}
	return e.Label
}

func code(s string) string {
	if s == "" {
		return ""
	}
	return "`" + s + "`"
}

func codes(ss []string) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = code(s)
	}
	return strings.Join(out, ", ")
}

// agreementSection renders the declared-versus-observed section.
func agreementSection(b *strings.Builder, a *api.DeclaredVersusObserved) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("### Declared versus observed\n\n")
	p("%d declared edges and %d declared tests of the candidate checked against the runs", a.EdgesChecked, a.TestsChecked)
	if len(a.DeclaredNotObserved)+len(a.ObservedNotDeclared)+len(a.TestsNotObserved) == 0 {
		p(": they agree.\n\n")
	} else {
		p(".\n\n")
	}
	if es := slices.Concat(a.DeclaredNotObserved, a.ObservedNotDeclared); len(es) > 0 {
		p("| disagreement | node | edge | detail |\n|---|---|---|---|\n")
		for _, e := range es {
			edge := "reads `" + e.Dataset + "`"
			if e.Direction == api.LegOutput {
				edge = "writes `" + e.Dataset + "`"
			}
			p("| %s | `%s` | %s | %s |\n", disagreement(e.Kind), e.UniqueID, edge, e.Message)
		}
		p("\n")
	}
	if len(a.TestsNotObserved) > 0 {
		p("Tests declared but never observed running:\n")
		for _, t := range a.TestsNotObserved {
			col := ""
			if t.Column != nil {
				col = ", column `" + *t.Column + "`"
			}
			p("- `%s` on `%s` (`%s`%s)\n", t.Name, t.Dataset, t.Model, col)
		}
		p("\n")
	}
	if a.Partial {
		p("**Partial:** at most %d entries per list are shown.\n\n", agreement.MaxItems)
	}
}

func disagreement(k api.DisagreementKind) string {
	switch k {
	case api.DisagreeNeverObserved:
		return "declared, never observed"
	case api.DisagreeNoLongerObserved:
		return "declared, no longer observed"
	case api.DisagreeStale:
		return "declared, stale"
	case api.DisagreeNotDeclared:
		return "observed, not declared"
	}
	return string(k)
}

// exposureLine says which consumer is affected: "dashboard Weekly revenue (`exposure.p.weekly`) owned by Finance
// <finance@example.com> is affected (direct, distance 1, declared only): <url>".
func exposureLine(x *api.AffectedExposure) string {
	name := x.Label
	if name == "" {
		name = x.Name
	}
	line := fmt.Sprintf("%s **%s** (`%s`)", x.Type, name, x.UniqueID)
	switch {
	case x.OwnerName != "" && x.OwnerEmail != "":
		line += fmt.Sprintf(" owned by %s <%s>", x.OwnerName, x.OwnerEmail)
	case x.OwnerName+x.OwnerEmail != "":
		line += " owned by " + x.OwnerName + x.OwnerEmail
	}
	line += fmt.Sprintf(" is affected (%s, distance %d, %s)", directness(x.Direct), x.Distance, label(x.Evidence))
	if x.URL != "" {
		line += ": " + x.URL
	}
	return line
}
