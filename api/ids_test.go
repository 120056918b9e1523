package api

import "testing"

func TestIDsAreOpaqueAndTyped(t *testing.T) {
	id := DatasetID("ds_abc")
	kind, key, ok := decodeID(id)
	if !ok || kind != idDataset || key != "ds_abc" {
		t.Fatalf("decode %s: %s %s %v", id, kind, key, ok)
	}
	if RunKeyOf(RunID("0190")) != "0190" || RunKeyOf(" 0190ABC ") != "0190abc" {
		t.Fatal("run ids")
	}
	if _, _, ok := decodeID("%%%"); ok {
		t.Fatal("garbage decoded")
	}
}
