# make test  -- install what is missing, start the embedded PostgreSQL, run the tests
#              (all but the slow-marked suites: `make test-slow`, `make test-all`)
# make demo  -- the TPC-C latency sweep and its report
#
# Other targets: deps (Debian packages), venv (.venv with the project and its dev tools),
# up / down (the embedded cluster), lint (ruff + mypy), django-suite (Django's own tests
# through the Django backend and the PostgreSQL baseline), wheels (dist/: the project's one
# wheel, with the compiled OPE/RND layers where cargo is installed, tagged manylinux by
# auditwheel), clean (venv and cluster removed).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: deps venv up down test test-slow test-all lint wheels demo django-suite clean

deps:
	@bash scripts/install-system-deps.sh

# Reinstalled when pyproject.toml changes; the stamp lives inside the venv, so `make clean`
# (or deleting .venv) starts over.
#
# The install builds the compiled OPE/RND layers (native/, Rust) into the package where
# cargo is installed; without it the pure-Python fallbacks are used.  The research
# harnesses (tpcc, tpch, netem) are importable in this editable install but not part of a
# built wheel (setup.py); their adaptive-tpcc command is written here.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	@# the separate native distributions of earlier versions, now built into the package
	@$(PY) -m pip uninstall -q -y adaptive-ope-native adaptive-rnd-native >/dev/null 2>&1 || true
	$(PY) -m pip install -q -e '.[dev]'
	@$(PY) -c 'import adaptive_client.adaptive_ope_native, adaptive_client.adaptive_rnd_native, adaptive_client.adaptive_ore_native' \
		2>/dev/null || echo "warning: the native OPE/RND/ORE layers were not built" \
			"(is cargo installed?): the pure-Python fallbacks are used"
	@# (guarded: a process the sweep spawns -- the latency proxy -- imports this script
	@# as its main module, and must not run the command again)
	@printf '#!%s\nimport sys\n\nfrom tpcc.cli import main\n\nif __name__ == "__main__":\n    sys.exit(main())\n' \
		"$(abspath $(PY))" > $(VENV)/bin/adaptive-tpcc && chmod +x $(VENV)/bin/adaptive-tpcc
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

# The fast suites run in TEST_WORKERS processes (pytest-xdist), each test file in one of
# them: every test makes its own databases, so files do not meet.  TEST_WORKERS=0 runs
# them in this process.
TEST_WORKERS ?= 2
XDIST := $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadfile)

test: deps venv up
	$(PY) -m pytest -q -p no:cacheprovider -m "not slow" $(XDIST)

test-slow: deps venv up
	$(PY) -m pytest -q -p no:cacheprovider -m slow

test-all: deps venv up
	$(PY) -m pytest -q -p no:cacheprovider

lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

# One wheel, dist/adaptive_client-*.whl: the package with its compiled OPE/RND layers
# (abi3: CPython 3.11 and later), its tag made manylinux by auditwheel.  Without cargo
# the wheel has no compiled layers (its users get the pure-Python fallbacks).
wheels: venv
	@rm -rf dist/.build && mkdir -p dist && rm -f dist/adaptive_client-*.whl
	$(PY) -m pip wheel -q --no-deps -w dist/.build .
	@if $(PY) -c 'import glob, sys, zipfile; (w,) = glob.glob("dist/.build/*.whl"); \
			sys.exit(not any(n.endswith(".so") for n in zipfile.ZipFile(w).namelist()))'; then \
		PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/auditwheel repair -w dist \
			dist/.build/adaptive_client-*.whl; \
	else \
		echo "cargo not found: the wheel has no compiled layers (pure-Python fallbacks)"; \
		mv dist/.build/adaptive_client-*.whl dist/; \
	fi
	@rm -rf dist/.build
	@ls dist/adaptive_client-*.whl

# Django's own test suite (its named app modules, from the sdist of the installed Django,
# fetched into ~/.cache/adaptive-client) through ENGINE = "adaptive_client.django" and
# through Django's PostgreSQL backend, the baseline: the pass counts of both, and any
# failure of the backend's the baseline does not have and its list does not name.
django-suite: venv up
	$(PY) tests/ecosystem/django_suite.py

demo: up
	@# (the last run's results kept beside the new ones, as results/demo.previous)
	@if [ -d results/demo ]; then rm -rf results/demo.previous && mv results/demo results/demo.previous; fi
	$(VENV)/bin/adaptive-tpcc sweep --configs plain,encrypted,adaptive --latencies 0,60,120 \
		--clients 64 --duration 60 --warmup 10 --rounds 2 --kept-latencies 0 \
		--warehouses 64 --scale demo --reload --out results/demo
	$(VENV)/bin/adaptive-tpcc report results/demo
	@echo "report: results/demo/report.md"
