#!/usr/bin/env bash
# The main job: starts the real stack and Headwater, sends a small real lineage (Airflow -> Spark -> dbt, with
# column lineage, a duplicate, out-of-order events and a failed run) through the public HTTP gateway, waits
# until Kafka -> consumer -> Neo4j has projected it, and prints GraphQL answers served from Neo4j: the lineage, the
# column-level lineage, and a piiFlow of the pii tag the extract sets on a column (stopped where the Spark job hashes it).
#   scripts/demo.sh        run it (idempotent: reuses a running stack and server)
#   scripts/demo.sh stop   stop Headwater and the stack
set -euo pipefail
cd "$(dirname "$0")/.."
STATE=${HEADWATER_STATE_DIR:-$PWD/.state}
API=${HEADWATER_DEMO_API:-http://127.0.0.1:8080}
PIDF=$STATE/headwater.pid
log() { printf 'demo: %s\n' "$*" >&2; }
die() { printf 'demo: error: %s\n' "$*" >&2; exit 1; }

if [ "${1:-}" = stop ]; then
  if [ -f "$PIDF" ] && kill -0 "$(cat "$PIDF")" 2>/dev/null; then kill "$(cat "$PIDF")"; log "headwater stopped"; fi
  rm -f "$PIDF"; scripts/stack/stack.sh down; exit 0
fi

# The demo needs no Iceberg catalog: start the three servers it uses (the full stack is `make test`'s).
HEADWATER_STACK_ONLY=${HEADWATER_STACK_ONLY:-redis kafka neo4j} scripts/stack/stack.sh up
[ -x bin/headwater ] || go build -o bin/headwater ./cmd/headwater
bin/headwater migrate --log-format=text 2>&1 | tail -n 1 >&2

if curl -fsS "$API/healthz" >/dev/null 2>&1; then
  log "headwater already running at $API"
else
  mkdir -p "$STATE/logs"
  HEADWATER_ARCHIVE_DIR=$STATE/archive nohup bin/headwater serve --log-format=text \
    --authz-policy-file=demo/policy.yaml --authz-policy-source=demo >"$STATE/logs/headwater.log" 2>&1 &
  echo $! >"$PIDF"
  for _ in $(seq 1 60); do curl -fsS "$API/readyz" >/dev/null 2>&1 && break; sleep 1; done
  curl -fsS "$API/readyz" >/dev/null || { tail -n 30 "$STATE/logs/headwater.log" >&2; die "headwater did not become ready; see $STATE/logs/headwater.log"; }
  log "headwater serving at $API (log: $STATE/logs/headwater.log)"
fi

# Every request is authenticated: API tokens for the demo's producer and analyst (roles in demo/policy.yaml).
PRODUCER_TOKEN=$(bin/headwater token create --owner demo-producer --kind producer --description "make demo" --expires-in 24h --log-level=warn)
ANALYST_TOKEN=$(bin/headwater token create --owner demo-analyst --kind user --description "make demo" --expires-in 24h --log-level=warn)
code=$(curl -sS -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' --data-binary '{"query":"{ __typename }"}' "$API/graphql")
log "GraphQL without a token -> $code (every request but health and GraphiQL needs a principal)"

# Fill the templates: fresh run ids and event times in the last hour, so every demo run adds new runs.
uuid() { python3 -c 'import uuid; print(uuid.uuid4())'; }
ts() { date -u -d "$1" +%Y-%m-%dT%H:%M:%S.000Z; }
RUN_A=$(uuid); RUN_B=$(uuid); RUN_C=$(uuid); RUN_D=$(uuid)
T0=$(ts '-50 min'); T1=$(ts '-45 min'); T2=$(ts '-40 min'); T3=$(ts '-30 min'); T4=$(ts '-20 min'); T5=$(ts '-10 min')
fill() {
  sed -e "s/__RUN_A__/$RUN_A/g; s/__RUN_B__/$RUN_B/g; s/__RUN_C__/$RUN_C/g; s/__RUN_D__/$RUN_D/g" \
      -e "s/__T0__/$T0/g; s/__T1__/$T1/g; s/__T2__/$T2/g; s/__T3__/$T3/g; s/__T4__/$T4/g; s/__T5__/$T5/g" "demo/events/$1"
}
post() { # file [extra curl args]
  local f=$1; shift
  local out; out=$(fill "$f" | curl -sS -o /tmp/hw-demo-body -w '%{http_code}' -H 'Content-Type: application/json' \
    -H "Authorization: Bearer $PRODUCER_TOKEN" "$@" --data-binary @- "$API/api/v1/lineage") || true
  printf 'demo: POST %-26s -> %s %s\n' "$f" "$out" "$(head -c 160 /tmp/hw-demo-body)" >&2
  [[ "$out" == 2* ]] || die "gateway refused $f"
}
# Out of order on purpose: the dbt COMPLETE before its START, a duplicate, and one gzip-compressed body.
post 02-extract-complete.json
post 01-extract-start.json
post 02-extract-complete.json
post 04-clean-complete.json
post 03-clean-start.json
post 06-revenue-complete.json
fill 05-revenue-start.json | gzip -c >/tmp/hw-demo-05.gz
code=$(curl -sS -o /tmp/hw-demo-body -w '%{http_code}' -H 'Content-Type: application/json' -H 'Content-Encoding: gzip' \
  -H "Authorization: Bearer $PRODUCER_TOKEN" --data-binary @/tmp/hw-demo-05.gz "$API/api/v1/lineage")
printf 'demo: POST %-26s -> %s %s\n' "05-revenue-start.json (gzip)" "$code" "$(head -c 160 /tmp/hw-demo-body)" >&2
post 07-experiment-fail.json

QUERY='query Demo($ns: String!, $name: String!) {
  lineage(start: {dataset: {namespace: $ns, name: $name}}, direction: UPSTREAM, depth: 3) {
    truncated permissionsFiltered
    nodes { id __typename ... on Dataset { namespace name } ... on Job { namespace name } }
    edges { from to job { namespace name } validFrom evidence { kind runState publication observedAt } }
    gaps { kind message }
  }
}'
body=$(python3 -c 'import json,sys; print(json.dumps({"query": sys.argv[1], "variables": {"ns": "postgres://warehouse:5432", "name": "analytics.public.revenue"}}))' "$QUERY")
log "waiting for the consumer to project the events into Neo4j"
for i in $(seq 1 60); do
  ans=$(curl -sS -H 'Content-Type: application/json' -H "Authorization: Bearer $ANALYST_TOKEN" --data-binary "$body" "$API/graphql" || true)
  n=$(python3 -c 'import json,sys
try:
  d=json.loads(sys.argv[1]); print(sum(1 for x in d["data"]["lineage"]["nodes"] if x.get("__typename")=="Dataset"))
except Exception: print(0)' "$ans")
  [ "$n" -ge 4 ] && break
  sleep 1
done
[ "${n:-0}" -ge 4 ] || { echo "$ans" >&2; die "lineage not visible after 60s; see $STATE/logs/headwater.log"; }
echo
echo "GraphiQL:  $API/graphiql     metrics: http://127.0.0.1:9090/metrics"
echo "Explorer:  $API/explore/?ns=postgres%3A%2F%2Fwarehouse%3A5432&name=analytics.public.revenue&dir=UPSTREAM&depth=3&level=column"
echo "           (sign in with the analyst token printed at the end; docs/explorer.md)"
echo "Upstream lineage of postgres://warehouse:5432 analytics.public.revenue (depth 3), served from Neo4j:"
python3 - "$ans" <<'PY'
import json, sys
d = json.loads(sys.argv[1])["data"]["lineage"]
names = {n["id"]: (n["__typename"], n.get("namespace"), n.get("name")) for n in d["nodes"]}
for t, ns, nm in sorted(set(names.values())):
    print(f"  {t:8} {ns} {nm}")
print("  edges:")
for e in d["edges"]:
    f, t = names.get(e["from"], ("?", "?", e["from"])), names.get(e["to"], ("?", "?", e["to"]))
    ev = ", ".join(f'{x["kind"]}/{x.get("runState")}/{x.get("publication")}' for x in e["evidence"])
    job = e["job"]["name"] if e.get("job") else "-"
    print(f"    {f[2]}  ->  {t[2]}   via {job}  [{ev}]")
print("  truncated:", d["truncated"], " gaps:", [g["kind"] for g in d["gaps"]] or "none")
PY

FQUERY='query Field($ns: String!, $name: String!, $field: String!) {
  lineage(start: {field: {namespace: $ns, name: $name, field: $field}}, direction: UPSTREAM, depth: 5, granularity: FIELD) {
    nodes { id __typename ... on Field { path dataset { name } } }
    edges { from to job { name } transformations { type subtype masking description } }
    gaps { kind message }
  }
}'
fbody=$(python3 -c 'import json,sys; print(json.dumps({"query": sys.argv[1], "variables": {"ns": "postgres://warehouse:5432", "name": "analytics.public.revenue", "field": "revenue"}}))' "$FQUERY")
fans=$(curl -sS -H 'Content-Type: application/json' -H "Authorization: Bearer $ANALYST_TOKEN" --data-binary "$fbody" "$API/graphql")
echo
echo "Column-level: where does analytics.public.revenue.revenue come from, through which transformations?"
python3 - "$fans" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
if d.get("errors"):
    print("  error:", d["errors"][0].get("message")); sys.exit(0)
d = d["data"]["lineage"]
names = {n["id"]: f'{n["dataset"]["name"]}.{n["path"]}' for n in d["nodes"] if n["__typename"] == "Field"}
for e in d["edges"]:
    tr = ", ".join(f'{t["type"]}/{t["subtype"]}' + (" masked" if t["masking"] else "") + (f' ({t["description"]})' if t.get("description") else "") for t in e["transformations"])
    print(f'  {names.get(e["from"], e["from"])}  ->  {names.get(e["to"], e["to"])}   via {e["job"]["name"] if e.get("job") else "-"}  [{tr}]')
PY
PQUERY='query Pii($ns: String!, $name: String!, $field: String!) {
  piiFlow(tag: "pii", from: {field: {namespace: $ns, name: $name, field: $field}}) {
    origins { field { path dataset { name } } tags { name } }
    reached { field { path dataset { name } } effect distance path { rule explanation } }
    stops { field { path dataset { name } } reason message next { path dataset { name } } }
    truncated gaps { kind message }
  }
}'
pbody=$(python3 -c 'import json,sys; print(json.dumps({"query": sys.argv[1], "variables": {"ns": "s3://demo-lake", "name": "raw/orders", "field": "customer_email"}}))' "$PQUERY")
pans=$(curl -sS -H 'Content-Type: application/json' -H "Authorization: Bearer $ANALYST_TOKEN" --data-binary "$pbody" "$API/graphql")
echo
echo "Governance: where does the pii tag the extract set on raw/orders.customer_email go (piiFlow; docs/governance.md)?"
python3 - "$pans" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
if d.get("errors"):
    print("  error:", d["errors"][0].get("message")); sys.exit(0)
d = d["data"]["piiFlow"]
fq = lambda f: f'{f["dataset"]["name"]}.{f["path"]}' if f else "-"
for o in d["origins"]:
    print(f'  origin   {fq(o["field"])}  tags: {", ".join(t["name"] for t in o["tags"])}')
for r in d["reached"]:
    print(f'  reached  {fq(r["field"])}  {r["effect"]} at distance {r["distance"]}: {"; ".join(s["explanation"] for s in r["path"])}')
for s in d["stops"]:
    print(f'  stopped  {fq(s["field"])} -> {fq(s.get("next"))}  {s["reason"]}: {s["message"]}')
if not d["reached"] and not d["stops"]:
    print("  (the tag went nowhere)")
print("  truncated:", d["truncated"], " gaps:", [g["kind"] for g in d["gaps"]] or "none")
PY

echo
echo "Ask it yourself (the analyst token is valid for 24 h):"
echo "  curl -s -H 'Content-Type: application/json' -H 'Authorization: Bearer $ANALYST_TOKEN' --data-binary '$body' $API/graphql"
