#!/usr/bin/python3
"""tests/ref/saliency_ref.py — an independent reference of TokenCut's saliency protocol
(unsupervised_saliency_detection/get_saliency.py) for kc-saliency, end to end from the keys.

Written from TokenCut's steps, with the libraries it uses (not a transcription of keycut's C):
  * the image list: sorted(os.listdir(<image folder>)) of the root's layout; the ground truth
    <name>.png with '.jpg' replaced, PIL convert('L');
  * TokenCut's resize (utils.resize_pil): each side int(round(side / 16)) * 16, Image.LANCZOS; the
    keys cache's grid must be that size over the patch;
  * ncut() on the cache's keys (N, 384): F.normalize over the channels, A = feats^T feats in
    float32 (torch), A > tau (0.2), zeros replaced by eps 1e-5, D = diag(row sums),
    scipy.linalg.eigh(D - A, D, subset_by_index=[1, 2]), the second-smallest vector, split at its
    mean, seed argmax |v|, flipped when the seed is not in the split, scipy.ndimage.label of the
    (feat_h, feat_w) map and the seed's component; F.interpolate(mode='nearest') of it (a float64
    tensor) to the image's (h, w);
  * the bilateral solver of tests/ref/refine_ref.py (SciPy's cg, TokenCut's constants) with sigmas
    16 / 16 / 8 on the original image;
  * metric.py's metrics by tests/ref/saliency_metrics_ref.py (torch, float32 where metric.py is).

  saliency_ref.py check ROOT KEYS.h5 SCORES_DIR SOFT_DIR PNG_DIR MASKS.h5
      compares, per image: the decoder's mask (bit 0 of PNG_DIR/<id>.png) with keycut's grid mask
      (MASKS.h5) brought to the image by torch's nearest rule (equal, always), that grid with ncut's
      above (equal; an image whose cut rests within 2e-6 of a decision is reported, not failed, and on a
      degenerate graph, eigengap below 1e-6, where eigh's vector is arbitrary, keycut's mask must be
      empty and the reference continues from it), the
      solver's output (SOFT_DIR/<id>.npy) with the solver above (within 1e-6), the scores of
      SCORES_DIR/<setting>.csv and summary.csv with metric.py's on keycut's own masks (within 1e-9),
      and prints the reference's metrics on its own masks beside them.  Exit 1 on a mismatch.
"""
import csv
import os
import sys

import h5py
import numpy as np
import scipy.linalg
import torch
import torch.nn.functional as F
from PIL import Image
from scipy import ndimage

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import refine_ref  # noqa: E402
import saliency_metrics_ref  # noqa: E402

LAYOUTS = [("images", "ground_truth_mask"), ("DUTS-TE-Image", "DUTS-TE-Mask"),
           ("DUT-OMRON-image", "pixelwiseGT-new-PNG"), ("img", "gt")]
PATCH, TAU, EPS = 16, 0.2, 1e-5
THRESHOLDS = np.arange(0.0, 1.0, 1.0 / 255)  # metric.py's: pred > t


def layout(root):
    found = [p for p in LAYOUTS if os.path.isdir(os.path.join(root, p[0]))]
    assert len(found) == 1, "%s: %d layouts" % (root, len(found))
    return [os.path.join(root, d) for d in found[0]]


def upsample(grid, h, w):
    """TokenCut's F.interpolate(mode='nearest') of a (fh, fw) float64 map to (h, w)."""
    return F.interpolate(torch.from_numpy(np.ascontiguousarray(grid, np.float64))[None, None], size=(h, w),
                         mode="nearest")[0, 0].numpy()


def ncut_mask(keys, fh, fw, h, w):
    """TokenCut's ncut() on keys (N, C) float32 -> (mask (h, w) float64, margin of its decisions
    relative to max |v|, eigengap lambda3 - lambda2)."""
    feats = F.normalize(torch.from_numpy(np.ascontiguousarray(keys.T)), p=2, dim=0)
    A = (feats.transpose(0, 1) @ feats).numpy()
    A = np.where(A > TAU, 1.0, EPS)
    D = np.diag(A.sum(axis=1))
    vals, vecs = scipy.linalg.eigh(D - A, D, subset_by_index=[1, 2])
    v = vecs[:, 0]
    avg = np.sum(v) / len(v)
    part = v > avg
    seed = int(np.argmax(np.abs(v)))
    if not part[seed]:
        part = np.logical_not(part)
    scale = np.max(np.abs(v))
    margin = min(np.min(np.abs(v - avg)), np.sort(np.abs(v))[-1] - np.sort(np.abs(v))[-2]) / scale
    labels, _ = ndimage.label(part.reshape(fh, fw).astype(float))
    comp = np.zeros((fh, fw))
    comp[labels == labels.reshape(-1)[seed]] = 1
    return upsample(comp, h, w), comp, margin, vals[1] - vals[0]


def image_fbeta(m, k):
    """metric.py's F-beta of one image at threshold k (float32, nan -> 0)."""
    p, r = torch.tensor([m["prec"][k]]), torch.tensor([m["rec"][k]])
    f = ((1 + 0.3) * p * r) / (0.3 * p + r)
    f[f != f] = 0.0
    return f.item()


def read_csv(path):
    with open(path) as fh:
        return list(csv.DictReader(fh))


def close(a, b, tol):
    a, b = float(a), float(b)
    return (np.isnan(a) and np.isnan(b)) or abs(a - b) <= tol


def check(root, keys_path, scores, soft_dir, png_dir, masks_path):
    img_dir, gt_dir = layout(root)
    names = sorted(os.listdir(img_dir))
    summary = read_csv(os.path.join(scores, "summary.csv"))
    setting = summary[0]["setting"]
    rows = read_csv(os.path.join(scores, setting + ".csv"))
    bad, knife, degenerate, worst_soft = [], 0, 0, 0.0
    ours = {"none": [], "bs": []}
    refs = {"none": [], "bs": []}
    with h5py.File(keys_path, "r") as kf, h5py.File(masks_path, "r") as mf:
        for name in names:
            ident = os.path.splitext(name)[0]
            rgb_img = Image.open(os.path.join(img_dir, name)).convert("RGB")
            w, h = rgb_img.size
            nw, nh = int(round(w / PATCH)) * PATCH, int(round(h / PATCH)) * PATCH
            fh, fw = nh // PATCH, nw // PATCH
            keys = np.asarray(kf["features/keys/" + ident], np.float32)
            if keys.shape[0] != fh * fw:
                bad.append("%s: %d keys, TokenCut's resize gives a %dx%d grid" % (ident, keys.shape[0], fw, fh))
                continue
            gt = np.array(Image.open(os.path.join(gt_dir, name.replace(".jpg", ".png"))).convert("L"))
            mask, grid, margin, gap = ncut_mask(keys, fh, fw, h, w)
            png = np.array(Image.open(os.path.join(png_dir, ident + ".png")))
            kc_mask = (png & 1).astype(np.float64)
            # keycut's own grid mask brought to the image by TokenCut's rule: exactly its pixel mask,
            # knife edge or not
            kc_grid = (np.asarray(mf["masks/%s/%s" % (setting, ident)]) > 0).astype(np.float64)
            if kc_grid.shape != (fh, fw) or not np.array_equal(upsample(kc_grid, h, w), kc_mask):
                bad.append("%s: the pixel mask is not keycut's grid mask brought to the image by torch's nearest rule" % ident)
            if gap < 1e-6:
                # a degenerate graph: eigh returns an arbitrary vector of a multiple eigenvalue, so
                # TokenCut's mask is undefined; keycut's rule (docs/design.md, Decoders) is an empty mask
                degenerate += 1
                if kc_mask.any():
                    bad.append("%s: degenerate graph (eigengap %.3g) but keycut's mask is not empty" % (ident, gap))
                mask = upsample(kc_grid, h, w)
            elif not np.array_equal(kc_grid, grid):
                if margin <= 2e-6:  # a cut on a knife edge: the reference goes on from keycut's grid
                    knife += 1
                    mask = upsample(kc_grid, h, w)
                else:
                    bad.append("%s: decoder mask differs in %d cells (margin %.3g)" % (ident, int((kc_grid != grid).sum()), margin))
            rgb = np.array(rgb_img)
            ref_soft, _ = refine_ref.bilateral_solver(rgb, mask, 16.0, 16.0, 8.0)
            kc_soft = np.load(os.path.join(soft_dir, ident + ".npy"))
            d = float(np.max(np.abs(kc_soft - ref_soft))) if kc_mask.shape == mask.shape else np.inf
            worst_soft = max(worst_soft, d)
            if d > 1e-6:
                bad.append("%s: solver output differs by %.3g" % (ident, d))
            if ((kc_soft > 0.5) != ((png >> 1) & 1).astype(bool)).any():
                bad.append("%s: PNG bit 1 is not the solver's output > 0.5" % ident)
            for kind, pred, ref in (("none", kc_mask, mask), ("bs", kc_soft, ref_soft)):
                ours[kind].append(saliency_metrics_ref.image_metrics(gt, pred))
                # the reference's own masks give the same numbers when every pixel falls on the same
                # side of 0.5 and of each of the 255 thresholds: computed again only otherwise
                same = np.array_equal(pred > 0.5, ref > 0.5) and np.array_equal(
                    np.searchsorted(THRESHOLDS, pred, side="left"), np.searchsorted(THRESHOLDS, ref, side="left"))
                refs[kind].append(ours[kind][-1] if same else saliency_metrics_ref.image_metrics(gt, ref))
    by_id = {(r["id"], r["refine"]): r for r in rows}
    worst = 0.0
    for kind in ("none", "bs"):
        s = saliency_metrics_ref.dataset_metrics(ours[kind])
        sr = saliency_metrics_ref.dataset_metrics(refs[kind])
        row = [r for r in summary if r["refine"] == kind][0]
        for key, mine in (("max_fbeta", s["max_fbeta"]), ("iou", s["iou"]), ("accuracy", s["acc"])):
            worst = max(worst, abs(float(row[key]) - mine) if not np.isnan(mine) else 0.0)
            if not close(row[key], mine, 1e-9):
                bad.append("summary %s %s: keycut %s, metric.py %.17g" % (kind, key, row[key], mine))
        for i, name in enumerate(names[:len(ours[kind])]):
            ident = os.path.splitext(name)[0]
            r, m = by_id.get((ident, kind)), ours[kind][i]
            fb = image_fbeta(m, s["best_bin"])
            for key, mine in (("iou", m["iou"]), ("accuracy", m["acc"]), ("fbeta", fb)):
                if r is None or not close(r[key], mine, 1e-9):
                    bad.append("%s %s %s: keycut %s, metric.py %.17g" % (ident, kind, key, r and r[key], mine))
        print("  %-4s keycut  maxF %.6f IoU %.6f Acc %.6f | reference masks maxF %.6f IoU %.6f Acc %.6f" % (
            kind, float(row["max_fbeta"]), float(row["iou"]), float(row["accuracy"]), sr["max_fbeta"], sr["iou"], sr["acc"]))
    print("%s: %d images, %d decoder masks on a knife edge, %d degenerate graphs (empty masks), solver worst |diff| "
          "%.3g, metrics worst |diff| %.3g" % (root, len(names), knife, degenerate, worst_soft, worst))
    for b in bad[:20]:
        print("MISMATCH " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) != 8 or sys.argv[1] != "check":
        sys.exit(__doc__)
    sys.exit(check(*sys.argv[2:]))
