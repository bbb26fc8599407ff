#!/usr/bin/env bash
# `make corloc` incremental equals clean (issue 28's promise for corloc.mk, docs/design.md "The make
# pipeline"): NETS="color random" of configs/demo-nets.ini on small detection sets (the shared VOC
# photos laid out as VOC07 / VOC12 detection roots in this test's folder, read in place through
# links, and the committed COCO fixture tests/data/corloc/coco), then the request changed step by
# step, each run's tables (corloc.{csv,md,tex}), score summaries and printed table compared with a
# clean run of the same request into an empty OUT and TABLES.  Steps: SETTING another id, CENTER=0,
# a network dropped, VOC07 another root with other images, a dataset dropped, back to the first
# request; the first request made again and the inputs touched without a change of bytes run no
# stage.  Also the bad corloc requests: one line naming what to fix, nothing run.
source "$(dirname "$0")/lib.sh"
T=$(tmpdir corloc_make)
T=$(cd "$T" && pwd)
export KC_QUIET=1
if [ "${KC_SANITIZE:-}" = 1 ]; then M=(make --no-print-directory SANITIZE=1 BUILD="${BUILD%-san}")
else M=(make --no-print-directory BUILD="$BUILD"); fi
B=$BUILD
S=$KC_SHARED_DATA
if [ ! -d "$S/voc_official" ] || [ ! -d "$S/voc_labelme" ]; then
  skip "$S/voc_official or voc_labelme missing: make corloc not run"
  done_tests; exit
fi

# ---- data: detection roots (Annotations and JPEGImages linked, Main/trainval from a Segmentation list)
as_detection() {   # NAME SHARED_SET SEGMENTATION_LIST
  local d=$T/data/$1
  mkdir -p "$d/ImageSets/Main"
  ln -s "$S/$2/Annotations" "$d/Annotations"
  ln -s "$S/$2/JPEGImages" "$d/JPEGImages"
  cp "$S/$2/ImageSets/Segmentation/$3" "$d/ImageSets/Main/trainval.txt"
}
as_detection voc07 voc_official train.txt
as_detection voc07b voc_labelme val.txt     # another VOC07 root, other images
as_detection voc12 voc_labelme val.txt
C=tests/data/corloc/coco
# the networks and the published rows: copies, so that the test can touch them
cp configs/demo-nets.ini "$T/nets.ini"; cp configs/published-corloc.ini "$T/published.ini"

# ---- the request: state variables, and the make variables they give ---------------------------
S_NETS="color random" S_SETTING=best S_CENTER=1 S_VOC07=voc07 S_VOC12=voc12
key() { echo "$S_NETS|$S_SETTING|$S_CENTER|$S_VOC07|$S_VOC12"; }
vars() {   # $1: the folder of OUT, TABLES and the ledger
  echo "NETS=$S_NETS"
  printf '%s\n' NETS_INI="$T/nets.ini" CORLOC_PUBLISHED="$T/published.ini" OUT="$1/out" TABLES="$1/tables" LEDGER="$1/ledger.tsv" \
    VOC07="$T/data/$S_VOC07" VOC12="${S_VOC12:+$T/data/$S_VOC12}" COCO="$C" COCO20K_LIST="$C/list.txt" \
    SETTING="$S_SETTING" CENTER="$S_CENTER"
}
run() {   # run DIR LOG [make options...]: make corloc of the request into DIR
  local dir=$1 log=$2; shift 2
  local -a v; mapfile -t v < <(vars "$dir")
  "${M[@]}" "$@" "${v[@]}" corloc >"$log" 2>&1
}
# the stage commands a run printed (make echoes each: kc-* programs and the table script)
STAGE_RE="^($B/kc-[a-z]+|configs/corloc-table\.sh) "
stages() { grep -cE "$STAGE_RE" "$1" || true; }
printed() { grep -E '^\|' "$1" | sed "s|$2|DIR|g"; }
# the products a reader uses: the tables and the score folders (not the caches and the ledger,
# which record their own paths and times); the clean run's, each compared in the incremental folder
products() { (cd "$1" && find tables out/corloc -type f \( -path 'tables/*' -o -path '*/scores-*' \) ! -name '.*' 2>/dev/null | sort); }
fail_lines() { grep -vE "$STAGE_RE" "$1" | grep -iE 'error|\*\*\*|corloc|pipeline|net-args' | head -n 3; }

n_steps=0 n_clean=0
declare -A CLEAN=()
check_step() {   # check_step NAME AGAIN: AGAIN=1 also checks that the same request again runs no stage
  local name=$1 again_too=$2
  n_steps=$((n_steps + 1))
  local k; k=$(key)
  local log=$T/log.$n_steps c=${CLEAN[$k]:-} cpid=
  if [ -z "$c" ]; then   # the clean run of the request (one per distinct request), beside the incremental one
    n_clean=$((n_clean + 1)); c=$T/clean$n_clean; CLEAN[$k]=$c
    run "$c" "$c.log" -j2 & cpid=$!
  fi
  local rc=0; run "$T/inc" "$log" || rc=$?
  if [ -n "$cpid" ]; then
    wait "$cpid" || { bad "step $name: the clean run failed: $(fail_lines "$c.log")"; return; }
  fi
  if [ $rc != 0 ]; then bad "step $name: make corloc failed: $(fail_lines "$log")"; return; fi
  local diffs=0 f
  local -a files; mapfile -t files < <(products "$c")
  [ -f "$c/tables/corloc.csv" ] || { diffs=$((diffs + 1)); echo "step $name: the clean run wrote no tables/corloc.csv" >&2; }
  for f in "${files[@]}"; do
    [ -f "$T/inc/$f" ] && cmp -s <(sed "s|$c|DIR|g" "$c/$f") <(sed "s|$T/inc|DIR|g" "$T/inc/$f") \
      || { diffs=$((diffs + 1)); echo "step $name: $f differs from the clean run's" >&2; }
  done
  [ "$(cd "$c" && ls tables)" = "$(cd "$T/inc" && ls tables)" ] || { diffs=$((diffs + 1)); echo "step $name: other table files" >&2; }
  [ "$(printed "$log" "$T/inc")" = "$(printed "$c.log" "$c")" ] && [ -n "$(printed "$log" "$T/inc")" ] \
    || { diffs=$((diffs + 1)); echo "step $name: printed another table than the clean run" >&2; }
  [ "$diffs" = 0 ] && ok || bad "step $name: $diffs outputs differ from a clean run of the same request"
  echo "step $n_steps $name: $(stages "$log") stages (clean: $(stages "$c.log")), at ${SECONDS}s"
  if [ "$again_too" = 1 ]; then
    local again=0; run "$T/inc" "$log.again" || again=failed
    [ "$again" = 0 ] && again=$(stages "$log.again")
    [ "$again" = 0 ] && ok || bad "step $name: the same request again ran $again stages: $(grep -E "$STAGE_RE" "$log.again" | head -n 3)"
  fi
}

# ---- the steps: each changes the request ------------------------------------------------------
check_step start 1                                       # (e) the same request again runs nothing
S_SETTING=t0.30-bin-mean-seed-n1;  check_step "a:setting" 0
S_CENTER=0;                        check_step "b:center0" 0
S_NETS=color;                      check_step "c:drop-random" 0
S_VOC07=voc07b;                    check_step "d:voc07-root" 1
S_VOC12=;                          check_step "voc12-dropped" 0
S_NETS="color random" S_SETTING=best S_CENTER=1 S_VOC07=voc07 S_VOC12=voc12
check_step "back-to-start" 1
# every input touched without a change of bytes: nothing runs
touch "$T"/data/*/ImageSets/Main/trainval.txt "$T/nets.ini" "$T/published.ini"
rc=0; run "$T/inc" "$T/log.touched" || rc=$?
[ $rc = 0 ] && [ "$(stages "$T/log.touched")" = 0 ] && ok \
  || bad "inputs touched without a change: rc=$rc, $(stages "$T/log.touched") stages: $(grep -E "$STAGE_RE" "$T/log.touched" | head -n 3)"
echo "corloc walk: $n_steps requests, $n_clean clean runs, at ${SECONDS}s"

# ---- bad requests: one line naming what to fix, nothing run -----------------------------------
refused() {   # refused "what" "regex of the one line" VAR=...
  local what=$1 re=$2; shift 2
  local out rc=0
  out=$("${M[@]}" NETS_INI="$T/nets.ini" OUT="$T/bad" TABLES="$T/bad/tables" LEDGER="$T/bad/ledger.tsv" corloc "$@" 2>&1) || rc=$?
  local lines; lines=$(grep -c . <<<"$out")
  if [ $rc -ne 0 ] && [ "$lines" = 1 ] && grep -Eq -- "$re" <<<"$out" && [ ! -e "$T/bad/corloc" ]; then ok
  else bad "$what: rc=$rc, $lines lines: $(head -n 3 <<<"$out")"; fi
}
refused "no dataset" "set VOC07=, VOC12= and/or COCO= with COCO20K_LIST=" NETS=color
refused "a VOC07 root that is not there" "VOC07=$T/nope: no such folder" NETS=color VOC07="$T/nope"
refused "a VOC07 root without Main/trainval.txt" "VOC07=$T/data: no list $T/data/ImageSets/Main/trainval.txt" NETS=color VOC07="$T/data"
refused "COCO without its list" "COCO20K_LIST" NETS=color COCO="$C"
refused "a COCO list that is not there" "COCO20K_LIST=$T/nope.txt: no such file" NETS=color COCO="$C" COCO20K_LIST="$T/nope.txt"
refused "a COCO root without annotations" "COCO=$T/data: no .*annotations/instances_train2014.json" NETS=color COCO="$T/data" COCO20K_LIST="$C/list.txt"
refused "a setting typo" "nearest of configs/sweep.ini: t0.20-bin-mean-seed-n1" NETS=color VOC07="$T/data/voc07" SETTING=t0.20-bin-mean-sed-n1
refused "a network not in nets.ini" "NETS: $T/nets.ini has no section \[mine\]" NETS="color mine" VOC07="$T/data/voc07"
refused "CORLOC_PUBLISHED missing" "CORLOC_PUBLISHED=$T/nope.ini: no such file" NETS=color VOC07="$T/data/voc07" CORLOC_PUBLISHED="$T/nope.ini"

echo "test_corloc_make: ${SECONDS}s"
[ "$T_FAIL" != 0 ] || rm -rf "$T"
done_tests
