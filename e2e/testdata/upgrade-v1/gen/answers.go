package main

import (
	"fmt"
	"strings"
)

// Datasets and jobs whose public ids version 1 answered are recorded in ids.json.
func (w *world) datasets() [][2]string {
	lake, wh := "s3://"+w.fx+"-lake", "postgres://"+w.fx+"-warehouse:5432"
	return [][2]string{
		{"postgres://" + w.fx + "-orders-db:5432", "shop.public.orders"},
		{lake, "raw/orders"}, {lake, "curated/orders_v2"}, {lake, "curated/orders"}, {lake, "mart/daily"}, {lake, "export/daily"},
		{wh, "analytics.public.orders_clean"}, {wh, "analytics.public.revenue"}, {wh, "analytics.public.revenue_experiment"},
		{"s3://" + w.fx + "-a", "out"}, {"s3://" + w.fx + "-b", "loot"},
	}
}

// maskChangeDatasets and maskChangeJobs are the -world=v9 additions to them (maskchange.go).
func (w *world) maskChangeDatasets() [][2]string {
	lake := "s3://" + w.fx + "-lake"
	return [][2]string{{lake, maskChangeInput}, {lake, maskChangeOutput}}
}

func (w *world) jobs() [][2]string {
	j := w.fx + "-jobs"
	return [][2]string{
		{w.fx + "-airflow", "shop_etl.extract_orders"}, {w.fx + "-spark", "clean_orders"}, {w.fx + "-spark", "revenue_experiment"},
		{w.fx + "-dbt", "analytics.marts.revenue"}, {j, "curate"}, {j, "publish_mart"}, {j, "nightly"}, {j, "nightly.load"}, {j, "nightly.audit"},
		{w.fx + "-a", "victim"}, {w.fx + "-b", "evil"},
	}
}

func (w *world) maskChangeJobs() [][2]string { return [][2]string{{w.fx + "-jobs", maskChangeJob}} }

const datasetQuery = `query($ns: String!, $name: String!) { dataset(namespace: $ns, name: $name) {
	id namespace name currentNamespace currentName resolvedFrom { namespace name }
	fields { id path type validFrom validTo } } }`

const jobQuery = `query($ns: String!, $name: String!) { job(namespace: $ns, name: $name) {
	id namespace name version { id definitionHash }
	runs(first: 50) { nodes { id runId state parent { runId } events { eventId eventType } outputs { dataset { id } publication } } } } }`

const lineageQuery = `query($ns: String!, $name: String!) { lineage(start: {dataset: {namespace: $ns, name: $name}},
	direction: UPSTREAM, depth: 5, granularity: FIELD, includeAttempted: true) { nodes { id } edges { from to validFrom validTo } } }`

// answers asks version 1's GraphQL API, as the administrator, about every dataset and job of the world, the run
// two jobs shared, and the column lineage of the demo's mart.
func (w *world) answers(api string, tokens map[string]string) (map[string]any, error) {
	tok := tokens["admin"]
	out := map[string]any{}
	var dss, jobs []any
	all := w.datasets()
	if w.identities {
		all = append(all, w.identityDatasets()...)
	}
	if maskChangeWorld {
		all = append(all, w.maskChangeDatasets()...)
	}
	for _, d := range all {
		a, err := gql(api, tok, datasetQuery, map[string]any{"ns": d[0], "name": d[1]})
		if err != nil && !strings.Contains(err.Error(), "NOT_FOUND") {
			return nil, fmt.Errorf("dataset %v: %w", d, err)
		}
		// s3://<fx>-a/out is written only by the event version 1 never projected (its id was squatted): not found
		dss = append(dss, map[string]any{"ask": d, "answer": a["dataset"]})
	}
	allJobs := w.jobs()
	if maskChangeWorld {
		allJobs = append(allJobs, w.maskChangeJobs()...)
	}
	for _, j := range allJobs {
		a, err := gql(api, tok, jobQuery, map[string]any{"ns": j[0], "name": j[1]})
		if err != nil {
			return nil, fmt.Errorf("job %v: %w", j, err)
		}
		if a["job"] == nil {
			return nil, fmt.Errorf("job %v: not found", j)
		}
		jobs = append(jobs, map[string]any{"ask": j, "answer": a["job"]})
	}
	out["datasets"], out["jobs"] = dss, jobs
	// Version 1 answered "the" run of the runId two jobs shared; version 2 answers BAD_REQUEST (name the job).
	r, err := gql(api, tok, `query($id: ID!) { run(id: $id) { id runId state job { namespace name } events { eventId eventType } } }`,
		map[string]any{"id": w.run["victim"]})
	if err != nil && !(w.identities && strings.Contains(err.Error(), "BAD_REQUEST")) {
		return nil, err
	}
	out["sharedRun"] = r["run"]
	l, err := gql(api, tok, lineageQuery, map[string]any{"ns": "postgres://" + w.fx + "-warehouse:5432", "name": "analytics.public.revenue"})
	if err != nil {
		return nil, err
	}
	out["lineage"] = l["lineage"]
	if w.identities {
		if err := w.identityAnswers(api, tokens, out); err != nil {
			return nil, err
		}
	}
	if maskChangeWorld {
		if err := w.maskChangeAnswers(api, tokens, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

const searchQuery = `query($q: String!) { search(query: $q, first: 50) { nodes { ... on Dataset { id namespace name } } } }`

// identityAnswers records what version 2 answered to the searches the upgrade-v2 test repeats (case-sensitive
// then), the column lineage of the hive table (from mysql, named with its port), and what the API-granted reader
// could describe.
func (w *world) identityAnswers(api string, tokens map[string]string, out map[string]any) error {
	search := map[string]any{}
	for _, q := range []string{w.orders(), strings.ToUpper(w.orders()), "Orders_" + strings.ToLower(w.tok())} {
		a, err := gql(api, tokens["admin"], searchQuery, map[string]any{"q": q})
		if err != nil {
			return fmt.Errorf("search %s: %w", q, err)
		}
		search[q] = a["search"]
	}
	out["search"] = search
	l, err := gql(api, tokens["admin"], lineageQuery, map[string]any{"ns": w.hive(), "name": "default." + w.orders()})
	if err != nil {
		return err
	}
	out["identityLineage"] = l["lineage"]
	r, err := gql(api, tokens["reader"], datasetQuery, map[string]any{"ns": w.wh(), "name": "shop.public.Customers"})
	if err != nil {
		return fmt.Errorf("reader: %w", err)
	}
	out["readerDataset"] = r["dataset"]
	return nil
}
