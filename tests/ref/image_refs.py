#!/usr/bin/python3
"""Reference outputs for tests/test_image.c and tests/test_resize.c, from Debian's Pillow 9.4 and
OpenCV 4.6.  Writes tests/data/image/ (run from the project root):

    /usr/bin/python3 tests/ref/image_refs.py [SHARED_DATA]

  synth/<name>.{jpg,png}  small synthetic inputs of every kind, <name>.rgb = Pillow's
                          Image.open(p).convert("RGB") bytes (h, w, 3); synth.tsv lists name w h
  bad/                    broken files (truncated, bad CRC, zero bytes, not an image, absurd size)
  real.tsv                relpath w h sha256(Pillow RGB bytes) for every JPEG/PNG of the shared data
  resize_crop.rgb         a 97x61 crop of a real frame; resize_small.tsv + resize_small.bin: Pillow
                          LANCZOS and OpenCV INTER_LINEAR outputs of it at many sizes (exact bytes)
  resize_real.tsv         method relpath dw dh sha256 of the full-size outputs on real images
  resize_strips_*.png     the first and last 32 rows of the full-size outputs on the first real image
                          (lossless), for max-diff reports
  policy.tsv + policy.f32 the three policies on a small image: sha256 of every float32 output,
                          the native16 outputs themselves
"""
import hashlib
import io
import os
import struct
import sys
import zlib

import warnings

import cv2
import numpy as np
from PIL import Image

warnings.filterwarnings("ignore", "Palette images with Transparency")
OUT = "tests/data/image"
SHARED = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("KC_SHARED_DATA", "../shared/data")
rng = np.random.default_rng(20240611)


def rgb_of(path):
    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"), dtype=np.uint8)


def smooth_image(w, h, c):
    """A smooth colourful picture with some noise (JPEG-friendly, not constant)."""
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    chans = []
    for k in range(c):
        v = 127 + 100 * np.sin(x / (3.0 + k) + k) * np.cos(y / (4.0 + 2 * k)) + rng.normal(0, 12, (h, w))
        chans.append(np.clip(v, 0, 255))
    return np.stack(chans, -1).astype(np.uint8)


def png_chunk(tag, data):
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)


def pack_row(vals, bit_depth):
    """vals: 1-D int samples -> bytes at bit_depth (big-endian for 16)."""
    if bit_depth == 8:
        return bytes(np.asarray(vals, np.uint8))
    if bit_depth == 16:
        return np.asarray(vals, ">u2").tobytes()
    per = 8 // bit_depth
    out = bytearray((len(vals) + per - 1) // per)
    for i, v in enumerate(vals):
        out[i // per] |= int(v) << (8 - bit_depth * (i % per + 1))
    return bytes(out)


def write_png(path, samples, bit_depth, color_type, plte=None, trns=None, interlace=False):
    """samples: (h, w, channels) ints.  A plain PNG writer so every kind can be made."""
    h, w, ch = samples.shape
    adam7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
    passes = adam7 if interlace else [(0, 0, 1, 1)]
    raw = bytearray()
    for x0, y0, dx, dy in passes:
        sub = samples[y0::dy, x0::dx]
        if sub.size == 0:
            continue
        for row in sub:
            raw += b"\x00" + pack_row(row.reshape(-1), bit_depth)
    data = b"\x89PNG\r\n\x1a\n"
    data += png_chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, bit_depth, color_type, 0, 0, 1 if interlace else 0))
    if plte is not None:
        data += png_chunk(b"PLTE", bytes(np.asarray(plte, np.uint8).reshape(-1)))
    if trns is not None:
        data += png_chunk(b"tRNS", trns)
    data += png_chunk(b"IDAT", zlib.compress(bytes(raw), 9))
    data += png_chunk(b"IEND", b"")
    with open(path, "wb") as f:
        f.write(data)


def strip_app14(data):
    """Removes the Adobe APP14 segment of a JPEG."""
    i = 2
    out = bytearray(data[:2])
    while i < len(data):
        assert data[i] == 0xFF
        marker = data[i + 1]
        if marker == 0xDA:
            out += data[i:]
            break
        ln = struct.unpack(">H", data[i + 2:i + 4])[0]
        seg = data[i:i + 2 + ln]
        if not (marker == 0xEE and seg[4:9] == b"Adobe"):
            out += seg
        i += 2 + ln
    return bytes(out)


def set_adobe_transform(data, transform):
    i = data.find(b"\xff\xee\x00\x0eAdobe")
    assert i >= 0, "no Adobe marker"
    j = i + 4 + 11  # "Adobe", version(2), flags0(2), flags1(2), transform(1)
    return data[:j] + bytes([transform]) + data[j + 1:]


def synth():
    d = os.path.join(OUT, "synth")
    os.makedirs(d, exist_ok=True)
    rows = []

    def done(name):
        p = os.path.join(d, name)
        a = rgb_of(p)
        a.tofile(os.path.join(d, os.path.splitext(name)[0] + ".rgb"))
        rows.append((name, a.shape[1], a.shape[0]))

    w, h = 37, 29
    rgb = smooth_image(w, h, 3)
    for name, kw in [("rgb420.jpg", dict(quality=90)), ("rgb444.jpg", dict(quality=95, subsampling=0)),
                     ("rgb422.jpg", dict(quality=80, subsampling=1)),
                     ("progressive.jpg", dict(quality=85, progressive=True)),
                     ("optimized.jpg", dict(quality=70, optimize=True))]:
        Image.fromarray(rgb).save(os.path.join(d, name), **kw)
        done(name)
    Image.fromarray(rgb[:, :, 1]).save(os.path.join(d, "gray.jpg"), quality=90)
    done("gray.jpg")
    cmyk = Image.fromarray(smooth_image(w, h, 4), "CMYK")
    buf = io.BytesIO()
    cmyk.save(buf, "JPEG", quality=92)  # Pillow writes an Adobe marker (transform 0), inverted
    open(os.path.join(d, "cmyk_adobe.jpg"), "wb").write(buf.getvalue())
    done("cmyk_adobe.jpg")
    open(os.path.join(d, "cmyk_plain.jpg"), "wb").write(strip_app14(buf.getvalue()))
    done("cmyk_plain.jpg")
    open(os.path.join(d, "ycck_adobe.jpg"), "wb").write(set_adobe_transform(buf.getvalue(), 2))
    done("ycck_adobe.jpg")
    # PNG kinds
    g = smooth_image(w, h, 1)
    for bd in (1, 2, 4):
        write_png(os.path.join(d, f"gray{bd}.png"), rng.integers(0, 1 << bd, (h, w, 1)), bd, 0)
        done(f"gray{bd}.png")
    write_png(os.path.join(d, "gray8.png"), g, 8, 0)
    done("gray8.png")
    g16 = rng.integers(0, 65536, (h, w, 1))
    g16[0, :5, 0] = [0, 1, 254, 255, 256]
    write_png(os.path.join(d, "gray16.png"), g16, 16, 0)
    done("gray16.png")
    write_png(os.path.join(d, "gray8_trns.png"), g, 8, 0, trns=struct.pack(">H", int(g[0, 0, 0])))
    done("gray8_trns.png")
    write_png(os.path.join(d, "graya8.png"), smooth_image(w, h, 2), 8, 4)
    done("graya8.png")
    write_png(os.path.join(d, "graya16.png"), rng.integers(0, 65536, (h, w, 2)), 16, 4)
    done("graya16.png")
    write_png(os.path.join(d, "rgb8.png"), rgb, 8, 2)
    done("rgb8.png")
    write_png(os.path.join(d, "rgb16.png"), rng.integers(0, 65536, (h, w, 3)), 16, 2)
    done("rgb16.png")
    write_png(os.path.join(d, "rgba8.png"), smooth_image(w, h, 4), 8, 6)
    done("rgba8.png")
    write_png(os.path.join(d, "rgba16.png"), rng.integers(0, 65536, (h, w, 4)), 16, 6)
    done("rgba16.png")
    write_png(os.path.join(d, "rgb8_interlaced.png"), rgb, 8, 2, interlace=True)
    done("rgb8_interlaced.png")
    for bd in (1, 2, 4, 8):
        n = 1 << bd
        pal = rng.integers(0, 256, (n, 3))
        write_png(os.path.join(d, f"pal{bd}.png"), rng.integers(0, n, (h, w, 1)), bd, 3, plte=pal)
        done(f"pal{bd}.png")
    pal = rng.integers(0, 256, (16, 3))
    write_png(os.path.join(d, "pal8_trns.png"), rng.integers(0, 16, (h, w, 1)), 8, 3, plte=pal,
              trns=bytes(rng.integers(0, 256, 16).astype(np.uint8)))
    done("pal8_trns.png")
    write_png(os.path.join(d, "pal8_trns1.png"), rng.integers(0, 16, (h, w, 1)), 8, 3, plte=pal,
              trns=b"\xff\xff\x00")
    done("pal8_trns1.png")
    # indices beyond a short palette
    write_png(os.path.join(d, "pal8_short.png"), rng.integers(0, 40, (h, w, 1)), 8, 3, plte=pal[:5])
    done("pal8_short.png")
    write_png(os.path.join(d, "pal4_interlaced.png"), rng.integers(0, 16, (h, w, 1)), 4, 3, plte=pal,
              interlace=True)
    done("pal4_interlaced.png")
    # Pillow's own writer: a palette (P) image as the DAVIS/VOC annotations are stored
    p = Image.fromarray(rng.integers(0, 3, (h, w)).astype(np.uint8), "P")
    p.putpalette([0, 0, 0, 128, 0, 0, 0, 128, 0] + [0] * (253 * 3))
    p.save(os.path.join(d, "pil_p.png"))
    done("pil_p.png")
    # index map of pil_p.png / pal8_short.png as stored (for image_read_png_index)
    np.asarray(Image.open(os.path.join(d, "pil_p.png"))).astype(np.uint8).tofile(os.path.join(d, "pil_p.idx"))
    np.asarray(Image.open(os.path.join(d, "gray8.png"))).astype(np.uint8).tofile(os.path.join(d, "gray8.idx"))
    with open(os.path.join(OUT, "synth.tsv"), "w") as f:
        for r in rows:
            f.write("%s\t%d\t%d\n" % r)


def bad():
    d = os.path.join(OUT, "bad")
    os.makedirs(d, exist_ok=True)
    sd = os.path.join(OUT, "synth")
    jpg = open(os.path.join(sd, "rgb420.jpg"), "rb").read()
    png = open(os.path.join(sd, "rgb8.png"), "rb").read()
    open(os.path.join(d, "empty.jpg"), "wb").close()
    open(os.path.join(d, "text.png"), "wb").write(b"this is not an image\n")
    open(os.path.join(d, "truncated.jpg"), "wb").write(jpg[:len(jpg) * 2 // 3])
    prog = open(os.path.join(sd, "progressive.jpg"), "rb").read()
    open(os.path.join(d, "truncated_progressive.jpg"), "wb").write(prog[:len(prog) // 2])
    open(os.path.join(d, "truncated.png"), "wb").write(png[:len(png) * 2 // 3])
    # a wrong CRC on the IDAT chunk (data intact)
    i = png.find(b"IDAT")
    ln = struct.unpack(">I", png[i - 4:i])[0]
    crc_at = i + 4 + ln
    # (Pillow 9.4 does not check IDAT CRCs and decodes this one; keycut refuses it)
    open(os.path.join(d, "badcrc_idat.png"), "wb").write(png[:crc_at] + bytes([png[crc_at] ^ 0xFF]) + png[crc_at + 1:])
    # a wrong CRC on IHDR (Pillow refuses it too)
    open(os.path.join(d, "badcrc_ihdr.png"), "wb").write(png[:29] + bytes([png[29] ^ 0xFF]) + png[30:])
    # absurd header dimensions, valid CRC, no data behind
    hdr = b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", struct.pack(">IIBBBBB", 100000, 100000, 8, 2, 0, 0, 0))
    open(os.path.join(d, "huge.png"), "wb").write(hdr + png_chunk(b"IDAT", zlib.compress(b"\0" * 64)))
    k = jpg.find(b"\xff\xc0")
    huge = bytearray(jpg)
    huge[k + 5:k + 9] = struct.pack(">HH", 65000, 65000)
    open(os.path.join(d, "huge.jpg"), "wb").write(bytes(huge[:len(huge) // 2]))
    for name in sorted(os.listdir(d)):  # Pillow must refuse them all too (but badcrc_idat)
        if name == "badcrc_idat.png":
            continue
        try:
            rgb_of(os.path.join(d, name))
            raise SystemExit("Pillow decoded bad/%s" % name)
        except SystemExit:
            raise
        except Exception:
            pass


def real():
    if not os.path.isdir(SHARED):
        print("no shared data at %s: real.tsv and resize refs not written" % SHARED)
        return False
    rows = []
    for root, _, files in os.walk(SHARED):
        for f in sorted(files):
            if f.lower().endswith((".jpg", ".jpeg", ".png")):
                p = os.path.join(root, f)
                a = rgb_of(p)
                rows.append((os.path.relpath(p, SHARED), a.shape[1], a.shape[0], hashlib.sha256(a.tobytes()).hexdigest()))
    rows.sort()
    with open(os.path.join(OUT, "real.tsv"), "w") as f:
        for r in rows:
            f.write("%s\t%d\t%d\t%s\n" % r)
    return True


def short480(w, h):
    s, l = min(w, h), max(w, h)
    lo = int(480 * l / s / 64) * 64
    if w < h:
        return 480, lo
    if h < w:
        return lo, 480
    return 448, 480


def resize_refs(have_real):
    lanczos = lambda a, w, h: np.asarray(Image.fromarray(a).resize((w, h), Image.LANCZOS))
    linear = lambda a, w, h: cv2.resize(a, (w, h), interpolation=cv2.INTER_LINEAR)
    src_path = os.path.join(SHARED, "davis/JPEGImages/480p/blackswan/00000.jpg")
    if have_real:
        crop = np.ascontiguousarray(rgb_of(src_path)[200:261, 380:477])
    else:
        crop = smooth_image(97, 61, 3)
    crop.tofile(os.path.join(OUT, "resize_crop.rgb"))
    sizes = [(97, 61), (48, 30), (49, 31), (32, 32), (96, 60), (98, 62), (120, 80), (13, 7),
             (1, 1), (3, 61), (97, 5), (160, 9), (11, 150), (64, 64), (30, 30), (33, 19)]
    with open(os.path.join(OUT, "resize_small.tsv"), "w") as tsv, open(os.path.join(OUT, "resize_small.bin"), "wb") as b:
        for method, fn in (("lanczos", lanczos), ("linear", linear)):
            for w, h in sizes:
                o = np.ascontiguousarray(fn(crop, w, h))
                tsv.write("%s\t%d\t%d\n" % (method, w, h))
                b.write(o.tobytes())
    if not have_real:
        return
    imgs = ["davis/JPEGImages/480p/blackswan/00000.jpg", "davis/JPEGImages/480p/libby/00031.jpg",
            "davis_testdev_firstframe/JPEGImages/480p/tackle/00000.jpg",
            "davis_testdev_firstframe/JPEGImages/480p/inflatable/00000.jpg",
            "voc_official/JPEGImages/2007_000063.jpg", "voc_labelme/JPEGImages/2011_000003.jpg"]
    with open(os.path.join(OUT, "resize_real.tsv"), "w") as tsv:
        for rel in imgs:
            a = rgb_of(os.path.join(SHARED, rel))
            h, w = a.shape[:2]
            for method, fn, (dw, dh) in (("lanczos", lanczos, (480, 480)), ("linear", linear, short480(w, h))):
                o = np.ascontiguousarray(fn(a, dw, dh))
                tsv.write("%s\t%s\t%d\t%d\t%s\n" % (method, rel, dw, dh, hashlib.sha256(o.tobytes()).hexdigest()))
                if rel == imgs[0]:  # its first and last 32 rows, losslessly
                    strips = np.concatenate([o[:32], o[-32:]], 0)
                    Image.fromarray(strips).save(os.path.join(OUT, "resize_strips_%s.png" % method), optimize=True)


def policies():
    a = smooth_image(37, 29, 3)
    a.tofile(os.path.join(OUT, "policy_in.rgb"))
    mean = np.array([0.485, 0.456, 0.406], np.float32)
    std_in = np.array([0.229, 0.224, 0.225], np.float32)
    std_davis = np.array([0.228, 0.224, 0.225], np.float32)
    with open(os.path.join(OUT, "policy.tsv"), "w") as tsv, open(os.path.join(OUT, "policy.f32"), "wb") as b:
        for name, patch in (("native16", 16), ("native16", 8), ("square480", 16), ("short480", 16)):
            if name == "native16":
                r, std = a, std_in
            elif name == "square480":
                r, std = np.asarray(Image.fromarray(a).resize((480, 480), Image.LANCZOS)), std_in
            else:
                w, h = short480(37, 29)
                r, std = cv2.resize(a, (w, h), interpolation=cv2.INTER_LINEAR), std_davis
            x = (r.astype(np.float32) / np.float32(255) - mean) / std  # (h, w, 3) float32
            h, w = x.shape[:2]
            if name == "native16":
                H, W = -(-h // patch) * patch, -(-w // patch) * patch
            else:
                H, W = h // patch * patch, w // patch * patch
            out = np.zeros((3, H, W), np.float32)
            hh, ww = min(h, H), min(w, W)
            out[:, :hh, :ww] = x[:hh, :ww].transpose(2, 0, 1)
            blob = out.astype("<f4").tobytes()
            tsv.write("%s\t%d\t%d\t%d\t%s\n" % (name, patch, H, W, hashlib.sha256(blob).hexdigest()))
            if name == "native16":
                b.write(blob)


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    synth()
    bad()
    have = real()
    resize_refs(have)
    policies()
    print("wrote", OUT)
