#!/usr/bin/env bash
# Incremental equals clean (issue 28, docs/design.md "The make pipeline"): a walk of request
# changes through `make sweep report davis probe figures report-html` on generated data, each
# step's outputs (tables, figures' data, score and result files, the results browser, and the
# tables and numbers the run prints) compared with a clean run of the same request in empty
# folders; then the same walk again under SHARDS=2 (compared with the same clean runs).
# Steps: networks of each kind (`model =` color, `weights =` a checkpoint file, `init =` random)
# added, dropped and reordered; SETTING best / explicit / another / back; VOC and DAVIS roots
# whose ground truth differs; the checkpoint replaced by other weights with an older mtime; a
# nets.ini section edited; the grid edited in place; VAL_SPLIT; REFINE; PROBE_SIZE; and a last
# step that touches every input without changing a byte, which must run no stage.  After every
# step the same request is made again and must start no stage.  The walk's order is fixed by
# KC_WALK_SEED (default 28): the steps after the first are drawn in that order.
source "$(dirname "$0")/lib.sh"
T=$(tmpdir walk)
T=$(cd "$T" && pwd)
export KC_QUIET=1 SOURCE_DATE_EPOCH=1780000000
if [ "${KC_SANITIZE:-}" = 1 ]; then M=(make --no-print-directory SANITIZE=1 BUILD="${BUILD%-san}")
else M=(make --no-print-directory BUILD="$BUILD"); fi
B=$BUILD

# ---- data: two VOC roots and two DAVIS roots whose scenes and ground truth differ ------------
for s in 1 2; do
  "$B/kc-demo-data" --out "$T/data$s" --seed "$s" --train 4 --val 3 --videos 1 --frames 3 >/dev/null 2>&1 || bad "kc-demo-data seed $s"
  head -n 2 "$T/data$s/voc/ImageSets/Segmentation/val.txt" > "$T/data$s/voc/ImageSets/Segmentation/val2.txt"
done
cmp -s "$T/data1/voc/ImageSets/Segmentation/val.txt" "$T/data2/voc/ImageSets/Segmentation/val.txt" && \
  cmp -s "$T/data1/voc/SegmentationObject/$(head -n 1 "$T/data1/voc/ImageSets/Segmentation/val.txt").png" \
         "$T/data2/voc/SegmentationObject/$(head -n 1 "$T/data2/voc/ImageSets/Segmentation/val.txt").png" && bad "the two VOC roots are the same"
# the checkpoint of the `weights =` network: two different toy ViTs, the second copied over the first
"$B/kc-init" --arch toy/16 --seed 5 --out "$T/ckpt-a.safetensors" >/dev/null 2>&1 || bad "kc-init a"
"$B/kc-init" --arch toy/16 --seed 6 --out "$T/ckpt-b.safetensors" >/dev/null 2>&1 || bad "kc-init b"
cp "$T/ckpt-a.safetensors" "$T/ckpt.safetensors"
write_ini() {   # $1: a or b (b: the [ckpt] section edited)
  cat > "$T/nets.ini" <<EOF
[color]
model = color
kind = baseline

[random]
init = --arch toy/16 --seed 0
kind = baseline

[ckpt]
weights = $T/ckpt.safetensors
$( [ "$1" = b ] && echo "options = --drop-cls" )
EOF
}
write_grid() {   # $1: a or b (b: a third tau)
  { echo "[grid]"; [ "$1" = a ] && echo "tau = 0.10, 0.20" || echo "tau = 0.10, 0.20, 0.25"
    echo "edges = bin"; echo "split = mean"; echo "foreground = seed, corners"; echo "masks = 1"; } > "$T/grid.ini"
}
write_ini a; write_grid a

# ---- the request: state variables, and the make variables they give --------------------------
S_NETS="color" S_SETTING=best S_VOC=1 S_DAVIS=1 S_VAL=val S_REFINE=none S_PROBE=224 S_CKPT=a S_INI=a S_GRID=a
key() { echo "$S_NETS|$S_SETTING|$S_VOC|$S_DAVIS|$S_VAL|$S_REFINE|$S_PROBE|$S_CKPT|$S_INI|$S_GRID"; }
vars() {   # $1: the folder of OUT, TABLES, FIGURES, REPORT_DIR, SPLITS and the ledger
  echo "NETS=$S_NETS"
  printf '%s\n' NETS_INI="$T/nets.ini" VOC="$T/data$S_VOC/voc" DAVIS="$T/data$S_DAVIS/davis" GRID="$T/grid.ini" \
    SETTING="$S_SETTING" VAL_SPLIT="$S_VAL" REFINE="$S_REFINE" PROBE_SIZE="$S_PROBE" PROBE=1 PROBE_TRAIN=train "PROBE_OPTS=--batch 4 --epochs 2 --drop-at 1" \
    SELECT_COUNT=4 OUT="$1/work" TABLES="$1/tables" FIGURES="$1/figures" REPORT_DIR="$1/report" SPLITS="$1/splits" LEDGER="$1/ledger.tsv"
}
GOALS=(sweep report davis probe figures report-html)
run() {   # run DIR LOG [make options...]: the request's goals into DIR
  local dir=$1 log=$2; shift 2
  local -a v; mapfile -t v < <(vars "$dir")
  "${M[@]}" "$@" "${v[@]}" "${GOALS[@]}" >"$log" 2>&1
}
stages() { grep -cE "^$B/kc-[a-z]+ " "$1" || true; }
# what the run printed that a reader takes away: the tables and the per-network result lines
printed() { grep -E "^\\||^[a-z0-9-]+: ($PRINTED[0-9])" "$1" | sed "s|$2|DIR|g"; }
PRINTED="probe mIoU |"
# the products a reader uses, as files below DIR: tables, the figures' data, scores, results, the
# results browser (but the ledger and the caches, which record their own paths and times)
products() { (cd "$1" && find $WRITTEN work/scores work/results -type f \
               ! -name '*.pdf' ! -name '*.png' ! -name '.*' 2>/dev/null | sort); }
# bundle DIR FILE...: a digest of the files' bytes, DIR's own path read as DIR
bundle() { local d=$1; shift; (cd "$d" && for f in "$@"; do echo "== $f"; cat -- "$f" 2>/dev/null || echo "(missing)"; done) | sed "s|$d|DIR|g" | sha256sum; }
# the folders a request writes whole (OUT keeps the products of other requests: a cache)
written() { (cd "$1" && find $WRITTEN -type f ! -name '.*' 2>/dev/null | sort); }
WRITTEN="tables figures report"

n_clean=0 n_stage_clean=0 n_stage_inc=0 n_steps=0 fails_before=$T_FAIL
declare -A CLEAN=()
check_step() {   # check_step NAME AGAIN INC_DIR SHARDS_OPTS...: AGAIN=1 also checks that a rerun starts no stage
  local name=$1 again_too=$2 inc=$3; shift 3
  n_steps=$((n_steps + 1))
  local k; k=$(key)
  local log=$T/log.$n_steps c=${CLEAN[$k]:-} cpid=
  # the clean run of the request (one per request, shared by both walks), beside the incremental one
  if [ -z "$c" ]; then
    n_clean=$((n_clean + 1)); c=$T/clean$n_clean; CLEAN[$k]=$c
    run "$c" "$c.log" -j2 KC_PLAN=0 & cpid=$!
  fi
  local rc=0; run "$inc" "$log" "$@" || rc=$?
  if [ -n "$cpid" ]; then
    wait "$cpid" || { bad "step $name: the clean run failed: $(grep -E 'error|\*\*\*' "$c.log" | head -n 3)"; return; }
    n_stage_clean=$((n_stage_clean + $(stages "$c.log")))
  fi
  if [ $rc != 0 ]; then bad "step $name ($*): make failed: $(grep -E 'error|\*\*\*' "$log" | head -n 3)"; return; fi
  n_stage_inc=$((n_stage_inc + $(stages "$log")))
  local diffs=0 f
  [ "$(written "$c")" = "$(written "$inc")" ] || { diffs=$((diffs + 1)); echo "step $name: other files: $(diff <(written "$c") <(written "$inc") | grep '^[<>]' | head -n 4 | tr '\n' ' ')" >&2; }
  # the clean run's product files, each also in the incremental folder with the same bytes (paths
  # of the folder itself read as DIR); one pass over all, file by file only to name a difference
  local -a files; mapfile -t files < <(products "$c")
  if [ "$(bundle "$c" "${files[@]}")" != "$(bundle "$inc" "${files[@]}")" ]; then
    for f in "${files[@]}"; do
      [ -f "$inc/$f" ] && cmp -s <(sed "s|$c|DIR|g" "$c/$f") <(sed "s|$inc|DIR|g" "$inc/$f") || { diffs=$((diffs + 1)); echo "step $name: $f differs from the clean run's" >&2; }
    done
  fi
  [ "$(printed "$log" "$inc")" = "$(printed "$c.log" "$c")" ] || { diffs=$((diffs + 1)); echo "step $name: printed other tables: $(diff <(printed "$c.log" "$c") <(printed "$log" "$inc") | head -n 4 | tr '\n' ' ')" >&2; }
  [ "$diffs" = 0 ] && ok || bad "step $name ($*): $diffs outputs differ from a clean run of the same request"
  echo "step $n_steps $name $*: $(stages "$log") stages (clean: $(stages "$c.log")), done at ${SECONDS}s"
  # the same request again: no stage starts
  if [ "$again_too" = 1 ]; then
    local again; again=$(run "$inc" "$log.again" "$@" && stages "$log.again")
    [ "$again" = 0 ] && ok || bad "step $name: a rerun of the same request started $again stages: $(grep -E "^$B/kc-" "$log.again" | head -n 3)"
  fi
}

# ---- the steps: each changes the request ------------------------------------------------------
step_add_init()     { S_NETS="$S_NETS random"; S_NETS=$(tr ' ' '\n' <<<"$S_NETS" | awk '!s[$0]++' | paste -sd' '); }
step_add_weights()  { S_NETS="$S_NETS ckpt"; S_NETS=$(tr ' ' '\n' <<<"$S_NETS" | awk '!s[$0]++' | paste -sd' '); }
step_drop()         { local n; n=$(wc -w <<<"$S_NETS"); [ "$n" -gt 1 ] && S_NETS=$(cut -d' ' -f2- <<<"$S_NETS") || S_NETS="color ckpt"; }
step_reorder()      { S_NETS=$(tr ' ' '\n' <<<"$S_NETS" | tac | paste -sd' '); }
n_setting=0   # best, explicit, back to best, another explicit, ...
step_setting()      { n_setting=$((n_setting + 1)); case $((n_setting % 4)) in 1) S_SETTING=t0.20-bin-mean-seed-n1 ;; 3) S_SETTING=t0.10-bin-mean-corners-n1 ;; *) S_SETTING=best ;; esac; }
step_voc()          { S_VOC=$((3 - S_VOC)); }
step_davis()        { S_DAVIS=$((3 - S_DAVIS)); }
step_val()          { [ "$S_VAL" = val ] && S_VAL=val2 || S_VAL=val; }
step_refine()       { [ "$S_REFINE" = none ] && S_REFINE=bs || S_REFINE=none; }
step_probe()        { [ "$S_PROBE" = 224 ] && S_PROBE=448 || S_PROBE=224; }
step_ckpt()         {   # other weights copied in, older than every product (cp -p of an old file)
  [ "$S_CKPT" = a ] && S_CKPT=b || S_CKPT=a
  cp "$T/ckpt-$S_CKPT.safetensors" "$T/ckpt.safetensors"; touch -d '2001-01-01' "$T/ckpt.safetensors"; }
step_ini()          { [ "$S_INI" = a ] && S_INI=b || S_INI=a; write_ini "$S_INI"; }
step_grid()         { [ "$S_GRID" = a ] && S_GRID=b || S_GRID=a; write_grid "$S_GRID"; }
STEPS=(step_setting step_voc step_ckpt step_reorder step_davis step_ini step_setting step_grid
       step_val step_refine step_probe step_drop)
seed=${KC_WALK_SEED:-28}
mapfile -t ORDER < <(printf '%s\n' "${STEPS[@]}" | awk -v s="$seed" 'BEGIN { srand(s) } { print rand() "\t" $0 }' | sort -n | cut -f2)
# first the issue's first case (an `init =` network added to a sweep), then a `weights =` network
ORDER=(step_add_init step_add_weights "${ORDER[@]}")
# KC_WALK_STEPS=N: the first N steps only (debugging; the sanitizer suite takes 5: its point is the
# stages' memory, and the make layer is the same)
[ "${KC_SANITIZE:-}" != 1 ] || KC_WALK_STEPS=${KC_WALK_STEPS:-5}
[ -z "${KC_WALK_STEPS:-}" ] || ORDER=("${ORDER[@]:0:$KC_WALK_STEPS}")
echo "walk (seed $seed): start; ${ORDER[*]}"

walk() {   # walk INC_DIR SHARDS_OPTS...: the whole walk from the first request
  local inc=$1; shift
  S_NETS="color" S_SETTING=best S_VOC=1 S_DAVIS=1 S_VAL=val S_REFINE=none S_PROBE=224 n_setting=0
  [ "$S_CKPT" = a ] || step_ckpt; [ "$S_INI" = a ] || step_ini; [ "$S_GRID" = a ] || step_grid
  check_step start 1 "$inc" "$@"
  local s i=0
  for s in "${ORDER[@]}"; do "$s"; i=$((i + 1)); check_step "${s#step_}" $((i % 6 == 0 || i == ${#ORDER[@]})) "$inc" "$@"; done
  # every input touched, no byte changed: nothing runs
  touch "$T/ckpt.safetensors" "$T/nets.ini" "$T/grid.ini" "$T"/data*/voc/ImageSets/Segmentation/*.txt "$T"/data*/davis/ImageSets/2017/*.txt
  local log=$T/log.touched; local -a v; mapfile -t v < <(vars "$inc")
  "${M[@]}" "$@" "${v[@]}" "${GOALS[@]}" >"$log" 2>&1 || bad "after touching the inputs, make failed"
  [ "$(stages "$log")" = 0 ] && ok || bad "touching the inputs without changing them ran $(stages "$log") stages: $(grep -E "^$B/kc-" "$log" | head -n 3)"
}

walk "$T/inc"
echo "walk: $n_steps requests; incremental runs started $n_stage_inc stages, the $n_clean clean runs $n_stage_clean"
# under SHARDS=2 the goals whose products are sharded (features, decoding, propagation), PROBE=1
# keeping the probe in the report; their outputs against the same clean runs
GOALS=(sweep report davis) WRITTEN=tables PRINTED=
walk "$T/inc2" -j2 SHARDS=2
echo "walk under SHARDS=2: $n_steps requests in all; incremental stages $n_stage_inc (both walks), clean $n_stage_clean"
[ "$T_FAIL" = "$fails_before" ] && rm -rf "$T"/clean* "$T"/inc*
done_tests
