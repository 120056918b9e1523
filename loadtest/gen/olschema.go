package gen

import "time"

// Schema URLs of the OpenLineage 2-0-2 event shapes.
const (
	RunEventSchemaURL     = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/RunEvent"
	JobEventSchemaURL     = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/JobEvent"
	DatasetEventSchemaURL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/DatasetEvent"
	facetBase             = "https://openlineage.io/spec/facets/"
	timeLayout            = "2006-01-02T15:04:05.000Z"
)

// Event kinds as Headwater names them.
const (
	KindRun     = "RUN"
	KindJob     = "JOB"
	KindDataset = "DATASET"
)

// olEvent is the wire shape of all three event kinds (fields left empty are omitted).
type olEvent struct {
	EventType string      `json:"eventType,omitempty"`
	EventTime string      `json:"eventTime"`
	Run       *olRun      `json:"run,omitempty"`
	Job       *olJob      `json:"job,omitempty"`
	Inputs    []olDataset `json:"inputs,omitempty"`
	Outputs   []olDataset `json:"outputs,omitempty"`
	Dataset   *olDataset  `json:"dataset,omitempty"`
	Producer  string      `json:"producer"`
	SchemaURL string      `json:"schemaURL"`
}

type olRun struct {
	RunID  string         `json:"runId"`
	Facets map[string]any `json:"facets,omitempty"`
}

type olJob struct {
	Namespace string         `json:"namespace"`
	Name      string         `json:"name"`
	Facets    map[string]any `json:"facets,omitempty"`
}

type olDataset struct {
	Namespace    string         `json:"namespace"`
	Name         string         `json:"name"`
	Facets       map[string]any `json:"facets,omitempty"`
	InputFacets  map[string]any `json:"inputFacets,omitempty"`
	OutputFacets map[string]any `json:"outputFacets,omitempty"`
}

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

// facet adds the _producer and _schemaURL every OpenLineage facet carries.
func facet(producer, schema string, body map[string]any) map[string]any {
	body["_producer"] = producer
	body["_schemaURL"] = facetBase + schema
	return body
}

// schemaFacet nests "a.b" paths as struct fields, as producers send them.
func schemaFacet(producer string, fields []Field) map[string]any {
	var out []any
	nested := map[string]*[]any{}
	for _, f := range fields {
		parent, child, ok := cut(f.Path)
		if !ok {
			out = append(out, map[string]any{"name": f.Path, "type": f.Type})
			continue
		}
		kids, seen := nested[parent]
		if !seen {
			kids = &[]any{}
			nested[parent] = kids
			out = append(out, map[string]any{"name": parent, "type": "struct", "fields": kids})
		}
		*kids = append(*kids, map[string]any{"name": child, "type": f.Type})
	}
	return facet(producer, "1-1-1/SchemaDatasetFacet.json#/$defs/SchemaDatasetFacet", map[string]any{"fields": out})
}

func cut(path string) (string, string, bool) {
	for i := 0; i < len(path); i++ {
		if path[i] == '.' {
			return path[:i], path[i+1:], true
		}
	}
	return path, "", false
}

func jobTypeFacet(producer string, j *Job) map[string]any {
	pt := "BATCH"
	if j.Streaming {
		pt = "STREAMING"
	}
	return facet(producer, "2-0-3/JobTypeJobFacet.json#/$defs/JobTypeJobFacet",
		map[string]any{"processingType": pt, "integration": j.Integration, "jobType": j.JobType})
}

func jobFacets(producer string, j *Job, full bool) map[string]any {
	f := map[string]any{"jobType": jobTypeFacet(producer, j)}
	if !full {
		return f
	}
	if j.SQL != "" {
		f["sql"] = facet(producer, "1-1-0/SQLJobFacet.json#/$defs/SQLJobFacet", map[string]any{"query": j.SQL})
	}
	if j.SourceLocation != "" {
		f["sourceCodeLocation"] = facet(producer, "1-0-1/SourceCodeLocationJobFacet.json#/$defs/SourceCodeLocationJobFacet",
			map[string]any{"type": "git", "url": j.SourceLocation, "version": "main"})
	}
	return f
}

func parentRef(runID, ns, name string) map[string]any {
	return map[string]any{"run": map[string]any{"runId": runID}, "job": map[string]any{"namespace": ns, "name": name}}
}

var engineVersions = map[string][2]string{
	IntegrationAirflow: {"Airflow", "2.10.3"}, IntegrationSpark: {"spark", "3.5.3"},
	IntegrationDBT: {"dbt", "1.8.2"}, IntegrationFlink: {"flink", "1.19.1"},
}

func engineFacet(producer, integration string) map[string]any {
	e := engineVersions[integration]
	return facet(producer, "1-1-1/ProcessingEngineRunFacet.json#/$defs/ProcessingEngineRunFacet",
		map[string]any{"name": e[0], "version": e[1], "openlineageAdapterVersion": "1.24.2"})
}
