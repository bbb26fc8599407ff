#!/usr/bin/env bash
# tests/slurm/test_slurm.sh — `make test-slurm` (not part of tests/run.sh: it starts daemons and takes
# about 3-4 minutes).  Checks:
#  1. Without a cluster (fake sbatch, squeue, scontrol): the give-up rule of configs/slurm-submit.sh;
#     the refusal of requests the cluster cannot meet, word for word, nothing submitted; `make status`
#     turning Slurm's pending reasons into plain words, word for word; the steps `make demo`, `make
#     report` (SETTING=best and a given setting) and `make davis` submit.
#  2. On a two-node Slurm cluster started here (tests/slurm/cluster.sh: two slurmd on this machine;
#     one node, and the two-node check skipped with the reason, when two cannot start): a request
#     too large refused, nothing queued; make report SCHEDULER=slurm SHARDS=4 with one decode-val
#     task cancelled while it runs; `make status` names it with its log; the rerun resubmits exactly
#     that task (plus the merge and final jobs); the tables are byte-identical to plain make demo;
#     no shard file is left after the verified merges; the extract shards ran on both nodes;
#     make davis SCHEDULER=slurm SHARDS=2 KEEP_SHARDS=1 gives plain make demo's J&F, shards kept;
#     up to date as make means it: after make demo SCHEDULER=slurm SHARDS=2 (networks color and
#     random), a rerun submits nothing; `touch` of random's weights: make status reports random's
#     targets (and the final job) out of date and color's done, the rerun submits exactly random's
#     targets and the final job, the tables keep their values but are rewritten, color's caches,
#     scores and results are not (mtimes), and the next rerun submits nothing again.
# SKIP (never FAIL) for part 2 when no cluster can run here.
source "$(dirname "$0")/../lib.sh"
T=$(tmpdir slurm)
export KC_QUIET=1

# ---- 1. the give-up rule, with a fake sbatch --------------------------------------------------
F=$T/fake; mkdir -p "$F/bin" "$F/s/round-1/logs" "$F/s/round-2/logs"
# sbatch: records its arguments, answers job ids 7, 8, ...; squeue: $F/squeue.out; scontrol: a
# cluster of two partitions (kc: nodes of 2 CPUs / 4000M and 4 CPUs / 2000M, at most 1 hour; big:
# 16 CPUs, 2000M per CPU, 2 days); sacct: nothing (no accounting)
cat > "$F/bin/sbatch" <<EOF
#!/bin/sh
echo "\$*" >> $F/sbatch.calls
n=\$(cat $F/sbatch.calls | wc -l); echo \$((n + 6))
EOF
printf '#!/bin/sh\ncat %s/squeue.out 2>/dev/null; exit 0\n' "$F" > "$F/bin/squeue"
printf '#!/bin/sh\nexit 0\n' > "$F/bin/sacct"
cat > "$F/bin/scontrol" <<EOF
#!/bin/sh
[ ! -f $F/scontrol.fail ] || { echo "slurm_load_partitions: Unable to contact slurm controller (connect failure)" >&2; exit 1; }
case "\$*" in
  "show partition -o") cat <<'P'
PartitionName=kc AllowGroups=ALL Default=YES DefaultTime=NONE MaxNodes=UNLIMITED MaxTime=01:00:00 MaxCPUsPerNode=UNLIMITED Nodes=n[1-2] State=UP MaxMemPerNode=UNLIMITED
PartitionName=big AllowGroups=ALL Default=NO MaxTime=2-00:00:00 MaxCPUsPerNode=UNLIMITED Nodes=n3 State=UP MaxMemPerCPU=2000
P
  ;;
  "show node -o") cat <<'N'
NodeName=n1 Arch=x86_64 CoresPerSocket=1 CPUAlloc=0 CPUEfctv=2 CPUTot=2 RealMemory=4000 Partitions=kc State=IDLE
NodeName=n2 Arch=x86_64 CoresPerSocket=1 CPUAlloc=0 CPUEfctv=4 CPUTot=4 RealMemory=2500 MemSpecLimit=500 Partitions=kc State=IDLE
NodeName=n3 Arch=x86_64 CoresPerSocket=1 CPUAlloc=0 CPUEfctv=16 CPUTot=16 RealMemory=64000 Partitions=big State=IDLE
N
  ;;
  *) echo "scontrol: unexpected \$*" >&2; exit 1 ;;
esac
EOF
chmod +x "$F/bin/sbatch" "$F/bin/squeue" "$F/bin/sacct" "$F/bin/scontrol"
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
[ $rc -eq 0 ] && [ "$(wc -l < "$F/sbatch.calls" 2>/dev/null)" = 2 ] && [ -f "$F/s/round-3/decode.sbatch" ] && grep -q "$tgt" "$F/s/round-3/decode.sbatch" \
  && grep -q -- "--chdir=$PWD" "$F/s/round-3/decode.sbatch" && ok || bad "different errors must be resubmitted (rc=$rc): $out"
rm -rf "$F/s/round-3" "$F/sbatch.calls"
for r in 1 2; do   # killed twice at the time limit (other job ids and times): given up as well
  printf 'keycut: ...\nslurmstepd-n%d: error: *** JOB %d ON n%d CANCELLED AT 2026-11-30T0%d:15:56 DUE TO TIME LIMIT ***\n' $r $((r * 17)) $r $r \
    > "$F/s/round-$r/logs/decode-1.log"
done
out=$(fake_submit 2>&1); rc=$?
[ $rc -ne 0 ] && grep -q "DUE TO TIME LIMIT" <<<"$out" && [ ! -f "$F/sbatch.calls" ] && ok || bad "time limit twice must be given up (rc=$rc): $out"


# ---- 1b. requests the fake cluster cannot meet: one line each, exactly; nothing submitted --------
rm -rf "$F/s/round-3" "$F/sbatch.calls" "$F/s/round-1" "$F/s/round-2"
cat > "$F/big.ini" <<'EOF'
[defaults]
time = 00:10:00
cpus = 1
mem = 400M
[extract]
cpus = 8
[center]
time = 2:00:00
[propagate]
cpus = 4
mem = 3G
[decode]
mem = 8G
cpus = lots
[merge-masks]
partition = gpu
[davis]
mem = lots
[best]
time = soon
[final]
partition = big
cpus = 2
mem = 8G
EOF
for st in extract center propagate decode merge-masks davis best; do echo "$st - $F/out/$st.h5"; done > "$F/s/plan.txt"
out=$(PATH=$F/bin:$PATH KC_SLURM_DIR=$F/s KC_SLURM_INI=$F/big.ini KC_SLURM_GOAL=report KC_SLURM_MAKE=true KC_SLURM_FINAL=true \
      configs/slurm-submit.sh 2>&1); rc=$?
want="slurm: step extract asks for 8 CPUs per task, partition kc offers at most 4 per node: lower cpus in [extract] of $F/big.ini
slurm: step center asks for 2:00:00, partition kc allows at most 01:00:00 (MaxTime): lower time in [center] of $F/big.ini
slurm: step propagate asks for 4 CPUs and 3G of memory on one node, no node of partition kc has both: lower cpus or mem in [propagate] of $F/big.ini
slurm: step decode: cpus = lots is not a number of CPUs: fix cpus in [decode] of $F/big.ini
slurm: step decode asks for 8G of memory, partition kc offers at most 4000M per node: lower mem in [decode] of $F/big.ini
slurm: step merge-masks asks for partition gpu, which the cluster does not have (it has: kc, big): change partition in [merge-masks] of $F/big.ini
slurm: step davis: mem = lots is not an amount of memory (e.g. 4G, 500M): fix mem in [davis] of $F/big.ini
slurm: step best: time = soon is not a time limit (e.g. 04:00:00, 1-00:00:00): fix time in [best] of $F/big.ini
slurm: step final asks for 8G of memory, partition big offers at most 4000M per node: lower mem in [final] of $F/big.ini
slurm: nothing submitted: 9 request(s) above can never be met on this cluster (see sinfo, scontrol show partition, scontrol show node)"
[ $rc = 2 ] && [ "$out" = "$want" ] && ok || bad "refusal of the fake cluster (rc=$rc): $(diff <(echo "$want") <(echo "$out"))"
[ ! -f "$F/sbatch.calls" ] && [ -z "$(ls -d "$F"/s/round-* 2>/dev/null)" ] && ok || bad "a refused submission submitted or wrote a round"
touch "$F/scontrol.fail"
out=$(PATH=$F/bin:$PATH KC_SLURM_DIR=$F/s KC_SLURM_INI=tests/slurm/test.ini KC_SLURM_GOAL=report KC_SLURM_MAKE=true KC_SLURM_FINAL=true \
      configs/slurm-submit.sh 2>&1); rc=$?
want="slurm: cannot read the cluster's limits (scontrol show partition / show node: slurm_load_partitions: Unable to contact slurm controller (connect failure)); nothing submitted"
[ $rc = 2 ] && [ "$out" = "$want" ] && [ ! -f "$F/sbatch.calls" ] && ok || bad "no cluster limits (rc=$rc): $out"
rm -f "$F/scontrol.fail"

# ---- 1c. make status: Slurm's pending reasons in plain words, exactly -----------------------------
mkdir -p "$F/s/round-1/logs"
declare -A words=(
  [Dependency]="waiting for the jobs it depends on to finish"
  [Resources]="waiting for free CPUs or memory (the nodes are busy)"
  [Priority]="waiting for its turn (other jobs have priority)"
  [JobArrayTaskLimit]="waiting: max_parallel tasks of this array already run"
  [BeginTime]="waiting for its start time"
  [None]="waiting to be scheduled"
  [PartitionDown]="waiting: the partition is down (the administrators must bring it up)"
  [NodeDown]="waiting: the nodes it needs are down or reserved"
  [JobHeldUser]="held: scontrol release <jobid> lets it run"
  [QOSMaxCpuPerUserLimit]="waiting for a limit of your account or QOS (running jobs, CPUs or time in use) to allow it"
  [PartitionConfig]="never: it asks for more than its partition, account or QOS allows (scancel <jobid>, fix the step in SLURM_INI, rerun)"
  [QOSMaxWallDurationPerJobLimit]="never: it asks for more than its partition, account or QOS allows (scancel <jobid>, fix the step in SLURM_INI, rerun)"
  [DependencyNeverSatisfied]="never: a job it depends on failed (cancel it: scancel <jobid>; then rerun the make command)"
)
printf 'decode 41\n' > "$F/s/round-1/jobs.tsv"; : > "$F/s/round-1/tasks.tsv"; : > "$F/squeue.out"
k=0; want="== $F/s (1 round(s))"
for r in $(printf '%s\n' "${!words[@]}" | LC_ALL=C sort); do
  k=$((k + 1)); echo "decode $k $F/out/$r.h5 $F/s/round-1/logs/decode-$k.log" >> "$F/s/round-1/tasks.tsv"
  echo "41_$k PENDING $r" >> "$F/squeue.out"
  want+=$'\n'"$(printf '  %-16s %-16s %s\n                     %s' "decode#$k" pending "$F/out/$r.h5" "${words[$r]} (Slurm reason: $r, job 41_$k)")"
done
want+="
  done 0, running 0, pending 13, failed or not run 0
  3 task(s) can never start as submitted: cancel them (scancel <jobid>), fix their step in the resource file (SLURM_INI) and run the same make command again"
out=$(PATH=$F/bin:$PATH configs/slurm-status.sh "$F/s" 2>&1)
[ "$out" = "$want" ] && ok || bad "make status reasons: $(diff <(echo "$want") <(echo "$out"))"

# ---- 1d. the steps each goal submits (fake sbatch; the demo data, no cluster) ---------------------
: > "$F/squeue.out"
M="make --no-print-directory -s BUILD=$BUILD"
$M "$T/dd/data/voc/ImageSets/Segmentation/train.txt" DEMO_DIR="$T/dd" >/dev/null 2>&1 || bad "demo data"
G=(VOC="$T/dd/data/voc" NETS=color SELECT_COUNT=16 SPLITS="$T/dd/splits" SHARDS=2 SLURM_INI=tests/slurm/test.ini)
steps_of() { awk '{print $1}' "$1"/slurm/round-1/jobs.tsv | paste -sd' '; }
PATH=$F/bin:$PATH $M demo SCHEDULER=slurm SHARDS=2 SLURM_INI=tests/slurm/test.ini DEMO_DIR="$T/dd" >/dev/null 2>&1
[ "$(steps_of "$T/dd")" = "extract merge-features center propagate davis merge-centered decode merge-masks best decode-val merge-val final" ] \
  && ok || bad "demo steps: $(steps_of "$T/dd")"
grep -q 'masks-@BEST@.h5.shards/2-of-2.h5' "$T/dd/slurm/round-1/decode-val.sbatch" && grep -q 'set -- SETTING=$best' "$T/dd/slurm/round-1/decode-val.sbatch" \
  && ok || bad "decode-val does not read the best setting in its job"
# the tasks never rebuild a program but compare its time as a local make does: -o for the objects
# and the library, not for the stages' programs (-o kc-decode would keep a product older than it)
grep -q -- "-o $BUILD/obj/stages/kc-decode.o .*-o $BUILD/libkeycut.a " "$T/dd/slurm/round-1/decode.sbatch" \
  && ! grep -q -- "-o $BUILD/kc-decode " "$T/dd/slurm/round-1/decode.sbatch" && ok || bad "decode's make: not -o for the objects only"
PATH=$F/bin:$PATH $M report SCHEDULER=slurm "${G[@]}" OUT="$T/f1" >/dev/null 2>&1
[ "$(steps_of "$T/f1")" = "extract merge-features center merge-centered decode merge-masks best decode-val merge-val final" ] \
  && ok || bad "report steps: $(steps_of "$T/f1")"
PATH=$F/bin:$PATH $M report SCHEDULER=slurm "${G[@]}" DAVIS="$T/dd/data/davis" SETTING=t0.10-bin-mean-corners-n1 OUT="$T/f2" >/dev/null 2>&1
[ "$(steps_of "$T/f2")" = "extract merge-features center propagate davis merge-centered decode-val merge-val final" ] \
  && ok || bad "report SETTING=... steps: $(steps_of "$T/f2")"
PATH=$F/bin:$PATH $M davis SCHEDULER=slurm SHARDS=2 SLURM_INI=tests/slurm/test.ini DAVIS="$T/dd/data/davis" OUT="$T/f3" >/dev/null 2>&1
[ "$(steps_of "$T/f3")" = "extract merge-features propagate davis final" ] && ok || bad "davis steps: $(steps_of "$T/f3")"

# ---- 2. a real cluster: two slurmd on this machine (one when two cannot start) -----------------
C=$T/cluster
nodes=2 two_why=
if ! out=$(tests/slurm/cluster.sh start "$C" 2 2>&1); then
  two_why=$(tail -n 1 <<<"$out")
  nodes=1
  if ! out=$(tests/slurm/cluster.sh start "$C" 1 2>&1); then
    skip "no Slurm cluster: $(tail -n 1 <<<"$out")"
    done_tests; exit 0
  fi
fi
export SLURM_CONF=$C/slurm.conf PATH=$PATH:/usr/sbin
trap 'tests/slurm/cluster.sh stop "$C"' EXIT
trap 'exit 143' INT TERM   # (timeout, ^C: still stop the daemons)
echo "cluster: $nodes node(s): $(sinfo -h -N -o '%N %c %m' | paste -sd';')"
t0=$SECONDS
$M demo DEMO_DIR="$T/d1" DEMO_TABLES="$T/t1" DEMO_NETS=color >"$T/plain.log" 2>&1 || bad "plain make demo failed: $(tail -n 3 "$T/plain.log")"
echo "plain make demo: $((SECONDS - t0)) s"
# (the demo's request: its probe in the report, PROBE=1, as pipeline.mk's DEMO_PROBE_ARGS)
R=(VOC="$T/d1/data/voc" DAVIS="$T/d1/data/davis" NETS=color SELECT_COUNT=16 SHARDS=4 OUT="$T/rs" SPLITS="$T/rs/splits"
   TABLES="$T/rs/tables" LEDGER="$T/rs/ledger.tsv" PROBE=1 PROBE_TRAIN=train PROBE_SIZE=224 "PROBE_OPTS=--batch 8")

# a program of $BUILD rebuilt since the stamp $1 (another make in this tree, or a source edited and
# `make all` run by a goal): every product made before is out of date then, as for plain make, and
# the checks of what is resubmitted are skipped with the reason
rebuilt_since() { [ -n "$(find "$BUILD" -maxdepth 1 \( -name 'kc-*' -o -name libkeycut.a \) -newer "$1" 2>/dev/null)" ]; }
rebuilt_why="programs in $BUILD were rebuilt during the test (another make in this tree), so everything is out of date"
uptodate() { # STAMP RC WHAT: ok when RC is 0, else bad WHAT, or skipped when a program was rebuilt since STAMP
  if [ "$2" = 0 ]; then ok; elif rebuilt_since "$1"; then skip "$rebuilt_why: not checked: ${3%%:*}"; else bad "$3"; fi
}
touch "$T/t-start"
wait_idle() { # until no job is queued on the test cluster (at most $1 s)
  for _ in $(seq "$1"); do [ -z "$(squeue -h 2>/dev/null)" ] && return 0; sleep 1; done; return 1
}
# a request too large: refused with one line per step, nothing queued, no round written
out=$($M report SCHEDULER=slurm "${R[@]}" SLURM_INI=tests/slurm/too-large.ini 2>&1 >/dev/null | grep -v '^make'); rc=$?
want="slurm: step extract asks for 512 CPUs per task, partition kc offers at most $(nproc) per node: lower cpus in [extract] of tests/slurm/too-large.ini
slurm: step final asks for 02:00:00, partition kc allows at most 01:00:00 (MaxTime): lower time in [final] of tests/slurm/too-large.ini
slurm: nothing submitted: 2 request(s) above can never be met on this cluster (see sinfo, scontrol show partition, scontrol show node)"
[ "$out" = "$want" ] && ok || bad "refusal on the test cluster: $(diff <(echo "$want") <(echo "$out"))"
[ -z "$(squeue -h)" ] && [ ! -d "$T/rs/slurm/round-1" ] && ok || bad "a refused make report queued jobs or wrote a round"

# the linear probe first, as a user does (make probe runs where it is called); the report of the
# final job then carries its column, as plain make demo's does
$M probe "${R[@]}" PROBE_TRAIN=train PROBE_OPTS="--batch 8" >"$T/probe.log" 2>&1 && ok || bad "make probe failed: $(tail -n 3 "$T/probe.log")"
touch "$T/t-start"

# round 1: make report through Slurm; one decode-val task (its val masks at the best setting)
# cancelled as soon as it runs
t0=$SECONDS
$M report SCHEDULER=slurm "${R[@]}" SLURM_INI=tests/slurm/test.ini >"$T/submit1.log" 2>&1 && ok || bad "submit failed: $(tail -n 3 "$T/submit1.log")"
cat "$T/submit1.log"
# Slurm gives a just-submitted job the reason "None" until its scheduler's first pass has looked
# at the dependencies (a few seconds on a loaded machine): ask again until it has, for up to 30 s
dep_re="^                     waiting for the jobs it depends on to finish \(Slurm reason: Dependency, job [0-9]+(_[0-9]+)?\)$"
for _ in $(seq 60); do
  $M status OUT="$T/rs" > "$T/status0.txt"
  grep -qE "$dep_re" "$T/status0.txt" && break
  sleep 0.5
done
grep -qE "$dep_re" "$T/status0.txt" \
  && ok || bad "make status after submitting shows no task waiting for its dependency: $(grep -m 3 'Slurm reason' "$T/status0.txt" | tr -s ' ' | paste -sd';')"
dv=$(awk '$2 == "decode-val" {print $4}' "$T/submit1.log")
cancelled=
for _ in $(seq 1500); do
  [ -n "$dv" ] || break
  st=$(squeue -h -r -j "$dv" -o '%i %T' 2>/dev/null | awk '$2 == "RUNNING" {print $1; exit}')
  if [ -n "$st" ]; then scancel "$st"; cancelled=$st; break; fi
  [ -n "$(squeue -h 2>/dev/null)" ] || break
  sleep 0.1
done
[ -n "$cancelled" ] && ok || bad "no decode-val task seen running"
echo "cancelled $cancelled"
wait_idle 200 || bad "round 1 jobs still queued"
echo "round 1: $((SECONDS - t0)) s"
echo "--- make status after round 1 (without the done lines):"
$M status OUT="$T/rs" > "$T/status1.txt"; grep -vE '^  \S+ +done ' "$T/status1.txt" | tail -n 12
want=${cancelled#*_}
# the task can finish between squeue seeing it RUNNING and scancel reaching it (a quiet machine
# decodes a demo shard in well under a second): then there is nothing to resubmit, and the two
# checks below are skipped with the reason instead of failing on the race
raced=
grep -q "^  decode-val#$want  *done " "$T/status1.txt" && raced=1
if [ -n "$raced" ]; then skip "decode-val#$want finished before scancel reached it: cancel/resubmit not checked this run"; else
grep -q "^  decode-val#$want  *cancelled .*/voc12-val/masks-t[^/]*.h5.shards/$want-of-4.h5$" "$T/status1.txt" \
  && grep -q "log: .*/round-1/logs/decode-val-$want.log" "$T/status1.txt" && ok \
  || bad "make status does not name the cancelled decode-val#$want with its log"
fi
# round 2: exactly the cancelled task is resubmitted (its step), then the merge and the final job
t0=$SECONDS
$M report SCHEDULER=slurm "${R[@]}" SLURM_INI=tests/slurm/test.ini >"$T/submit2.log" 2>&1 || bad "resubmit failed: $(tail -n 3 "$T/submit2.log")"
cat "$T/submit2.log"
steps=$(awk '{print $1}' "$T"/rs/slurm/round-2/tasks.tsv | paste -sd' ')
if [ -n "$raced" ]; then skip "round 2 resubmission not checked: nothing was cancelled"; else
[ "$steps" = "decode-val merge-val final" ] && grep -q "^decode-val 1 .*masks-@BEST@.h5.shards/$want-of-4.h5 " "$T/rs/slurm/round-2/tasks.tsv"
uptodate "$T/t-start" $? "round 2 resubmitted: $(cut -d' ' -f1-3 "$T/rs/slurm/round-2/tasks.tsv" | tr '\n' ';')"
fi
wait_idle 150 || bad "round 2 jobs still queued"
echo "round 2: $((SECONDS - t0)) s"
echo "--- make status after round 2:"; $M status OUT="$T/rs" | tail -n 3
$M status OUT="$T/rs" | grep -q "failed or not run 0" && ok || bad "make status after round 2 still reports failures"
# the tables of plain make demo (demo.* is report.*, demo-sweep.* is sweep.*)
n=0; diffs=0
for f in "$T"/t1/*; do
  b=$(basename "$f"); b=${b/demo-sweep/sweep}; b=${b/demo/report}; n=$((n + 1))
  # (the tables name their roots and selection list: each run's folder read as DIR)
  cmp -s <(sed -e "s|$T/d1|DIR|g" -e "s|$T/rs|DIR|g" "$f") <(sed -e "s|$T/d1|DIR|g" -e "s|$T/rs|DIR|g" "$T/rs/tables/$b") || { diffs=$((diffs + 1)); echo "differs: $f $T/rs/tables/$b"; }
done
echo "slurm report tables vs plain demo: $n files, $diffs differ"
[ "$n" -ge 7 ] && [ "$diffs" -eq 0 ] && ok || bad "slurm report tables differ from plain make demo ($diffs of $n)"
[ "$diffs" -eq 0 ] || grep -h 'error' "$T"/rs/slurm/round-*/logs/*.log | sort | uniq -c | head -n 5
# the shards: gone after the verified merges; the merged caches there
left=$(find "$T/rs/cache" -path '*.shards/*' | wc -l); merged=$(find "$T/rs/cache" -name '*.h5' ! -name 'tokens224.h5' | wc -l)  # (the probe's caches aside)
echo "after the merges: $left shard files, $merged caches"
[ "$left" = 0 ] && [ "$merged" = 7 ] && ok || bad "after make report: $left shard files left, $merged merged caches (7 expected)"
# two nodes: the extract shards ran on both
on=$(sed -n 's/^keycut: .* on \([^,]*\), task .*/\1/p' "$T"/rs/slurm/round-1/logs/extract-*.log | sort | uniq -c | awk '{print $2 "x" $1}' | paste -sd' ')
echo "extract tasks per node: $on"
if [ "$nodes" = 2 ]; then
  [[ $on =~ ^kc1x[0-9]+\ kc2x[0-9]+$ ]] && ok || bad "the extract shards did not run on both nodes: $on"
else
  skip "two slurmd on this machine did not start ($two_why): the two-node case not checked"
fi

# make davis through Slurm, KEEP_SHARDS=1: plain make demo's J&F; the token shards kept
t0=$SECONDS
V=(DAVIS="$T/d1/data/davis" NETS=color SHARDS=2 KEEP_SHARDS=1 OUT="$T/dv" SLURM_INI=tests/slurm/test.ini)
$M davis SCHEDULER=slurm "${V[@]}" >"$T/submit3.log" 2>&1 && ok || bad "make davis submit failed: $(tail -n 3 "$T/submit3.log")"
wait_idle 150 || bad "make davis jobs still queued"
echo "make davis through Slurm: $((SECONDS - t0)) s"
d=results/color/davis17-val
for f in global_results-val.csv per-sequence_results-val.csv; do
  cmp -s "$T/d1/$d/$f" "$T/dv/$d/$f" && ok || bad "make davis SCHEDULER=slurm: $f differs from plain make demo's"
done
[ "$(ls "$T/dv/cache/color/davis17-val/tokens.h5.shards" | wc -l)" = 2 ] && ok || bad "KEEP_SHARDS=1: the 2 token shards are not kept"
grep -q "^color: " "$T/dv/slurm/round-1/logs/final.log" && ok \
  || bad "make davis's final job printed no result: $(tail -n 2 "$T/dv/slurm/round-1/logs/final.log")"

# up to date as make means it: make demo through Slurm (networks color and random), then random's
# weights touched (kc-init made them under $(OUT)/nets/: the same seed, so the same numbers)
t0=$SECONDS
touch "$T/t-demo"
D2=(DEMO_DIR="$T/d2" DEMO_TABLES="$T/t2" SHARDS=2 SLURM_INI=tests/slurm/test.ini)
$M demo SCHEDULER=slurm "${D2[@]}" >"$T/submit4.log" 2>&1 && ok || bad "make demo SCHEDULER=slurm submit failed: $(tail -n 3 "$T/submit4.log")"
wait_idle 200 || bad "make demo jobs still queued"
echo "make demo through Slurm: $((SECONDS - t0)) s"
S2=$T/d2/slurm
$M status DEMO_DIR="$T/d2" > "$T/status4.txt"
grep -q "failed or not run 0$" "$T/status4.txt" && [ -f "$T/t2/demo.csv" ] && ok || bad "make demo SCHEDULER=slurm: $(tail -n 1 "$T/status4.txt")"
# the best step chose as the demo's final job does (its network alone): no val decoding in the final job
[ "$(cat "$T/d2/tables/sweep-best.txt")" = "$("$BUILD"/kc-table --print-best "$T/d2/scores/color/select")" ] \
  && ! grep -q 'kc-decode' "$S2/round-1/logs/final.log" && ok || bad "the best step chose another setting than make demo: $(cat "$T/d2/tables/sweep-best.txt")"
# nothing changed: nothing submitted
nothing="slurm: nothing to submit: every product of 'demo' is up to date (newer than all its inputs, as make sees them)"
out=$($M demo SCHEDULER=slurm "${D2[@]}" 2>&1)
[ "$out" = "$nothing" ] && [ ! -d "$S2/round-2" ] && [ -z "$(squeue -h)" ]
uptodate "$T/t-demo" $? "an unchanged make demo submitted: $out"
wait_idle 200 || bad "make demo jobs still queued"
last=$(ls -d "$S2"/round-* | sed 's/.*round-//' | sort -n | tail -n 1)
w=$T/d2/nets/random.safetensors
[ -f "$w" ] && ok || bad "no weights file of random: $(ls "$T/d2/nets")"
snap() { find "$T/d2/cache" "$T/d2/scores" "$T/d2/results" "$T/d2/tables" "$T/t2" -type f -printf '%p %T@\n' | LC_ALL=C sort; }
snap > "$T/mtimes0"; cp -a "$T/d2/tables" "$T/tables0"
sleep 1; touch "$w"
# make status: random's targets and the final job out of date, in plain words; color's done
$M status DEMO_DIR="$T/d2" > "$T/status5.txt"
echo "--- make status after touching $w (random's first target, the last lines):"
grep -m 1 -A 1 "out of date  .*/random/" "$T/status5.txt"; tail -n 2 "$T/status5.txt"
n_r=$(awk '$3 ~ /\/random\//' "$S2/plan.txt" | wc -l); n_all=$(wc -l < "$S2/plan.txt")
st_r=$(grep -E '^  [a-z-]+#[0-9]+ ' "$T/status5.txt" | awk '$NF ~ /\/random\// || $NF == "demo"' | grep -vc '^  [^ ]*  *out of date  ')
st_c=$(grep -E '^  [a-z-]+#[0-9]+ ' "$T/status5.txt" | awk '$NF !~ /\/random\// && $NF != "demo"' | grep -vc '^  [^ ]*  *done  ')
why="older than one of its inputs, or an input is out of date itself (make would remake it); the same make command resubmits it"
[ "$st_r" = 0 ] && [ "$st_c" = 0 ] && [ "$(grep -c "^                     $why$" "$T/status5.txt")" = $((n_r + 1)) ] \
  && grep -q "^  done $((n_all - n_r)), running 0, pending 0, failed or not run 0, out of date $((n_r + 1))$" "$T/status5.txt"
uptodate "$T/t-demo" $? "make status after touching random's weights: $st_r random line(s) not out of date, $st_c other(s) not done: $(tail -n 2 "$T/status5.txt" | paste -sd' ')"
# the rerun: exactly random's targets (extraction, merges, centring, decoding, propagation, J&F) and
# the final job (scores, tables); no job of color, not the best step (chosen from color alone)
t0=$SECONDS
$M demo SCHEDULER=slurm "${D2[@]}" >"$T/submit5.log" 2>&1 || bad "make demo resubmit failed: $(tail -n 3 "$T/submit5.log")"
head -n 1 "$T/submit5.log"
R2=$S2/round-$((last + 1))
got=$(awk '{print $1, $3}' "$R2/tasks.tsv" 2>/dev/null | LC_ALL=C sort)
want=$( { awk '$3 ~ /\/random\// {print $1, $3}' "$S2/plan.txt"; echo "final demo"; } | LC_ALL=C sort)
[ -n "$got" ] && [ "$got" = "$want" ]
uptodate "$T/t-demo" $? "after touching random's weights, the rerun is not random's targets + final: $(diff <(echo "$want") <(echo "$got") | head -n 6 | paste -sd';')"
echo "rerun of make demo: $(awk '{print $1}' "$R2/jobs.tsv" 2>/dev/null | paste -sd' ')"
wait_idle 200 || bad "the rerun of make demo still queued"
echo "rerun of make demo: $((SECONDS - t0)) s"
$M status DEMO_DIR="$T/d2" | grep -q "failed or not run 0$" && ok || bad "make status after the rerun of make demo: $($M status DEMO_DIR="$T/d2" | tail -n 2 | paste -sd' ')"
# what was rewritten: random's products and the tables; color's caches, scores, results: not
snap > "$T/mtimes1"
changed=$(LC_ALL=C join "$T/mtimes0" "$T/mtimes1" | awk '$2 != $3 {print $1}')
c_changed=$(grep -c "^$T/d2/[a-z]*/color/" <<<"$changed"); r_made=$(grep -c "^$T/d2/cache/random/.*\.h5$" <<<"$changed")
r_all=$(grep -c "^$T/d2/cache/random/.*\.h5 " "$T/mtimes0")
echo "rewritten: $(grep -c . <<<"$changed") files ($r_made of random's $r_all caches, $c_changed of color's files)"
[ "$c_changed" = 0 ] && [ "$r_made" = "$r_all" ] && [ "$r_all" -ge 7 ] && grep -q "^$T/d2/results/random/davis17-val/global_results-val.csv$" <<<"$changed" \
  && grep -q "^$T/d2/scores/random/select/summary.csv$" <<<"$changed" && ! grep -q "sweep-best.txt" <<<"$changed"
uptodate "$T/t-demo" $? "rewritten: $c_changed of color's files (0 expected), $r_made of random's $r_all caches (all, at least 7): $(grep /color/ <<<"$changed" | head -n 3 | paste -sd' ')"
# the tables: rewritten, every row the same (random's too: the same weights, the same numbers)
nt=0 same=0 newer=0
for f in "$T"/tables0/*.csv "$T"/tables0/*.md; do
  b=$(basename "$f"); nt=$((nt + 1))
  cmp -s "$f" "$T/d2/tables/$b" && same=$((same + 1)) || diff "$f" "$T/d2/tables/$b" | head -n 4
  [ "$T/d2/tables/$b" -nt "$w" ] && newer=$((newer + 1))
done
echo "tables after the rerun: $nt files, $same with the same rows, $newer rewritten"
[ "$nt" -ge 4 ] && [ "$same" = "$nt" ] && [ "$newer" = "$nt" ] && [ "$T/t2/demo.csv" -nt "$w" ] && cmp -s "$T/d2/tables/report.csv" "$T/t2/demo.csv" \
  && ok || bad "tables after touching random's weights: $same of $nt the same, $newer of $nt rewritten"
# and again nothing changed: nothing submitted
out=$($M demo SCHEDULER=slurm "${D2[@]}" 2>&1)
[ "$out" = "$nothing" ] && [ ! -d "$S2/round-$((last + 2))" ] && [ -z "$(squeue -h)" ]
uptodate "$T/t-demo" $? "make demo after the rerun submitted again: $out"
wait_idle 200 || bad "make demo jobs still queued"
done_tests
