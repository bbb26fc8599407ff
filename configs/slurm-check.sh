# configs/slurm-check.sh — sourced by configs/slurm-submit.sh (SCHEDULER=slurm): the resource file
# and the requests of each step checked against what the cluster offers, before anything is queued.
#
#   kc_ini_get STEP KEY          the value of KEY in [STEP] of $ini, else in [defaults], else empty
#   kc_ini_where STEP KEY        "[STEP]" when [STEP] sets KEY, else "[defaults]" (where to change it)
#   kc_check_requests STEP...    one line per request that can never be met, on stderr; returns the
#                                number of such lines (0: every step fits)
#
# The cluster's limits come from `scontrol show partition -o` (the partition, its Default, MaxTime,
# MaxCPUsPerNode, MaxMemPerNode / MaxMemPerCPU, State) and `scontrol show node -o` (CPUEfctv or
# CPUTot, RealMemory less MemSpecLimit, Partitions).  A step fits when some node of its partition has
# its `cpus` and its `mem` at once and its `time` is within MaxTime.  Empty cpus / mem / time are not
# passed to sbatch (the cluster's defaults apply) and not checked.
# Memory: K, M (default), G, T suffixes, as sbatch --mem.  Time: as sbatch --time (M, M:S, H:M:S,
# D-H, D-H:M, D-H:M:S); `UNLIMITED` / `INFINITE` in MaxTime: no limit.

kc_ini_get() {
  awk -v want="$1" -v key="$2" '
    /^[ \t]*[#;]/ || /^[ \t]*$/ { next }
    /^\[/ { sec = $0; gsub(/[\[\] \t]/, "", sec); next }
    { k = $0; sub(/=.*/, "", k); gsub(/[ \t]/, "", k); v = $0; sub(/^[^=]*=[ \t]*/, "", v); sub(/[ \t]+$/, "", v)
      if (k == key && sec == want) s = v; if (k == key && sec == "defaults") d = v }
    END { print (s != "" ? s : d) }' "$ini"
}

kc_ini_where() {
  awk -v want="$1" -v key="$2" '
    /^[ \t]*[#;]/ || /^[ \t]*$/ { next }
    /^\[/ { sec = $0; gsub(/[\[\] \t]/, "", sec); next }
    { k = $0; sub(/=.*/, "", k); gsub(/[ \t]/, "", k); v = $0; sub(/^[^=]*=[ \t]*/, "", v); sub(/[ \t]+$/, "", v)
      if (k == key && sec == want && v != "") s = 1 }
    END { print (s ? "[" want "]" : "[defaults]") }' "$ini"
}

# megabytes of an sbatch --mem value ("" when it is not one)
kc_mem_mb() {
  awk -v m="$1" 'BEGIN {
    if (m !~ /^[0-9]+(\.[0-9]+)?[KkMmGgTt]?[Bb]?$/) { print ""; exit }
    u = m; gsub(/[0-9.Bb]/, "", u); u = toupper(u); v = m + 0
    f = u == "K" ? 1 / 1024 : u == "G" ? 1024 : u == "T" ? 1024 * 1024 : 1
    printf "%d\n", v * f + 0.999 }'
}

# seconds of an sbatch --time value ("" when it is not one; -1 for UNLIMITED / INFINITE)
kc_time_s() {
  awk -v t="$1" 'BEGIN {
    if (t == "UNLIMITED" || t == "INFINITE" || t == "infinite") { print -1; exit }
    d = 0
    if (t ~ /^[0-9]+-/) { d = t; sub(/-.*/, "", d); sub(/^[0-9]+-/, "", t); dh = 1 }
    if (t !~ /^[0-9]+(:[0-9]+)?(:[0-9]+)?$/) { print ""; exit }
    n = split(t, p, ":")
    if (dh) s = (n == 1 ? p[1] * 3600 : n == 2 ? p[1] * 3600 + p[2] * 60 : p[1] * 3600 + p[2] * 60 + p[3])
    else    s = (n == 1 ? p[1] * 60 : n == 2 ? p[1] * 60 + p[2] : p[1] * 3600 + p[2] * 60 + p[3])
    print d * 86400 + s }'
}

# field=value from a `scontrol ... -o` line
kc_field() { tr ' ' '\n' <<<"$1" | awk -F= -v k="$2" '$1 == k { sub(/^[^=]*=/, ""); print; exit }'; }

kc_check_requests() {
  local parts nodes bad=0 step
  if ! parts=$(scontrol show partition -o 2>&1) || ! nodes=$(scontrol show node -o 2>&1); then
    echo "slurm: cannot read the cluster's limits (scontrol show partition / show node: $(tail -n 1 <<<"$parts$nodes")); nothing submitted" >&2
    return 1
  fi
  local names default
  names=$(awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^PartitionName=/) { sub(/^PartitionName=/, "", $i); print $i } }' <<<"$parts" | paste -sd' ')
  default=$(awk '/ Default=YES/ { for (i = 1; i <= NF; i++) if ($i ~ /^PartitionName=/) { sub(/^PartitionName=/, "", $i); print $i } }' <<<"$parts" | head -n 1)
  for step in "$@"; do
    local p cpus mem time pline
    p=$(kc_ini_get "$step" partition) cpus=$(kc_ini_get "$step" cpus) mem=$(kc_ini_get "$step" mem) time=$(kc_ini_get "$step" time)
    if [ -z "$p" ]; then
      if [ -z "$default" ]; then
        echo "slurm: step $step names no partition and the cluster has no default one (it has: ${names// /, }): set partition in [defaults] of $ini" >&2
        bad=$((bad + 1)); continue
      fi
      p=$default
    fi
    case $p in *,*) continue ;; esac   # several partitions: sbatch takes the first that fits
    pline=$(awk -v p="$p" '{ for (i = 1; i <= NF; i++) if ($i == "PartitionName=" p) print }' <<<"$parts")
    if [ -z "$pline" ]; then
      echo "slurm: step $step asks for partition $p, which the cluster does not have (it has: ${names// /, }): change partition in $(kc_ini_where "$step" partition) of $ini" >&2
      bad=$((bad + 1)); continue
    fi
    # the nodes of the partition: "cpus mem_mb"
    local maxcpn maxmpn maxmpc maxtime
    maxcpn=$(kc_field "$pline" MaxCPUsPerNode) maxmpn=$(kc_field "$pline" MaxMemPerNode)
    maxmpc=$(kc_field "$pline" MaxMemPerCPU) maxtime=$(kc_field "$pline" MaxTime)
    local caps
    caps=$(awk -v p="$p" -v cpn="$maxcpn" -v mpn="$maxmpn" '
      { c = ""; e = ""; m = 0; spec = 0; parts = ""
        for (i = 1; i <= NF; i++) { split($i, kv, "="); k = kv[1]; v = substr($i, length(k) + 2)
          if (k == "CPUTot") c = v; else if (k == "CPUEfctv") e = v; else if (k == "RealMemory") m = v
          else if (k == "MemSpecLimit") spec = v; else if (k == "Partitions") parts = v }
        if (("," parts ",") !~ ("," p ",")) next
        if (e != "") c = e
        m -= spec
        if (cpn ~ /^[0-9]+$/ && c > cpn + 0) c = cpn
        if (mpn ~ /^[0-9]+$/ && m > mpn + 0) m = mpn
        print c + 0, m + 0 }' <<<"$nodes")
    if [ -z "$caps" ]; then
      echo "slurm: step $step asks for partition $p, which has no nodes: change partition in $(kc_ini_where "$step" partition) of $ini" >&2
      bad=$((bad + 1)); continue
    fi
    local max_c max_m c_ok=1 m_ok=1 want_m=""
    max_c=$(awk '$1 > m { m = $1 } END { print m + 0 }' <<<"$caps")
    max_m=$(awk '$2 > m { m = $2 } END { print m + 0 }' <<<"$caps")
    if [ -n "$cpus" ]; then
      if ! [[ $cpus =~ ^[1-9][0-9]*$ ]]; then
        echo "slurm: step $step: cpus = $cpus is not a number of CPUs: fix cpus in $(kc_ini_where "$step" cpus) of $ini" >&2
        bad=$((bad + 1)); c_ok=0
      elif [ "$cpus" -gt "$max_c" ]; then
        echo "slurm: step $step asks for $cpus CPUs per task, partition $p offers at most $max_c per node: lower cpus in $(kc_ini_where "$step" cpus) of $ini" >&2
        bad=$((bad + 1)); c_ok=0
      fi
    fi
    if [ -n "$mem" ]; then
      want_m=$(kc_mem_mb "$mem")
      # MaxMemPerCPU: the memory of a task is at most that times its CPUs
      if [ -n "$want_m" ] && [[ $maxmpc =~ ^[0-9]+$ ]] && [ "$(( maxmpc * ${cpus:-1} ))" -lt "$max_m" ]; then
        max_m=$(( maxmpc * ${cpus:-1} ))
      fi
      if [ -z "$want_m" ]; then
        echo "slurm: step $step: mem = $mem is not an amount of memory (e.g. 4G, 500M): fix mem in $(kc_ini_where "$step" mem) of $ini" >&2
        bad=$((bad + 1)); m_ok=0
      elif [ "$want_m" -gt "$max_m" ]; then
        echo "slurm: step $step asks for $mem of memory, partition $p offers at most ${max_m}M per node: lower mem in $(kc_ini_where "$step" mem) of $ini" >&2
        bad=$((bad + 1)); m_ok=0
      fi
    fi
    if [ "$c_ok" = 1 ] && [ "$m_ok" = 1 ] && [ -n "$cpus$want_m" ] &&
       ! awk -v c="${cpus:-0}" -v m="${want_m:-0}" '$1 >= c && $2 >= m { f = 1 } END { exit !f }' <<<"$caps"; then
      echo "slurm: step $step asks for $cpus CPUs and $mem of memory on one node, no node of partition $p has both: lower cpus or mem in $(kc_ini_where "$step" cpus) of $ini" >&2
      bad=$((bad + 1))
    fi
    if [ -n "$time" ]; then
      local ts mt
      ts=$(kc_time_s "$time") mt=$(kc_time_s "${maxtime:-UNLIMITED}")
      if [ -z "$ts" ]; then
        echo "slurm: step $step: time = $time is not a time limit (e.g. 04:00:00, 1-00:00:00): fix time in $(kc_ini_where "$step" time) of $ini" >&2
        bad=$((bad + 1))
      elif [ -n "$mt" ] && [ "$mt" -ge 0 ] && [ "$ts" -gt "$mt" ]; then
        echo "slurm: step $step asks for $time, partition $p allows at most $maxtime (MaxTime): lower time in $(kc_ini_where "$step" time) of $ini" >&2
        bad=$((bad + 1))
      fi
    fi
  done
  return $(( bad > 100 ? 100 : bad ))
}

# The target a plan line names, as it is on disk: @BEST@ (the setting the sweep chooses, known only
# once the `best` step ran) replaced by the content of $KC_SLURM_BEST; empty while that is unknown.
kc_resolve() {
  case $1 in
    *@BEST@*) local b; b=$(cat "${KC_SLURM_BEST:-/nonexistent}" 2>/dev/null) || b=
              [ -n "$b" ] && echo "${1//@BEST@/$b}" ;;
    *) echo "$1" ;;
  esac
}
# 0 when the target of a plan line is made: it exists, or it is a shard (P.shards/k-of-n.h5) whose
# merged product P exists (kc-merge removed the shards after checking P against them).
kc_target_done() {
  local t
  t=$(kc_resolve "$1") && [ -n "$t" ] || return 1
  [ -e "$t" ] && return 0
  case $t in *.shards/*-of-*.h5) [ -e "${t%.shards/*}" ] && return 0 ;; esac
  return 1
}
