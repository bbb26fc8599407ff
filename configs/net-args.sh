#!/usr/bin/env bash
# configs/net-args.sh NETS_INI NAME [--weights-path | --kind | --init | --make]
# configs/net-args.sh NETS_INI --make-all NAME...
# Prints the kc-extract options of network NAME from NETS_INI (or only its weights path; its kind,
# "network" or "baseline"; its kc-init options, empty unless the section has `init`; or, with
# --make, all four on one line for pipeline.mk: "KIND|WEIGHTS|INIT|OPTIONS", '-' for an empty field).
# --make-all: the --make line of every NAME, one line each, "NAME|KIND|WEIGHTS|INIT|OPTIONS" with
# the spaces inside a field written as '^' (pipeline.mk reads every network from one run: a make's
# $(shell) turns newlines into spaces); the first NAME with an error prints its message alone.
# The network name "weights" means the file in $WEIGHTS (the demo's WEIGHTS=path.pth).
# A network with `init = <kc-init options>` and no `weights` gets $OUT/nets/NAME.safetensors
# (OUT defaults to work), which the pipeline makes with kc-init.
set -eu -o pipefail
ini=$1
if [ "${2:-}" = --make-all ]; then what=--make-all; shift 2; names=("$@")
else what=${3:-}; names=("$2"); fi
[ -f "$ini" ] || { echo "net-args: $ini: no such file" >&2; exit 1; }
# the keys of every NAME's section, read once: lines "SECTION<TAB>KEY<TAB>VALUE", and a line
# "SECTION" for each section found (a section given twice: the later value of a key wins)
declare -A kv=() found=()
sep=$'\001'
secs=$(awk -v names="${names[*]}" '
    BEGIN { n = split(names, a, " "); for (i = 1; i <= n; i++) want[a[i]] = 1 }
    /^[ \t]*[#;]/ { next }
    /^[ \t]*\[/ { s = $0; gsub(/^[ \t]*\[|\][ \t]*$/, "", s); in_sec = (s in want); if (in_sec) { sec = s; print sec }; next }
    in_sec { line = $0; i = index(line, "="); if (!i) next
             k = substr(line, 1, i - 1); v = substr(line, i + 1)
             gsub(/^[ \t]+|[ \t]+$/, "", k); gsub(/^[ \t]+|[ \t]+$/, "", v)
             print sec "\t" k "\t" v }' "$ini")
while IFS=$'\t' read -r s k v; do
  [ -n "$s" ] || continue
  found[$s]=1
  [ -n "$k" ] && kv[$s$sep$k]=$v
done <<<"$secs"

# net NAME [all]: network NAME's kind, weights, kc-init options and kc-extract options in N_KIND,
# N_WEIGHTS, N_INIT and N_ARGS; an error is one line on stderr and exit 1.  Without `all` (--kind,
# --init, --weights-path) it stops before the options, and so before their checks.
net() {
  local name=$1 model opts key
  N_KIND= N_WEIGHTS= N_INIT= N_ARGS=
  if [ "$name" = weights ]; then
    [ -n "${WEIGHTS:-}" ] || { echo "net-args: network 'weights' needs WEIGHTS=path" >&2; exit 1; }
    N_KIND=network N_WEIGHTS=$WEIGHTS N_ARGS="--weights $WEIGHTS"
    return 0
  fi
  [ -n "${found[$name]:-}" ] || { echo "net-args: $ini has no section [$name] (NETS names must be sections of it)" >&2; exit 1; }
  model=${kv[$name${sep}model]:-}
  N_KIND=${kv[$name${sep}kind]:-}
  case ${N_KIND:-network} in network|baseline) ;; *) echo "net-args: [$name] in $ini: kind must be network or baseline, not '$N_KIND'" >&2; exit 1 ;; esac
  N_KIND=${N_KIND:-network}
  N_INIT=${kv[$name${sep}init]:-}
  N_WEIGHTS=${kv[$name${sep}weights]:-}
  [ -z "$N_WEIGHTS" ] && [ -n "$N_INIT" ] && N_WEIGHTS=${OUT:-work}/nets/$name.safetensors
  [ "${2:-}" = all ] || return 0
  opts=${kv[$name${sep}options]:-}
  if [ "${model:-vit}" = color ]; then N_ARGS="--model color${opts:+ $opts}"; return 0; fi
  [ -n "$N_WEIGHTS" ] || { echo "net-args: [$name] in $ini has no weights" >&2; exit 1; }
  N_ARGS="--weights $N_WEIGHTS"
  key=${kv[$name${sep}checkpoint_key]:-}
  [ -n "$key" ] && N_ARGS="$N_ARGS --checkpoint-key $key"
  [ -n "$opts" ] && N_ARGS="$N_ARGS $opts"
  return 0
}
case $what in
  --weights-path) net "${names[0]}"; echo "$N_WEIGHTS" ;;
  --kind) net "${names[0]}"; echo "$N_KIND" ;;
  --init) net "${names[0]}"; echo "$N_INIT" ;;
  --make) net "${names[0]}" all; echo "${N_KIND:--}|${N_WEIGHTS:--}|${N_INIT:--}|${N_ARGS:--}" ;;
  --make-all)
    out=
    for n in "${names[@]}"; do
      net "$n" all
      line="$n|${N_KIND:--}|${N_WEIGHTS:--}|${N_INIT:--}|${N_ARGS:--}"
      out+=${line// /^}$'\n'
    done
    printf '%s' "$out" ;;
  *) net "${names[0]}" all; echo "$N_ARGS" ;;
esac
