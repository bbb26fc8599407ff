#!/usr/bin/python3
"""tests/ref/dino23_weights_ref.py — tiny DINOv2 / DINOv2-reg / DINOv3 weights files for tests/test_weights.c.

    /usr/bin/python3 tests/ref/dino23_weights_ref.py        # writes tests/data/weights/dino23/

Every form a user has, on a tiny network (width 16, 2 heads of 8, MLP 32, patch 2, a 2x2 position
grid, 4 register / storage tokens; depth 2, or 4 in the chunked training checkpoint), random values
far from any init:
  v2_hub.pth, v2reg_hub.pth, v3_hub.pth   the released hub state dicts (dinov2_vits14_pretrain.pth,
                                          dinov2_vits14_reg4_pretrain.pth, dinov3_vits16_pretrain_*.pth)
  v2_nomask.pth                           DINOv2 without mask_token (timm's vit_*_patch14_dinov2 names)
  v2reg_train.pth, v3_train.pth           training checkpoints {'teacher': backbone.* + dino_head.*
                                          + ibot_head.*}; the DINOv2 one with block_chunks=2 names
  hf_v2/, hf_v2reg/, hf_v2reg_cls/,       Hugging Face safetensors (names sorted, as save_pretrained
  hf_v3/, hf_v3_noconfig/                 writes them) with config.json: Dinov2Model,
                                          Dinov2WithRegistersModel (and its ImageClassification
                                          wrapper), DINOv3ViTModel (and without config.json)
  bad_*                                   files keycut must refuse
The Hugging Face names are made here from the conversion scripts' mappings (transformers
models/dinov2_with_registers/convert_dinov2_with_registers_to_hf.py, models/dinov3_vit/
convert_dinov3_vit_to_hf.py): q/k/v split from qkv, DINOv3's k bias, bias_mask and periods dropped,
its mask_token (1, 1, D).

Each good file F gets F.expect (format of tests/ref/make_checkpoints.py, plus family / theta /
registers / pconf lines): the canonical tensors weights_load must return, in order:
  * file order, a Hugging Face q/k/v group at the place of its first part;
  * DINOv3ViTModel's qkv.bias with zero k rows (it has no k_proj.bias);
  * for DINOv3ViTModel, rope_embed.periods last, as that model computes its frequencies in
    float32:  inv_freq = 1 / theta ** torch.arange(0, 1, 4 / head_dim);  periods = 1 / inv_freq.
"""
import collections
import hashlib
import json
import os
import shutil
import struct

import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "weights", "dino23")
D, HEADS, MLP, PATCH, GRID, REG = 16, 2, 32, 2, 2, 4


def rnd(*shape):
    return torch.randn(*shape) * 0.5


# ---- state dicts in the official modules' order ---------------------------------------------------
def block(prefix, v3):
    b = collections.OrderedDict()
    b[prefix + "norm1.weight"] = 1 + rnd(D)
    b[prefix + "norm1.bias"] = rnd(D)
    b[prefix + "attn.qkv.weight"] = rnd(3 * D, D)
    b[prefix + "attn.qkv.bias"] = rnd(3 * D)  # DINOv3: the k third is non-zero in real files too
    if v3:
        b[prefix + "attn.qkv.bias_mask"] = torch.cat([torch.ones(D), torch.zeros(D), torch.ones(D)])
    b[prefix + "attn.proj.weight"] = rnd(D, D)
    b[prefix + "attn.proj.bias"] = rnd(D)
    b[prefix + "ls1.gamma"] = rnd(D)
    b[prefix + "norm2.weight"] = 1 + rnd(D)
    b[prefix + "norm2.bias"] = rnd(D)
    b[prefix + "mlp.fc1.weight"] = rnd(MLP, D)
    b[prefix + "mlp.fc1.bias"] = rnd(MLP)
    b[prefix + "mlp.fc2.weight"] = rnd(D, MLP)
    b[prefix + "mlp.fc2.bias"] = rnd(D)
    b[prefix + "ls2.gamma"] = rnd(D)
    return b


def dinov2(seed, registers, depth=2, chunks=0):
    """DinoVisionTransformer.state_dict(): own parameters first (cls_token, pos_embed,
    register_tokens, mask_token), then patch_embed, blocks, norm.  With block_chunks=C block i
    is blocks.{i // (depth / C)}.{i}."""
    torch.manual_seed(seed)
    sd = collections.OrderedDict()
    sd["cls_token"] = rnd(1, 1, D)
    sd["pos_embed"] = rnd(1, 1 + GRID * GRID, D)
    if registers:
        sd["register_tokens"] = rnd(1, REG, D)
    sd["mask_token"] = rnd(1, D)
    sd["patch_embed.proj.weight"] = rnd(D, 3, PATCH, PATCH)
    sd["patch_embed.proj.bias"] = rnd(D)
    for i in range(depth):
        name = "blocks.%d.%d." % (i // (depth // chunks), i) if chunks else "blocks.%d." % i
        sd.update(block(name, False))
    sd["norm.weight"] = 1 + rnd(D)
    sd["norm.bias"] = rnd(D)
    return sd


def dinov3(seed, depth=2):
    """DINOv3's DinoVisionTransformer.state_dict(): cls_token, storage_tokens, mask_token (1, D),
    patch_embed, rope_embed.periods (head_dim / 4, base 100 as the hub builds it), blocks with
    attn.qkv.bias_mask, norm."""
    torch.manual_seed(seed)
    sd = collections.OrderedDict()
    sd["cls_token"] = rnd(1, 1, D)
    sd["storage_tokens"] = rnd(1, REG, D)
    sd["mask_token"] = rnd(1, D)
    sd["patch_embed.proj.weight"] = rnd(D, 3, PATCH, PATCH)
    sd["patch_embed.proj.bias"] = rnd(D)
    hd = D // HEADS
    sd["rope_embed.periods"] = 100.0 ** (2 * torch.arange(hd // 4, dtype=torch.float32) / (hd // 2))
    for i in range(depth):
        sd.update(block("blocks.%d." % i, True))
    sd["norm.weight"] = 1 + rnd(D)
    sd["norm.bias"] = rnd(D)
    return sd


def canonical(sd):
    """The loader's canonical names for DINO-named tensors (chunks dropped, storage_tokens renamed,
    mask_token skipped); returns (tensors, skipped)."""
    out, skipped = [], []
    for k, v in sd.items():
        name = k[len("backbone."):] if k.startswith("backbone.") else k
        if name == "mask_token" or not (name.startswith(("cls_token", "pos_embed", "register_tokens", "storage_tokens",
                                                        "rope_embed.", "patch_embed.", "blocks.", "norm."))):
            skipped.append(k)
            continue
        if name == "storage_tokens":
            name = "register_tokens"
        parts = name.split(".")
        if parts[0] == "blocks" and parts[2].isdigit():
            name = ".".join(["blocks"] + parts[2:])
        out.append((name, v))
    return out, skipped


def heads_state(seed):
    torch.manual_seed(seed)
    h = collections.OrderedDict()
    for head, n in (("dino_head", 12), ("ibot_head", 10)):
        h[head + ".mlp.0.weight"] = rnd(20, D)
        h[head + ".mlp.0.bias"] = rnd(20)
        h[head + ".mlp.2.weight"] = rnd(8, 20)
        h[head + ".mlp.2.bias"] = rnd(8)
        h[head + ".last_layer.weight_g"] = rnd(n, 1)
        h[head + ".last_layer.weight_v"] = rnd(n, 8)
    return h


# ---- Hugging Face names (from the conversion scripts' mappings) -----------------------------------
def hf_dinov2(sd):
    """DINO names -> Dinov2Model / Dinov2WithRegistersModel names (convert_dinov2*_to_hf.py)."""
    out = collections.OrderedDict()
    top = {"cls_token": "embeddings.cls_token", "mask_token": "embeddings.mask_token",
           "pos_embed": "embeddings.position_embeddings", "register_tokens": "embeddings.register_tokens",
           "patch_embed.proj.weight": "embeddings.patch_embeddings.projection.weight",
           "patch_embed.proj.bias": "embeddings.patch_embeddings.projection.bias",
           "norm.weight": "layernorm.weight", "norm.bias": "layernorm.bias"}
    per = {"norm1": "norm1", "norm2": "norm2", "mlp.fc1": "mlp.fc1", "mlp.fc2": "mlp.fc2",
           "attn.proj": "attention.output.dense"}
    for k, v in sd.items():
        if k in top:
            out[top[k]] = v
            continue
        _, i, rest = k.split(".", 2)
        base = "encoder.layer.%s." % i
        if rest in ("ls1.gamma", "ls2.gamma"):
            out[base + "layer_scale%s.lambda1" % rest[2]] = v
        elif rest.startswith("attn.qkv."):
            wb = rest.rsplit(".", 1)[1]
            for j, p in enumerate(("query", "key", "value")):
                out[base + "attention.attention.%s.%s" % (p, wb)] = v[j * D:(j + 1) * D].clone()
        else:
            stem, wb = rest.rsplit(".", 1)
            out[base + per[stem] + "." + wb] = v
    return out


def hf_dinov3(sd):
    """DINOv3 names -> DINOv3ViTModel names (convert_dinov3_vit_to_hf.py): qkv split into
    q_proj / k_proj / v_proj, k_proj.bias, bias_mask and periods dropped, mask_token (1, 1, D)."""
    out = collections.OrderedDict()
    top = {"cls_token": "embeddings.cls_token", "storage_tokens": "embeddings.register_tokens",
           "patch_embed.proj.weight": "embeddings.patch_embeddings.weight",
           "patch_embed.proj.bias": "embeddings.patch_embeddings.bias",
           "norm.weight": "norm.weight", "norm.bias": "norm.bias"}
    per = {"norm1": "norm1", "norm2": "norm2", "mlp.fc1": "mlp.up_proj", "mlp.fc2": "mlp.down_proj",
           "attn.proj": "attention.o_proj"}
    for k, v in sd.items():
        if k == "mask_token":
            out["embeddings.mask_token"] = v.unsqueeze(1)
        elif k in top:
            out[top[k]] = v
        elif k == "rope_embed.periods":
            continue
        else:
            _, i, rest = k.split(".", 2)
            base = "layer.%s." % i
            if rest in ("ls1.gamma", "ls2.gamma"):
                out[base + "layer_scale%s.lambda1" % rest[2]] = v
            elif rest == "attn.qkv.bias_mask":
                continue
            elif rest.startswith("attn.qkv."):
                wb = rest.rsplit(".", 1)[1]
                for j, p in enumerate(("q_proj", "k_proj", "v_proj")):
                    if not (wb == "bias" and p == "k_proj"):
                        out[base + "attention.%s.%s" % (p, wb)] = v[j * D:(j + 1) * D].clone()
            else:
                stem, wb = rest.rsplit(".", 1)
                out[base + per[stem] + "." + wb] = v
    return out


def hf_canonical(tensors, v3):
    """What the loader must make of Hugging Face names, in file order (a q/k/v group at its first
    part; DINOv3's missing k bias as zeros)."""
    out, skipped, groups, order = {}, [], {}, []
    rename = {"embeddings.cls_token": "cls_token", "embeddings.position_embeddings": "pos_embed",
              "embeddings.register_tokens": "register_tokens",
              "embeddings.patch_embeddings.projection.weight": "patch_embed.proj.weight",
              "embeddings.patch_embeddings.projection.bias": "patch_embed.proj.bias",
              "embeddings.patch_embeddings.weight": "patch_embed.proj.weight",
              "embeddings.patch_embeddings.bias": "patch_embed.proj.bias",
              "layernorm.weight": "norm.weight", "layernorm.bias": "norm.bias",
              "norm.weight": "norm.weight", "norm.bias": "norm.bias"}
    per = {"norm1": "norm1", "norm2": "norm2", "mlp.fc1": "mlp.fc1", "mlp.fc2": "mlp.fc2",
           "mlp.up_proj": "mlp.fc1", "mlp.down_proj": "mlp.fc2", "attention.output.dense": "attn.proj",
           "attention.o_proj": "attn.proj"}
    qkv = {"attention.attention.query": 0, "attention.attention.key": 1, "attention.attention.value": 2,
           "attention.q_proj": 0, "attention.k_proj": 1, "attention.v_proj": 2}
    for raw, v in tensors:
        k = raw
        for p in ("dinov2_with_registers.", "dinov2.", "dinov3_vit."):
            if k.startswith(p):
                k = k[len(p):]
        if k in rename:
            out[rename[k]] = v
            order.append(rename[k])
            continue
        if not k.startswith(("encoder.layer.", "layer.")):
            skipped.append(raw)
            continue
        rest = k.split(".", 3)[3] if k.startswith("encoder.") else k.split(".", 2)[2]
        i = k.split(".")[2] if k.startswith("encoder.") else k.split(".")[1]
        stem, wb = rest.rsplit(".", 1)
        if stem in ("layer_scale1", "layer_scale2"):
            name = "blocks.%s.ls%s.gamma" % (i, stem[-1])
        elif stem in qkv:
            name = "blocks.%s.attn.qkv.%s" % (i, wb)
            groups.setdefault(name, [None, None, None])[qkv[stem]] = v
            if name in order:
                continue
        else:
            name = "blocks.%s.%s.%s" % (i, per[stem], wb)
        out[name] = v
        order.append(name)
    for name, parts in groups.items():
        if parts[1] is None:
            assert v3 and name.endswith("bias")
            parts[1] = torch.zeros_like(parts[0])
        out[name] = torch.cat(parts, 0)
    return [(n, out[n]) for n in order], skipped


def hf_periods(theta, head_dim):
    """DINOv3ViTRopePositionEmbedding's inv_freq, as modeling_dinov3_vit.py computes it, as periods."""
    inv_freq = 1 / theta ** torch.arange(0, 1, 4 / head_dim, dtype=torch.float32)
    return 1 / inv_freq


# ---- writers --------------------------------------------------------------------------------------
def tensor_line(name, t):
    a = t.detach().float().contiguous().numpy()
    b = a.astype("<f4").tobytes()
    flat = a.reshape(-1)
    first = float(flat[0]) if flat.size else 0.0
    last = float(flat[-1]) if flat.size else 0.0
    shape = " ".join(str(s) for s in a.shape)
    return "tensor %s %d%s%s %s %.9g %.9g %.9g" % (
        name, a.ndim, " " if a.ndim else "", shape, hashlib.sha256(b).hexdigest(), float(a.astype("float64").sum()), first, last)


def write_expect(fname, tensors, skipped, family, hf=0, heads=0, eps=0.0, theta=0.0, registers=-1, pconf=0):
    lines = [tensor_line(n, t) for n, t in tensors]
    lines += ["skip %s" % s for s in skipped]
    lines += ["family %s" % family, "hf %d" % hf, "heads %d" % heads, "eps %.9g" % eps, "theta %.9g" % theta,
              "registers %d" % registers, "pconf %d" % pconf]
    with open(os.path.join(OUT, fname + ".expect"), "w") as f:
        f.write("\n".join(lines) + "\n")


def write_safetensors(path, tensors):
    """Float32 safetensors, names sorted (the order Hugging Face's save_pretrained writes)."""
    header, blobs, pos = {"__metadata__": {"format": "pt"}}, [], 0
    for name, t in sorted(tensors, key=lambda kv: kv[0]):
        b = t.detach().float().contiguous().numpy().astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [pos, pos + len(b)]}
        blobs.append(b)
        pos += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))
    return sorted(tensors, key=lambda kv: kv[0])


def write_config(folder, cfg):
    os.makedirs(os.path.join(OUT, folder), exist_ok=True)
    with open(os.path.join(OUT, folder, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)


def save(obj, fname):
    torch.save(obj, os.path.join(OUT, fname))


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)

    # 1. hub state dicts
    v2, v2reg, v3 = dinov2(11, False), dinov2(12, True), dinov3(13)
    for fname, sd, fam in (("v2_hub.pth", v2, "dinov2"), ("v2reg_hub.pth", v2reg, "dinov2-reg"), ("v3_hub.pth", v3, "dinov3")):
        save(sd, fname)
        write_expect(fname, *canonical(sd), fam)

    # timm's vit_small_patch14_dinov2 names: DINOv2's without mask_token (LayerScale says dinov2)
    nomask = collections.OrderedDict((k, v) for k, v in v2.items() if k != "mask_token")
    save(nomask, "v2_nomask.pth")
    write_expect("v2_nomask.pth", *canonical(nomask), "dinov2")

    # 2. training checkpoints: {'teacher': backbone.* + heads}; DINOv2 with block_chunks=2 (depth 4)
    chunked = dinov2(14, True, depth=4, chunks=2)
    assert "blocks.0.1.norm1.weight" in chunked and "blocks.1.2.norm1.weight" in chunked
    for fname, sd, fam, seed in (("v2reg_train.pth", chunked, "dinov2-reg", 15), ("v3_train.pth", dinov3(16), "dinov3", 17)):
        teacher = collections.OrderedDict(("backbone." + k, v) for k, v in sd.items())
        teacher.update(heads_state(seed))
        save({"teacher": teacher}, fname)
        write_expect(fname, *canonical(teacher), fam)

    # 3. Hugging Face safetensors + config.json
    base = {"hidden_size": D, "num_hidden_layers": 2, "num_attention_heads": HEADS, "patch_size": PATCH,
            "image_size": PATCH * GRID, "num_channels": 3, "hidden_act": "gelu"}
    cfg2 = dict(base, architectures=["Dinov2Model"], model_type="dinov2", layer_norm_eps=1e-6, mlp_ratio=MLP // D,
                layerscale_value=1.0, use_swiglu_ffn=False)
    write_config("hf_v2", cfg2)
    f = write_safetensors(os.path.join(OUT, "hf_v2", "model.safetensors"), list(hf_dinov2(v2).items()))
    write_expect("hf_v2/model.safetensors", *hf_canonical(f, False), "hf-dinov2", hf=1, heads=HEADS, eps=1e-6)

    cfg2r = dict(cfg2, architectures=["Dinov2WithRegistersModel"], model_type="dinov2_with_registers", num_register_tokens=REG)
    write_config("hf_v2reg", cfg2r)
    f = write_safetensors(os.path.join(OUT, "hf_v2reg", "model.safetensors"), list(hf_dinov2(v2reg).items()))
    write_expect("hf_v2reg/model.safetensors", *hf_canonical(f, False), "hf-dinov2-reg", hf=1, heads=HEADS, eps=1e-6, registers=REG)

    # the ImageClassification wrapper: base_model_prefix "dinov2_with_registers." and a classifier on [CLS, mean patch]
    cfg2c = dict(cfg2r, architectures=["Dinov2WithRegistersForImageClassification"], layer_norm_eps=1e-5)
    write_config("hf_v2reg_cls", cfg2c)
    torch.manual_seed(18)
    cls = [("dinov2_with_registers." + k, v) for k, v in hf_dinov2(v2reg).items()]
    cls += [("classifier.weight", rnd(5, 2 * D)), ("classifier.bias", rnd(5))]
    f = write_safetensors(os.path.join(OUT, "hf_v2reg_cls", "model.safetensors"), cls)
    write_expect("hf_v2reg_cls/model.safetensors", *hf_canonical(f, False), "hf-dinov2-reg", hf=1, heads=HEADS, eps=1e-5,
                 registers=REG)

    # DINOv3ViTModel: one head of 16 (4 periods) and rope_theta 50 from config.json; without
    # config.json head_dim 64 (16 periods) and theta 100
    cfg3 = dict(base, architectures=["DINOv3ViTModel"], model_type="dinov3_vit", num_attention_heads=1, layer_norm_eps=1e-5,
                rope_theta=50.0, intermediate_size=MLP, num_register_tokens=REG, query_bias=True, key_bias=False,
                value_bias=True, proj_bias=True, mlp_bias=True, layerscale_value=1.0, use_gated_mlp=False)
    write_config("hf_v3", cfg3)
    hf3 = list(hf_dinov3(v3).items())
    f = write_safetensors(os.path.join(OUT, "hf_v3", "model.safetensors"), hf3)
    t, s = hf_canonical(f, True)
    write_expect("hf_v3/model.safetensors", t + [("rope_embed.periods", hf_periods(50.0, 16))], s, "hf-dinov3", hf=1, heads=1,
                 eps=1e-5, theta=50.0, registers=REG, pconf=1)
    f = write_safetensors(os.path.join(OUT, "hf_v3_noconfig", "model.safetensors"), hf3)
    write_expect("hf_v3_noconfig/model.safetensors", t + [("rope_embed.periods", hf_periods(100.0, 64))], s, "hf-dinov3", hf=1,
                 pconf=1)

    # ---- files to refuse ----
    torch.manual_seed(19)
    save(collections.OrderedDict([("conv1.weight", rnd(4, 3, 3, 3)), ("bn1.weight", rnd(4)), ("fc.weight", rnd(2, 4)),
                                  ("fc.bias", rnd(2))]), "bad_unrelated.pth")
    # DINOv2 chunked names gone wrong (a norm per block is enough): block 1 in chunk 0 and in
    # chunk 1; chunk numbers going down; chunked and plain block names together
    def norms(names):
        return collections.OrderedDict([("backbone.cls_token", rnd(1, 1, D))] + [("backbone.%snorm1.weight" % n, rnd(D)) for n in names])
    save({"teacher": norms(["blocks.0.0.", "blocks.0.1.", "blocks.1.1.", "blocks.1.2."])}, "bad_chunk_dup.pth")
    save(norms(["blocks.1.0.", "blocks.1.1.", "blocks.0.2.", "blocks.0.3."]), "bad_chunk_order.pth")
    save(norms(["blocks.0.0.", "blocks.0.1.", "blocks.2."]), "bad_chunk_mixed.pth")
    # timm's register layout (reg_token; pos_embed without the class row)
    save(collections.OrderedDict([("cls_token", rnd(1, 1, D)), ("reg_token", rnd(1, REG, D)), ("pos_embed", rnd(1, GRID * GRID, D))]),
         "bad_timm_reg.pth")
    # DINOv3ViTModel with a gated MLP (gate_proj), one without v_proj.bias, one with a DINO name
    gated = hf3 + [("layer.0.mlp.gate_proj.weight", rnd(MLP, D)), ("layer.0.mlp.gate_proj.bias", rnd(MLP))]
    write_safetensors(os.path.join(OUT, "bad_gate", "model.safetensors"), gated)
    write_safetensors(os.path.join(OUT, "bad_nov", "model.safetensors"), [kv for kv in hf3 if kv[0] != "layer.1.attention.v_proj.bias"])
    write_safetensors(os.path.join(OUT, "bad_mix", "model.safetensors"), hf3 + [("blocks.0.ls1.gamma", rnd(D))])
    # ViTModel and Dinov2Model names in one file
    vitmix = [(k.replace("encoder.layer.1.norm1.", "encoder.layer.1.layernorm_before."), v) for k, v in hf_dinov2(v2).items()]
    write_safetensors(os.path.join(OUT, "bad_vitmix", "model.safetensors"), vitmix)
    # config.json says 2 register tokens, the file holds 4
    write_config("bad_regcount", dict(cfg2r, num_register_tokens=2))
    write_safetensors(os.path.join(OUT, "bad_regcount", "model.safetensors"), list(hf_dinov2(v2reg).items()))

    total, biggest = 0, 0
    for root, _, files in os.walk(OUT):
        for name in files:
            size = os.path.getsize(os.path.join(root, name))
            total += size
            biggest = max(biggest, size)
    print("wrote %s (%d bytes, largest file %d)" % (OUT, total, biggest))


if __name__ == "__main__":
    main()
