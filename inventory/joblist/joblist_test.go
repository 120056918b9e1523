package joblist

import (
	"strings"
	"testing"
	"time"
)

func TestReadJSONAndCSVAlike(t *testing.T) {
	js := `[{"namespace": "etl", "name": "load_orders", "criticality": "high", "schedule": "@hourly", "owner": "team-a",
	  "outputs": [{"namespace": "postgres://db:5432", "name": "shop.public.orders"}]},
	 {"namespace": "etl", "name": "adhoc"}]`
	csvDoc := "namespace,name,criticality,schedule,owner,outputs\n" +
		"etl,load_orders,high,@hourly,team-a,postgres://db:5432|shop.public.orders\n" +
		"etl,adhoc,,,,\n"
	for name, doc := range map[string]string{"json": js, "json-object": `{"jobs": ` + js + `}`, "csv": csvDoc} {
		jobs, err := Read(strings.NewReader(doc))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(jobs) != 2 {
			t.Fatalf("%s: %+v", name, jobs)
		}
		l := jobs[0]
		if l.Name != "load_orders" || l.Interval != time.Hour || l.Criticality != "high" || l.Owner != "team-a" ||
			len(l.Outputs) != 1 || l.Outputs[0].Name != "shop.public.orders" {
			t.Errorf("%s: load_orders = %+v", name, l)
		}
		if jobs[1].Interval != 0 || jobs[1].Schedule != "" {
			t.Errorf("%s: adhoc has no schedule: %+v", name, jobs[1])
		}
	}
}

func TestReadRefusesWithTheRule(t *testing.T) {
	cases := map[string]string{
		`[{"namespace": "etl"}]`:                                     "namespace, name: required",
		`[{"namespace": "etl", "name": "a", "x": 1}]`:                "unknown field",
		"namespace,name,colour\netl,a,red\n":                         "unknown column",
		"namespace,name,outputs\netl,a,nopipe\n":                     "not namespace|name",
		`[{"namespace": "e", "name": "a", "schedule": "sometimes"}]`: "schedule",
		"": "empty",
	}
	for doc, want := range cases {
		_, err := Read(strings.NewReader(doc))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Read(%q) = %v, want an error with %q", doc, err, want)
		}
	}
}
