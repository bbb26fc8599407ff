# configs/slurm-check.sh — sourced by configs/slurm-submit.sh (SCHEDULER=slurm): the resource file
# and the requests of each step checked against what the cluster offers, before anything is queued.
#
#   kc_ini_get STEP KEY          the value of KEY in [STEP] of $ini, else in [defaults], else empty
#   kc_ini_where STEP KEY        "[STEP]" when [STEP] sets KEY, else "[defaults]" (where to change it)
#   kc_check_requests STEP...    one line per request that can never be met, on stderr; returns the
#                                number of such lines (0: every step fits; at most 100), 255 when
#                                the cluster's limits cannot be read
#
# The cluster's limits come from `scontrol show partition -o` (the partition, its Default, MaxTime,
# MaxCPUsPerNode, MaxMemPerNode / MaxMemPerCPU, State) and `scontrol show node -o` (CPUEfctv or
# CPUTot, RealMemory less MemSpecLimit, Partitions).  A step fits when some node of its partition has
# its `cpus` and its `mem` at once and its `time` is within MaxTime.  Empty cpus / mem / time are not
# passed to sbatch (the cluster's defaults apply) and not checked.
# Memory: K, M (default), G, T suffixes, as sbatch --mem.  Time: as sbatch --time (M, M:S, H:M:S,
# D-H, D-H:M, D-H:M:S); `UNLIMITED` / `INFINITE` in MaxTime: no limit.

# The resource file, read once into KC_INI["section/key"] (kc_ini_load; kc_ini_get loads it on first use).
declare -gA KC_INI=()
KC_INI_FROM=
kc_ini_load() {
  KC_INI=() KC_INI_FROM=$ini
  local sec key val
  while IFS=$'\t' read -r sec key val; do KC_INI[$sec/$key]=$val; done < <(awk '
    /^[ \t]*[#;]/ || /^[ \t]*$/ { next }
    /^\[/ { sec = $0; gsub(/[\[\] \t]/, "", sec); next }
    { k = $0; sub(/=.*/, "", k); gsub(/[ \t]/, "", k); v = $0; sub(/^[^=]*=[ \t]*/, "", v); sub(/[ \t]+$/, "", v)
      if (v != "") print sec "\t" k "\t" v }' "$ini")
}
# kc_ini_val STEP KEY: sets REPLY (no subshell)
kc_ini_val() {
  [ "$KC_INI_FROM" = "$ini" ] || kc_ini_load
  REPLY=${KC_INI[$1/$2]:-${KC_INI[defaults/$2]:-}}
}
kc_ini_get() { kc_ini_val "$1" "$2"; echo "$REPLY"; }
kc_ini_where() {
  [ "$KC_INI_FROM" = "$ini" ] || kc_ini_load
  if [ -n "${KC_INI[$1/$2]:-}" ]; then echo "[$1]"; else echo "[defaults]"; fi
}

# megabytes of an sbatch --mem value, in REPLY ("" when it is not one)
kc_mem_mb() {
  REPLY=
  [[ $1 =~ ^([0-9]+)([KkMmGgTt]?)[Bb]?$ ]] || return 0
  local v=${BASH_REMATCH[1]} u=${BASH_REMATCH[2]^^}
  case $u in K) REPLY=$(( (v + 1023) / 1024 )) ;; G) REPLY=$(( v * 1024 )) ;; T) REPLY=$(( v * 1024 * 1024 )) ;; *) REPLY=$v ;; esac
}

# seconds of an sbatch --time value, in REPLY ("" when it is not one; -1 for UNLIMITED / INFINITE)
kc_time_s() {
  REPLY=
  case $1 in UNLIMITED|INFINITE|infinite) REPLY=-1; return 0 ;; esac
  local d=0 t=$1 dh=0 a b c
  if [[ $t =~ ^([0-9]+)-(.*)$ ]]; then d=$((10#${BASH_REMATCH[1]})) t=${BASH_REMATCH[2]} dh=1; fi
  [[ $t =~ ^([0-9]+)(:([0-9]+))?(:([0-9]+))?$ ]] || return 0
  a=$((10#${BASH_REMATCH[1]})) b=${BASH_REMATCH[3]} c=${BASH_REMATCH[5]}
  if [ $dh = 1 ]; then REPLY=$(( d * 86400 + a * 3600 + 10#${b:-0} * 60 + 10#${c:-0} ))
  elif [ -n "$c" ]; then REPLY=$(( a * 3600 + 10#$b * 60 + 10#$c ))
  elif [ -n "$b" ]; then REPLY=$(( a * 60 + 10#$b ))
  else REPLY=$(( a * 60 )); fi
}

kc_check_requests() {
  local parts= nodes= bad=0 step
  if ! parts=$(scontrol show partition -o 2>&1) || ! nodes=$(scontrol show node -o 2>&1); then
    echo "slurm: cannot read the cluster's limits (scontrol show partition / show node: $(tail -n 1 <<<"$parts$nodes")); nothing submitted" >&2
    return 255
  fi
  # per partition, one line: name default maxtime maxmempercpu then "cpus:mem" per node (after the
  # partition's MaxCPUsPerNode / MaxMemPerNode and the node's MemSpecLimit)
  local -A P_DEF=() P_TIME=() P_MPC=() P_NODES=()
  local names= default= name def mt mpc caps
  while read -r name def mt mpc caps; do
    names+="${names:+, }$name"; P_TIME[$name]=$mt P_MPC[$name]=$mpc P_NODES[$name]=$caps
    [ "$def" = YES ] && [ -z "$default" ] && default=$name
  done < <(awk -v nodes="$nodes" '
    function field(line, k,   i, n, f) { n = split(line, f, " "); for (i = 1; i <= n; i++) if (index(f[i], k "=") == 1) return substr(f[i], length(k) + 2); return "" }
    BEGIN { nn = split(nodes, nl, "\n") }
    { p = field($0, "PartitionName"); cpn = field($0, "MaxCPUsPerNode"); mpn = field($0, "MaxMemPerNode"); caps = ""
      for (j = 1; j <= nn; j++) {
        if (("," field(nl[j], "Partitions") ",") !~ ("," p ",")) continue
        c = field(nl[j], "CPUEfctv"); if (c == "") c = field(nl[j], "CPUTot")
        m = field(nl[j], "RealMemory") - field(nl[j], "MemSpecLimit")
        if (cpn ~ /^[0-9]+$/ && c + 0 > cpn + 0) c = cpn
        if (mpn ~ /^[0-9]+$/ && m > mpn + 0) m = mpn
        caps = caps " " (c + 0) ":" (m + 0) }
      d = field($0, "Default"); t = field($0, "MaxTime"); mpc = field($0, "MaxMemPerCPU")
      print p, (d == "" ? "NO" : d), (t == "" ? "UNLIMITED" : t), (mpc == "" ? "-" : mpc) caps }' <<<"$parts")
  for step in "$@"; do
    local p cpus mem time where want_m=0 max_c=0 max_m=0 both=0 cm c m c_ok=1 m_ok=1
    kc_ini_val "$step" partition; p=$REPLY
    kc_ini_val "$step" cpus; cpus=$REPLY
    kc_ini_val "$step" mem; mem=$REPLY
    kc_ini_val "$step" time; time=$REPLY
    if [ -z "$p" ]; then
      if [ -z "$default" ]; then
        echo "slurm: step $step names no partition and the cluster has no default one (it has: $names): set partition in [defaults] of $ini" >&2
        bad=$((bad + 1)); continue
      fi
      p=$default
    fi
    case $p in *,*) continue ;; esac   # several partitions: sbatch takes the first that fits
    if [ -z "${P_TIME[$p]+x}" ]; then
      echo "slurm: step $step asks for partition $p, which the cluster does not have (it has: $names): change partition in $(kc_ini_where "$step" partition) of $ini" >&2
      bad=$((bad + 1)); continue
    fi
    if [ -z "${P_NODES[$p]}" ]; then
      echo "slurm: step $step asks for partition $p, which has no nodes: change partition in $(kc_ini_where "$step" partition) of $ini" >&2
      bad=$((bad + 1)); continue
    fi
    if [ -n "$cpus" ] && ! [[ $cpus =~ ^[1-9][0-9]*$ ]]; then
      echo "slurm: step $step: cpus = $cpus is not a number of CPUs: fix cpus in $(kc_ini_where "$step" cpus) of $ini" >&2
      bad=$((bad + 1)); c_ok=0
    fi
    if [ -n "$mem" ]; then
      kc_mem_mb "$mem"; want_m=$REPLY
      if [ -z "$want_m" ]; then
        echo "slurm: step $step: mem = $mem is not an amount of memory (e.g. 4G, 500M): fix mem in $(kc_ini_where "$step" mem) of $ini" >&2
        bad=$((bad + 1)); m_ok=0; want_m=0
      fi
    fi
    local nc=${cpus:-1}; [ "$c_ok" = 1 ] || nc=1
    for cm in ${P_NODES[$p]}; do
      c=${cm%%:*} m=${cm#*:}
      # MaxMemPerCPU: a task's memory is at most that times its CPUs
      [ "${P_MPC[$p]}" = - ] || [ $(( ${P_MPC[$p]} * nc )) -ge "$m" ] || m=$(( ${P_MPC[$p]} * nc ))
      [ "$c" -gt "$max_c" ] && max_c=$c
      [ "$m" -gt "$max_m" ] && max_m=$m
      [ "$c" -ge "$nc" ] && [ "$m" -ge "$want_m" ] && both=1
    done
    if [ "$c_ok" = 1 ] && [ "$nc" -gt "$max_c" ]; then
      echo "slurm: step $step asks for $cpus CPUs per task, partition $p offers at most $max_c per node: lower cpus in $(kc_ini_where "$step" cpus) of $ini" >&2
      bad=$((bad + 1)); c_ok=0
    fi
    if [ "$m_ok" = 1 ] && [ "$want_m" -gt "$max_m" ]; then
      echo "slurm: step $step asks for $mem of memory, partition $p offers at most ${max_m}M per node: lower mem in $(kc_ini_where "$step" mem) of $ini" >&2
      bad=$((bad + 1)); m_ok=0
    fi
    if [ "$c_ok" = 1 ] && [ "$m_ok" = 1 ] && [ "$both" = 0 ]; then
      echo "slurm: step $step asks for $cpus CPUs and $mem of memory on one node, no node of partition $p has both: lower cpus or mem in $(kc_ini_where "$step" cpus) of $ini" >&2
      bad=$((bad + 1))
    fi
    if [ -n "$time" ]; then
      local ts mt
      kc_time_s "$time"; ts=$REPLY
      kc_time_s "${P_TIME[$p]}"; mt=$REPLY
      if [ -z "$ts" ]; then
        echo "slurm: step $step: time = $time is not a time limit (e.g. 04:00:00, 1-00:00:00): fix time in $(kc_ini_where "$step" time) of $ini" >&2
        bad=$((bad + 1))
      elif [ -n "$mt" ] && [ "$mt" -ge 0 ] && [ "$ts" -gt "$mt" ]; then
        echo "slurm: step $step asks for $time, partition $p allows at most ${P_TIME[$p]} (MaxTime): lower time in $(kc_ini_where "$step" time) of $ini" >&2
        bad=$((bad + 1))
      fi
    fi
  done
  return $(( bad > 100 ? 100 : bad ))
}

# The target a plan line names, as it is on disk, in REPLY: @BEST@ (the setting the sweep chooses,
# known only once the `best` step ran) replaced by the content of $KC_SLURM_BEST (read once); returns
# 1 while that is unknown.
KC_BEST_READ=0 KC_BEST_VAL=
kc_resolve() {
  REPLY=$1
  case $1 in
    *@BEST@*)
      if [ "$KC_BEST_READ" = 0 ]; then
        KC_BEST_VAL=$(cat "${KC_SLURM_BEST:-/nonexistent}" 2>/dev/null) || KC_BEST_VAL=
        KC_BEST_READ=1
      fi
      [ -n "$KC_BEST_VAL" ] || return 1
      REPLY=${1//@BEST@/$KC_BEST_VAL} ;;
  esac
  return 0
}
# 0 when the target of a plan line is made: it exists, or it is a shard (P.shards/k-of-n.h5) whose
# merged product P exists (kc-merge removed the shards after checking P against them).
kc_target_done() {
  kc_resolve "$1" || return 1
  local t=$REPLY
  [ -e "$t" ] && return 0
  case $t in *.shards/*-of-*.h5) [ -e "${t%.shards/*}" ] && return 0 ;; esac
  return 1
}
