# Headwater — the two commands a newcomer needs:
#   make demo   start the real stack (Neo4j, Kafka, Redis) and Headwater, load a demo lineage, print an answer
#   make test   start the real stack and run every test against it
SHELL := /bin/bash
GO    ?= go
STACK := scripts/stack/stack.sh
BIN   := bin/headwater
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)

.PHONY: producers all build demo demo-stop test unit check-generated generate stack-up stack-down stack-status bench vet lint race explorer explorer-build fuzz

all: build

build:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/headwater

stack-up:
	$(STACK) up

stack-down:
	$(STACK) down

stack-status:
	$(STACK) status

## demo: the main job. Stack + migrate + serve + demo events through the HTTP gateway + a GraphQL lineage answer.
demo: build
	scripts/demo.sh

demo-stop:
	scripts/demo.sh stop

## generate: regenerate gqlgen code into resolvers/.
generate:
	$(GO) run github.com/99designs/gqlgen generate

## check-generated: fail when regenerating changes anything (generated code must be committed as generated).
check-generated:
	scripts/check-generated.sh

vet:
	$(GO) vet ./...

## explorer: the lineage explorer's front end (web/explorer, docs/explorer.md): `npm ci` when the lock changed, a
## rebuild that must give the committed web/explorer/dist (the binary embeds it), and the graph-model unit tests.
## Its browser tests run in `go test ./e2e` (TestExplorerInChromium, Debian chromium installed when missing).
explorer:
	scripts/explorer.sh check
	scripts/explorer.sh unit

## explorer-build: rebuild web/explorer/dist after changing the explorer's sources (commit the result).
explorer-build:
	scripts/explorer.sh build

## lint: golangci-lint (pinned, installed into .state/bin by scripts/lint.sh) with .golangci.yml: the layering
## rules of docs/architecture.md (depguard), staticcheck, unused, errorlint, errcheck, unparam, modernize, promlinter.
lint:
	scripts/lint.sh

## race: the race detector over the packages whose tests need no servers. loadtest/gen is left out: its
## generator tests take ~50 s under -race and run no goroutines of their own.
RACE_PKGS := ./ingest/normalize ./ingest/olevent/... ./internal/ttlcache ./ingest/ownership ./ingest/identcheck \
	./ingest/archive ./ingest/producecheck ./loadtest/report ./loadtest/drive
# The server-free authz packages (ADR 0029): the seam, the grant model, the evaluator, the policy file, the audit queue.
RACE_PKGS += ./authz ./authz/grant ./authz/grantpolicy ./authz/policyfile ./authz/audit
# The GraphQL request guards' unit tests (the byte-bounded LRU; ADR 0033).
RACE_PKGS += ./resolvers/guard
race:
	$(GO) test -race -count=1 $(RACE_PKGS)

## fuzz: a short run of each fuzz target (FUZZTIME each, default 10s; ADR 0048): the event decoder, the
## namespace/name canonicaliser, the lineage query's arguments and the GraphQL request reading. Their corpora
## (seeds plus what earlier runs found) are committed under each package's testdata/fuzz/ and run as plain tests
## by `go test` too.
FUZZTIME ?= 10s
FUZZ_TARGETS := ./ingest/olevent/decode:FuzzDecode ./ingest/normalize:FuzzDatasetIdempotent \
	./lineage:FuzzLineageArguments ./resolvers/guard:FuzzGraphQLRequest
fuzz:
	set -e; for t in $(FUZZ_TARGETS); do \
	  $(GO) test -count=1 -run '^$$' -fuzz "^$${t#*:}$$" -fuzztime $(FUZZTIME) "$${t%%:*}"; done

## unit: the tests that need no servers. Under -short every test that needs Neo4j, Kafka or Redis skips
## (internal/testenv.Servers; the e2e package as a whole), so this runs without the stack. `make test` and CI
## never pass -short.
unit:
	$(GO) test -count=1 -short ./...

## producers: set up the real producers the e2e tests run (dbt, Spark with Iceberg, Airflow) in .state/producers.
producers:
	scripts/producers/all.sh

## test: the whole suite against the real Neo4j, Kafka and Redis (started by this target), with the real producers.
## A failing set-up stops the target (set -e), so no test runs without its producer. TIMED_PKGS hold guards that
## compare two phases of one run (a light producer beside a flood, a principal's scan rate beside another's): they
## run after the rest, one package at a time, so another package's load does not fall on one phase only.
TIMED_PKGS = ./ingest/consumer/ ./resolvers/
test: stack-up check-generated explorer vet lint race fuzz
	set -e; producers=$$(scripts/producers/all.sh); python=$$(scripts/pyenv.sh); \
	timed=$$($(GO) list $(TIMED_PKGS)); \
	env $$producers HEADWATER_TEST_PYTHON=$$python $(GO) test -count=1 -p 2 -timeout 45m \
	  $$($(GO) list ./... | grep -vxF "$$timed"); \
	env $$producers HEADWATER_TEST_PYTHON=$$python $(GO) test -count=1 -p 1 -timeout 30m $(TIMED_PKGS)

## bench: benchmarks (see docs/loadtest.md); needs the bench profile for design-scale data.
bench: build
	scripts/bench.sh
