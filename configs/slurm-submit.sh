#!/usr/bin/env bash
# configs/slurm-submit.sh — writes and submits the sbatch job arrays of SCHEDULER=slurm (slurm.mk).
#
# Environment (set by slurm.mk):
#   KC_SLURM_DIR    $(OUT)/slurm: plan.txt ("<step> <after-steps|-> <target>" lines), round-N/ folders
#   KC_SLURM_INI    configs/slurm.ini (partition, account, time, cpus, mem per step)
#   KC_SLURM_MAKE   the make command a task runs, followed by its target
#   KC_SLURM_FINAL  the make command of the last job (the goal, SCHEDULER=local)
#   KC_SLURM_GOAL   sweep, report, davis or demo (for messages)
#   KC_SLURM_BEST   the file the `best` step writes (the sweep's best setting): a target with @BEST@
#                   is resolved with it inside the job; SETTING=<it> is added to that task's make
#   KC_SLURM_QUERY  the make command asked which targets are out of date (the tasks' command, run
#                   with -n); KC_SLURM_FINAL_TARGETS the goal's own products (its tables), made by the
#                   final job; KC_SLURM_FINAL_COPIES "from:copy" pairs the final job copies (the demo's
#                   tables).  Without KC_SLURM_QUERY a target is done when it exists.
# First every step's targets to make are listed and the requests of the steps to submit are checked
# against the cluster (configs/slurm-check.sh): one line per request that cannot be met, and nothing
# is submitted.  Each run is a round: round-N/<step>.sbatch, round-N/logs/<step>-<task>.log, round-N/tasks.tsv
# ("step task target log"), round-N/jobs.tsv ("step jobid").  A target is submitted when a local make
# would remake it (kc_out_of_date: one `make -n` over the plan) or it does not exist; the final job
# when anything is submitted or the goal's tables are out of date; nothing at all when everything is
# up to date.  A target whose last two attempts both failed with the same error line is reported
# with its log and not submitted again (fix the cause, then remove those logs or the round folders).
#
# configs/slurm-submit.sh --out-of-date DIR (for make status): prints the targets of DIR/plan.txt a
# local make would remake, as plan.txt names them, and @FINAL@ when the goal's tables are out of
# date; exits 3 when DIR has no recorded query (DIR/query.env: submissions before it), 4 when make
# cannot answer (its error on stderr).
set -eu -o pipefail

# kc_ini_get, the request check, kc_target_done, kc_resolve
source "$(dirname "$0")/slurm-check.sh"

# kc_out_of_date: the targets of $plan that make would remake, one a line (as plan.txt names them),
# and @FINAL@ when a product of the final job is out of date.  One `make -n --debug=b` with the
# tasks' command (KC_SLURM_QUERY, MAKEFLAGS of the caller not passed), SCHEDULER=local and, for
# @BEST@ targets, SETTING=<the recorded best setting>, over the plan's targets except shards
# (P.shards/k-of-n.h5) and the final job's products: make reaches a shard through its merged
# product P, so a shard kc-merge removed is redone only when P is out of date, and make propagates
# staleness downstream (a target after an out-of-date one is out of date).  While the best setting
# is unknown, @BEST@ targets are not asked (they do not exist) and the final job is out of date.
# When the best step is resubmitted, the val targets are judged at the setting it chose last time;
# if it chooses another, the final job makes the val products of that setting.
kc_out_of_date() {
  local -a q goals=() setting=()
  local -A name_of=() is_final=()
  local t unresolved=0 best=0 out rc=0 pair f=0
  eval "q=($KC_SLURM_QUERY)"
  while read -r _ _ t; do
    [ -n "$t" ] || continue
    case $t in *@BEST@*) best=1 ;; esac
    if ! kc_resolve "$t"; then unresolved=1; continue; fi
    name_of[$REPLY]=$t
    case $REPLY in *.shards/*-of-*.h5) ;; *) goals+=("$REPLY") ;; esac
  done < "$plan"
  [ "$best" = 0 ] || [ -z "$KC_BEST_VAL" ] || setting=(SETTING="$KC_BEST_VAL")
  if [ "$unresolved" = 1 ]; then f=1
  else
    for t in ${KC_SLURM_FINAL_TARGETS:-}; do goals+=("$t"); is_final[$t]=1; done
  fi
  [ ${#goals[@]} -gt 0 ] || { [ "$f" = 0 ] || echo @FINAL@; return 0; }
  out=$(env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL "${q[@]}" -n -k --debug=b "${setting[@]}" "${goals[@]}" 2>&1) || rc=$?
  if [ "$rc" != 0 ]; then
    grep -E '\*\*\*' <<<"$out" | head -n 3 >&2 || true
    return 4
  fi
  while read -r t; do
    if [ -n "${name_of[$t]:-}" ]; then echo "${name_of[$t]}"; elif [ -n "${is_final[$t]:-}" ]; then f=1; fi
  done < <(sed -n "s/^ *Must remake target '\(.*\)'\.\$/\1/p" <<<"$out")
  for pair in ${KC_SLURM_FINAL_COPIES:-}; do
    [ -e "${pair#*:}" ] && ! [ "${pair%%:*}" -nt "${pair#*:}" ] || f=1
  done
  [ "$f" = 0 ] || echo @FINAL@
}

if [ "${1:-}" = --out-of-date ]; then
  dir=${2:?usage: $0 --out-of-date DIR} plan=$2/plan.txt
  [ -f "$dir/query.env" ] && [ -f "$plan" ] || exit 3
  source "$dir/query.env"
  kc_out_of_date
  exit
fi

dir=$KC_SLURM_DIR ini=$KC_SLURM_INI
case $dir in /*) ;; *) dir=$PWD/$dir ;; esac
plan=$dir/plan.txt
command -v sbatch >/dev/null || { echo "slurm: sbatch not found (SCHEDULER=slurm needs a Slurm login node)" >&2; exit 2; }
[ -f "$ini" ] || { echo "slurm: $ini: no such file" >&2; exit 2; }

# jobs of earlier rounds still queued: do not submit twice.  (All of the user's jobs are listed and
# matched here: `squeue -j` with one id Slurm has already forgotten lists nothing at all.)
prev_ids=$(cat "$dir"/round-*/jobs.tsv 2>/dev/null | awk '{print $2}' | paste -sd, || true)
if [ -n "$prev_ids" ]; then
  active=$(squeue -h -u "$(id -un)" -o '%F' 2>/dev/null | awk -v ids="$prev_ids" \
             'BEGIN { n = split(ids, a, ","); for (i = 1; i <= n; i++) mine[a[i]] = 1 } $1 in mine' | wc -l || true)
  if [ "${active:-0}" -gt 0 ]; then
    if [ "$active" = 1 ]; then echo "slurm: 1 job of earlier submissions is still queued or running; nothing submitted."
    else echo "slurm: $active jobs of earlier submissions are still queued or running; nothing submitted."; fi
    echo "slurm: follow them with 'make status' (or squeue -u $(id -un)); cancel with scancel <jobid>."
    exit 0
  fi
fi

# the error of an attempt: the last line of its log mentioning an error
err_of() { [ -f "$1" ] && grep -v '^make' "$1" | grep -iE 'error|killed|cancelled|oom' | tail -n 1 || true; }
# 1 (print it) when the target's last two attempts failed with the same error.  The last two logs
# of every target, read once: LOGS2[target]="log1 log2" (only targets tried at least twice).
declare -A LOGS2=()
while read -r t l1 l2; do LOGS2[$t]="$l1 $l2"; done < <(for r in "$dir"/round-*/tasks.tsv; do [ -f "$r" ] && echo "${r%/tasks.tsv}"; done | awk -F'round-' '{ print $NF, $0 }' |
  sort -n | while read -r _ r; do cat "$r/tasks.tsv"; done |
  awk '{ if ($3 in last) prev[$3] = last[$3]; last[$3] = $4 } END { for (t in prev) print t, prev[t], last[t] }')
gave_up() {
  local target=$1 logs
  [ -n "${LOGS2[$target]:-}" ] || return 1
  logs=${LOGS2[$target]// /$'\n'}
  local a b
  a=$(err_of "$(head -n 1 <<<"$logs")"); b=$(err_of "$(tail -n 1 <<<"$logs")")
  # the same error up to numbers (job ids, times: "*** JOB 12 ON n3 CANCELLED AT ... DUE TO TIME LIMIT ***")
  [ -n "$a" ] && [ "$(sed -E 's/[0-9]+/N/g' <<<"$a")" = "$(sed -E 's/[0-9]+/N/g' <<<"$b")" ] || return 1
  echo "slurm: $target failed twice with the same error, not resubmitted:" >&2
  echo "         $a" >&2
  echo "         log: $(tail -n 1 <<<"$logs")" >&2
  return 0
}

# what make would remake (the same make command as the tasks'; recorded for make status)
declare -A stale=()
if [ -n "${KC_SLURM_QUERY:-}" ]; then
  KC_SLURM_FINAL_TARGETS=${KC_SLURM_FINAL_TARGETS:-} KC_SLURM_FINAL_COPIES=${KC_SLURM_FINAL_COPIES:-} KC_SLURM_BEST=${KC_SLURM_BEST:-}
  for v in KC_SLURM_QUERY KC_SLURM_FINAL_TARGETS KC_SLURM_FINAL_COPIES KC_SLURM_BEST; do printf '%s=%q\n' "$v" "${!v}"; done > "$dir/query.env"
  rc=0 ood=$(kc_out_of_date) || rc=$?
  if [ "$rc" != 0 ]; then
    echo "slurm: nothing submitted: make cannot tell which products are up to date (its error above; make -n ${KC_SLURM_GOAL:-the goal} SCHEDULER=local shows it too)" >&2
    exit 2
  fi
  while read -r t; do [ -z "$t" ] || stale[$t]=1; done <<<"$ood"
fi

# the targets to submit, per step: out of date (make) or missing (a target is not done while a step
# before it is resubmitted: the best setting of @BEST@ targets is read once the best step is done)
declare -A todo
gaveup=0 to_check=() n_missing=0 n_stale=0 n_ok=0
steps=$(awk '!seen[$1]++ {print $1}' "$plan")
for step in $steps; do todo[$step]=; done
while read -r step _ t; do
  if ! kc_target_done "$t"; then n_missing=$((n_missing + 1))
  elif [ -n "${stale[$t]:-}" ]; then n_stale=$((n_stale + 1))
  else n_ok=$((n_ok + 1)); continue; fi
  if gave_up "$t"; then gaveup=$((gaveup + 1)); continue; fi
  todo[$step]+="$t"$'\n'
done < "$plan"
for step in $steps; do [ -z "${todo[$step]}" ] || to_check+=("$step"); done
if [ "$gaveup" -gt 0 ]; then
  echo "slurm: $gaveup target(s) given up (above); the final '$KC_SLURM_GOAL' job is not submitted." >&2
  exit 1
fi
if [ -n "${KC_SLURM_QUERY:-}" ] && [ ${#to_check[@]} -eq 0 ] && [ -z "${stale[@FINAL@]:-}" ]; then
  echo "slurm: nothing to submit: every product of '$KC_SLURM_GOAL' is up to date (newer than all its inputs, as make sees them)"
  exit 0
fi
[ "$n_stale" = 0 ] || echo "slurm: $n_stale target(s) out of date (an input changed after they were made, or an input is remade first), $n_missing missing, $n_ok up to date"
# the requests, against the cluster's limits: all refusals at once, nothing queued
nbad=0
kc_check_requests "${to_check[@]}" final || nbad=$?
[ "$nbad" != 255 ] || exit 2
if [ "$nbad" -gt 0 ]; then
  echo "slurm: nothing submitted: $nbad request(s) above can never be met on this cluster (see sinfo, scontrol show partition, scontrol show node)" >&2
  exit 2
fi

last=$(ls -d "$dir"/round-* 2>/dev/null | sed 's/.*round-//' | sort -n | tail -n 1 || true)
round=$(( ${last:-0} + 1 ))
R=$dir/round-$round
mkdir -p "$R/logs"
echo "${KC_SLURM_BEST:-}" > "$dir/best-file"   # (for make status: where @BEST@ is resolved)
: > "$R/tasks.tsv"
: > "$R/jobs.tsv"

# an sbatch option per non-empty key (empty: the cluster's default)
opts() {
  local step=$1 k v
  for k in cpus:cpus-per-task mem:mem time:time partition:partition account:account qos:qos; do
    kc_ini_val "$step" "${k%%:*}"; [ -z "$REPLY" ] || echo "#SBATCH --${k#*:}=$REPLY"
  done
  kc_ini_val "$step" extra; [ -z "$REPLY" ] || echo "#SBATCH $REPLY"
}

declare -A job_of
all_jobs=() n_tasks=0
for step in $steps; do
  [ -n "${todo[$step]}" ] || continue
  after=$(awk -v s="$step" '$1 == s {print $2; exit}' "$plan")
  mapfile -t targets < <(printf '%s' "${todo[$step]}")
  deps=()
  for a in ${after//,/ }; do [ -n "${job_of[$a]:-}" ] && deps+=("${job_of[$a]}"); done
  n=${#targets[@]}
  kc_ini_val "$step" max_parallel; par=$REPLY
  script=$R/$step.sbatch
  {
    echo "#!/usr/bin/env bash"
    echo "#SBATCH --job-name=kc-$step"
    echo "#SBATCH --array=1-$n$([ -n "$par" ] && [ "$par" != 0 ] && echo "%$par")"
    echo "#SBATCH --output=$R/logs/$step-%a.log"
    echo "#SBATCH --chdir=$PWD"
    opts "$step"
    echo "# keycut $KC_SLURM_GOAL, round $round, step $step: task k makes targets[k-1]"
    echo "export OMP_NUM_THREADS=\${SLURM_CPUS_PER_TASK:-1} OMP_WAIT_POLICY=PASSIVE"
    echo "targets=("
    printf "  %q\n" "${targets[@]}"
    echo ")"
    echo "t=\${targets[\$((SLURM_ARRAY_TASK_ID - 1))]}"
    echo "cd $(printf %q "$PWD") || exit 1"
    echo "set --"
    if grep -q '@BEST@' <<<"${todo[$step]}"; then   # the setting the best step chose, read here
      echo "best=\$(cat $(printf %q "$KC_SLURM_BEST") 2>/dev/null)"
      echo "[ -n \"\$best\" ] || { echo \"keycut: error: $KC_SLURM_BEST: no best setting (did the best step fail?)\"; exit 1; }"
      echo "case \$t in *@BEST@*) t=\${t//@BEST@/\$best}; set -- SETTING=\$best ;; esac"
    fi
    echo "echo \"keycut: \$t on \${SLURMD_NODENAME:-\$(hostname)}, task \$SLURM_ARRAY_TASK_ID of job \$SLURM_ARRAY_JOB_ID\""
    echo "mkdir -p \"\$(dirname \"\$t\")\" || exit 1"
    echo "unset MAKEFLAGS MFLAGS MAKELEVEL   # (the submitting make's flags: the task runs exactly this command)"
    echo "exec $KC_SLURM_MAKE \"\$@\" \"\$t\""
  } > "$script"
  dep_opt=()
  [ ${#deps[@]} -eq 0 ] || dep_opt=(--dependency="afterok:$(IFS=:; echo "${deps[*]}")" --kill-on-invalid-dep=yes)
  id=$(sbatch --parsable "${dep_opt[@]}" "$script" | cut -d';' -f1)
  job_of[$step]=$id
  all_jobs+=("$id")
  echo "$step $id" >> "$R/jobs.tsv"
  for i in "${!targets[@]}"; do echo "$step $((i + 1)) ${targets[$i]} $R/logs/$step-$((i + 1)).log" >> "$R/tasks.tsv"; done
  n_tasks=$((n_tasks + n))
  printf 'slurm: %-15s job %-8s %3d task(s)%s\n' "$step" "$id" "$n" "$([ ${#deps[@]} -eq 0 ] || echo ", after ${deps[*]}")"
done

script=$R/final.sbatch
{
  echo "#!/usr/bin/env bash"
  echo "#SBATCH --job-name=kc-final"
  echo "#SBATCH --output=$R/logs/final.log"
  echo "#SBATCH --chdir=$PWD"
  opts final
  echo "# keycut $KC_SLURM_GOAL, round $round: the goal itself, every sharded product made"
  echo "export OMP_NUM_THREADS=\${SLURM_CPUS_PER_TASK:-1} OMP_WAIT_POLICY=PASSIVE"
  echo "unset MAKEFLAGS MFLAGS MAKELEVEL"
  echo "exec $KC_SLURM_FINAL -j\${SLURM_CPUS_PER_TASK:-1}"
} > "$script"
dep_opt=()
[ ${#all_jobs[@]} -eq 0 ] || dep_opt=(--dependency="afterok:$(IFS=:; echo "${all_jobs[*]}")" --kill-on-invalid-dep=yes)
id=$(sbatch --parsable "${dep_opt[@]}" "$script" | cut -d';' -f1)
echo "final $id" >> "$R/jobs.tsv"
echo "final 1 $KC_SLURM_GOAL $R/logs/final.log" >> "$R/tasks.tsv"
printf 'slurm: %-15s job %-8s (make %s)\n' final "$id" "$KC_SLURM_GOAL"
echo "slurm: round $round: $n_tasks shard task(s) + the final job; scripts and logs in $R/"
echo "slurm: follow with 'make status' (squeue -u \$USER; tail -f $R/logs/<step>-<task>.log);"
echo "slurm: after a failure or a change, run the same make command again: only what make would remake is resubmitted."
