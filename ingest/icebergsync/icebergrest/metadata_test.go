package icebergrest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestTypesFlattenByFieldID(t *testing.T) {
	var s Schema
	err := json.Unmarshal([]byte(`{"schema-id": 7, "type": "struct", "fields": [
		{"id": 1, "name": "id", "required": true, "type": "long"},
		{"id": 2, "name": "price", "required": false, "type": "decimal(10,2)"},
		{"id": 3, "name": "attrs", "required": false, "type": {"type": "map", "key-id": 4, "key": "string",
			"value-id": 5, "value": {"type": "struct", "fields": [{"id": 6, "name": "v", "required": false, "type": "int"}]}, "value-required": false}},
		{"id": 7, "name": "tags", "required": false, "type": {"type": "list", "element-id": 8, "element": "string", "element-required": true}}]}`), &s)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range s.Flatten() {
		got = append(got, f.Path+"#"+jsonInt(f.ID)+":"+f.Type)
	}
	want := "id#1:long price#2:decimal(10,2) attrs#3:map<string,struct> attrs.key#4:string attrs.value#5:struct " +
		"attrs.value.v#6:int tags#7:list<string> tags.element#8:string"
	if strings.Join(got, " ") != want {
		t.Errorf("flattened\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	if err := json.Unmarshal([]byte(`{"id": 1, "name": "x", "type": {"type": "variant-ish"}}`), &Field{}); err == nil ||
		!strings.Contains(err.Error(), `"variant-ish"`) {
		t.Errorf("unknown nested type: err = %v, want one naming it", err)
	}
}

func jsonInt(i int) string { b, _ := json.Marshal(i); return string(b) }

func TestSnapshotIDsKeepEveryDigit(t *testing.T) {
	var m TableMetadata
	// 2^63-1 and a parent that a float64 would round (9007199254740993 = 2^53 + 1).
	err := json.Unmarshal([]byte(`{"current-snapshot-id": 9223372036854775807, "snapshots": [
		{"snapshot-id": 9223372036854775807, "parent-snapshot-id": 9007199254740993, "summary": {"operation": "append"}}]}`), &m)
	if err != nil {
		t.Fatal(err)
	}
	if m.Current() != "9223372036854775807" || string(*m.Snapshots[0].ParentSnapshotID) != "9007199254740993" {
		t.Errorf("ids: current %s parent %s", m.Current(), *m.Snapshots[0].ParentSnapshotID)
	}
	var v1 TableMetadata
	if err := json.Unmarshal([]byte(`{"current-snapshot-id": -1}`), &v1); err != nil || v1.Current() != "" {
		t.Errorf("format v1's -1 (no snapshot): current %q err %v, want none", v1.Current(), err)
	}
	if err := json.Unmarshal([]byte(`{"current-snapshot-id": 1.5e3}`), &v1); err == nil {
		t.Error("a snapshot id that is not an integer was accepted")
	}
}

// A catalog that repeats its page token would make a listing loop forever; the client stops it. (No real catalog
// misbehaves on request, so this one is a stand-in; the fixture tests cover real paging.)
func TestRepeatedPageTokenEndsTheListing(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/config" {
			_, _ = w.Write([]byte(`{"defaults": {}, "overrides": {"prefix": "wh/1"}}`))
			return
		}
		if r.URL.EscapedPath() != "/v1/wh/1/namespaces" { // the prefix as path segments, as pyiceberg uses it (ADR 0087)
			http.Error(w, r.URL.EscapedPath(), http.StatusNotFound)
			return
		}
		_, _ = w.Write([]byte(`{"namespaces": [["a"]], "next-page-token": "same"}`))
	}))
	defer srv.Close()
	c, err := NewClient(context.Background(), ClientConfig{URI: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.ListNamespaces(context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), "repeats") {
		t.Errorf("err = %v, want the repeated-token rule", err)
	}
}
