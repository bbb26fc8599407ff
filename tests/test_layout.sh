# tests/test_layout.sh — the one-way order of the folders (the table at the top of tests/layout.sh,
# the same as in docs/design.md): every #include "..." of the tree follows it, and the checker does
# fail, naming file:line, on a scratch copy of the sources (a temp folder outside the repository)
# with one include against the order, one of a file that does not exist, or a room it does not know.
source "$(dirname "$0")/lib.sh"
CHECK=$(pwd)/tests/layout.sh

# 1. the tree as it is
if out=$(bash "$CHECK" 2>&1); then ok; else bad "includes against the order:"$'\n'"$out"; fi
echo "$out" | tail -n 1

# 2. the checker fails on a copy with one bad include; CASE FILE INCLUDE RULE-REGEX
S=$(mktemp -d "${TMPDIR:-/tmp}/kc-layout.XXXXXX")
trap 'rm -rf "$S"' EXIT
mkdir -p "$S/pristine"
find pipeline datasets decoders eval stages fuzz tests -type f \( -name '*.c' -o -name '*.h' \) -print0 |
  xargs -0 cp --parents -t "$S/pristine/"
fresh_copy() { rm -rf "$S/tree" && cp -a "$S/pristine" "$S/tree"; }
# must_fail WHAT FILE INCLUDE REGEX: FILE gets INCLUDE after its last #include line; the checker
# must exit 1 and name FILE:that line with a message matching REGEX, and nothing else
must_fail() {
  local what=$1 f=$2 inc=$3 re=$4 at out rc
  fresh_copy
  mkdir -p "$S/tree/$(dirname "$f")"; touch "$S/tree/$f"
  at=$(grep -n '^#include' "$S/tree/$f" | tail -n 1 | cut -d: -f1)
  if [ -n "$at" ]; then sed -i "${at}a #include \"$inc\"" "$S/tree/$f"; else echo "#include \"$inc\"" >>"$S/tree/$f"; fi
  out=$(bash "$CHECK" "$S/tree" 2>&1); rc=$?
  local line; line=$(grep -n "^#include \"$inc\"" "$S/tree/$f" | cut -d: -f1)
  if [ $rc -eq 1 ] && grep -Eq "^$f:$line: .*$re" <<<"$out" && [ "$(grep -c "^[a-z]" <<<"$out")" -eq 2 ]; then
    ok; echo "fails as it should ($what): $(grep "^$f:" <<<"$out")"
  else bad "$what: the checker did not fail naming $f:$line (rc=$rc): $out"; fi
}
must_fail "base -> eval" pipeline/kc.c eval/tables/table.h 'pipeline/base may not include eval'
must_fail "images -> model" pipeline/images/image.c pipeline/model/vit.h 'pipeline/images may not include pipeline/model'
must_fail "weights -> model" pipeline/weights/weights.c pipeline/model/gemm.h 'pipeline/weights may not include pipeline/model'
must_fail "cache -> images" pipeline/cache/cache.c pipeline/images/image.h 'pipeline/cache may not include pipeline/images'
must_fail "datasets -> eval" datasets/voc.c eval/voc/voc_metrics.h 'datasets may not include eval'
must_fail "decoders -> datasets" decoders/grid.c datasets/dataset.h 'decoders may not include datasets'
must_fail "eval -> decoders" eval/tables/table.c decoders/grid.h 'eval may not include decoders'
must_fail "pipeline -> tests" pipeline/json.c tests/test.h 'pipeline/base may not include tests'
must_fail "missing file" decoders/grid.c pipeline/nosuch.h 'no such file'
must_fail "unknown room" pipeline/newroom/x.c pipeline/kc.h 'pipeline/newroom/ is not a room'

# 3. what the table allows passes on the copy: extract -> model, weights, images, cache, base
fresh_copy
mkdir -p "$S/tree/pipeline/extract"
printf '#include "pipeline/model/vit.h"\n#include "pipeline/images/resize.h"\n#include "pipeline/cache/cache.h"\n#include "pipeline/weights/pth.h"\n#include "pipeline/kc.h"\n' \
  >"$S/tree/pipeline/extract/extract.c"
printf '#include "eval/tables/table.h"\n#include "decoders/grid.h"\n' >>"$S/tree/stages/kc-score.c"
if out=$(bash "$CHECK" "$S/tree" 2>&1); then ok; else bad "allowed includes refused: $out"; fi
done_tests
