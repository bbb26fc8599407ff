#!/usr/bin/env bash
# tests/slurm/test_slurm.sh — `make test-slurm` (not part of tests/run.sh: it starts daemons and takes
# about 2-3 minutes).  Checks:
#  1. configs/slurm-submit.sh gives up on a target whose last two attempts failed with the same
#     error (reported with its log path, nothing submitted), and resubmits one whose errors differ
#     (fake sbatch/squeue: needs no cluster).
#  2. On a one-node Slurm cluster started here (tests/slurm/cluster.sh): make demo SCHEDULER=slurm
#     SHARDS=4 with a relative BUILD, one decode array task cancelled mid-run (scancel); `make status`
#     names it with its log; the rerun resubmits exactly that shard (plus the merge and final jobs)
#     and ends with tables byte-identical to plain make demo.
# SKIP (never FAIL) for part 2 when the cluster cannot run here.
source "$(dirname "$0")/../lib.sh"
T=$(tmpdir slurm)
export KC_QUIET=1

# ---- 1. the give-up rule, with a fake sbatch --------------------------------------------------
F=$T/fake; mkdir -p "$F/bin" "$F/s/round-1/logs" "$F/s/round-2/logs"
printf '#!/bin/sh\necho "$*" >> %s/sbatch.calls\necho 7\n' "$F" > "$F/bin/sbatch"
printf '#!/bin/sh\nexit 0\n' > "$F/bin/squeue"
chmod +x "$F/bin/sbatch" "$F/bin/squeue"
tgt=$F/out/masks.h5.shards/2-of-4.h5
echo "decode - $tgt" > "$F/s/plan.txt"
for r in 1 2; do
  echo "decode $r" > "$F/s/round-$r/jobs.tsv"
  echo "decode 1 $tgt $F/s/round-$r/logs/decode-1.log" > "$F/s/round-$r/tasks.tsv"
  printf 'keycut: ...\nkc-decode: error: %s: settings grid has no setting t9\nmake[1]: *** Error 1\n' "$tgt" \
    > "$F/s/round-$r/logs/decode-1.log"
done
fake_submit() {
  PATH=$F/bin:$PATH KC_SLURM_DIR=$F/s KC_SLURM_INI=tests/slurm/test.ini KC_SLURM_GOAL=demo \
    KC_SLURM_MAKE=true KC_SLURM_FINAL=true configs/slurm-submit.sh
}
out=$(fake_submit 2>&1); rc=$?
if [ $rc -ne 0 ] && grep -q "failed twice with the same error" <<<"$out" && grep -q "log: $F/s/round-2/logs/decode-1.log" <<<"$out" \
   && [ ! -f "$F/sbatch.calls" ]; then ok; else bad "give-up rule (rc=$rc): $out"; fi
rm -rf "$F/s/round-3"
echo "kc-decode: error: $tgt: cannot create (No space left on device)" >> "$F/s/round-2/logs/decode-1.log"
out=$(fake_submit 2>&1); rc=$?
[ $rc -eq 0 ] && [ "$(wc -l < "$F/sbatch.calls" 2>/dev/null)" = 2 ] && grep -q "$tgt" "$F/s/round-3/decode.sbatch" \
  && grep -q -- "--chdir=$PWD" "$F/s/round-3/decode.sbatch" && ok || bad "different errors must be resubmitted (rc=$rc): $out"
rm -rf "$F/s/round-3" "$F/sbatch.calls"
for r in 1 2; do   # killed twice at the time limit (other job ids and times): given up as well
  printf 'keycut: ...\nslurmstepd-n%d: error: *** JOB %d ON n%d CANCELLED AT 2026-11-30T0%d:15:56 DUE TO TIME LIMIT ***\n' $r $((r * 17)) $r $r \
    > "$F/s/round-$r/logs/decode-1.log"
done
out=$(fake_submit 2>&1); rc=$?
[ $rc -ne 0 ] && grep -q "DUE TO TIME LIMIT" <<<"$out" && [ ! -f "$F/sbatch.calls" ] && ok || bad "time limit twice must be given up (rc=$rc): $out"

# ---- 2. a real one-node cluster ---------------------------------------------------------------
C=$T/cluster
if ! out=$(tests/slurm/cluster.sh start "$C" 2>&1); then
  skip "no Slurm cluster: $(tail -n 1 <<<"$out")"
  done_tests; exit 0
fi
export SLURM_CONF=$C/slurm.conf PATH=$PATH:/usr/sbin
trap 'tests/slurm/cluster.sh stop "$C"' EXIT
trap 'exit 143' INT TERM   # (timeout, ^C: still stop the daemons)
M="make --no-print-directory -s BUILD=$BUILD"
ARGS=(SHARDS=4 SLURM_INI=tests/slurm/test.ini DEMO_DIR="$T/ds" DEMO_TABLES="$T/ts")
t0=$SECONDS
$M demo DEMO_DIR="$T/d1" DEMO_TABLES="$T/t1" >"$T/plain.log" 2>&1 || bad "plain make demo failed: $(tail -n 3 "$T/plain.log")"
echo "plain make demo: $((SECONDS - t0)) s"

wait_idle() { # until no job is queued on the test cluster (at most $1 s)
  for _ in $(seq "$1"); do [ -z "$(squeue -h 2>/dev/null)" ] && return 0; sleep 1; done; return 1
}
# round 1: submit, cancel one decode task as soon as it runs
t0=$SECONDS
$M demo SCHEDULER=slurm "${ARGS[@]}" >"$T/submit1.log" 2>&1 && ok || bad "submit failed: $(tail -n 3 "$T/submit1.log")"
cat "$T/submit1.log"
decode=$(awk '$2 == "decode" {print $4}' "$T/submit1.log")
cancelled=
for _ in $(seq 1500); do
  [ -n "$decode" ] || break
  st=$(squeue -h -r -j "$decode" -o '%i %T' 2>/dev/null | awk '$2 == "RUNNING" {print $1; exit}')
  if [ -n "$st" ]; then scancel "$st"; cancelled=$st; break; fi
  [ -n "$(squeue -h 2>/dev/null)" ] || break
  sleep 0.1
done
[ -n "$cancelled" ] && ok || bad "no decode task seen running"
echo "cancelled $cancelled"
echo "--- make status during round 1:"; $M status DEMO_DIR="$T/ds" OUT="$T/ds" | tail -n 6
wait_idle 150 || bad "round 1 jobs still queued"
echo "round 1: $((SECONDS - t0)) s"
echo "--- make status after round 1 (without the done lines):"
$M status OUT="$T/ds" > "$T/status1.txt"; grep -vE '^  \S+ +done ' "$T/status1.txt" | tail -n 12
want=${cancelled#*_}
grep -q "^  decode#$want  *cancelled .*masks.h5.shards/$want-of-4.h5" "$T/status1.txt" \
  && grep -q "log: .*/round-1/logs/decode-$want.log" "$T/status1.txt" && ok \
  || bad "make status does not name the cancelled decode#$want with its log"
# round 2: exactly the cancelled shard is resubmitted (its step), then merge and final
t0=$SECONDS
$M demo SCHEDULER=slurm "${ARGS[@]}" >"$T/submit2.log" 2>&1 || bad "resubmit failed: $(tail -n 3 "$T/submit2.log")"
cat "$T/submit2.log"
steps=$(awk '{print $1}' "$T"/ds/slurm/round-2/tasks.tsv | paste -sd' ')
[ "$steps" = "decode merge-masks final" ] && grep -q "^decode 1 .*masks.h5.shards/$want-of-4.h5 " "$T/ds/slurm/round-2/tasks.tsv" && ok \
  || bad "round 2 resubmitted: $(cut -d' ' -f1-3 "$T/ds/slurm/round-2/tasks.tsv" | tr '\n' ';')"
wait_idle 150 || bad "round 2 jobs still queued"
echo "round 2: $((SECONDS - t0)) s"
echo "--- make status after round 2:"; $M status OUT="$T/ds" | tail -n 3
$M status OUT="$T/ds" | grep -q "failed or not run 0" && ok || bad "make status after round 2 still reports failures"
n=0; diffs=0
for f in "$T"/t1/*; do n=$((n + 1)); cmp -s "$f" "$T/ts/$(basename "$f")" || diffs=$((diffs + 1)); done
echo "slurm tables vs plain: $n files, $diffs differ"
[ "$n" -ge 7 ] && [ "$diffs" -eq 0 ] && ok || bad "slurm demo tables differ from plain make demo ($diffs of $n)"
[ "$diffs" -eq 0 ] || grep -h 'error' "$T"/ds/slurm/round-*/logs/*.log | sort | uniq -c | head -n 5
done_tests
