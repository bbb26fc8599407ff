#!/usr/bin/python3
"""tests/ref/saliency_metrics_ref.py — reference values for eval/saliency/sal_metrics.c.

Written from the definition of TokenCut's saliency metrics (unsupervised_saliency_detection/
metric.py: IoU and accuracy of the masks at 0.5, precision and recall at the 255 thresholds of
np.arange(0, 1, 1/255), F-beta with beta^2 = 0.3, the max over thresholds of its mean over images)
with torch ops on float32 tensors the way metric.py applies them, so that torch's own arithmetic
(its float32 divisions, its mean, its cascade sum over dim 0) gives the expected values.  Needs
torch 1.13, numpy, Pillow (/usr/bin/python3 here).  Run by hand from the repository's root:

    /usr/bin/python3 tests/ref/saliency_metrics_ref.py write [SHARED_DATA]
        writes tests/data/saliency/*: the synthetic cases (always), the real DAVIS cases (when
        SHARED_DATA, default ../shared/data, is there) and the cascade-sum expectations
    /usr/bin/python3 tests/ref/saliency_metrics_ref.py sweep FILE
        the cascade-sum expectations for rows 1..300 and up to 6000 (not committed; check with
        build/tests/test_sal_metrics --cascade FILE); also checks 1, 2 and 4 threads agree

Formats (little-endian):
  cascade.bin   "KCSALSUM" int32 version=1, int32 cases; per case int32 rows, int32 cols,
                int32 has_mean, float32 sum[cols] (torch.sum(x, dim=0)), [float32 mean[cols]]
                where x[i, k] = float32((i * 2654435761 + k * 40503) % 1000003) / float32(1000003)
  synth_in.bin  "KCSALIN1" int32 images; per image int32 h, int32 w, uint8 gt[h*w], float64 pred[h*w]
  SET.bin       (synth.bin, real.bin) "KCSALSET" int32 version=1, int32 images; per image
                float64 iou, float64 accuracy, int64 fg, int64 pred_fg, int64 pixels,
                float32 precision[255], float32 recall[255]; then float64 iou, float64 accuracy,
                float64 max_fbeta, int32 best_bin, int32 0, float32 fbar[255]
  real.txt      one image per line: gt=PATH|zero pred=KIND src=PATH [ann=PATH] (paths under
                SHARED_DATA), the prediction from src's RGB (convert('RGB')), s = R + 2G + B:
                  soft1020  s / 1020.0
                  exact     (s // 4) * (1.0 / 255): on the thresholds (a pixel on t_k does not pass it)
                  mix       0.5 where ann's L value is nonzero (another frame's annotation), + s / 2040.0
                  binary    1.0 where src's L value is nonzero (src: another frame's annotation), else 0.0
                  empty     0.0 everywhere
                gt=zero: an all-zero ground truth of src's size.  L values: convert('L'), checked here
                to equal Pillow's (R*19595 + G*38470 + B*7471 + 0x8000) >> 16 of convert('RGB').
"""
import os
import struct
import sys

import numpy as np
import torch
from PIL import Image

BINS = 255
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "data", "saliency")


# ---- the metrics, with torch as metric.py uses it ------------------------------------------
def image_metrics(gt, pred):
    """gt: (h, w) uint8, pred: (h, w) float64 -> dict of the per-image values."""
    gt_t, pred_t = torch.from_numpy(gt), torch.from_numpy(pred)
    g, p = gt_t > 0.5, pred_t > 0.5
    inter = torch.sum(g & p)
    union = torch.sum(g | p)
    iou = (inter.to(torch.float) / union).mean().item()
    acc = torch.mean((g == p).to(torch.float)).item()
    fg = gt_t.to(torch.bool)
    fg_area = torch.sum(fg).to(torch.float)
    prec, rec = [], []
    for split in np.arange(0.0, 1.0, 1.0 / BINS):
        m = pred_t > split
        tp = torch.sum(fg & m)
        area = torch.sum(m).to(torch.float)
        pr = tp / area
        pr[area == 0.0] = 1.0
        rc = tp / fg_area
        rc[fg_area == 0.0] = 1.0
        prec.append(pr.item())
        rec.append(rc.item())
    return dict(iou=iou, acc=acc, fg=int(fg.sum()), pred_fg=int(p.sum()), pixels=gt.size, prec=prec, rec=rec)


def dataset_metrics(images):
    iou = acc = 0.0
    for im in images:
        iou += im["iou"]
        acc += im["acc"]
    n = len(images)
    p = torch.tensor([im["prec"] for im in images])
    r = torch.tensor([im["rec"] for im in images])
    assert p.dtype == torch.float32 and p.shape == (n, BINS)
    f = ((1 + 0.3) * p * r) / (0.3 * p + r)
    f[f != f] = 0.0
    fbar = f.mean(dim=0)
    best = fbar.max().item()
    best_bin = int(np.flatnonzero(fbar.numpy() == np.float32(best))[0])
    return dict(iou=iou / n, acc=acc / n, max_fbeta=best, best_bin=best_bin, fbar=fbar.numpy())


def write_set(path, images, summary):
    out = [b"KCSALSET", struct.pack("<ii", 1, len(images))]
    for im in images:
        out.append(struct.pack("<ddqqq", im["iou"], im["acc"], im["fg"], im["pred_fg"], im["pixels"]))
        out.append(np.asarray(im["prec"], "<f4").tobytes() + np.asarray(im["rec"], "<f4").tobytes())
    out.append(struct.pack("<dddii", summary["iou"], summary["acc"], summary["max_fbeta"], summary["best_bin"], 0))
    out.append(np.asarray(summary["fbar"], "<f4").tobytes())
    with open(path + ".tmp", "wb") as fh:
        fh.write(b"".join(out))
    os.replace(path + ".tmp", path)
    print("%s: %d images, IoU %.17g acc %.17g maxFb %.9g at bin %d" % (
        path, len(images), summary["iou"], summary["acc"], summary["max_fbeta"], summary["best_bin"]))


# ---- synthetic 7x5 cases -------------------------------------------------------------------
def synthetic():
    rng = np.random.default_rng(20240611)
    h, w = 5, 7
    cases = []
    step = 1.0 / BINS
    for c in range(8):
        gt = (rng.random((h, w)) < 0.4).astype(np.uint8) * rng.choice([1, 38, 255], (h, w)).astype(np.uint8)
        pred = rng.random((h, w))
        if c % 4 == 1:  # on the thresholds exactly, and next to them
            ks = rng.integers(0, BINS, (h, w))
            pred = ks * step
            pred[0, :3] = [np.nextafter(7 * step, 1), np.nextafter(7 * step, 0), 0.5]
        if c % 4 == 2:  # binary
            pred = (rng.random((h, w)) < 0.5).astype(np.float64)
        if c == 3:      # empty prediction
            pred = np.zeros((h, w))
        if c == 5:      # empty ground truth
            gt = np.zeros((h, w), np.uint8)
        if c == 7:      # both empty at 0.5: IoU 0/0 = NaN (and TokenCut's mean IoU NaN)
            gt = np.zeros((h, w), np.uint8)
            pred = rng.random((h, w)) * 0.5
        cases.append((gt, pred))
    return cases


# ---- real DAVIS cases ----------------------------------------------------------------------
def luma(rgb):
    rgb = rgb.astype(np.int64)
    return ((rgb[..., 0] * 19595 + rgb[..., 1] * 38470 + rgb[..., 2] * 7471 + 0x8000) >> 16).astype(np.uint8)


def read_l(path):
    """convert('L') of an annotation, checked against Pillow's RGB->L formula on convert('RGB')."""
    im = Image.open(path)
    l = np.array(im.convert("L"))
    assert np.array_equal(l, luma(np.array(im.convert("RGB")))), path
    return l


def real_list(data):
    ann, jpg = "davis/Annotations/480p", "davis/JPEGImages/480p"
    kinds = ["soft1020", "exact", "binary", "mix"]
    rows = []
    for seq, frames in (("blackswan", range(0, 50)), ("car-shadow", range(0, 40, 2))):
        n = len(os.listdir(os.path.join(data, ann, seq)))
        for f in frames:
            kind = kinds[f % 4] if (seq, f) != ("car-shadow", 4) else "empty"
            src = "%s/%s/%05d.jpg" % (jpg, seq, f)
            if kind == "binary":
                src = "%s/%s/%05d.png" % (ann, seq, (f + 10) % n)
            line = "gt=%s/%s/%05d.png pred=%s src=%s" % (ann, seq, f, kind, src)
            if kind == "mix":
                line += " ann=%s/%s/%05d.png" % (ann, seq, (f + 3) % n)
            rows.append(line)
    rows.insert(30, "gt=zero pred=soft1020 src=%s/blackswan/00007.jpg" % jpg)
    return rows


def real_case(data, line):
    kv = dict(t.split("=", 1) for t in line.split())
    src = os.path.join(data, kv["src"])
    kind = kv["pred"]
    if kind == "binary":
        pred = (read_l(src) != 0).astype(np.float64)
    else:
        rgb = np.array(Image.open(src).convert("RGB")).astype(np.int64)
        s = rgb[..., 0] + 2 * rgb[..., 1] + rgb[..., 2]
        if kind == "soft1020":
            pred = s / 1020.0
        elif kind == "exact":
            pred = (s // 4) * (1.0 / BINS)
        elif kind == "mix":
            pred = 0.5 * (read_l(os.path.join(data, kv["ann"])) != 0).astype(np.float64) + s / 2040.0
        else:
            pred = np.zeros(s.shape)
    gt = np.zeros(pred.shape, np.uint8) if kv["gt"] == "zero" else read_l(os.path.join(data, kv["gt"]))
    assert gt.shape == pred.shape, line
    return gt, pred


# ---- torch's sum over dim 0 ----------------------------------------------------------------
def formula(rows, cols):
    i = np.arange(rows, dtype=np.int64)[:, None]
    k = np.arange(cols, dtype=np.int64)[None, :]
    m = (i * 2654435761 + k * 40503) % 1000003
    return m.astype(np.float32) / np.float32(1000003)


def cascade_cases(path, shapes, mean_from=1000, threads=(1,)):
    out = [b"KCSALSUM", struct.pack("<ii", 1, len(shapes))]
    seq_differs = 0
    for rows, cols in shapes:
        x = torch.from_numpy(formula(rows, cols))
        res = []
        for t in threads:
            torch.set_num_threads(t)
            res.append((torch.sum(x, dim=0).numpy().copy(), x.mean(dim=0).numpy().copy()))
        torch.set_num_threads(1)
        for s, m in res[1:]:
            assert np.array_equal(s, res[0][0]) and np.array_equal(m, res[0][1]), \
                "rows %d cols %d: threads %s differ" % (rows, cols, threads)
        s, m = res[0]
        seq = np.zeros(cols, np.float32)
        for r in formula(rows, cols):
            seq += r
        seq_differs += not np.array_equal(seq, s)
        has_mean = rows >= mean_from
        out.append(struct.pack("<iii", rows, cols, int(has_mean)) + s.astype("<f4").tobytes())
        if has_mean:
            out.append(m.astype("<f4").tobytes())
    with open(path + ".tmp", "wb") as fh:
        fh.write(b"".join(out))
    os.replace(path + ".tmp", path)
    print("%s: %d shapes (threads %s agree); a sequential float32 sum differs from torch's in %d" % (
        path, len(shapes), list(threads), seq_differs))


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "write":
        data = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "..", "..", "..", "shared", "data")
        torch.set_num_threads(1)
        os.makedirs(OUT, exist_ok=True)
        cases = synthetic()
        blob = [b"KCSALIN1", struct.pack("<i", len(cases))]
        for gt, pred in cases:
            blob.append(struct.pack("<ii", gt.shape[0], gt.shape[1]) + gt.tobytes() + pred.astype("<f8").tobytes())
        with open(os.path.join(OUT, "synth_in.bin"), "wb") as fh:
            fh.write(b"".join(blob))
        images = [image_metrics(gt, pred) for gt, pred in cases]
        write_set(os.path.join(OUT, "synth.bin"), images, dataset_metrics(images))
        if os.path.isdir(data):
            rows = real_list(data)
            images = [image_metrics(*real_case(data, line)) for line in rows]
            with open(os.path.join(OUT, "real.txt"), "w") as fh:
                fh.write("\n".join(rows) + "\n")
            write_set(os.path.join(OUT, "real.bin"), images, dataset_metrics(images))
        else:
            print("no shared data at %s: real cases not written" % data)
        shapes = [(n, BINS) for n in list(range(1, 21)) + [31, 32, 33, 47, 48, 49, 63, 64, 65, 71, 100, 127, 128,
                                                          129, 255, 256, 257, 300, 1000, 1024, 1025, 4096, 5019, 5168]]
        shapes += [(100, c) for c in (2, 3, 4, 5, 7, 8, 9, 31, 32, 33, 64, 100)]
        cascade_cases(os.path.join(OUT, "cascade.bin"), shapes, threads=(1, 2))
    elif len(sys.argv) >= 3 and sys.argv[1] == "sweep":
        big = [500, 1000, 1023, 1024, 1025, 2000, 4095, 4096, 4097, 5019, 5168, 6000]
        cascade_cases(sys.argv[2], [(n, BINS) for n in list(range(1, 301)) + big], mean_from=1, threads=(1, 2, 4))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
