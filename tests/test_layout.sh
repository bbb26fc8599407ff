# tests/test_layout.sh — the one-way order of the folders (the table at the top of tests/layout.sh,
# the same as in docs/design.md): every #include "..." of the tree follows it, and the checker does
# fail, naming file:line, on a scratch copy of the sources (a temp folder outside the repository)
# with one include against the order, one of a file that does not exist, a room it does not know,
# a file directly in eval/ (rooms only), or two modules that include each other (a circle).
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
must_fail "base -> eval" pipeline/kc.c eval/report/report_assets.h 'pipeline/base may not include eval/report'
must_fail "images -> model" pipeline/images/image.c pipeline/model/vit.h 'pipeline/images may not include pipeline/model'
must_fail "weights -> model" pipeline/weights/weights.c pipeline/model/gemm.h 'pipeline/weights may not include pipeline/model'
must_fail "cache -> images" pipeline/cache/cache.c pipeline/images/image.h 'pipeline/cache may not include pipeline/images'
must_fail "datasets -> eval" datasets/voc.c eval/voc/voc_metrics.h 'datasets may not include eval'
must_fail "decoders -> datasets" decoders/grid.c datasets/dataset.h 'decoders may not include datasets'
must_fail "eval -> decoders" eval/tables/table.c decoders/grid.h 'eval/tables may not include decoders'
must_fail "protocol -> output" eval/voc/score.c eval/report/html.h 'eval/voc may not include eval/report'
must_fail "davis -> figures" eval/davis/propagate_run.c eval/figures/plot.h 'eval/davis may not include eval/figures'
must_fail "tables -> report" eval/tables/thesis_tables.c eval/report/csv.h 'eval/tables may not include eval/report'
must_fail "refinement -> eval" decoders/refine/refine.c eval/voc/voc_metrics.h 'decoders/refine may not include eval/voc'
must_fail "decoders -> refinement" decoders/grid.c decoders/refine/crf.h 'decoders may not include decoders/refine'
must_fail "a file directly in eval/" eval/loose.c pipeline/kc.h 'eval/ holds rooms only'
must_fail "pipeline -> tests" pipeline/json.c tests/test.h 'pipeline/base may not include tests'
must_fail "missing file" decoders/grid.c pipeline/nosuch.h 'no such file'
must_fail "unknown room" pipeline/newroom/x.c pipeline/kc.h 'pipeline/newroom/ is not a room'

# 2b. a circle between two modules of one room, which the order alone allows: ledger.h includes
# score_io.h while score_io.c includes ledger.h.  The checker names the circle (at the include that
# closes it) and nothing else.
fresh_copy
echo '#include "eval/voc/score_io.h"' >>"$S/tree/eval/voc/ledger.h"
out=$(bash "$CHECK" "$S/tree" 2>&1); rc=$?
if [ $rc -eq 1 ] && grep -Eq '^eval/voc/(ledger|score_io)\.[ch]:[0-9]+: include circle: eval/voc/(ledger|score_io) -> eval/voc/(ledger|score_io) -> eval/voc/(ledger|score_io)$' <<<"$out" \
   && [ "$(grep -c "^[a-z]" <<<"$out")" -eq 2 ]; then ok; echo "fails as it should (circle): $(head -n 1 <<<"$out")"
else bad "circle ledger <-> score_io: the checker did not name it (rc=$rc): $out"; fi
# a longer circle across three modules of a room: overlay.h includes sweep_figures.h, which
# includes figures.h, which now includes overlay.h
fresh_copy
sed -i '0,/^#include/s//#include "eval\/figures\/sweep_figures.h"\n#include/' "$S/tree/eval/figures/overlay.h"
sed -i '0,/^#include/s//#include "eval\/figures\/overlay.h"\n#include/' "$S/tree/eval/figures/figures.h"
out=$(bash "$CHECK" "$S/tree" 2>&1); rc=$?
if [ $rc -eq 1 ] && grep -Eq 'include circle: (eval/figures/(overlay|sweep_figures|figures) -> ){3}eval/figures/(overlay|sweep_figures|figures)$' <<<"$out" \
   && [ "$(grep -c "^[a-z]" <<<"$out")" -eq 2 ]; then
  ok; echo "fails as it should (three-module circle): $(head -n 1 <<<"$out")"
else bad "three-module circle: the checker did not name it (rc=$rc): $out"; fi

# 3. what the table allows passes on the copy: extract -> model, weights, images, cache, base
fresh_copy
mkdir -p "$S/tree/pipeline/extract"
printf '#include "pipeline/model/vit.h"\n#include "pipeline/images/resize.h"\n#include "pipeline/cache/cache.h"\n#include "pipeline/weights/pth.h"\n#include "pipeline/kc.h"\n' \
  >"$S/tree/pipeline/extract/extract.c"
printf '#include "eval/tables/table.h"\n#include "decoders/grid.h"\n#include "decoders/refine/refine.h"\n' >>"$S/tree/stages/kc-score.c"
printf '#include "eval/voc/ledger.h"\n#include "eval/davis/davis_results.h"\n' >>"$S/tree/eval/report/csv.c"
if out=$(bash "$CHECK" "$S/tree" 2>&1); then ok; else bad "allowed includes refused: $out"; fi
done_tests
