# The two commands a new user needs: `make demo` and `make test`.
# Everything is installed here, into .venvs/, from the committed constraints.

PYTHON ?= python3.11
VENVS := .venvs
UV := $(VENVS)/tools/bin/uv
UV_VERSION := 0.13.9
AF3 := 3.3.2
AF2 := 2.11.2
PY3 := $(VENVS)/airflow-$(AF3)/bin/python
PY2 := $(VENVS)/airflow-$(AF2)/bin/python
PYTEST_ARGS ?=

.PHONY: demo test lint test-af3 test-af2 test-wheel bench clean

demo: $(PY3).stamp
	$(PY3) scripts/demo.py

test: lint test-af3 test-af2 test-wheel

lint: $(PY3).stamp
	$(VENVS)/airflow-$(AF3)/bin/ruff check .
	$(VENVS)/airflow-$(AF3)/bin/ruff format --check .
	$(VENVS)/airflow-$(AF3)/bin/mypy
	$(VENVS)/airflow-$(AF3)/bin/mypy deploy

test-af3: $(PY3).stamp
	$(PY3) -m pytest $(PYTEST_ARGS)

test-af2: $(PY2).stamp
	$(PY2) -m pytest $(PYTEST_ARGS)

# The wheel, installed alone beside each pinned Airflow: providers list, connection type,
# the emulator and a DAG run, with nothing of the source tree on the path.
test-wheel: $(PY3).stamp
	$(PY3) scripts/check_wheel.py

bench: $(PY3).stamp
	$(PY3) bench/run_all.py

$(UV):
	$(PYTHON) -m venv $(VENVS)/tools
	$(VENVS)/tools/bin/pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)

# One venv per tested Airflow version, rebuilt when the project or its pins change.
$(VENVS)/airflow-%/bin/python.stamp: constraints/airflow-%.txt pyproject.toml | $(UV)
	$(UV) venv --quiet --allow-existing --python $(PYTHON) $(VENVS)/airflow-$*
	$(UV) pip install --quiet --compile-bytecode --python $(VENVS)/airflow-$*/bin/python \
		-c constraints/airflow-$*.txt "apache-airflow==$*" -e ".[dev]"
	touch $@

clean:
	rm -rf $(VENVS) .airflow

# A real deployment (PostgreSQL, Redis, CeleryExecutor with two workers, two triggerers,
# the API server, a browser) driven through the REST API, the CLI and the UI: see the
# README. Airflow 3 only; its own venv, with what deploy/constraints.txt adds, and the
# provider installed editable so that the deployment always runs this tree's code.
DEPLOY_DIR := build/deployment
DEPLOY_PY := $(DEPLOY_DIR)/venv/bin/python

.PHONY: test-deployment
test-deployment: $(DEPLOY_PY).stamp
	$(DEPLOY_PY) deploy/run.py --build-dir $(DEPLOY_DIR)

$(DEPLOY_PY).stamp: constraints/airflow-$(AF3).txt deploy/constraints.txt pyproject.toml | $(UV)
	$(UV) venv --quiet --allow-existing --python $(PYTHON) $(DEPLOY_DIR)/venv
	$(UV) pip install --quiet --compile-bytecode --python $(DEPLOY_PY) \
		-c constraints/airflow-$(AF3).txt -c deploy/constraints.txt "apache-airflow==$(AF3)" \
		apache-airflow-providers-celery psycopg2-binary asyncpg redis playwright -e .
	touch $@
-include mk/*.mk
