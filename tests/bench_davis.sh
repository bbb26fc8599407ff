#!/usr/bin/env bash
# tests/bench_davis.sh — kc-davis speed (30 generated videos x 70 frames, 854x480, 2 objects;
# target < 15 s on 2 cores) beside the official algorithm in NumPy/OpenCV (tests/ref/davis_ref.py)
# on 2 of the videos, scaled; and kc-propagate's peak memory on a 1152x480 video (target < 200 MB).
# Numbers are noisy on a shared machine.
set -u -o pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
D=$BUILD/bench-tmp/davis
rm -rf "$D"; mkdir -p "$D"
t0=$(date +%s.%N)
"$BUILD/tests/bench_davis" gen --root "$D/root" --results "$D/res" --videos 30 --frames 70 --width 854 --height 480 --objects 2
echo "bench_davis: generated 30 x 70 frames in $(echo "$(date +%s.%N) - $t0" | bc) s"
t0=$(date +%s.%N)
"$BUILD/kc-davis" --results "$D/res" --davis "$D/root" --split val --force >/dev/null
t=$(echo "$(date +%s.%N) - $t0" | bc)
echo "bench_davis: kc-davis 30 videos x 70 frames 854x480, 2 objects: ${t} s (target < 15 s, OMP_NUM_THREADS=${OMP_NUM_THREADS:-all})"
if /usr/bin/python3 -c 'import numpy, cv2, PIL' 2>/dev/null; then
  /usr/bin/python3 tests/ref/davis_ref.py score --results "$D/res" --davis "$D/root" --split val --sequences 2 --out "$D/ref.json"
  /usr/bin/python3 -c "import json; s=json.load(open('$D/ref.json'))['seconds']; print('bench_davis: official algorithm in NumPy/OpenCV: %.1f s for 2 videos, %.0f s scaled to 30' % (s, s * 15))"
fi
"$BUILD/tests/bench_davis" video "$D/wide" "$D/wide.h5" 1152 480 24 384
rm -rf "$D/wide-out"
if [ -x /usr/bin/time ]; then
  /usr/bin/time -v "$BUILD/kc-propagate" --features "$D/wide.h5" --davis "$D/wide" --split val --out "$D/wide-out" 2>"$D/time.txt"
  kb=$(awk '/Maximum resident set size/ {print $6}' "$D/time.txt")
  echo "bench_davis: kc-propagate 1152x480 video (30x72 grid, dim 384, 24 frames): peak RSS $((kb / 1024)) MB (target < 200 MB), $(awk '/Elapsed/ {print $8}' "$D/time.txt")"
else
  echo "bench_davis: /usr/bin/time absent, no memory measure"
fi
