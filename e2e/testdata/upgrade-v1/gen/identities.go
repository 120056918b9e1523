package main

import (
	"fmt"
	"net/http"
	"strings"
)

// The upgrade-v2 world adds what projection version 3 stores in another form (docs/adr/0026-identity-in-answers.md):
// namespaces of schemes whose default port version 2 dropped (postgres, hive, mysql, hdfs, kafka), sent with and
// without the port; a rename and a symlink under them; an unresolved symlink; a DatasetEvent; a producer whose
// owned set the archive records in version 2's form; mixed-case names (Snowflake upper-cases, Postgres keeps
// case) for the case-insensitive search; and a grant made through the API on a portless namespace.

// tok is the upper-case token of the fixture that names its search targets ("UPGV2_1A2B3C4D").
func (w *world) tok() string { return strings.ToUpper(strings.ReplaceAll(w.fx, "-", "_")) }

func (w *world) wh() string    { return "postgres://" + w.fx + "-warehouse" }
func (w *world) hive() string  { return "hive://" + w.fx + "-metastore" }
func (w *world) mysql() string { return "mysql://" + w.fx + "-shop" }
func (w *world) hdfs() string  { return "hdfs://" + w.fx + "-nn" }
func (w *world) kafka() string { return "kafka://" + w.fx + "-b1:9092," + w.fx + "-b2:9093" }
func (w *world) sf() string    { return "snowflake://" + w.fx + "-acct" }
func (w *world) pga() string   { return "postgres://" + w.fx + "-pga" }

// orders is the search target's name part: "orders_<tok>" in lower case.
func (w *world) orders() string { return "orders_" + strings.ToLower(w.tok()) }

func (w *world) identityPosts() []post {
	jobs, wh, hive := w.fx+"-jobs", w.wh(), w.hive()
	rename := facet("lifecycleStateChange", fmt.Sprintf(`"lifecycleStateChange":"RENAME","previousIdentifier":{"namespace":%q,"name":"shop.public.customers_old"}`, wh))
	symlink := func(ns, name string) string {
		return facet("symlinks", fmt.Sprintf(`"identifiers":[{"namespace":%q,"name":%q,"type":"LOCATION"}]`, ns, name))
	}
	lineage := facet("columnLineage", fmt.Sprintf(`"fields":{"amount":{"inputFields":[{"namespace":%q,"name":"shop.Orders","field":"amount"}]}}`, w.mysql()+":3306"))
	doc := func(d string) string { return facet("documentation", fmt.Sprintf(`"description":%q`, d)) }
	loc := "/warehouse/" + w.orders()
	return []post{
		// written without the port, then renamed by an event that writes it
		{"admin", w.runEvent("", "COMPLETE", 121, jobs, "load_customers", w.run["pg1"], "", "",
			ds(wh, "shop.public.customers_old", schema("id:bigint"))), "postgres without port", http.StatusAccepted},
		{"admin", w.runEvent("", "COMPLETE", 122, jobs, "load_customers", w.run["pg2"], "", "",
			ds(wh+":5432", "shop.public.Customers", schema("id:bigint", "name:text")+","+rename)), "rename with port", http.StatusAccepted},
		// hive with the port, its HDFS location as a symlink without it, column lineage from mysql with the port
		{"admin", w.runEvent("", "COMPLETE", 123, jobs, "spark_orders", w.run["spark"], "",
			ds(wh+":5432", "shop.public.Customers", "")+","+ds(w.mysql()+":3306", "shop.Orders", schema("id:bigint", "amount:numeric")),
			ds(hive+":9083", "Default.Orders_"+strings.ToLower(w.tok()), schema("id:bigint", "amount:numeric")+","+symlink(w.hdfs(), loc)+","+lineage)),
			"hive", http.StatusAccepted},
		// Snowflake (upper-cased), reading the hive table without the port
		{"admin", w.runEvent("", "COMPLETE", 124, jobs, "sf_orders", w.run["sf"], "",
			ds(hive, "default."+w.orders(), ""), ds(w.sf(), "analytics.public."+w.orders(), schema("ID:number"))), "snowflake", http.StatusAccepted},
		{"admin", w.runEvent("", "COMPLETE", 125, jobs, "stream_orders", w.run["stream"], "",
			ds(w.sf(), "analytics.public.ORDERS_"+strings.ToLower(w.tok()), ""), ds(w.kafka(), "Orders."+w.tok(), "")), "kafka", http.StatusAccepted},
		// the same location, with the port, claimed by another dataset: an unresolved identity
		{"admin", w.runEvent("", "COMPLETE", 126, jobs, "steal", w.run["steal"], "", "",
			ds(wh, "shop.public.thief", symlink(w.hdfs()+":8020", loc))), "symlink conflict", http.StatusAccepted},
		{"admin", []byte(fmt.Sprintf(`{"eventTime":%q,"producer":%q,"schemaURL":"%sDatasetEvent","dataset":{"namespace":%q,"name":"shop.public.Customers","facets":{%s}}}`,
			w.at(127), producer, schemaURL, wh, doc("customers of the shop"))), "dataset event", http.StatusAccepted},
		// producer A owns postgres://<fx>-pga (policy file): the archive records it without the port
		{"producer-a", w.runEvent("", "COMPLETE", 128, w.fx+"-a", "own", w.run["own"], "", "",
			ds(w.pga()+":5432", "app.Owned", schema("x:int")+","+doc("the owner's words"))), "owned", http.StatusAccepted},
	}
}

// identityDatasets are the v2 world's datasets whose answers ids.json records, asked as version 2's answers named
// them (no port): version 3 must find each under that form too.
func (w *world) identityDatasets() [][2]string {
	return [][2]string{
		{w.wh(), "shop.public.Customers"}, {w.wh(), "shop.public.customers_old"}, {w.wh(), "shop.public.thief"},
		{w.hive(), "default." + w.orders()}, {w.mysql(), "shop.Orders"}, {w.hdfs(), "/warehouse/" + w.orders()},
		{w.sf(), "ANALYTICS.PUBLIC.ORDERS_" + w.tok()}, {w.sf(), "analytics.public." + w.orders()},
		{"kafka://" + w.fx + "-b1," + w.fx + "-b2:9093", "Orders." + w.tok()}, {w.pga(), "app.Owned"},
	}
}

// grantMutations are the GraphQL mutations that make a grant through the API on a namespace version 2 stores
// without its port: a reader role whose subject may describe the warehouse.
func (w *world) grantMutations() []string {
	role := w.fx + "-pg-reader"
	return []string{
		fmt.Sprintf(`mutation { createRole(name: %q) }`, role),
		fmt.Sprintf(`mutation { grant(grant: {role: %q, privilege: DESCRIBE, on: {namespace: %q}}) }`, role, w.wh()+":5432"),
		fmt.Sprintf(`mutation { bindRole(subject: %q, role: %q) }`, w.fx+"-reader", role),
	}
}
