#!/usr/bin/env bash
# configs/net-args.sh NETS_INI NAME [--weights-path | --kind | --init | --make]
# Prints the kc-extract options of network NAME from NETS_INI (or only its weights path; its kind,
# "network" or "baseline"; its kc-init options, empty unless the section has `init`; or, with
# --make, all four on one line for pipeline.mk: "KIND|WEIGHTS|INIT|OPTIONS", '-' for an empty field).
# The network name "weights" means the file in $WEIGHTS (the demo's WEIGHTS=path.pth).
# A network with `init = <kc-init options>` and no `weights` gets $OUT/nets/NAME.safetensors
# (OUT defaults to work), which the pipeline makes with kc-init.
set -eu -o pipefail
ini=$1 name=$2 what=${3:-}
# the section's keys, read once: get KEY prints its value (empty when absent)
declare -A kv=()
[ -f "$ini" ] || { echo "net-args: $ini: no such file" >&2; exit 1; }
sec=$(awk -v sec="$name" '
    /^[ \t]*[#;]/ { next }
    /^[ \t]*\[/ { s = $0; gsub(/^[ \t]*\[|\][ \t]*$/, "", s); in_sec = (s == sec); if (in_sec) found = 1; next }
    in_sec { line = $0; i = index(line, "="); if (!i) next
             k = substr(line, 1, i - 1); v = substr(line, i + 1)
             gsub(/^[ \t]+|[ \t]+$/, "", k); gsub(/^[ \t]+|[ \t]+$/, "", v)
             print k "\t" v }
    END { if (!found) print "\001missing" }' "$ini")
found=1
while IFS=$'\t' read -r k v; do
  [ "$k" = $'\001missing' ] && found=0
  [ -n "$k" ] && kv[$k]=$v
done <<<"$sec"
get() { REPLY=${kv[$1]:-}; }   # get KEY: its value in REPLY (no subshell: this runs in every make)
emit() {   # emit KIND WEIGHTS INIT ARGS: the mode's answer
  case $what in
    --weights-path) echo "$2" ;;
    --kind) echo "$1" ;;
    --init) echo "$3" ;;
    --make) echo "${1:--}|${2:--}|${3:--}|${4:--}" ;;
    *) echo "$4" ;;
  esac
  exit 0
}
if [ "$name" = weights ]; then
  [ -n "${WEIGHTS:-}" ] || { echo "net-args: network 'weights' needs WEIGHTS=path" >&2; exit 1; }
  emit network "$WEIGHTS" "" "--weights $WEIGHTS"
fi
[ $found = 1 ] || { echo "net-args: $ini has no section [$name] (NETS names must be sections of it)" >&2; exit 1; }
get model; model=$REPLY
get kind; kind=$REPLY
case ${kind:-network} in network|baseline) ;; *) echo "net-args: [$name] in $ini: kind must be network or baseline, not '$kind'" >&2; exit 1 ;; esac
kind=${kind:-network}
get init; init=$REPLY
get weights; weights=$REPLY
[ -z "$weights" ] && [ -n "$init" ] && weights=${OUT:-work}/nets/$name.safetensors
case $what in --kind|--init|--weights-path) emit "$kind" "$weights" "$init" "" ;; esac
get options; opts=$REPLY
if [ "${model:-vit}" = color ]; then emit "$kind" "$weights" "$init" "--model color${opts:+ $opts}"; fi
[ -n "$weights" ] || { echo "net-args: [$name] in $ini has no weights" >&2; exit 1; }
args="--weights $weights"
get checkpoint_key; key=$REPLY; [ -n "$key" ] && args="$args --checkpoint-key $key"
[ -n "$opts" ] && args="$args $opts"
emit "$kind" "$weights" "$init" "$args"
