# make test  -- install what is missing, start the embedded PostgreSQL, run the tests
#              (all but the slow-marked suites: `make test-slow`, `make test-all`)
# make demo  -- the TPC-C latency sweep and its report
#
# Other targets: deps (Debian packages), venv (.venv with the project and its dev tools),
# up / down (the embedded cluster), lint (ruff + mypy), wheels (dist/: the project's wheel
# and, where cargo is installed, the native OPE/RND wheels for `pip install
# --find-links dist 'adaptive-client[native]'`), clean (venv and cluster removed).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: deps venv up down test test-slow test-all lint wheels demo clean

deps:
	@bash scripts/install-system-deps.sh

# Reinstalled when pyproject.toml changes; the stamp lives inside the venv, so `make clean`
# (or deleting .venv) starts over.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	@if command -v cargo >/dev/null 2>&1; then \
		for mod in ope rnd; do \
			$(PY) -m pip install -q ./native/$$mod \
				|| echo "warning: native/$$mod did not build; using its Python fallback"; \
		done; \
	fi
	@touch $(STAMP)

venv: $(STAMP)

up: deps venv
	@$(VENV)/bin/adaptive-db up

down:
	@if [ -x $(VENV)/bin/adaptive-db ]; then $(VENV)/bin/adaptive-db down; fi

# `make test` leaves out the suites marked slow (fault injection under load, the wheel in a
# fresh virtualenv, TPC-H at SF 0.1, the long fuzz runs); `make test-slow` runs only those,
# `make test-all` both.  CI runs both.  The slow run loads TPC-H at SF 0.1 and runs the 22
# queries (about 6 minutes more); ADAPTIVE_TPCH_SF01= (empty) leaves them out.
ADAPTIVE_TPCH_SF01 ?= 1
export ADAPTIVE_TPCH_SF01

test: deps venv up
	$(PY) -m pytest -q -p no:cacheprovider -m "not slow"

test-slow: deps venv up
	$(PY) -m pytest -q -p no:cacheprovider -m slow

test-all: deps venv up
	$(PY) -m pytest -q -p no:cacheprovider

lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

wheels: venv
	$(PY) -m pip wheel -q --no-deps -w dist .
	@if command -v cargo >/dev/null 2>&1; then \
		for mod in ope rnd; do $(PY) -m pip wheel -q --no-deps -w dist ./native/$$mod; done; \
	else \
		echo "cargo not found: the native wheels were not built (the pure-Python fallbacks are used)"; \
	fi
	@ls dist

demo: up
	$(VENV)/bin/adaptive-tpcc sweep --configs plain,encrypted,adaptive --latencies 0,60,120 \
		--clients 64 --duration 60 --warmup 10 --warehouses 64 --scale demo --reload --out results/demo
	$(VENV)/bin/adaptive-tpcc report results/demo
	@echo "report: results/demo/report.md"
