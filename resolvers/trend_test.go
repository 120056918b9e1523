package resolvers

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/grant"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/lineage/lineagetest"
	"github.com/headwater-data/headwater/trust"
	"github.com/headwater-data/headwater/trust/sampler"
	"github.com/headwater-data/headwater/trust/truststore"
)

const trendQ = `query($ns: String, $scope: String) { coverage(namespace: $ns) {
  edgeFreshness { numerator denominator trendScope(scope: $scope) trend(scope: $scope) { numerator denominator } }
  jobsReporting { numerator denominator trendScope(scope: $scope) trend(scope: $scope) { numerator denominator } } } }`

type trendFigure struct {
	Numerator, Denominator int
	TrendScope             *string
	Trend                  []struct{ Numerator, Denominator int }
}

type trendAnswer struct {
	Data struct {
		Coverage struct{ EdgeFreshness, JobsReporting trendFigure }
	}
	Errors []map[string]any
}

func (w *world) trend(t *testing.T, principal, ns, scope string) trendAnswer {
	t.Helper()
	vars := map[string]any{}
	if ns != "" {
		vars["ns"] = ns
	}
	if scope != "" {
		vars["scope"] = scope
	}
	var a trendAnswer
	body := w.post(principal, trendQ, vars)
	if err := json.Unmarshal(body, &a); err != nil || len(a.Errors) > 0 {
		t.Fatalf("trend as %s: %v %s", principal, err, body)
	}
	return a
}

// producerTrends: a producer's own figures carry its points (un-narrowed or narrowed to itself); narrowed to
// another producer, nothing; the admin gets any producer's.
func (w *world) producerTrends(t *testing.T, team string) {
	t.Helper()
	const q = `query($p: String) { coverage(producer: $p) { quietProducers { denominator trendScope trend { denominator } } } }`
	get := func(principal string, vars map[string]any) (string, int) {
		var a struct {
			Data struct {
				Coverage struct{ QuietProducers trendFigure } `json:"coverage"`
			} `json:"data"`
		}
		body := w.post(principal, q, vars)
		if err := json.Unmarshal(body, &a); err != nil {
			t.Fatal(err)
		}
		f := a.Data.Coverage.QuietProducers
		sc := "<null>"
		if f.TrendScope != nil {
			sc = *f.TrendScope
		}
		if len(f.Trend) == 0 {
			return sc, -1
		}
		return sc, f.Trend[len(f.Trend)-1].Denominator
	}
	for name, c := range map[string]struct {
		principal string
		vars      map[string]any
		scope     string
		den       int
	}{
		"own, un-narrowed": {team, map[string]any{}, "producer:" + team, 1},
		"own, narrowed":    {team, map[string]any{"p": team}, "producer:" + team, 1},
		"another's":        {team, map[string]any{"p": w.admin}, "<null>", -1},
		"admin's view":     {w.admin, map[string]any{"p": team}, "producer:" + team, 1},
		"narrow's own":     {w.narrow, map[string]any{}, "producer:" + w.narrow, -1},
	} {
		if sc, den := get(c.principal, c.vars); sc != c.scope || den != c.den {
			t.Errorf("%s: trendScope %s, last point denominator %d; want %s, %d", name, sc, den, c.scope, c.den)
		}
	}
}

func lastPoint(t *testing.T, who string, f trendFigure) (int, int) {
	t.Helper()
	if len(f.Trend) == 0 {
		t.Fatalf("%s: no trend point", who)
	}
	p := f.Trend[len(f.Trend)-1]
	return p.Numerator, p.Denominator
}

// TestScopedTrendsCountOnlyWhatTheCallerCovers: a namespace's trend (ADR 0043) is served to a caller who holds
// the figure's privilege on the whole namespace, with points counting only what lies wholly inside it, equal to
// that caller's own live figure; a caller with a global grant gets the values for everything in the namespace;
// a caller holding only a prefix gets none; a configured scope needs all of its namespaces.
func TestScopedTrendsCountOnlyWhatTheCallerCovers(t *testing.T) {
	w := newWorld(t, worldOpt{mode: authz.HiddenOmit})
	fx := w.fx
	far := lineagetest.New(t, fx.Store)
	// pub.jx reads pub.src (this namespace) and writes far.out in another namespace: an edge pair that crosses
	fx.Flow(fx.Job("pub.jx"), []string{w.src}, []string{far.Dataset("far.out")})
	both := "both-" + fx.NS
	ts, err := trust.NewService(truststore.NewStore(fx.Store), w.policy, trust.Config{RunGrace: w.trust.Config().RunGrace,
		TrendScopes: both + "=" + fx.NS + "," + far.NS}, fx.Clock())
	if err != nil {
		t.Fatal(err)
	}
	*w.trust = *ts // the served service reads the configured scope

	team := fx.NS + "-team"
	w.roles = append(w.roles, w.role("team"))
	w.apply(grant.Change{Op: grant.OpCreateRole, Role: &grant.Role{Name: w.role("team")}},
		grant.Change{Op: grant.OpGrant, Grant: &grant.Grant{Role: w.role("team"), Privilege: authz.PrivViewLineage,
			On: grant.Securable{Kind: grant.SecNamespace, Namespace: fx.NS}}},
		grant.Change{Op: grant.OpBindRole, Binding: &grant.RoleBinding{Subject: team, Role: w.role("team")}})
	if err := w.policy.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	// the team is a producer too: a daily event for a week (its quiet-producer figure has a denominator of 1)
	var daily []time.Time
	for d := 7; d >= 1; d-- {
		daily = append(daily, fx.Now.Add(-time.Duration(d)*24*time.Hour))
	}
	producerRun(fx, graph.JobKey(fx.NS, "pub.j1"), team, daily)
	smp := sampler.New(w.trust, truststore.NewStore(fx.Store), sampler.NewMetrics(prometheus.NewRegistry()), nil)
	if err := smp.SampleScope(t.Context(), fx.Now, trust.TrendScope{Kind: trust.ScopeNamespace, Key: fx.NS},
		trust.TrendScope{Kind: trust.ScopeNamed, Key: both}, trust.TrendScope{Kind: trust.ScopeProducer, Key: team}); err != nil {
		t.Fatal(err)
	}
	w.producerTrends(t, team)

	admin, mine, narrow := w.trend(t, w.admin, fx.NS, ""), w.trend(t, team, fx.NS, ""), w.trend(t, w.narrow, fx.NS, "")
	want := "namespace:" + fx.NS
	for who, a := range map[string]trendAnswer{"admin": admin, "team": mine} {
		for name, f := range map[string]trendFigure{"edgeFreshness": a.Data.Coverage.EdgeFreshness, "jobsReporting": a.Data.Coverage.JobsReporting} {
			if f.TrendScope == nil || *f.TrendScope != want {
				t.Errorf("%s %s: trendScope %v, want %s", who, name, f.TrendScope, want)
			}
			// the last point is what this caller's live figure says now (nothing changed since the sample)
			if n, d := lastPoint(t, who+" "+name, f); n != f.Numerator || d != f.Denominator {
				t.Errorf("%s %s: last point %d/%d, live figure %d/%d", who, name, n, d, f.Numerator, f.Denominator)
			}
		}
	}
	if a, m := admin.Data.Coverage.EdgeFreshness.Denominator, mine.Data.Coverage.EdgeFreshness.Denominator; a != m+1 {
		t.Errorf("edge pairs: admin %d, team %d; want the crossing pair counted for the admin only", a, m)
	}
	for name, f := range map[string]trendFigure{"edgeFreshness": narrow.Data.Coverage.EdgeFreshness, "jobsReporting": narrow.Data.Coverage.JobsReporting} {
		if f.TrendScope != nil || len(f.Trend) != 0 {
			t.Errorf("a prefix-only caller got a %s trend: %v %v", name, f.TrendScope, f.Trend)
		}
	}
	for _, a := range []trendAnswer{w.trend(t, team, far.NS, ""), w.trend(t, team, "", "")} {
		if f := a.Data.Coverage.EdgeFreshness; f.TrendScope != nil || len(f.Trend) != 0 {
			t.Errorf("the team got a trend of what it does not cover: %v %v", f.TrendScope, f.Trend)
		}
	}

	// the configured scope covers both namespaces: the crossing pair is inside it
	if f := w.trend(t, team, "", both).Data.Coverage.EdgeFreshness; f.TrendScope != nil || len(f.Trend) != 0 {
		t.Errorf("the team covers one of the scope's two namespaces and got its trend: %v %v", f.TrendScope, f.Trend)
	}
	f := w.trend(t, w.admin, "", both).Data.Coverage.EdgeFreshness
	if _, d := lastPoint(t, "admin scope", f); f.TrendScope == nil || *f.TrendScope != "scope:"+both || d != admin.Data.Coverage.EdgeFreshness.Denominator {
		t.Errorf("admin scope trend %v with %d pairs, want scope:%s with %d", f.TrendScope, d, both, admin.Data.Coverage.EdgeFreshness.Denominator)
	}
	w.apply(grant.Change{Op: grant.OpGrant, Grant: &grant.Grant{Role: w.role("team"), Privilege: authz.PrivViewLineage,
		On: grant.Securable{Kind: grant.SecNamespace, Namespace: far.NS}}})
	if err := w.policy.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	if f := w.trend(t, team, "", both).Data.Coverage.EdgeFreshness; f.TrendScope == nil || len(f.Trend) == 0 {
		t.Errorf("the team covers both namespaces now and got no scope trend: %v", f)
	}
}
