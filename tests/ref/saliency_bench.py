#!/usr/bin/python3
"""tests/ref/saliency_bench.py ROOT — the time per image of TokenCut's saliency protocol in Python
on one core (tests/bench_saliency.sh prints it beside keycut's), stage by stage, on the images of a
saliency root (any layout of datasets/dataset.h).

The steps are those of TokenCut's get_saliency.py with the libraries it uses, written here: PIL
open + convert('RGB') + resize to each side round(side / 16) * 16 (LANCZOS), ToTensor/Normalize; a
ViT-S/16 of torch modules (tests/ref/vit_ref.py's ViT, random weights: the time does not depend on
them) run in full as its dino.ViTFeat runs it, the last block's keys taken by a hook on qkv; ncut()
(F.normalize, the affinity in torch, numpy's threshold, scipy.linalg.eigh(D - A, D, subset_by_index
=[1, 2]), ndimage.label, F.interpolate to the image); the bilateral solver of tests/ref/refine_ref.py
(TokenCut's bilateral_solver.py algorithm: scipy.sparse, SciPy's cg) with sigmas 16 / 16 / 8; and
metric.py's per-image work (tests/ref/saliency_metrics_ref.py: 255 thresholds in torch) for both
masks.  torch.set_num_threads(1); run it with OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1.
"""
import os
import sys
import time

import numpy as np
import torch
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import refine_ref  # noqa: E402
import saliency_metrics_ref  # noqa: E402
import saliency_ref  # noqa: E402
import vit_ref  # noqa: E402

MEAN = torch.tensor([0.485, 0.456, 0.406]).view(3, 1, 1)
STD = torch.tensor([0.229, 0.224, 0.225]).view(3, 1, 1)


def main(root):
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = vit_ref.ViT().eval()
    feats = {}
    model.blocks[-1].attn.qkv.register_forward_hook(lambda m, i, o: feats.__setitem__("qkv", o))
    img_dir, gt_dir = saliency_ref.layout(root)
    names = sorted(os.listdir(img_dir))
    t = dict(load=0.0, vit=0.0, ncut=0.0, solver=0.0, metrics=0.0)
    for i, name in enumerate(names):
        t0 = time.perf_counter()
        im = Image.open(os.path.join(img_dir, name)).convert("RGB")
        w, h = im.size
        nw, nh = int(round(w / 16)) * 16, int(round(h / 16)) * 16
        x = torch.from_numpy(np.asarray(im.resize((nw, nh), Image.LANCZOS), np.float32) / 255).permute(2, 0, 1)
        x = ((x - MEAN) / STD)[None]
        gt = np.array(Image.open(os.path.join(gt_dir, name.replace(".jpg", ".png"))).convert("L"))
        t1 = time.perf_counter()
        with torch.no_grad():
            model(x)
        dim = 384
        keys = feats["qkv"][0, 1:, dim:2 * dim].numpy()
        t2 = time.perf_counter()
        mask, _, _, _ = saliency_ref.ncut_mask(keys, nh // 16, nw // 16, h, w)
        t3 = time.perf_counter()
        soft, _ = refine_ref.bilateral_solver(np.asarray(im), mask, 16.0, 16.0, 8.0)
        t4 = time.perf_counter()
        saliency_metrics_ref.image_metrics(gt, mask)
        saliency_metrics_ref.image_metrics(gt, soft)
        t5 = time.perf_counter()
        if i:  # the first image warms up torch and the allocators: not counted
            for k, a, b in (("load", t0, t1), ("vit", t1, t2), ("ncut", t2, t3), ("solver", t3, t4), ("metrics", t4, t5)):
                t[k] += b - a
    n = max(len(names) - 1, 1)
    total = sum(t.values()) / n
    print("python (TokenCut's steps, 1 thread): %.0f ms/image over %d images: load+resize %.0f, ViT %.0f, ncut %.0f, "
          "solver %.0f, metrics %.0f" % (1e3 * total, n, 1e3 * t["load"] / n, 1e3 * t["vit"] / n, 1e3 * t["ncut"] / n,
                                          1e3 * t["solver"] / n, 1e3 * t["metrics"] / n))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
