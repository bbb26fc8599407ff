#!/usr/bin/env bash
# tests/layout.sh [ROOT] — checks every #include "..." of the C sources under ROOT (default: this
# repository) against the one-way order of the rooms below, and that no two modules include each
# other through any chain (a circle), and prints one line per finding ("file:line: rule"), then a
# count.  Exit 0 when there is none, 1 otherwise.  Run by tests/test_layout.sh (make test);
# docs/design.md describes the same order.
#
# The rooms.  In pipeline/, decoders/ and eval/ each subfolder is a room; the files directly in
# pipeline/ are its base (pipeline/base), those directly in decoders/ the room "decoders", and eval/
# holds rooms only (a file directly in eval/ fails).  datasets/, stages/, fuzz/ and tests/ are one
# room each.  A room may always include its own headers, and what its line lists; a name on a line
# stands for that room and every room below it ("pipeline" is every room of pipeline/, "eval" every
# room of eval/, "decoders" the decoders and decoders/refine); "*" means anything.  An include that
# names no existing file fails too, and so does a file in a folder the table does not list.
#
# Circles.  A module is a .c and its .h (the same path without the extension); module A uses
# module B when A's .c or .h includes B's .h.  Any chain of uses that comes back to where it
# started is reported once, as "file:line: include circle: a -> b -> ... -> a", at the include
# that closes it, whatever the rooms (a circle inside one room is refused too).
#
#   room               may include
#   ----------------   ------------------------------------------------------------------
RULES='
    pipeline/base      -
    pipeline/weights   pipeline/base
    pipeline/images    pipeline/base
    pipeline/cache     pipeline/base
    pipeline/model     pipeline/weights pipeline/base
    pipeline/extract   pipeline/model pipeline/weights pipeline/images pipeline/cache pipeline/base
    datasets           pipeline
    decoders           pipeline
    decoders/refine    pipeline
    eval/voc           datasets pipeline
    eval/davis         eval/voc datasets pipeline
    eval/probe         eval/voc datasets pipeline
    eval/saliency      eval/voc decoders/refine datasets pipeline
    eval/tables        eval/voc eval/davis eval/probe eval/saliency pipeline
    eval/figures       eval/voc eval/davis eval/probe eval/saliency eval/tables datasets pipeline
    eval/report        eval/voc eval/davis eval/probe eval/saliency eval/tables eval/figures datasets pipeline
    eval/export        eval/figures datasets pipeline
    stages             datasets decoders eval pipeline
    fuzz               *
    tests              *
'
# (the base: kc, progress, ini, json, lock, sha256, box.h.  fuzz/ and tests/ are consumers: nothing
# of the library includes them, which the lines above already say.)
set -u -o pipefail
ROOT=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$ROOT" || exit 2
FOLDERS=(pipeline datasets decoders eval stages fuzz tests)

declare -A MAY
while read -r room allowed; do
  [ -n "$room" ] || continue
  MAY[$room]=$allowed
done <<<"$RULES"

# room_of PATH: sets ROOM to the room of a repository path ("" when it is in none of the folders)
# (a variable, not output read by $(...): no subshell per include)
room_of() {
  local p=$1 top=${1%%/*}
  local rest=${p#"$top"/}
  case $top in
    pipeline)
      if [[ $rest == */* ]]; then ROOM="pipeline/${rest%%/*}"; else ROOM=pipeline/base; fi ;;
    decoders | eval)
      if [[ $rest == */* ]]; then ROOM="$top/${rest%%/*}"; else ROOM=$top; fi ;;
    datasets | stages | fuzz | tests) ROOM=$top ;;
    *) ROOM= ;;
  esac
}
# norm PATH: sets NORM to PATH without its "./" and "dir/.." parts
norm() {
  local -a out=() parts
  local IFS=/ x
  read -ra parts <<<"$1"
  for x in "${parts[@]}"; do
    case $x in
      '' | .) ;;
      ..) [ ${#out[@]} -gt 0 ] && unset 'out[${#out[@]}-1]' ;;
      *) out+=("$x") ;;
    esac
  done
  NORM="${out[*]}"
}
# allowed FROM TO: the table's answer for an include of room TO from room FROM
allowed() {
  local from=$1 to=$2 a
  [ "$from" = "$to" ] && return 0
  for a in ${MAY[$from]}; do
    [ "$a" = '*' ] && return 0
    [ "$a" = "$to" ] && return 0
    [[ $to == "$a"/* ]] && return 0
  done
  return 1
}

bad=0 n=0 edges=
say() { echo "$1"; bad=$((bad + 1)); }
mapfile -t files < <(find "${FOLDERS[@]}" -type f \( -name '*.c' -o -name '*.h' \) 2>/dev/null | LC_ALL=C sort)
# every include line of every file, from one grep ("FILE:LINE:TEXT", grouped by file in the order
# of the list)
hits=()
[ ${#files[@]} = 0 ] || mapfile -t hits < <(grep -n -H '^[[:space:]]*#[[:space:]]*include' -- "${files[@]}")
h=0
for f in "${files[@]}"; do
  room_of "$f"; from=$ROOM
  if [ -z "${MAY[$from]+x}" ]; then
    if [ "$from" = eval ]; then say "$f:1: eval/ holds rooms only: put the file in the room of its concern (eval/voc, eval/report, ...)"
    else say "$f:1: $from/ is not a room of the table in tests/layout.sh (add its line there and in docs/design.md)"; fi
    while [ $h -lt ${#hits[@]} ] && [[ ${hits[$h]} == "$f:"* ]]; do h=$((h + 1)); done
    continue
  fi
  while [ $h -lt ${#hits[@]} ] && [[ ${hits[$h]} == "$f:"* ]]; do
    IFS=: read -r lineno line <<<"${hits[$h]#"$f:"}"
    h=$((h + 1))
    [[ $line =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\"([^\"]+)\" ]] || continue
    inc=${BASH_REMATCH[1]}
    n=$((n + 1))
    # as the compiler looks: beside the including file first, then from the root (-I.)
    norm "${f%/*}/$inc"
    if [ -f "$NORM" ]; then target=$NORM
    else
      norm "$inc"
      if [ -f "$NORM" ]; then target=$NORM
      else say "$f:$lineno: #include \"$inc\": no such file (neither beside $f nor from the root)"; continue; fi
    fi
    # the module graph for the circle check: "FROM-MODULE TO-MODULE FILE:LINE"
    [[ $target == *.h ]] && [ "${f%.*}" != "${target%.*}" ] && edges+="${f%.*} ${target%.*} $f:$lineno"$'\n'
    room_of "$target"; to=$ROOM
    if [ -z "$to" ]; then
      say "$f:$lineno: #include \"$inc\": $target is outside the folders of the table"
    elif ! allowed "$from" "$to"; then
      say "$f:$lineno: #include \"$inc\": $from may not include $to (it may include: ${MAY[$from]/#-/only itself})"
    fi
  done
done
# circles between modules: a depth-first search over the uses, one report per circle (at the
# include that closes it, the first time the search finds it)
if [ -n "$edges" ]; then
  while IFS= read -r line; do say "$line"; done < <(printf '%s' "$edges" | LC_ALL=C sort -u | awk '
    { k = $1 SUBSEP (++deg[$1]); to[k] = $2; at[k] = $3; node[$1] = 1; node[$2] = 1 }
    function dfs(u,   i, v, j, path, key) {
      state[u] = 1; stack[++sp] = u
      for (i = 1; i <= deg[u]; i++) {
        v = to[u SUBSEP i]
        if (state[v] == 1) {
          path = ""; for (j = 1; j <= sp; j++) if (stack[j] == v) break
          for (; j <= sp; j++) path = path stack[j] " -> "
          key = path v
          if (!(key in said)) { said[key] = 1; print at[u SUBSEP i] ": include circle: " path v }
        } else if (state[v] == 0) dfs(v)
      }
      sp--; state[u] = 2
    }
    END { sp = 0; n = 0; for (u in node) names[++n] = u
          # a fixed order (awk arrays have none): insertion sort of the names
          for (i = 2; i <= n; i++) { x = names[i]; for (j = i - 1; j >= 1 && names[j] > x; j--) names[j + 1] = names[j]; names[j + 1] = x }
          for (i = 1; i <= n; i++) if (!state[names[i]]) dfs(names[i]) }')
fi
echo "layout: $n includes checked, $bad against the order or in a circle"
[ "$bad" -eq 0 ]
