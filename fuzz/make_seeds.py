#!/usr/bin/python3
"""fuzz/make_seeds.py — writes the small synthetic seeds of fuzz/corpus/{pth,safetensors,json}.

Run with /usr/bin/python3 (needs torch).  The other seed folders are copies of small files from
tests/data and configs/, and two tiny caches made by the stages (fuzz/make_seeds.sh does all)."""
import argparse, collections, json, os, struct, sys
import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")

def mk(d):
    p = os.path.join(OUT, d)
    os.makedirs(p, exist_ok=True)
    return p

def tiny_vit(dim=8, patch=2, grid=2, depth=1, cls=True, norm=True, dtype=torch.float32):
    g = torch.Generator().manual_seed(1)
    r = lambda *s: torch.randn(*s, generator=g).to(dtype)
    sd = collections.OrderedDict()
    if cls: sd["cls_token"] = r(1, 1, dim)
    sd["pos_embed"] = r(1, grid * grid + (1 if cls else 0), dim)
    sd["patch_embed.proj.weight"] = r(dim, 3, patch, patch)
    sd["patch_embed.proj.bias"] = r(dim)
    for b in range(depth):
        p = f"blocks.{b}."
        for n in ("norm1", "norm2"):
            sd[p + n + ".weight"] = r(dim); sd[p + n + ".bias"] = r(dim)
        sd[p + "attn.qkv.weight"] = r(3 * dim, dim); sd[p + "attn.qkv.bias"] = r(3 * dim)
        sd[p + "attn.proj.weight"] = r(dim, dim); sd[p + "attn.proj.bias"] = r(dim)
        sd[p + "mlp.fc1.weight"] = r(2 * dim, dim); sd[p + "mlp.fc1.bias"] = r(2 * dim)
        sd[p + "mlp.fc2.weight"] = r(dim, 2 * dim); sd[p + "mlp.fc2.bias"] = r(dim)
    if norm:
        sd["norm.weight"] = r(dim); sd["norm.bias"] = r(dim)
    return sd

def pth():
    d = mk("pth")
    torch.save(tiny_vit(), os.path.join(d, "state_dict.pth"))
    torch.save(tiny_vit(dtype=torch.float16), os.path.join(d, "f16.pth"))
    torch.save(tiny_vit(dtype=torch.bfloat16, cls=False, norm=False), os.path.join(d, "bf16_selfpatch.pth"))
    torch.save(tiny_vit(), os.path.join(d, "proto4.pth"), pickle_protocol=4)
    sd = tiny_vit()
    ck = {"teacher": {"module.backbone." + k: v for k, v in sd.items()},
          "student": {"backbone." + k: v for k, v in sd.items()},
          "epoch": 3, "args": argparse.Namespace(lr=0.5, arch="vit_small", out=None, flag=True),
          "optimizer": {"state": {}, "param_groups": [{"lr": 1e-3, "params": [0, 1]}]}}
    torch.save(ck, os.path.join(d, "train_ckpt.pth"))
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    torch.save({"t": base.t(), "u": base[1:, 2:], "shared": base, "s": torch.tensor(2.5)},
               os.path.join(d, "views.pth"))

def st_bytes(tensors, meta=None):
    hdr, buf = {}, b""
    if meta is not None: hdr["__metadata__"] = meta
    for name, (dt, shape, raw) in tensors.items():
        hdr[name] = {"dtype": dt, "shape": shape, "data_offsets": [len(buf), len(buf) + len(raw)]}
        buf += raw
    h = json.dumps(hdr).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    return struct.pack("<Q", len(h)) + h + buf

def safetensors():
    d = mk("safetensors")
    sd = tiny_vit(dim=4)
    t = {k: ("F32", list(v.shape), v.numpy().tobytes()) for k, v in sd.items()}
    open(os.path.join(d, "dino_names.safetensors"), "wb").write(st_bytes(t, {"format": "pt"}))
    h = {k: ("F16", list(v.shape), v.half().numpy().tobytes()) for k, v in list(sd.items())[:4]}
    open(os.path.join(d, "f16.safetensors"), "wb").write(st_bytes(h))
    b = {k: ("BF16", list(v.shape), v.bfloat16().view(torch.int16).numpy().tobytes()) for k, v in list(sd.items())[:4]}
    open(os.path.join(d, "bf16.safetensors"), "wb").write(st_bytes(b))
    hf = {"embeddings.cls_token": ("F32", [1, 1, 4], bytes(16)),
          "encoder.layer.0.attention.attention.query.weight": ("F32", [4, 4], bytes(64)),
          "scalar": ("F32", [], bytes(4)), "empty": ("F32", [0, 3], b""), "ints": ("I64", [2], bytes(16))}
    open(os.path.join(d, "hf_names.safetensors"), "wb").write(st_bytes(hf))

def jsons():
    d = mk("json")
    cfg = {"hidden_size": 32, "num_attention_heads": 2, "layer_norm_eps": 1e-12, "architectures": ["ViTModel"],
           "qkv_bias": True, "label2id": {}, "x": None, "esc": "a\u00e9\ud83d\ude00\"\\/\b\f\n\r\t", "neg": -1.5e-3,
           "big": 18446744073709551615, "nested": [[[{}]]]}
    open(os.path.join(d, "config.json"), "w").write(json.dumps(cfg, indent=1))
    open(os.path.join(d, "st_header.json"), "w").write(json.dumps(
        {"__metadata__": {"format": "pt"}, "w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}}))
    open(os.path.join(d, "surrogates.json"), "w").write('["\\ud83d\\ude00", "\\u0000", 0, -0, 1e400, 123456789012345678901]')

if __name__ == "__main__":
    pth(); safetensors(); jsons()
