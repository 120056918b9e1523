package authz

import (
	"strings"
	"testing"
)

func TestPlaceholderID(t *testing.T) {
	key := strings.Repeat("k", 32)
	r, err := NewRedactor(key)
	if err != nil {
		t.Fatal(err)
	}
	alice, bob := Principal{Subject: "alice", Kind: "user"}, Principal{Subject: "bob", Kind: "user"}
	id := r.PlaceholderID(alice, "ds_1", "UPSTREAM")
	if id != r.PlaceholderID(alice, "ds_1", "UPSTREAM") {
		t.Error("not stable")
	}
	other, _ := NewRedactor(key)
	if id != other.PlaceholderID(alice, "ds_1", "UPSTREAM") {
		t.Error("differs between replicas with the same key")
	}
	for _, diff := range []string{r.PlaceholderID(bob, "ds_1", "UPSTREAM"), r.PlaceholderID(alice, "ds_1", "DOWNSTREAM"),
		r.PlaceholderID(alice, "ds_2", "UPSTREAM"), r.PlaceholderID(Principal{Subject: "alice", Kind: "service"}, "ds_1", "UPSTREAM")} {
		if diff == id {
			t.Error("placeholder ids collide across principal, node or direction")
		}
	}
	if strings.Contains(id, "ds_1") || strings.Contains(id, "alice") {
		t.Error("placeholder id reveals its inputs")
	}
	if _, err := NewRedactor("short"); err == nil {
		t.Error("a short key must be refused")
	}
}
