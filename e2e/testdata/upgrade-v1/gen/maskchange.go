package main

import (
	"fmt"
	"net/http"
)

// maskChangeWorld is -world=v9: the v8 world and a masking change on one column edge that version 9 keeps as its
// latest run's transformations only (../../upgrade-v9/README.md, ADR 0091): job mask_change_job runs three times
// (START at minutes 170, 172 and 174, COMPLETE a minute later), reading crm/customers (email, id) and writing
// crm/customers_masked (email_h, id), each event with the column lineage facet on the output. Run 1 reports
// email_h <- email DIRECT IDENTITY, runs 2 and 3 DIRECT TRANSFORMATION masking ("sha256"); id <- id is DIRECT
// IDENTITY in every run. Version 10's transformation history of the email_h edge is IDENTITY [170, 172), then the
// masking: an asOf of minute 171 answers IDENTITY.
var maskChangeWorld bool

// The job and datasets of the sequence.
const (
	maskChangeJob    = "mask_change_job"
	maskChangeInput  = "crm/customers"
	maskChangeOutput = "crm/customers_masked"
)

// maskChangeRuns names the runs' world keys (their runIds are drawn by newWorld).
var maskChangeRuns = []string{"mask1", "mask2", "mask3"}

func (w *world) maskChangePosts() []post {
	lake, jobs := "s3://"+w.fx+"-lake", w.fx+"-jobs"
	identity := `{"type":"DIRECT","subtype":"IDENTITY","masking":false}`
	hashed := `{"type":"DIRECT","subtype":"TRANSFORMATION","masking":true,"description":"sha256"}`
	col := func(out, in, tt string) string {
		return fmt.Sprintf(`%q:{"inputFields":[{"namespace":%q,"name":%q,"field":%q,"transformations":[%s]}]}`,
			out, lake, maskChangeInput, in, tt)
	}
	in := ds(lake, maskChangeInput, schema("email:text", "id:bigint"))
	var out []post
	for i, run := range maskChangeRuns {
		email := hashed
		if i == 0 {
			email = identity
		}
		outDS := ds(lake, maskChangeOutput, schema("email_h:text", "id:bigint")+","+
			facet("columnLineage", `"fields":{`+col("email_h", "email", email)+","+col("id", "id", identity)+`}`))
		start := 170 + 2*i
		out = append(out,
			post{"admin", w.runEvent("", "START", start, jobs, maskChangeJob, w.run[run], "", in, outDS),
				fmt.Sprintf("mask change run %d start", i+1), http.StatusAccepted},
			post{"admin", w.runEvent("", "COMPLETE", start+1, jobs, maskChangeJob, w.run[run], "", in, outDS),
				fmt.Sprintf("mask change run %d complete", i+1), http.StatusAccepted})
	}
	return out
}

// maskChangeLineageQuery is the column lineage of the masked output's email_h, one hop upstream, at $asOf.
const maskChangeLineageQuery = `query($ns: String!, $asOf: Time) { lineage(start: {field: {namespace: $ns, name: "` +
	maskChangeOutput + `", field: "email_h"}}, direction: UPSTREAM, depth: 1, granularity: FIELD, asOf: $asOf) {
	edges { from to validFrom validTo transformations { type subtype masking description } } } }`

// maskChangeAnswers records what the binary answered for email_h's upstream column edge at minutes 171 and 175.
func (w *world) maskChangeAnswers(api string, tokens map[string]string, out map[string]any) error {
	m := map[string]any{}
	for _, min := range []int{171, 175} {
		a, err := gql(api, tokens["admin"], maskChangeLineageQuery, map[string]any{"ns": "s3://" + w.fx + "-lake", "asOf": w.at(min)})
		if err != nil {
			return fmt.Errorf("mask change lineage at %d: %w", min, err)
		}
		m[fmt.Sprint(min)] = a["lineage"]
	}
	out["maskChange"] = m
	return nil
}
