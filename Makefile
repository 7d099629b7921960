# The two commands a new user needs: `make demo` and `make test`.
# Everything is installed here, into .venvs/, from the committed constraints.
# docs/testing.md says what each lane runs and how long it takes.

PYTHON ?= python3.11
VENVS := .venvs
UV := $(VENVS)/tools/bin/uv
UV_VERSION := 0.13.9
AF3 := 3.3.2
AF2 := 2.11.2
# The tested matrix: Airflow-Python, one constraints/airflow-<combo>.txt each. The whole
# suite runs on the newest and the oldest Airflow (Python 3.11, the lowest we support);
# every other combination runs the `matrix` lane (tests marked `matrix`) and the wheel check.
FULL := $(AF3)-py3.11 $(AF2)-py3.11
MATRIX := 3.3.2-py3.12 3.3.2-py3.13 3.2.2-py3.11 3.2.2-py3.12 3.2.2-py3.13 \
	3.1.8-py3.11 3.1.8-py3.12 3.1.8-py3.13 3.0.6-py3.11 3.0.6-py3.12 2.11.2-py3.12
# The cells `make test` (and so CI) runs within CI's budget: so far the one proven green on
# the merged tree (a pre-3.3 Airflow on Python 3.12); `make test-matrix` runs all eleven
# (docs/testing.md).
MATRIX_CI := 3.1.8-py3.12
PY3 := $(VENVS)/airflow-$(AF3)-py3.11/bin/python
PY2 := $(VENVS)/airflow-$(AF2)-py3.11/bin/python
PYTEST_ARGS ?=
# Two workers: this machine (and CI) has two cores.
XDIST ?= -n 2
DURATIONS := --durations=20

-include mk/*.mk

.PHONY: demo test test-fast lint test-af3 test-af2 test-random test-matrix test-matrix-ci \
	test-wheel \
	bench clean

demo: $(PY3).stamp
	$(PY3) scripts/demo.py

# Everything, with the matrix cells CI has time for; each pytest spreads over both cores.
test: lint test-af3 test-system test-af2 test-random test-matrix-ci

# The edit loop: unit and emulator tests on Airflow $(AF3), no DAG runs.
test-fast: $(PY3).stamp
	$(PY3) -m pytest $(XDIST) -m "not dagrun" $(DURATIONS) tests/unit tests/emulator $(PYTEST_ARGS)

lint: $(PY3).stamp
	$(VENVS)/airflow-$(AF3)-py3.11/bin/ruff check .
	$(VENVS)/airflow-$(AF3)-py3.11/bin/ruff format --check .
	$(VENVS)/airflow-$(AF3)-py3.11/bin/mypy
	$(VENVS)/airflow-$(AF3)-py3.11/bin/mypy deploy

# The whole suite, then the wheel check, on the newest and the oldest Airflow.
# (Its system tests run in `make test-system`, mk/release.mk.)
# The reliability suite runs in one process: its driver is one subprocess either way, and
# under xdist its DB checks read another worker's Airflow home.
test-af3: $(PY3).stamp
	$(PY3) -m pytest $(XDIST) $(DURATIONS) --ignore=tests/system --ignore=tests/reliability \
		$(PYTEST_ARGS)
	$(PY3) -m pytest $(DURATIONS) tests/reliability $(PYTEST_ARGS)
	$(PY3) scripts/check_wheel.py $(AF3)-py3.11

test-af2: $(PY2).stamp
	$(PY2) -m pytest $(XDIST) $(DURATIONS) --ignore=tests/reliability $(PYTEST_ARGS)
	$(PY2) -m pytest $(DURATIONS) tests/reliability $(PYTEST_ARGS)
	$(PY2) scripts/check_wheel.py $(AF2)-py3.11

# The unit suite once in random order (the seed is printed: rerun a failure with
# `-p random_order --random-order-seed=<seed>`): no test may depend on another's leftovers.
test-random: $(PY3).stamp
	$(PY3) -m pytest $(XDIST) --random-order-bucket=global tests/unit $(PYTEST_ARGS)

# Every other combination: the `matrix` lane (tests/matrix_lane.txt: DAG runs in both
# dialects, kill / timeout / mark-failed of deferred waits, the trigger's serialization),
# then the wheel check.
test-matrix: $(addprefix test-matrix-,$(MATRIX))
test-matrix-ci: $(addprefix test-matrix-,$(MATRIX_CI))

test-matrix-%: $(VENVS)/airflow-%/bin/python.stamp
	$(VENVS)/airflow-$*/bin/python -m pytest $(XDIST) -m matrix $(DURATIONS) $(PYTEST_ARGS)
	$(VENVS)/airflow-$*/bin/python scripts/check_wheel.py $*

# The wheel, installed alone beside a pinned Airflow: providers list, connection type,
# the emulator and a DAG run, with nothing of the source tree on the path. Part of each
# lane above; this runs it for the two full lanes alone.
test-wheel: $(PY3).stamp $(PY2).stamp
	$(PY3) scripts/check_wheel.py $(AF3)-py3.11
	$(PY2) scripts/check_wheel.py $(AF2)-py3.11

bench: $(PY3).stamp
	$(PY3) bench/run_all.py

$(UV):
	$(PYTHON) -m venv $(VENVS)/tools
	$(VENVS)/tools/bin/pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)

# One venv per tested combination (<airflow>-py<python>), rebuilt when the project or its
# pins change. scripts/find_python.sh finds the interpreter (pyenv, then PATH) or says
# which one is missing.
$(VENVS)/airflow-%/bin/python.stamp: constraints/airflow-%.txt pyproject.toml | $(UV)
	@python="$$(scripts/find_python.sh $(lastword $(subst -py, ,$*)))" || exit 1; \
	echo "venv airflow-$* ($$python)"; \
	$(UV) venv --quiet --allow-existing --python "$$python" $(VENVS)/airflow-$* && \
	$(UV) pip install --quiet --compile-bytecode --python $(VENVS)/airflow-$*/bin/python \
		-c constraints/airflow-$*.txt "apache-airflow==$(firstword $(subst -py, ,$*))" -e ".[dev]"
	touch $@

# Re-resolve every combination's constraints (after a change of pyproject's dependencies).
.PHONY: constraints
constraints: | $(UV)
	@for combo in $(FULL) $(MATRIX); do \
		python="$$(scripts/find_python.sh $${combo##*-py})" || exit 1; \
		scripts/compile_constraints.sh $${combo%-py*} "$$python" $${combo##*-py} || exit 1; \
	done

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

$(DEPLOY_PY).stamp: constraints/airflow-$(AF3)-py3.11.txt deploy/constraints.txt pyproject.toml | $(UV)
	$(UV) venv --quiet --allow-existing --python $(PYTHON) $(DEPLOY_DIR)/venv
	$(UV) pip install --quiet --compile-bytecode --python $(DEPLOY_PY) \
		-c constraints/airflow-$(AF3)-py3.11.txt -c deploy/constraints.txt "apache-airflow==$(AF3)" \
		apache-airflow-providers-celery psycopg2-binary asyncpg redis playwright -e .
	touch $@
