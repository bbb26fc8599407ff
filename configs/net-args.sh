#!/usr/bin/env bash
# configs/net-args.sh NETS_INI NAME [--weights-path | --kind | --init]
# Prints the kc-extract options of network NAME from NETS_INI (or only its weights path; its kind,
# "network" or "baseline"; its kc-init options, empty unless the section has `init`).
# The network name "weights" means the file in $WEIGHTS (the demo's WEIGHTS=path.pth).
# A network with `init = <kc-init options>` and no `weights` gets $OUT/nets/NAME.safetensors
# (OUT defaults to work), which the pipeline makes with kc-init.
set -eu -o pipefail
ini=$1 name=$2 what=${3:-}
get() {
  awk -v sec="$name" -v key="$1" '
    /^[ \t]*[#;]/ { next }
    /^[ \t]*\[/ { s = $0; gsub(/^[ \t]*\[|\][ \t]*$/, "", s); in_sec = (s == sec); if (in_sec) found = 1; next }
    in_sec { line = $0; i = index(line, "="); if (!i) next
             k = substr(line, 1, i - 1); v = substr(line, i + 1)
             gsub(/^[ \t]+|[ \t]+$/, "", k); gsub(/^[ \t]+|[ \t]+$/, "", v)
             if (k == key) print v }
    END { if (!found) exit 3 }' "$ini"
}
if [ "$name" = weights ]; then
  [ -n "${WEIGHTS:-}" ] || { echo "net-args: network 'weights' needs WEIGHTS=path" >&2; exit 1; }
  case $what in --weights-path) echo "$WEIGHTS" ;; --kind) echo network ;; --init) ;; *) echo "--weights $WEIGHTS" ;; esac
  exit 0
fi
model=$(get model) || { echo "net-args: $ini has no section [$name] (NETS names must be sections of it)" >&2; exit 1; }
kind=$(get kind)
case ${kind:-network} in network|baseline) ;; *) echo "net-args: [$name] in $ini: kind must be network or baseline, not '$kind'" >&2; exit 1 ;; esac
if [ "$what" = --kind ]; then echo "${kind:-network}"; exit 0; fi
init=$(get init)
if [ "$what" = --init ]; then echo "$init"; exit 0; fi
weights=$(get weights)
[ -z "$weights" ] && [ -n "$init" ] && weights=${OUT:-work}/nets/$name.safetensors
if [ "$what" = --weights-path ]; then echo "$weights"; exit 0; fi
if [ "${model:-vit}" = color ]; then opts=$(get options); echo "--model color${opts:+ $opts}"; exit 0; fi
[ -n "$weights" ] || { echo "net-args: [$name] in $ini has no weights" >&2; exit 1; }
args="--weights $weights"
key=$(get checkpoint_key); [ -n "$key" ] && args="$args --checkpoint-key $key"
opts=$(get options); [ -n "$opts" ] && args="$args $opts"
echo "$args"
