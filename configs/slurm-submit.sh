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
# First every step's missing targets are listed and the requests of the steps to submit are checked
# against the cluster (configs/slurm-check.sh): one line per request that cannot be met, and nothing
# is submitted.  Each run is a round: round-N/<step>.sbatch, round-N/logs/<step>-<task>.log, round-N/tasks.tsv
# ("step task target log"), round-N/jobs.tsv ("step jobid").  Only targets that do not exist are
# submitted; a target whose last two attempts both failed with the same error line is reported
# with its log and not submitted again (fix the cause, then remove those logs or the round folders).
set -eu -o pipefail
dir=$KC_SLURM_DIR ini=$KC_SLURM_INI
case $dir in /*) ;; *) dir=$PWD/$dir ;; esac
plan=$dir/plan.txt
command -v sbatch >/dev/null || { echo "slurm: sbatch not found (SCHEDULER=slurm needs a Slurm login node)" >&2; exit 2; }
[ -f "$ini" ] || { echo "slurm: $ini: no such file" >&2; exit 2; }

# kc_ini_get, the request check, kc_target_done
source "$(dirname "$0")/slurm-check.sh"

# jobs of earlier rounds still queued: do not submit twice.  (All of the user's jobs are listed and
# matched here: `squeue -j` with one id Slurm has already forgotten lists nothing at all.)
prev_ids=$(cat "$dir"/round-*/jobs.tsv 2>/dev/null | awk '{print $2}' | paste -sd, || true)
if [ -n "$prev_ids" ]; then
  active=$(squeue -h -u "$(id -un)" -o '%F' 2>/dev/null | awk -v ids="$prev_ids" \
             'BEGIN { n = split(ids, a, ","); for (i = 1; i <= n; i++) mine[a[i]] = 1 } $1 in mine' | wc -l || true)
  if [ "${active:-0}" -gt 0 ]; then
    echo "slurm: $active jobs of earlier submissions are still queued or running; nothing submitted."
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

# the targets to submit, per step (a target is not done while a step before it is resubmitted:
# the best setting of @BEST@ targets is read once the best step is done)
declare -A todo
gaveup=0 to_check=()
steps=$(awk '!seen[$1]++ {print $1}' "$plan")
for step in $steps; do
  todo[$step]=
  while read -r _ _ t; do
    kc_target_done "$t" && continue
    if gave_up "$t"; then gaveup=$((gaveup + 1)); continue; fi
    todo[$step]+="$t"$'\n'
  done < <(awk -v s="$step" '$1 == s' "$plan")
  [ -z "${todo[$step]}" ] || to_check+=("$step")
done
if [ "$gaveup" -gt 0 ]; then
  echo "slurm: $gaveup target(s) given up (above); the final '$KC_SLURM_GOAL' job is not submitted." >&2
  exit 1
fi
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
echo "slurm: after a failure, run the same make command again: only missing products are resubmitted."
