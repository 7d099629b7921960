# The documentation site: `make docs` builds docs/ into build/docs/html with
# Sphinx, warnings as errors and nitpicky references, then checks every internal link and
# that every public class and function has a reference entry; `make docs-check` serves the
# built site on the loopback and opens every page in Debian's Chromium. Included by the
# Makefile (`-include mk/*.mk`); alone: `make -f Makefile -f mk/docs.mk docs`.

DOCS_VENV := $(VENVS)/docs
DOCS_PY := $(DOCS_VENV)/bin/python
DOCS_OUT := build/docs

.PHONY: docs docs-check docs-screenshot

# Airflow 3.3 itself is in the docs venv: autodoc imports the package as Airflow does, so a
# public module that fails to import fails the build.
$(DOCS_PY).stamp: constraints/airflow-$(AF3)-py3.11.txt constraints/docs.txt pyproject.toml | $(UV)
	$(UV) venv --quiet --allow-existing --python $(PYTHON) $(DOCS_VENV)
	$(UV) pip install --quiet --compile-bytecode --python $(DOCS_PY) \
		-c constraints/airflow-$(AF3)-py3.11.txt -c constraints/docs.txt "apache-airflow==$(AF3)" \
		pytest twine playwright -e ".[docs,openlineage]"
	touch $@

docs: $(DOCS_PY).stamp
	rm -rf $(DOCS_OUT)/html $(DOCS_OUT)/doctrees $(DOCS_OUT)/linkcheck
	$(DOCS_PY) -m sphinx -b html -W --keep-going -n -q -d $(DOCS_OUT)/doctrees docs $(DOCS_OUT)/html
	$(DOCS_PY) scripts/check_docs.py $(DOCS_OUT)/html

# Needs the site (make docs) and Chromium (apt-get install chromium when missing, as root).
docs-check: docs
	@test -x /usr/bin/chromium || apt-get install -y -q chromium
	$(DOCS_PY) scripts/check_docs_browser.py $(DOCS_OUT)/html --screenshots build/docs-screenshots

# The connection form the docs show is a committed copy of the deployment check's
# screenshot; after `make test-deployment`, this refreshes it.
docs-screenshot:
	cp build/deployment/screenshots/2-connection-form.png docs/_static/connection-form.png
