# Two commands on a fresh machine:  make demo  (build the demo warehouse and its report, demo/report.html)  and
# make test  (every test; it installs Debian's chromium and chromium-driver for the report's browser test, and Java 17 for
# the Spark tests, when missing).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: demo test test-fast test-oldest lint bench clean browser java

# uv (from PyPI) resolves and downloads in parallel: half pip's time on a fresh machine. It compiles the
# bytecode at install, as pip does (else every test process would compile what it imports until one writes it).
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet uv
	$(VENV)/bin/uv pip install --python $(PY) --quiet --compile-bytecode -e ".[test,bench,spark]"
	$(PY) -m duckrate.cli warm --fresh
	touch $@

demo: $(VENV)/.installed
	$(PY) -m duckrate.cli demo

# Test modules run on every core (pytest-xdist), each module's tests in one worker (they share fixtures), in
# the order tests/conftest.py gives them (longest first; xdist would otherwise put the modules with most tests first).
# The report's browser test drives Debian's headless Chromium: installed with apt-get when missing (as root, or
# through sudo).
browser:
	@if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then \
	  if [ "$$(id -u)" = 0 ]; then run=; else run=sudo; fi; \
	  $$run apt-get update && DEBIAN_FRONTEND=noninteractive $$run apt-get install -y --no-install-recommends chromium chromium-driver; \
	fi

# The Spark tests (tests/spark) run PySpark in local mode, which needs a Java runtime: Debian's OpenJDK 17,
# installed with apt-get when no java is on the PATH.
java:
	@if ! command -v java >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ]; then run=; else run=sudo; fi; \
	  $$run apt-get update && DEBIAN_FRONTEND=noninteractive $$run apt-get install -y --no-install-recommends openjdk-17-jre-headless; \
	fi

test: $(VENV)/.installed browser java
	$(PY) -m pytest -q -n auto --dist loadfile --no-loadscope-reorder

# The quick tier while working: every test but those marked dbt, spark, browser, network or slow (pytest marks,
# pyproject.toml), on every core as make test; about 2.5 minutes on 2 cores with a warm numba cache (156 s measured
# on 2026-12-07; 111 s on an earlier, faster machine).
FAST := not (dbt or spark or browser or network or slow)
test-fast: $(VENV)/.installed
	$(PY) -m pytest -q -n auto --dist loadfile --no-loadscope-reorder -m "$(FAST)"

# The oldest versions duckrate supports: a second venv with each dependency at pyproject.toml's lower bound
# (.ci/oldest_constraints.py) and its own numba cache, running the quick tier once more.
OLDEST ?= .venv-oldest
OLDEST_ENV := NUMBA_CACHE_DIR=$(CURDIR)/$(OLDEST)/numba-cache
$(OLDEST)/.installed: pyproject.toml .ci/oldest_constraints.py
	$(PYTHON) -m venv $(OLDEST)
	$(OLDEST)/bin/python -m pip install --quiet uv
	$(PYTHON) .ci/oldest_constraints.py > $(OLDEST)/constraints.txt
	$(OLDEST)/bin/uv pip install --python $(OLDEST)/bin/python --quiet --compile-bytecode -c $(OLDEST)/constraints.txt -e ".[test]"
	$(OLDEST_ENV) $(OLDEST)/bin/python -m duckrate.cli warm
	touch $@

test-oldest: $(OLDEST)/.installed
	$(OLDEST_ENV) $(OLDEST)/bin/python -m pytest -q -n auto --dist loadfile --no-loadscope-reorder -m "$(FAST)"

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

bench: $(VENV)/.installed
	$(PY) bench/elo.py
	$(PY) bench/bridge.py
	$(PY) bench/replay_model.py
	$(PY) bench/replay_glicko2.py
	$(PY) bench/replay_trueskill.py
	$(PY) bench/replay_chance.py
	$(PY) bench/elo_mmr.py
	$(PY) bench/elo_mmr_incremental.py
	$(PY) bench/bt_lr_test.py
	$(PY) bench/bt_lr_test_power.py
	$(PY) bench/elo_vs_elo2k.py
	$(PY) bench/bt_fit.py
	$(PY) bench/whole_history_replay.py
	$(PY) bench/bt_arena.py
	$(PY) bench/spark_replay.py
	$(PY) bench/pipeline_10m.py
	$(PY) bench/contest_systems.py
	$(PY) bench/contest_metrics.py
	$(PY) bench/tune.py
	$(PY) bench/readers.py
	$(PY) bench/whole_history.py
	$(PY) bench/whole_history.py --large

clean:
	rm -rf $(VENV) demo/target demo/dbt_packages demo/logs demo/warehouse.duckdb demo/warehouse.duckdb.lock demo/.warehouse.duckdb.building*
