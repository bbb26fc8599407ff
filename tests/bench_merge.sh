#!/usr/bin/env bash
# tests/bench_merge.sh — kc-merge of 64 shards of 1,000 images each (target: under a minute).
# Shards: kc-extract --model color --patch 64 on 64,000 tiny generated images would take long to
# make, so the 1,000-image list of each shard is the same folder listed under 64 different id
# prefixes (list: files), extracted once per shard; the merge reads 64 files, 64,000 datasets.
source "$(dirname "$0")/lib.sh"
T=$(tmpdir bench_merge)
export KC_QUIET=1
N=${BENCH_SHARDS:-64} PER=${BENCH_PER:-1000}
$BUILD/kc-demo-data --out "$T/data" --train 1 --val 1 --videos 1 --frames 3 >/dev/null 2>&1 || { bad "kc-demo-data"; done_tests; exit 1; }
img=$(ls "$T"/data/voc/JPEGImages/*.jpg | head -n 1)
mkdir -p "$T/img"
for i in $(seq 1 $((N * PER))); do printf 'img/i%06d.jpg\n' "$i"; done > "$T/list.txt"
src=$(realpath "$img"); while read -r p; do ln -sf "$src" "$T/$p"; done < "$T/list.txt"
t0=$SECONDS
for k in $(seq 1 "$N"); do
  $BUILD/kc-extract --model color --patch 64 --policy native16 --batch 64 --dataset "list:$T/list.txt" --shard $k/$N --out "$T/s$k.h5" &
  [ $((k % 2)) -eq 0 ] && wait
done; wait
echo "made $N shards of $PER images in $((SECONDS - t0)) s"
t0=$(date +%s.%N)
$BUILD/kc-merge "$T/merged.h5" "$T"/s*.h5 && ok || bad "kc-merge failed"
t=$(echo "$(date +%s.%N) - $t0" | bc)
echo "BENCH merge: $N shards x $PER images in ${t} s ($(du -sh "$T/merged.h5" | cut -f1)); machine shared, numbers noisy"
awk -v t="$t" 'BEGIN{exit !(t < 60)}' && ok || bad "merge took $t s (target < 60 s)"
rm -rf "$T"
done_tests
