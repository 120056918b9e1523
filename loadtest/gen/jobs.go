package gen

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

const tasksPerDag = 8

// nameJob gives the job the namespace, name, type and parent/root its integration would report.
func (w *World) nameJob(j *Job, r *rand.Rand) {
	p, env := w.Config.Prefix, j.Env
	out := shortName(w.Datasets[j.Outputs[0]].Name)
	dom := pick(r, domains)
	j.Namespace = jobNamespace(p, j.Integration, env)
	switch j.Integration {
	case IntegrationAirflow:
		dag := fmt.Sprintf("%s_%s_dag_%04d", dom, layerTag[w.Datasets[j.Outputs[0]].Layer], j.ID/tasksPerDag)
		j.Name, j.JobType = dag+"."+pick(r, []string{"load_", "build_", "export_", "sync_"})+out, "TASK"
		j.ParentNS, j.ParentName, j.RootNS, j.RootName = j.Namespace, dag, j.Namespace, dag
		j.SourceLocation = fmt.Sprintf("https://git.example.com/data/airflow-dags/blob/main/dags/%s.py", dag)
	case IntegrationSpark:
		app := fmt.Sprintf("%s_etl_%05d", dom, j.ID)
		j.Name, j.JobType = app+".execute_insert_into_hadoop_fs_relation_command."+out, "JOB"
		if r.IntN(2) == 0 {
			dag := fmt.Sprintf("spark_pipelines_%04d", j.ID/tasksPerDag)
			j.ParentNS, j.ParentName = jobNamespace(p, IntegrationAirflow, env), dag+".submit_"+app
			j.RootNS, j.RootName = j.ParentNS, dag
		}
	case IntegrationDBT:
		project := dom + "_dbt"
		j.Name, j.JobType = "model."+project+"."+out, "MODEL"
		j.ParentNS, j.ParentName = j.Namespace, "dbt-run-"+project
		j.RootNS, j.RootName = j.ParentNS, j.ParentName
		j.SourceLocation = fmt.Sprintf("https://git.example.com/data/%s/blob/main/models/%s.sql", project, out)
	default:
		j.Name, j.JobType = dom+"_"+out+"_stream", "STREAMING"
	}
	if !j.Streaming {
		j.SQL = w.sqlFor(j)
	}
}

func (w *World) sqlFor(j *Job) string {
	var from []string
	for _, in := range j.Inputs {
		from = append(from, shortName(w.Datasets[in].Name))
	}
	return fmt.Sprintf("INSERT INTO %s SELECT * FROM %s", shortName(w.Datasets[j.Outputs[0]].Name),
		strings.Join(from, " JOIN "))
}

// shortName is the last segment of a dataset name.
func shortName(name string) string {
	if i := strings.LastIndexAny(name, "./"); i >= 0 {
		return name[i+1:]
	}
	return name
}

var fieldVocab = []Field{
	{"customer_id", "bigint"}, {"email", "varchar"}, {"amount", "decimal(18,2)"}, {"currency", "varchar"},
	{"created_at", "timestamp"}, {"updated_at", "timestamp"}, {"status", "varchar"}, {"country", "varchar"},
	{"order_id", "bigint"}, {"product_id", "bigint"}, {"quantity", "int"}, {"price", "decimal(18,2)"},
	{"discount", "decimal(5,2)"}, {"channel", "varchar"}, {"session_id", "varchar"}, {"phone", "varchar"},
	{"first_name", "varchar"}, {"last_name", "varchar"}, {"region", "varchar"}, {"segment", "varchar"},
	{"revenue", "decimal(18,2)"}, {"cost", "decimal(18,2)"}, {"event_type", "varchar"}, {"event_date", "date"},
	{"is_active", "boolean"}, {"score", "double"}, {"campaign_id", "bigint"}, {"ip_address", "varchar"},
}

// makeFields draws a schema: id first, then 3-15 distinct columns; some lake tables have a nested struct.
func makeFields(platform string, r *rand.Rand) []Field {
	n := minFieldsPerDataset + r.IntN(maxFieldsPerDataset-minFieldsPerDataset+1)
	fields := []Field{{"id", "bigint"}}
	perm := r.Perm(len(fieldVocab))
	for i := 0; len(fields) < n && i < len(perm); i++ {
		fields = append(fields, fieldVocab[perm[i]])
	}
	if platform == PlatformS3 && r.IntN(5) == 0 {
		fields = append(fields, Field{"payload.source", "varchar"}, Field{"payload.version", "int"})
	}
	return fields
}
