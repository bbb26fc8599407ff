#!/usr/bin/env bash
# tests/bench_coco.sh — the streaming COCO reader (datasets/coco.h) on a generated ~500 MB
# instances JSON (82,783 images, 604,907 annotations with polygons, 20,000 listed images; made by
# tests/bench_coco.c under $BUILD/bench-coco/, not committed, kept between runs).  Prints its peak
# memory (max RSS, /usr/bin/time -v; target under 200 MB) and time, and as the baseline measured
# in the same run the same file through /usr/bin/python3 -c "import json; json.load(...)" (what
# LOST's and TokenCut's select_coco_20k starts with).  BENCH_COCO_MB changes the size;
# BENCH_COCO_PYTHON=0 skips the Python baseline.  Machine shared with other sessions: times noisy.
source "$(dirname "$0")/lib.sh"
G=$BUILD/tests/bench_coco D=$BUILD/bench-coco
MB=${BENCH_COCO_MB:-500}
[ -x "$G" ] || { bad "$G not built (make BUILD=$BUILD all)"; done_tests; exit 1; }
[ -x /usr/bin/time ] || { bad "/usr/bin/time missing (Debian package time)"; done_tests; exit 1; }
mkdir -p "$D"
J=$D/instances_train2014.json
if [ ! -s "$J" ] || [ "$(cat "$D/mb" 2>/dev/null)" != "$MB" ]; then
  "$G" gen "$J.tmp" "$D/list.txt" "$MB" && mv "$J.tmp" "$J" && echo "$MB" >"$D/mb" && ok || { bad "generating $J failed"; done_tests; exit 1; }
fi
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
echo "file: $J ($(du -m "$J" | cut -f1) MB), list of $(wc -l <"$D/list.txt") images"
rss() { awk -F: '/Maximum resident set size/ { gsub(/ /, "", $2); printf "%.1f", $2 / 1024 }' "$1"; }
wall() { awk '/Elapsed \(wall clock\)/ { n = split($NF, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; printf "%.2f", s }' "$1"; }
/usr/bin/time -v "$G" read "$J" "$D/list.txt" >"$D/out" 2>"$D/time" && ok || { bad "reader failed: $(cat "$D/out" "$D/time")"; done_tests; exit 1; }
r=$(rss "$D/time") t=$(wall "$D/time")
printf 'BENCH coco reader: %s; %s s, max RSS %s MB (target < 200 MB)\n' "$(cat "$D/out")" "$t" "$r"
awk -v r="$r" 'BEGIN { exit !(r < 200) }' && ok || bad "max RSS $r MB (target < 200 MB)"
if [ "${BENCH_COCO_PYTHON:-1}" = 1 ]; then
  if /usr/bin/time -v /usr/bin/python3 -c "import json, sys; json.load(open(sys.argv[1]))" "$J" >/dev/null 2>"$D/time-py"; then
    ok
    printf 'BENCH baseline python3 json.load: %s s, max RSS %s MB (reader: %.1fx faster, %.0fx less memory)\n' \
      "$(wall "$D/time-py")" "$(rss "$D/time-py")" "$(echo "$(wall "$D/time-py") / $t" | bc -l)" "$(echo "$(rss "$D/time-py") / $r" | bc -l)"
  else
    bad "python3 json.load failed: $(tail -n 3 "$D/time-py")"
  fi
fi
echo "(2 cores shared with other sessions: timings noisy)"
done_tests
