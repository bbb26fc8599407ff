#!/usr/bin/python3
"""tests/ref/probe_bench_torch.py TOKENS.h5 VOC_ROOT SPLIT [EPOCHS] — the PyTorch baseline of
tests/bench_probe.sh: the linear-probe protocol of issue 21 (Conv2d 1x1, bilinear logits to 100 x 100,
cross-entropy ignore 255, SGD momentum 0.9 weight decay 1e-4, batch 60, last short batch dropped) on
the same cached tokens, held in memory (the loading is not timed).  Prints seconds per epoch."""
import os
import sys
import time

import h5py
import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image

path, root, split = sys.argv[1:4]
epochs = int(sys.argv[4]) if len(sys.argv) > 4 else 1
torch.set_num_threads(max(1, os.cpu_count() or 1))
ids = open(os.path.join(root, "ImageSets", "Segmentation", split + ".txt")).read().split()
t0 = time.time()
with h5py.File(path, "r") as f:
    gh, gw = (int(v) for v in f["index/grid"][0])
    x = torch.from_numpy(np.stack([f["features/tokens/" + i][()] for i in ids]))
n, G, D = x.shape
x = x.reshape(n, gh, gw, D).permute(0, 3, 1, 2).contiguous()
labs = []
for i in ids:
    a = Image.open(os.path.join(root, "SegmentationClassAug", i + ".png")).resize((224, 224), Image.NEAREST)
    t = torch.from_numpy(np.asarray(a).astype(np.float32))[None, None]
    labs.append(F.interpolate(t, size=(100, 100), mode="nearest")[0, 0].long())
y = torch.stack(labs)
print("torch: %d images of %d tokens x %d loaded in %.1f s (%d threads)" % (n, G, D, time.time() - t0, torch.get_num_threads()))
conv = torch.nn.Conv2d(D, 21, 1)
opt = torch.optim.SGD(conv.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
g = torch.Generator().manual_seed(0)
for e in range(epochs):
    t0 = time.time()
    order = torch.randperm(n, generator=g)
    for b in range(n // 60):
        sel = order[b * 60:(b + 1) * 60]
        out = F.interpolate(conv(x[sel]), size=(100, 100), mode="bilinear", align_corners=False)
        loss = F.cross_entropy(out, y[sel], ignore_index=255)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("torch: epoch %d: %.2f s (loss %.4f)" % (e + 1, time.time() - t0, float(loss)))
