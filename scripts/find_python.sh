#!/usr/bin/env bash
# The interpreter for Python X.Y: pyenv's newest X.Y.* if pyenv has one, else pythonX.Y on
# PATH, each only if it really runs (pyenv's shims on PATH fail unless that version is
# selected); else uv's managed X.Y, which uv installs (downloads) when it has none. Prints
# its path, or says which Python is missing and how to get it.
set -uo pipefail
want="$1"
uv="${UV:-.venvs/tools/bin/uv}"
candidates=()
if command -v pyenv >/dev/null 2>&1; then
  for v in $(pyenv versions --bare 2>/dev/null | grep -E "^${want//./\\.}\.[0-9]+$" | sort -t. -k3 -rn); do
    candidates+=("$(pyenv prefix "$v")/bin/python$want")
  done
fi
onpath="$(command -v "python$want" 2>/dev/null || true)"
[ -n "$onpath" ] && candidates+=("$onpath")
runs() {
  "$1" -c "import sys; assert sys.version_info[:2] == tuple(map(int, '$want'.split('.')))" \
    >/dev/null 2>&1
}
for python in "${candidates[@]}"; do
  if runs "$python"; then
    echo "$python"
    exit 0
  fi
done
if [ -x "$uv" ]; then
  managed="$("$uv" python find --managed-python "$want" 2>/dev/null)" \
    || { "$uv" python install --quiet "$want" >&2 \
      && managed="$("$uv" python find --managed-python "$want" 2>/dev/null)"; }
  if [ -n "${managed:-}" ] && runs "$managed"; then
    echo "$managed"
    exit 0
  fi
fi
echo "Python $want is missing: the test matrix needs it (tried pyenv's $want.*," \
  "python$want on PATH${onpath:+ ($onpath does not run)} and '$uv python install $want')." \
  "Install it, e.g. 'pyenv install $want', or put a working python$want on PATH." >&2
exit 1
