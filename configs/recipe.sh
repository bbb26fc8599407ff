#!/usr/bin/env bash
# configs/recipe.sh — the recipe stamps of pipeline.mk ("Request stamps" in docs/design.md).
#
# A product's stamp holds its command, as the request expands it, then one line per user file the
# command reads (weights, dataset lists, the grid, nets.ini, ...): "sha256 <hex> <file>", or
# "missing <file>".  The product depends on its stamp, which is rewritten only when that text
# changes: a file touched without a change of bytes leaves it alone, one replaced by other bytes
# under an older mtime changes it.
#
#   configs/recipe.sh --check PLAN
#       PLAN has one line per product, "STAMP @@ FILES @@ COMMAND" (written by make while it reads
#       pipeline.mk); prints the stamps whose text would change (or that do not exist), creating
#       their folders, and removes PLAN.  One run per make, a few processes in all.
#   KC_TEXT=COMMAND configs/recipe.sh STAMP [FILE...]
#       (make, when a stamp's rule runs) the command, then the files' lines, written to STAMP when
#       that text differs from STAMP's.
#
# configs/recipe.awk does the work.  The hashes are remembered in KC_HASHES (a table
# "path|identity|sha256") under the file's identity:
# device, inode, size, mtime and ctime in nanoseconds (ctime cannot be set back, so `cp -p` and
# `rsync -t` are seen), and computed again only when that identity changes.
set -eu -o pipefail
hashes=${KC_HASHES:?KC_HASHES: the hash table}

here=${0%/*}
[ -d "${hashes%/*}" ] || mkdir -p "${hashes%/*}"
if [ "${1:-}" = --check ]; then   # (bash builtins but awk and stat: process starts are what costs)
  plan=$2
  [ -f "$plan" ] || exit 0
  changed=$(awk -v table="$hashes" -v tmp="$hashes.$$" -f "$here/recipe.awk" "$plan")
  unlink "$plan"
  if [ -n "$changed" ]; then
    declare -A dirs=()
    while IFS= read -r s; do [ -d "${s%/*}" ] || dirs[${s%/*}]=1; done <<<"$changed"
    [ ${#dirs[@]} = 0 ] || mkdir -p -- "${!dirs[@]}"
    printf '%s\n' "$changed"
  fi
  exit 0
fi

stamp=$1
shift
# the new text: the command (KC_TEXT), then the files' lines (recipe.awk, as --check computes them)
if [ $# = 0 ]; then new=$KC_TEXT$'\n'
else new=$(printf '%s @@ %s @@ %s\n' "$stamp" "$*" "$KC_TEXT" | awk -v table="$hashes" -v tmp="$hashes.$$" -v text_only=1 -f "$here/recipe.awk"; echo .)
     new=${new%.}
fi
old=
[ ! -f "$stamp" ] || IFS= read -r -d '' old <"$stamp" || true
# rewritten in place when it changed (a stamp cut short by a kill only makes its product remade)
[ "$old" = "$new" ] || printf '%s' "$new" >"$stamp"
