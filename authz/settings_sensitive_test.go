package authz

import "testing"

func TestSensitiveTagsByClass(t *testing.T) {
	s := Settings{SensitiveTags: []string{"PII", "secret"}}.Normalized()
	for tag, want := range map[string]bool{"pii": true, "pii.email": true, "email:pii=true": true, "a:b:PII.phone": true,
		"piix": false, "team=pii": false, "secret": true, "confidential": false, "x:secretive": false} {
		if got := s.Sensitive("", []string{tag}); got != want {
			t.Errorf("Sensitive(%q) = %v, want %v", tag, got, want)
		}
	}
}
