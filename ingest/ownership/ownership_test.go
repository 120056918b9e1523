package ownership

import "testing"

func TestSetOwnsAndHeaderRoundTrip(t *testing.T) {
	if !All().Owns("anything") {
		t.Fatal("the unrestricted set must own everything")
	}
	if _, ok := All().Header(); ok {
		t.Fatal("the unrestricted set is sent as no header")
	}
	for _, s := range []Set{Of([]string{"s3://b", "airflow", "s3://b"}), Of(nil)} {
		v, ok := s.Header()
		if !ok {
			t.Fatalf("%+v: no header", s)
		}
		back, err := FromHeader(v)
		if err != nil || !back.Restricted || len(back.Namespaces) != len(s.Namespaces) {
			t.Fatalf("%+v: header %q read back as %+v (%v)", s, v, back, err)
		}
	}
	s := Of([]string{"s3://b", "airflow"})
	if !s.Owns("airflow") || !s.Owns("s3://b") || s.Owns("s3://v") || s.Owns("") {
		t.Fatalf("Owns wrong for %+v", s)
	}
	if _, err := FromHeader("not json"); err == nil {
		t.Fatal("an unreadable header was accepted")
	}
}
