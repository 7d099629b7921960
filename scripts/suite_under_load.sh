#!/usr/bin/env bash
# The "never flaky" proof: the whole unit and emulator suite (make test-fast's
# selection) N times in a row while a CPU hog keeps both cores busy. The hog is one
# busy-loop process per core, at the same priority as the suite (a nice 19 hog yields to
# every wake-up and loads nothing that matters), started here and stopped on any exit.
# Each run's log (with its 25 slowest tests) is kept in $LOAD_DIR; one line a run (exit
# code, wall seconds, CPU seconds of pytest and all it started, load average, pytest's
# summary), then the totals. Exits non-zero if any run failed. LOAD_FIRST=K resumes a
# series at run K (its summary file is appended to).
#
#   scripts/suite_under_load.sh PYTHON [N] [pytest args...]      (make test-load N=20)
set -uo pipefail
python="$1"
runs="${2:-20}"
shift $(($# >= 2 ? 2 : 1))
load_dir="${LOAD_DIR:-build/load}"
first="${LOAD_FIRST:-1}"
cores="$(nproc)"
mkdir -p "$load_dir"

hogs=()
stop_hogs() {
  for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${hogs[@]}"; do wait "$pid" 2>/dev/null; done
  hogs=()
}
trap stop_hogs EXIT
trap 'exit 130' INT TERM
for _ in $(seq 1 "$cores"); do
  "$python" -c 'while True: pass' &
  hogs+=("$!")
done
echo "load: $cores busy-loop processes (pids ${hogs[*]}), runs $first to $runs, logs in $load_dir"

passed_runs=0
failed_runs=0
summary="$load_dir/summary.txt"
[ "$first" = 1 ] && : >"$summary"
TIMEFORMAT='%U %S'
for i in $(seq "$first" "$runs"); do
  log="$load_dir/run-$i.log"
  started=$SECONDS
  # bash's `time` reports the CPU (user, sys) of pytest and everything it started
  { time "$python" -m pytest -q -n 2 -m "not dagrun" --durations=25 tests/unit tests/emulator \
    "$@" >"$log" 2>&1; } 2>"$log.cpu"
  status=$?
  read -r user sys <"$log.cpu"
  # pytest's closing line ("1179 passed, 8 xfailed in 470.55s (0:07:50)"; with or without ===).
  result="$(grep -E '(passed|failed|error).* in [0-9.]+s' "$log" | tail -1 | tr -d '=' |
    sed 's/^ *//; s/ *$//')"
  if [ "$status" = 0 ]; then passed_runs=$((passed_runs + 1)); else failed_runs=$((failed_runs + 1)); fi
  line="run $i/$runs: exit $status in $((SECONDS - started)) s, CPU user ${user:-?} s sys ${sys:-?} s"
  line="$line (load $(cut -d' ' -f1-3 /proc/loadavg)): ${result:-no summary line}"
  echo "$line" | tee -a "$summary"
  if [ "$status" != 0 ]; then
    grep -E '^(FAILED|ERROR) ' "$log" | sed 's/^/    /' | tee -a "$summary"
  fi
done
stop_hogs
echo "under load: $passed_runs runs passed, $failed_runs failed, of runs $first to $runs" |
  tee -a "$summary"
[ "$failed_runs" = 0 ]
