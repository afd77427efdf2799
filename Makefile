# make test  -- install what is missing, start the embedded PostgreSQL, run the tests
# make demo  -- the TPC-C latency sweep and its report
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: deps venv up down test test-fast lint demo clean

deps:
	@bash scripts/install-system-deps.sh

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	@if [ -f native/ope/pyproject.toml ] && command -v cargo >/dev/null; then \
		$(PY) -m pip install -q ./native/ope || echo "warning: native OPE not built; using pyope"; \
	fi
	@touch $(STAMP)

venv: $(STAMP)

up: deps venv
	@$(VENV)/bin/adaptive-db up

down:
	@$(VENV)/bin/adaptive-db down

test: up
	$(PY) -m pytest -q -p no:cacheprovider

test-fast: up
	$(PY) -m pytest -q -p no:cacheprovider -m "not slow"

lint: venv
	$(VENV)/bin/ruff check adaptive_client tests
	$(VENV)/bin/mypy

demo: up
	@echo "the demo arrives with the TPC-C harness (tpcc/)"

clean:
	-$(VENV)/bin/adaptive-db down
	rm -rf $(VENV) .pgdata
