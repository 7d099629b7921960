#!/usr/bin/env bash
# Resolve constraints/airflow-<AIRFLOW>-py<PYTHON>.txt: the project, its dev extra and
# apache-airflow==<AIRFLOW>, for that Python. The upstream constraint URLs are unreachable
# from CI, so every tested combination is resolved here and committed. An existing file's
# pins are kept where they still fit (uv prefers what the output file already holds), so
# re-running after a pyproject change moves only what must move.
# Usage: scripts/compile_constraints.sh AIRFLOW PYTHON_EXECUTABLE PYTHON_VERSION
set -euo pipefail
airflow="$1" python="$2" pyver="$3"
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/constraints/airflow-$airflow-py$pyver.txt"
requirement="$(mktemp)"
trap 'rm -f "$requirement"' EXIT
echo "apache-airflow==$airflow" >"$requirement"
"$root/.venvs/tools/bin/uv" pip compile --quiet --no-header --no-annotate \
  --python "$python" --extra dev -o "$out" "$root/pyproject.toml" "$requirement"
