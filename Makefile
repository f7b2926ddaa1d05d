# Factdesk: `make run` starts the app, `make test` runs the suite, `make lint` checks style and layering,
# `make bench` measures it.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/postgres
TEST_REDIS_URL ?= redis://127.0.0.1:6379/15
# pytest-xdist processes for `make test`: each has its own test database and Redis database (tests/parallel.py).
TEST_WORKERS ?= 3
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test bench venv dev-venv migrate seed lint clean

$(VENV)/.runtime: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -r requirements.txt
	touch $@

$(VENV)/.dev: $(VENV)/.runtime requirements-dev.txt
	$(PIP) install --quiet -r requirements-dev.txt
	touch $@

venv: $(VENV)/.runtime
dev-venv: $(VENV)/.dev

migrate: venv
	$(PY) manage.py migrate --noinput

seed: migrate
	$(PY) manage.py seed_demo
	$(PY) manage.py rollup_figures --days 14

# Embedded default: SQLite file, jobs in-process. With DATABASE_URL and REDIS_URL set it also
# runs an RQ worker and the cron scheduler (see bin/run).
run: venv
	HOST=$(HOST) PORT=$(PORT) PY=$(PY) bash bin/run

test: dev-venv
	DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) DATABASE_REPLICA_URL= $(PY) -m pytest -n $(TEST_WORKERS) $(PYTEST_ARGS)

# Its own database (created if missing, emptied of bench rows each run) and Redis db; writes bench/REPORT.md.
bench: dev-venv
	DATABASE_URL=$${BENCH_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/factdesk_bench} \
	REDIS_URL=$${BENCH_REDIS_URL:-redis://127.0.0.1:6379/14} $(PY) -m bench $(BENCH_ARGS)

# ruff over the tree (pyproject.toml's [tool.ruff] leaves out .venv, var and migrations), then the import layering.
lint: dev-venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports

clean:
	rm -rf $(VENV) var
