#!/usr/bin/env bash
# tests/bench_report.sh — the results browser at VOC val's size: kc-report writing the report of
# 1,449 generated scenes x 2 networks (the colour extractor at two settings, each its own network:
# masks caches, per-image score CSVs, the report table), from nothing (every photo, thumbnail and
# data file written) and again with nothing changed (every one up to date).  Prints the CPU, the
# times, the files per image, and the size per 1,000 images both as bytes (du -b) and on disk
# (du -k: every file takes whole 4 KiB blocks, which small files mostly waste).  The generated
# scenes are flat colours, which JPEG compresses far better than photographs, so the size of one
# real VOC photo's share (../shared/data/voc_official, when present: the photo and its thumbnail,
# its ground truth's and each network's label data, eval/report/report_data.h, which sit in files of 100
# images) is printed as well, scaled to 1,000 images at 2 and 10 networks, with the pages' bytes
# per image and network of the generated run.
# Figures only, no assertions.  The machine may be shared: numbers are noisy.
set -u -o pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
DIR=$BUILD/bench-data/report
N=${KC_BENCH_REPORT_IMAGES:-1449}
SHARED=${KC_SHARED_DATA:-$(cd .. && pwd)/shared/data}
echo "== bench_report: $N images x 2 networks, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
for p in kc-demo-data kc-extract kc-center kc-decode kc-score kc-table kc-report; do
  [ -x "$BUILD/$p" ] || { echo "bench_report: $BUILD/$p not built" >&2; exit 1; }
done
export KC_QUIET=1
rm -rf "$DIR"; mkdir -p "$DIR"
now() { date +%s.%N; }
t0=$(now)
"$BUILD/kc-demo-data" --out "$DIR/data" --train 1 --val "$N" --videos 1 --frames 3 >/dev/null 2>&1 || exit 1
VOC=$DIR/data/voc
"$BUILD/kc-extract" --model color --dataset "voc:$VOC:val" --out "$DIR/keys.h5" 2>"$DIR/log" || { tail -3 "$DIR/log"; exit 1; }
"$BUILD/kc-center" "$DIR/keys.h5" "$DIR/centered.h5" 2>>"$DIR/log" || exit 1
NETS=(color-a color-b)
SETS=(t0.10-bin-mean-corners-n1 t0.20-bin-mean-seed-n1)
args=() dirs=()
for k in 0 1; do
  n=${NETS[$k]} s=${SETS[$k]}
  "$BUILD/kc-decode" --features "$DIR/centered.h5" --setting "$s" --out "$DIR/masks-$n.h5" 2>>"$DIR/log" || exit 1
  "$BUILD/kc-score" --masks "$DIR/masks-$n.h5" --voc "$VOC" --split "$VOC/ImageSets/Segmentation/val.txt" \
    --out "$DIR/scores/$n" --network "$n" --ledger "$DIR/ledger.tsv" 2>>"$DIR/log" || exit 1
  args+=(--scores "$n=$DIR/scores/$n" --masks "$n=$DIR/masks-$n.h5"); dirs+=("$DIR/scores/$n")
done
"$BUILD/kc-table" "${dirs[@]}" --out "$DIR/tables" --name report --only report --setting "${SETS[0]}" \
  --ledger "$DIR/ledger.tsv" >/dev/null 2>&1 || true
tables=(); [ -f "$DIR/tables/report.csv" ] && tables=(--table "$DIR/tables/report.csv")
t1=$(now)
printf 'inputs (generate %d scenes, extract, centre, decode, score; not the report): %.1f s\n' "$N" "$(echo "$t1 - $t0" | bc -l)"
t2=$(now)
"$BUILD/kc-report" --out "$DIR/report" "${tables[@]}" "${args[@]}" --images "voc:$VOC:val" || exit 1
t3=$(now)
"$BUILD/kc-report" --out "$DIR/report" "${tables[@]}" "${args[@]}" --images "voc:$VOC:val" || exit 1
t4=$(now)
bytes=$(du -sb "$DIR/report" | cut -f1)
disk=$(( $(du -sk "$DIR/report" | cut -f1) * 1024 ))
files=$(find "$DIR/report" -type f | wc -l)
pics=$(du -sb "$DIR/report/photo" "$DIR/report/data" | awk '{s += $1} END {print s}')
pages=$(du -cb "$DIR/report"/*.html "$DIR/report/images" | tail -n 1 | cut -f1)
per1k() { echo "$1 / 1000000 * 1000 / $N" | bc -l; }
printf 'kc-report, %d images x 2 networks, from nothing: %.1f s (%d files, %.1f per image)\n' "$N" \
  "$(echo "$t3 - $t2" | bc -l)" "$files" "$(echo "$files / $N" | bc -l)"
printf 'kc-report again, every picture up to date:        %.2f s\n' "$(echo "$t4 - $t3" | bc -l)"
printf 'size: %.1f MB of bytes (photos and data %.1f MB, pages %.1f MB), %.1f MB on disk: per 1,000 images %.1f MB of bytes, %.1f MB on disk (2 networks; target < 50)\n' \
  "$(echo "$bytes / 1000000" | bc -l)" "$(echo "$pics / 1000000" | bc -l)" "$(echo "$pages / 1000000" | bc -l)" \
  "$(echo "$disk / 1000000" | bc -l)" "$(per1k "$bytes")" "$(per1k "$disk")"

# one real photo: its photo's bytes and blocks (du counts whole 4 KiB blocks per file), its label
# data's bytes (its entry of the one-image run's data file, and a 100th of the file's header and
# end: a data file holds 100 images) and blocks (at most one wasted per 100), the pages' bytes per
# image from the run above: a gallery entry per network, an image page of a fixed part and a
# figure per network (its bytes rounded up to a block too)
blk() { awk '{s += int(($1 + 4095) / 4096) * 4096} END {print s + 0}'; }
dblk() { awk '{s += int((100 * $1 + 4095) / 4096) * 4096 / 100} END {print s + 0}'; }
sum() { awk '{s += $1} END {print s + 0}'; }
dsize() {  # the bytes of each data file's one entry, and a 100th of the rest
  local f all rest
  for f in "$@"; do
    all=$(stat -c %s "$f") rest=$(( $(head -n 2 "$f" | wc -c) + $(tail -n 1 "$f" | wc -c) ))
    printf '%.0f\n' "$(echo "$all - $rest + $rest / 100" | bc -l)"
  done
}
entry=$(echo "($(du -cb "$DIR/report"/gallery-*.html | tail -n 1 | cut -f1)) / (2 * $N)" | bc -l)
fig=$(cat "$DIR/report"/images/*.html | awk '/^<figure id="g/ {s += length($0) + 1; n++} END {print n ? s / n : 0}')
ipage=$(echo "$(du -sb "$DIR/report/images" | cut -f1) / $N - 2 * $fig" | bc -l)   # without its figures
P=$SHARED/voc_official
if [ -f "$P/ImageSets/Segmentation/val.txt" ] || [ -d "$P/JPEGImages" ]; then
  id=$(ls "$P/JPEGImages" | head -n 1); id=${id%.jpg}
  R=$DIR/real; mkdir -p "$R"; printf '%s\n' "$id" >"$R/split.txt"
  printf '%s\n' "$P/JPEGImages/$id.jpg" >"$R/list.txt"
  if "$BUILD/kc-extract" --model color --dataset "list:$R/list.txt" --out "$R/keys.h5" 2>>"$DIR/log" &&
     "$BUILD/kc-center" "$R/keys.h5" "$R/centered.h5" 2>>"$DIR/log" &&
     "$BUILD/kc-decode" --features "$R/centered.h5" --setting "${SETS[0]}" --out "$R/masks.h5" 2>>"$DIR/log" &&
     "$BUILD/kc-score" --masks "$R/masks.h5" --voc "$P" --split "$R/split.txt" --out "$R/scores" --network real \
       --ledger "$R/ledger.tsv" 2>>"$DIR/log" &&
     "$BUILD/kc-report" --out "$R/report" --scores "real=$R/scores" --masks "real=$R/masks.h5" \
       --images "list:$R/list.txt" --voc "$P" 2>>"$DIR/log"; then
    photo=$(find "$R/report/photo" -type f -printf '%s\n')
    gt=$(dsize "$R"/report/data/gt/*.js)
    net=$(dsize "$R"/report/data/gallery-*/*.js)
    printf 'one real VOC photo (%s, %s, the default --quality): photo + thumbnail %.1f KB, its ground truth data %.1f KB, + %.1f KB data per network; pages %.0f B per network and image + %.0f B per image\n' \
      "$id" "$(file -b "$P/JPEGImages/$id.jpg" | grep -o '[0-9]*x[0-9]*' | tail -n 1)" "$(echo "$(sum <<<"$photo") / 1000" | bc -l)" \
      "$(echo "$(sum <<<"$gt") / 1000" | bc -l)" "$(echo "$(sum <<<"$net") / 1000" | bc -l)" "$(echo "$entry + $fig" | bc -l)" "$ipage"
    for k in 2 10; do
      b=$(echo "$(sum <<<"$photo") + $(sum <<<"$gt") + $k * $(sum <<<"$net") + $k * ($entry + $fig) + $ipage" | bc -l)
      d=$(echo "$(blk <<<"$photo") + $(dblk <<<"$gt") + $k * $(dblk <<<"$net") + $k * $entry + $(printf '%.0f\n' "$(echo "$ipage + $k * $fig" | bc -l)" | blk)" | bc -l)
      printf '  extrapolated to 1,000 such images x %2d networks: %.1f MB of bytes, %.1f MB on disk, %.2f files per image (target < 50 MB)\n' \
        "$k" "$(echo "$b / 1000" | bc -l)" "$(echo "$d / 1000" | bc -l)" "$(echo "$(grep -c . <<<"$photo") + 1 + (1 + $k) / 100" | bc -l)"
    done
  else
    echo "one real VOC photo: failed ($(tail -n 1 "$DIR/log"))"
  fi
else
  echo "one real VOC photo: $P absent, not measured"
fi
