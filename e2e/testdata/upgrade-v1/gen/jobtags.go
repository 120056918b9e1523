package main

import (
	"fmt"
	"net/http"
)

// jobTagsWorld is -world=v8: the v7 world and a job tags sequence on job tag_history_job that version 8 keeps as
// its latest facet only (../../upgrade-v8/README.md, ADR 0090): team=crm at minute 160 (t1), team=sales at 162
// (t2), team=crm at 164 (t3), sent t1, t3, t2 (ADR 0086's order-dependence case), then team=crm again at 166 (a
// repeated facet). Version 9's job tag log gives team=crm [160, 162) and [164, now), team=sales [162, 164), each
// set by the admin's events.
var jobTagsWorld bool

// jobTagsJob is the job of the sequence.
const jobTagsJob = "tag_history_job"

func (w *world) jobTagPosts() []post {
	jobs := w.fx + "-jobs"
	jobEvent := func(min int, team string) []byte {
		return []byte(fmt.Sprintf(`{"eventTime":%q,"producer":%q,"schemaURL":"%sJobEvent","job":{"namespace":%q,"name":%q,"facets":{%s}}}`,
			w.at(min), producer, schemaURL, jobs, jobTagsJob, tagsFacet(fmt.Sprintf(`{"key":"team","value":%q,"source":"dbt"}`, team))))
	}
	return []post{
		{"admin", jobEvent(160, "crm"), "job tags t1", http.StatusAccepted},
		{"admin", jobEvent(164, "crm"), "job tags t3 (before t2)", http.StatusAccepted},
		{"admin", jobEvent(162, "sales"), "job tags t2 (late)", http.StatusAccepted},
		{"admin", jobEvent(166, "crm"), "job tags repeated", http.StatusAccepted},
	}
}
