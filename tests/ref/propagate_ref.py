#!/usr/bin/python3
"""tests/ref/propagate_ref.py — DINO's DAVIS label propagation in PyTorch, dense, the simple way.

Written from the protocol of docs/design.md ("DAVIS-2017 label propagation"): a full (n x n) affinity per
context frame, multiplied by a 0/1 window mask, top-k over all context frames together, PyTorch's
bilinear upsampling, per-channel min-max, torch.max, Pillow NEAREST resizes.

    propagate_ref.py --features FILE.h5 --davis ROOT --split NAME --check DIR [--kind tokens]
        [--window 12] [--topk 5] [--temperature 0.1] [--context 7] [--patch 16] [--tie 1e-6]

compares kc-propagate's PNGs in DIR/<seq>/ with the reference labels computed in float64 (as
kc-propagate does; DINO runs float32): every pixel must agree except ties: the best and
second-best normalised channel values within --tie, or a label that changes between float32 and
float64 (a near-tie upstream: in a top-k selection or in soft labels carried from frame to frame).
With --out DIR2 instead of --check it writes its own PNGs.
With --expected DIR3 instead of --check it writes the reference tests/test_propagate.c reads from
tests/data/propagate/<case>/ (so make test needs no Python): per sequence DIR3/<seq>.png, the
float64 labels of its frames stacked top to bottom, 255 where a pixel is a tie as above (either
label passes), and DIR3/inputs.sha256, the sha256 over every image of the features cache in
/index/ids order (its id, a NUL byte, its float32 values little-endian); the test uses the PNGs
only when its features hash to that value (another JPEG decoder gives other features: it then
runs this script).
    propagate_ref.py --write-nearest tests/data/davis/nearest.txt   # Pillow NEAREST indices
"""
import argparse
import glob
import hashlib
import os
import sys

import h5py
import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image


def window_mask(gh, gw, win):
    ys, xs = np.divmod(np.arange(gh * gw), gw)
    m = (np.abs(ys[:, None] - ys[None, :]) <= win) & (np.abs(xs[:, None] - xs[None, :]) <= win)
    return torch.from_numpy(m.astype(np.float32))  # (target, source)


def propagate_step(feat_tar, ctx_feats, ctx_segs, mask, a):
    tar = F.normalize(feat_tar, dim=1, p=2)                      # (n, dim)
    src = F.normalize(torch.stack(ctx_feats), dim=2, p=2)          # (m, n, dim)
    # exp(tar . src / temperature) * mask, (m, t, s); in place: the same values, no (m, t, s) copies
    aff = torch.einsum("td,msd->mts", tar, src).div_(a.temperature).exp_().mul_(mask[None])
    aff = aff.permute(0, 2, 1).reshape(-1, tar.shape[0])           # (m*s, t)
    kth = torch.topk(aff, dim=0, k=a.topk).values.min(dim=0).values
    aff.masked_fill_(aff < kth, 0)
    aff.div_(aff.sum(dim=0, keepdim=True))
    segs = torch.stack(ctx_segs).reshape(-1, ctx_segs[0].shape[1])  # (m*s, C)
    return aff.T @ segs                                            # (t, C)


def to_labels(soft, gh, gw, w, h, patch):
    C = soft.shape[1]
    x = soft.T.reshape(1, C, gh, gw)
    up = F.interpolate(x, scale_factor=patch, mode="bilinear", align_corners=False,
                       recompute_scale_factor=False)[0]
    for c in range(C):
        m = up[c]
        if m.max() > 0:
            m = m - m.min()
            up[c] = m / m.max()
    lab = torch.max(up, dim=0).indices.numpy().astype(np.uint8)
    srt = torch.sort(up, dim=0, descending=True).values
    margin = (srt[0] - srt[1]).numpy() if C > 1 else np.full(lab.shape, np.inf, np.float32)
    lab = np.array(Image.fromarray(lab).resize((w, h), Image.NEAREST))
    # the same nearest sampling for the margin, through an index image
    iy = np.array(Image.fromarray(np.repeat(np.arange(up.shape[1], dtype=np.int32)[:, None], up.shape[2], 1))
                  .resize((w, h), Image.NEAREST))
    ix = np.array(Image.fromarray(np.repeat(np.arange(up.shape[2], dtype=np.int32)[None, :], up.shape[1], 0))
                  .resize((w, h), Image.NEAREST))
    return lab, margin[iy, ix]


NEAREST_CASES = [(854, 52), (832, 854), (480, 30), (1152, 72), (1301, 80), (910, 56), (64, 854), (7, 3), (3, 7)]


def write_nearest(path):
    """The source index Pillow's NEAREST resize picks for each output position (tests/data/davis)."""
    with open(path, "w") as f:
        f.write("# source width, output width, the source column of every output column (Pillow %s)\n"
                % Image.__version__)
        for sw, dw in NEAREST_CASES:
            idx = np.array(Image.fromarray(np.arange(sw, dtype=np.int32)[None]).resize((dw, 1), Image.NEAREST))[0]
            f.write("%d %d %s\n" % (sw, dw, " ".join(str(int(v)) for v in idx)))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--write-nearest":
        return write_nearest(sys.argv[2])
    ap = argparse.ArgumentParser()
    ap.add_argument("--features", required=True)
    ap.add_argument("--davis", required=True)
    ap.add_argument("--split", required=True)
    ap.add_argument("--check")
    ap.add_argument("--out")
    ap.add_argument("--expected")
    ap.add_argument("--kind", default="tokens")
    ap.add_argument("--window", type=int, default=12)
    ap.add_argument("--topk", type=int, default=5)
    ap.add_argument("--temperature", type=float, default=0.1)
    ap.add_argument("--context", type=int, default=7)
    ap.add_argument("--patch", type=int, default=16)
    ap.add_argument("--tie", type=float, default=1e-6)
    a = ap.parse_args()
    torch.set_grad_enabled(False)
    h5 = h5py.File(a.features, "r")
    ids = [s.decode() if isinstance(s, bytes) else s for s in h5["index/ids"][...]]
    grid = {i: tuple(g) for i, g in zip(ids, h5["index/grid"][...])}
    seqs = [s.strip() for s in open(os.path.join(a.davis, "ImageSets", "2017", a.split + ".txt")) if s.strip()]
    n_px = n_diff = n_bad = n_cond = 0
    if a.expected:
        os.makedirs(a.expected, exist_ok=True)
        hs = hashlib.sha256()
        for i in ids:
            hs.update(i.encode() + b"\0")
            hs.update(np.ascontiguousarray(h5["features/%s/%s" % (a.kind, i)][...], dtype="<f4").tobytes())
        with open(os.path.join(a.expected, "inputs.sha256"), "w") as f:
            f.write("%s\n" % hs.hexdigest())
    for seq in seqs:
        frames = sorted(os.path.splitext(os.path.basename(p))[0]
                        for p in glob.glob(os.path.join(a.davis, "JPEGImages", "480p", seq, "*.jpg")))
        ann = Image.open(os.path.join(a.davis, "Annotations", "480p", seq, frames[0] + ".png"))
        w, h = ann.size
        gh, gw = (int(v) for v in grid[seq + "/" + frames[0]])
        small = np.array(ann.resize((gw, gh), Image.NEAREST))
        C = int(small.max()) + 1
        mask = window_mask(gh, gw, a.window)
        # float32 as DINO runs it; with --check also float64: a pixel whose label differs between
        # the two precisions is numerically a tie (a near-tie upstream, in a top-k or a soft label)
        dtypes = [torch.float32, torch.float64] if a.check or a.expected else [torch.float32]
        outs = {}
        for dt in dtypes:
            first_seg = torch.from_numpy(np.eye(C)[small.reshape(-1)]).to(dt)  # (n, C)
            feats = lambda f: torch.from_numpy(h5["features/%s/%s/%s" % (a.kind, seq, f)][...]).to(dt)
            first_feat = feats(frames[0])
            queue = []
            out = {frames[0]: (np.asarray(ann), None)}
            for f in frames[1:]:
                ft = feats(f)
                soft = propagate_step(ft, [first_feat] + [q[0] for q in queue], [first_seg] + [q[1] for q in queue],
                                      mask.to(dt), a)
                if a.context > 0:
                    if len(queue) == a.context:
                        queue.pop(0)
                    queue.append((ft, soft))
                out[f] = to_labels(soft, gh, gw, w, h, a.patch)
            outs[dt] = out
        stack = []
        for f, (lab, margin) in outs[dtypes[-1]].items():
            if a.out:
                os.makedirs(os.path.join(a.out, seq), exist_ok=True)
                im = Image.fromarray(lab)
                im.putpalette(ann.getpalette())
                im.save(os.path.join(a.out, seq, f + ".png"))
            if a.expected:
                lab32, margin32 = outs[torch.float32][f]
                e = lab.copy()
                if margin is not None:
                    e[(lab != lab32) | (margin <= a.tie)] = 255
                stack.append(e)
                continue
            if a.check:
                got = np.array(Image.open(os.path.join(a.check, seq, f + ".png")))
                if got.shape != lab.shape:
                    print("%s/%s: size %s, reference %s" % (seq, f, got.shape, lab.shape))
                    n_bad += 1
                    continue
                lab32, margin32 = outs[torch.float32][f]
                diff = got != lab
                n_px += lab.size
                n_diff += int(diff.sum())
                if margin is None:
                    bad = diff
                else:
                    cond = (lab != lab32) | (margin <= a.tie)
                    n_cond += int((diff & cond).sum())
                    bad = diff & ~cond
                if bad.any():
                    ys, xs = np.nonzero(bad)
                    print("%s/%s: %d pixels differ beyond ties, e.g. (%d,%d) ours %d ref %d margin %.3g"
                          % (seq, f, bad.sum(), xs[0], ys[0], got[ys[0], xs[0]], lab[ys[0], xs[0]],
                             -1 if margin is None else margin[ys[0], xs[0]]))
                    n_bad += int(bad.sum())
        if a.expected:
            im = Image.fromarray(np.concatenate(stack, axis=0))
            im.putpalette(ann.getpalette())
            im.save(os.path.join(a.expected, seq + ".png"), optimize=True)
            print("%s: %d frames, %d tie pixels" % (seq, len(stack), sum(int((e == 255).sum()) for e in stack)))
    if a.expected:
        return
    if a.check:
        print("propagation parity: %d pixels, %d differ (%d of them ties: margin <= %g or float32/float64 "
              "labels disagree), %d beyond ties" % (n_px, n_diff, n_cond, a.tie, n_bad))
        sys.exit(1 if n_bad else 0)


if __name__ == "__main__":
    main()
