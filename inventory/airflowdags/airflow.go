// Package airflowdags reads what Airflow says it schedules into expected jobs: the output of
// `airflow dags list -o json` with `airflow tasks list <dag>` per DAG, or the REST API's JSON (GET /api/v2/dags
// and GET /api/v2/dags/{dag_id}/tasks; /api/v1 shapes too), wrapped in one document:
//
//	{"dags": <dags list output, or the REST answer>,
//	 "tasks": {"<dag_id>": <tasks list output as text, a list of task ids, or the REST answer>}}
//
// Each task is one expected job named `<dag_id>.<task_id>`, the name the OpenLineage provider reports; a DAG
// without a task listing is one expected job named `<dag_id>` (the DAG run's job). The schedule is the DAG's
// (timetable_summary, schedule_interval or schedule), paused DAGs are expected not to run, criticality is a
// `criticality:<value>` tag, owner the DAG's owners, and expected outputs the task's outlets (Assets) when the
// listing has them. The package is pure.
package airflowdags

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/headwater-data/headwater/inventory"
)

// Document is the wrapper the registry reads.
type Document struct {
	Dags  json.RawMessage            `json:"dags"`
	Tasks map[string]json.RawMessage `json:"tasks"`
}

// Dag is one DAG as any of the accepted shapes describe it.
type Dag struct {
	DagID            string          `json:"dag_id"`
	IsPaused         any             `json:"is_paused"` // bool, or "True"/"False" in some CLI versions
	Owners           any             `json:"owners"`    // a list, or a comma-separated string
	Tags             []any           `json:"tags"`      // strings or {"name": ...}
	TimetableSummary *string         `json:"timetable_summary"`
	ScheduleInterval json.RawMessage `json:"schedule_interval"`
	Schedule         json.RawMessage `json:"schedule"`
}

// Task is one task of a DAG.
type Task struct {
	TaskID  string `json:"task_id"`
	Outlets []any  `json:"outlets"`
}

// Read decodes the wrapper document into expected jobs in jobNamespace (the provider's
// AIRFLOW__OPENLINEAGE__NAMESPACE; required).
func Read(r io.Reader, jobNamespace string) ([]inventory.Job, error) {
	if jobNamespace == "" {
		return nil, fmt.Errorf("jobNamespace: required for an Airflow listing (AIRFLOW__OPENLINEAGE__NAMESPACE)")
	}
	var doc Document
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		return nil, fmt.Errorf("airflow: not a JSON document: %w", err)
	}
	dags, err := decodeDags(doc.Dags)
	if err != nil {
		return nil, err
	}
	var out []inventory.Job
	for i, d := range dags {
		jobs, err := dagJobs(d, doc.Tasks[d.DagID], jobNamespace)
		if err != nil {
			return nil, fmt.Errorf("dags[%d] (%s): %w", i, d.DagID, err)
		}
		out = append(out, jobs...)
	}
	return out, nil
}

func decodeDags(raw json.RawMessage) ([]Dag, error) {
	var list []Dag
	if err := json.Unmarshal(raw, &list); err == nil {
		return list, nil
	}
	var page struct {
		Dags []Dag `json:"dags"`
	}
	if err := json.Unmarshal(raw, &page); err != nil || page.Dags == nil {
		return nil, fmt.Errorf("dags: must be the `airflow dags list -o json` output or the REST API's {\"dags\": [...]}")
	}
	return page.Dags, nil
}

func dagJobs(d Dag, rawTasks json.RawMessage, ns string) ([]inventory.Job, error) {
	if d.DagID == "" {
		return nil, fmt.Errorf("dag_id: required")
	}
	sched := d.schedule()
	interval, err := inventory.ParseSchedule(sched)
	if err != nil {
		return nil, err
	}
	base := inventory.Job{Namespace: ns, Type: "airflow task", Criticality: d.criticality(), Owner: d.owner(),
		Schedule: sched, Interval: interval, Paused: truthy(d.IsPaused)}
	tasks, err := decodeTasks(rawTasks)
	if err != nil {
		return nil, err
	}
	if len(tasks) == 0 {
		j := base
		j.Name, j.Type = d.DagID, "airflow dag"
		return []inventory.Job{j}, nil
	}
	out := make([]inventory.Job, 0, len(tasks))
	for _, t := range tasks {
		j := base
		j.Name = d.DagID + "." + t.TaskID
		j.Outputs = outlets(t.Outlets)
		out = append(out, j)
	}
	return out, nil
}

// decodeTasks accepts the `airflow tasks list` text (one id a line), a list of ids or of task objects, or the
// REST answer {"tasks": [...]}.
func decodeTasks(raw json.RawMessage) ([]Task, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var text string
	if err := json.Unmarshal(raw, &text); err == nil {
		var out []Task
		for line := range strings.SplitSeq(text, "\n") {
			if id := strings.TrimSpace(line); id != "" {
				out = append(out, Task{TaskID: id})
			}
		}
		return out, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		var page struct {
			Tasks []json.RawMessage `json:"tasks"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return nil, fmt.Errorf("tasks: must be the `airflow tasks list` output, a list, or the REST API's {\"tasks\": [...]}")
		}
		items = page.Tasks
	}
	out := make([]Task, 0, len(items))
	for _, it := range items {
		var t Task
		if err := json.Unmarshal(it, &t.TaskID); err != nil {
			if err := json.Unmarshal(it, &t); err != nil || t.TaskID == "" {
				return nil, fmt.Errorf("tasks: an entry has no task_id")
			}
		}
		out = append(out, t)
	}
	return out, nil
}

// schedule is the DAG's schedule text: timetable_summary (Airflow 3), else schedule_interval or schedule
// (a string, {"__type": "CronExpression", "value": ...} or {"__type": "TimeDelta", "days": .., "seconds": ..}).
func (d Dag) schedule() string {
	if d.TimetableSummary != nil {
		return *d.TimetableSummary
	}
	for _, raw := range []json.RawMessage{d.ScheduleInterval, d.Schedule} {
		if s := scheduleText(raw); s != "" {
			return s
		}
	}
	return ""
}

func scheduleText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var v struct {
		Type    string  `json:"__type"`
		Value   string  `json:"value"`
		Days    float64 `json:"days"`
		Seconds float64 `json:"seconds"`
	}
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	if v.Type == "TimeDelta" {
		return (time.Duration(v.Days*24*float64(time.Hour)) + time.Duration(v.Seconds*float64(time.Second))).String()
	}
	return v.Value
}

func (d Dag) tags() []string {
	var out []string
	for _, t := range d.Tags {
		switch v := t.(type) {
		case string:
			out = append(out, v)
		case map[string]any:
			if s, ok := v["name"].(string); ok {
				out = append(out, s)
			}
		}
	}
	slices.Sort(out)
	return out
}

func (d Dag) criticality() string {
	for _, t := range d.tags() {
		for _, sep := range []string{":", "="} {
			if v, ok := strings.CutPrefix(t, "criticality"+sep); ok && v != "" {
				return v
			}
		}
	}
	return ""
}

func (d Dag) owner() string {
	switch v := d.Owners.(type) {
	case string:
		return v
	case []any:
		var out []string
		for _, o := range v {
			if s, ok := o.(string); ok {
				out = append(out, s)
			}
		}
		return strings.Join(out, ",")
	}
	return ""
}

func truthy(v any) bool {
	switch b := v.(type) {
	case bool:
		return b
	case string:
		return strings.EqualFold(b, "true")
	}
	return false
}

// outlets maps Asset URIs to datasets as the OpenLineage provider names them: file:///p is namespace "file",
// name "/p"; scheme://authority/path is namespace "scheme://authority", name "path".
func outlets(in []any) []inventory.Dataset {
	var out []inventory.Dataset
	for _, o := range in {
		uri, _ := o.(string)
		if m, ok := o.(map[string]any); ok {
			uri, _ = m["uri"].(string)
		}
		if ds, ok := assetDataset(uri); ok {
			out = append(out, ds)
		}
	}
	return out
}

func assetDataset(uri string) (inventory.Dataset, bool) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme == "" {
		return inventory.Dataset{}, false
	}
	if u.Scheme == "file" {
		return inventory.Dataset{Namespace: "file", Name: u.Path}, u.Path != ""
	}
	name := strings.TrimPrefix(u.Path, "/")
	return inventory.Dataset{Namespace: u.Scheme + "://" + u.Host, Name: name}, name != ""
}
