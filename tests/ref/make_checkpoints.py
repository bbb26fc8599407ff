#!/usr/bin/python3
"""tests/ref/make_checkpoints.py — tiny weights files for tests/test_weights.c, written with torch.

    /usr/bin/python3 tests/ref/make_checkpoints.py              # writes tests/data/weights/
    /usr/bin/python3 tests/ref/make_checkpoints.py --big DIR    # a real-size ViT-S/16 in DIR (not committed)

The tiny network: width 32, 2 blocks, patch 16, 64-px images (4x4 position grid + class token),
2 heads, MLP 128.  Every good file F gets F.expect beside it: the tensors weights_load must return,
in order, as lines
    tensor <canonical name> <ndim> <shape...> <sha256 of float32 LE bytes> <sum> <first> <last>
    skip <name in the file>
    hf <0|1>   heads <n>   eps <x>
Bad files are crafted byte by byte (the malicious pickles are never unpickled here).
"""
import argparse
import collections
import hashlib
import io
import json
import os
import struct
import sys
import zipfile

import torch
import torch.nn as nn

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "weights")


# ---- a DINO/timm-named ViT from torch modules (its state_dict is a real one, with _metadata) ------
class Attention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)


class Mlp(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)


class Block(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.attn = Attention(dim)
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = Mlp(dim, hidden)


class PatchEmbed(nn.Module):
    def __init__(self, dim, patch):
        super().__init__()
        self.proj = nn.Conv2d(3, dim, patch, patch)


class ViT(nn.Module):
    def __init__(self, dim=32, depth=2, patch=16, grid=4, mlp=4, cls=True, final_norm=True):
        super().__init__()
        if cls:
            self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.zeros(1, grid * grid + (1 if cls else 0), dim))
        self.patch_embed = PatchEmbed(dim, patch)
        self.blocks = nn.ModuleList([Block(dim, mlp * dim) for _ in range(depth)])
        if final_norm:
            self.norm = nn.LayerNorm(dim, eps=1e-6)


def random_vit(seed, **kw):
    torch.manual_seed(seed)
    m = ViT(**kw)
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.randn_like(p) * 0.5)
    return m


# ---- expectations ---------------------------------------------------------------------------------
def tensor_line(name, t):
    a = t.detach().float().contiguous().numpy()
    b = a.astype("<f4").tobytes()
    flat = a.reshape(-1)
    first = float(flat[0]) if flat.size else 0.0
    last = float(flat[-1]) if flat.size else 0.0
    shape = " ".join(str(s) for s in a.shape)
    return "tensor %s %d%s%s %s %.9g %.9g %.9g" % (
        name, a.ndim, " " if a.ndim else "", shape, hashlib.sha256(b).hexdigest(), float(a.astype("float64").sum()), first, last)


def write_expect(fname, tensors, skipped=(), hf=0, heads=0, eps=0.0):
    lines = [tensor_line(n, t) for n, t in tensors]
    lines += ["skip %s" % s for s in skipped]
    lines += ["hf %d" % hf, "heads %d" % heads, "eps %.9g" % eps]
    with open(os.path.join(OUT, fname + ".expect"), "w") as f:
        f.write("\n".join(lines) + "\n")


def save(obj, fname, **kw):
    path = os.path.join(OUT, fname)
    torch.save(obj, path, **kw)
    return path


# ---- safetensors by hand --------------------------------------------------------------------------
ST_DTYPE = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16"}


def tensor_bytes(t):
    t = t.detach().contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().astype("<i2").tobytes()
    return t.numpy().tobytes()


def write_safetensors(path, tensors, metadata=None, header_len_override=None, offset_bump=0):
    header, blobs, pos = {}, [], 0
    if metadata:
        header["__metadata__"] = metadata
    for name, t in tensors:
        b = tensor_bytes(t)
        header[name] = {"dtype": ST_DTYPE[t.dtype], "shape": list(t.shape), "data_offsets": [pos, pos + len(b)]}
        blobs.append(b)
        pos += len(b)
    if offset_bump:  # the last tensor's offsets point past the buffer
        last = list(header)[-1]
        header[last]["data_offsets"] = [v + offset_bump for v in header[last]["data_offsets"]]
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    n = len(h) if header_len_override is None else header_len_override
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", n) + h + b"".join(blobs))


def hf_names(sd, prefix=""):
    """DINO names -> Hugging Face ViTModel names (qkv split into query, key, value)."""
    out = []
    dim = sd["pos_embed"].shape[-1]
    for k, v in sd.items():
        if k == "cls_token":
            out.append(("embeddings.cls_token", v))
        elif k == "pos_embed":
            out.append(("embeddings.position_embeddings", v))
        elif k.startswith("patch_embed.proj."):
            out.append(("embeddings.patch_embeddings.projection." + k.split(".")[-1], v))
        elif k.startswith("norm."):
            out.append(("layernorm." + k.split(".")[-1], v))
        else:
            _, n, *rest = k.split(".")
            rest = ".".join(rest)
            base = "encoder.layer.%s." % n
            if rest.startswith("attn.qkv."):
                wb = rest.split(".")[-1]
                for i, part in enumerate(("query", "key", "value")):
                    out.append((base + "attention.attention.%s.%s" % (part, wb), v[i * dim:(i + 1) * dim].clone()))
            else:
                m = {"norm1": "layernorm_before", "norm2": "layernorm_after", "attn.proj": "attention.output.dense",
                     "mlp.fc1": "intermediate.dense", "mlp.fc2": "output.dense"}
                stem, wb = rest.rsplit(".", 1)
                out.append((base + m[stem] + "." + wb, v))
    return [(prefix + k, v) for k, v in out]


# ---- zip surgery for bad files --------------------------------------------------------------------
def write_zip(path, entries, method=zipfile.ZIP_STORED):
    with zipfile.ZipFile(path, "w", compression=method) as z:
        for name, data in entries:
            z.writestr(name, data)


def tiny():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        os.remove(os.path.join(OUT, f)) if os.path.isfile(os.path.join(OUT, f)) else None

    # 1. released-style state dict (DINO's dino_deitsmall16_pretrain.pth is one), protocol 2 and 4
    m = random_vit(1)
    sd = m.state_dict()
    save(sd, "released.pth")
    write_expect("released.pth", list(sd.items()))

    # 2. float16 and bfloat16
    for tag, dt in (("f16", torch.float16), ("bf16", torch.bfloat16)):
        sdh = collections.OrderedDict((k, v.to(dt)) for k, v in sd.items())
        save(sdh, "released_%s.pth" % tag)
        write_expect("released_%s.pth" % tag, list(sdh.items()))
        if dt == torch.float16:  # protocol 4: FRAME, MEMOIZE, SHORT_BINUNICODE, STACK_GLOBAL
            save(sdh, "released_proto4.pth", pickle_protocol=4)
            write_expect("released_proto4.pth", list(sdh.items()))

    # 3. a DINO training checkpoint: student (DDP: module.backbone.*), teacher (backbone.*), heads,
    #    optimizer, args, epoch, dino_loss, fp16_scaler.  Student backbone tensors are the teacher's
    #    objects (torch.save stores a shared storage once) except cls_token.
    torch.manual_seed(2)
    head = collections.OrderedDict([
        ("mlp.0.weight", torch.randn(16, 32)), ("mlp.0.bias", torch.randn(16)),
        ("mlp.2.weight", torch.randn(8, 16)), ("mlp.2.bias", torch.randn(8)),
        ("last_layer.weight_g", torch.randn(10, 1)), ("last_layer.weight_v", torch.randn(10, 8))])
    teacher = collections.OrderedDict()
    student = collections.OrderedDict()
    for k, v in sd.items():
        teacher["backbone." + k] = v
        student["module.backbone." + k] = v if k != "cls_token" else v + 1.0
    for k, v in head.items():
        teacher["head." + k] = v
        student["module.head." + k] = v * 2
    params = [nn.Parameter(v.clone()) for v in head.values()]
    opt = torch.optim.AdamW([{"params": params[:4]}, {"params": params[4:], "weight_decay": 0.0}], lr=1e-3)
    sum(p.sum() for p in params).backward()
    opt.step()
    args = argparse.Namespace(arch="vit_small", patch_size=16, out_dim=10, norm_last_layer=True, momentum_teacher=0.996,
                              use_fp16=True, weight_decay=0.04, lr=0.0005, global_crops_scale=(0.4, 1.0),
                              local_crops_number=8, data_path="/path/to/imagenet/train", dist_url="env://",
                              seed=0, gpu=None, big=2 ** 70, neg=-123456789012, drop_path_rate=0.1, tags=["a", "b"])
    dino_loss = collections.OrderedDict([("center", torch.randn(1, 10))])
    ckpt = {"student": student, "teacher": teacher, "optimizer": opt.state_dict(), "epoch": 100, "args": args,
            "dino_loss": dino_loss,
            "fp16_scaler": {"scale": 65536.0, "growth_factor": 2.0, "backoff_factor": 0.5, "growth_interval": 2000,
                            "_growth_tracker": 17}}
    save(ckpt, "train_ckpt.pth")
    write_expect("train_ckpt.pth", list(sd.items()), skipped=["head." + k for k in head])
    stu = [(k, v if k != "cls_token" else v + 1.0) for k, v in sd.items()]
    write_expect("train_ckpt.pth.student", stu, skipped=["module.head." + k for k in head])

    # 4. non-contiguous views and storage offsets (transposes, slices, a half-precision transpose)
    torch.manual_seed(3)
    qkv_t = torch.randn(32, 96)
    big = torch.randn(1, 20, 32)
    fc1 = torch.randn(128, 64)
    proj_t = torch.randn(32, 32).half()
    nc = collections.OrderedDict([
        ("blocks.0.attn.qkv.weight", qkv_t.t()), ("pos_embed", big[:, 2:19, :]), ("blocks.0.mlp.fc1.weight", fc1[:, ::2]),
        ("blocks.0.attn.proj.weight", proj_t.t()), ("blocks.0.norm1.bias", big[0, 7, :]),
        ("head.step", torch.tensor(5.0))])
    assert not nc["blocks.0.attn.qkv.weight"].is_contiguous() and nc["pos_embed"].storage_offset() == 64
    save(nc, "noncontig.pth")
    write_expect("noncontig.pth", [(k, v) for k, v in nc.items() if not k.startswith("head")], skipped=["head.step"])

    # 5. safetensors with DINO names, mixed F32 / F16 / BF16
    dts = [torch.float32, torch.float16, torch.bfloat16]
    st = [(k, v.to(dts[i % 3])) for i, (k, v) in enumerate(sd.items())]
    write_safetensors(os.path.join(OUT, "dino.safetensors"), st, metadata={"format": "pt"})
    write_expect("dino.safetensors", st)

    # 6. safetensors with Hugging Face ViTModel names + config.json (float16), and ViTForImageClassification
    #    names ("vit." prefix, a classifier) in another folder
    os.makedirs(os.path.join(OUT, "hf"), exist_ok=True)
    sdh = collections.OrderedDict((k, v.half()) for k, v in sd.items())
    hf = hf_names(sdh) + [("pooler.dense.weight", torch.randn(32, 32).half()), ("pooler.dense.bias", torch.randn(32).half())]
    write_safetensors(os.path.join(OUT, "hf", "model.safetensors"), hf, metadata={"format": "pt"})
    cfg = {"architectures": ["ViTModel"], "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2,
           "intermediate_size": 128, "hidden_act": "gelu", "layer_norm_eps": 1e-12, "image_size": 64, "patch_size": 16,
           "num_channels": 3, "qkv_bias": True, "model_type": "vit"}
    with open(os.path.join(OUT, "hf", "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    write_expect("hf/model.safetensors", list(sdh.items()), skipped=["pooler.dense.weight", "pooler.dense.bias"],
                 hf=1, heads=2, eps=1e-12)
    os.makedirs(os.path.join(OUT, "hf_cls"), exist_ok=True)
    sdb = collections.OrderedDict((k, v.bfloat16()) for k, v in sd.items())
    hfc = hf_names(sdb, "vit.") + [("classifier.weight", torch.randn(5, 32).bfloat16()), ("classifier.bias", torch.zeros(5).bfloat16())]
    write_safetensors(os.path.join(OUT, "hf_cls", "model.safetensors"), hfc)
    cfg.update(num_attention_heads=4, layer_norm_eps=1e-6, architectures=["ViTForImageClassification"])
    with open(os.path.join(OUT, "hf_cls", "config.json"), "w") as f:
        json.dump(cfg, f)
    write_expect("hf_cls/model.safetensors", list(sdb.items()), skipped=["classifier.weight", "classifier.bias"],
                 hf=1, heads=4, eps=1e-6)

    # 7. SelfPatch-like backbone: no class token, pos_embed (1, 16, 32), no final norm
    sp = random_vit(4, cls=False, final_norm=False).state_dict()
    assert tuple(sp["pos_embed"].shape) == (1, 16, 32) and "cls_token" not in sp
    save(sp, "selfpatch.pth")
    write_expect("selfpatch.pth", list(sp.items()))

    # ---- bad files ----
    # an unknown tensor inside the backbone's names
    save(collections.OrderedDict([("cls_token", torch.randn(1, 1, 32)), ("blocks.3.attn.foo", torch.randn(4))]),
         "bad_unknown.pth")
    # a pickle calling os.system (GLOBAL), and one calling builtins.eval (protocol 4, STACK_GLOBAL)
    evil = b"\x80\x02cos\nsystem\nq\x00X\x0f\x00\x00\x00echo pwned >&2q\x01\x85q\x02Rq\x03."
    write_zip(os.path.join(OUT, "bad_os_system.pth"), [("bad_os_system/data.pkl", evil), ("bad_os_system/version", b"3\n")])
    body = b"\x8c\x08builtins\x94\x8c\x04eval\x94\x93\x94\x8c\x031+1\x94\x85\x94R\x94."
    evil4 = b"\x80\x04\x95" + struct.pack("<Q", len(body)) + body
    write_zip(os.path.join(OUT, "bad_eval.pth"), [("archive/data.pkl", evil4), ("archive/version", b"3\n")])
    # a compressed entry
    with zipfile.ZipFile(os.path.join(OUT, "bad_unknown.pth")) as z:
        entries = [(i.filename, z.read(i.filename)) for i in z.infolist()]
    write_zip(os.path.join(OUT, "bad_compressed.pth"), entries, method=zipfile.ZIP_DEFLATED)
    # a storage entry shorter than the pickle says (cut to half)
    cut = [(n, d[:len(d) // 2] if "/data/" in n and len(d) > 64 else d) for n, d in entries]
    write_zip(os.path.join(OUT, "bad_short_storage.pth"), cut)
    # a truncated file
    with open(os.path.join(OUT, "noncontig.pth"), "rb") as f:
        raw = f.read()
    with open(os.path.join(OUT, "bad_truncated.pth"), "wb") as f:
        f.write(raw[:len(raw) * 6 // 10])
    # a legacy (non-zip) torch.save file
    torch.save({"cls_token": torch.zeros(1, 1, 4)}, os.path.join(OUT, "bad_legacy.pth"), _use_new_zipfile_serialization=False)
    # safetensors: header length overruns the file; data_offsets overrun the buffer
    small = [("cls_token", torch.ones(1, 1, 4)), ("pos_embed", torch.ones(1, 2, 4))]
    write_safetensors(os.path.join(OUT, "bad_header.safetensors"), small, header_len_override=4096)
    write_safetensors(os.path.join(OUT, "bad_offsets.safetensors"), small, offset_bump=64)
    # HF names with the key projection missing
    write_safetensors(os.path.join(OUT, "bad_hf_nokey.safetensors"),
                      [(k, v) for k, v in hf_names(sdh) if "attention.attention.key" not in k and "layer.0." in k])
    total = 0
    for root, _, files in os.walk(OUT):
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    print("wrote %s (%d bytes)" % (OUT, total))


def big(folder):
    """A real-size ViT-S/16 (DINO layout, random weights) and its expectations, for the timing test."""
    os.makedirs(folder, exist_ok=True)
    global OUT
    OUT = folder
    m = random_vit(7, dim=384, depth=12, patch=16, grid=14)
    sd = m.state_dict()
    save(sd, "vits16.pth")
    write_expect("vits16.pth", list(sd.items()))
    print("wrote %s" % os.path.join(folder, "vits16.pth"))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--big", metavar="DIR")
    a = ap.parse_args()
    big(a.big) if a.big else tiny()
