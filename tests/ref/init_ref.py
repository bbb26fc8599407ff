#!/usr/bin/python3
"""tests/ref/init_ref.py — an independent NumPy implementation of kc-init's recipe (pipeline/model/vit_init.h).

    /usr/bin/python3 tests/ref/init_ref.py hashes ARCH SEED > FILE      sha256 of every tensor's float32 bytes
    /usr/bin/python3 tests/ref/init_ref.py check FILE.safetensors        same bytes as this script computes?
                                                                          + distribution vs torch's trunc_normal_

Philox4x32-10 in uint64 arithmetic, the polar method and the series ln in float64 with the same
operation order as the C code: IEEE-754 +, -, *, /, sqrt are correctly rounded in NumPy as in C,
so the float32 values must come out bit-identical.  tests/data/init/*.sha256 were written by the
`hashes` mode; test_init compares kc-init's tensors with them (no Python needed at test time).
"""
import hashlib
import json
import math
import sys

import numpy as np

ARCHS = {  # dim, depth, patch, mlp, grid
    "vit-s/16": (384, 12, 16, 1536, 14), "vit-s/8": (384, 12, 8, 1536, 28),
    "vit-b/16": (768, 12, 16, 3072, 14), "vit-b/8": (768, 12, 8, 3072, 28),
    "toy/16": (64, 2, 16, 256, 4),
}
M32 = np.uint64(0xFFFFFFFF)


def philox(c0, c1, c2, c3, k0, k1):
    """Philox4x32-10 on uint64 arrays holding 32-bit values."""
    k0, k1 = np.uint64(k0), np.uint64(k1)
    for r in range(10):
        if r:
            k0 = (k0 + np.uint64(0x9E3779B9)) & M32
            k1 = (k1 + np.uint64(0xBB67AE85)) & M32
        p0 = np.uint64(0xD2511F53) * c0
        p1 = np.uint64(0xCD9E8D57) * c2
        c0, c1, c2, c3 = (p1 >> np.uint64(32)) ^ c1 ^ k0, p1 & M32, (p0 >> np.uint64(32)) ^ c3 ^ k1, p0 & M32
    return c0, c1, c2, c3


def fnv1a64(name):
    h = 0xcbf29ce484222325
    for ch in name.encode():
        h ^= ch
        h = (h * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def pair(seed, h, idx, attempt):
    n = idx.size
    w = philox(idx.astype(np.uint64), np.full(n, attempt, np.uint64), np.full(n, h & 0xFFFFFFFF, np.uint64),
               np.full(n, h >> 32, np.uint64), seed & 0xFFFFFFFF, seed >> 32)
    a = ((w[1] << np.uint64(32)) | w[0]) >> np.uint64(12)
    b = ((w[3] << np.uint64(32)) | w[2]) >> np.uint64(12)
    x = ((np.uint64(2) * a + np.uint64(1)).astype(np.int64) - (1 << 52)).astype(np.float64) * 2.0 ** -52
    y = ((np.uint64(2) * b + np.uint64(1)).astype(np.int64) - (1 << 52)).astype(np.float64) * 2.0 ** -52
    return x, y


def series_ln(s):
    m, e = np.frexp(s)
    low = m < 0.70710678118654752440
    m = np.where(low, m * 2.0, m)
    e = np.where(low, e - 1, e)
    t = (m - 1.0) / (m + 1.0)
    t2 = t * t
    p = np.full_like(t, 1.0 / 23)
    for c in (1.0 / 21, 1.0 / 19, 1.0 / 17, 1.0 / 15, 1.0 / 13, 1.0 / 11, 1.0 / 9, 1.0 / 7, 1.0 / 5, 1.0 / 3, 1.0):
        p = p * t2 + c
    lnm = 2.0 * t * p
    return e.astype(np.float64) * 0.6931471805599453094 + lnm


def normals(seed, h, n):
    out = np.empty(n, np.float64)
    todo = np.arange(n, dtype=np.uint64)
    attempt = 0
    while todo.size:
        x, y = pair(seed, h, todo, attempt)
        s = x * x + y * y
        ok = s < 1.0
        q = -2.0 * series_ln(s[ok])
        q = q / s[ok]
        out[todo[ok].astype(np.int64)] = x[ok] * np.sqrt(q)
        todo = todo[~ok]
        attempt += 1
    return out


def tensors(arch, seed):
    D, depth, P, H, G = ARCHS[arch]
    spec = [("cls_token", (1, 1, D), "tn"), ("pos_embed", (1, 1 + G * G, D), "tn"),
            ("patch_embed.proj.weight", (D, 3, P, P), "u"), ("patch_embed.proj.bias", (D,), "u"),
            ("norm.weight", (D,), "1"), ("norm.bias", (D,), "0")]
    for b in range(depth):
        f = "blocks.%d." % b
        spec += [(f + "norm1.weight", (D,), "1"), (f + "norm1.bias", (D,), "0"),
                 (f + "attn.qkv.weight", (3 * D, D), "tn"), (f + "attn.qkv.bias", (3 * D,), "0"),
                 (f + "attn.proj.weight", (D, D), "tn"), (f + "attn.proj.bias", (D,), "0"),
                 (f + "norm2.weight", (D,), "1"), (f + "norm2.bias", (D,), "0"),
                 (f + "mlp.fc1.weight", (H, D), "tn"), (f + "mlp.fc1.bias", (H,), "0"),
                 (f + "mlp.fc2.weight", (D, H), "tn"), (f + "mlp.fc2.bias", (D,), "0")]
    bound = 1.0 / math.sqrt(3 * P * P)
    out = {}
    for name, shape, kind in sorted(spec, key=lambda s: s[0].encode()):
        n = int(np.prod(shape))
        h = fnv1a64(name)
        if kind == "tn":
            v = np.clip(0.02 * normals(seed, h, n), -2.0, 2.0)
        elif kind == "u":
            v = bound * pair(seed, h, np.arange(n, dtype=np.uint64), 0)[0]
        else:
            v = np.full(n, float(kind))
        out[name] = v.astype("<f4").reshape(shape)
    return out


def read_safetensors(path):
    data = open(path, "rb").read()
    n = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + n])
    meta = header.pop("__metadata__", {})
    buf = data[8 + n:]
    return meta, {k: np.frombuffer(buf[v["data_offsets"][0]:v["data_offsets"][1]], "<f4").reshape(v["shape"])
                  for k, v in header.items()}, data[8:8 + n]


def main():
    if sys.argv[1] == "hashes":
        arch, seed = sys.argv[2], int(sys.argv[3])
        for name, v in tensors(arch, seed).items():
            print(name, hashlib.sha256(v.tobytes()).hexdigest())
        return 0
    path = sys.argv[2]
    meta, got, header = read_safetensors(path)
    want = tensors(meta["arch"], int(meta["seed"]))
    bad = [k for k in want if k not in got or got[k].tobytes() != want[k].tobytes()]
    extra = [k for k in got if k not in want]
    keys = [k for k in json.loads(header) if k != "__metadata__"]
    print("tensors %d, bytes differing in %d, extra %d, header keys sorted %s" %
          (len(want), len(bad), len(extra), keys == sorted(keys, key=str.encode)))
    if bad or extra or keys != sorted(keys, key=str.encode) or len(header) % 8:
        print("MISMATCH", bad[:5], extra[:5])
        return 1
    # the distribution against torch's trunc_normal_ (DINO calls it with std .02, a = -2, b = 2)
    try:
        import torch
        from scipy import stats
    except ImportError:
        print("SKIP torch/scipy absent: no distribution comparison")
        return 0
    torch.manual_seed(0)
    ours = np.concatenate([got[k].ravel() for k in got if k.endswith("qkv.weight")]).astype(np.float64)
    ref = torch.nn.init.trunc_normal_(torch.empty(ours.size), std=0.02, a=-2.0, b=2.0).numpy().astype(np.float64)
    ks = stats.ks_2samp(ours, ref)
    print("qkv weights: ours std %.6f kurtosis %.4f max|x|/std %.2f; torch std %.6f kurtosis %.4f max|x|/std %.2f; "
          "KS D %.2e p %.3f" % (ours.std(), stats.kurtosis(ours), np.abs(ours).max() / 0.02, ref.std(),
                                stats.kurtosis(ref), np.abs(ref).max() / 0.02, ks.statistic, ks.pvalue))
    pe = got["patch_embed.proj.weight"].astype(np.float64).ravel()
    conv = torch.nn.Conv2d(3, pe.size // (3 * got["patch_embed.proj.weight"].shape[-1] ** 2),
                           got["patch_embed.proj.weight"].shape[-1]).weight.detach().numpy().ravel()
    ks2 = stats.ks_2samp(pe, conv.astype(np.float64))
    print("patch_embed weight: ours max|x| %.6f, torch Conv2d default max|x| %.6f, KS p %.3f" %
          (np.abs(pe).max(), np.abs(conv).max(), ks2.pvalue))
    return 0 if ks.pvalue > 1e-3 and ks2.pvalue > 1e-3 else 1


if __name__ == "__main__":
    sys.exit(main())
