# The release checks: `make release-check` builds the wheel and the sdist,
# `twine check`s them, reads their metadata and contents, and installs each alone beside
# each pinned Airflow to run the wheel check; `make test-system` runs the system tests
# (tests/system), against a real AIHC region when AIHC_SYSTEM_TEST_* and
# AIHC_SYSTEM_TEST_CONFIRM=spend are set (`make test` drops them; see
# docs/system-tests.md), else against the emulator. Included by the Makefile
# (`-include mk/*.mk`); alone: `make -f Makefile -f mk/docs.mk -f mk/release.mk release-check`.

.PHONY: release-check test-system

# twine lives in the docs venv (constraints/docs.txt); the package is read from the tree.
release-check: $(VENVS)/docs/bin/python.stamp
	$(VENVS)/docs/bin/python scripts/release_check.py $(AF2)-py3.11 $(AF3)-py3.11

test-system: $(PY3).stamp
	$(PY3) -m pytest tests/system $(PYTEST_ARGS)
