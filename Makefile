# The two commands: `make run` and `make test`. Both create .venv and install what is missing first.
# `make run` keeps its data in the per-user data directory (`workbench services` prints it), the one every
# `workbench` command uses, so the dashboard and the command line share one store; DATA_DIR=... overrides.
# `make test` runs on temporary data directories of its own.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test bench-smoke install browser clean-data

run: $(STAMP)
	$(BIN)/workbench demo load --first-run
	$(BIN)/workbench serve

# Two worker processes (pytest-xdist), a file each at a time: each starts its own Redis and Postgres, and
# most of a test's time is spent waiting on a browser, a server or a subprocess, so two share two cores.
# The slowest tests are listed at the end: the suite must stay under 20 minutes on a 2-core machine.
TEST_WORKERS ?= 2

test: $(STAMP)
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile --durations=15 $(PYTEST_ARGS)

# The benchmark scripts' small runs that drive Chromium over every page (about 2.5 min): kept out of `make test`,
# which must stay under 20 minutes on two cores; the other benchmark scripts' small runs stay in it.
bench-smoke: $(STAMP)
	$(BIN)/python -m pytest -m bench_smoke --durations=5 $(PYTEST_ARGS)

install: $(STAMP)

# Reinstalls only when pyproject.toml changed since the last install.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip

# Headless Chromium for the browser tests (Debian packages; needs root or sudo).
browser:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver)

# Stops the embedded servers, then removes the data directory (only one that holds the servers' data).
clean-data: $(STAMP)
	$(BIN)/workbench services stop
	$(BIN)/python -c "import shutil; from core.config import load_settings; d = load_settings().data_dir; \
	  ours = any((d / p).exists() for p in ('redis', 'pg', 'leases')); \
	  print(('removing ' if ours else 'left alone (not a Memory Workbench data directory): ') + str(d)); \
	  ours and shutil.rmtree(d)"
