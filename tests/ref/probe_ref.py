#!/usr/bin/python3
"""tests/ref/probe_ref.py — an independent PyTorch implementation of the linear probe protocol of
issue 21 (Leopart's linear head), written from the issue's text, to check kc-probe against.

It trains torch.nn.Conv2d(D, C, 1) on the cached tokens (read with h5py) with
F.interpolate(bilinear, align_corners=False) of the logits to M x M, F.cross_entropy(ignore_index=255),
torch.optim.SGD(momentum, weight_decay) and MultiStepLR([drop_at], 0.1), the labels brought to S x S
by Pillow's NEAREST and then to M x M by F.interpolate(nearest).  Only the initial head and the
image order of each epoch are taken from kc-probe (its --trace folder: the random draws are the
tool's, the rest is this script's), then the results are compared with kc-probe's:

  probe_ref.py --trace DIR --features TRAIN.h5 --labels ROOT --kind voc|davis [--label-dir NAME]
               --classes C --epochs E --batch B --lr LR --drop-at K --momentum 0.9 --weight-decay 1e-4
               --mask M --size S --head HEAD.safetensors --loss HEAD.loss.csv
               [--val-features VAL.h5 --val-ids IDS --val-labels ROOT --val-kind voc --summary DIR/summary.csv]

Tolerances (issue 21): the final head within 1e-3 of max|W|, every epoch's loss within 1e-4
relative, the mIoU within 0.05 points.  Prints the worst differences; exit 1 when one is over.
"""
import argparse
import json
import os
import struct
import sys

import h5py
import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    hdr = json.loads(data[8:8 + n])
    out = {}
    for k, v in hdr.items():
        if k == "__metadata__":
            continue
        assert v["dtype"] == "F32", v
        a, b = v["data_offsets"]
        out[k] = np.frombuffer(data[8 + n + a:8 + n + b], dtype="<f4").reshape(v["shape"]).copy()
    return out


def label_path(root, kind, label_dir, ident):
    if kind == "davis":
        return os.path.join(root, "Annotations", "480p", ident + ".png")
    return os.path.join(root, label_dir, ident + ".png")


def load_labels(root, kind, label_dir, ids, S, M):
    out = []
    for i in ids:
        lab = np.asarray(Image.open(label_path(root, kind, label_dir, i)))  # palette indices / gray values
        big = Image.fromarray(lab.astype(np.uint8), mode="L").resize((S, S), Image.NEAREST)
        t = torch.from_numpy(np.asarray(big).astype(np.float32))[None, None]
        small = F.interpolate(t, size=(M, M), mode="nearest")[0, 0].long()
        out.append(small)
    return torch.stack(out)


def load_tokens(path, ids):
    with h5py.File(path, "r") as f:
        grid = f["index/grid"][0]
        toks = np.stack([f["features/tokens/" + i][()] for i in ids])
    gh, gw = int(grid[0]), int(grid[1])
    n, g, d = toks.shape
    assert g == gh * gw
    # (n, G, D) -> (n, D, gh, gw): a 1x1 convolution over the patch grid
    return torch.from_numpy(toks).reshape(n, gh, gw, d).permute(0, 3, 1, 2).contiguous()


def miou_of(conv, x, y, C, M):
    """y: a (n, M, M) tensor, or a list of full-size label maps (--eval-size full)"""
    conf = torch.zeros(C, C, dtype=torch.int64)
    with torch.no_grad():
        for k in range(0, x.shape[0], 16):
            if isinstance(y, list):  # each image at its own size
                for j in range(k, min(k + 16, x.shape[0])):
                    t = y[j]
                    pred = F.interpolate(conv(x[j:j + 1]), size=tuple(t.shape), mode="bilinear", align_corners=False).argmax(1)[0]
                    v = t != 255
                    conf += torch.bincount(t[v] * C + pred[v], minlength=C * C).reshape(C, C)
                continue
            logits = F.interpolate(conv(x[k:k + 16]), size=(M, M), mode="bilinear", align_corners=False)
            pred = logits.argmax(1)
            t = y[k:k + 16]
            v = t != 255
            conf += torch.bincount(t[v] * C + pred[v], minlength=C * C).reshape(C, C)
    tp = conf.diag().double()
    den = conf.sum(0).double() + conf.sum(1).double() - tp
    ok = den > 0
    return float((tp[ok] / den[ok]).mean()), int(ok.sum())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trace", required=True)
    ap.add_argument("--features", required=True)
    ap.add_argument("--labels", required=True)
    ap.add_argument("--kind", default="voc")
    ap.add_argument("--label-dir", default="SegmentationClass")
    ap.add_argument("--classes", type=int, default=21)
    ap.add_argument("--epochs", type=int, default=25)
    ap.add_argument("--batch", type=int, default=60)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--drop-at", type=int, default=20)
    ap.add_argument("--momentum", type=float, default=0.9)
    ap.add_argument("--weight-decay", type=float, default=1e-4)
    ap.add_argument("--mask", type=int, default=100)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--head", required=True)
    ap.add_argument("--loss", required=True)
    ap.add_argument("--val-features")
    ap.add_argument("--val-ids")
    ap.add_argument("--val-labels")
    ap.add_argument("--val-kind", default="voc")
    ap.add_argument("--val-label-dir", default="SegmentationClass")
    ap.add_argument("--summary")
    ap.add_argument("--val-full", action="store_true", help="compare at each label's own size (--eval-size full)")
    a = ap.parse_args()
    torch.set_num_threads(max(1, os.cpu_count() or 1))

    ids = open(os.path.join(a.trace, "ids.txt")).read().split()
    orders = [list(map(int, l.split())) for l in open(os.path.join(a.trace, "orders.txt")).read().strip().split("\n")]
    init = read_safetensors(os.path.join(a.trace, "init.safetensors"))
    x = load_tokens(a.features, ids)
    y = load_labels(a.labels, a.kind, a.label_dir, ids, a.size, a.mask)
    C, D = init["weight"].shape
    assert C == a.classes
    conv = torch.nn.Conv2d(D, C, 1)
    with torch.no_grad():
        conv.weight.copy_(torch.from_numpy(init["weight"]).reshape(C, D, 1, 1))
        conv.bias.copy_(torch.from_numpy(init["bias"]))
    opt = torch.optim.SGD(conv.parameters(), lr=a.lr, momentum=a.momentum, weight_decay=a.weight_decay)
    sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[a.drop_at], gamma=0.1)
    n = len(ids)
    losses = []
    for e in range(a.epochs):
        order = orders[e]
        batch_losses = []
        for b in range(n // a.batch):  # the last short batch is dropped
            sel = torch.tensor(order[b * a.batch:(b + 1) * a.batch])
            logits = F.interpolate(conv(x[sel]), size=(a.mask, a.mask), mode="bilinear", align_corners=False)
            loss = F.cross_entropy(logits, y[sel], ignore_index=255)
            opt.zero_grad()
            loss.backward()
            opt.step()
            batch_losses.append(float(loss))
        losses.append(sum(batch_losses) / len(batch_losses))
        sched.step()

    bad = 0
    kc = read_safetensors(a.head)
    w_ref = conv.weight.detach().reshape(C, D).numpy()
    b_ref = conv.bias.detach().numpy()
    scale = float(np.abs(w_ref).max())
    dw = float(np.abs(kc["weight"] - w_ref).max())
    dbias = float(np.abs(kc["bias"] - b_ref).max())
    print("head: max|W| %.6g, max |W_kc - W_ref| %.3g (%.3g of max|W|, tol 1e-3), max |b_kc - b_ref| %.3g" %
          (scale, dw, dw / scale, dbias))
    if dw > 1e-3 * scale or dbias > 1e-3 * max(scale, float(np.abs(b_ref).max())):
        print("FAIL: the head differs from the reference's")
        bad += 1
    kc_losses = [float(l.split(",")[2]) for l in open(a.loss).read().strip().split("\n")[1:]]
    worst = max(abs(p - q) / abs(q) for p, q in zip(kc_losses, losses))
    print("losses (reference): %s" % " ".join("%.6f" % l for l in losses))
    print("losses: worst relative difference %.3g (tol 1e-4) over %d epochs" % (worst, len(losses)))
    if len(kc_losses) != len(losses) or worst > 1e-4:
        print("FAIL: the losses differ")
        bad += 1
    if a.val_features:
        vids = open(a.val_ids).read().split()
        vx = load_tokens(a.val_features, vids)
        if a.val_full:
            vy = [torch.from_numpy(np.asarray(Image.open(label_path(a.val_labels, a.val_kind, a.val_label_dir, i))).astype(np.int64))
                  for i in vids]
        else:
            vy = load_labels(a.val_labels, a.val_kind, a.val_label_dir, vids, a.size, a.mask)
        miou, ncls = miou_of(conv, vx, vy, C, a.mask)
        line = open(a.summary).read().strip().split("\n")[1].split(",")
        kc_miou, kc_ncls = float(line[0]), int(line[1])
        print("mIoU: kc-probe %.6f over %d classes, reference %.6f over %d (difference %.4f points, tol 0.05)" %
              (kc_miou, kc_ncls, miou, ncls, 100 * abs(kc_miou - miou)))
        if abs(kc_miou - miou) * 100 > 0.05 or kc_ncls != ncls:
            print("FAIL: the mIoU differs")
            bad += 1
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
