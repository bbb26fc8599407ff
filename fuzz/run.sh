#!/usr/bin/env bash
# fuzz/run.sh MODE SECONDS "LIBFUZZER OPTIONS" NAME...   (called by `make fuzz` / `make fuzz-smoke`)
#   MODE total: SECONDS is split evenly over the harnesses; MODE each: SECONDS per harness.
# Per-harness extras: fuzz/<parser>.options (more libFuzzer flags), fuzz/<parser>.supp (ASan suppressions).
# Runs $FUZZ_BUILD/<name> on a working corpus $FUZZ_BUILD/corpus/<parser> seeded from
# fuzz/corpus/<parser>, prints executions per harness, exits 1 if any harness failed.
set -u -o pipefail
cd "$(dirname "$0")/.." || exit 2
mode=$1 secs=$2 opts=$3; shift 3
n=$#
if [ "$mode" = total ]; then per=$(( secs / n )); else per=$secs; fi
[ "$per" -ge 1 ] || per=1
export KC_QUIET=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
fail=0 total_exec=0
echo "fuzz: $n harnesses, $per s each (mode $mode, $secs s)"
for name in "$@"; do
  parser=${name#fuzz_}
  work=$FUZZ_BUILD/corpus/$parser crashes=$FUZZ_BUILD/crashes log=$FUZZ_BUILD/logs/$name.log
  mkdir -p "$work" "$crashes" "$(dirname "$log")"
  seeds=fuzz/corpus/$parser
  [ -d "$seeds" ] || seeds=
  asan=$ASAN_OPTIONS
  [ -f "fuzz/$parser.supp" ] && asan="$asan:suppressions=fuzz/$parser.supp"
  extra=
  [ -f "fuzz/$parser.options" ] && extra=$(cat "fuzz/$parser.options")
  # shellcheck disable=SC2086
  ASAN_OPTIONS=$asan "$FUZZ_BUILD/$name" $opts $extra -max_total_time="$per" -artifact_prefix="$crashes/$parser-" \
      "$work" $seeds >"$log" 2>&1
  rc=$?
  execs=$(grep -Eo 'stat::number_of_executed_units: +[0-9]+' "$log" | tail -n 1 | grep -Eo '[0-9]+$' || echo 0)
  rate=$(grep -Eo 'stat::average_exec_per_sec: +[0-9]+' "$log" | tail -n 1 | grep -Eo '[0-9]+$' || echo 0)
  cov=$(grep -Eo 'cov: [0-9]+' "$log" | tail -n 1 | grep -Eo '[0-9]+$' || echo 0)
  total_exec=$((total_exec + execs))
  status=ok
  if [ $rc -ne 0 ]; then status="FAILED (exit $rc; see $log)"; fail=1; fi
  printf '%-22s %10s executions in %4d s (%s/s), coverage %s edges, corpus %s files: %s\n' \
    "$name:" "$execs" "$per" "$rate" "$cov" "$(ls "$work" | wc -l)" "$status"
  if [ $rc -ne 0 ]; then grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log" | head -n 8 | sed 's/^/    /'; fi
done
echo "fuzz: $total_exec executions in total, $([ $fail -eq 0 ] && echo 'no crashes' || echo 'FAILURES')"
exit $fail
