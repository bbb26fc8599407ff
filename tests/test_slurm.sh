#!/usr/bin/env bash
# make demo SCHEDULER=slurm SHARDS=4 on a one-node Slurm cluster started here (tests/slurm/cluster.sh):
# tables byte-identical to plain make demo; one array task cancelled mid-run (scancel) and the
# rerun resubmits exactly that shard (plus the steps after it) and ends with the same tables;
# `make status` shown.  SKIP (never FAIL) when the cluster cannot run here.
source "$(dirname "$0")/lib.sh"
T=$(tmpdir slurm)
export KC_QUIET=1
C=$T/cluster
if ! out=$(tests/slurm/cluster.sh start "$C" 2>&1); then
  skip "no Slurm cluster: $(tail -n 1 <<<"$out")"
  done_tests; exit 0
fi
export SLURM_CONF=$C/slurm.conf PATH=$PATH:/usr/sbin
trap 'tests/slurm/cluster.sh stop "$C"' EXIT
M="make --no-print-directory -s BUILD=$BUILD"
ARGS=(SHARDS=4 SLURM_INI=tests/slurm/test.ini DEMO_DIR="$T/ds" DEMO_TABLES="$T/ts")
$M demo DEMO_DIR="$T/d1" DEMO_TABLES="$T/t1" >"$T/plain.log" 2>&1 || bad "plain make demo failed"

wait_final() { # until no job of ours is queued (at most $1 s)
  for _ in $(seq "$1"); do [ -z "$(squeue -h 2>/dev/null)" ] && return 0; sleep 1; done; return 1
}
# round 1: submit, cancel one decode task as soon as it runs
$M demo SCHEDULER=slurm "${ARGS[@]}" >"$T/submit1.log" 2>&1 && ok || bad "submit failed: $(tail -n 3 "$T/submit1.log")"
cat "$T/submit1.log"
decode=$(awk '$2 == "decode" {print $4}' "$T/submit1.log")
cancelled=
for _ in $(seq 150); do
  st=$(squeue -h -r -j "$decode" -o '%i %T' 2>/dev/null | awk '$2 == "RUNNING" {print $1; exit}')
  if [ -n "$st" ]; then scancel "$st"; cancelled=$st; break; fi
  sleep 1
done
[ -n "$cancelled" ] && ok || bad "no decode task seen running"
echo "cancelled $cancelled"
$M status DEMO_DIR="$T/ds" OUT="$T/ds" | tail -n 6
wait_final 150 || bad "round 1 jobs still queued"
echo "--- make status after round 1:"; $M status OUT="$T/ds" | grep -vE '^  \S+ +done ' | tail -n 12
# round 2: exactly the cancelled shard is resubmitted (its step), then merge and final
$M demo SCHEDULER=slurm "${ARGS[@]}" >"$T/submit2.log" 2>&1 || bad "resubmit failed: $(tail -n 3 "$T/submit2.log")"
cat "$T/submit2.log"
n_tasks=$(awk '$1 == "decode" || $1 == "extract" || $1 == "center" || $1 == "propagate"' "$T"/ds/slurm/round-2/tasks.tsv | wc -l)
want=${cancelled#*_}
[ "$n_tasks" -eq 1 ] && grep -q "^decode 1 .*masks.h5.shards/$want-of-4.h5 " "$T/ds/slurm/round-2/tasks.tsv" && ok \
  || bad "round 2 resubmitted $(cat "$T/ds/slurm/round-2/tasks.tsv" | tr '\n' ';')"
wait_final 150 || bad "round 2 jobs still queued"
echo "--- make status after round 2:"; $M status OUT="$T/ds" | tail -n 3
n=0; diffs=0
for f in "$T"/t1/*; do n=$((n + 1)); cmp -s "$f" "$T/ts/$(basename "$f")" || diffs=$((diffs + 1)); done
echo "slurm tables vs plain: $n files, $diffs differ"
[ "$n" -ge 7 ] && [ "$diffs" -eq 0 ] && ok || bad "slurm demo tables differ from plain make demo ($diffs of $n)"
done_tests
