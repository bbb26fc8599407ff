#!/usr/bin/python3
"""tests/ref/dino23_ref.py — reference forwards of DINOv2 (plain and with registers) and DINOv3
ViTs from torch primitives, the data tests/test_dino23.c checks keycut's forward against, and
PyTorch's speed on the same networks.

Usage:
    /usr/bin/python3 tests/ref/dino23_ref.py tiny OUT_DIR
        the committed tiny cases (this is how tests/data/dino23/ was made): width 128, 2 heads of
        64 (the fused attention path), depth 2, MLP 256, patch 14 (DINOv2, trained grid 8x8) or 16
        (DINOv3), one weights file per family, inputs at three sizes, the expected keys / tokens /
        attention and the outputs of the wrong formulas the test must be far from; OUT_DIR/cases.txt.
    /usr/bin/python3 tests/ref/dino23_ref.py forms DATA_DIR OUT_DIR
        the two other file forms of each committed tiny network (hub .pth, training checkpoint,
        Hugging Face safetensors + config.json), read back from DATA_DIR's files: test_dino23
        runs it at test time (python3-torch) for the cases whose weights start with '@'.
    /usr/bin/python3 tests/ref/dino23_ref.py full [--all] OUT_DIR
        full-size ViT-S/14, ViT-S/14 with 4 registers and ViT-S/16 with 4 storage tokens as hub
        .pth files, random images and their expected outputs (tests/test_dino23_full.sh, under
        $BUILD): FULL_DEFAULT's (family, size) pairs, or with --all every family at 224, at the
        480 policy (490 for patch 14) and at a native non-square 240x320 image padded to the patch.
    /usr/bin/python3 tests/ref/dino23_ref.py weights OUT_DIR
        the three full-size networks as .pth only (tests/bench_vit.sh times keycut on them).
    /usr/bin/python3 tests/ref/dino23_ref.py bench dinov2|dinov2_reg|dinov3 [SIZE] [IMAGES]
        PyTorch's time for that ViT-S forward on a SIZE x SIZE image (default: the 480 policy,
        490 for patch 14): keys only (blocks before the last, then the last norm1 and qkv) and
        the full forward with the final norm, float32, 2 threads, as vit_ref.py's "best".

cases.txt, one case per line, fields separated by spaces:
    name weights posembed pre_rope ln_eps height width input keys tokens attn [check...]
  weights: a path relative to the folder, or '@path' in the folder of the "forms" step;
  posembed: auto | dino | hf | aa (vit_opts.posembed); pre_rope: vit_opts.keys_pre_rope;
  ln_eps: vit_opts.ln_eps (0 = the family's); input: HWC RGB uint8 (.u8, normalised with the
  ImageNet mean / std in float32 as kc-extract does) or CHW float32 (.f32); keys (G, D), tokens
  (G, D), attn (heads, G): float32 files.  Each check is KIND:LABEL:FILE with KIND keys, tokens
  or attn: the output of a wrong formula (LABEL) that keycut's output must be further than the
  tolerance from.  Tolerance: max |keycut - expected| <= 2e-6 * max |expected| per output, the
  rule README.md states for DINO's paths against PyTorch.  For scale: PyTorch's own float32
  forwards of the same networks (this forward in float32, and forward_f32, written the other way
  round) are 2.4e-7 to 5.6e-7 of max from these references on the tiny cases ("tiny" prints it
  per case and refuses to write the data if forward_f32 is beyond the tolerance) and 5e-7 to
  8.9e-7 on the full-size ones at 224; every wrong formula is at least 10 tolerances away (the
  script refuses to write a case otherwise; the eps ones, the closest, are 29x to 43x).

The network, written from the official code's formulas (not its code) in float64, except where
the official model itself computes in float32 on purpose (the position-embedding resampling
and the RoPE sin / cos tables, reproduced in float32 with the same torch primitives).  Facts
confirmed in the official code (search index, 2026; file @ commit):
  * token order [CLS, R prefix tokens, patches]; DINOv2 adds the position embedding to CLS and
    patches first and then inserts the registers between them (registers get none):
    facebookresearch/dinov2 dinov2/models/vision_transformer.py @ 112792f1
    prepare_tokens_with_masks; DINOv3: [cls_token + 0 * mask_token, storage_tokens, patches], no
    absolute position embedding: facebookresearch/dinov3 dinov3/models/vision_transformer.py
    @ 583c867b prepare_tokens_with_masks.
  * pre-norm blocks x += ls1(attn(norm1 x)); x += ls2(mlp(norm2 x)), LayerScale x * gamma:
    dinov3 dinov3/layers/block.py @ 1eac7fce _forward_list; the prefix tokens take part in every
    attention (nothing masks them).
  * LayerNorm eps: DINOv2 partial(nn.LayerNorm, eps=1e-6) (vision_transformer.py @ 112792f1);
    DINOv3 "layernormbf16" = LayerNorm(eps=1e-5), used by every hub ViT
    (vision_transformer.py @ 583c867b norm_layer_dict; dinov3/hub/backbones.py @ 071435e6).
  * DINOv2 position embedding (interpolate_pos_encoding @ 112792f1): unchanged when the patch
    count equals the trained one and the image is square; else, in float32,
    F.interpolate(bicubic) of the n x n grid with scale_factor ((gh + offset) / n,
    (gw + offset) / n) when interpolate_offset is non-zero, else size (gh, gw), antialias =
    interpolate_antialias in both.  Hub arguments (dinov2/hub/backbones.py, copies found by
    find_string): dinov2_vits14 offset 0.1, no antialias; dinov2_vits14_reg
    num_register_tokens 4, interpolate_antialias True, interpolate_offset 0.0 (size mode).
  * Hugging Face: Dinov2Model resamples with size = (gh, gw) and no antialias
    (transformers models/dinov2/modeling_dinov2.py @ 015e6876), Dinov2WithRegistersModel with
    size and antialias=True (modular_dinov2_with_registers.py @ 052b1dcd).
  * DINOv3 masked key bias: LinearKMaskedBias uses bias * bias_mask (dinov3/layers/attention.py,
    fork sergiocanar/dinov3 @ 2ff68bee: the official repository's copy of this file is not in
    the index); init_weights_vit fills bias_mask with 1 and zeroes its middle third
    (vision_transformer.py @ 583c867b).
  * DINOv3 RoPE (dinov3/layers/rope_position_encoding.py, fork pallgeuer/dinov3 @ cc64e852, and
    attention.py above): periods = base ** (2 * arange(hd/4) / (hd/2)) in the rope dtype (fp32 in
    every hub ViT), a persistent buffer read from the file; coordinates per axis ('separate'):
    y = 2 * ((r + 0.5) / gh) - 1, x likewise with gw; angles = 2 pi coord / period laid out
    [y: hd/4 | x: hd/4] and tiled twice to hd; out = x cos + rotate_half(x) sin with
    rotate_half(x) = [-x2, x1] (halves of head_dim); applied to q and k of the patch tokens only
    (the first N - gh*gw rows untouched), before the softmax with scale hd^-0.5.
    Hugging Face DINOv3ViTModel recomputes inv_freq = 1 / rope_theta ** arange(0, 1, 4 / hd)
    (no periods, no bias_mask in its files, k_proj without bias: modeling_dinov3_vit.py
    @ 015e6876).
  * keys = the last block's k of the patch rows as the attention uses them (after RoPE, with
    the masked bias for DINOv3), heads concatenated; tokens = the final norm's patch rows;
    attn = the CLS row of the last block's softmax over all N tokens, patch columns only, not
    renormalised (docs of vit_opts, pipeline/model/vit.h).
"""
import json
import math
import os
import struct
import sys
import time
from collections import OrderedDict

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vit_ref import save_safetensors  # noqa: E402  (the same hand-written format)

TOL = 2e-6          # max |diff| <= TOL * max |expected|
MARGIN = 10.0       # every wrong formula must be at least MARGIN * TOL away from the expected
MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)
FAMILIES = ("dinov2", "dinov2_reg", "dinov3")


# ---- networks ------------------------------------------------------------------------------------

class Shape:
    """Architecture of one network (the tensors say it; this is what the generator needs)."""

    def __init__(self, family, dim, depth, heads, mlp, patch, n=0, prefix=0):
        self.family, self.dim, self.depth, self.heads, self.mlp = family, dim, depth, heads, mlp
        self.patch, self.n, self.prefix = patch, n, prefix
        self.hd = dim // heads

    def default_eps(self):
        return 1e-5 if self.family == "dinov3" else 1e-6

    def default_pos(self):
        return {"dinov2": "dino", "dinov2_reg": "aa", "dinov3": None}[self.family]


def tiny_shape(family):
    if family == "dinov3":
        return Shape(family, 128, 2, 2, 256, 16, 0, 4)
    return Shape(family, 128, 2, 2, 256, 14, 8, 4 if family == "dinov2_reg" else 0)


def full_shape(family):
    if family == "dinov3":
        return Shape(family, 384, 12, 6, 1536, 16, 0, 4)
    return Shape(family, 384, 12, 6, 1536, 14, 37, 4 if family == "dinov2_reg" else 0)


def default_periods(hd, base=100.0):
    """The fp32 buffer of RopePositionEmbedding._init_weights (exponent 2i / (hd / 2))."""
    return base ** (2 * torch.arange(hd // 4, dtype=torch.float32) / (hd // 2))


def make_params(s, seed_blocks, seed_embed, residual=0.1, bf16_periods=False):
    """Seeded random weights far from the official init: LayerNorm weights N(1, 0.3), LN / qkv /
    fc1 biases N(0, 0.3) (the k third of qkv.bias too), LayerScale gammas U(0.3, 1.5), prefix
    tokens and position embeddings N(0, residual).  What is added to the residual stream (patch
    embedding, position embedding, CLS / prefix tokens, proj and fc2 with their biases) is kept
    near `residual` in size, so the LayerNorm inputs have a variance of ~residual^2 and the eps
    (1e-6 vs 1e-5) moves the outputs far beyond the tolerance.  The blocks depend on seed_blocks
    only, so families of one width share them."""
    D, M, p = s.dim, s.mlp, s.patch
    gb = torch.Generator().manual_seed(seed_blocks)
    ge = torch.Generator().manual_seed(seed_embed)

    def normal(g, shape, sd, mean=0.0):
        return torch.randn(*shape, generator=g) * sd + mean

    def uniform(g, shape, lo, hi):
        return torch.rand(*shape, generator=g) * (hi - lo) + lo

    P = OrderedDict()
    P["cls_token"] = normal(ge, (1, 1, D), residual)
    if s.family != "dinov3":
        P["pos_embed"] = normal(ge, (1, 1 + s.n * s.n, D), residual)
    if s.prefix:
        P["register_tokens"] = normal(ge, (1, s.prefix, D), residual)
    P["mask_token"] = torch.zeros(1, D)
    # the input is ~unit variance; this keeps the patch embedding near `residual`
    P["patch_embed.proj.weight"] = normal(ge, (D, 3, p, p), residual / math.sqrt(3 * p * p))
    P["patch_embed.proj.bias"] = normal(ge, (D,), residual)
    if s.family == "dinov3":
        per = default_periods(s.hd)
        if bf16_periods:
            per = per.to(torch.bfloat16).to(torch.float32)
        P["rope_embed.periods"] = per
    for b in range(s.depth):
        q = "blocks.%d." % b
        P[q + "norm1.weight"] = normal(gb, (D,), 0.3, 1.0)
        P[q + "norm1.bias"] = normal(gb, (D,), 0.3)
        P[q + "attn.qkv.weight"] = normal(gb, (3 * D, D), 0.6 / math.sqrt(D))
        P[q + "attn.qkv.bias"] = normal(gb, (3 * D,), 0.3)
        P[q + "attn.proj.weight"] = normal(gb, (D, D), 2 * residual / math.sqrt(D))
        P[q + "attn.proj.bias"] = normal(gb, (D,), residual)
        P[q + "ls1.gamma"] = uniform(gb, (D,), 0.3, 1.5)
        P[q + "norm2.weight"] = normal(gb, (D,), 0.3, 1.0)
        P[q + "norm2.bias"] = normal(gb, (D,), 0.3)
        P[q + "mlp.fc1.weight"] = normal(gb, (M, D), 1 / math.sqrt(D))
        P[q + "mlp.fc1.bias"] = normal(gb, (M,), 0.3)
        P[q + "mlp.fc2.weight"] = normal(gb, (D, M), 2 * residual / math.sqrt(M))
        P[q + "mlp.fc2.bias"] = normal(gb, (D,), residual)
        P[q + "ls2.gamma"] = uniform(gb, (D,), 0.3, 1.5)
        if s.family == "dinov3":
            mask = torch.ones(3 * D)
            mask[D:2 * D] = 0
            P[q + "attn.qkv.bias_mask"] = mask
    P["norm.weight"] = normal(ge, (D,), 0.3, 1.0)
    P["norm.bias"] = normal(ge, (D,), 0.3)
    if s.family == "dinov3" and "register_tokens" in P:  # DINOv3's own name
        P = OrderedDict((("storage_tokens" if k == "register_tokens" else k), v) for k, v in P.items())
    return P


def shape_of(P, heads):
    """The Shape of a state dict in canonical (hub) names."""
    D = P["cls_token"].shape[-1]
    depth = 1 + max(int(k.split(".")[1]) for k in P if k.startswith("blocks."))
    fam = "dinov3" if "rope_embed.periods" in P else ("dinov2_reg" if "register_tokens" in P else "dinov2")
    prefix = P.get("register_tokens", P.get("storage_tokens", torch.zeros(1, 0, D))).shape[1]
    n = int(round(math.sqrt(P["pos_embed"].shape[1] - 1))) if "pos_embed" in P else 0
    return Shape(fam, D, depth, heads, P["blocks.0.mlp.fc1.weight"].shape[0],
                 P["patch_embed.proj.weight"].shape[-1], n, prefix)


# ---- the forward ---------------------------------------------------------------------------------

def resample_pos(grid, n, gh, gw, mode):
    """grid: (n*n, D) float32 -> (gh*gw, D) float32, as DINOv2's interpolate_pos_encoding (dino:
    scale factor with offset 0.1; aa: size with antialias) or Hugging Face's Dinov2Model (hf: size,
    no antialias).  The caller skips it for a square image of the trained patch count."""
    D = grid.shape[-1]
    g = grid.float().reshape(1, n, n, D).permute(0, 3, 1, 2)
    if mode == "dino":
        sy, sx = float(gh + 0.1) / n, float(gw + 0.1) / n
        out = F.interpolate(g, mode="bicubic", antialias=False, scale_factor=(sy, sx))
    elif mode == "hf":
        out = F.interpolate(g, mode="bicubic", antialias=False, size=(gh, gw), align_corners=False)
    elif mode == "aa":
        out = F.interpolate(g, mode="bicubic", antialias=True, size=(gh, gw), align_corners=False)
    else:
        raise ValueError(mode)
    assert out.shape[-2:] == (gh, gw), (out.shape, gh, gw)
    return out.permute(0, 2, 3, 1).reshape(gh * gw, D)


def rope_tables(periods, gh, gw, normalize="separate"):
    """sin, cos: (gh*gw, hd) float32, computed as RopePositionEmbedding.forward does in float32."""
    dd = {"dtype": torch.float32}
    if normalize == "separate":
        ch = torch.arange(0.5, gh, **dd) / gh
        cw = torch.arange(0.5, gw, **dd) / gw
    elif normalize == "max":  # a wrong formula, for a check
        ch = torch.arange(0.5, gh, **dd) / max(gh, gw)
        cw = torch.arange(0.5, gw, **dd) / max(gh, gw)
    else:
        raise ValueError(normalize)
    coords = torch.stack(torch.meshgrid(ch, cw, indexing="ij"), dim=-1).flatten(0, 1)  # (G, 2)
    coords = 2.0 * coords - 1.0
    angles = 2 * math.pi * coords.unsqueeze(-1) / periods.float()  # (G, 2, hd/4)
    angles = angles.flatten(-2, -1).tile(2)  # (G, hd)
    return torch.sin(angles), torch.cos(angles)


def rotate(x, sin, cos):
    """x: (heads, G, hd) -> x cos + [-x2, x1] sin."""
    half = x.shape[-1] // 2
    return x * cos + torch.cat([-x[..., half:], x[..., :half]], dim=-1) * sin


def layer_norm(x, w, b, eps):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps) * w + b


def forward(P, s, chw, eps=None, pos=None, mask_k=True, periods=None, normalize="separate",
            registers=True, dtype=torch.float64):
    """P: canonical state dict; chw: (3, H, W) float32 tensor.  Returns numpy float32 arrays
    keys (G, D) after RoPE, keys_pre_rope (G, D), tokens (G, D), attn (heads, G) and the
    renormalised attention (the wrong formula).  eps / pos default to the family's rule; the
    other arguments select the wrong formulas the test must be far from."""
    eps = s.default_eps() if eps is None else eps
    pos = s.default_pos() if pos is None else pos
    D, hd, heads = s.dim, s.hd, s.heads
    T = {k: v.to(dtype) for k, v in P.items()}
    p = s.patch
    gh, gw = chw.shape[1] // p, chw.shape[2] // p
    G = gh * gw
    x = F.conv2d(chw.to(dtype)[None], T["patch_embed.proj.weight"], T["patch_embed.proj.bias"], stride=p)
    x = x[0].flatten(1).transpose(0, 1)  # (G, D), row-major grid
    prefix_name = "storage_tokens" if s.family == "dinov3" else "register_tokens"
    regs = T[prefix_name][0] if (prefix_name in T and registers) else torch.zeros(0, D, dtype=dtype)
    if s.family == "dinov3":
        cls = T["cls_token"][0] + 0 * T["mask_token"].reshape(1, D)
        sin, cos = rope_tables(P["rope_embed.periods"] if periods is None else periods, gh, gw, normalize)
        sin, cos = sin.to(dtype), cos.to(dtype)
    else:
        pe = P["pos_embed"][0]
        if G == s.n * s.n and gh == gw:
            grid = pe[1:]
        else:
            grid = resample_pos(pe[1:], s.n, gh, gw, pos)
        x = x + grid.to(dtype)
        cls = T["cls_token"][0] + T["pos_embed"][0, :1]
    x = torch.cat([cls, regs, x], 0)  # (N, D)
    N, Pn = x.shape[0], x.shape[0] - G
    out = {}
    for b in range(s.depth):
        q_ = "blocks.%d." % b
        h = layer_norm(x, T[q_ + "norm1.weight"], T[q_ + "norm1.bias"], eps)
        bias = T[q_ + "attn.qkv.bias"]
        if s.family == "dinov3" and mask_k:
            bias = bias * T[q_ + "attn.qkv.bias_mask"]
        qkv = h @ T[q_ + "attn.qkv.weight"].T + bias  # (N, 3D)
        q, k, v = (qkv[:, i * D:(i + 1) * D].reshape(N, heads, hd).transpose(0, 1) for i in range(3))
        k_pre = k
        if s.family == "dinov3":
            q = torch.cat([q[:, :Pn], rotate(q[:, Pn:], sin, cos)], 1)
            k = torch.cat([k[:, :Pn], rotate(k[:, Pn:], sin, cos)], 1)
        o = torch.empty(N, D, dtype=dtype)
        attn = torch.empty(heads, G, dtype=dtype)
        for hh in range(heads):  # one head at a time: 2-D products (batched ones are slow in float64)
            a = torch.softmax((q[hh] @ k[hh].T) * hd ** -0.5, dim=-1)  # (N, N)
            o[:, hh * hd:(hh + 1) * hd] = a @ v[hh]
            attn[hh] = a[0, Pn:]
        if b == s.depth - 1:
            out["keys"] = k[:, Pn:].transpose(0, 1).reshape(G, D)
            out["keys_pre_rope"] = k_pre[:, Pn:].transpose(0, 1).reshape(G, D)
            out["attn"] = attn
            out["attn_renorm"] = attn / attn.sum(-1, keepdim=True)
        x = x + T[q_ + "ls1.gamma"] * (o @ T[q_ + "attn.proj.weight"].T + T[q_ + "attn.proj.bias"])
        h = layer_norm(x, T[q_ + "norm2.weight"], T[q_ + "norm2.bias"], eps)
        h = F.gelu(h @ T[q_ + "mlp.fc1.weight"].T + T[q_ + "mlp.fc1.bias"])
        x = x + T[q_ + "ls2.gamma"] * (h @ T[q_ + "mlp.fc2.weight"].T + T[q_ + "mlp.fc2.bias"])
    out["tokens"] = layer_norm(x, T["norm.weight"], T["norm.bias"], eps)[Pn:]
    return {k: v.to(torch.float32).numpy() for k, v in out.items()}


def rel(a, b):
    """max |a - b| / max |b|"""
    return float(np.abs(a.astype(np.float64) - b).max() / np.abs(b).max())


# ---- inputs ------------------------------------------------------------------------------------

def random_image(seed, h, w):
    """A seeded random RGB image, (h, w, 3) uint8."""
    return np.random.default_rng(seed).integers(0, 256, size=(h, w, 3), dtype=np.uint8)


def normalise(u8):
    """(h, w, 3) uint8 -> (3, h, w) float32: (v / 255 - mean) / sd in float32, per channel."""
    x = u8.astype(np.float32) / np.float32(255)
    x = (x - np.array(MEAN, np.float32)) / np.array(STD, np.float32)
    return torch.from_numpy(np.ascontiguousarray(x.transpose(2, 0, 1)))


# ---- file forms --------------------------------------------------------------------------------

def state_dict_module(P):
    """An nn.Module holding P under its names, so that torch.save writes a real state_dict (an
    OrderedDict with _metadata, as the hubs' files are)."""
    root = torch.nn.Module()
    for name, t in P.items():
        mod = root
        parts = name.split(".")
        for part in parts[:-1]:
            if not hasattr(mod, part):
                mod.add_module(part, torch.nn.Module())
            mod = getattr(mod, part)
        if parts[-1] in ("bias_mask", "periods"):  # persistent buffers in the official modules
            mod.register_buffer(parts[-1], t.clone())
        else:
            mod.register_parameter(parts[-1], torch.nn.Parameter(t.clone(), requires_grad=False))
    return root


def save_hub(path, P):
    torch.save(state_dict_module(P).state_dict(), path)


def heads_state(s, seed, weight_norm):
    """Small DINO / iBOT heads of a training checkpoint (skipped by the loader)."""
    g = torch.Generator().manual_seed(seed)
    H = OrderedDict()
    for head in ("dino_head", "ibot_head"):
        dims = [s.dim, 32, 32, 16]
        for i in range(3):
            H["%s.mlp.%d.weight" % (head, 2 * i)] = torch.randn(dims[i + 1], dims[i], generator=g)
            H["%s.mlp.%d.bias" % (head, 2 * i)] = torch.randn(dims[i + 1], generator=g)
        if weight_norm:  # DINOv2's weight-normed last layer
            H[head + ".last_layer.weight_g"] = torch.ones(64, 1)
            H[head + ".last_layer.weight_v"] = torch.randn(64, 16, generator=g)
        else:
            H[head + ".last_layer.weight"] = torch.randn(64, 16, generator=g)
    return H


def save_training(path, P, s, chunks=0):
    """{'teacher': teacher.state_dict()} with 'backbone.' names and the heads; DINOv2 with
    block_chunks = chunks > 0 names block i 'blocks.{i // (depth / chunks)}.{i}.'."""
    B = OrderedDict()
    for k, v in P.items():
        if chunks and k.startswith("blocks."):
            i = int(k.split(".")[1])
            k = "blocks.%d.%d.%s" % (i // (s.depth // chunks), i, k.split(".", 2)[2])
        B[k] = v
    T = OrderedDict(("backbone." + k, v) for k, v in state_dict_module(B).state_dict().items())
    T.update(heads_state(s, 99, s.family != "dinov3"))
    torch.save({"teacher": T}, path)


def hf_state(P, s):
    """Canonical names -> the Hugging Face model's (Dinov2Model / Dinov2WithRegistersModel /
    DINOv3ViTModel).  DINOv3 loses bias_mask, periods and the k bias, as its converter does."""
    D = s.dim
    O = OrderedDict()
    if s.family == "dinov3":
        O["embeddings.cls_token"] = P["cls_token"]
        O["embeddings.mask_token"] = P["mask_token"].reshape(1, 1, D)
        O["embeddings.register_tokens"] = P["storage_tokens"]
        O["embeddings.patch_embeddings.weight"] = P["patch_embed.proj.weight"]
        O["embeddings.patch_embeddings.bias"] = P["patch_embed.proj.bias"]
        for b in range(s.depth):
            f, t = "blocks.%d." % b, "layer.%d." % b
            for nm in ("norm1", "norm2"):
                O[t + nm + ".weight"], O[t + nm + ".bias"] = P[f + nm + ".weight"], P[f + nm + ".bias"]
            W, bias = P[f + "attn.qkv.weight"], P[f + "attn.qkv.bias"]
            for i, nm in enumerate(("q_proj", "k_proj", "v_proj")):
                O[t + "attention.%s.weight" % nm] = W[i * D:(i + 1) * D]
                if nm != "k_proj":
                    O[t + "attention.%s.bias" % nm] = bias[i * D:(i + 1) * D]
            O[t + "attention.o_proj.weight"] = P[f + "attn.proj.weight"]
            O[t + "attention.o_proj.bias"] = P[f + "attn.proj.bias"]
            O[t + "layer_scale1.lambda1"] = P[f + "ls1.gamma"]
            O[t + "layer_scale2.lambda1"] = P[f + "ls2.gamma"]
            O[t + "mlp.up_proj.weight"], O[t + "mlp.up_proj.bias"] = P[f + "mlp.fc1.weight"], P[f + "mlp.fc1.bias"]
            O[t + "mlp.down_proj.weight"], O[t + "mlp.down_proj.bias"] = P[f + "mlp.fc2.weight"], P[f + "mlp.fc2.bias"]
        O["norm.weight"], O["norm.bias"] = P["norm.weight"], P["norm.bias"]
        return O
    O["embeddings.cls_token"] = P["cls_token"]
    O["embeddings.mask_token"] = P["mask_token"]
    O["embeddings.position_embeddings"] = P["pos_embed"]
    if "register_tokens" in P:
        O["embeddings.register_tokens"] = P["register_tokens"]
    O["embeddings.patch_embeddings.projection.weight"] = P["patch_embed.proj.weight"]
    O["embeddings.patch_embeddings.projection.bias"] = P["patch_embed.proj.bias"]
    for b in range(s.depth):
        f, t = "blocks.%d." % b, "encoder.layer.%d." % b
        for nm in ("norm1", "norm2", "mlp.fc1", "mlp.fc2"):
            O[t + nm + ".weight"], O[t + nm + ".bias"] = P[f + nm + ".weight"], P[f + nm + ".bias"]
        W, bias = P[f + "attn.qkv.weight"], P[f + "attn.qkv.bias"]
        for i, nm in enumerate(("query", "key", "value")):
            O[t + "attention.attention.%s.weight" % nm] = W[i * D:(i + 1) * D]
            O[t + "attention.attention.%s.bias" % nm] = bias[i * D:(i + 1) * D]
        O[t + "attention.output.dense.weight"] = P[f + "attn.proj.weight"]
        O[t + "attention.output.dense.bias"] = P[f + "attn.proj.bias"]
        O[t + "layer_scale1.lambda1"] = P[f + "ls1.gamma"]
        O[t + "layer_scale2.lambda1"] = P[f + "ls2.gamma"]
    O["layernorm.weight"], O["layernorm.bias"] = P["norm.weight"], P["norm.bias"]
    return O


def hf_config(s):
    if s.family == "dinov3":
        return {"architectures": ["DINOv3ViTModel"], "model_type": "dinov3_vit",
                "hidden_size": s.dim, "intermediate_size": s.mlp, "num_hidden_layers": s.depth,
                "num_attention_heads": s.heads, "patch_size": s.patch, "image_size": 224,
                "num_channels": 3, "hidden_act": "gelu", "layer_norm_eps": 1e-5, "rope_theta": 100.0,
                "layerscale_value": 1e-5, "num_register_tokens": s.prefix, "query_bias": True,
                "key_bias": False, "value_bias": True, "proj_bias": True, "mlp_bias": True,
                "use_gated_mlp": False, "pos_embed_rescale": 2.0, "torch_dtype": "float32"}
    c = {"architectures": ["Dinov2Model"], "model_type": "dinov2", "hidden_size": s.dim,
         "num_hidden_layers": s.depth, "num_attention_heads": s.heads, "mlp_ratio": s.mlp // s.dim,
         "patch_size": s.patch, "image_size": s.n * s.patch, "num_channels": 3, "hidden_act": "gelu",
         "layer_norm_eps": 1e-6, "layerscale_value": 1.0, "use_swiglu_ffn": False, "qkv_bias": True,
         "torch_dtype": "float32"}
    if s.family == "dinov2_reg":
        c.update(architectures=["Dinov2WithRegistersModel"], model_type="dinov2_with_registers",
                 num_register_tokens=s.prefix)
    return c


def save_hf(folder, P, s):
    os.makedirs(folder, exist_ok=True)
    save_safetensors(os.path.join(folder, "model.safetensors"), hf_state(P, s))
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(hf_config(s), f, indent=2)
        f.write("\n")


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = OrderedDict()
    for name, h in header.items():
        if name == "__metadata__":
            continue
        assert h["dtype"] == "F32", h
        a, b = h["data_offsets"]
        out[name] = torch.from_numpy(np.frombuffer(data[a:b], "<f4").copy().reshape(h["shape"]))
    return out


def canonical_from_hf(O, family):
    """The inverse of hf_state for DINOv2 (used by the forms step)."""
    P = OrderedDict()
    P["cls_token"] = O["embeddings.cls_token"]
    P["pos_embed"] = O["embeddings.position_embeddings"]
    if "embeddings.register_tokens" in O:
        P["register_tokens"] = O["embeddings.register_tokens"]
    P["mask_token"] = O["embeddings.mask_token"]
    P["patch_embed.proj.weight"] = O["embeddings.patch_embeddings.projection.weight"]
    P["patch_embed.proj.bias"] = O["embeddings.patch_embeddings.projection.bias"]
    depth = 1 + max(int(k.split(".")[2]) for k in O if k.startswith("encoder.layer."))
    for b in range(depth):
        f, t = "encoder.layer.%d." % b, "blocks.%d." % b
        for part in ("weight", "bias"):
            P[t + "norm1." + part] = O[f + "norm1." + part]
            P[t + "attn.qkv." + part] = torch.cat([O[f + "attention.attention.%s.%s" % (nm, part)]
                                                   for nm in ("query", "key", "value")])
            P[t + "attn.proj." + part] = O[f + "attention.output.dense." + part]
        P[t + "ls1.gamma"] = O[f + "layer_scale1.lambda1"]
        for part in ("weight", "bias"):
            P[t + "norm2." + part] = O[f + "norm2." + part]
            P[t + "mlp.fc1." + part] = O[f + "mlp.fc1." + part]
            P[t + "mlp.fc2." + part] = O[f + "mlp.fc2." + part]
        P[t + "ls2.gamma"] = O[f + "layer_scale2.lambda1"]
    P["norm.weight"], P["norm.bias"] = O["layernorm.weight"], O["layernorm.bias"]
    return P


def canonical_from_training(path):
    T = torch.load(path, map_location="cpu")["teacher"]
    P = OrderedDict()
    for k, v in T.items():
        if not k.startswith("backbone."):
            continue
        k = k[len("backbone."):]
        parts = k.split(".")
        if parts[0] == "blocks" and parts[2].isdigit():  # chunked: blocks.C.i.rest
            k = "blocks.%s.%s" % (parts[2], ".".join(parts[3:]))
        P[k] = v
    return P


# ---- the committed tiny cases --------------------------------------------------------------------

# the committed form of each family (the other two are made at test time by "forms")
TINY_FILES = {"dinov2": "dinov2_hf/model.safetensors", "dinov2_reg": "dinov2_reg_train.pth",
              "dinov3": "dinov3.pth"}
# grid sizes: the trained square, a square enlargement and a non-square grid
TINY_GRIDS = {"sq": (8, 8), "up": (10, 10), "nsq": (7, 11)}


class CaseWriter:
    def __init__(self, out):
        self.out, self.lines, self.report, self.written = out, [], [], {}

    def blob(self, name, a):
        """Writes a as float32 under name, or returns the name of an identical file written before."""
        data = np.ascontiguousarray(a, dtype="<f4").tobytes()
        if data in self.written:
            return self.written[data]
        with open(os.path.join(self.out, name), "wb") as f:
            f.write(data)
        self.written[data] = name
        return name

    def case(self, name, weights, opts, hw, inp, ref, checks, fp32=None):
        """ref: dict keys / tokens / attn (numpy); checks: list of (kind, label, array);
        opts: (posembed, pre_rope, ln_eps); fp32: the same outputs from a float32 forward."""
        files = {}
        for kind in ("keys", "tokens", "attn"):
            files[kind] = self.blob("%s.%s.f32" % (name, kind), ref[kind])
        words = [name, weights, opts[0], str(opts[1]), repr(opts[2]), str(hw[0]), str(hw[1]), inp,
                 files["keys"], files["tokens"], files["attn"]]
        for kind, label, arr in checks:
            d = rel(arr, ref[kind])
            if d < MARGIN * TOL:
                raise SystemExit("%s: the wrong formula %s moves %s by only %.3g of max (need >= %g)"
                                 % (name, label, kind, d, MARGIN * TOL))
            words.append("%s:%s:%s" % (kind, label, self.blob("%s.%s_%s.f32" % (name, kind, label), arr)))
            self.report.append("%-16s %-7s %-14s %.3g of max (%.0fx the tolerance)" % (name, kind, label, d, d / TOL))
        if fp32 is not None:
            self.report.append("%-16s float32 torch vs this reference: keys %.2g, tokens %.2g, attn %.2g of max"
                               % (name, rel(fp32["keys"], ref["keys"]), rel(fp32["tokens"], ref["tokens"]),
                                  rel(fp32["attn"], ref["attn"])))
        self.lines.append(" ".join(words))

    def reuse(self, name, weights, opts, hw, inp, files, checks=()):
        """A case whose expected outputs are files already written (another form, same network)."""
        words = [name, weights, opts[0], str(opts[1]), repr(opts[2]), str(hw[0]), str(hw[1]), inp,
                 files[0], files[1], files[2]] + ["%s:%s:%s" % c for c in checks]
        self.lines.append(" ".join(words))

    def finish(self, header):
        with open(os.path.join(self.out, "cases.txt"), "w") as f:
            f.write(header)
            f.write("\n".join(self.lines) + "\n")


CASES_HEADER = """# tests/data/dino23/cases.txt, written by tests/ref/dino23_ref.py tiny (its docstring: the format)
# name weights posembed pre_rope ln_eps height width input keys tokens attn [kind:wrong-formula:file...]
"""


def tiny_networks():
    """The three tiny networks (canonical names): one block seed for all, so the files share bytes."""
    nets = {}
    for i, fam in enumerate(FAMILIES):
        s = tiny_shape(fam)
        nets[fam] = (s, make_params(s, 1, 10 + i, bf16_periods=(fam == "dinov3")))
    return nets


def tiny(out):
    os.makedirs(out, exist_ok=True)
    torch.set_num_threads(2)
    nets = tiny_networks()
    w = CaseWriter(out)
    # the committed forms
    s2, P2 = nets["dinov2"]
    save_hf(os.path.join(out, "dinov2_hf"), P2, s2)
    sr, Pr = nets["dinov2_reg"]
    save_training(os.path.join(out, TINY_FILES["dinov2_reg"]), Pr, sr, chunks=1)
    s3, P3 = nets["dinov3"]
    save_hub(os.path.join(out, TINY_FILES["dinov3"]), P3)
    # inputs (uint8 images), shared by the families of one patch size
    inputs = {}
    for patch in (14, 16):
        for tag, (gh, gw) in TINY_GRIDS.items():
            nm = "img%d_%s.u8" % (patch, tag)
            u8 = random_image(1000 * patch + gh * 31 + gw, gh * patch, gw * patch)
            u8.tofile(os.path.join(out, nm))
            inputs[patch, tag] = (nm, normalise(u8), (gh * patch, gw * patch))

    auto = ("auto", 0, 0.0)
    for fam in FAMILIES:
        s, P = nets[fam]
        weights = TINY_FILES[fam]
        for tag in TINY_GRIDS:
            nm, img, hw = inputs[s.patch, tag]
            name = "%s_%s" % (fam, tag)
            ref = forward(P, s, img)
            fp32 = forward(P, s, img, dtype=torch.float32)
            # the second implementation agrees within its float32 rounding
            for kind, alt in (("keys", forward_f32(P, s, img, True)), ("tokens", forward_f32(P, s, img, False))):
                d = rel(alt.numpy(), ref[kind])
                w.report.append("%-16s forward_f32 %s vs this reference: %.2g of max" % (name, kind, d))
                if d > TOL:
                    raise SystemExit("%s: the two implementations differ: %s %.3g of max" % (name, kind, d))
            checks = [("attn", "renorm", ref["attn_renorm"])]
            if fam != "dinov3" and tag != "sq":  # the other position rules
                for mode in ("dino", "hf", "aa"):
                    if mode != s.default_pos():
                        checks.append(("keys", "pos_" + mode, forward(P, s, img, pos=mode)["keys"]))
            if fam == "dinov3":
                checks.append(("keys", "prerope", ref["keys_pre_rope"]))
            if tag == "nsq":
                wrong_eps = 1e-5 if fam != "dinov3" else 1e-6
                alt = forward(P, s, img, eps=wrong_eps)
                lab = "eps%g" % wrong_eps
                checks += [("keys", lab, alt["keys"]), ("tokens", lab, alt["tokens"])]
                if fam == "dinov2_reg":
                    alt = forward(P, s, img, registers=False)
                    checks += [("keys", "noreg", alt["keys"]), ("attn", "noreg", alt["attn"])]
                if fam == "dinov3":
                    alt = forward(P, s, img, mask_k=False)
                    checks += [("keys", "nomask", alt["keys"]), ("tokens", "nomask", alt["tokens"])]
                    alt = forward(P, s, img, normalize="max")
                    checks.append(("keys", "coords_max", alt["keys"]))
                    alt = forward(P, s, img, periods=default_periods(s.hd))
                    checks += [("keys", "periods_formula", alt["keys"]), ("tokens", "periods_formula", alt["tokens"])]
            w.case(name, weights, auto, hw, nm, ref, checks, fp32)
        # the other forms of the same network (made at test time), non-square grid
        nm, img, hw = inputs[s.patch, "nsq"]
        base = "%s_nsq" % fam
        files = ("%s.keys.f32" % base, "%s.tokens.f32" % base, "%s.attn.f32" % base)
        if fam == "dinov2":
            w.reuse(fam + "_pth", "@dinov2.pth", auto, hw, nm, files)
            w.reuse(fam + "_train", "@dinov2_train.pth", auto, hw, nm, files)
        elif fam == "dinov2_reg":
            w.reuse(fam + "_pth", "@dinov2_reg.pth", auto, hw, nm, files)
            w.reuse(fam + "_hf", "@dinov2_reg_hf/model.safetensors", auto, hw, nm, files)
        else:
            w.reuse(fam + "_train", "@dinov3_train.pth", auto, hw, nm, files)
            # Hugging Face's DINOv3 file has no periods: keycut computes them (base 100)
            exact = forward(P, s, img, periods=default_periods(s.hd))
            ref_hub = forward(P, s, img)
            w.case(fam + "_hf", "@dinov3_hf/model.safetensors", auto, hw, nm, exact,
                   [("keys", "periods_bf16", ref_hub["keys"]), ("attn", "renorm", exact["attn_renorm"])])
            # keys before RoPE on request; tokens and attention do not change
            pre = dict(ref_hub, keys=ref_hub["keys_pre_rope"])
            w.case(fam + "_nsq_prerope", TINY_FILES[fam], ("auto", 1, 0.0), hw, nm, pre,
                   [("keys", "postrope", ref_hub["keys"])])
        # an explicit position rule: Hugging Face's own (size, no antialias) on its own file
        if fam == "dinov2":
            nm_up, img_up, hw_up = inputs[s.patch, "up"]
            hfr = forward(P, s, img_up, pos="hf")
            w.case("dinov2_up_hfpos", weights, ("hf", 0, 0.0), hw_up, nm_up, hfr,
                   [("keys", "pos_dino", forward(P, s, img_up)["keys"])])
            aar = forward(P, s, img_up, pos="aa")
            w.case("dinov2_up_aapos", weights, ("aa", 0, 0.0), hw_up, nm_up, aar,
                   [("keys", "pos_dino", forward(P, s, img_up)["keys"]), ("keys", "pos_hf", hfr["keys"])])
        # the eps option: the other family's value on request
        if fam == "dinov2_reg":
            nm_n, img_n, hw_n = inputs[s.patch, "nsq"]
            e5 = forward(P, s, img_n, eps=1e-5)
            w.case("dinov2_reg_nsq_eps1e-5", weights, ("auto", 0, 1e-5), hw_n, nm_n, e5,
                   [("keys", "eps1e-6", forward(P, s, img_n)["keys"])])
    w.finish(CASES_HEADER)
    for line in w.report:
        print(line)
    total = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(out) for f in fs)
    print("%s: %d cases, %.2f MB" % (out, len(w.lines), total / 1e6))


def forms(data, out):
    """The forms of the tiny networks that are not committed, from the committed files."""
    os.makedirs(out, exist_ok=True)
    P2 = canonical_from_hf(read_safetensors(os.path.join(data, TINY_FILES["dinov2"])), "dinov2")
    s2 = shape_of(P2, 2)
    save_hub(os.path.join(out, "dinov2.pth"), P2)
    save_training(os.path.join(out, "dinov2_train.pth"), P2, s2, chunks=1)
    Pr = canonical_from_training(os.path.join(data, TINY_FILES["dinov2_reg"]))
    sr = shape_of(Pr, 2)
    save_hub(os.path.join(out, "dinov2_reg.pth"), Pr)
    save_hf(os.path.join(out, "dinov2_reg_hf"), Pr, sr)
    P3 = OrderedDict(torch.load(os.path.join(data, TINY_FILES["dinov3"]), map_location="cpu"))
    s3 = shape_of(P3, 2)
    save_training(os.path.join(out, "dinov3_train.pth"), P3, s3)
    save_hf(os.path.join(out, "dinov3_hf"), P3, s3)
    print("forms: %s" % " ".join(sorted(os.listdir(out))))


# ---- full size ---------------------------------------------------------------------------------

# (family, size tag) run by default (about 45 s of references on 2 cores); --all adds the rest
FULL_DEFAULT = (("dinov2", "224"), ("dinov2", "native"), ("dinov2_reg", "224"), ("dinov3", "224"),
                ("dinov3", "480"))


def full_sizes(patch):
    """tag -> (image height, width): 224; the 480 policy (side p * ceil(480 / p): 490 for patch 14,
    480 for 16); a native non-square 240 x 320 image, zero-padded bottom / right to multiples of
    the patch as the native policy does (252 x 322 for patch 14, as is for 16)."""
    side480 = patch * math.ceil(480 / patch)
    return {"224": (224, 224), "480": (side480, side480), "native": (240, 320)}


def full_network(fam):
    s = full_shape(fam)
    return s, make_params(s, 21 + FAMILIES.index(fam), 31 + FAMILIES.index(fam), residual=0.3)


def full(out, everything):
    os.makedirs(out, exist_ok=True)
    torch.set_num_threads(2)
    w = CaseWriter(out)
    auto = ("auto", 0, 0.0)
    for fam in FAMILIES:
        s, P = full_network(fam)
        tags = [t for t in ("224", "480", "native") if everything or (fam, t) in FULL_DEFAULT]
        if not tags:
            continue
        save_hub(os.path.join(out, fam + ".pth"), P)
        for tag in tags:
            h, wd = full_sizes(s.patch)[tag]
            ph, pw = s.patch * math.ceil(h / s.patch), s.patch * math.ceil(wd / s.patch)
            u8 = random_image(7 + h + wd + s.patch, h, wd)
            chw = torch.zeros(3, ph, pw)
            chw[:, :h, :wd] = normalise(u8)
            nm = "%s_%s.in.f32" % (fam, tag)
            chw.numpy().astype("<f4").tofile(os.path.join(out, nm))
            t0 = time.time()
            ref = forward(P, s, chw)
            name = "%s_%s" % (fam, tag)
            w.case(name, fam + ".pth", auto, (ph, pw), nm, ref, [("attn", "renorm", ref["attn_renorm"])])
            print("%s: grid %dx%d, reference %.1f s" % (name, ph // s.patch, pw // s.patch, time.time() - t0),
                  flush=True)
    w.finish("# full-size cases written by tests/ref/dino23_ref.py full\n")
    for line in w.report:
        print(line)


def weights_only(out):
    os.makedirs(out, exist_ok=True)
    for fam in FAMILIES:
        s, P = full_network(fam)
        save_hub(os.path.join(out, fam + ".pth"), P)
    print("weights: %s" % " ".join("%s/%s.pth" % (out, f) for f in FAMILIES))


# ---- speed -------------------------------------------------------------------------------------

def forward_f32(P, s, chw, keys_only):
    """A second forward, float32, written the other way round (torch's layer_norm, the qkv split by
    reshape / permute as the official Attention does, q scaled before the product): keys (G, D)
    when keys_only (only the work keycut does for keys), else the tokens (G, D).  Used to time
    PyTorch ("bench") and, on the tiny cases, as a check of the reference itself."""
    D, hd, heads, p = s.dim, s.hd, s.heads, s.patch
    gh, gw = chw.shape[1] // p, chw.shape[2] // p
    T = {k: v.float() for k, v in P.items()}
    x = F.conv2d(chw[None], T["patch_embed.proj.weight"], T["patch_embed.proj.bias"], stride=p)
    x = x[0].flatten(1).transpose(0, 1)
    if s.family == "dinov3":
        sin, cos = rope_tables(T["rope_embed.periods"], gh, gw)
        cls = T["cls_token"][0]
    else:
        square = gh * gw == s.n * s.n and gh == gw
        x = x + (T["pos_embed"][0, 1:] if square else resample_pos(T["pos_embed"][0, 1:], s.n, gh, gw, s.default_pos()))
        cls = T["cls_token"][0] + T["pos_embed"][0, :1]
    regs = T.get("register_tokens", T.get("storage_tokens", torch.zeros(1, 0, D)))[0]
    x = torch.cat([cls, regs, x], 0)
    N, Pn = x.shape[0], x.shape[0] - gh * gw
    for b in range(s.depth):
        q_ = "blocks.%d." % b
        h = F.layer_norm(x, (D,), T[q_ + "norm1.weight"], T[q_ + "norm1.bias"], s.default_eps())
        bias = T[q_ + "attn.qkv.bias"]
        if s.family == "dinov3":
            bias = bias * T[q_ + "attn.qkv.bias_mask"]
        if keys_only and b == s.depth - 1:
            k = F.linear(h, T[q_ + "attn.qkv.weight"][D:2 * D], bias[D:2 * D])
            if s.family == "dinov3":
                k = k.reshape(N, heads, hd).transpose(0, 1)
                k = torch.cat([k[:, :Pn], rotate(k[:, Pn:], sin, cos)], 1).transpose(0, 1).reshape(N, D)
            return k[Pn:]
        qkv = F.linear(h, T[q_ + "attn.qkv.weight"], bias)
        q, k, v = qkv.reshape(N, 3, heads, hd).permute(1, 2, 0, 3)
        if s.family == "dinov3":
            q = torch.cat([q[:, :Pn], rotate(q[:, Pn:], sin, cos)], 1)
            k = torch.cat([k[:, :Pn], rotate(k[:, Pn:], sin, cos)], 1)
        a = torch.softmax((q * hd ** -0.5) @ k.transpose(1, 2), dim=-1)
        o = (a @ v).transpose(0, 1).reshape(N, D)
        x = x + T[q_ + "ls1.gamma"] * F.linear(o, T[q_ + "attn.proj.weight"], T[q_ + "attn.proj.bias"])
        h = F.layer_norm(x, (D,), T[q_ + "norm2.weight"], T[q_ + "norm2.bias"], s.default_eps())
        h = F.gelu(F.linear(h, T[q_ + "mlp.fc1.weight"], T[q_ + "mlp.fc1.bias"]))
        x = x + T[q_ + "ls2.gamma"] * F.linear(h, T[q_ + "mlp.fc2.weight"], T[q_ + "mlp.fc2.bias"])
    return F.layer_norm(x, (D,), T["norm.weight"], T["norm.bias"], s.default_eps())[Pn:]


def bench(fam, size=0, images=5):
    """PyTorch float32 on 2 threads (forward_f32: torch 1.13 has no fused attention on the CPU,
    products and softmax as the official DINOv2 Attention does)."""
    torch.set_num_threads(2)
    s, P = full_network(fam)
    size = size or s.patch * math.ceil(480 / s.patch)
    img = normalise(random_image(5, size, size))
    with torch.no_grad():
        for kind, keys_only in (("keys", True), ("tokens", False)):
            forward_f32(P, s, img, keys_only)
            times = []
            for _ in range(images):
                t0 = time.perf_counter()
                forward_f32(P, s, img, keys_only)
                times.append(time.perf_counter() - t0)
            mean = sum(times) / len(times)
            print("pytorch %s %s %dx%d (%s, %d threads): %.1f ms/image mean, %.1f ms best, %.2f images/s" % (
                fam, kind, size, size, "keys only" if keys_only else "full forward and final norm",
                torch.get_num_threads(), 1e3 * mean, 1e3 * min(times), 1 / mean), flush=True)


if __name__ == "__main__":
    a = sys.argv[1:]
    if len(a) == 2 and a[0] == "tiny":
        tiny(a[1])
    elif len(a) == 3 and a[0] == "forms":
        forms(a[1], a[2])
    elif len(a) >= 2 and a[0] == "full":
        everything = "--all" in a
        rest = [x for x in a[1:] if x != "--all"]
        if len(rest) != 1:
            sys.exit(__doc__)
        full(rest[0], everything)
    elif len(a) == 2 and a[0] == "weights":
        weights_only(a[1])
    elif len(a) >= 2 and a[0] == "bench" and a[1] in FAMILIES:
        bench(a[1], *[int(x) for x in a[2:4]])
    else:
        sys.exit(__doc__)
