package gen

import (
	"fmt"
	"strings"
	"time"
)

// runEvent builds and queues one RunEvent of a plan.
func (s *Stream) runEvent(p *runPlan, typ string, at time.Time, ins, outs []olDataset, errFacet map[string]any) {
	j := p.job
	rf := map[string]any{"processing_engine": engineFacet(p.producer, j.Integration)}
	if p.parent != nil {
		rf["parent"] = p.parent
	}
	if typ == "START" && !j.Streaming {
		rf["nominalTime"] = facet(p.producer, "1-0-1/NominalTimeRunFacet.json#/$defs/NominalTimeRunFacet",
			map[string]any{"nominalStartTime": formatTime(p.nominal)})
	}
	if errFacet != nil {
		rf["errorMessage"] = errFacet
	}
	e := &olEvent{EventType: typ, EventTime: formatTime(at), Run: &olRun{RunID: p.id, Facets: rf},
		Job:    &olJob{Namespace: j.Namespace, Name: j.Name, Facets: jobFacets(p.producer, j, typ == "START")},
		Inputs: ins, Outputs: outs, Producer: p.producer, SchemaURL: RunEventSchemaURL}
	s.planEvents[s.plan]++
	s.planLeft[s.plan]++
	s.push(Event{Body: encode(e), Key: runKey(j), Kind: KindRun, EventType: typ, RunID: p.id, EventTime: at, plan: s.plan})
}

// runKey is the OpenLineage Kafka transport's key: the root job, else the parent job, else the job.
func runKey(j *Job) string {
	switch {
	case j.RootName != "":
		return "run:" + j.RootNS + "/" + j.RootName
	case j.ParentName != "":
		return "run:" + j.ParentNS + "/" + j.ParentName
	}
	return "run:" + j.Namespace + "/" + j.Name
}

func (s *Stream) inputs(p *runPlan, rich bool) []olDataset {
	out := make([]olDataset, 0, len(p.job.Inputs))
	for _, id := range p.job.Inputs {
		d := &s.w.Datasets[id]
		od := olDataset{Namespace: d.Namespace, Name: s.Name(id)}
		if rich {
			od.Facets = map[string]any{"schema": schemaFacet(p.producer, d.Fields)}
		}
		out = append(out, od)
	}
	return out
}

// outputs lists the job's outputs; keep >= 0 limits them to the first keep (partial output of FAIL/ABORT).
// The output renamed by this run appears only on the rich (terminal) event, under its new name.
func (s *Stream) outputs(p *runPlan, rich bool, keep int) []olDataset {
	ids := p.job.Outputs
	if keep >= 0 && keep < len(ids) {
		ids = ids[:keep]
	}
	out := make([]olDataset, 0, len(ids))
	for k, id := range ids {
		if k == p.renamed && !rich {
			continue
		}
		out = append(out, s.output(p, k, id, rich))
	}
	return out
}

func (s *Stream) output(p *runPlan, k, id int, rich bool) olDataset {
	d := &s.w.Datasets[id]
	od := olDataset{Namespace: d.Namespace, Name: s.Name(id)}
	if !rich {
		return od
	}
	f := map[string]any{"schema": schemaFacet(p.producer, d.Fields),
		"dataSource": facet(p.producer, "1-0-1/DatasourceDatasetFacet.json#/$defs/DatasourceDatasetFacet",
			map[string]any{"name": d.Namespace, "uri": d.Namespace})}
	if cl := s.w.ColumnLineage(p.job.ID, k); cl != nil {
		f["columnLineage"] = s.columnFacet(p.producer, cl)
	}
	if k == p.renamed {
		s.stats.Renames++
		prev := od.Name
		od.Name = fmt.Sprintf("%s_r%d", prev, s.stats.Renames)
		if d.Platform == PlatformSnowflake {
			od.Name = strings.ToUpper(od.Name)
		}
		s.names[id] = od.Name
		f["lifecycleStateChange"] = facet(p.producer, "1-0-1/LifecycleStateChangeDatasetFacet.json#/$defs/LifecycleStateChangeDatasetFacet",
			map[string]any{"lifecycleStateChange": "RENAME",
				"previousIdentifier": map[string]any{"namespace": d.Namespace, "name": prev}})
	}
	od.Facets = f
	od.OutputFacets = map[string]any{"outputStatistics": facet(p.producer,
		"1-0-2/OutputStatisticsOutputDatasetFacet.json#/$defs/OutputStatisticsOutputDatasetFacet",
		map[string]any{"rowCount": 1000 + s.runs.IntN(1_000_000), "size": 1 << (16 + s.runs.IntN(12))})}
	return od
}

func (s *Stream) columnFacet(producer string, cl *ColumnMapping) map[string]any {
	fields := map[string]any{}
	for path, ins := range cl.Fields {
		fields[path] = map[string]any{"inputFields": s.inputFields(ins)}
	}
	return facet(producer, "1-2-0/ColumnLineageDatasetFacet.json#/$defs/ColumnLineageDatasetFacet",
		map[string]any{"fields": fields, "dataset": s.inputFields(cl.Dataset)})
}

func (s *Stream) inputFields(ins []InputField) []any {
	out := make([]any, 0, len(ins))
	for _, in := range ins {
		out = append(out, map[string]any{"namespace": s.w.Datasets[in.DatasetID].Namespace,
			"name": s.Name(in.DatasetID), "field": in.Field, "transformations": in.Transformations})
	}
	return out
}

// maybeSideEvents adds the occasional JobEvent (declared definition) and DatasetEvent (catalog update).
func (s *Stream) maybeSideEvents(p *runPlan) {
	j := p.job
	if s.runs.Float64() < s.w.Config.JobEventShare {
		at := p.end.Add(time.Second)
		e := &olEvent{EventTime: formatTime(at), Job: &olJob{Namespace: j.Namespace, Name: j.Name,
			Facets: jobFacets(p.producer, j, true)}, Inputs: s.inputs(p, false), Outputs: s.outputs(p, false, -1),
			Producer: p.producer, SchemaURL: JobEventSchemaURL}
		s.push(Event{Body: encode(e), Key: "job:" + j.Namespace + "/" + j.Name, Kind: KindJob, EventTime: at})
	}
	if s.runs.Float64() < s.w.Config.DatasetEventShare {
		at := p.end.Add(2 * time.Second)
		id := j.Outputs[0]
		d := &s.w.Datasets[id]
		ds := olDataset{Namespace: d.Namespace, Name: s.Name(id), Facets: map[string]any{
			"schema": schemaFacet(p.producer, d.Fields),
			"ownership": facet(p.producer, "1-0-1/OwnershipDatasetFacet.json#/$defs/OwnershipDatasetFacet",
				map[string]any{"owners": []any{map[string]any{"name": "team:" + pick(s.runs, domains), "type": "TEAM"}}})}}
		e := &olEvent{EventTime: formatTime(at), Dataset: &ds, Producer: p.producer, SchemaURL: DatasetEventSchemaURL}
		s.push(Event{Body: encode(e), Key: "dataset:" + ds.Namespace + "/" + ds.Name, Kind: KindDataset, EventTime: at})
	}
}
