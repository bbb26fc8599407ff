#!/usr/bin/env bash
# Runs every test program (build/tests/test_*) and test script (tests/test_*.sh).
# Each prints a line "RESULT <passed> <failed> <skipped>"; this script adds them up and ends with
# one line "N passed, N failed, N skipped".  A program that crashes or prints no RESULT counts as
# one failure.  KC_FULL=1 enables the full-size checks.  KC_TEST_JOBS (default 2) tests run at a
# time, in a fixed order (the programs, then the slow scripts, then the others), each line printed
# once its test and those before it have finished.
set -u -o pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export BUILD
export KC_SHARED_DATA=${KC_SHARED_DATA:-$(cd .. && pwd)/shared/data}
# One thread each for OpenMP and OpenBLAS unless told otherwise: tests are small.
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} OMP_WAIT_POLICY=PASSIVE
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
only=${1:-}
jobs=${KC_TEST_JOBS:-2}
pass=0 fail=0 skip=0
logdir=$BUILD/test-logs
mkdir -p "$logdir"
# run_one NAME CMD...: runs a test, writes its line (and on failure an excerpt of its log) to
# NAME.out and its counts to NAME.counts, in this order (the counts file says it has finished).
# The line gives the test's wall time and its CPU time (user + system of every process it waited
# for: on a shared machine the wall time says how busy the machine was, the CPU time what it cost).
run_one() {
  local name=$1; shift
  local log=$logdir/$name.log t0=$SECONDS
  timeout 900 "$@" >"$log" 2>&1 &
  local tpid=$!
  echo "$tpid" >"$logdir/$name.pid"
  wait "$tpid"
  local rc=$?
  rm -f "$logdir/$name.pid"
  # its CPU: user + system seconds of this shell's waited-for children (bash's `times`, run in this
  # shell, not in a $(...): its second line is "XmY.YYYs XmY.YYYs")
  times >"$logdir/$name.times"
  local cpu; cpu=$(awk 'NR == 2 { n = 0; for (i = 1; i <= 2; i++) { split($i, a, "m"); n += a[1] * 60 + a[2] } printf "%d", n + 0.5 }' "$logdir/$name.times")
  local line
  line=$(grep -E '^RESULT [0-9]+ [0-9]+ [0-9]+$' "$log" | tail -n 1 || true)
  local p=0 f=0 s=0
  if [ -n "$line" ]; then read -r _ p f s <<<"$line"; fi
  if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
  if [ -z "$line" ] && [ $rc -eq 0 ]; then f=1; echo "(no RESULT line)" >>"$log"; fi
  local status=ok
  [ "$f" -gt 0 ] && status=FAIL
  {
    printf '%-28s %4s  %3d passed %3d failed %3d skipped  (%ds, cpu %ss)\n' "$name" "$status" "$p" "$f" "$s" $((SECONDS - t0)) "$cpu"
    if [ "$f" -gt 0 ]; then grep -E 'FAIL|error|ERROR|Sanitizer|runtime error' "$log" | head -n 15 | sed 's/^/    /'; fi
  } >"$logdir/$name.out"
  echo "$p $f $s" >"$logdir/$name.counts.tmp" && mv "$logdir/$name.counts.tmp" "$logdir/$name.counts"
}
names=() cmds=()
for t in "$BUILD"/tests/test_*; do
  [ -x "$t" ] || continue
  name=$(basename "$t")
  [ -n "$only" ] && [[ $name != *$only* ]] && continue
  names+=("$name") cmds+=("$t")
done
for t in tests/test_*.sh; do
  [ -f "$t" ] || continue
  name=$(basename "$t" .sh)
  [ -n "$only" ] && [[ $name != *$only* ]] && continue
  names+=("$name.sh") cmds+=("bash $t")
done
# the order tests start and are printed in: the programs (seconds), the slow scripts slowest
# first (so that no long one is left alone at the end: CPU seconds of each in `make test` on the
# 2-core test machine, walk 310, storage 130, parity_real 105, pipeline 80, determinism 65,
# vit_full 60, saliency 45, dino23_full 60, probe 45, saliency_make 45, corloc_make 40, kill 40, bad 35,
# report 35, attn_real 30, shard 30, refine 30, report_saliency 15), the other scripts (10 s or less each)
slow=(test_walk.sh test_storage.sh test_parity_real.sh test_pipeline.sh test_determinism.sh test_vit_full.sh test_saliency.sh test_dino23_full.sh
      test_probe.sh test_saliency_make.sh test_corloc_make.sh test_kill.sh test_bad.sh test_report.sh test_attn_real.sh test_shard.sh test_refine.sh
      test_report_saliency.sh)
order=()
for i in "${!names[@]}"; do [[ ${names[$i]} == *.sh ]] || order+=("$i"); done
for n in "${slow[@]}"; do for i in "${!names[@]}"; do [ "${names[$i]}" = "$n" ] && order+=("$i"); done; done
for i in "${!names[@]}"; do [[ ${names[$i]} == *.sh && " ${slow[*]} " != *" ${names[$i]} "* ]] && order+=("$i"); done
for n in "${names[@]}"; do rm -f "$logdir/$n.counts" "$logdir/$n.out" "$logdir/$n.pid"; done
# interrupted: stop the running tests too (started in the background, they ignore SIGINT)
trap 'for n in "${names[@]}"; do [ -f "$logdir/$n.pid" ] && kill -TERM "$(cat "$logdir/$n.pid")" 2>/dev/null; done; exit 130' INT TERM
next=0   # order[next] is the next test whose line is printed
print_done() {
  while [ $next -lt ${#order[@]} ] && [ -f "$logdir/${names[${order[$next]}]}.counts" ]; do
    local p f s n=${names[${order[$next]}]}
    read -r p f s <"$logdir/$n.counts"
    cat "$logdir/$n.out"
    pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
    next=$((next + 1))
  done
}
running=0
for i in "${order[@]}"; do
  if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); print_done; fi
  # shellcheck disable=SC2086  # cmds[i] is a path, or "bash tests/test_x.sh"
  run_one "${names[$i]}" ${cmds[$i]} &
  running=$((running + 1))
done
wait
print_done
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ] && [ $next -eq ${#order[@]} ]
