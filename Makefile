# BeamClaw — developer entry points. `make help` lists them.
SHELL := /bin/bash
.DEFAULT_GOAL := help

UV ?= $(shell command -v uv 2>/dev/null || echo "$(HOME)/.local/bin/uv")
VENV := .venv
PY := $(VENV)/bin/python
PYTEST_ARGS ?=
SERVICES_ENV := .test-services/env

.PHONY: help
help: ## List the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  \033[36m%-12s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: uv
uv:
	@command -v uv >/dev/null 2>&1 || { echo "installing uv (pip install uv)"; python3 -m pip install --quiet uv; }

.PHONY: install
install: uv ## Install every package and the dev tools into .venv (from uv.lock)
	@uv sync --all-packages --locked --quiet
	@$(MAKE) --no-print-directory node-deps
	@# bytecode caches even where PYTHONDONTWRITEBYTECODE is set: without them every
	@# gateway or CLI process the tests start recompiles what it imports
	@$(PY) -m compileall -q -j 0 packages $(VENV)/lib >/dev/null 2>&1 || true

.PHONY: node-deps
node-deps:
	@if [ -f tests/node/package.json ]; then \
	  command -v npm >/dev/null 2>&1 || bash scripts/test-services.sh node; \
	  (cd tests/node && npm ci --silent --no-audit --no-fund >/dev/null 2>&1 || npm install --silent --no-audit --no-fund >/dev/null); \
	fi

.PHONY: run
run: install ## Install, then run the gateway (embedded SQLite under $BEAMCLAW_HOME, default ~/.beamclaw)
	@$(VENV)/bin/beamclaw serve

.PHONY: services
services: ## Install (when missing) and start PostgreSQL, Redis and friends for the tests
	@bash scripts/test-services.sh start

.PHONY: test
test: install services ## Install, start the services tests need, run every test
	@set -a; . ./$(SERVICES_ENV); set +a; \
	$(PY) -m pytest -m "not soak" $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests"; exit 1; fi; exit $$rc

.PHONY: faults
faults: install services ## Fault-injection suite, long form: kill -9 x50, upstream and component faults, 30-minute soak (docs/faults.md)
	@set -a; . ./$(SERVICES_ENV); set +a; \
	export BEAMCLAW_FAULT_ITERATIONS=$${BEAMCLAW_FAULT_ITERATIONS:-50}; \
	export BEAMCLAW_FAULT_SOAK_SECONDS=$${BEAMCLAW_FAULT_SOAK_SECONDS:-1800}; \
	$(PY) -m pytest tests/faults -m faults -s $(PYTEST_ARGS)

.PHONY: lint
lint: install ## ruff, pyright (strict), import-linter contracts, per-package dependency check
	@$(VENV)/bin/ruff check .
	@$(VENV)/bin/ruff format --check .
	@$(VENV)/bin/pyright
	@$(VENV)/bin/lint-imports
	@$(PY) scripts/check_deps.py

.PHONY: format
format: install ## Format and auto-fix with ruff
	@$(VENV)/bin/ruff format .
	@$(VENV)/bin/ruff check --fix .

.PHONY: typecheck
typecheck: install ## pyright in strict mode over every package
	@$(VENV)/bin/pyright

.PHONY: bench
bench: install services ## Benchmarks: ratios against in-run baselines, medians, peak memory
	@set -a; . ./$(SERVICES_ENV); set +a; $(PY) -m bench --doc docs/benchmarks.md

PEERS := .bench-peers
LITELLM_VERSION ?= 1.108.7
NANOBOT_VERSION ?= 0.3.5

.PHONY: bench-peers
bench-peers: install ## BeamClaw beside LiteLLM's proxy and nanobot (own venvs in .bench-peers/), one fake upstream
	@[ -x $(PEERS)/litellm/bin/litellm ] || { $(UV) venv -q -p 3.11 $(PEERS)/litellm && \
	  VIRTUAL_ENV=$(PEERS)/litellm $(UV) pip install -q "litellm[proxy]==$(LITELLM_VERSION)"; }
	@[ -x $(PEERS)/nanobot/bin/nanobot ] || { $(UV) venv -q -p 3.11 $(PEERS)/nanobot && \
	  VIRTUAL_ENV=$(PEERS)/nanobot $(UV) pip install -q "nanobot-ai[api]==$(NANOBOT_VERSION)"; }
	@$(PY) -m bench --merge --doc docs/benchmarks.md peers

.PHONY: build
build: install ## Build a wheel and sdist of every package into dist/
	@for p in packages/*/; do uv build --quiet --package "$$(basename $$p)" --out-dir dist || exit 1; done
	@ls dist

.PHONY: clean
clean: ## Remove build and test artefacts
	rm -rf dist .pytest_cache .ruff_cache .hypothesis
