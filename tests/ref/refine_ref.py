#!/usr/bin/python3
"""tests/ref/refine_ref.py — independent references for decoders/refine/crf.c, decoders/refine/bilateral.c, decoders/refine/refine.c.

Written from the papers and the published protocols, vectorised with NumPy (not a transcription of
the C code):
  * dense CRF (Kraehenbuehl & Koltun 2011): mean field with Potts compatibility and densecrf's
    symmetric normalisation; message passing through the permutohedral lattice (Adams et al. 2010:
    elevate, round to the remainder-0 point, rank, barycentric weights, splat, [1/2 1 1/2] blur along
    the d+1 lattice directions, slice times 1/(1+2^-d)) in float32 as densecrf does, and the same
    mean field with exact dense Gaussian filtering (O(N^2), float64) for small images;
  * MaskCut's crf.py protocol (softmax of (1-m, m), unary_from_softmax, argmax, binary_fill_holes,
    IoU filter, Pillow resize back, threshold at half the maximum) with Pillow and scipy.ndimage;
  * TokenCut's bilateral solver (Barron & Poole 2016) with scipy.sparse matrices and SciPy's own cg
    (atol left unset: the "legacy" rule TokenCut runs with), and its component step.

  refine_ref.py small OUT_DIR           the committed blobs (tests/data/refine): small images
  refine_ref.py real OUT_DIR DATA_DIR   the shared photos and DAVIS frames (run by test_refine.sh)
  refine_ref.py score MASKS.h5 VOC_ROOT SPLIT CSV_DIR
                                        Jaccard and CorLoc of a refined masks cache computed here on
                                        its pixel masks (h5py, Pillow, the XML), against kc-score's CSVs;
                                        also checks the cache's layout and compression

Blobs are raw little-endian arrays; OUT_DIR/cases.txt lists one case per line as key=value tokens.
"""
import os
import sys
import warnings

import numpy as np
from PIL import Image
from scipy import ndimage, sparse
from scipy.sparse.linalg import cg

warnings.simplefilter("ignore", DeprecationWarning)
F32 = np.float32


# ---- permutohedral lattice ------------------------------------------------------------------
class Lattice:
    BITS = 12

    def __init__(self, feat):
        feat = np.ascontiguousarray(feat, F32)
        n, d = feat.shape
        d1 = d + 1
        self.n, self.d = n, d
        inv_std = F32(np.sqrt(2.0 / 3.0) * d1)
        scale = np.array([1.0 / np.sqrt((i + 2) * (i + 1)) * float(inv_std) for i in range(d)]).astype(F32)
        elev = np.zeros((n, d1), F32)
        acc = np.zeros(n, F32)
        for j in range(d, 0, -1):
            cf = feat[:, j - 1] * scale[j - 1]
            elev[:, j] = acc - F32(j) * cf
            acc = acc + cf
        elev[:, 0] = acc
        down, up = F32(1) / F32(d1), F32(d1)
        v = np.rint(down * elev)
        rem0 = v * up
        total = v.astype(np.int64).sum(axis=1)
        diff = elev - rem0
        rank = np.zeros((n, d1), np.int64)
        for i in range(d):
            for j in range(i + 1, d1):
                c = diff[:, i] < diff[:, j]
                rank[:, i] += c
                rank[:, j] += ~c
        rank += total[:, None]
        low, high = rank < 0, rank >= d1
        rank[low] += d1
        rem0[low] += up
        rank[high] -= d1
        rem0[high] -= up
        bary = np.zeros((n, d + 2), F32)
        w = (elev - rem0) * down
        rows = np.arange(n)
        for i in range(d1):
            p = d - rank[:, i]
            bary[rows, p] += w[:, i]
            bary[rows, p + 1] -= w[:, i]
        bary[:, 0] += F32(1) + bary[:, d1]
        self.bary = bary[:, :d1].copy()
        rem0i = rem0.astype(np.int64)
        keys = np.empty((n, d1, d), np.int64)
        for r in range(d1):
            canon = np.where(rank[:, :d] <= d - r, r, r - d1)
            keys[:, r, :] = rem0i[:, :d] + canon
        codes = self.encode(keys.reshape(-1, d))
        self.uniq, inv = np.unique(codes, return_inverse=True)
        self.offset = inv.reshape(n, d1)
        self.m = len(self.uniq)
        ukeys = self.decode(self.uniq)
        self.nbr = []
        for j in range(d1):
            n1, n2 = ukeys - 1, ukeys + 1
            if j < d:
                n1[:, j] = ukeys[:, j] + d
                n2[:, j] = ukeys[:, j] - d
            self.nbr.append((self.find(n1), self.find(n2)))

    def encode(self, keys):
        lim = 1 << (self.BITS - 1)
        assert np.all(np.abs(keys) < lim), "lattice key out of the reference's range"
        code = np.zeros(len(keys), np.int64)
        for i in range(keys.shape[1]):
            code |= (keys[:, i] + lim) << (self.BITS * i)
        return code

    def decode(self, codes):
        lim = 1 << (self.BITS - 1)
        return np.stack([((codes >> (self.BITS * i)) & ((1 << self.BITS) - 1)) - lim for i in range(self.d)], 1)

    def find(self, keys):
        code = self.encode(keys)
        pos = np.clip(np.searchsorted(self.uniq, code), 0, self.m - 1)
        return np.where(self.uniq[pos] == code, pos, -1)

    def filter(self, vals):
        vals = np.ascontiguousarray(vals, F32)
        vs = vals.shape[1]
        values = np.zeros((self.m + 1, vs), F32)  # the last row: "no neighbour", zero
        for k in range(vs):
            acc = np.zeros(self.m, np.float64)
            for j in range(self.d + 1):
                acc += np.bincount(self.offset[:, j], weights=(self.bary[:, j] * vals[:, k]).astype(np.float64),
                                   minlength=self.m)
            values[: self.m, k] = acc.astype(F32)
        for n1, n2 in self.nbr:
            s = values[n1] + values[n2]  # index -1 is the zero row
            new = (values[: self.m].astype(np.float64) + 0.5 * s.astype(np.float64)).astype(F32)
            values = np.vstack([new, np.zeros((1, vs), F32)])
        alpha = F32(1) / (F32(1) + F32(2.0 ** -self.d))
        out = np.zeros((self.n, vs), F32)
        for j in range(self.d + 1):
            out = out + (self.bary[:, j : j + 1] * values[self.offset[:, j]]) * alpha
        return out


class Exact:
    def __init__(self, feat):
        f = feat.astype(np.float64)
        sq = (f * f).sum(1)
        self.K = np.exp(-0.5 * np.maximum(sq[:, None] + sq[None, :] - 2 * f @ f.T, 0))

    def filter(self, vals):
        return (self.K @ vals.astype(np.float64)).astype(F32)


def softmax32(e):
    b = e - e.max(axis=1, keepdims=True)
    b = np.exp(b)
    return b / b.sum(axis=1, keepdims=True)


def crf_features(rgb, gauss_sxy, bi_sxy, bi_srgb):
    h, w = rgb.shape[:2]
    ys, xs = np.mgrid[0:h, 0:w]
    xs = xs.reshape(-1).astype(F32)
    ys = ys.reshape(-1).astype(F32)
    fg = np.stack([xs / F32(gauss_sxy), ys / F32(gauss_sxy)], 1)
    col = rgb.reshape(-1, 3).astype(F32) / F32(bi_srgb)
    fb = np.concatenate([np.stack([xs / F32(bi_sxy), ys / F32(bi_sxy)], 1), col], 1)
    return fg, fb


def mean_field(rgb, unary, p, exact=False):
    fg, fb = crf_features(rgb, p["gauss_sxy"], p["bi_sxy"], p["bi_srgb"])
    kernels = []
    for feat, wgt in ((fg, p["gauss_w"]), (fb, p["bi_w"])):
        K = Exact(feat) if exact else Lattice(feat)
        norm = K.filter(np.ones((len(feat), 1), F32))[:, 0]
        norm = (1.0 / np.sqrt(norm.astype(np.float64) + 1e-20)).astype(F32)
        kernels.append((K, norm, F32(wgt)))
    q = softmax32(-unary)
    for _ in range(p["iters"]):
        energy = -unary
        for K, norm, wgt in kernels:
            filt = K.filter(q * norm[:, None]) * norm[:, None]
            energy = energy - (-wgt * filt)
        q = softmax32(energy)
    return q


def maskcut_unary(mask, clip=1e-5):
    m = mask.reshape(-1).astype(np.float64)
    logits = np.stack([1 - m, m], 1)
    e = np.exp(logits - logits.max(1, keepdims=True))
    probs = e / e.sum(1, keepdims=True)
    return (-np.log(np.clip(probs, clip, 1.0))).astype(F32)


def crf_map(q, h, w):
    return ndimage.binary_fill_holes(np.argmax(q, 1).reshape(h, w) == 1).astype(np.uint8)


def iou(a, b):
    a, b = a.astype(bool), b.astype(bool)
    u = (a | b).sum()
    return (a & b).sum() / u if u else float("nan")


def maskcut_back(mask, W, H):
    if mask.shape == (H, W):
        return mask.astype(np.uint8)
    r = np.asarray(Image.fromarray((mask * 255).astype(np.uint8)).resize((W, H)))
    mx = int(r.max())
    return ((r > mx / 2.0) & (mx > 0)).astype(np.uint8)


# ---- TokenCut's bilateral solver --------------------------------------------------------------
YUV = np.array([[0.299, 0.587, 0.114], [-0.168736, -0.331264, 0.5], [0.5, -0.418688, -0.081312]])


def bilateral_solver(rgb, target, ss, sl, sc, lam=256.0, conf=0.999, diag_min=1e-5, tol=1e-5, maxiter=25,
                     bistoch=10):
    h, w = target.shape
    yuv = np.tensordot(rgb, YUV, ([2], [1])) + np.array([0, 128.0, 128.0])
    iy, ix = np.mgrid[:h, :w]
    coords = np.dstack(((ix / ss).astype(int), (iy / ss).astype(int), (yuv[..., 0] / sl).astype(int),
                        (yuv[..., 1:] / sc).astype(int))).reshape(-1, 5)
    base = 255.0 ** np.arange(5)
    hashes = coords @ base
    uniq, first, vertex = np.unique(hashes, return_index=True, return_inverse=True)
    nv, npx = len(uniq), len(hashes)
    S = sparse.csr_matrix((np.ones(npx), (vertex, np.arange(npx))), shape=(nv, npx))
    ucoords = coords[first]
    axes = []
    for d in range(5):
        acc = sparse.csr_matrix((nv, nv))
        for step in (-1, 1):
            nh = (ucoords + step * np.eye(5)[d]) @ base
            pos = np.clip(np.searchsorted(uniq, nh), 0, nv - 1)
            ok = np.flatnonzero(uniq[pos] == nh)
            acc = acc + sparse.csr_matrix((np.ones(len(ok)), (ok, pos[ok])), shape=(nv, nv))
        axes.append(acc)

    def blur(x):
        out = 2 * 5 * x
        for a in axes:
            out = out + a @ x
        return out

    m = S @ np.ones(npx)
    n = np.ones(nv)
    for _ in range(bistoch):
        n = np.sqrt(n * m / blur(n))
    m = n * blur(n)
    Dn, Dm = sparse.diags(n), sparse.diags(m)
    c = np.full(npx, conf)
    t = target.reshape(-1).astype(np.float64)
    cs = S @ c
    A = lam * (Dm - Dn @ blur(Dn)) + sparse.diags(cs)
    b = S @ (t * c)
    M = sparse.diags(1.0 / np.maximum(A.diagonal(), diag_min))
    y, _ = cg(A, b, x0=b / cs, M=M, maxiter=maxiter, tol=tol)
    return (S.T @ y).reshape(h, w), nv


def tokencut_components(mask):
    labeled, k = ndimage.label(mask)
    counts = [np.sum(labeled == i) for i in range(k + 1)]
    order = np.argsort(counts, kind="stable")
    if k == 0:
        return np.ones_like(mask, np.uint8)
    return (labeled == order[-2]).astype(np.uint8)


def bs_masks(out, threshold=0.5):
    m = ndimage.binary_fill_holes(out > threshold).astype(np.uint8)
    return m, tokencut_components(m)


# ---- cases -------------------------------------------------------------------------------------
MASKCUT = dict(gauss_sxy=3.0, gauss_w=7.0, bi_sxy=50.0, bi_srgb=5.0, bi_w=10.0, iters=10)


def synthetic(w, h, seed):
    rng = np.random.default_rng(seed)
    img = np.zeros((h, w, 3), np.float64)
    img[:] = rng.integers(30, 90, 3)
    yy, xx = np.mgrid[0:h, 0:w]
    blob = ((xx - w * 0.55) / (w * 0.28)) ** 2 + ((yy - h * 0.5) / (h * 0.3)) ** 2 < 1
    img[blob] = rng.integers(150, 230, 3)
    img[(xx > w * 0.1) & (xx < w * 0.3) & (yy > h * 0.6)] = rng.integers(0, 255, 3)
    img += rng.normal(0, 12, img.shape)
    img[h // 3, :] = 128  # a gray line: chroma exactly on 128, a key on a truncation edge
    rgb = np.clip(np.rint(img), 0, 255).astype(np.uint8)
    mask = np.zeros((h, w), np.uint8)
    mask[int(h * 0.25) : int(h * 0.8), int(w * 0.35) : int(w * 0.85)] = 1
    mask[int(h * 0.45) : int(h * 0.5), int(w * 0.5) : int(w * 0.55)] = 0  # a hole
    return rgb, mask


def write(out, name, arr, dtype):
    np.ascontiguousarray(arr, dtype).tofile(os.path.join(out, name))


def small(out):
    os.makedirs(out, exist_ok=True)
    lines = []
    for name, (w, h, seed), p in (("crf_a", (48, 40, 1), MASKCUT),
                                  ("crf_b", (64, 48, 2), dict(gauss_sxy=2.0, gauss_w=3.0, bi_sxy=10.0, bi_srgb=13.0,
                                                             bi_w=5.0, iters=5))):
        rgb, mask = synthetic(w, h, seed)
        un = maskcut_unary(mask)
        q = mean_field(rgb, un, p)
        qx = mean_field(rgb, un, p, exact=True)
        write(out, name + ".rgb", rgb, np.uint8)
        write(out, name + ".mask", mask, np.uint8)
        write(out, name + ".q", q, F32)
        write(out, name + ".qexact", qx, F32)
        write(out, name + ".map", crf_map(q, h, w), np.uint8)
        lines.append("kind=crf name=%s w=%d h=%d " % (name, w, h) + " ".join("%s=%g" % kv for kv in p.items()))
    for name, (w, h, seed), (ss, sl, sc) in (("bs_a", (64, 48, 3), (16, 16, 8)), ("bs_b", (60, 44, 4), (24, 4, 4)),
                                             ("bs_c", (64, 64, 5), (8, 8, 8))):
        rgb, mask = synthetic(w, h, seed)
        o, nv = bilateral_solver(rgb, mask, ss, sl, sc)
        m, cc = bs_masks(o)
        write(out, name + ".rgb", rgb, np.uint8)
        write(out, name + ".mask", mask, np.uint8)
        write(out, name + ".out", o, np.float64)
        write(out, name + ".bsmask", m, np.uint8)
        write(out, name + ".ccmask", cc, np.uint8)
        lines.append("kind=bs name=%s w=%d h=%d ss=%g sl=%g sc=%g vertices=%d" % (name, w, h, ss, sl, sc, nv))
    for name, (sw, sh, dw, dh) in (("rs_a", (64, 48, 37, 53)), ("rs_b", (48, 48, 100, 70)), ("rs_c", (64, 48, 64, 20))):
        _, mask = synthetic(sw, sh, 7)
        src = mask * 255
        write(out, name + ".src", src, np.uint8)
        write(out, name + ".resized", np.asarray(Image.fromarray(src.astype(np.uint8)).resize((dw, dh))), np.uint8)
        lines.append("kind=resize name=%s sw=%d sh=%d dw=%d dh=%d" % (name, sw, sh, dw, dh))
    with open(os.path.join(out, "cases.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


def patch_mask(gh, gw, seed):
    """A deterministic 'decoder' label map: an ellipse of cells with a notch, label 1, plus a
    second-round square, label 2."""
    yy, xx = np.mgrid[0:gh, 0:gw]
    lab = np.zeros((gh, gw), np.uint8)
    lab[((xx - gw * 0.5) / (gw * 0.3)) ** 2 + ((yy - gh * 0.55) / (gh * 0.35)) ** 2 < 1] = 1
    lab[gh // 2, gw // 2 - 1 : gw // 2 + 2] = 0
    lab[1:4, 1 + seed : 5 + seed] = 2
    return lab


def real(out, data):
    os.makedirs(out, exist_ok=True)
    lines = []
    photos = [("voc", os.path.join(data, "voc_official/JPEGImages/2007_000063.jpg")),
              ("davis", os.path.join(data, "davis/JPEGImages/480p/blackswan/00000.jpg"))]
    for k, (tag, path) in enumerate(photos):
        im = Image.open(path).convert("RGB")
        W, H = im.size
        # crf: square480, 30x30 grid of 16-pixel patches
        lab = patch_mask(30, 30, k)
        rgb480 = np.asarray(im.resize((480, 480), Image.LANCZOS))
        name = "crf_" + tag
        final = np.zeros((H, W), np.uint8)
        for r in (1, 2):
            m = np.kron((lab == r).astype(np.uint8), np.ones((16, 16), np.uint8))
            q = mean_field(rgb480, maskcut_unary(m), MASKCUT)
            ref = crf_map(q, 480, 480)
            if iou(m, ref) < 0.5:
                ref[:] = 0
            back = maskcut_back(ref, W, H)
            final[(back == 1) & (final == 0)] = r
            if r == 1:
                write(out, name + ".q", q, F32)
                write(out, name + ".map", ref, np.uint8)
        write(out, name + ".grid", lab, np.uint8)
        write(out, name + ".final", final, np.uint8)
        lines.append("kind=crfimg name=%s image=%s w=%d h=%d gw=30 gh=30 patch=16" % (name, path, W, H))
        # bs: native16 grid on the original image, TokenCut's published sigmas
        gw, gh = (W + 15) // 16, (H + 15) // 16
        lab = patch_mask(gh, gw, k)
        target = (lab == 1).astype(np.float64)[np.arange(H)[:, None] // 16, np.arange(W)[None, :] // 16]
        o, nv = bilateral_solver(np.asarray(im), target, 16, 16, 8)
        m, cc = bs_masks(o)
        name = "bs_" + tag
        write(out, name + ".grid", lab, np.uint8)
        write(out, name + ".out", o, np.float64)
        write(out, name + ".bsmask", m, np.uint8)
        write(out, name + ".ccmask", cc, np.uint8)
        lines.append("kind=bsimg name=%s image=%s w=%d h=%d gw=%d gh=%d patch=16 vertices=%d" % (name, path, W, H, gw, gh, nv))
    with open(os.path.join(out, "cases.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


def score(masks, voc, split, csv_dir):
    import csv
    import xml.etree.ElementTree as ET

    import h5py

    ids = [l.split()[0] for l in open(split) if l.strip()]
    worst, n, problems = 0.0, 0, []
    with h5py.File(masks, "r") as f:
        if f.attrs.get("refine") not in ("crf", "bs"):
            problems.append("root attribute refine = %r" % f.attrs.get("refine"))
        sizes = dict(zip([i.decode() if isinstance(i, bytes) else i for i in f["/index/ids"][()]], f["/index/size"][()]))
        for setting in f["/masks"]:
            rows = {r["id"]: r for r in csv.DictReader(open(os.path.join(csv_dir, setting + ".csv")))}
            for i in ids:
                d = f["/masks/%s/%s" % (setting, i)]
                lab = d[()]
                if list(lab.shape) != list(sizes[i]):
                    problems.append("%s: shape %s, image %s" % (d.name, lab.shape, sizes[i]))
                if d.compression != "gzip":
                    problems.append("%s: not deflate-compressed (%s)" % (d.name, d.compression))
                for a in ("lambda2", "eigengap", "degenerate", "refine_iou", "refine_dropped"):
                    if a not in d.attrs:
                        problems.append("%s: no attribute %s" % (d.name, a))
                obj = np.asarray(Image.open(os.path.join(voc, "SegmentationObject", i + ".png")))
                valid = obj != 255
                gt, pred = (obj > 0) & valid, (lab > 0)
                inter, union = (gt & pred & valid).sum(), ((gt | pred) & valid).sum()
                jac = inter / union if union else 1.0
                ys, xs = np.nonzero(lab == 1)
                hit = 0
                if len(xs):
                    box = (xs.min(), ys.min(), xs.max() + 1, ys.max() + 1)
                    for o in ET.parse(os.path.join(voc, "Annotations", i + ".xml")).findall("object"):
                        b = o.find("bndbox")
                        g = [float(b.find(k).text) for k in ("xmin", "ymin", "xmax", "ymax")]
                        g[0] -= 1
                        g[1] -= 1
                        iw = max(0, min(box[2], g[2]) - max(box[0], g[0]))
                        ih = max(0, min(box[3], g[3]) - max(box[1], g[1]))
                        u = (box[2] - box[0]) * (box[3] - box[1]) + (g[2] - g[0]) * (g[3] - g[1]) - iw * ih
                        if u > 0 and iw * ih / u >= 0.5:
                            hit = 1
                r = rows[i]
                worst = max(worst, abs(float(r["jaccard"]) - jac))
                if int(r["corloc"]) != hit:
                    problems.append("%s %s: CorLoc %s, reference %d" % (setting, i, r["corloc"], hit))
                n += 1
    print("%d refined masks: Jaccard worst |diff| %.3g against kc-score (tol 1e-9); %d problems" % (n, worst, len(problems)))
    for p in problems[:10]:
        print("  " + p)
    sys.exit(0 if worst <= 1e-9 and not problems and n else 1)


if __name__ == "__main__":
    if len(sys.argv) >= 6 and sys.argv[1] == "score":
        score(*sys.argv[2:6])
        sys.exit(0)
    if len(sys.argv) >= 3 and sys.argv[1] == "small":
        small(sys.argv[2])
    elif len(sys.argv) >= 4 and sys.argv[1] == "real":
        real(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
