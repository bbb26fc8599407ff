#!/usr/bin/python3
"""Reference outputs of the preprocessing policies at patch sizes other than 16, for
tests/test_resize.c, from Debian's Pillow 9.4, OpenCV 4.6 and NumPy.  Writes tests/data/policy/
(run from the project root):

    /usr/bin/python3 tests/ref/policy_refs.py [SHARED_DATA]

The sizes follow docs/design.md ("Preprocessing policies"), written here from the rule and not from
keycut's code: every side a multiple of the patch p,
    square480 / square224 / square448: S x S resized, S = p ceil(480 / p) (224, 448);
    short480: DINO's DAVIS size (short side 480, long side int(480 L / S / 64) * 64, a square image
              448 wide and 480 high), then each side p ceil(side / p);
    native16: no resize, zero padding bottom/right to p ceil(side / p).
Resamplers: square480 Image.resize(LANCZOS), short480 cv2.resize(INTER_LINEAR), square224/448
Image.resize(BILINEAR); then (x / 255 - mean) / std in float32, (3, H, W), padding 0.

  small.tsv + small.f32   the 37x29 image of tests/data/image/policy_in.rgb under every policy at
                          patches 14 and 8: policy patch H W sha256(float32 output); small.f32 holds
                          the native16 outputs themselves (for a max-diff report)
  real.tsv                policy patch relpath W H sha256(resized uint8, "-" for native16)
                          sha256(float32 output), patch 14, on real photos of the shared data
  real_round.tsv          the same for policy round (each side int(round(side / p)) * p, LANCZOS:
                          TokenCut's saliency resize) at patches 16, 14 and 8
  strips_<policy>.png     the first and last 16 rows of the patch-14 resized bytes of the first
                          real photo (lossless), for max-diff reports
"""
import hashlib
import os
import sys

import cv2
import numpy as np
from PIL import Image

OUT = "tests/data/policy"
SHARED = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("KC_SHARED_DATA", "../shared/data")
MEAN = np.array([0.485, 0.456, 0.406], np.float32)
STD_IN = np.array([0.229, 0.224, 0.225], np.float32)
STD_DAVIS = np.array([0.228, 0.224, 0.225], np.float32)


def up(side, p):
    return -(-side // p) * p


def size(policy, p, w, h):
    """(width, height) of the resized image (native16: the image's own)."""
    if policy in ("square480", "square224", "square448"):
        s = up(int(policy[6:]), p)
        return s, s
    if policy == "round":  # TokenCut's utils.resize_pil: Python's round, halves to even
        return int(round(w / p)) * p, int(round(h / p)) * p
    if policy == "short480":
        s, l = min(w, h), max(w, h)
        lo = int(480 * l / s / 64) * 64
        dw, dh = (480, lo) if w < h else (lo, 480) if h < w else (448, 480)
        return up(dw, p), up(dh, p)
    return w, h


def resized(policy, p, a):
    h, w = a.shape[:2]
    dw, dh = size(policy, p, w, h)
    if policy in ("square480", "round"):
        return np.asarray(Image.fromarray(a).resize((dw, dh), Image.LANCZOS))
    if policy == "short480":
        return cv2.resize(a, (dw, dh), interpolation=cv2.INTER_LINEAR)
    if policy in ("square224", "square448"):
        return np.asarray(Image.fromarray(a).resize((dw, dh), Image.BILINEAR))
    return a


def prepared(policy, p, r):
    std = STD_DAVIS if policy == "short480" else STD_IN
    x = (r.astype(np.float32) / np.float32(255) - MEAN) / std
    h, w = x.shape[:2]
    out = np.zeros((3, up(h, p), up(w, p)), np.float32)
    out[:, :h, :w] = x.transpose(2, 0, 1)
    return out


def sha(b):
    return hashlib.sha256(b).hexdigest()


def small():
    a = np.fromfile("tests/data/image/policy_in.rgb", np.uint8).reshape(29, 37, 3)
    with open(os.path.join(OUT, "small.tsv"), "w") as tsv, open(os.path.join(OUT, "small.f32"), "wb") as b:
        for p in (14, 8):
            for policy in ("square480", "short480", "native16", "square224", "square448"):
                out = prepared(policy, p, resized(policy, p, a))
                blob = out.astype("<f4").tobytes()
                tsv.write("%s\t%d\t%d\t%d\t%s\n" % (policy, p, out.shape[1], out.shape[2], sha(blob)))
                if policy == "native16":
                    b.write(blob)


def rgb_of(path):
    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"), dtype=np.uint8)


def real():
    if not os.path.isdir(SHARED):
        print("no shared data at %s: real.tsv not written" % SHARED)
        return
    rels = ["davis/JPEGImages/480p/%s/00000.jpg" % s for s in ("blackswan", "car-shadow", "libby")]
    for sub in ("davis_testdev_firstframe/JPEGImages/480p", "voc_labelme/JPEGImages", "voc_official/JPEGImages"):
        for root, _, files in sorted(os.walk(os.path.join(SHARED, sub))):
            rels += sorted(os.path.relpath(os.path.join(root, f), SHARED) for f in files if f.endswith(".jpg"))
    with open(os.path.join(OUT, "real.tsv"), "w") as tsv:
        for i, rel in enumerate(rels):
            a = rgb_of(os.path.join(SHARED, rel))
            for policy in ("square480", "short480", "native16"):
                r = np.ascontiguousarray(resized(policy, 14, a))
                blob = prepared(policy, 14, r).astype("<f4").tobytes()
                tsv.write("%s\t14\t%s\t%d\t%d\t%s\t%s\n" % (policy, rel, r.shape[1], r.shape[0],
                                                            "-" if policy == "native16" else sha(r.tobytes()), sha(blob)))
                if i == 0 and policy != "native16":
                    strips = np.concatenate([r[:16], r[-16:]], 0)
                    Image.fromarray(strips).save(os.path.join(OUT, "strips_%s.png" % policy), optimize=True)
    # policy round (TokenCut's saliency resize) at patches 16, 14 and 8
    with open(os.path.join(OUT, "real_round.tsv"), "w") as tsv:
        for rel in rels:
            a = rgb_of(os.path.join(SHARED, rel))
            for p in (16, 14, 8):
                r = np.ascontiguousarray(resized("round", p, a))
                blob = prepared("round", p, r).astype("<f4").tobytes()
                tsv.write("round\t%d\t%s\t%d\t%d\t%s\t%s\n" % (p, rel, r.shape[1], r.shape[0], sha(r.tobytes()), sha(blob)))


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    small()
    real()
    print("wrote", OUT)
