#!/usr/bin/env bash
# `make saliency` incremental equals clean (docs/design.md "The make pipeline", saliency.mk):
# NETS="color random" of configs/demo-nets.ini on saliency datasets in the releases' layouts built by
# tests/saliency_fixture.sh from the shared data (read in place through links), then the request
# changed step by step, each run's table (saliency.{csv,md,tex}), score folders (summary, per-image
# CSV, the PNGs' names and bytes), results browser (its galleries) and printed table compared with a
# clean run of the same request into an empty OUT, TABLES and REPORT_DIR.  Steps: SETTING another id, a network dropped, ECSSD another root
# with other images, DUTS added, DUT-OMRON dropped, back to the first request; an unchanged request
# and inputs touched without a change of bytes run no stage; an image added to a dataset's folder
# and a ground-truth mask replaced remake what they reach and equal a clean run.  Also the bad
# saliency requests: one line naming what to fix, nothing run.
source "$(dirname "$0")/lib.sh"
T=$(tmpdir saliency_make)
T=$(cd "$T" && pwd)
export KC_QUIET=1 SOURCE_DATE_EPOCH=1780000000
if [ "${KC_SANITIZE:-}" = 1 ]; then M=(make --no-print-directory SANITIZE=1 BUILD="${BUILD%-san}")
else M=(make --no-print-directory BUILD="$BUILD"); fi
B=$BUILD
S=$KC_SHARED_DATA
if [ ! -d "$S/davis_testdev_firstframe" ] || [ ! -d "$S/davis" ] || [ ! -d "$S/voc_labelme" ]; then
  skip "$S (davis, davis_testdev_firstframe, voc_labelme) missing: make saliency not run"
  done_tests; exit
fi
bash tests/saliency_fixture.sh "$S" "$T/data"
# another ECSSD root with other images (the DUT-OMRON frames in ECSSD's layout), and a root the test
# changes (an image added, a mask replaced)
mkdir -p "$T/data/ECSSD2/images" "$T/data/ECSSD2/ground_truth_mask" "$T/data/MUT"
cp -P "$T"/data/DUT-OMRON/DUT-OMRON-image/* "$T/data/ECSSD2/images/"
cp -P "$T"/data/DUT-OMRON/pixelwiseGT-new-PNG/* "$T/data/ECSSD2/ground_truth_mask/"
cp -rP "$T/data/tokencut/." "$T/data/MUT/"
cp configs/demo-nets.ini "$T/nets.ini"; cp configs/published.ini "$T/published.ini"

S_NETS="color random" S_SETTING=best S_ECSSD=ECSSD S_DUTS= S_DUTOMRON=DUT-OMRON
key() { echo "$S_NETS|$S_SETTING|$S_ECSSD|$S_DUTS|$S_DUTOMRON"; }
vars() {   # $1: the folder of OUT, TABLES and the ledger
  echo "NETS=$S_NETS"
  printf '%s\n' NETS_INI="$T/nets.ini" PUBLISHED="$T/published.ini" OUT="$1/out" TABLES="$1/tables" LEDGER="$1/ledger.tsv" REPORT_DIR="$1/report" \
    ECSSD="${S_ECSSD:+$T/data/$S_ECSSD}" DUTS="${S_DUTS:+$T/data/$S_DUTS}" DUTOMRON="${S_DUTOMRON:+$T/data/$S_DUTOMRON}" \
    SETTING="$S_SETTING"
}
run() {   # run DIR LOG [make options...]: make saliency of the request into DIR
  local dir=$1 log=$2; shift 2
  local -a v; mapfile -t v < <(vars "$dir")
  "${M[@]}" "$@" "${v[@]}" saliency >"$log" 2>&1
}
STAGE_RE="^$B/kc-[a-z]+ "
stages() { grep -cE "$STAGE_RE" "$1" || true; }
printed() { grep -E '^\|' "$1" | sed "s|$2|DIR|g"; }
# what a reader uses: the tables, the score folders and the results browser (not the caches and the
# ledger, which record their own paths and times)
products() { (cd "$1" && find tables out/saliency report -type f \( -path 'tables/*' -o -path '*/scores-*' -o -path 'report/*' \) ! -name '.*' 2>/dev/null | sort); }
fail_lines() { grep -vE "$STAGE_RE" "$1" | grep -iE 'error|\*\*\*|saliency|pipeline|net-args' | head -n 3; }

n_steps=0 n_clean=0
declare -A CLEAN=()
compare_with() {   # compare_with NAME CLEAN_DIR LOG CLEAN_LOG
  local name=$1 c=$2 log=$3 clog=$4 diffs=0 f
  local -a files; mapfile -t files < <(products "$c")
  [ -f "$c/tables/saliency.csv" ] || { diffs=$((diffs + 1)); echo "step $name: the clean run wrote no tables/saliency.csv" >&2; }
  for f in "${files[@]}"; do
    [ -f "$T/inc/$f" ] && cmp -s <(sed "s|$c|DIR|g" "$c/$f") <(sed "s|$T/inc|DIR|g" "$T/inc/$f") \
      || { diffs=$((diffs + 1)); echo "step $name: $f differs from the clean run's" >&2; }
  done
  # (OUT keeps the products of earlier requests, as caches to come back to; the tables are the request's only)
  [ "$(cd "$c" && ls tables)" = "$(cd "$T/inc" && ls tables)" ] || { diffs=$((diffs + 1)); echo "step $name: other table files" >&2; }
  [ "$(cd "$c" && find report -type f ! -name '.*' | sort)" = "$(cd "$T/inc" && find report -type f ! -name '.*' | sort)" ] \
    || { diffs=$((diffs + 1)); echo "step $name: the results browser has other files than the clean run's" >&2; }
  [ "$(printed "$log" "$T/inc")" = "$(printed "$clog" "$c")" ] && [ -n "$(printed "$log" "$T/inc")" ] \
    || { diffs=$((diffs + 1)); echo "step $name: printed another table than the clean run" >&2; }
  [ "$diffs" = 0 ] && ok || bad "step $name: $diffs outputs differ from a clean run of the same request"
}
check_step() {   # check_step NAME AGAIN: AGAIN=1 also checks that the same request again runs no stage
  local name=$1 again_too=$2
  n_steps=$((n_steps + 1))
  local k; k=$(key)
  local log=$T/log.$n_steps c=${CLEAN[$k]:-} cpid=
  if [ -z "$c" ]; then
    n_clean=$((n_clean + 1)); c=$T/clean$n_clean; CLEAN[$k]=$c
    run "$c" "$c.log" -j2 & cpid=$!
  fi
  local rc=0; run "$T/inc" "$log" || rc=$?
  if [ -n "$cpid" ]; then
    wait "$cpid" || { bad "step $name: the clean run failed: $(fail_lines "$c.log")"; return; }
  fi
  if [ $rc != 0 ]; then bad "step $name: make saliency failed: $(fail_lines "$log")"; return; fi
  compare_with "$name" "$c" "$log" "$c.log"
  echo "step $n_steps $name: $(stages "$log") stages (clean: $(stages "$c.log")), at ${SECONDS}s"
  if [ "$again_too" = 1 ]; then
    local again=0; run "$T/inc" "$log.again" || again=failed
    [ "$again" = 0 ] && again=$(stages "$log.again")
    [ "$again" = 0 ] && ok || bad "step $name: the same request again ran $again stages: $(grep -E "$STAGE_RE" "$log.again" | head -n 3)"
  fi
}

check_step start 1
S_SETTING=t0.15-bin-mean-seed-n1;  check_step "a:setting" 0
S_NETS=color;                      check_step "b:drop-random" 0
S_ECSSD=ECSSD2;                    check_step "c:ecssd-root" 1
S_DUTS=DUTS-TE;                    check_step "d:add-duts" 0
S_DUTOMRON=;                       check_step "e:drop-dutomron" 0
S_NETS="color random" S_SETTING=best S_ECSSD=ECSSD S_DUTS= S_DUTOMRON=DUT-OMRON
check_step "back-to-start" 1
# every input touched without a change of bytes: nothing runs
touch "$T/nets.ini" "$T/published.ini"
rc=0; run "$T/inc" "$T/log.touched" || rc=$?
[ $rc = 0 ] && [ "$(stages "$T/log.touched")" = 0 ] && ok \
  || bad "inputs touched without a change: rc=$rc, $(stages "$T/log.touched") stages: $(grep -E "$STAGE_RE" "$T/log.touched" | head -n 3)"

# the folder's content changes under the same request: an image added, then a mask replaced
S_NETS=color S_ECSSD=MUT S_DUTS= S_DUTOMRON=
run "$T/inc" "$T/log.mut0" || bad "MUT: make saliency failed: $(fail_lines "$T/log.mut0")"
ln -s "$S/davis/JPEGImages/480p/libby/00045.jpg" "$T/data/MUT/img/libby_00045.jpg"
ln -s "$S/davis/Annotations/480p/libby/00045.png" "$T/data/MUT/gt/libby_00045.png"
run "$T/inc" "$T/log.mut1" || bad "an image added: make saliency failed: $(fail_lines "$T/log.mut1")"
run "$T/cleanmut1" "$T/cleanmut1.log" || bad "an image added: the clean run failed"
compare_with "image-added" "$T/cleanmut1" "$T/log.mut1" "$T/cleanmut1.log"
grep -q 'kc-extract' "$T/log.mut1" && ok || bad "an image added: no kc-extract ran"
rm "$T/data/MUT/gt/libby_00003.png"
ln -s "$S/davis/Annotations/480p/libby/00045.png" "$T/data/MUT/gt/libby_00003.png.new"
mv "$T/data/MUT/gt/libby_00003.png.new" "$T/data/MUT/gt/libby_00003.png"
run "$T/inc" "$T/log.mut2" || bad "a mask replaced: make saliency failed: $(fail_lines "$T/log.mut2")"
run "$T/cleanmut2" "$T/cleanmut2.log" || bad "a mask replaced: the clean run failed"
compare_with "mask-replaced" "$T/cleanmut2" "$T/log.mut2" "$T/cleanmut2.log"
[ "$(grep -cE "$B/kc-(extract|decode) " "$T/log.mut2")" = 0 ] && grep -q 'kc-saliency' "$T/log.mut2" && ok \
  || bad "a mask replaced: expected kc-saliency alone, ran: $(grep -E "$STAGE_RE" "$T/log.mut2" | cut -c1-60 | tr '\n' ' ')"
echo "saliency walk: $n_steps requests, $n_clean clean runs, at ${SECONDS}s"

# ---- bad requests: one line naming what to fix, nothing run -----------------------------------
refused() {   # refused "what" "regex of the one line" VAR=...
  local what=$1 re=$2; shift 2
  local out rc=0
  out=$("${M[@]}" NETS_INI="$T/nets.ini" OUT="$T/bad" TABLES="$T/bad/tables" LEDGER="$T/bad/ledger.tsv" saliency "$@" 2>&1) || rc=$?
  local lines; lines=$(grep -c . <<<"$out")
  if [ $rc -ne 0 ] && [ "$lines" = 1 ] && grep -Eq -- "$re" <<<"$out" && [ ! -e "$T/bad/saliency" ]; then ok
  else bad "$what: rc=$rc, $lines lines: $(head -n 3 <<<"$out")"; fi
}
refused "no dataset" "set ECSSD=, DUTS= and/or DUTOMRON=" NETS=color
refused "a root that is not there" "ECSSD=$T/nope: no such folder" NETS=color ECSSD="$T/nope"
refused "a root without a layout" "DUTS=$T/data: no saliency layout" NETS=color DUTS="$T/data"
mkdir -p "$T/data/two/img" "$T/data/two/images" "$T/data/nogt/DUT-OMRON-image"
refused "a root with two layouts" "ECSSD=$T/data/two: holds two saliency layouts" NETS=color ECSSD="$T/data/two"
refused "a root without its masks" "DUTOMRON=$T/data/nogt: no pixelwiseGT-new-PNG/" NETS=color DUTOMRON="$T/data/nogt"
refused "a setting typo" "nearest of configs/sweep.ini: t0.20-bin-mean-seed-n1" NETS=color ECSSD="$T/data/ECSSD" SETTING=t0.20-bin-mean-sed-n1
refused "a network not in nets.ini" "NETS: $T/nets.ini has no section \[mine\]" NETS="color mine" ECSSD="$T/data/ECSSD"
refused "PUBLISHED missing" "PUBLISHED=$T/nope.ini: no such file" NETS=color ECSSD="$T/data/ECSSD" PUBLISHED="$T/nope.ini"

echo "test_saliency_make: ${SECONDS}s"
[ "$T_FAIL" != 0 ] || rm -rf "$T"
done_tests
