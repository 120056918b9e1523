package inventory

import (
	"testing"
	"time"
)

func TestParseSchedule(t *testing.T) {
	day := 24 * time.Hour
	cases := []struct {
		in   string
		want time.Duration
		err  bool
	}{
		{"", 0, false},
		{"None", 0, false},
		{"@once", 0, false},
		{"@hourly", time.Hour, false},
		{"@daily", day, false},
		{"90m", 90 * time.Minute, false},
		{"PT1H", time.Hour, false},
		{"P1DT12H", 36 * time.Hour, false},
		{"*/15 * * * *", 15 * time.Minute, false},
		{"0 * * * *", time.Hour, false},
		{"0 6 * * *", day, false},
		{"0 6,18 * * *", 12 * time.Hour, false},
		{"30 2 * * 1-5", 3 * day, false},     // Friday 02:30 to Monday 02:30
		{"0 0 * * 0", 7 * day, false},        // weekly on Sunday
		{"0 0 1 * *", 31 * day, false},       // monthly
		{"0 0 1 1,7 *", 6 * 31 * day, false}, // twice a year: five months without, plus one
		{"61 * * * *", 0, true},
		{"every day", 0, true},
	}
	for _, c := range cases {
		got, err := ParseSchedule(c.in)
		if (err != nil) != c.err || got != c.want {
			t.Errorf("ParseSchedule(%q) = %v, %v; want %v, error %v", c.in, got, err, c.want, c.err)
		}
	}
}

func TestNormalizeIsCanonicalAndRefusesDuplicates(t *testing.T) {
	a := Inventory{Source: "s1", Kind: KindList, Jobs: []Job{
		{Namespace: "n", Name: "b", MatchNames: []string{"z", "b"}},
		{Namespace: "n", Name: "a", Criticality: " High "},
	}}
	b := Inventory{Source: "s1", Kind: KindList, Jobs: []Job{
		{Namespace: "n", Name: "a", Criticality: "high"},
		{Namespace: "n", Name: "b", MatchNames: []string{"b", "z"}},
	}}
	if err := a.Normalize(); err != nil {
		t.Fatal(err)
	}
	if err := b.Normalize(); err != nil {
		t.Fatal(err)
	}
	if a.Digest() != b.Digest() {
		t.Fatalf("the same content in another order has another digest")
	}
	if a.Jobs[1].Criticality != "unspecified" || a.Jobs[0].Criticality != "high" {
		t.Fatalf("criticality not normalised: %+v", a.Jobs)
	}
	dup := Inventory{Source: "s1", Jobs: []Job{{Namespace: "n", Name: "a"}, {Namespace: "n", Name: "a"}}}
	if err := dup.Normalize(); err == nil {
		t.Fatal("a job listed twice was accepted")
	}
	if err := (&Inventory{Source: "bad source"}).Normalize(); err == nil {
		t.Fatal("a source name with a space was accepted")
	}
}
