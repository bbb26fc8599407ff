#!/usr/bin/env bash
# configs/slurm-status.sh DIR... — `make status`: for each $(OUT)/slurm folder, the state of every
# target of the latest round that tried it: done (the product exists and is up to date, as a local
# make sees it), pending / running (squeue), out of date (made, but an input changed since, or an
# input is out of date: a rerun resubmits it), failed / cancelled (sacct when accounting is on, else
# the log), and what a rerun would resubmit.  Up to date is asked of make once per folder, with the
# submission's make command (configs/slurm-submit.sh --out-of-date); a folder of a submission that
# recorded none is judged by existence.  A pending task gets Slurm's reason in plain words
# (kc_reason below).
set -u -o pipefail
source "$(dirname "$0")/slurm-check.sh"   # kc_target_done
# kc_reason REASON: squeue's pending reason (%r) in plain words (in REPLY); "never: ..." when it cannot start
# as submitted.
kc_reason() {
  case $1 in
    Dependency) REPLY="waiting for the jobs it depends on to finish" ;;
    DependencyNeverSatisfied) REPLY="never: a job it depends on failed (cancel it: scancel <jobid>; then rerun the make command)" ;;
    Resources) REPLY="waiting for free CPUs or memory (the nodes are busy)" ;;
    Priority) REPLY="waiting for its turn (other jobs have priority)" ;;
    JobArrayTaskLimit) REPLY="waiting: max_parallel tasks of this array already run" ;;
    BeginTime) REPLY="waiting for its start time" ;;
    None) REPLY="waiting to be scheduled" ;;
    PartitionDown|PartitionInactive) REPLY="waiting: the partition is down (the administrators must bring it up)" ;;
    NodeDown|ReqNodeNotAvail*) REPLY="waiting: the nodes it needs are down or reserved" ;;
    JobHeld*) REPLY="held: scontrol release <jobid> lets it run" ;;
    PartitionConfig|PartitionNodeLimit|PartitionTimeLimit|BadConstraints|InvalidQOS|InvalidAccount|*PerJob*|*MinCpu*|*MinMem*)
      REPLY="never: it asks for more than its partition, account or QOS allows (scancel <jobid>, fix the step in SLURM_INI, rerun)" ;;
    QOS*|Assoc*|*Limit) REPLY="waiting for a limit of your account or QOS (running jobs, CPUs or time in use) to allow it" ;;
    *) REPLY="waiting" ;;
  esac
}
shown=0
for dir in "$@"; do
  [ -d "$dir" ] || continue
  rounds=$(ls -d "$dir"/round-* 2>/dev/null | awk -F'round-' '{ print $NF, $0 }' | sort -n | cut -d' ' -f2-)
  [ -n "$rounds" ] || continue
  ids=$(cat "$dir"/round-*/jobs.tsv 2>/dev/null | awk '{print $2}' | paste -sd,)
  # queued tasks: "jobid_task STATE" (arrays expanded with -r)
  declare -A q=() reason=()
  KC_SLURM_BEST=$(cat "$dir/best-file" 2>/dev/null || true) KC_BEST_READ=0
  if [ -n "$ids" ] && command -v squeue >/dev/null; then
    # (all of the user's jobs: `squeue -j` lists nothing when one id is already forgotten)
    while read -r jid st why; do q[$jid]=$st; reason[$jid]=$why; done < <(squeue -h -r -u "$(id -un)" -o '%i %T %r' 2>/dev/null)
  fi
  declare -A acct=()
  if [ -n "$ids" ] && command -v sacct >/dev/null; then
    while IFS='|' read -r jid st; do acct[$jid]=${st%% *}; done < <(sacct -n -X -P -j "$ids" -o JobID,State 2>/dev/null)
  fi
  shown=1
  echo "== $dir ($(wc -w <<<"$rounds") round(s))"
  # what make would remake (targets as plan.txt names them; @FINAL@: the goal's tables)
  declare -A stale=()
  rc=0 ood=$("$(dirname "$0")/slurm-submit.sh" --out-of-date "$dir" 2>&1) || rc=$?
  case $rc in
    0) while read -r t; do [ -z "$t" ] || stale[$t]=1; done <<<"$ood" ;;
    3) ;;
    *) echo "  (make cannot tell which products are up to date, so existence counts: $(tail -n 1 <<<"$ood"))" ;;
  esac
  # the latest attempt of each target
  declare -A latest=() jobof=()
  for R in $rounds; do
    while read -r step id; do jobof[$R/$step]=$id; done < "$R/jobs.tsv"
    while read -r step task target log; do latest[$target]="$R $step $task $log"; done < "$R/tasks.tsv"
  done
  n_done=0 n_run=0 n_pend=0 n_fail=0 n_never=0 n_stale=0
  while read -r target; do
    read -r R step task log <<<"${latest[$target]}"
    id=${jobof[$R/$step]:-?}
    jt=$id; [ "$step" = final ] || jt=${id}_$task
    st=${q[$jt]:-}
    # made since this attempt was submitted (by it or later: then out of date means an input changed
    # afterwards; made before it: the attempt did not remake it, its failure is the news)
    made_since=
    if [ "$step" = final ]; then
      [ -z "${stale[@FINAL@]:-}" ] || ! [ -s "$log" ] || grep -qiE 'error|cancelled' "$log" || made_since=1
    elif [ -n "${stale[$target]:-}" ] && kc_target_done "$target"; then
      kc_resolve "$target"; ref=$REPLY
      [ -e "$ref" ] || ref=${ref%.shards/*}
      [ "$ref" -nt "$R/$step.sbatch" ] && made_since=1
    fi
    if [ "$step" != final ] && [ -z "${stale[$target]:-}" ] && kc_target_done "$target"; then state="done"; n_done=$((n_done + 1))
    elif [ "$step" = final ] && [ -z "${stale[@FINAL@]:-}" ] && [ -z "$st" ] && [ -s "$log" ] && ! grep -qiE 'error|cancelled' "$log"; then
      state="done"; n_done=$((n_done + 1))
    elif [ -z "$st" ] && [ -n "$made_since" ]; then
      state="out of date: older than one of its inputs, or an input is out of date itself (make would remake it); the same make command resubmits it"
      n_stale=$((n_stale + 1))
    elif [ -n "$st" ]; then
      state=${st,,}
      if [ "$state" = running ]; then n_run=$((n_run + 1))
      else
        n_pend=$((n_pend + 1))
        kc_reason "${reason[$jt]:-None}"; why=$REPLY
        case $why in never:*) n_never=$((n_never + 1)) ;; esac
        state="$state: $why (Slurm reason: ${reason[$jt]:-None}, job $jt)"
      fi
    else
      state=${acct[$jt]:-}; state=${state,,}
      if [ -z "$state" ]; then
        if [ ! -f "$log" ]; then state="not run (a dependency failed)"
        elif grep -q 'CANCELLED' "$log"; then state=cancelled
        else state=failed; fi
      fi
      n_fail=$((n_fail + 1))
      err=$([ -f "$log" ] && grep -v '^make' "$log" | grep -iE 'error|cancelled' | tail -n 1)
      [ -z "$err" ] || state="$state: $err"
    fi
    disp=$target; [ "$step" = final ] || ! kc_resolve "$target" || disp=$REPLY
    printf '  %-16s %-16s %s\n' "$step#$task" "${state%%:*}" "$disp"
    case $state in
      pending:*|out\ of\ date:*) printf '                     %s\n' "${state#*: }" ;;
      *:*) printf '                     %s\n                     log: %s\n' "${state#*: }" "$log" ;;
    esac
  done < <(printf '%s\n' "${!latest[@]}" | LC_ALL=C sort)
  echo "  done $n_done, running $n_run, pending $n_pend, failed or not run $n_fail$([ "$n_stale" = 0 ] || echo ", out of date $n_stale")"
  if [ "$n_never" -gt 0 ]; then
    echo "  $n_never task(s) can never start as submitted: cancel them (scancel <jobid>), fix their step in the resource file (SLURM_INI) and run the same make command again"
  fi
  if [ "$n_fail" -gt 0 ] && [ "$n_run" -eq 0 ] && [ "$n_pend" -eq 0 ]; then
    echo "  to resubmit the missing ones: run the same 'make ... SCHEDULER=slurm' command again"
  fi
  if [ "$n_stale" -gt 0 ] && [ "$n_run" -eq 0 ] && [ "$n_pend" -eq 0 ]; then
    echo "  $n_stale out of date (an input changed after they were made): the same 'make ... SCHEDULER=slurm' command resubmits them and what depends on them"
  fi
  unset q acct latest jobof reason stale
done
[ "$shown" = 1 ] || echo "status: no SCHEDULER=slurm submission under $* (OUT=... or DEMO_DIR=... selects another)"
