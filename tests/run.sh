#!/usr/bin/env bash
# Runs every test program (build/tests/test_*) and test script (tests/test_*.sh).
# Each prints a line "RESULT <passed> <failed> <skipped>"; this script adds them up and ends with
# one line "N passed, N failed, N skipped".  A program that crashes or prints no RESULT counts as
# one failure.  KC_FULL=1 enables the full-size checks.
set -u -o pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export BUILD
export KC_SHARED_DATA=${KC_SHARED_DATA:-$(cd .. && pwd)/shared/data}
# One thread each for OpenMP and OpenBLAS unless told otherwise: tests are small.
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} OMP_WAIT_POLICY=PASSIVE
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
only=${1:-}
pass=0 fail=0 skip=0
logdir=$BUILD/test-logs
mkdir -p "$logdir"
run_one() {
  local name=$1; shift
  local log=$logdir/$name.log t0=$SECONDS
  timeout 900 "$@" >"$log" 2>&1
  local rc=$?
  local line
  line=$(grep -E '^RESULT [0-9]+ [0-9]+ [0-9]+$' "$log" | tail -n 1 || true)
  local p=0 f=0 s=0
  if [ -n "$line" ]; then read -r _ p f s <<<"$line"; fi
  if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
  if [ -z "$line" ] && [ $rc -eq 0 ]; then f=1; echo "(no RESULT line)" >>"$log"; fi
  pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
  local status=ok
  [ "$f" -gt 0 ] && status=FAIL
  printf '%-28s %4s  %3d passed %3d failed %3d skipped  (%ds)\n' "$name" "$status" "$p" "$f" "$s" $((SECONDS - t0))
  if [ "$f" -gt 0 ]; then grep -E 'FAIL|error|ERROR|Sanitizer|runtime error' "$log" | head -n 15 | sed 's/^/    /'; fi
}
for t in "$BUILD"/tests/test_*; do
  [ -x "$t" ] || continue
  name=$(basename "$t")
  [ -n "$only" ] && [[ $name != *$only* ]] && continue
  run_one "$name" "$t"
done
for t in tests/test_*.sh; do
  [ -f "$t" ] || continue
  name=$(basename "$t" .sh)
  [ -n "$only" ] && [[ $name != *$only* ]] && continue
  run_one "$name.sh" bash "$t"
done
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
