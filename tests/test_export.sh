#!/usr/bin/env bash
# kc-export end to end: photos of odd sizes (one 1 pixel wide), the colour network's masks at a
# setting of several rounds, and kc-refine's pixel masks of them, exported and checked by the
# independent plain-Python reference tests/ref/coco_rle_ref.py (RLE decoded from its definition ==
# each PNG's label k; PNG == the cache's grid mapped to pixels; ids, areas, boxes); then the
# refusals, each one line naming the file, exit 1, nothing written: a cache that is not a masks
# cache, an unknown setting, a missing image, a photo replaced since extraction, an output folder
# that cannot be made, a bad --score.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
EXPORT=$BUILD/kc-export
export_() { timeout 120 "$EXPORT" "$@"; }
PY=/usr/bin/python3
S=t0.15-bin-mean-corners-n3
d=$(tmpdir export_cli)

if [ ! -x "$EXPORT" ]; then bad "$EXPORT not built"; done_tests; exit 1; fi
if export_ --help | grep -q "example:"; then ok; else bad "--help has no example"; fi
expect_fail "no options" "required" export_
expect_fail "bad --score" "score must be eigengap, lambda2 or none" export_ --score best --masks x
expect_fail "missing cache" "nope.h5: no such file" export_ --masks "$d/nope.h5" --setting s --images "dir:$d" --out "$d/o"

need "kc-export's output against the plain-Python reference" py:PIL py:h5py || { done_tests; exit $?; }

# photos: random colour blocks (so the colour network's masks have several rounds), odd sizes
mkdir -p "$d/photos"
$PY - "$d/photos" <<'EOF' || { bad "photos"; done_tests; exit 1; }
import random, sys
from PIL import Image
random.seed(5)
for name, (w, h) in {"b odd": (97, 61), "a_tall": (45, 131), "c_thin": (1, 77), "d": (160, 120)}.items():
    im = Image.new("RGB", (w, h), (20, 30, 40))
    for _ in range(4):
        x0, y0 = random.randrange(w), random.randrange(h)
        im.paste(tuple(random.randrange(256) for _ in range(3)), (x0, y0, min(w, x0 + 1 + w // 2), min(h, y0 + 1 + h // 2)))
    im.save(f"{sys.argv[1]}/{name}.png")
EOF
"$BUILD/kc-extract" --model color --dataset "dir:$d/photos" --out "$d/keys.h5" 2>/dev/null &&
  "$BUILD/kc-center" "$d/keys.h5" "$d/centered.h5" 2>/dev/null &&
  "$BUILD/kc-decode" --features "$d/centered.h5" --kind keys --setting $S --out "$d/masks.h5" 2>/dev/null &&
  "$BUILD/kc-refine" --masks "$d/masks.h5" --dataset "dir:$d/photos" --method bs --out "$d/refined.h5" 2>/dev/null ||
  { bad "the caches could not be made"; done_tests; exit 1; }

for cache in masks refined; do
  if export_ --masks "$d/$cache.h5" --setting $S --images "dir:$d/photos" --out "$d/out-$cache" 2>"$d/err"; then ok
  else bad "kc-export of $cache: $(cat "$d/err")"; continue; fi
  if r=$($PY tests/ref/coco_rle_ref.py "$d/out-$cache" "$d/photos" "$d/$cache.h5" $S 2>&1); then ok
  else bad "$cache: the reference disagrees: $r"; fi
  n=$($PY -c 'import json,sys; a=json.load(open(sys.argv[1]))["annotations"]; print(len(a), len({x["image_id"] for x in a}), all("score" in x for x in a))' "$d/out-$cache/coco.json")
  # (every image has an object; at least one has more than one)
  set -- $n
  if [ "$2" = 4 ] && [ "$1" -gt 4 ] && [ "$3" = True ]; then ok; else bad "$cache: annotations, images with one, all scored: $n"; fi
done
# the scores are the decoder's record: eigengap by default, lambda2 on request, none
export_ --masks "$d/masks.h5" --setting $S --images "dir:$d/photos" --out "$d/out-l2" --score lambda2 2>/dev/null
export_ --masks "$d/masks.h5" --setting $S --images "dir:$d/photos" --out "$d/out-none" --score none 2>/dev/null
r=$($PY - "$d" "$S" <<'EOF'
import json, sys, h5py
d, s = sys.argv[1], sys.argv[2]
f = h5py.File(f"{d}/masks.h5", "r")
ids = sorted(f["index/ids"].asstr()[()])
for out, attr in (("out-masks", "eigengap"), ("out-l2", "lambda2")):
    for a in json.load(open(f"{d}/{out}/coco.json"))["annotations"]:
        rec = f[f"masks/{s}/{ids[a['image_id'] - 1]}"].attrs[attr]
        k = len([b for b in json.load(open(f"{d}/{out}/coco.json"))["annotations"] if b["image_id"] == a["image_id"] and b["id"] < a["id"]])
        # (label k + 1 is the (k+1)-th present one: all labels are present here, checked above)
        if abs(a["score"] - float(rec[k])) > 1e-6 * max(1, abs(float(rec[k]))):
            print(out, a["id"], a["score"], rec[k]); sys.exit(1)
if any("score" in a for a in json.load(open(f"{d}/out-none/coco.json"))["annotations"]):
    print("--score none wrote a score"); sys.exit(1)
print("ok")
EOF
)
if [ "$r" = ok ]; then ok; else bad "scores: $r"; fi

# refusals: one line naming the file, exit 1, nothing written (no output folder, no temporary file)
refuse() { # what regex out args...
  local what=$1 re=$2 out=$3; shift 3
  expect_fail "$what" "$re" export_ "$@" --out "$out"
  if [ -z "$(find "$out" -type f 2>/dev/null)" ]; then ok; else bad "$what: files written: $(find "$out" -type f | head -3)"; fi
}
refuse "a features cache" "keys.h5.*keycut-masks|keys.h5.*masks" "$d/r1" --masks "$d/keys.h5" --setting $S --images "dir:$d/photos"
refuse "an unknown setting" "masks.h5: no setting 'nope'" "$d/r2" --masks "$d/masks.h5" --setting nope --images "dir:$d/photos"
mkdir -p "$d/fewer" && cp "$d/photos/a_tall.png" "$d/photos/b odd.png" "$d/fewer/"
refuse "a missing image" "image c_thin of .*masks.h5 is not in dir:" "$d/r3" --masks "$d/masks.h5" --setting $S --images "dir:$d/fewer"
# a photo replaced since extraction by another of the same size: refused (its masks are another's)
mkdir -p "$d/replaced" && cp "$d/photos/"*.png "$d/replaced/"
$PY -c 'import sys; from PIL import Image; p=sys.argv[1]; Image.open(p).transpose(Image.FLIP_TOP_BOTTOM).save(p)' "$d/replaced/d.png"
refuse "a photo replaced since extraction" "replaced/d.png: changed since extraction" "$d/r4" --masks "$d/masks.h5" --setting $S --images "dir:$d/replaced"
touch "$d/afile"
refuse "an output folder that cannot be made" "afile/out" "$d/afile/out" --masks "$d/masks.h5" --setting $S --images "dir:$d/photos"
# the output is all or nothing: an export that stops part way (the last image's mask is missing
# from the cache, found after the other images' PNGs were written) leaves no file
cp "$d/masks.h5" "$d/cut.h5" && $PY -c 'import h5py,sys; f=h5py.File(sys.argv[1],"r+"); del f["masks/"+sys.argv[2]+"/d"]' "$d/cut.h5" $S
mkdir -p "$d/r5"
expect_fail "a failure part way" "cut.h5: no mask /masks/$S/d" export_ --masks "$d/cut.h5" --setting $S --images "dir:$d/photos" --out "$d/r5"
if [ -z "$(find "$d/r5" -type f)" ]; then ok; else bad "files left after a failure part way: $(find "$d/r5" -type f | head -3)"; fi
done_tests
