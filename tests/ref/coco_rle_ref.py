#!/usr/bin/python3
"""tests/ref/coco_rle_ref.py — an independent check of kc-export's output (tests/test_export.sh,
tests/test_masks_make.sh), written from the formats' definitions in plain Python (no numpy, no
pycocotools): PIL reads the PNGs and photos, h5py the masks cache.

    coco_rle_ref.py EXPORT_DIR PHOTO_DIR [MASKS_CACHE SETTING]

Checks: every photo has EXPORT_DIR/png/<name without extension>.png in palette mode at the photo's
stored size (EXIF orientation is not applied, as keycut reads images); with the cache, each PNG's
indices equal the cache's grid mapped to pixels by docs/design.md's rule
cell = ((2x + 1) g) div (2 W) (square480), or the pixel mask itself (refined caches); coco.json's
image ids are 1..n in the order of the names, widths and heights are the photos'; annotation ids
are 1..m in order, each annotation's compressed RLE decodes (string -> counts -> column-major
mask) to exactly the pixels of one label k of its image's PNG, one annotation per label present, in
label order; area is the decoded pixel count and bbox the decoded mask's extent.
Prints "ok N annotations" or the first problems, exit 1.
"""
import json
import os
import sys

from PIL import Image


def rle_counts(s):
    """pycocotools' string: 5 bits a character (c - 48), 0x20 = more follows, 0x10 of the last = sign;
    from the fourth count on, the difference from the count two before."""
    counts, p = [], 0
    while p < len(s):
        x, k, more = 0, 0, True
        while more:
            c = ord(s[p]) - 48
            x |= (c & 0x1F) << (5 * k)
            more = bool(c & 0x20)
            p += 1
            k += 1
            if not more and (c & 0x10):
                x -= 1 << (5 * k)
        if len(counts) > 2:
            x += counts[-2]
        counts.append(x)
    return counts


def rle_decode(s, h, w):
    """the set of (x, y) pixels of the RLE: runs from 0s, alternating, filled column by column."""
    pixels, at, value = set(), 0, 0
    for c in rle_counts(s):
        if c < 0:
            raise ValueError("negative run")
        if value:
            for i in range(at, at + c):
                pixels.add((i // h, i % h))
        at += c
        value ^= 1
    if at != h * w:
        raise ValueError(f"runs cover {at} pixels, not {h * w}")
    return pixels


def main():
    out, photos = sys.argv[1], sys.argv[2]
    cache = sys.argv[3] if len(sys.argv) > 4 else None
    setting = sys.argv[4] if cache else None
    problems = []
    names = sorted(f for f in os.listdir(photos) if f.lower().endswith((".jpg", ".jpeg", ".png")))
    ids = [os.path.splitext(f)[0] for f in names]
    order = sorted(range(len(ids)), key=lambda i: ids[i].encode())
    coco = json.load(open(os.path.join(out, "coco.json")))
    if coco.get("categories") != [{"id": 1, "name": "object"}]:
        problems.append(f"categories {coco.get('categories')}")
    if [im["id"] for im in coco["images"]] != list(range(1, len(ids) + 1)):
        problems.append("image ids are not 1..n")
    if [a["id"] for a in coco["annotations"]] != list(range(1, len(coco["annotations"]) + 1)):
        problems.append("annotation ids are not 1..m")
    h5 = None
    if cache:
        import h5py
        h5 = h5py.File(cache, "r")
    anns = {}
    for a in coco["annotations"]:
        anns.setdefault(a["image_id"], []).append(a)
    for image_id, i in enumerate(order, 1):
        im = coco["images"][image_id - 1]
        photo = Image.open(os.path.join(photos, names[i]))
        w, h = photo.size
        if (im["file_name"], im["width"], im["height"]) != (names[i], w, h):
            problems.append(f"image {image_id}: {im} for {names[i]} of {w}x{h}")
        png = Image.open(os.path.join(out, "png", ids[i] + ".png"))
        if png.mode != "P" or png.size != (w, h):
            problems.append(f"{ids[i]}.png: mode {png.mode} size {png.size}, photo {w}x{h}")
            continue
        labels = list(png.getdata())  # row-major
        if h5 is not None:
            grid = h5[f"masks/{setting}/{ids[i]}"][()].tolist()
            gh, gw = len(grid), len(grid[0])
            if h5.attrs.get("refine") is not None:
                want = [v for row in grid for v in row]
            else:
                cx = [((2 * x + 1) * gw) // (2 * w) for x in range(w)]
                want = [grid[((2 * y + 1) * gh) // (2 * h)][cx[x]] for y in range(h) for x in range(w)]
            bad = sum(1 for a, b in zip(labels, want) if a != b)
            if bad:
                problems.append(f"{ids[i]}.png: {bad} pixels differ from the cache's grid mapped to pixels")
        present = sorted(set(labels) - {0})
        mine = anns.get(image_id, [])
        if len(mine) != len(present):
            problems.append(f"{ids[i]}: {len(mine)} annotations, labels {present}")
            continue
        for a, k in zip(mine, present):
            seg = a["segmentation"]
            if seg["size"] != [h, w]:
                problems.append(f"annotation {a['id']}: size {seg['size']}")
                continue
            got = rle_decode(seg["counts"], h, w)
            want = {(x, y) for y in range(h) for x in range(w) if labels[y * w + x] == k}
            if got != want:
                problems.append(f"annotation {a['id']} ({ids[i]} label {k}): {len(got ^ want)} pixels differ")
            if a["area"] != len(got):
                problems.append(f"annotation {a['id']}: area {a['area']}, {len(got)} pixels")
            xs, ys = [p[0] for p in got], [p[1] for p in got]
            box = [min(xs), min(ys), max(xs) - min(xs) + 1, max(ys) - min(ys) + 1] if got else [0, 0, 0, 0]
            if a["bbox"] != box:
                problems.append(f"annotation {a['id']}: bbox {a['bbox']}, extent {box}")
            if (a["image_id"], a["category_id"], a["iscrowd"]) != (image_id, 1, 0):
                problems.append(f"annotation {a['id']}: image_id/category_id/iscrowd")
    if len(coco["annotations"]) != sum(len(v) for v in anns.values()) or set(anns) - set(range(1, len(ids) + 1)):
        problems.append("annotations of unknown images")
    if problems:
        print("\n".join(problems[:10]))
        sys.exit(1)
    print(f"ok {len(coco['annotations'])} annotations")


main()
