#!/usr/bin/python3
"""tests/ref/vit_ref.py — reference ViT forwards (keys and tokens) from torch primitives.

Usage:
    /usr/bin/python3 tests/ref/vit_ref.py tiny OUT_DIR
        tiny models (width 32, depth 2, heads 2) with seeded random weights, saved as .pth and
        safetensors, random inputs and their keys / tokens as raw float32; OUT_DIR/cases.txt lists
        them.  This is how tests/data/vit/ was made (commit-sized).
    /usr/bin/python3 tests/ref/vit_ref.py bench user|best [SIZE] [IMAGES]
        PyTorch's speed on ViT-S/16 keys (tests/bench_vit.sh): "user" is a ViT built from torch
        modules run as TokenCut / MaskCut users run it (full forward under no_grad, keys taken
        by a hook on the last qkv, default threads); "best" sets 2 threads and runs only the
        work keycut does (blocks before the last, then the last block's norm1 and qkv).
    /usr/bin/python3 tests/ref/vit_ref.py onnx OUT_DIR HEIGHT WIDTH keys|tokens
        the same ViT-S/16 as "bench" (seed 0), forward restricted to what keycut computes (keys:
        blocks before the last, then the last norm1 and the k rows of qkv; tokens: the full forward
        and final norm), exported by torch.onnx.export for a fixed 1x3xHEIGHTxWIDTH input, with
        an input and torch's output as raw float32 (OUT_DIR/vit.onnx, input.f32, output.f32);
        tests/bench_ort.js times it with ONNX Runtime (tests/bench_vit.sh).
    /usr/bin/python3 tests/ref/vit_ref.py full [--all] OUT_DIR IMAGE...
        full-size ViT-S models (DINO layout ViT-S/16 as .pth and safetensors, SelfPatch-shaped,
        Hugging Face names) and real images centre-cropped to 480x480 (normalised as square480
        does); used by tests/test_vit_full.sh, outputs stay under $BUILD.  --all (KC_FULL=1) adds
        the ViT-S/16 in Hugging Face position mode with DINO names and the ViT-S/8 (3600 tokens:
        its attention alone is most of the script's time).

cases.txt, one line per case:
    name weights heads drop_cls posembed_hf height width input.f32 keys.f32 tokens.f32
(heads 0 = let the loader decide; paths relative to OUT_DIR).

The network is written here from torch primitives (conv2d, layer_norm, linear, softmax, exact
gelu, interpolate), following DINO's vision_transformer.py: pre-norm blocks, qkv rows
(q, k, v) head-major, scale head_dim^-0.5, and DINO's position-embedding resampling
(F.interpolate bicubic with scale_factor (g + 0.1) / n) or Hugging Face's (size = (gh, gw)).
Keys: LayerNorm-1 of the last block's input times the k rows of qkv plus their bias, class row
dropped.  Tokens: the last block's output after the final norm when present, class row dropped.
"""
import json
import math
import os
import struct
import sys

import numpy as np
import torch
import torch.nn.functional as F


def make_params(seed, dim, depth, mlp, patch, n, cls, norm, scale=0.15):
    g = torch.Generator().manual_seed(seed)

    def rnd(*shape, s=scale):
        return torch.randn(*shape, generator=g) * s

    p = {}
    p["patch_embed.proj.weight"] = rnd(dim, 3, patch, patch, s=1.0 / math.sqrt(3 * patch * patch))
    p["patch_embed.proj.bias"] = rnd(dim)
    if cls:
        p["cls_token"] = rnd(1, 1, dim, s=0.5)
    p["pos_embed"] = rnd(1, n * n + (1 if cls else 0), dim, s=0.5)
    for b in range(depth):
        pre = "blocks.%d." % b
        p[pre + "norm1.weight"] = 1 + rnd(dim, s=0.1)
        p[pre + "norm1.bias"] = rnd(dim, s=0.1)
        p[pre + "attn.qkv.weight"] = rnd(3 * dim, dim, s=1.0 / math.sqrt(dim))
        p[pre + "attn.qkv.bias"] = rnd(3 * dim, s=0.1)
        p[pre + "attn.proj.weight"] = rnd(dim, dim, s=1.0 / math.sqrt(dim))
        p[pre + "attn.proj.bias"] = rnd(dim, s=0.1)
        p[pre + "norm2.weight"] = 1 + rnd(dim, s=0.1)
        p[pre + "norm2.bias"] = rnd(dim, s=0.1)
        p[pre + "mlp.fc1.weight"] = rnd(mlp, dim, s=1.0 / math.sqrt(dim))
        p[pre + "mlp.fc1.bias"] = rnd(mlp, s=0.1)
        p[pre + "mlp.fc2.weight"] = rnd(dim, mlp, s=1.0 / math.sqrt(mlp))
        p[pre + "mlp.fc2.bias"] = rnd(dim, s=0.1)
    if norm:
        p["norm.weight"] = 1 + rnd(dim, s=0.1)
        p["norm.bias"] = rnd(dim, s=0.1)
    return p


def hf_names(p, depth):
    """DINO/timm names -> Hugging Face ViTModel names (q, k, v split)."""
    dim = p["patch_embed.proj.bias"].shape[0]
    out = {
        "embeddings.cls_token": p["cls_token"],
        "embeddings.position_embeddings": p["pos_embed"],
        "embeddings.patch_embeddings.projection.weight": p["patch_embed.proj.weight"],
        "embeddings.patch_embeddings.projection.bias": p["patch_embed.proj.bias"],
        "layernorm.weight": p["norm.weight"],
        "layernorm.bias": p["norm.bias"],
    }
    for b in range(depth):
        s, d = "blocks.%d." % b, "encoder.layer.%d." % b
        out[d + "layernorm_before.weight"] = p[s + "norm1.weight"]
        out[d + "layernorm_before.bias"] = p[s + "norm1.bias"]
        for i, nm in enumerate(("query", "key", "value")):
            out[d + "attention.attention.%s.weight" % nm] = p[s + "attn.qkv.weight"][i * dim:(i + 1) * dim]
            out[d + "attention.attention.%s.bias" % nm] = p[s + "attn.qkv.bias"][i * dim:(i + 1) * dim]
        out[d + "attention.output.dense.weight"] = p[s + "attn.proj.weight"]
        out[d + "attention.output.dense.bias"] = p[s + "attn.proj.bias"]
        out[d + "layernorm_after.weight"] = p[s + "norm2.weight"]
        out[d + "layernorm_after.bias"] = p[s + "norm2.bias"]
        out[d + "intermediate.dense.weight"] = p[s + "mlp.fc1.weight"]
        out[d + "intermediate.dense.bias"] = p[s + "mlp.fc1.bias"]
        out[d + "output.dense.weight"] = p[s + "mlp.fc2.weight"]
        out[d + "output.dense.bias"] = p[s + "mlp.fc2.bias"]
    return out


def save_safetensors(path, tensors):
    """safetensors by hand: u64 header length, JSON header, raw little-endian data."""
    header, blobs, off = {}, [], 0
    for name, t in tensors.items():
        a = t.detach().contiguous().numpy().astype("<f4")
        b = a.tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def resample_pos(pos, n, gh, gw, hf):
    """pos: (n*n, dim) -> (gh*gw, dim) as DINO (scale_factor (g + 0.1) / n) or HF (size)."""
    dim = pos.shape[-1]
    if gh == n and gw == n:
        return pos
    grid = pos.reshape(1, n, n, dim).permute(0, 3, 1, 2)
    if hf:
        out = F.interpolate(grid, size=(gh, gw), mode="bicubic", align_corners=False)
    else:
        out = F.interpolate(grid, scale_factor=((gh + 0.1) / n, (gw + 0.1) / n), mode="bicubic")
    assert out.shape[-2:] == (gh, gw)
    return out.permute(0, 2, 3, 1).reshape(gh * gw, dim)


def forward(p, img, heads, eps, hf_pos=False, drop_cls=False):
    """img: (3, H, W) float32 tensor.  Returns keys, tokens as (G, dim) numpy arrays."""
    depth = 1 + max(int(k.split(".")[1]) for k in p if k.startswith("blocks."))
    w = p["patch_embed.proj.weight"]
    dim, patch = w.shape[0], w.shape[2]
    cls = "cls_token" in p and not drop_cls
    norm = "norm.weight" in p and not drop_cls
    file_cls = "cls_token" in p
    gh, gw = img.shape[1] // patch, img.shape[2] // patch
    x = F.conv2d(img[None], w, p["patch_embed.proj.bias"], stride=patch)  # (1, dim, gh, gw)
    x = x.flatten(2).transpose(1, 2)[0]  # (G, dim)
    pos = p["pos_embed"][0]
    n = int(round(math.sqrt(pos.shape[0] - (1 if file_cls else 0))))
    x = x + resample_pos(pos[1:] if file_cls else pos, n, gh, gw, hf_pos)
    if cls:
        x = torch.cat([p["cls_token"][0] + pos[:1], x], 0)
    T, hd = x.shape[0], dim // heads
    keys = None
    for b in range(depth):
        pre = "blocks.%d." % b
        h = F.layer_norm(x, (dim,), p[pre + "norm1.weight"], p[pre + "norm1.bias"], eps)
        qkv = F.linear(h, p[pre + "attn.qkv.weight"], p[pre + "attn.qkv.bias"])  # (T, 3 dim)
        if b == depth - 1:
            keys = qkv[:, dim:2 * dim]
        q, k, v = qkv.reshape(T, 3, heads, hd).permute(1, 2, 0, 3)  # (heads, T, hd) each
        a = torch.softmax((q @ k.transpose(-2, -1)) * hd ** -0.5, dim=-1)
        o = (a @ v).transpose(0, 1).reshape(T, dim)
        x = x + F.linear(o, p[pre + "attn.proj.weight"], p[pre + "attn.proj.bias"])
        h = F.layer_norm(x, (dim,), p[pre + "norm2.weight"], p[pre + "norm2.bias"], eps)
        h = F.gelu(F.linear(h, p[pre + "mlp.fc1.weight"], p[pre + "mlp.fc1.bias"]))
        x = x + F.linear(h, p[pre + "mlp.fc2.weight"], p[pre + "mlp.fc2.bias"])
    if norm:
        x = F.layer_norm(x, (dim,), p["norm.weight"], p["norm.bias"], eps)
    c = 1 if cls else 0
    return keys[c:].numpy(), x[c:].numpy()


def write_case(out, lines, name, weights, p, img, heads, eps, hf_pos=False, drop_cls=False,
               file_heads=None, input_name=None):
    with torch.no_grad():
        keys, tokens = forward(p, img, heads, eps, hf_pos, drop_cls)
    if input_name is None:
        input_name = name + ".in.f32"
        img.numpy().astype("<f4").tofile(os.path.join(out, input_name))
    keys.astype("<f4").tofile(os.path.join(out, name + ".keys.f32"))
    tokens.astype("<f4").tofile(os.path.join(out, name + ".tokens.f32"))
    lines.append("%s %s %d %d %d %d %d %s %s.keys.f32 %s.tokens.f32" % (
        name, weights, heads if file_heads is None else file_heads, int(drop_cls), int(hf_pos),
        img.shape[1], img.shape[2], input_name, name, name))
    return input_name


def tiny(out):
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(7)
    lines = []
    eps = 1e-6

    def image(h, w):
        return torch.randn(3, h, w, generator=g)

    dino = make_params(1, 32, 2, 128, 16, 3, True, True)
    torch.save(dino, os.path.join(out, "dino.pth"))
    save_safetensors(os.path.join(out, "dino.safetensors"), dino)
    im = image(64, 48)  # grid 4 x 3 from a 3 x 3 position grid: both axes resampled
    inp = write_case(out, lines, "dino_pth", "dino.pth", dino, im, 2, eps)
    write_case(out, lines, "dino_st", "dino.safetensors", dino, im, 2, eps, input_name=inp)
    write_case(out, lines, "dino_hfpos", "dino.pth", dino, im, 2, eps, hf_pos=True, input_name=inp)
    write_case(out, lines, "dino_dropcls", "dino.pth", dino, im, 2, eps, drop_cls=True, input_name=inp)
    write_case(out, lines, "dino_native", "dino.pth", dino, image(48, 48), 2, eps)  # grid = n x n
    write_case(out, lines, "dino_row", "dino.pth", dino, image(48, 80), 2, eps)  # gh = n, gw != n

    selfpatch = make_params(2, 32, 2, 128, 16, 3, False, False)
    torch.save(selfpatch, os.path.join(out, "selfpatch.pth"))
    write_case(out, lines, "selfpatch", "selfpatch.pth", selfpatch, image(64, 64), 2, eps)

    p8 = make_params(3, 32, 2, 128, 8, 4, True, True)
    torch.save({"teacher": {"backbone." + k: v for k, v in p8.items()}}, os.path.join(out, "p8.pth"))
    write_case(out, lines, "p8", "p8.pth", p8, image(40, 48), 2, eps)

    hf = make_params(4, 32, 2, 128, 16, 3, True, True)
    os.makedirs(os.path.join(out, "hf"), exist_ok=True)
    save_safetensors(os.path.join(out, "hf", "model.safetensors"), hf_names(hf, 2))
    with open(os.path.join(out, "hf", "config.json"), "w") as f:
        json.dump({"model_type": "vit", "hidden_size": 32, "num_hidden_layers": 2,
                   "num_attention_heads": 2, "intermediate_size": 128, "patch_size": 16,
                   "layer_norm_eps": 1e-12, "hidden_act": "gelu", "qkv_bias": True}, f, indent=1)
    write_case(out, lines, "hf", "hf/model.safetensors", hf, image(64, 48), 2, 1e-12, hf_pos=True,
               file_heads=0)

    with open(os.path.join(out, "cases.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


def load_crop(path, size=480):
    """Centre crop to size x size (no resampling), normalised with ImageNet mean / std, CHW."""
    from PIL import Image
    im = np.asarray(Image.open(path).convert("RGB"), dtype=np.float32) / 255.0
    h, w = im.shape[:2]
    if h < size or w < size:
        raise SystemExit("%s: smaller than %d pixels" % (path, size))
    y0, x0 = (h - size) // 2, (w - size) // 2
    im = im[y0:y0 + size, x0:x0 + size]
    im = (im - np.array([0.485, 0.456, 0.406], np.float32)) / np.array([0.229, 0.224, 0.225], np.float32)
    return torch.from_numpy(np.ascontiguousarray(im.transpose(2, 0, 1)))


def full(out, images, everything=False):
    os.makedirs(out, exist_ok=True)
    torch.set_num_threads(2)
    lines = []
    eps = 1e-6
    crops = [load_crop(p) for p in images]
    # the same crops as lossless PNGs, listed for kc-extract (square480 keeps a 480x480 image as is)
    from PIL import Image
    with open(os.path.join(out, "crops.txt"), "w") as f:
        for i, p in enumerate(images):
            im = Image.open(p).convert("RGB")
            x0, y0 = (im.width - 480) // 2, (im.height - 480) // 2
            im.crop((x0, y0, x0 + 480, y0 + 480)).save(os.path.join(out, "crop%d.png" % i))
            f.write("crop%d.png\n" % i)
    names = []
    for i, c in enumerate(crops):
        nm = "img%d.in.f32" % i
        c.numpy().astype("<f4").tofile(os.path.join(out, nm))
        names.append(nm)
    s16 = make_params(11, 384, 12, 1536, 16, 14, True, True, scale=0.05)
    torch.save(s16, os.path.join(out, "vits16.pth"))
    save_safetensors(os.path.join(out, "vits16.safetensors"), s16)
    write_case(out, lines, "vits16_pth_0", "vits16.pth", s16, crops[0], 6, eps, input_name=names[0])
    for i in range(1, len(crops)):
        write_case(out, lines, "vits16_st_%d" % i, "vits16.safetensors", s16, crops[i], 6, eps,
                   input_name=names[i])
    if everything:
        write_case(out, lines, "vits16_hfpos", "vits16.pth", s16, crops[0], 6, eps, hf_pos=True,
                   input_name=names[0])
    del s16
    sp = make_params(12, 384, 12, 1536, 16, 14, False, False, scale=0.05)
    torch.save({"teacher": {"module.backbone." + k: v for k, v in sp.items()}},
               os.path.join(out, "selfpatch.pth"))
    write_case(out, lines, "selfpatch", "selfpatch.pth", sp, crops[-1], 6, eps, input_name=names[-1])
    del sp
    if everything:
        p8 = make_params(13, 384, 12, 1536, 8, 28, True, True, scale=0.05)
        torch.save(p8, os.path.join(out, "vits8.pth"))
        write_case(out, lines, "vits8", "vits8.pth", p8, crops[0], 6, eps, input_name=names[0])
        del p8
    hf = make_params(14, 384, 12, 1536, 16, 14, True, True, scale=0.05)
    os.makedirs(os.path.join(out, "hf"), exist_ok=True)
    save_safetensors(os.path.join(out, "hf", "model.safetensors"), hf_names(hf, 12))
    with open(os.path.join(out, "hf", "config.json"), "w") as f:
        json.dump({"model_type": "vit", "hidden_size": 384, "num_attention_heads": 6,
                   "layer_norm_eps": 1e-12, "hidden_act": "gelu"}, f)
    write_case(out, lines, "hf", "hf/model.safetensors", hf, crops[0], 6, 1e-12, hf_pos=True,
               file_heads=0, input_name=names[0])
    with open(os.path.join(out, "cases.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


class Attention(torch.nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.proj = torch.nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        a = ((q @ k.transpose(-2, -1)) * self.scale).softmax(dim=-1)
        return self.proj((a @ v).transpose(1, 2).reshape(B, N, C))


class Block(torch.nn.Module):
    def __init__(self, dim, heads, mlp):
        super().__init__()
        self.norm1 = torch.nn.LayerNorm(dim, eps=1e-6)
        self.attn = Attention(dim, heads)
        self.norm2 = torch.nn.LayerNorm(dim, eps=1e-6)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(dim, mlp), torch.nn.GELU(),
                                       torch.nn.Linear(mlp, dim))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class ViT(torch.nn.Module):
    """ViT-S/16 from torch modules, DINO's layout (class token, learned positions, final norm)."""

    def __init__(self, dim=384, depth=12, heads=6, mlp=1536, patch=16, n=14):
        super().__init__()
        self.n = n
        self.patch_embed = torch.nn.Conv2d(3, dim, patch, patch)
        self.cls_token = torch.nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.pos_embed = torch.nn.Parameter(torch.randn(1, n * n + 1, dim) * 0.02)
        self.blocks = torch.nn.ModuleList([Block(dim, heads, mlp) for _ in range(depth)])
        self.norm = torch.nn.LayerNorm(dim, eps=1e-6)

    def embed(self, img):
        x = self.patch_embed(img)
        gh, gw = x.shape[-2:]
        x = x.flatten(2).transpose(1, 2)
        pos = self.pos_embed[:, 1:].reshape(1, self.n, self.n, -1).permute(0, 3, 1, 2)
        pos = F.interpolate(pos, scale_factor=((gh + 0.1) / self.n, (gw + 0.1) / self.n), mode="bicubic")
        x = x + pos.flatten(2).transpose(1, 2)
        return torch.cat([self.cls_token + self.pos_embed[:, :1], x], 1)

    def forward(self, img):
        x = self.embed(img)
        for b in self.blocks:
            x = b(x)
        return self.norm(x)

    def keys_only(self, img):
        x = self.embed(img)
        for b in self.blocks[:-1]:
            x = b(x)
        last = self.blocks[-1]
        dim = x.shape[-1]
        return F.linear(last.norm1(x), last.attn.qkv.weight[dim:2 * dim], last.attn.qkv.bias[dim:2 * dim])


def bench(mode, size=480, images=5):
    import time
    if mode == "best":
        torch.set_num_threads(2)
    torch.manual_seed(0)
    model = ViT().eval()
    img = torch.randn(1, 3, size, size)
    feats = {}
    model.blocks[-1].attn.qkv.register_forward_hook(lambda m, i, o: feats.__setitem__("qkv", o))
    run = (lambda: model(img)) if mode == "user" else (lambda: model.keys_only(img))
    times = []
    with torch.no_grad():
        run()
        for _ in range(images):
            t0 = time.perf_counter()
            run()
            times.append(time.perf_counter() - t0)
    mean = sum(times) / len(times)
    print("pytorch %s (%s, %d threads%s): %.1f ms/image mean, %.1f ms best, %.2f images/s" % (
        mode, "full forward, keys by hook" if mode == "user" else "keys only",
        torch.get_num_threads(),
        ", OMP_WAIT_POLICY=" + os.environ.get("OMP_WAIT_POLICY", "unset"),
        1e3 * mean, 1e3 * min(times), 1 / mean))


class _Export(torch.nn.Module):
    """The bench ViT for a fixed input size; the resampled position embedding is computed once
    (as keycut does per grid; torch 1.13 cannot trace bicubic interpolate with scale factors)."""

    def __init__(self, model, kind, height, width):
        super().__init__()
        self.model, self.kind = model, kind
        with torch.no_grad():
            full = model.embed(torch.zeros(1, 3, height, width))
            conv = model.patch_embed(torch.zeros(1, 3, height, width)).flatten(2).transpose(1, 2)
            self.register_buffer("pos", full[:, 1:] - conv)  # interpolated positions, exactly
            self.register_buffer("first", full[:, :1].clone())

    def forward(self, img):
        m = self.model
        x = torch.cat([self.first, m.patch_embed(img).flatten(2).transpose(1, 2) + self.pos], 1)
        blocks = m.blocks if self.kind == "tokens" else m.blocks[:-1]
        for b in blocks:
            x = b(x)
        if self.kind == "tokens":
            x = m.norm(x)
        else:
            last, dim = m.blocks[-1], x.shape[-1]
            x = F.linear(last.norm1(x), last.attn.qkv.weight[dim:2 * dim], last.attn.qkv.bias[dim:2 * dim])
        return x[:, 1:]  # the class row dropped, as keycut stores them


def export_onnx(out, height, width, kind):
    torch.manual_seed(0)
    model = _Export(ViT().eval(), kind, height, width).eval()
    img = torch.randn(1, 3, height, width)
    os.makedirs(out, exist_ok=True)
    with torch.no_grad():
        ref = model(img)
        direct = model.model.keys_only(img) if kind == "keys" else model.model(img)
        assert float((direct[:, 1:] - ref).abs().max()) <= 1e-4 * float(ref.abs().max())
        torch.onnx.export(model, (img,), os.path.join(out, "vit.onnx"), input_names=["image"],
                          output_names=[kind], opset_version=14, do_constant_folding=True)
    img.numpy().astype("<f4").tofile(os.path.join(out, "input.f32"))
    with open(os.path.join(out, "shape.txt"), "w") as f:
        f.write("%d %d\n" % (height, width))
    ref.numpy().astype("<f4").tofile(os.path.join(out, "output.f32"))
    print("exported %s: ViT-S/16 %s at %dx%d, output %s" % (os.path.join(out, "vit.onnx"), kind,
                                                          height, width, tuple(ref.shape)))


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "tiny":
        tiny(sys.argv[2])
    elif len(sys.argv) >= 3 and sys.argv[1] == "bench":
        bench(sys.argv[2], *[int(a) for a in sys.argv[3:5]])
    elif len(sys.argv) == 6 and sys.argv[1] == "onnx":
        export_onnx(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
    elif len(sys.argv) >= 5 and sys.argv[1:3] == ["full", "--all"]:
        full(sys.argv[3], sys.argv[4:], everything=True)
    elif len(sys.argv) >= 4 and sys.argv[1] == "full":
        full(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(__doc__)
