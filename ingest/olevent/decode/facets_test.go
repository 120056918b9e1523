package decode

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/headwater-data/headwater/ingest/olevent"
)

// TestMalformedInterpretedFacets: each malformed facet is flagged with a path and rule, kept raw, not
// interpreted, and the event is still accepted.
func TestMalformedInterpretedFacets(t *testing.T) {
	d := newTestDecoder(t, olevent.DefaultLimits())
	tests := []struct {
		name      string
		place     func(m map[string]any) map[string]any // the facet map to put the facet in
		key       string
		facet     any
		path      string
		rule      string
		notParsed func(ev olevent.Event) bool
	}{
		{"schema fields not a list", outFacets, "schema", map[string]any{"fields": "a,b"}, "outputs[0].facets.schema", olevent.RuleType,
			func(ev olevent.Event) bool { return ev.Outputs[0].Schema == nil }},
		{"schema field without name", outFacets, "schema", map[string]any{"fields": []any{map[string]any{"name": "a"}, map[string]any{"type": "int"}}},
			"outputs[0].facets.schema.fields[1].name", olevent.RuleRequired, func(ev olevent.Event) bool { return ev.Outputs[0].Schema == nil }},
		{"nested schema field without name", outFacets, "schema", map[string]any{"fields": []any{map[string]any{"name": "a", "fields": []any{map[string]any{"name": ""}}}}},
			"outputs[0].facets.schema.fields[0].fields[0].name", olevent.RuleRequired, func(ev olevent.Event) bool { return ev.Outputs[0].Schema == nil }},
		{"schema not an object", outFacets, "schema", "id:int", "outputs[0].facets.schema", olevent.RuleType,
			func(ev olevent.Event) bool { return ev.Outputs[0].Schema == nil }},
		{"column lineage bad transformation type", outFacets, "columnLineage", map[string]any{"fields": map[string]any{"x": map[string]any{"inputFields": []any{
			map[string]any{"namespace": "n", "name": "t", "field": "x", "transformations": []any{map[string]any{"type": "SIDEWAYS"}}}}}}},
			"outputs[0].facets.columnLineage.fields.x.inputFields[0].transformations[0].type", olevent.RuleEnum,
			func(ev olevent.Event) bool { return ev.Outputs[0].ColumnLineage == nil }},
		{"column lineage input without field", outFacets, "columnLineage", map[string]any{"fields": map[string]any{}, "dataset": []any{map[string]any{"namespace": "n", "name": "t"}}},
			"outputs[0].facets.columnLineage.dataset[0].field", olevent.RuleRequired, func(ev olevent.Event) bool { return ev.Outputs[0].ColumnLineage == nil }},
		{"symlink without namespace", outFacets, "symlinks", map[string]any{"identifiers": []any{map[string]any{"name": "t", "type": "TABLE"}}},
			"outputs[0].facets.symlinks.identifiers[0].namespace", olevent.RuleRequired, func(ev olevent.Event) bool { return ev.Outputs[0].Symlinks == nil }},
		{"lifecycle unknown state", outFacets, "lifecycleStateChange", map[string]any{"lifecycleStateChange": "MOVE"},
			"outputs[0].facets.lifecycleStateChange.lifecycleStateChange", olevent.RuleEnum, func(ev olevent.Event) bool { return ev.Outputs[0].Lifecycle == nil }},
		{"rename with half a previous identifier", outFacets, "lifecycleStateChange", map[string]any{"lifecycleStateChange": "RENAME", "previousIdentifier": map[string]any{"name": "old"}},
			"outputs[0].facets.lifecycleStateChange.previousIdentifier.namespace", olevent.RuleRequired, func(ev olevent.Event) bool { return ev.Outputs[0].Lifecycle == nil }},
		{"version missing", outFacets, "version", map[string]any{"dataset_version": "1"}, "outputs[0].facets.version.datasetVersion", olevent.RuleRequired,
			func(ev olevent.Event) bool { return ev.Outputs[0].Version == "" }},
		{"owner without name", outFacets, "ownership", map[string]any{"owners": []any{map[string]any{"type": "MAINTAINER"}}},
			"outputs[0].facets.ownership.owners[0].name", olevent.RuleRequired, func(ev olevent.Event) bool { return ev.Outputs[0].Owners == nil }},
		{"tag without key", outFacets, "tags", map[string]any{"tags": []any{map[string]any{"value": "true"}}},
			"outputs[0].facets.tags.tags[0].key", olevent.RuleRequired, func(ev olevent.Event) bool { return ev.Outputs[0].Tags == nil }},
		{"documentation description a number", outFacets, "documentation", map[string]any{"description": 3},
			"outputs[0].facets.documentation", olevent.RuleType, func(ev olevent.Event) bool { return ev.Outputs[0].Description == "" }},
		{"lineage input bad type", outFacets, "lineage", map[string]any{"inputs": []any{map[string]any{"type": "TABLE", "namespace": "n", "name": "t"}}},
			"outputs[0].facets.lineage.inputs[0].type", olevent.RuleEnum, func(ev olevent.Event) bool { return ev.Outputs[0].Lineage == nil }},
		{"publication unknown state", outputFacets, "headwater_publication", map[string]any{"state": "MAYBE"},
			"outputs[0].outputFacets.headwater_publication.state", olevent.RuleEnum, func(ev olevent.Event) bool { return ev.Outputs[0].Publication == nil }},
		{"parent runId not a UUID", runFacets, "parent", map[string]any{"run": map[string]any{"runId": "abc"}, "job": map[string]any{"namespace": "n", "name": "j"}},
			"run.facets.parent.run.runId", olevent.RuleUUID, func(ev olevent.Event) bool { return ev.Run.Parent == nil }},
		{"parent root without job", runFacets, "parent", map[string]any{"run": map[string]any{"runId": "0195906a-1f2e-7c3d-8e4f-5a6b7c8d9e0f"}, "job": map[string]any{"namespace": "n", "name": "j"}, "root": map[string]any{"run": map[string]any{"runId": "0195906a-1f2e-7c3d-8e4f-5a6b7c8d9e0f"}}},
			"run.facets.parent.root.job", olevent.RuleRequired, func(ev olevent.Event) bool { return ev.Run.Parent == nil && ev.Run.Root == nil }},
		{"nominal time without offset", runFacets, "nominalTime", map[string]any{"nominalStartTime": "2026-03-01 06:00"},
			"run.facets.nominalTime.nominalStartTime", olevent.RuleFormat, func(ev olevent.Event) bool { return ev.Run.NominalStart == nil }},
		{"error message missing", runFacets, "errorMessage", map[string]any{"programmingLanguage": "JAVA"},
			"run.facets.errorMessage.message", olevent.RuleRequired, func(ev olevent.Event) bool { return ev.Run.ErrorMessage == "" }},
		{"dbt_node without unique_id", jobFacets, "dbt_node", map[string]any{"alias": "orders"},
			"job.facets.dbt_node.unique_id", olevent.RuleRequired, func(ev olevent.Event) bool { return ev.Job.DbtUniqueID == "" }},
		{"dbt_node unique_id a number", jobFacets, "dbt_node", map[string]any{"unique_id": 7},
			"job.facets.dbt_node", olevent.RuleType, func(ev olevent.Event) bool { return ev.Job.DbtUniqueID == "" }},
		{"dbt_node unique_id of no resource type", jobFacets, "dbt_node", map[string]any{"unique_id": "orders"},
			"job.facets.dbt_node.unique_id", olevent.RuleFormat, func(ev olevent.Event) bool { return ev.Job.DbtUniqueID == "" }},
		{"dbt_node unique_id of an unknown resource type", jobFacets, "dbt_node", map[string]any{"unique_id": "exposure.p.dash"},
			"job.facets.dbt_node.unique_id", olevent.RuleFormat, func(ev olevent.Event) bool { return ev.Job.DbtUniqueID == "" }},
		{"dbt_node unique_id too long", jobFacets, "dbt_node", map[string]any{"unique_id": "model.p." + strings.Repeat("x", olevent.MaxDbtUniqueIDBytes)},
			"job.facets.dbt_node.unique_id", olevent.RuleMaxLength, func(ev olevent.Event) bool { return ev.Job.DbtUniqueID == "" }},
		{"jobType unknown processing type", jobFacets, "jobType", map[string]any{"processingType": "MICRO_BATCH", "integration": "SPARK"},
			"job.facets.jobType.processingType", olevent.RuleEnum, func(ev olevent.Event) bool { return ev.Job.ProcessingType == "" }},
		{"sql query a list", jobFacets, "sql", map[string]any{"query": []any{"select 1"}}, "job.facets.sql", olevent.RuleType,
			func(ev olevent.Event) bool { return ev.Job.SQL == "" }},
		{"sourceCode empty", jobFacets, "sourceCode", map[string]any{"language": "python", "sourceCode": ""},
			"job.facets.sourceCode.sourceCode", olevent.RuleRequired, func(ev olevent.Event) bool { return ev.Job.SourceCode == "" }},
		{"sourceCodeLocation without url", jobFacets, "sourceCodeLocation", map[string]any{"type": "git"},
			"job.facets.sourceCodeLocation.url", olevent.RuleRequired, func(ev olevent.Event) bool { return ev.Job.SourceLocation == "" }},
		{"job lineage without entries", jobFacets, "lineage", map[string]any{}, "job.facets.lineage.entries", olevent.RuleRequired,
			func(ev olevent.Event) bool { return ev.Job.Lineage == nil }},
		{"job lineage half job ref", jobFacets, "lineage", map[string]any{"entries": []any{map[string]any{"type": "JOB", "namespace": "n"}}},
			"job.facets.lineage.entries[0]", olevent.RuleRequired, func(ev olevent.Event) bool { return ev.Job.Lineage == nil }},
		{"_deleted a string", jobFacets, "sql", map[string]any{"_deleted": "yes", "query": "select 1"}, "job.facets.sql._deleted", olevent.RuleType,
			func(ev olevent.Event) bool { return ev.Job.SQL == "select 1" && len(ev.Job.Deleted) == 0 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := minimalRun()
			tt.place(m)[tt.key] = tt.facet
			ev := decodeOK(t, d, mustJSON(t, m))
			is := findIssue(ev, tt.path)
			if is == nil || is.Rule != tt.rule {
				t.Fatalf("want issue %s/%s, got %+v", tt.path, tt.rule, ev.FacetIssues)
			}
			if is.Message == "" || len(ev.FacetIssues) != 1 {
				t.Errorf("issues = %+v", ev.FacetIssues)
			}
			if !tt.notParsed(ev) {
				t.Error("malformed facet was interpreted (or a valid part was lost)")
			}
			if rawOf(ev, tt.path) == nil {
				t.Error("malformed facet not kept raw")
			}
		})
	}
}

func outFacets(m map[string]any) map[string]any { return ensure(item(m, "outputs", 0), "facets") }
func outputFacets(m map[string]any) map[string]any {
	return ensure(item(m, "outputs", 0), "outputFacets")
}
func runFacets(m map[string]any) map[string]any { return ensure(sub(m, "run"), "facets") }
func jobFacets(m map[string]any) map[string]any { return ensure(sub(m, "job"), "facets") }

func ensure(m map[string]any, key string) map[string]any {
	if _, ok := m[key]; !ok {
		m[key] = map[string]any{}
	}
	return m[key].(map[string]any)
}

// rawOf finds the raw facet named by an issue path.
func rawOf(ev olevent.Event, path string) []byte {
	candidates := []struct {
		prefix string
		facets func() map[string][]byte
	}{
		{"run.facets.", func() map[string][]byte { return toBytes(ev.Run.Facets) }},
		{"job.facets.", func() map[string][]byte { return toBytes(ev.Job.Facets) }},
		{"outputs[0].facets.", func() map[string][]byte { return toBytes(ev.Outputs[0].Facets) }},
		{"outputs[0].outputFacets.", func() map[string][]byte { return toBytes(ev.Outputs[0].OutputFacets) }},
	}
	for _, c := range candidates {
		if rest, ok := strings.CutPrefix(path, c.prefix); ok {
			key := rest
			if i := strings.IndexAny(rest, ".["); i >= 0 {
				key = rest[:i]
			}
			return c.facets()[key]
		}
	}
	return nil
}

func TestUnknownFacetsPassThrough(t *testing.T) {
	d := newTestDecoder(t, olevent.DefaultLimits())
	m := minimalRun()
	runFacets(m)["my_company_cost"] = map[string]any{"dollars": 12.5, "nested": map[string]any{"a": []any{1, 2}}}
	jobFacets(m)["weird"] = "not even an object"
	outputFacets(m)["custom_out"] = map[string]any{"x": true}
	ensure(item(m, "inputs", 0), "inputFacets")["custom_in"] = map[string]any{"y": nil}
	ev := decodeOK(t, d, mustJSON(t, m))
	if len(ev.FacetIssues) != 0 {
		t.Fatalf("unknown facets flagged: %+v", ev.FacetIssues)
	}
	if string(ev.Run.Facets["my_company_cost"]) != `{"dollars":12.5,"nested":{"a":[1,2]}}` {
		t.Errorf("run facet raw = %s", ev.Run.Facets["my_company_cost"])
	}
	if string(ev.Job.Facets["weird"]) != `"not even an object"` || ev.Outputs[0].OutputFacets["custom_out"] == nil ||
		ev.Inputs[0].InputFacets["custom_in"] == nil {
		t.Errorf("unknown facets lost: %+v %+v", ev.Job.Facets, ev.Outputs[0].OutputFacets)
	}
}

func TestDeletedFacets(t *testing.T) {
	d := newTestDecoder(t, olevent.DefaultLimits())
	m := minimalRun()
	outFacets(m)["schema"] = map[string]any{"_deleted": true}
	outFacets(m)["symlinks"] = map[string]any{"_deleted": false, "identifiers": []any{}}
	outFacets(m)["custom"] = map[string]any{"_deleted": true}
	jobFacets(m)["sql"] = map[string]any{"_deleted": nil, "query": "select 1"}
	ev := decodeOK(t, d, mustJSON(t, m))
	out := ev.Outputs[0]
	if !slices.Equal(out.Deleted, []string{"custom", "schema"}) || out.Schema != nil || out.Facets["schema"] != nil {
		t.Errorf("deleted = %v schema = %v", out.Deleted, out.Schema)
	}
	if out.Symlinks == nil || ev.Job.SQL != "select 1" || len(ev.Job.Deleted) != 0 {
		t.Errorf("false/null _deleted must keep the facet: %+v %q", out.Symlinks, ev.Job.SQL)
	}
}

func TestPublicationOutputFacetWins(t *testing.T) {
	d := newTestDecoder(t, olevent.DefaultLimits())
	m := minimalRun()
	outFacets(m)["headwater_publication"] = map[string]any{"state": "PUBLISHED"}
	outputFacets(m)["headwater_publication"] = map[string]any{"state": "WITHHELD", "reason": "gate"}
	ev := decodeOK(t, d, mustJSON(t, m))
	if p := ev.Outputs[0].Publication; p == nil || *p != (olevent.Publication{State: "WITHHELD", Reason: "gate"}) {
		t.Fatalf("publication = %+v", p)
	}
}

func TestVersionAcceptsNumber(t *testing.T) {
	d := newTestDecoder(t, olevent.DefaultLimits())
	m := minimalRun()
	outFacets(m)["version"] = map[string]any{"datasetVersion": 6183459274017452817}
	ev := decodeOK(t, d, mustJSON(t, m))
	if ev.Outputs[0].Version != "6183459274017452817" {
		t.Fatalf("version = %q", ev.Outputs[0].Version)
	}
}

func toBytes(m map[string]json.RawMessage) map[string][]byte {
	out := make(map[string][]byte, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// The scan report's snapshotId is kept exactly as sent (ADR 0084): the double's literal, not a number parsed
// from it; a malformed one is a facet issue naming the field and the rule, and the rest of the event is kept.
func TestScanReportSnapshotKeptAsSent(t *testing.T) {
	d := newTestDecoder(t, olevent.DefaultLimits())
	for _, tt := range []struct {
		name, raw, want, issueRule string
	}{
		{"double", `8.1756558994744289E18`, "8.1756558994744289E18", ""},
		{"integer", `8175655899474428532`, "8175655899474428532", ""},
		{"string", `"8175655899474428532"`, "8175655899474428532", ""},
		{"not a number", `"S1"`, "", olevent.RuleType},
		{"object", `{"id": 1}`, "", olevent.RuleType},
		{"missing", `null`, "", olevent.RuleRequired},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := minimalRun()
			ensure(item(m, "inputs", 0), "inputFacets")["icebergScanReport"] = map[string]any{
				"snapshotId": json.RawMessage(tt.raw), "tableName": "lake.db.orders"}
			ev := decodeOK(t, d, mustJSON(t, m))
			if got := ev.Inputs[0].ScanSnapshot; got != tt.want {
				t.Fatalf("ScanSnapshot = %q, want %q", got, tt.want)
			}
			var rule string
			for _, fi := range ev.FacetIssues {
				if fi.Path == "inputs[0].inputFacets.icebergScanReport.snapshotId" {
					rule = fi.Rule
				}
			}
			if rule != tt.issueRule {
				t.Fatalf("issue rule = %q, want %q (issues %+v)", rule, tt.issueRule, ev.FacetIssues)
			}
		})
	}
}
