#!/usr/bin/python3
"""tests/bad/make_bad.py — writes the committed broken inputs of the bad-input catalogue into
tests/bad/files/ (run with /usr/bin/python3; needs torch, numpy, Pillow and h5py).  The catalogue
itself (which stage, exit status, message) is tests/bad/catalogue.tsv; entries that need a whole
dataset are built at test time by tests/test_bad.sh from kc-demo-data output."""
import collections, io, json, os, pickle, struct, zipfile, zlib
import numpy as np
import torch
import h5py
from PIL import Image

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "files")
os.makedirs(OUT, exist_ok=True)

def w(name, data):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)

def png_bytes(img):
    b = io.BytesIO(); img.save(b, "PNG"); return b.getvalue()

def jpg_bytes(img, **kw):
    b = io.BytesIO(); img.save(b, "JPEG", quality=90, **kw); return b.getvalue()

def chunk(tag, data):
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xffffffff)

def png_raw(width, height, idat=None, color_type=2):
    ihdr = struct.pack(">IIBBBBB", width, height, 8, color_type, 0, 0, 0)
    if idat is None: idat = zlib.compress(b"\0" * 4)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")

# ---- images -------------------------------------------------------------------------------------
rng = np.random.default_rng(7)
photo = Image.fromarray(rng.integers(0, 255, (48, 64, 3), dtype=np.uint8))
j = jpg_bytes(photo); p = png_bytes(photo)
w("img_truncated.jpg", j[: len(j) // 2])
w("img_truncated.png", p[: len(p) // 2])
w("img_truncated_progressive.jpg", jpg_bytes(photo, progressive=True)[:300])
w("img_empty.jpg", b"")
w("img_text.png", b"this is not an image\n")
bad = bytearray(p); bad[29] ^= 0xFF  # IHDR CRC
w("img_badcrc.png", bytes(bad))
w("img_0x0.png", png_raw(0, 0))
w("img_huge.png", png_raw(100000, 100000))
sof = j.index(b"\xff\xc0")  # baseline SOF0: FF C0 len(2) P(1) H(2) W(2)
hj = bytearray(j); hj[sof + 5:sof + 9] = struct.pack(">HH", 65000, 65000)
w("img_huge.jpg", bytes(hj))
w("img_garbage.jpg", b"\xff\xd8\xff" + bytes(rng.integers(0, 255, 400, dtype=np.uint8)))
w("img_zlib_corrupt.png", png_raw(32, 32, idat=b"\x78\x9c" + b"\xde\xad\xbe\xef" * 8))
w("img_gif.jpg", b"GIF89a\x01\x00\x01\x00\x00\x00\x00;")
w("img_1x1.png", png_bytes(Image.new("RGB", (1, 1), (200, 10, 10))))
w("img_8x8.jpg", jpg_bytes(Image.new("RGB", (8, 8), (10, 200, 10))))

# ---- checkpoints (a tiny valid ViT: dim 8, patch 16, 2x2 position grid, one block) ----------------
def vit(dim=8, patch=16, grid=2, depth=1):
    g = torch.Generator().manual_seed(3)
    r = lambda *s: torch.randn(*s, generator=g) * 0.1
    sd = collections.OrderedDict()
    sd["cls_token"] = r(1, 1, dim); sd["pos_embed"] = r(1, 1 + grid * grid, dim)
    sd["patch_embed.proj.weight"] = r(dim, 3, patch, patch); sd["patch_embed.proj.bias"] = r(dim)
    for b in range(depth):
        q = f"blocks.{b}."
        for n in ("norm1", "norm2"):
            sd[q + n + ".weight"] = torch.ones(dim); sd[q + n + ".bias"] = torch.zeros(dim)
        sd[q + "attn.qkv.weight"] = r(3 * dim, dim); sd[q + "attn.qkv.bias"] = r(3 * dim)
        sd[q + "attn.proj.weight"] = r(dim, dim); sd[q + "attn.proj.bias"] = r(dim)
        sd[q + "mlp.fc1.weight"] = r(4 * dim, dim); sd[q + "mlp.fc1.bias"] = r(4 * dim)
        sd[q + "mlp.fc2.weight"] = r(dim, 4 * dim); sd[q + "mlp.fc2.bias"] = r(dim)
    sd["norm.weight"] = torch.ones(dim); sd["norm.bias"] = torch.zeros(dim)
    return sd

def save(name, obj, **kw):
    torch.save(obj, os.path.join(OUT, name), **kw)

save("ckpt_ok.pth", vit())  # the valid baseline (the test checks that it is accepted)
sd = vit(); del sd["blocks.0.norm2.weight"]; save("ckpt_missing.pth", sd)
sd = vit(); sd["blocks.0.attn.rel_pos"] = torch.zeros(3); save("ckpt_extra.pth", sd)
sd = vit(); sd["blocks.0.attn.qkv.weight"] = torch.zeros(20, 8); save("ckpt_misshaped.pth", sd)
sd = vit(); sd["blocks.0.mlp.fc1.weight"][3, 1] = float("nan"); save("ckpt_nan.pth", sd)
sd = vit(); sd["blocks.0.attn.proj.bias"][0] = float("inf"); save("ckpt_inf.pth", sd)
sd = vit(); sd["pos_embed"] = torch.zeros(1, 5, 8, dtype=torch.int64); save("ckpt_int64.pth", sd)
sd = vit(); sd["norm.bias"] = torch.zeros(8, dtype=torch.uint8); save("ckpt_uint8.pth", sd)
sd = vit(); sd["cls_token"] = sd["cls_token"].reshape(8); save("ckpt_cls_rank.pth", sd)
sd = vit(); sd["pos_embed"] = torch.zeros(1, 7, 8); save("ckpt_posembed_notsquare.pth", sd)
save("ckpt_no_tensors.pth", {"epoch": 3, "lr": 0.1})
save("ckpt_legacy.pth", vit(), _use_new_zipfile_serialization=False)
ok = open(os.path.join(OUT, "ckpt_ok.pth"), "rb").read()
w("ckpt_truncated.pth", ok[: len(ok) * 2 // 3])
w("ckpt_empty.pth", b"")

def pickle_zip(name, pkl):
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", pkl)
        z.writestr("archive/version", "3\n")
    w(name, b.getvalue())

# pickles that name a global keycut must refuse (built by hand: protocol 2, GLOBAL + REDUCE)
pickle_zip("pkl_os_system.pth", b"\x80\x02cos\nsystem\nq\x00X\x04\x00\x00\x00trueq\x01\x85q\x02Rq\x03.")
pickle_zip("pkl_builtins_eval.pth", b"\x80\x02cbuiltins\neval\nX\x06\x00\x00\x001+1+1+\x85R.")
pickle_zip("pkl_numpy_reconstruct.pth",
           b"\x80\x02}q\x00X\x01\x00\x00\x00aq\x01cnumpy.core.multiarray\n_reconstruct\nq\x02s.")
pickle_zip("pkl_stack_underflow.pth", b"\x80\x02R.")
pickle_zip("pkl_unknown_opcode.pth", b"\x80\x02\xff.")
pickle_zip("pkl_no_stop.pth", b"\x80\x02}q\x00")
b = io.BytesIO()
with zipfile.ZipFile(b, "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("archive/data.pkl", pickle.dumps({"a": 1}, protocol=2))
w("ckpt_deflated.pth", b.getvalue())
pickle_zip("pkl_deep_nesting.pth", b"\x80\x02" + b"(" * 20000 + b".")

# ---- safetensors --------------------------------------------------------------------------------
def st(tensors, hdr_extra=None, raw_header=None, length=None):
    hdr, buf = {}, b""
    for name, (dt, shape, raw) in tensors.items():
        hdr[name] = {"dtype": dt, "shape": shape, "data_offsets": [len(buf), len(buf) + len(raw)]}
        buf += raw
    if hdr_extra: hdr.update(hdr_extra)
    h = raw_header if raw_header is not None else json.dumps(hdr).encode()
    return struct.pack("<Q", len(h) if length is None else length) + h + buf

ok_st = {k: ("F32", list(v.shape), v.numpy().astype("<f4").tobytes()) for k, v in vit().items()}
w("st_ok.safetensors", st(ok_st))
w("st_header_overrun.safetensors", st(ok_st, length=1 << 40))
h = json.dumps({"norm.bias": {"dtype": "F32", "shape": [2], "data_offsets": [1000, 1008]}}).encode()
w("st_offsets_outside.safetensors", struct.pack("<Q", len(h)) + h + b"\0" * 8)
w("st_bad_json.safetensors", st({}, raw_header=b'{"norm.bias": {"dtype": "F32", "shape": [8], '))
t = dict(ok_st); t["norm.bias"] = ("I32", [8], np.zeros(8, "<i4").tobytes())
w("st_int32.safetensors", st(t))
t = dict(ok_st); t["norm.bias"] = ("F32", [9], np.zeros(8, "<f4").tobytes())
w("st_shape_bytes_mismatch.safetensors", st(t))
w("st_truncated.safetensors", st(ok_st)[:700])

# ---- caches (h5py; the layout of docs/design.md) -----------------------------------------------------
def cache(name, fmt="keycut-features", version="1", ids=("a", "b"), grid=None, keys=None, index=True):
    with h5py.File(os.path.join(OUT, name), "w", track_order=False) as f:
        s = h5py.string_dtype("utf-8")
        if fmt is not None: f.attrs.create("format", fmt, dtype=s)
        if version is not None: f.attrs.create("format_version", version, dtype=s)
        f.attrs.create("code_version", "0.1.0", dtype=s)
        n = len(ids)
        if index:
            f.create_dataset("index/ids", data=np.array(ids, dtype=object), dtype=s)
            f.create_dataset("index/grid", data=np.array(grid if grid is not None else [[2, 2]] * n, np.int32))
            f.create_dataset("index/size", data=np.array([[32, 32]] * n, np.int32))
        for i, k in enumerate(ids):
            v = keys[i] if keys is not None else rng.standard_normal((4, 8)).astype(np.float32)
            f.create_dataset(f"features/keys/{k}", data=v)

cache("cache_version2.h5", version="2")
cache("cache_no_format.h5", fmt=None)
cache("cache_other_format.h5", fmt="keycut-masks")
nan = rng.standard_normal((4, 8)).astype(np.float32); nan[2, 3] = np.nan
cache("cache_nan_keys.h5", keys=[nan, nan.copy()])
cache("cache_index_short.h5", grid=[[2, 2]])
cache("cache_grid_zero.h5", grid=[[2, 2], [0, 2]])
cache("cache_no_index.h5", index=False)
cache("cache_missing_dataset.h5", ids=("a", "b"), keys=None)
with h5py.File(os.path.join(OUT, "cache_missing_dataset.h5"), "a") as f: del f["features/keys/b"]
cache("cache_shape_vs_grid.h5", keys=[rng.standard_normal((5, 8)).astype(np.float32)] * 2)
cache("cache_version3.h5", version="3")  # a version this keycut does not read (it reads 1 and 2)
okc = open(os.path.join(OUT, "cache_version2.h5"), "rb").read()
w("cache_truncated.h5", okc[:1500])
w("cache_text.h5", b"keycut features, honest\n")
w("cache_empty.h5", b"")

# ---- configs and splits -------------------------------------------------------------------------
w("grid_tau_range.ini", b"[grid]\ntau = 0.2, 1.5\nedges = bin\nsplit = mean\nforeground = seed\nmasks = 1\n")
w("grid_unknown_rule.ini", b"[grid]\ntau = 0.2\nedges = bin\nsplit = mean\nforeground = biggest\nmasks = 1\n")
w("grid_missing_axis.ini", b"[grid]\ntau = 0.2\nedges = bin\nsplit = mean\nmasks = 1\n")
w("grid_duplicate_key.ini", b"[grid]\ntau = 0.2\ntau = 0.3\nedges = bin\nsplit = mean\nforeground = seed\nmasks = 1\n")
w("grid_not_ini.ini", b"\x00\x01\x02 binary junk \xff\xfe\n")
w("split_empty.txt", b"")
w("split_unknown_ids.txt", b"2099_999998\n2099_999999\n")
w("voc_bad.xml", b"<annotation><object><name>dog</name><bndbox><xmin>1</xmin>")
w("voc_box_nan.xml", b"<annotation><object><name>dog</name><bndbox><xmin>nan</xmin><ymin>1</ymin><xmax>5</xmax><ymax>5</ymax></bndbox></object></annotation>")

Image.new("P", (10, 10)).save(os.path.join(OUT, "gt_10x10_palette.png"))
print("wrote", len(os.listdir(OUT)), "files,", sum(os.path.getsize(os.path.join(OUT, f)) for f in os.listdir(OUT)), "bytes")
