#!/usr/bin/env bash
# tests/layout.sh [ROOT] — checks every #include "..." of the C sources under ROOT (default: this
# repository) against the one-way order of the folders below, and prints one line per include
# against it ("file:line: rule"), then a count.  Exit 0 when there is none, 1 otherwise.
# Run by tests/test_layout.sh (make test); docs/design.md describes the same order.
#
# The order.  A file's room is its folder; in pipeline/, each subfolder is a room and the files
# directly in pipeline/ are the base.  A room may always include its own headers, and what its
# line lists; "pipeline" means every room of pipeline/; "*" means anything.  An include that names
# no existing file fails too, and so does a file in a pipeline/ subfolder the table does not list.
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
    eval               datasets pipeline
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
  case $top in
    pipeline)
      local rest=${p#pipeline/}
      if [[ $rest == */* ]]; then ROOM="pipeline/${rest%%/*}"; else ROOM=pipeline/base; fi ;;
    datasets | decoders | eval | stages | fuzz | tests) ROOM=$top ;;
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
    [ "$a" = pipeline ] && [[ $to == pipeline/* ]] && return 0
  done
  return 1
}

bad=0 n=0
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
    say "$f:1: $from/ is not a room of the table in tests/layout.sh (add its line there and in docs/design.md)"
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
    room_of "$target"; to=$ROOM
    if [ -z "$to" ]; then
      say "$f:$lineno: #include \"$inc\": $target is outside the folders of the table"
    elif ! allowed "$from" "$to"; then
      say "$f:$lineno: #include \"$inc\": $from may not include $to (it may include: ${MAY[$from]/#-/only itself})"
    fi
  done
done
echo "layout: $n includes checked, $bad against the order"
[ "$bad" -eq 0 ]
