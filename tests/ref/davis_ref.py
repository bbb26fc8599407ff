#!/usr/bin/python3
"""tests/ref/davis_ref.py — the DAVIS-2017 semi-supervised J&F in NumPy/OpenCV, the simple way.

Written from the protocol in docs/design.md ("J&F") and the official tool's documented behaviour, as
an independent check of eval/davis/davis_jf.c on data the shared official outputs do not cover
(several objects, ids above K, ...), and as the speed comparison of tests/bench_davis.sh.

    davis_ref.py score --results DIR --davis ROOT --split NAME --out FILE.json [--sequences N]
    davis_ref.py edges N...          # the decay-bin edges for n scored frames
"""
import argparse
import glob
import json
import math
import os
import sys
import time

import cv2
import numpy as np
from PIL import Image


def edges(n):
    return (np.round(np.linspace(1, n, 5) + 1e-10) - 1).astype(int)


def statistics(v):
    v = np.asarray(v, dtype=np.float64)
    e = edges(len(v))
    bins = [v[e[i]:e[i + 1] + 1] for i in range(4)]
    return [float(np.mean(v)), float(np.mean(v > 0.5)), float(np.mean(bins[0]) - np.mean(bins[3]))]


def boundary(mask):
    """One-pixel boundary: the pixel differs from its right, lower or lower-right neighbour."""
    m = mask.astype(bool)
    right = np.zeros_like(m)
    below = np.zeros_like(m)
    diag = np.zeros_like(m)
    right[:, :-1] = m[:, 1:]
    below[:-1, :] = m[1:, :]
    diag[:-1, :-1] = m[1:, 1:]
    b = (m ^ right) | (m ^ below) | (m ^ diag)
    b[-1, :] = m[-1, :] ^ right[-1, :]
    b[:, -1] = m[:, -1] ^ below[:, -1]
    b[-1, -1] = False
    return b


def disk(r):
    ax = np.arange(-r, r + 1)
    xx, yy = np.meshgrid(ax, ax)
    return (xx ** 2 + yy ** 2 <= r ** 2).astype(np.uint8)


def f_measure(pred, gt):
    r = int(math.ceil(0.008 * math.hypot(*pred.shape)))
    bp, bg = boundary(pred), boundary(gt)
    k = disk(r)
    dp = cv2.dilate(bp.astype(np.uint8), k) > 0
    dg = cv2.dilate(bg.astype(np.uint8), k) > 0
    n_p, n_g = int(bp.sum()), int(bg.sum())
    if n_p == 0 and n_g > 0:
        prec, rec = 1.0, 0.0
    elif n_p > 0 and n_g == 0:
        prec, rec = 0.0, 1.0
    elif n_p == 0 and n_g == 0:
        prec, rec = 1.0, 1.0
    else:
        prec = float((bp & dg).sum()) / n_p
        rec = float((bg & dp).sum()) / n_g
    return 0.0 if prec + rec == 0 else 2 * prec * rec / (prec + rec)


def jaccard(pred, gt):
    union = np.logical_or(pred, gt).sum()
    return 1.0 if union == 0 else float(np.logical_and(pred, gt).sum()) / float(union)


def score(results, root, split, limit=None):
    seqs = [s.strip() for s in open(os.path.join(root, "ImageSets", "2017", split + ".txt")) if s.strip()]
    if limit:
        seqs = seqs[:limit]
    objects = {}
    for seq in seqs:
        paths = sorted(glob.glob(os.path.join(root, "Annotations", "480p", seq, "*.png")))
        gts = [np.array(Image.open(p)) for p in paths]
        for g in gts:
            g[g == 255] = 0
        K = int(gts[0].max())
        names = [os.path.splitext(os.path.basename(p))[0] for p in paths][1:-1]
        J = np.zeros((K, len(names)))
        F = np.zeros((K, len(names)))
        for t, name in enumerate(names):
            gt = gts[t + 1]
            res = np.array(Image.open(os.path.join(results, seq, name + ".png")))
            if res.max() > K:
                sys.exit("%s/%s: result id %d above %d" % (seq, name, res.max(), K))
            for k in range(1, K + 1):
                J[k - 1, t] = jaccard(res == k, gt == k)
                F[k - 1, t] = f_measure(res == k, gt == k)
        for k in range(1, K + 1):
            objects["%s_%d" % (seq, k)] = {"frames": names, "J": J[k - 1].tolist(), "F": F[k - 1].tolist(),
                                           "J-stats(M,R,D)": statistics(J[k - 1]),
                                           "F-stats(M,R,D)": statistics(F[k - 1])}
    js = np.array([o["J-stats(M,R,D)"] for o in objects.values()])
    fs = np.array([o["F-stats(M,R,D)"] for o in objects.values()])
    g = {"J-Mean": js[:, 0].mean(), "J-Recall": js[:, 1].mean(), "J-Decay": js[:, 2].mean(),
         "F-Mean": fs[:, 0].mean(), "F-Recall": fs[:, 1].mean(), "F-Decay": fs[:, 2].mean()}
    g["J&F-Mean"] = (g["J-Mean"] + g["F-Mean"]) / 2
    return {"global": {k: float(v) for k, v in g.items()}, "per_frame": objects}


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("score")
    s.add_argument("--results", required=True)
    s.add_argument("--davis", required=True)
    s.add_argument("--split", required=True)
    s.add_argument("--out", required=True)
    s.add_argument("--sequences", type=int, default=None)
    e = sub.add_parser("edges")
    e.add_argument("n", type=int, nargs="+")
    a = ap.parse_args()
    if a.cmd == "edges":
        for n in a.n:
            print(n, " ".join(str(x) for x in edges(n)))
        return
    t0 = time.time()
    out = score(a.results, a.davis, a.split, a.sequences)
    out["seconds"] = time.time() - t0
    with open(a.out, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
