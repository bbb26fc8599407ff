#!/usr/bin/env bash
# A bad request to the make pipeline stops before anything runs, exit status non-zero, with one line
# naming the variable or file to fix (configs/check-request.sh, pipeline.mk); never "nothing to run".
# Also: `make tables` as the README lists it, and `make help` naming every variable pipeline.mk reads.
source "$(dirname "$0")/lib.sh"
T=$(tmpdir request)
export KC_QUIET=1
if [ "${KC_SANITIZE:-}" = 1 ]; then M=(make --no-print-directory SANITIZE=1 BUILD="${BUILD%-san}")
else M=(make --no-print-directory BUILD="$BUILD"); fi

"$BUILD/kc-demo-data" --out "$T/data" --train 4 --val 3 --videos 1 --frames 3 >/dev/null 2>&1 || bad "kc-demo-data"
V=$T/data/voc
cat > "$T/nets.ini" <<EOF
[color]
model = color

[gone]
weights = $T/no-such-checkpoint.pth
EOF
OK=(NETS_INI="$T/nets.ini" OUT="$T/work" TABLES="$T/tables" SPLITS="$T/splits" LEDGER="$T/ledger.tsv" SELECT_COUNT=4)

# refused GOAL "what" "regex of the one line" VAR=...: exit non-zero, one line of output, matching
refused() {
  local what=$1 re=$2; shift 2
  local out rc=0
  out=$("${M[@]}" "${OK[@]}" "$@" 2>&1) || rc=$?
  local lines; lines=$(grep -c . <<<"$out")
  if [ $rc -ne 0 ] && [ "$lines" = 1 ] && grep -Eq -- "$re" <<<"$out" && ! grep -q 'nothing to run' <<<"$out"; then ok
  else bad "$what: rc=$rc, $lines lines: $(head -n 3 <<<"$out")"; fi
}
refused "report without the val list" "VAL_SPLIT=nosuch: no list $V/ImageSets/Segmentation/nosuch.txt" \
  report NETS=color VOC="$V" VAL_SPLIT=nosuch SETTING=t0.20-bin-mean-seed-n1
refused "probe without trainaug" "PROBE_TRAIN=trainaug: no list $V/ImageSets/Segmentation/trainaug.txt" probe NETS=color VOC="$V"
refused "report PROBE=1 without trainaug" "PROBE_TRAIN=trainaug: no list" report NETS=color VOC="$V" PROBE=1 SETTING=t0.20-bin-mean-seed-n1
refused "a setting typo" "nearest of configs/sweep.ini: t0.20-bin-mean-seed-n1" report NETS=color VOC="$V" SETTING=t0.20-bin-mean-sed-n1
refused "a setting typo for the figures" "nearest of configs/sweep.ini: t0.20-bin-mean-seed-n1" figures NETS=color VOC="$V" SETTING=t0.20-bin-mean-sed-n1
refused "a network not in nets.ini" "NETS: $T/nets.ini has no section \[mine\]" sweep NETS="color mine" VOC="$V"
refused "a missing checkpoint" "network gone: weights $T/no-such-checkpoint.pth \(section \[gone\] of $T/nets.ini\): no such file" sweep NETS="color gone" VOC="$V"
refused "sweep without VOC" "set VOC=" sweep NETS=color
refused "VOC12 for a pipeline goal" "VOC12 is make corloc's" sweep NETS=color VOC12="$V"
refused "a VOC root that is not there" "VOC=$T/nope: no such folder" sweep NETS=color VOC="$T/nope"
refused "a VOC root without train.txt" "has no $T/data/davis/ImageSets/Segmentation/train.txt" sweep NETS=color VOC="$T/data/davis"
refused "davis without DAVIS" "set DAVIS=" davis NETS=color
refused "a DAVIS split without its list" "DAVIS_SPLIT=test-dev: no list $T/data/davis/ImageSets/2017/test-dev.txt" \
  davis NETS=color DAVIS="$T/data/davis" DAVIS_SPLIT=test-dev
refused "an empty NETS" "NETS is empty" sweep NETS= VOC="$V"
refused "SHARDS=0" "SHARDS=0 is not a positive number" sweep NETS=color VOC="$V" SHARDS=0
refused "REFINE=typo" "REFINE must be none, crf or bs" report NETS=color VOC="$V" REFINE=crd SETTING=t0.20-bin-mean-seed-n1
refused "make tables before any table" "no tables in $T/tables/ yet" tables

# make tables, as the README lists it (no other variable): prints the tables that exist
out=$("${M[@]}" "${OK[@]}" sweep NETS=color VOC="$V" GRID=configs/sweep.ini 2>&1) || bad "make sweep: $(tail -n 3 <<<"$out")"
# make sweep prints the 10 best settings (best first, as kc-table --print-best chooses) and where the
# whole table is, not its 144 rows (issue 31 item 6)
best=$("$BUILD/kc-table" --print-best "$T/work/scores/color/select" 2>/dev/null)
rows=$(grep -c '^| t0' <<<"$out")
if [ "$rows" = 10 ] && [ "$(grep '^| t0' <<<"$out" | head -n 1 | cut -d' ' -f2)" = "$best" ] &&
   grep -qxF "sweep: the 10 best of 144 settings above, by mean Jaccard; the whole table: $T/tables/sweep.md (and .csv, .tex)" <<<"$out"
then ok; else bad "make sweep printed $rows rows (best $best): $(tail -n 3 <<<"$out")"; fi
out=$("${M[@]}" TABLES="$T/tables" tables 2>&1) && grep -q "^== $T/tables/sweep.md" <<<"$out" && grep -q '^| t0.10-bin-mean-seed-n1 |' <<<"$out" \
  && ok || bad "make tables: $(head -n 3 <<<"$out")"

# make help names every variable pipeline.mk reads with ?= (and its default), and slurm.mk's two
help=$("${M[@]}" help 2>&1)
missing=
for v in $(sed -n 's/^\([A-Z_][A-Z0-9_]*\) *?=.*/\1/p' pipeline.mk | sort -u) SLURM_INI KEEP_SHARDS; do
  grep -q "^$v " <<<"$help" || missing="$missing $v"
done
[ -z "$missing" ] && ok || bad "make help does not list:$missing"
done_tests
