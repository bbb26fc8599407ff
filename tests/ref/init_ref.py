#!/usr/bin/python3
"""tests/ref/init_ref.py — an independent NumPy implementation of kc-init's recipe (pipeline/model/vit_init.h).

    /usr/bin/python3 tests/ref/init_ref.py hashes ARCH SEED > FILE      sha256 of every tensor's float32 bytes
    /usr/bin/python3 tests/ref/init_ref.py check FILE.safetensors        same bytes as this script computes?
                                                                          + distribution vs torch's init functions

The tensors of each family, written here from the official code (not from vit_init.c):
  DINO     dino vision_transformer.py: trunc_normal_(std=.02) for linear weights, pos_embed, cls_token;
  DINOv2   dinov2 vision_transformer.py init_weights: trunc_normal_(pos_embed, std=.02),
           normal_(cls_token, std=1e-6), normal_(register_tokens, std=1e-6), mask_token zeros;
           init_weights_vit_timm: Linear trunc_normal_(std=.02), bias 0; LayerScale
           init_values * ones with init_values = 1e-5 (ssl_default_config.yaml student.layerscale);
           pos_embed (1, 1 + 37*37, 384) as in the released dinov2_vits14 files;
  DINOv3   dinov3 vision_transformer.py init_weights: normal_(cls_token, std=.02), normal_(storage_tokens,
           std=.02), zeros_(mask_token), rope periods 100 ** (2 arange(16) / 32) in fp32;
           init_weights_vit: Linear trunc_normal_(std=.02), bias 0, qkv.bias_mask 1 with [o//3, 2o//3) 0;
           LayerScale constant 1e-5 (hub dinov3_vits16 layerscale_init);
  all      LayerNorm 1 / 0; patch_embed U(-1/sqrt(3 p^2), 1/sqrt(3 p^2)) for weight and bias.

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

ARCHS = {  # family, dim, depth, heads, patch, mlp, pos_embed grid (0: none), prefix tokens besides CLS
    "vit-s/16": ("dino", 384, 12, 6, 16, 1536, 14, 0), "vit-s/8": ("dino", 384, 12, 6, 8, 1536, 28, 0),
    "vit-b/16": ("dino", 768, 12, 12, 16, 3072, 14, 0), "vit-b/8": ("dino", 768, 12, 12, 8, 3072, 28, 0),
    "toy/16": ("dino", 64, 2, 1, 16, 256, 4, 0),
    "dinov2-s/14": ("dinov2", 384, 12, 6, 14, 1536, 37, 0), "dinov2-reg-s/14": ("dinov2", 384, 12, 6, 14, 1536, 37, 4),
    "dinov3-s/16": ("dinov3", 384, 12, 6, 16, 1536, 0, 4),
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


def spec(arch):
    """[(name, shape, kind, value)]: kind tn (trunc normal, std), n (normal, std), u (uniform, bound),
    c (constant), periods (RoPE base), kmask (qkv bias mask)."""
    fam, D, depth, heads, P, H, G, R = ARCHS[arch]
    bound = 1.0 / math.sqrt(3 * P * P)
    out = [("patch_embed.proj.weight", (D, 3, P, P), "u", bound), ("patch_embed.proj.bias", (D,), "u", bound),
           ("norm.weight", (D,), "c", 1.0), ("norm.bias", (D,), "c", 0.0)]
    if fam == "dino":
        out += [("cls_token", (1, 1, D), "tn", 0.02), ("pos_embed", (1, 1 + G * G, D), "tn", 0.02)]
    elif fam == "dinov2":
        out += [("cls_token", (1, 1, D), "n", 1e-6), ("pos_embed", (1, 1 + G * G, D), "tn", 0.02),
                ("mask_token", (1, D), "c", 0.0)]
        if R:
            out += [("register_tokens", (1, R, D), "n", 1e-6)]
    else:
        out += [("cls_token", (1, 1, D), "n", 0.02), ("storage_tokens", (1, R, D), "n", 0.02),
                ("mask_token", (1, D), "c", 0.0), ("rope_embed.periods", (D // heads // 4,), "periods", 100.0)]
    for b in range(depth):
        f = "blocks.%d." % b
        out += [(f + "norm1.weight", (D,), "c", 1.0), (f + "norm1.bias", (D,), "c", 0.0),
                (f + "attn.qkv.weight", (3 * D, D), "tn", 0.02), (f + "attn.qkv.bias", (3 * D,), "c", 0.0),
                (f + "attn.proj.weight", (D, D), "tn", 0.02), (f + "attn.proj.bias", (D,), "c", 0.0),
                (f + "norm2.weight", (D,), "c", 1.0), (f + "norm2.bias", (D,), "c", 0.0),
                (f + "mlp.fc1.weight", (H, D), "tn", 0.02), (f + "mlp.fc1.bias", (H,), "c", 0.0),
                (f + "mlp.fc2.weight", (D, H), "tn", 0.02), (f + "mlp.fc2.bias", (D,), "c", 0.0)]
        if fam != "dino":
            out += [(f + "ls1.gamma", (D,), "c", 1e-5), (f + "ls2.gamma", (D,), "c", 1e-5)]
        if fam == "dinov3":
            out += [(f + "attn.qkv.bias_mask", (3 * D,), "kmask", 0.0)]
    return sorted(out, key=lambda s: s[0].encode())


def tensors(arch, seed):
    out = {}
    for name, shape, kind, value in spec(arch):
        n = int(np.prod(shape))
        h = fnv1a64(name)
        if kind == "tn":
            v = np.clip(value * normals(seed, h, n), -2.0, 2.0)
        elif kind == "n":
            v = value * normals(seed, h, n)
        elif kind == "u":
            v = value * pair(seed, h, np.arange(n, dtype=np.uint64), 0)[0]
        elif kind == "periods":
            v = np.array([value ** (2 * i / (2 * n)) for i in range(n)])
        elif kind == "kmask":
            v = np.ones(n)
            v[n // 3:2 * n // 3] = 0.0
        else:
            v = np.full(n, value)
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
    bad = [k for k in want if k not in got or got[k].shape != want[k].shape or got[k].tobytes() != want[k].tobytes()]
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
    ok = ks.pvalue > 1e-3 and ks2.pvalue > 1e-3
    fam, D, _, heads = ARCHS[meta["arch"]][:4]
    if fam != "dino":
        ok &= torch_family_check(torch, stats, fam, D, heads, got)
    return 0 if ok else 1


def torch_family_check(torch, stats, fam, D, heads, got):
    """DINOv2 / DINOv3: the tensors against the official init written with torch's own functions:
    exact for constants, periods and the bias mask (tolerance 0), KS p > 1e-3 for the random ones."""
    ok = True

    def exact(what, names, ref):
        nonlocal ok
        worst = max(float(np.abs(got[k].astype(np.float64) - ref.numpy().astype(np.float64)).max()) for k in names)
        same = all(got[k].shape == tuple(ref.shape) and got[k].tobytes() == ref.numpy().astype("<f4").tobytes()
                   for k in names)
        print("%s: %d tensors, bit-identical to torch %s (worst |difference| %.3g, tolerance 0)" %
              (what, len(names), same, worst))
        ok &= same

    def ks_normal(what, names, std, trunc):
        nonlocal ok
        ours = np.concatenate([got[k].ravel() for k in names]).astype(np.float64)
        t = torch.empty(ours.size)
        ref = (torch.nn.init.trunc_normal_(t, std=std, a=-2.0, b=2.0) if trunc else torch.nn.init.normal_(t, std=std))
        r = stats.ks_2samp(ours, ref.numpy().astype(np.float64))
        print("%s: %d values, ours std %.4g, torch %s std %.4g: std ratio %.4f, KS p %.3f (fails below 1e-3)" %
              (what, ours.size, ours.std(), "trunc_normal_" if trunc else "normal_", ref.std().item(),
               ours.std() / ref.std().item(), r.pvalue))
        ok &= r.pvalue > 1e-3

    blocks = sorted({k.split(".")[1] for k in got if k.startswith("blocks.")}, key=int)
    gammas = ["blocks.%s.ls%d.gamma" % (b, i) for b in blocks for i in (1, 2)]
    lns = [k for k in got if ("norm" in k and not k.startswith("patch_embed"))]
    ln = torch.nn.LayerNorm(D, eps=1e-6 if fam == "dinov2" else 1e-5)
    exact("LayerNorm weights (nn.LayerNorm)", [k for k in lns if k.endswith(".weight")], ln.weight.detach())
    exact("LayerNorm biases (nn.LayerNorm)", [k for k in lns if k.endswith(".bias")], ln.bias.detach())
    exact("mask_token (zeros)", ["mask_token"], torch.zeros(1, D))
    if fam == "dinov2":  # layers/layer_scale.py: init_values * torch.ones(dim), init_values = 1e-5
        exact("ls gammas (1e-5 * ones)", gammas, 1e-5 * torch.ones(D))
        ks_normal("cls_token + register_tokens", [k for k in ("cls_token", "register_tokens") if k in got], 1e-6, False)
        ks_normal("pos_embed", ["pos_embed"], 0.02, True)
    else:  # LayerScale.reset_parameters, RopePositionEmbedding._init_weights, init_weights_vit's mask
        exact("ls gammas (constant_ 1e-5)", gammas, torch.nn.init.constant_(torch.empty(D), 1e-5))
        n = D // heads
        exact("rope_embed.periods", ["rope_embed.periods"],
              100 ** (2 * torch.arange(n // 4, dtype=torch.float32) / (n // 2)))
        mask = torch.full((3 * D,), float("nan"))
        mask.fill_(1)
        mask[3 * D // 3:2 * (3 * D) // 3].fill_(0)
        exact("qkv.bias_mask", ["blocks.%s.attn.qkv.bias_mask" % b for b in blocks], mask)
        ks_normal("cls_token + storage_tokens", ["cls_token", "storage_tokens"], 0.02, False)
    return ok


if __name__ == "__main__":
    sys.exit(main())
