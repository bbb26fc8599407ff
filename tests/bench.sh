#!/usr/bin/env bash
# tests/bench.sh — `make bench`: runs every tests/bench_*.sh in turn (BUILD selects the build).
# Benchmarks print figures; they assert nothing.  A failing script is reported and counted.
set -u -o pipefail
cd "$(dirname "$0")/.."
export BUILD=${BUILD:-build}
failed=0
for b in tests/bench_*.sh; do
  [ -f "$b" ] || continue
  echo "### $(basename "$b" .sh)"
  if ! bash "$b"; then echo "### $(basename "$b" .sh): FAILED" >&2; failed=$((failed + 1)); fi
  echo
done
[ "$failed" -eq 0 ]
