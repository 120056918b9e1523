package trust

import (
	"fmt"
	"strings"
	"testing"
)

func TestConfigFactors(t *testing.T) {
	c := Config{QuietFactors: "dbt-prod=5, airflow=1.5"}
	f, err := c.factors()
	if err != nil || f["dbt-prod"] != 5 || f["airflow"] != 1.5 {
		t.Fatalf("factors %v %v", f, err)
	}
	for _, bad := range []string{"x", "x=", "x=-1", "=3"} {
		if err := (Config{QuietFactors: bad}).Validate(); err == nil {
			t.Errorf("quiet-factors %q accepted", bad)
		}
	}
}

func TestConfigTrendScopes(t *testing.T) {
	c := Config{TrendScopes: " team-a = ns2, ns1 ,ns1; b=postgres://db:5432 "}
	s, err := c.trendScopes()
	if err != nil || len(s) != 2 || strings.Join(s["team-a"], "|") != "ns1|ns2" || s["b"][0] != "postgres://db:5432" {
		t.Fatalf("trend scopes %v %v", s, err)
	}
	many := "x=" + strings.Repeat("n,", MaxScopeNamespaces) + strings.Repeat("m", 3)
	for i := range MaxScopeNamespaces {
		many += fmt.Sprintf(",n%d", i)
	}
	for _, bad := range []string{"noequals", "=ns", "a=", "a=x;a=y", many} {
		if err := (Config{TrendScopes: bad}).Validate(); err == nil || !strings.Contains(err.Error(), "trust.trend-scopes") {
			t.Errorf("trend-scopes %q: %v", bad, err)
		}
	}
}
