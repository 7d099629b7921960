# An Airflow image with the provider (docs/quickstart.md "Install"). Until the provider is
# on PyPI it is installed from the wheel `make release-check` builds into dist/, beside the
# same Airflow the image has, with this repository's tested pins (constraints/).
#
#   make release-check
#   docker build -t my-airflow-aihc --build-arg AIRFLOW_VERSION=3.3.2 .
#
# `make release-check` (scripts/check_wheel.py) runs this file's install line into a fresh
# venv for every pinned Airflow and runs a DAG with the installed provider: the build's
# check without a container runtime.
ARG AIRFLOW_VERSION=3.3.2
ARG PYTHON_VERSION=3.11
FROM apache/airflow:${AIRFLOW_VERSION}-python${PYTHON_VERSION}
ARG AIRFLOW_VERSION
ARG PYTHON_VERSION
COPY dist/airflow_provider_aihc-*.whl /tmp/aihc/
COPY constraints/airflow-${AIRFLOW_VERSION}-py${PYTHON_VERSION}.txt /tmp/aihc/constraints.txt
RUN pip install --no-cache-dir -c /tmp/aihc/constraints.txt "apache-airflow==${AIRFLOW_VERSION}" /tmp/aihc/airflow_provider_aihc-*.whl
