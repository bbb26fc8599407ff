#!/usr/bin/env bash
# tests/test_policy_patch.sh — the policies at patch 14 through every stage (issue 29, item 3), on
# kc-demo-data's generated VOC and DAVIS sets with the colour extractor (--model color --patch 14,
# the same grids a ViT-S/14 gets):
#  1. kc-extract: square480 gives every image a 35x35 grid (490x490 resized), short480 60x35 on the
#     427x240 frames (840x490), square224 16x16; the expected grids computed here from
#     docs/design.md's rule, not by keycut; the provenance text names 490x490;
#  2. kc-decode, then kc-score: each image's Jaccard, CorLoc and area equal tests/ref/voc_ref.py's
#     per-pixel reference on the 35x35 masks (tol 1e-9); kc-show, kc-refine (crf on the 490x490
#     image, bs) read the masks;
#  3. kc-propagate upsamples by the cache's patch (propagate.json says 14), refuses --patch 16, and
#     --patch 14 gives the same PNGs;
#  4. kc-probe takes square480 at patch 14 as 490 pixels (--size 480 is refused naming 490);
#  5. a patch-16 cache of the same images keeps its 30x30 grids and DINO's 832x480 DAVIS size.
source "$(dirname "$0")/lib.sh"
export KC_QUIET=1 OMP_WAIT_POLICY=PASSIVE SOURCE_DATE_EPOCH=1764547200
B=$BUILD
T=$(tmpdir policy_patch)
PY=/usr/bin/python3
for s in kc-demo-data kc-extract kc-decode kc-score kc-show kc-refine kc-propagate kc-probe; do
  [ -x "$B/$s" ] || { bad "$B/$s not built"; done_tests; exit 1; }
done
need "patch-14 policies end to end" py:h5py py:numpy py:PIL || { done_tests; exit $?; }
"$B"/kc-demo-data --out "$T/data" --train 2 --val 3 --videos 1 --frames 4 >/dev/null 2>"$T/err" || bad "kc-demo-data: $(cat "$T/err")"
V=$T/data/voc D=$T/data/davis S=t0.20-bin-mean-seed-n1
step() { local what=$1; shift; if "$@" >/dev/null 2>"$T/err"; then ok; else bad "$what: $(tail -n 2 "$T/err")"; fi; }
ext() { step "kc-extract $*" "$B"/kc-extract --model color "$@"; }

# ---- 1. grids -------------------------------------------------------------------------------------
ext --patch 14 --dataset "voc:$V:val" --policy square480 --out "$T/sq14.h5"
ext --patch 16 --dataset "voc:$V:val" --policy square480 --out "$T/sq16.h5"
ext --patch 14 --dataset "voc:$V:train" --features tokens --policy square224 --out "$T/p224.h5"
ext --patch 14 --dataset "voc:$V:train" --features tokens --policy square480 --out "$T/p480.h5"
ext --patch 14 --dataset "davis:$D:val" --features tokens --out "$T/dav14.h5"
ext --patch 16 --dataset "davis:$D:val" --features tokens --out "$T/dav16.h5"
ext --patch 14 --dataset "voc:$V:val" --policy native16 --out "$T/nat14.h5"
grids=$($PY - "$T" <<'EOF'
import sys, h5py
t = sys.argv[1]
def up(side, p): return -(-side // p) * p
def rule(policy, p, w, h):  # docs/design.md: every side a multiple of the patch
    if policy.startswith("square"):
        s = up(int(policy[6:]), p); return s, s
    if policy == "short480":
        s, l = min(w, h), max(w, h); lo = int(480 * l / s / 64) * 64
        dw, dh = (480, lo) if w < h else (lo, 480) if h < w else (448, 480)
        return up(dw, p), up(dh, p)
    return up(w, p), up(h, p)
bad = 0
for name, policy, p in (("sq14", "square480", 14), ("sq16", "square480", 16), ("p224", "square224", 14),
                        ("p480", "square480", 14), ("dav14", "short480", 14), ("dav16", "short480", 16),
                        ("nat14", "native16", 14)):
    with h5py.File(f"{t}/{name}.h5") as f:
        a = dict(f.attrs)
        if a["policy"] != policy or a["patch"] != p:  # format version 2: patch is a number
            print(f"{name}: policy {a['policy']} patch {a['patch']}"); bad += 1
        for (gh, gw), (h, w), rs, box in zip(f["index/grid"][:], f["index/size"][:], f["index/resized"][:],
                                             f["index/box"][:]):
            rw, rh = rule(policy, p, int(w), int(h))
            if (gw * p, gh * p) != (rw, rh):
                print(f"{name}: {w}x{h} has a {gw}x{gh} grid, the rule gives {rw}x{rh} pixels"); bad += 1
            want_box = [0, 0, h, w] if policy == "native16" else [0, 0, rh, rw]
            if rs.tolist() != [rh, rw] or box.tolist() != want_box:
                print(f"{name}: {w}x{h}: index/resized {rs.tolist()}, box {box.tolist()}; the rule gives"
                      f" {[rh, rw]}, {want_box}"); bad += 1
        print(f"{name}: {policy} patch {p}: grids {sorted(set(tuple(g) for g in f['index/grid'][:].tolist()))}")
        if name == "sq14" and "490x490" not in a["normalisation"]:
            print(f"sq14 normalisation: {a['normalisation']}"); bad += 1
print("OK" if not bad else "FAILED")
EOF
)
echo "$grids" | sed '$d'
[ "$(tail -n 1 <<<"$grids")" = OK ] && ok || bad "grids: $grids"
grep -q "sq14: square480 patch 14: grids \[(35, 35)\]" <<<"$grids" && grep -q "dav14: short480 patch 14: grids \[(35, 60)\]" <<<"$grids" \
  && grep -q "dav16: short480 patch 16: grids \[(30, 52)\]" <<<"$grids" && ok || bad "grids by name: $grids"

# ---- 2. decode, score (against voc_ref.py), show, refine -------------------------------------------------
step "kc-decode" "$B"/kc-decode --features "$T/sq14.h5" --setting $S --out "$T/m14.h5"
step "kc-decode native16" "$B"/kc-decode --features "$T/nat14.h5" --setting $S --out "$T/mn14.h5"
step "kc-score" "$B"/kc-score --masks "$T/m14.h5" --voc "$V" --split "$V/ImageSets/Segmentation/val.txt" --out "$T/score" \
  --ledger "$T/ledger.tsv"
step "kc-score native16" "$B"/kc-score --masks "$T/mn14.h5" --voc "$V" --split "$V/ImageSets/Segmentation/val.txt" \
  --out "$T/score-n" --ledger "$T/ledger.tsv"
cmp=$($PY - "$T" "$V" "$S" <<'EOF'
import csv, sys
import h5py, numpy as np
from PIL import Image
sys.path.insert(0, "tests/ref")
from voc_ref import jaccard_corloc, read_xml
t, voc, setting = sys.argv[1:]
worst, hits, n = 0.0, 0, 0
for masks, out, policy in (("m14", "score", "square480"), ("mn14", "score-n", "native16")):
    rows = {r["id"]: r for r in csv.DictReader(open(f"{t}/{out}/{setting}.csv"))}
    with h5py.File(f"{t}/{masks}.h5") as f:
        for i in f["index/ids"].asstr()[:]:
            lab = f[f"masks/{setting}/{i}"][:]
            obj = np.asarray(Image.open(f"{voc}/SegmentationObject/{i}.png"))
            j, hit, area = jaccard_corloc(obj, read_xml(f"{voc}/Annotations/{i}.xml"), policy, 14, lab)
            r = rows[i]
            worst = max(worst, abs(j - float(r["jaccard"])), abs(area - float(r["area"])))
            hits += hit != int(r["corloc"])
            n += 1
print(f"kc-score at patch 14 vs voc_ref.py: {n} images, worst |d| {worst:.3g} (tol 1e-9), CorLoc disagreements {hits}")
print("OK" if n == 6 and worst <= 1e-9 and hits == 0 else "FAILED")
EOF
)
echo "$cmp" | sed '$d'
[ "$(tail -n 1 <<<"$cmp")" = OK ] && ok || bad "kc-score vs voc_ref.py: $cmp"
step "kc-show" "$B"/kc-show --masks "$T/m14.h5" --setting $S --images "voc:$V:val" --out "$T/show"
[ "$(ls "$T/show" | wc -l)" = 3 ] && ok || bad "kc-show wrote $(ls "$T/show" | wc -l) PNGs, expected 3"
step "kc-refine crf" "$B"/kc-refine --masks "$T/m14.h5" --dataset "voc:$V:val" --method crf --out "$T/crf14.h5"
step "kc-refine bs" "$B"/kc-refine --masks "$T/m14.h5" --dataset "voc:$V:val" --method bs --out "$T/bs14.h5"
step "kc-score of refined masks" "$B"/kc-score --masks "$T/crf14.h5" --voc "$V" --split "$V/ImageSets/Segmentation/val.txt" \
  --out "$T/score-crf" --ledger "$T/ledger.tsv"

# ---- 3. DAVIS propagation by the cache's patch ----------------------------------------------------------
step "kc-propagate" "$B"/kc-propagate --features "$T/dav14.h5" --davis "$D" --split val --out "$T/prop"
grep -q '"patch": 14,' "$T/prop/propagate.json" && ok || bad "propagate.json: $(grep patch "$T/prop/propagate.json")"
expect_fail "--patch 16 on patch-14 features" "dav14.h5: features of 14-pixel patches, but --patch 16" \
  "$B"/kc-propagate --features "$T/dav14.h5" --davis "$D" --split val --out "$T/prop16" --patch 16
step "kc-propagate --patch 14" "$B"/kc-propagate --features "$T/dav14.h5" --davis "$D" --split val --out "$T/prop14" --patch 14
if diff -r -q -x propagate.json -x '.*' "$T/prop" "$T/prop14" >/dev/null; then ok; else bad "--patch 14 and the cache's patch differ"; fi
[ "$(ls "$T/prop/dots" | wc -l)" = 4 ] && ok || bad "propagation wrote $(ls "$T/prop/dots" | wc -l) frames, expected 4"

# ---- 4. the probe's size ----------------------------------------------------------------------------------
step "kc-probe train at square224, patch 14" "$B"/kc-probe train --features "$T/p224.h5" --labels "voc:$V:train" \
  --batch 2 --epochs 2 --drop-at 1 --out "$T/head224.safetensors"
expect_fail "kc-probe --size 480 on square480 at patch 14" "policy square480 \(490 pixels\), but --size 480" \
  "$B"/kc-probe train --features "$T/p480.h5" --labels "voc:$V:train" --batch 2 --epochs 2 --drop-at 1 --size 480 --out "$T/h.safetensors"
done_tests
