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
# Airflow 3.2.2 with svcs 26: every task of `airflow dags test` fails in the in-process
# execution API with KeyError 'svcs_registry' (request.app.state); with svcs 25.1.0 (the
# floor 3.2.2 declares) it runs. 3.3.2 runs with svcs 26.
# Airflow 3.0.6 with cadwyn 9 / fastapi 0.165 (what it allows): every task's start is
# refused by the in-process execution API (422 "Input should be a valid dictionary" on
# task-instances/{id}/run); with the cadwyn and fastapi 3.1.8 resolves to, it runs.
case "$airflow" in
  3.2.*) echo "svcs<26" >>"$requirement" ;;
  3.0.*) printf '%s\n' "cadwyn<5.5" "fastapi<0.118" >>"$requirement" ;;
esac
"$root/.venvs/tools/bin/uv" pip compile --quiet --no-header --no-annotate \
  --python "$python" --extra dev -o "$out" "$root/pyproject.toml" "$requirement"
