# StrataKB: `make` lists the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

DOCS ?= fixtures/handbook
LAYER ?= $(notdir $(patsubst %/,%,$(DOCS)))
QUERY ?= How many unused leave days can be carried over?
GO ?= go

.PHONY: help setup build run test bench bench-peer eval eval-answers eval-learning train-reranker train-sentences lint fuzz db-start db-stop replica replica-stop clean

help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

setup: ## install everything on a fresh Debian 12 machine (idempotent)
	@bash scripts/setup.sh

build: ## build bin/ingestd and bin/queryd
	$(GO) build -o bin/ingestd ./ingestd
	$(GO) build -o bin/queryd ./queryd

run: setup db-start build ## set up, start the local database, ingest DOCS, search, then serve queries (DOCS=fixtures/handbook)
	./bin/ingestd add "$(DOCS)" --layer "$(LAYER)" --wait
	./bin/queryd search "$(QUERY)" --layers "$(LAYER)" --top-k 3
	@echo
	@echo "Serving MCP at http://127.0.0.1:8377/mcp, the HTTP API on the same port and the explorer at http://127.0.0.1:8377/ui/ (Ctrl-C stops)."
	@echo "Search from another terminal: ./bin/queryd search \"your question\" --layers $(LAYER)"
	./bin/queryd serve

test: ## run all tests against a throwaway PostgreSQL cluster
	@bash scripts/test.sh

bench: ## run the benchmarks (medians over repeated runs), then the command line's p50 with and without a queryd serve (scripts/cli-bench.sh)
	@bash scripts/bench.sh
	@bash scripts/cli-bench.sh

bench-peer: ## StrataKB beside the peer qmd on SciFact in one run, alternating (search p50/p95 over REST and MCP, 8 clients, the CLI, index size, nDCG@10; ROUNDS, CLI_RUNS; installs ../shared/bench/qmd-peer into var/ first)
	@bash scripts/bench-peer.sh

eval: ## SciFact nDCG@10 and Recall@100 for lexical, vector, hybrid and strata_ask, and strata_ask on the answer set; fails under the floors (slow: 22 min measured on 2 busy cores, most of it embedding)
	@STRATA_EVAL=1 bash scripts/test.sh -run 'TestEvalSciFact|TestEvalAskSciFact|TestEvalAskAnswers' -v -timeout 90m ./queryd/internal/search/

eval-answers: ## answer quality on our question set (eval/answers): hit@1, hit@5, MRR per kind, confidence, cost (SPLIT=test|train|both); strata_ask's statuses; extractive sentences (also on SciFact's evidence sentences); strata_verify on our drafts
	@STRATA_EVAL=1 STRATA_EVAL_SPLIT=$${SPLIT:-test} STRATA_EVAL_ANSWERS_DATABASE_URL=$${STRATA_EVAL_ANSWERS_DATABASE_URL:-$${STRATA_EVAL_DATABASE_URL:-}} \
		bash scripts/test.sh -run 'TestEvalAnswers|TestEvalAskAnswers|TestEvalExtractiveAnswers|TestEvalSentencesSciFact|TestEvalDrafts' -v -timeout 90m \
		./queryd/internal/search/ ./queryd/internal/ask/ ./queryd/internal/verify/

eval-learning: ## the learning replay on the answer set: train paraphrases rephrased after a miss, the promoter, the test split before and after (STRATA_EVAL_LEARN_DATABASE_URL: a database of its own)
	@STRATA_EVAL=1 bash scripts/test.sh -run 'TestEvalLearningReplay' -v -timeout 90m ./queryd/internal/search/

STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

train-reranker: ## fit the offline reranker on SciFact train + the answer set's train split (grouped CV), report test, rewrite queryd/internal/lrank/weights.go (STRATA_EVAL_DATABASE_URL: SciFact's layer; STRATA_EVAL_ANSWERS_DATABASE_URL: the answer set's; STRATA_RERANK_JUDGED=PATH keeps the judged lists)
	STRATA_EVAL=1 STRATA_TRAIN_RERANKER=1 STRATA_WRITE_WEIGHTS=$(CURDIR)/queryd/internal/lrank/weights.go \
		bash scripts/test.sh -run 'TestTrainReranker$$' -timeout 3h -v ./queryd/internal/search/
	gofmt -w queryd/internal/lrank/weights.go

train-sentences: ## record the answer set's train-split sentences, fit the extractive sentence model on them and SciFact's evidence sentences, rewrite queryd/internal/ask/sentence_weights.go
	@mkdir -p var
	STRATA_EVAL=1 STRATA_SENTENCE_ROWS=$(CURDIR)/var/sentence-rows.jsonl \
		STRATA_EVAL_ANSWERS_DATABASE_URL=$${STRATA_EVAL_ANSWERS_DATABASE_URL:-$${STRATA_EVAL_DATABASE_URL:-}} \
		bash scripts/test.sh -run TestEvalExtractiveAnswers -v -timeout 90m ./queryd/internal/search/
	STRATA_EVAL=1 STRATA_TRAIN_SENTENCES=1 STRATA_ANSWER_ROWS=$(CURDIR)/var/sentence-rows.jsonl \
		STRATA_WRITE_WEIGHTS=$(CURDIR)/queryd/internal/ask/sentence_weights.go \
		$(GO) test -run TestTrainSentences -timeout 1h -v ./queryd/internal/ask/
	gofmt -w queryd/internal/ask/sentence_weights.go

lint: ## gofmt, go vet and staticcheck
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

fuzz: ## run each fuzz target for FUZZTIME (default 30s)
	@bash scripts/fuzz.sh $${FUZZTIME:-30s}

db-start: ## start the local PostgreSQL cluster (var/pg) and write var/db.env
	@bash scripts/db.sh start

db-stop: ## stop the local PostgreSQL cluster
	@bash scripts/db.sh stop

replica: ## start a hot standby of the local cluster (var/pg-replica) and write its QUERYD_READ_DATABASE_URL to var/replica.env (docs/scale.md)
	@bash scripts/replica.sh start

replica-stop: ## stop the hot standby
	@bash scripts/replica.sh stop

clean: ## remove built binaries
	rm -rf bin
