# The two commands a new user needs: `make demo` and `make test` (the whole CI run, about 30
# minutes; `make test-fast` is the edit loop).
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
# Cells with a committed constraints file that do not pass yet, so `make test` leaves them
# out (docs/testing.md says why); `make test-matrix-pending` runs them. None now.
MATRIX_PENDING :=
# How many lanes `make test` runs side by side: their DAG runs spend much of their time
# waiting on polls, so two lanes (each with its xdist workers) keep both cores busy.
LANES_JOBS ?= 2
PY3 := $(VENVS)/airflow-$(AF3)-py3.11/bin/python
PY2 := $(VENVS)/airflow-$(AF2)-py3.11/bin/python
PYTEST_ARGS ?=
# Two workers: this machine (and CI) has two cores.
XDIST ?= -n 2
DURATIONS := --durations=20
# The full lanes end with the wheel check (`make test` leaves it to release-check).
FULL_WHEEL_CHECK := 1

# Every process caches the bytecode it compiles, as on any developer's machine. Where
# PYTHONDONTWRITEBYTECODE is set (some sandboxes set it, this project's among them),
# every process of a lane compiled every module it imported from source again: a matrix
# cell, whose venv is not byte-compiled at install, spent 40 of its 190 s of CPU on that.
unexport PYTHONDONTWRITEBYTECODE

-include mk/*.mk

.PHONY: demo demo-loop test test-lanes test-fast lint test-af3 test-af3-rest test-af3-e2e test-af2 test-random test-matrix test-matrix-pending \
	test-wheel test-load bench clean

demo: $(PY3).stamp
	$(PY3) scripts/demo.py

# The retraining example closing the loop on the emulator: dataset version, training,
# model version, the service rolled onto it; prints what AIHC then answers.
demo-loop: $(PY3).stamp
	$(PY3) scripts/demo_loop.py

# Everything: lint, then the two full lanes, the docs build and its checks, the system
# tests, the release checks and every matrix cell, two at a time (LANES_JOBS; each lane's
# output is printed whole when it ends),
# so a failure in one lane still lets the others run and report (-k). The slowest lanes
# start first. The release check runs the wheel check of the two full lanes' combinations
# (on the built wheel), so the full lanes skip theirs here (FULL_WHEEL_CHECK=).
# `make test` never reaches the real cloud: it drops every AIHC_SYSTEM_TEST_* variable, so
# its system tests run on the emulator (only `make test-system` may spend: docs/system-tests.md).
SYSTEM_TEST_UNSET = $(addprefix -u ,$(filter AIHC_SYSTEM_TEST_%,$(.VARIABLES)))
PYTHONS := $(sort $(foreach combo,$(FULL) $(MATRIX),$(lastword $(subst -py, ,$(combo)))))
test: lint
	@for python in $(PYTHONS); do scripts/find_python.sh $$python >/dev/null || exit 1; done
	@echo "make test: $(words $(FULL)) full lanes, docs, test-system and $(words $(MATRIX)) matrix cells, $(LANES_JOBS) at a time"
	@env $(SYSTEM_TEST_UNSET) $(MAKE) --no-print-directory -k -j$(LANES_JOBS) --output-sync=target \
		FULL_WHEEL_CHECK= test-lanes

test-lanes: test-af3-e2e test-af2 test-af3-rest docs test-system release-check test-matrix

# The edit loop: unit and emulator tests on Airflow $(AF3), no DAG runs.
test-fast: $(PY3).stamp
	$(PY3) -m pytest $(XDIST) -m "not dagrun" $(DURATIONS) tests/unit tests/emulator $(PYTEST_ARGS)

lint: $(PY3).stamp
	$(VENVS)/airflow-$(AF3)-py3.11/bin/ruff check .
	$(VENVS)/airflow-$(AF3)-py3.11/bin/ruff format --check .
	$(VENVS)/airflow-$(AF3)-py3.11/bin/mypy
	$(VENVS)/airflow-$(AF3)-py3.11/bin/mypy deploy

# The whole suite, then the wheel check, on the newest and the oldest Airflow.
# (Its system tests run in `make test-system`, mk/release.mk.) On $(AF3) the unit suite runs
# in random order (what `make test-random` is, not run twice), then the rest.
# The reliability suite runs in one process: its driver is one subprocess either way, and
# under xdist its DB checks read another worker's Airflow home.
# Its DAG runs (tests/e2e, the longest part) are a lane of their own, test-af3-e2e, so
# that `make test` runs them beside the rest instead of after it.
test-af3: test-af3-e2e test-af3-rest

test-af3-rest: $(PY3).stamp
	$(PY3) -m pytest $(XDIST) $(DURATIONS) $(RANDOM_ORDER) tests/unit $(PYTEST_ARGS)
	$(PY3) -m pytest $(XDIST) $(DURATIONS) tests/emulator tests/bench $(PYTEST_ARGS)
	$(PY3) -m pytest $(DURATIONS) tests/reliability $(PYTEST_ARGS)
	$(if $(FULL_WHEEL_CHECK),$(PY3) scripts/check_wheel.py $(AF3)-py3.11)

test-af3-e2e: $(PY3).stamp
	$(PY3) -m pytest $(XDIST) $(DURATIONS) --ignore=tests/unit --ignore=tests/system \
		--ignore=tests/reliability --ignore=tests/emulator --ignore=tests/bench $(PYTEST_ARGS)

test-af2: $(PY2).stamp
	$(PY2) -m pytest $(XDIST) $(DURATIONS) --ignore=tests/reliability $(PYTEST_ARGS)
	$(PY2) -m pytest $(DURATIONS) tests/reliability $(PYTEST_ARGS)
	$(if $(FULL_WHEEL_CHECK),$(PY2) scripts/check_wheel.py $(AF2)-py3.11)

# The unit suite once in random order (the seed is printed: rerun a failure with
# `-p random_order --random-order-seed=<seed>`): no test may depend on another's leftovers.
RANDOM_ORDER := --random-order-bucket=global
test-random: $(PY3).stamp
	$(PY3) -m pytest $(XDIST) $(DURATIONS) $(RANDOM_ORDER) tests/unit $(PYTEST_ARGS)

# Every other combination: the `matrix` lane (tests/matrix_lane.txt: DAG runs in both
# dialects, kill / timeout / mark-failed of deferred waits, the trigger's serialization;
# an entry that selects nothing fails the lane), then the wheel check.
test-matrix: $(addprefix test-matrix-,$(MATRIX))
test-matrix-pending: $(addprefix test-matrix-,$(MATRIX_PENDING))

# Only the lane's files are collected (collecting the whole suite costs each xdist worker
# a minute of CPU on a loaded machine); `-m matrix` picks the lane's tests in them.
MATRIX_FILES := $(shell sed -e 's/\#.*//' -e 's/::.*//' tests/matrix_lane.txt | sort -u)
test-matrix-%: $(VENVS)/airflow-%/bin/python.stamp
	$(VENVS)/airflow-$*/bin/python -m pytest $(XDIST) -m matrix $(DURATIONS) $(PYTEST_ARGS) \
		$(MATRIX_FILES)
	$(VENVS)/airflow-$*/bin/python scripts/check_wheel.py $*

# The wheel, installed alone beside a pinned Airflow: providers list, connection type,
# the emulator and a DAG run, with nothing of the source tree on the path. Part of each
# lane above; this runs it for the two full lanes alone.
test-wheel: $(PY3).stamp $(PY2).stamp
	$(PY3) scripts/check_wheel.py $(AF3)-py3.11
	$(PY2) scripts/check_wheel.py $(AF2)-py3.11

# The never-flaky proof: the unit and emulator suite (test-fast's selection) N times in a
# row while a busy-loop process per core loads the machine; one line a run, then totals.
N ?= 20
test-load: $(PY3).stamp
	scripts/suite_under_load.sh $(PY3) $(N) $(PYTEST_ARGS)

bench: $(PY3).stamp
	$(PY3) bench/run_all.py

$(UV):
	$(PYTHON) -m venv $(VENVS)/tools
	$(VENVS)/tools/bin/pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)

# One venv per tested combination (<airflow>-py<python>), rebuilt when the project or its
# pins change. scripts/find_python.sh finds the interpreter (pyenv, then PATH) or says
# which one is missing.
# Only the two full lanes' venvs are byte-compiled whole (their benchmarks time imports): a
# matrix cell imports a part of what it installs, and compiles that on first use (and
# keeps it: PYTHONDONTWRITEBYTECODE, above), which costs less than compiling all of it
# (a 3.2.2 venv: 30 s of CPU with, 2 s without).
# (Precious: a cell's stamp is an intermediate file to make, which it would delete after
# each run, and so rebuild every cell's venv the next time.)
.PRECIOUS: $(VENVS)/airflow-%/bin/python.stamp
$(VENVS)/airflow-%/bin/python.stamp: constraints/airflow-%.txt pyproject.toml | $(UV)
	@python="$$(scripts/find_python.sh $(lastword $(subst -py, ,$*)))" || exit 1; \
	echo "venv airflow-$* ($$python)"; \
	$(UV) venv --quiet --allow-existing --python "$$python" $(VENVS)/airflow-$* && \
	$(UV) pip install --quiet $(if $(filter $*,$(FULL)),--compile-bytecode) \
		--python $(VENVS)/airflow-$*/bin/python \
		-c constraints/airflow-$*.txt "apache-airflow==$(firstword $(subst -py, ,$*))" -e ".[dev]"
	touch $@

# Re-resolve every combination's constraints (after a change of pyproject's dependencies).
.PHONY: constraints
constraints: | $(UV)
	@for combo in $(FULL) $(MATRIX) $(MATRIX_PENDING); do \
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

# The same deployment with two schedulers, under a storm of kills and AIHC faults, judged
# by the provider's promises (docs/reliability.md); CHAOS_SEED=<n> reruns a storm.
.PHONY: test-chaos
CHAOS_SEED ?=
test-chaos: $(DEPLOY_PY).stamp
	$(DEPLOY_PY) deploy/chaos.py --build-dir build/chaos $(if $(CHAOS_SEED),--seed $(CHAOS_SEED))

$(DEPLOY_PY).stamp: constraints/airflow-$(AF3)-py3.11.txt deploy/constraints.txt pyproject.toml | $(UV)
	$(UV) venv --quiet --allow-existing --python $(PYTHON) $(DEPLOY_DIR)/venv
	$(UV) pip install --quiet --compile-bytecode --python $(DEPLOY_PY) \
		-c constraints/airflow-$(AF3)-py3.11.txt -c deploy/constraints.txt "apache-airflow==$(AF3)" \
		apache-airflow-providers-celery psycopg2-binary asyncpg redis playwright -e .
	touch $@
