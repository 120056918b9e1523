package main

import (
	"fmt"
	"net/http"
)

// tagsWorld is -world=v5: the upgrade-v2 world and tags facets whose history version 5 did not keep
// (../../upgrade-v5/README.md): mart/daily tagged `confidential` and `day:pii` at minute 72, then `confidential`
// only at minute 74 (the field tag removed); curated/orders_v2 tagged `pii` at minute 62 (on the rename run's
// successor, as a DatasetEvent) and then sent an empty tags facet at minute 64, which version 5 ignored and
// version 6 reads as removing every tag.
var tagsWorld bool

func tagsFacet(tags string) string {
	return facet("tags", `"tags":[`+tags+`]`)
}

func (w *world) datasetEvent(min int, ns, name, facets string) []byte {
	return []byte(fmt.Sprintf(`{"eventTime":%q,"producer":%q,"schemaURL":"%sDatasetEvent","dataset":{"namespace":%q,"name":%q,"facets":{%s}}}`,
		w.at(min), producer, schemaURL, ns, name, facets))
}

func (w *world) tagPosts() []post {
	lake := "s3://" + w.fx + "-lake"
	return []post{
		{"admin", w.datasetEvent(72, lake, "mart/daily", tagsFacet(`{"key":"confidential","source":"governance"},{"key":"pii","field":"day","source":"governance"}`)),
			"tag mart/daily", http.StatusAccepted},
		{"admin", w.datasetEvent(74, lake, "mart/daily", tagsFacet(`{"key":"confidential","source":"governance"}`)),
			"untag mart/daily.day", http.StatusAccepted},
		{"admin", w.datasetEvent(62, lake, "curated/orders_v2", tagsFacet(`{"key":"pii","source":"dbt"}`)),
			"tag curated/orders_v2", http.StatusAccepted},
		{"admin", w.datasetEvent(64, lake, "curated/orders_v2", tagsFacet(``)),
			"empty tags facet on curated/orders_v2", http.StatusAccepted},
	}
}

// blocksWorld is -world=v6: the v5 world and headwater_governance_block facets version 6 kept as an opaque facet
// (../../upgrade-v6/README.md): mart/daily blocks its field day and the edge into total from
// curated/orders_v2.amount through the daily job at minute 76, then the edge block only at minute 78.
var blocksWorld bool

func blocksFacet(blocks string) string {
	return facet("headwater_governance_block", `"blocks":[`+blocks+`]`)
}

func (w *world) blockPosts() []post {
	lake := "s3://" + w.fx + "-lake"
	edge := fmt.Sprintf(`{"field":"total","edge":{"job":{"namespace":%q,"name":"daily"},"from":{"namespace":%q,"name":"curated/orders_v2","field":"amount"}},"by":"governance","reason":"the total is recomputed from masked amounts"}`,
		w.fx+"-jobs", lake)
	return []post{
		{"admin", w.datasetEvent(76, lake, "mart/daily", blocksFacet(`{"field":"day","by":"governance","reason":"day is generalised downstream"},`+edge)),
			"block mart/daily.day and an edge into total", http.StatusAccepted},
		{"admin", w.datasetEvent(78, lake, "mart/daily", blocksFacet(edge)),
			"unblock mart/daily.day", http.StatusAccepted},
	}
}
