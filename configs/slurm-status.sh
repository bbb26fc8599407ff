#!/usr/bin/env bash
# configs/slurm-status.sh DIR... — `make status`: for each $(OUT)/slurm folder, the state of every
# target of the latest round that tried it: done (the product exists), pending / running (squeue),
# failed / cancelled (sacct when accounting is on, else the log), and what a rerun would resubmit.
set -u -o pipefail
shown=0
for dir in "$@"; do
  [ -d "$dir" ] || continue
  rounds=$(ls -d "$dir"/round-* 2>/dev/null | sort -t- -k2 -n)
  [ -n "$rounds" ] || continue
  ids=$(cat "$dir"/round-*/jobs.tsv 2>/dev/null | awk '{print $2}' | paste -sd,)
  # queued tasks: "jobid_task STATE" (arrays expanded with -r)
  declare -A q=()
  if [ -n "$ids" ] && command -v squeue >/dev/null; then
    # (all of the user's jobs: `squeue -j` lists nothing when one id is already forgotten)
    while read -r jid st; do q[$jid]=$st; done < <(squeue -h -r -u "$(id -un)" -o '%i %T' 2>/dev/null)
  fi
  declare -A acct=()
  if [ -n "$ids" ] && command -v sacct >/dev/null; then
    while IFS='|' read -r jid st; do acct[$jid]=${st%% *}; done < <(sacct -n -X -P -j "$ids" -o JobID,State 2>/dev/null)
  fi
  shown=1
  echo "== $dir ($(wc -w <<<"$rounds") round(s))"
  # the latest attempt of each target
  declare -A latest=() jobof=()
  for R in $rounds; do
    while read -r step id; do jobof[$R/$step]=$id; done < "$R/jobs.tsv"
    while read -r step task target log; do latest[$target]="$R $step $task $log"; done < "$R/tasks.tsv"
  done
  n_done=0 n_run=0 n_pend=0 n_fail=0
  while read -r target; do
    read -r R step task log <<<"${latest[$target]}"
    id=${jobof[$R/$step]:-?}
    jt=$id; [ "$step" = final ] || jt=${id}_$task
    st=${q[$jt]:-}
    if [ "$step" != final ] && [ -e "$target" ]; then state=done; n_done=$((n_done + 1))
    elif [ "$step" = final ] && [ -z "$st" ] && [ -s "$log" ] && ! grep -qiE 'error|cancelled' "$log"; then state=done; n_done=$((n_done + 1))
    elif [ -n "$st" ]; then state=$(tr 'A-Z' 'a-z' <<<"$st"); [ "$state" = running ] && n_run=$((n_run + 1)) || n_pend=$((n_pend + 1))
    else
      state=$(tr 'A-Z' 'a-z' <<<"${acct[$jt]:-}")
      if [ -z "$state" ]; then
        if [ ! -f "$log" ]; then state="not run (a dependency failed)"
        elif grep -q 'CANCELLED' "$log"; then state=cancelled
        else state=failed; fi
      fi
      n_fail=$((n_fail + 1))
      err=$([ -f "$log" ] && grep -v '^make' "$log" | grep -iE 'error|cancelled' | tail -n 1)
      [ -z "$err" ] || state="$state: $err"
    fi
    printf '  %-16s %-16s %s\n' "$step#$task" "${state%%:*}" "$target"
    case $state in *:*) printf '                     %s\n                     log: %s\n' "${state#*: }" "$log" ;; esac
  done < <(printf '%s\n' "${!latest[@]}" | sort)
  echo "  done $n_done, running $n_run, pending $n_pend, failed or not run $n_fail"
  if [ "$n_fail" -gt 0 ] && [ "$n_run" -eq 0 ] && [ "$n_pend" -eq 0 ]; then
    echo "  to resubmit the missing ones: run the same 'make ... SCHEDULER=slurm' command again"
  fi
  unset q acct latest jobof
done
[ "$shown" = 1 ] || echo "status: no SCHEDULER=slurm submission under $* (OUT=... or DEMO_DIR=... selects another)"
