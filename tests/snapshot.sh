#!/usr/bin/env bash
# tests/snapshot.sh OUTDIR — every user-visible output of the pipeline, captured into OUTDIR so that two
# trees (before and after a change that should not change behaviour) can be compared byte for byte
# with tests/snapshot-diff.sh A B.  It uses command lines and make targets only (no source paths), so
# it runs unchanged in a restructured tree.  Run from anywhere; it works in the git tree it sits in.
#
#   OUTDIR/demo/     everything `make demo` writes (DEMO_DIR: generated data, caches .h5, score CSVs,
#                    DAVIS results PNG/CSV/JSON, probe heads, splits, tables, figures, shows/, report/,
#                    ledger.tsv) and demo/demo-tables/ (DEMO_TABLES: demo.{csv,md,tex}, demo-sweep.*, ...)
#   OUTDIR/corloc/   `make corloc` (CENTER=1 and CENTER=0) with NETS="color random" of the demo's nets.ini
#                    on VOC07 = shared voc_official, VOC12 = shared voc_labelme (their Segmentation lists as
#                    ImageSets/Main/trainval.txt) and COCO = the repository's COCO test fixture when found;
#                    plus kc-score --boxes-only [--no-hard] on the committed CorLoc test masks (fixture/)
#   OUTDIR/davis/    `make davis` (kc-extract, kc-propagate, kc-davis) with NETS="color random" on the
#                    shared DAVIS val sequences, and kc-davis on a copy of the official OSVOS results
#   OUTDIR/bench/    the correctness lines (counts, checksums, residuals, eigenvalues, sizes; timings cut)
#                    of the quick benchmarks, small sizes, and their small products (SNAPSHOT_BENCHES)
#   OUTDIR/console/  stdout/stderr of each step, durations and rates replaced by <t> / <rate>; NAME.exit
#                    holds the exit status of a step that failed (the snapshot goes on)
#   OUTDIR/SNAPSHOT.txt   commit, tree, environment (not compared); OUTDIR/_raw/ raw logs (not compared)
#
# Fixed: SOURCE_DATE_EPOCH (default 1767225600), OMP_NUM_THREADS=2, TZ=UTC, LC_ALL=C, no progress lines.
# Scratch: $BUILD/snapshot-work (relative to the tree, so that the paths recorded inside the outputs
# are the same in every tree); the shared data is linked there as shared/.  Environment:
#   BUILD (default build), KC_SHARED_DATA (default ../shared/data beside the tree),
#   SNAPSHOT_BENCHES (default "ncut refine figures merge coco score report probe"; "" for none; also
#   known: davis (45 s or more: kc-davis on 30 generated 2-object videos, kc-propagate on a wide one; the
#   demo's DAVIS already has a 2-object video), vit and attn (timings only, minutes): not in the default
#   list), SNAPSHOT_JOBS (make -j for the build step only, default 2).
# Each bench's cached inputs under $BUILD are removed first, so that they are made by this tree's code.
set -euo pipefail

usage() { echo "usage: tests/snapshot.sh OUTDIR" >&2; exit 2; }
[ $# -eq 1 ] || usage
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(git -C "$here" rev-parse --show-toplevel 2>/dev/null || (cd "$here/.." && pwd))
mkdir -p "$1"
OUT=$(cd "$1" && pwd)
if [ -n "$(ls -A "$OUT")" ] && [ ! -f "$OUT/SNAPSHOT.txt" ]; then
  echo "snapshot: $OUT is not empty and is not a snapshot folder; refusing to overwrite it" >&2; exit 2
fi
case $OUT/ in "$root"/*) echo "snapshot: OUTDIR must be outside the tree ($root)" >&2; exit 2 ;; esac
cd "$root"

export BUILD=${BUILD:-build}
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-1767225600}
export OMP_NUM_THREADS=2 OMP_WAIT_POLICY=PASSIVE TZ=UTC LC_ALL=C
export KC_PROGRESS_SECONDS=1000000000
unset KC_QUIET KC_ISA KC_NCUT_SOLVER KC_VIT_ATTN KC_VIT_LINEAR KC_VIT_THREADING KC_BOX_CACHE MAKEFLAGS MFLAGS || true
SHARED=$(readlink -f "${KC_SHARED_DATA:-$root/../shared/data}")
[ -d "$SHARED/davis" ] && [ -d "$SHARED/voc_official" ] && [ -d "$SHARED/voc_labelme" ] \
  || { echo "snapshot: shared data not found at $SHARED (set KC_SHARED_DATA)" >&2; exit 2; }
export KC_SHARED_DATA=$SHARED
BENCHES=${SNAPSHOT_BENCHES-ncut refine figures merge coco score report probe}
W=$BUILD/snapshot-work
M=(make --no-print-directory -s)

mkdir -p "$BUILD"
exec 9>"$BUILD/snapshot.lock"
flock -n 9 || { echo "snapshot: another snapshot is running in this tree ($BUILD/snapshot.lock)" >&2; exit 1; }

rm -rf "${OUT:?}"/* "$W"
mkdir -p "$OUT/_raw" "$OUT/console" "$W"
ln -s "$SHARED" "$W/shared"
t_start=$SECONDS
step() { printf '%-8s %4ds\n' "$1" $((SECONDS - t_last)) >>"$OUT/_raw/timings.txt"; echo "snapshot: $1 done ($((SECONDS - t_last)) s)" >&2; t_last=$SECONDS; }
t_last=$SECONDS

# durations and rates out of console text: 0.4s, 12.1 s, 3m05s, 1h02m, 3.5 ms, (121.95 images/s)
untime() {
  sed -E 's/[0-9]+(\.[0-9]+)? [A-Za-z]+\/s\b/<rate>/g; s/[0-9]+h[0-9]{2}m\b/<t>/g; s/[0-9]+m[0-9]{2}s\b/<t>/g;
          s/[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)? ?(ms|us|s)\b/<t>/g'
}
# run NAME CMD...: stdout and stderr to _raw/NAME.{out,err}, and without timings to console/; fails loudly
run() {
  local name=$1; shift
  # a step that fails is part of the snapshot (its exit status in console/NAME.exit), not its end:
  # two trees that fail the same way compare equal, and the rest is still captured
  local rc=0
  "$@" >"$OUT/_raw/$name.out" 2>"$OUT/_raw/$name.err" || rc=$?
  if [ $rc != 0 ]; then
    echo "$rc" >"$OUT/console/$name.exit"
    echo "snapshot: step $name failed (exit $rc, recorded): $*" >&2; tail -n 5 "$OUT/_raw/$name.err" >&2
  fi
  untime <"$OUT/_raw/$name.out" >"$OUT/console/$name.stdout.txt"
  untime <"$OUT/_raw/$name.err" >"$OUT/console/$name.stderr.txt"
}
# a make variable's value as this tree's makefiles define it (so that no config path is written here)
makevar() { make --no-print-directory -s --eval='snapshot-print-%: ; @echo $($*)' "snapshot-print-$1"; }

# ---- 0. the build (all programs, as make demo / make bench need them) ------------------------------
make --no-print-directory -j"${SNAPSHOT_JOBS:-2}" all >"$OUT/_raw/build.log" 2>&1 || { tail -n 30 "$OUT/_raw/build.log" >&2; exit 1; }
NETS_INI=$(makevar DEMO_NETS_INI)
step build

# ---- 1. make demo --------------------------------------------------------------------------------
run demo "${M[@]}" demo DEMO_DIR="$W/demo" DEMO_TABLES="$W/demo-tables"
mkdir -p "$OUT/demo"
cp -a "$W/demo/." "$OUT/demo/"
cp -a "$W/demo-tables" "$OUT/demo/demo-tables"
step demo

# ---- 2. CorLoc: make corloc on the shared VOC photos laid out as detection sets ----------------------
C=$W/corloc
voc_as_detection() { # NAME SHARED_SET SEGMENTATION_LIST
  local d=$W/corloc-data/$1
  mkdir -p "$d/ImageSets/Main"
  ln -s "../../shared/$2/Annotations" "$d/Annotations"
  ln -s "../../shared/$2/JPEGImages" "$d/JPEGImages"
  cp "$W/shared/$2/ImageSets/Segmentation/$3" "$d/ImageSets/Main/trainval.txt"
}
voc_as_detection voc07 voc_official train.txt
voc_as_detection voc12 voc_labelme val.txt
# the COCO fixture of the CorLoc test (a COCO layout with annotations/instances_train2014.json and a
# list), and its committed masks, wherever the restructuring put them
fixture=$(git ls-files | grep -E '(^|/)corloc/masks_voc_official\.h5$' | head -n 1 || true)
fixture=${fixture%/masks_voc_official.h5}
coco=()
if [ -n "$fixture" ] && [ -f "$fixture/coco/annotations/instances_train2014.json" ]; then
  coco=(COCO="$fixture/coco" COCO20K_LIST="$fixture/coco/list.txt")
fi
corloc_args=(NETS="color random" NETS_INI="$NETS_INI" OUT="$C" LEDGER="$C/ledger.tsv"
             VOC07="$W/corloc-data/voc07" VOC12="$W/corloc-data/voc12" "${coco[@]}")
# (TABLES inside OUT: the per-network rules, kc-init's included, are defined for goals under OUT)
run corloc "${M[@]}" corloc "${corloc_args[@]}" TABLES="$C/tables"
run corloc-raw "${M[@]}" corloc "${corloc_args[@]}" TABLES="$C/tables-raw" CENTER=0
if [ -n "$fixture" ]; then
  # kc-score --boxes-only on the committed masks, as the CorLoc test scores them
  F=$C/fixture
  mkdir -p "$F"
  for set in voc_official voc_labelme; do
    sp=$W/shared/$set/ImageSets/Segmentation/train.txt; [ -f "$sp" ] || sp=$W/shared/$set/ImageSets/Segmentation/val.txt
    run "corloc-fixture-$set" "$BUILD/kc-score" --boxes-only --masks "$fixture/masks_$set.h5" --voc "$W/shared/$set" \
      --split "$sp" --out "$F/$set" --network ref --ledger "$F/ledger.tsv"
    run "corloc-fixture-$set-nohard" "$BUILD/kc-score" --boxes-only --no-hard --masks "$fixture/masks_$set.h5" \
      --voc "$W/shared/$set" --split "$sp" --out "$F/$set-nohard" --network ref --ledger "$F/ledger.tsv"
  done
  if [ ${#coco[@]} -gt 0 ]; then
    run corloc-fixture-coco "$BUILD/kc-score" --coco "$fixture/coco" --split "$fixture/coco/list.txt" \
      --masks "$fixture/masks_coco.h5" --out "$F/coco" --network ref --ledger "$F/ledger.tsv" --box-cache "$F/box-cache"
  fi
fi
echo "${fixture:-(CorLoc test fixture not found: no COCO column, no fixture scores)}" >"$OUT/console/corloc-fixture-path.txt"
mkdir -p "$OUT/corloc"
cp -a "$C/." "$OUT/corloc/"
step corloc

# ---- 3. DAVIS: make davis on the shared DAVIS val sequences; kc-davis on the official OSVOS results ---
D=$W/davis
run davis "${M[@]}" davis NETS="color random" NETS_INI="$NETS_INI" DAVIS="$W/shared/davis" OUT="$D"
mkdir -p "$D/osvos"
for s in $(cat "$W/shared/davis/ImageSets/2017/val.txt"); do cp -r "$W/shared/davis_results/semi-supervised/osvos/$s" "$D/osvos/"; done
run davis-osvos "$BUILD/kc-davis" --results "$D/osvos" --davis "$W/shared/davis" --split val
mkdir -p "$OUT/davis/osvos"
for x in "$D"/*; do [ "$x" = "$D/osvos" ] || cp -a "$x" "$OUT/davis/"; done
find "$D/osvos" -maxdepth 1 -type f -exec cp -a {} "$OUT/davis/osvos/" \;   # kc-davis's files, not the inputs
step davis

# ---- 4. the correctness lines of the quick benchmarks ----------------------------------------------
B=$OUT/bench
mkdir -p "$B"
bench_script() { # the bench script of that name in this tree (tests/bench_NAME.sh, wherever it went)
  if [ -f "$here/bench_$1.sh" ]; then echo "$here/bench_$1.sh"; else git ls-files | grep -E "(^|/)bench_$1\.sh$" | head -n 1; fi
}
# copy_products NAME PATH...: small products of a bench into bench/NAME/ (a missing one is noted)
copy_products() {
  local name=$1; shift
  mkdir -p "$B/$name"
  for p in "$@"; do
    if [ -e "$p" ]; then cp -a "$p" "$B/$name/"; else echo "missing: $p" >>"$B/$name.txt"; fi
  done
}
# sha256s NAME DIR: one line per file of DIR (relative name, sha256) into bench/NAME.sha256; a ledger
# (wall-clock times) is copied as bench/NAME.ledger.tsv instead, for snapshot-diff to normalise
sha256s() {
  if [ -d "$2" ]; then (cd "$2" && find . -type f ! -name ledger.tsv | LC_ALL=C sort | xargs -r -d '\n' sha256sum) >"$B/$1.sha256"
  else echo "missing: $2" >"$B/$1.sha256"; fi
  if [ -f "$2/ledger.tsv" ]; then cp -a "$2/ledger.tsv" "$B/$1.ledger.tsv"; fi
}
for b in $BENCHES; do
  s=$(bench_script "$b")
  [ -n "$s" ] || { echo "snapshot: no bench_$b.sh in this tree" >&2; exit 1; }
  env=()
  case $b in
    score)  env=(BENCH_SCORE_IMAGES=100); rm -rf "$BUILD/bench-data/score" ;;
    merge)  env=(BENCH_SHARDS=8 BENCH_PER=200) ;;
    coco)   env=(BENCH_COCO_MB=20 BENCH_COCO_PYTHON=0); rm -rf "$BUILD/bench-coco" ;;
    report) env=(KC_BENCH_REPORT_IMAGES=100) ;;
    probe)  env=(BENCH_PROBE_IMAGES=200); rm -rf "$BUILD/bench-probe-200" ;;
    vit)    env=(BENCH_IMAGES=1 BENCH_EXTRACT_IMAGES=8 BENCH_ORT_IMAGES=1); rm -rf "$BUILD/bench-data/attn" "$BUILD/bench-data/extract" ;;
    attn)   env=(BENCH_ATTN_IMAGES=2 BENCH_ATTN_ROUNDS=1); rm -rf "$BUILD/bench-data/attn" ;;
  esac
  log=$OUT/_raw/bench_$b.log
  env "${env[@]}" bash "$s" >"$log" 2>&1 || { echo "snapshot: bench_$b failed" >&2; tail -n 20 "$log" >&2; exit 1; }
  f=$B/$b.txt
  case $b in
    ncut)    # eigen solves (products, residual, lambda2 against LAPACK, max|dx|), the grid's solve counts
      sed -nE '/^scipy eigh/ { s/: [0-9.]+ ms  \(lambda2 ([^,]+),.*/: lambda2 \1/; p }
               /^eigen / { s/krylov [0-9.]+ ms \(/krylov (/; s/graph lists [0-9.]+ ms, //; s/dense LAPACKE [0-9.]+ ms  //; p }
               /^grid / { s/: [0-9.]+ s per image \(/: (/; p }
               /:$/ p' "$log" >"$f" ;;
    refine)  sed -nE '/^kc-refine/ { s/: [0-9.]+ ms best of [0-9]+$//; p }' "$log" >"$f" ;;
    figures) sed -nE '/^all figures:/ { s/: [0-9.]+ s for/:/; s/ +\(target.*//; p }' "$log" >"$f"
             sha256s figures "$BUILD/bench-data/figures/figs" ;;
    merge)   sed -nE '/^made / { s/ in [0-9.]+ s$//; p }
                      /^BENCH merge/ { s/.*; merged (.*)/merged size \1/; p }
                      /^(RESULT|FAIL)/ p' "$log" >"$f" ;;
    coco)    sed -nE '/^file:/ p
                      /^BENCH coco reader/ { s/(dropped),.*/\1/; p }
                      /^(RESULT|FAIL)/ p' "$log" >"$f" ;;
    score)   { sed -nE '/^generated / { s/ in [0-9.]+ s$//; p }
                        /checksum/ { s/.*(\[checksum [^]]*\]).*/in-memory scoring \1/; p }
                        /^  kc-score:/ p' "$log" | untime; } >"$f"
             copy_products score "$BUILD/bench-data/score/out" ;;
    davis)   grep -E '^kc-davis:' "$log" | untime >"$f"
             copy_products davis "$BUILD/bench-tmp/davis/res/global_results-val.csv" \
               "$BUILD/bench-tmp/davis/res/per-sequence_results-val.csv" "$BUILD/bench-tmp/davis/res/global_results-val.json"
             sha256s davis-propagate "$BUILD/bench-tmp/davis/wide-out" ;;
    report)  sed -nE '/from nothing/ { s/.*\(([0-9]+ files)[,)].*/kc-report from nothing: (\1)/; p }
                      /^size on disk/ p
                      /^one real VOC photo/ p' "$log" >"$f"
             sha256s report "$BUILD/bench-data/report/report"
             sha256s report-real "$BUILD/bench-data/report/real" ;;
    probe)   { grep -E '^wrote |^synthetic data|^  kc-probe:' "$log" | sed -E 's/^synthetic data: [0-9.]+ s, /synthetic data: /' | untime; } >"$f"
             copy_products probe "$BUILD/bench-probe-200/head-1.loss.csv" "$BUILD/bench-probe-200/head-25.loss.csv" \
               "$BUILD/bench-probe-200/head-25.safetensors" ;;
    vit)     grep -E '^(input|products|keycut forward GFLOP|KC_ISA)' "$log" | sed -E 's/, rate .*//; s/ keycut forward:.*//' >"$f" ;;
    attn)    grep -E '^wrote ' "$log" >"$f" || : >"$f" ;;
    *)       echo "snapshot: no correctness filter for bench_$b" >&2; exit 1 ;;
  esac
  step "bench_$b"
done

# ---- 5. the stages' own words: --help, usage and option errors -----------------------------------------
# Every stage program with --help, -h, no arguments, an unknown option, and each option its help names,
# alone (a value missing, or the other required options missing); kc-probe also per command.  Run in
# an empty scratch folder with a 20 s limit each: stdout, stderr and the exit status, one file per
# program (console/words/PROG.txt).  (Added before issue 30's restructuring, which must leave them
# word for word.)
V=$OUT/console/words
mkdir -p "$V" "$W/words"
WA=$(cd "$W" && pwd)
words() { # PROG ARGS...: one record into $V/PROG.txt
  local prog=$1; shift
  local rc=0
  # by name through PATH: argv[0] (which getopt's messages print) is then the same in every tree
  (cd "$WA/words" && PATH="$root/$BUILD:$PATH" timeout 20 "$prog" "$@" >"$WA/words.out" 2>"$WA/words.err") || rc=$?
  { printf '==== %s %s (exit %s)\n' "$prog" "$*" "$rc"; echo '-- stdout'; untime <"$WA/words.out"
    echo '-- stderr'; untime <"$WA/words.err"; } >>"$V/$prog.txt"
}
for x in "$BUILD"/kc-*; do
  [ -f "$x" ] && [ -x "$x" ] || continue
  p=${x##*/}
  pre=()
  [ "$p" = kc-probe ] && pre=(train eval)
  words "$p" --help
  words "$p" -h
  words "$p"
  words "$p" --no-such-option
  for c in "${pre[@]:-}"; do
    [ -n "$c" ] && { words "$p" "$c" --help; words "$p" "$c"; words "$p" "$c" --no-such-option; }
    opts=$( (timeout 20 "$x" ${c:+"$c"} --help 2>&1 || true) | grep -oE -- '--[a-z][a-z0-9-]*' | LC_ALL=C sort -u)
    for o in $opts; do
      [ "$o" = --help ] && continue
      words "$p" ${c:+"$c"} "$o"
    done
  done
done
step words

# ---- the record (not compared by snapshot-diff.sh) --------------------------------------------------
{
  echo "keycut snapshot"
  echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)"
  echo "dirty: $(git status --porcelain --untracked-files=no 2>/dev/null | wc -l) modified tracked files"
  echo "tree: $root"
  echo "build: $BUILD"
  echo "shared: $SHARED"
  echo "SOURCE_DATE_EPOCH: $SOURCE_DATE_EPOCH"
  echo "OMP_NUM_THREADS: $OMP_NUM_THREADS"
  echo "benches: $BENCHES"
  # repository paths that outputs record (commands in HDF5 provenance, table notes): snapshot-diff
  # replaces each with <NAME>, so that moving such a file is not reported as a difference
  for v in GRID NETS_INI DEMO_NETS_INI PUBLISHED CORLOC_PUBLISHED; do echo "path $v: $(makevar $v)"; done
  [ -z "$fixture" ] || echo "path CORLOC_FIXTURE: $fixture"
  echo "host: $(uname -srm); cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
  echo "taken: $(date -u +%Y-%m-%dT%H:%M:%SZ) in $((SECONDS - t_start)) s"
} >"$OUT/SNAPSHOT.txt"
(cd "$OUT" && find . -path ./_raw -prune -o -type f ! -name SNAPSHOT.txt ! -name FILES.sha256 -print | LC_ALL=C sort |
   xargs -r -d '\n' sha256sum) >"$OUT/FILES.sha256"
rm -rf "$W"
echo "snapshot: $OUT ($(wc -l <"$OUT/FILES.sha256") files, $((SECONDS - t_start)) s)" >&2
