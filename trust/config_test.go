package trust

import "testing"

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
