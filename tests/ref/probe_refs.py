#!/usr/bin/python3
"""tests/ref/probe_refs.py — reference blobs for the linear probe (kc-probe, issue 21), from Pillow
and PyTorch, never from keycut:

  tests/data/probe/resize_small.{tsv,bin}  Pillow 9.4 Image.resize(BILINEAR) of the 97x61 crop of
                                           tests/data/image/resize_crop.rgb to several sizes (what
                                           torchvision's Resize((S, S)) does to a PIL image)
  tests/data/probe/resize_real.tsv         relpath S sha256 of Image.open(p).convert("RGB").resize((S, S),
                                           BILINEAR) for the shared photos, S = 224 and 448
  tests/data/probe/labels_small.{tsv,bin}  label maps resized as kc-probe does: Pillow NEAREST to S
                                           (torchvision Resize((S, S), NEAREST) on the PIL label), then
                                           torch.nn.functional.interpolate(mode="nearest") to M
  tests/data/probe/tiny.{tsv,bin}          a tiny training run of the protocol in PyTorch: random tokens,
                                           labels (with 255), initial head and epoch orders from NumPy,
                                           and what torch's Conv2d + bilinear + cross-entropy + SGD makes
                                           of them (final head, per-epoch losses); tests/test_probe.c
                                           replays it with eval/probe/probe.h's trainer

Run from the repository root: /usr/bin/python3 tests/ref/probe_refs.py
"""
import hashlib
import os
import sys

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(ROOT, "tests", "data", "probe")
SHARED = os.environ.get("KC_SHARED_DATA", os.path.join(os.path.dirname(ROOT), "shared", "data"))


def resize_refs():
    crop = np.fromfile(os.path.join(ROOT, "tests", "data", "image", "resize_crop.rgb"), np.uint8).reshape(61, 97, 3)
    sizes = [(224, 224), (97, 61), (48, 30), (49, 31), (13, 7), (1, 1), (3, 61), (160, 9), (200, 120),
             (33, 19), (96, 60)]
    with open(os.path.join(OUT, "resize_small.tsv"), "w") as tsv, open(os.path.join(OUT, "resize_small.bin"), "wb") as b:
        for w, h in sizes:
            o = np.asarray(Image.fromarray(crop).resize((w, h), Image.BILINEAR))
            tsv.write("bilinear\t%d\t%d\n" % (w, h))
            b.write(np.ascontiguousarray(o).tobytes())
    if not os.path.isdir(SHARED):
        print("no shared data at %s: resize_real.tsv not written" % SHARED)
        return
    imgs = ["voc_official/JPEGImages/2007_000063.jpg", "voc_labelme/JPEGImages/2011_000003.jpg",
            "voc_labelme/JPEGImages/2011_000006.jpg", "voc_labelme/JPEGImages/2011_000025.jpg",
            "davis/JPEGImages/480p/blackswan/00000.jpg", "davis_testdev_firstframe/JPEGImages/480p/tackle/00000.jpg"]
    with open(os.path.join(OUT, "resize_real.tsv"), "w") as tsv:
        for rel in imgs:
            im = Image.open(os.path.join(SHARED, rel)).convert("RGB")
            for s in (224, 448):
                o = np.asarray(im.resize((s, s), Image.BILINEAR))
                tsv.write("%s\t%d\t%s\n" % (rel, s, hashlib.sha256(np.ascontiguousarray(o).tobytes()).hexdigest()))


def label_refs():
    import torch
    import torch.nn.functional as F
    rng = np.random.default_rng(7)
    cases = [(61, 97, 224, 100), (75, 100, 224, 100), (37, 23, 448, 100), (100, 100, 224, 56), (5, 9, 224, 14),
             (68, 100, 448, 100), (224, 224, 224, 100)]
    with open(os.path.join(OUT, "labels_small.tsv"), "w") as tsv, open(os.path.join(OUT, "labels_small.bin"), "wb") as b:
        for h, w, s, m in cases:
            lab = rng.integers(0, 21, size=(h, w)).astype(np.uint8)
            lab[rng.random((h, w)) < 0.1] = 255
            big = np.asarray(Image.fromarray(lab, mode="L").resize((s, s), Image.NEAREST))
            t = torch.from_numpy(big.astype(np.float32))[None, None]
            small = F.interpolate(t, size=(m, m), mode="nearest")[0, 0].numpy().astype(np.uint8)
            tsv.write("%d\t%d\t%d\t%d\n" % (h, w, s, m))
            b.write(lab.tobytes())
            b.write(small.tobytes())


def tiny_train():
    import torch
    import torch.nn.functional as F
    rng = np.random.default_rng(11)
    n, gh, gw, D, C, M, B, E = 10, 4, 3, 8, 3, 10, 4, 6
    lr, mom, wd, drop = 0.05, 0.9, 1e-4, 4
    G = gh * gw
    tok = rng.standard_normal((n, G, D)).astype(np.float32)
    lab = rng.integers(0, C, size=(n, M, M)).astype(np.uint8)
    lab[rng.random((n, M, M)) < 0.15] = 255
    lab[3] = 255  # an image without a valid pixel
    w0 = rng.uniform(-0.3, 0.3, size=(C, D)).astype(np.float32)
    b0 = rng.uniform(-0.3, 0.3, size=(C,)).astype(np.float32)
    orders = np.stack([rng.permutation(n) for _ in range(E)]).astype(np.int32)
    conv = torch.nn.Conv2d(D, C, 1)
    with torch.no_grad():
        conv.weight.copy_(torch.from_numpy(w0).reshape(C, D, 1, 1))
        conv.bias.copy_(torch.from_numpy(b0))
    opt = torch.optim.SGD(conv.parameters(), lr=lr, momentum=mom, weight_decay=wd)
    sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[drop], gamma=0.1)
    x = torch.from_numpy(tok).reshape(n, gh, gw, D).permute(0, 3, 1, 2).contiguous()
    y = torch.from_numpy(lab.astype(np.int64))
    losses = []
    for e in range(E):
        bl = []
        for b in range(n // B):
            sel = torch.from_numpy(orders[e, b * B:(b + 1) * B].astype(np.int64))
            out = F.interpolate(conv(x[sel]), size=(M, M), mode="bilinear", align_corners=False)
            loss = F.cross_entropy(out, y[sel], ignore_index=255)
            opt.zero_grad()
            loss.backward()
            opt.step()
            bl.append(float(loss))
        losses.append(sum(bl) / len(bl))
        sched.step()
    wf = conv.weight.detach().reshape(C, D).numpy().astype(np.float32)
    bf = conv.bias.detach().numpy().astype(np.float32)
    with open(os.path.join(OUT, "tiny.tsv"), "w") as f:
        f.write("%d %d %d %d %d %d %d %d %.17g %.17g %.17g %d\n" % (n, gh, gw, D, C, M, B, E, lr, mom, wd, drop))
    with open(os.path.join(OUT, "tiny.bin"), "wb") as f:
        for a in (tok, lab, w0, b0, orders, wf, bf, np.array(losses, np.float64)):
            f.write(np.ascontiguousarray(a).tobytes())


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    resize_refs()
    if "--no-torch" not in sys.argv:
        label_refs()
        tiny_train()
