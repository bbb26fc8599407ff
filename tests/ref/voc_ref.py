#!/usr/bin/python3
"""tests/ref/voc_ref.py - independent NumPy reference for VOC Jaccard and CorLoc (docs/design.md, Evaluation).

Writes (run from the repository root, with /usr/bin/python3):
  tests/data/voc/cases.txt     label maps on real VOC ground truth (../shared/data) and on generated
                               ground truth, with the expected Jaccard / CorLoc / area
  tests/data/voc/tiny/         a tiny VOC-layout dataset (JPEG, palette PNGs, XML, split) and masks
                               caches in docs/design.md's layout, with the expected summary, for the
                               kc-score / kc-table end-to-end test

    /usr/bin/python3 tests/ref/voc_ref.py [--shared ../shared/data]

Also importable: jaccard_corloc(obj, boxes, policy, patch, labels) computes one image's scores.
"""
import argparse
import os
import xml.etree.ElementTree as ET

import numpy as np

OUT = "tests/data/voc"


def policy_grid(policy, patch, w, h):
    """docs/design.md: every side rounded up to a multiple of the patch (nothing changes for 16 and 8)."""
    if policy == "native16":
        return -(-h // patch), -(-w // patch)
    if policy == "square480":
        return -(-480 // patch), -(-480 // patch)
    s, l = min(w, h), max(w, h)
    L = (480 * l // s) // 64 * 64
    oh, ow = (L, 480) if w < h else (480, L)
    return -(-oh // patch), -(-ow // patch)


def upsample(labels, policy, patch, w, h):
    """The label of every pixel: (h, w)."""
    gh, gw = labels.shape
    x = np.arange(w, dtype=np.int64)
    y = np.arange(h, dtype=np.int64)
    if policy == "native16":
        cx, cy = x // patch, y // patch
    else:
        cx = ((2 * x + 1) * gw) // (2 * w)
        cy = ((2 * y + 1) * gh) // (2 * h)
    return labels[cy[:, None], cx[None, :]]


def mask_box(labels, policy, patch, w, h):
    ys, xs = np.nonzero(labels == 1)
    if len(xs) == 0:
        return None
    gh, gw = labels.shape
    x0, x1, y0, y1 = xs.min(), xs.max(), ys.min(), ys.max()
    if policy == "native16":
        return [float(x0 * patch), float(y0 * patch), float(min((x1 + 1) * patch, w)), float(min((y1 + 1) * patch, h))]
    return [float(x0) * w / gw, float(y0) * h / gh, float(x1 + 1) * w / gw, float(y1 + 1) * h / gh]


def iou(a, b):
    iw = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    ih = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = iw * ih
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def jaccard_corloc(obj, boxes, policy, patch, labels):
    """obj: (h, w) SegmentationObject indices; boxes: [(xmin, ymin, xmax, ymax)] as in the XML."""
    h, w = obj.shape
    pred = upsample(labels, policy, patch, w, h) > 0
    valid = obj != 255
    gt = (obj > 0) & valid
    inter = np.count_nonzero(pred & gt)
    union = np.count_nonzero((pred | gt) & valid)
    j = inter / union if union > 0 else 1.0
    area = np.count_nonzero(pred) / float(w * h)
    box = mask_box(labels, policy, patch, w, h)
    hit = 0
    if box is not None:
        for b in boxes:
            if iou(box, [b[0] - 1, b[1] - 1, b[2], b[3]]) >= 0.5:
                hit = 1
                break
    return j, hit, area


def read_xml(path):
    root = ET.parse(path).getroot()
    out = []
    for o in root.iter("object"):
        bb = o.find("bndbox")
        out.append(tuple(float(bb.find(k).text) for k in ("xmin", "ymin", "xmax", "ymax")))
    return out


def gen_labels(rng, gh, gw, kind, boxes=None, w=None, h=None):
    lab = np.zeros((gh, gw), np.uint8)
    if kind == "empty":
        return lab
    if kind == "full":
        lab[:] = 1
        return lab
    if kind == "box" and boxes:
        b = boxes[rng.integers(len(boxes))]
        jit = rng.uniform(-0.15, 0.15, 4)
        x0 = int(np.clip((b[0] / w + jit[0]) * gw, 0, gw - 1))
        x1 = int(np.clip((b[2] / w + jit[2]) * gw, x0, gw - 1))
        y0 = int(np.clip((b[1] / h + jit[1]) * gh, 0, gh - 1))
        y1 = int(np.clip((b[3] / h + jit[3]) * gh, y0, gh - 1))
        lab[y0:y1 + 1, x0:x1 + 1] = 1
        # a second and third round elsewhere, and a few holes
        for r in (2, 3):
            if rng.random() < 0.6:
                yy, xx = rng.integers(gh), rng.integers(gw)
                sub = lab[yy:yy + 1 + rng.integers(max(1, gh // 4)), xx:xx + 1 + rng.integers(max(1, gw // 4))]
                sub[sub == 0] = r
        holes = rng.random((gh, gw)) < 0.05
        lab[holes] = 0
        return lab
    # random blobs
    p = rng.uniform(0.05, 0.6)
    lab = (rng.random((gh, gw)) < p).astype(np.uint8) * rng.integers(1, 4, (gh, gw)).astype(np.uint8)
    return lab


def synth_gt(rng, h, w):
    obj = np.zeros((h, w), np.uint8)
    boxes = []
    for k in range(1, 1 + rng.integers(0, 4)):
        x0, y0 = rng.integers(0, w - 2), rng.integers(0, h - 2)
        x1, y1 = rng.integers(x0 + 1, w), rng.integers(y0 + 1, h)
        obj[y0:y1 + 1, x0:x1 + 1] = k
        # VOC-like void border around the object
        obj[y0, x0:x1 + 1] = 255
        obj[y1, x0:x1 + 1] = 255
        boxes.append((float(x0 + 1), float(y0 + 1), float(x1 + 1), float(y1 + 1)))
    # scattered void
    obj[rng.random((h, w)) < 0.02] = 255
    if rng.random() < 0.5 and boxes:
        # a fractional box as labelme writes
        b = boxes[0]
        boxes[0] = (b[0] + 0.37, b[1] - 0.25, b[2] + 0.5, b[3])
    return obj, boxes


def cases_for(rng, name, obj, boxes, lines, policies):
    h, w = obj.shape
    for policy, patch, gh, gw in policies:
        for kind in ("box", "box", "blob", "empty", "full"):
            lab = gen_labels(rng, gh, gw, kind, boxes, w, h)
            j, hit, area = jaccard_corloc(obj, boxes, policy, patch, lab)
            lines.append("case %s %s %d %d %d %s %.17g %d %.17g" % (
                name, policy, patch, gh, gw, "".join(str(int(v)) for v in lab.ravel()), j, hit, area))


def write_cases(shared):
    rng = np.random.default_rng(20261130)
    lines = ["# tests/data/voc/cases.txt - written by tests/ref/voc_ref.py; do not edit",
             "# gt real <folder under shared data> <id> <w> <h> <n boxes> <boxes as in the XML ...>",
             "# gt synth <name> <w> <h> <n boxes> <boxes ...> <hex of the (h, w) SegmentationObject bytes>",
             "# case <gt name> <policy> <patch> <grid_h> <grid_w> <labels row-major> <jaccard> <corloc> <area>"]
    if shared:
        from PIL import Image
        for folder, ids in (("voc_official", ["2007_000063"]), ("voc_labelme", ["2011_000003", "2011_000006", "2011_000025"])):
            for i in ids:
                root = os.path.join(shared, folder)
                obj = np.array(Image.open(os.path.join(root, "SegmentationObject", i + ".png")))
                boxes = read_xml(os.path.join(root, "Annotations", i + ".xml"))
                h, w = obj.shape
                lines.append("gt real %s %s %d %d %d %s" % (folder, i, w, h, len(boxes),
                                                             " ".join("%.17g" % v for b in boxes for v in b)))
                pols = [("square480", 16, 30, 30), ("square480", 8, 60, 60),
                        ("short480", 16) + policy_grid("short480", 16, w, h),
                        ("native16", 16) + policy_grid("native16", 16, w, h),
                        ("native16", 8) + policy_grid("native16", 8, w, h), ("square480", 16, 7, 11)]
                cases_for(rng, i, obj, boxes, lines, pols)
    for k, (h, w) in enumerate([(45, 60), (37, 23), (16, 16), (50, 33), (9, 40)]):
        obj, boxes = synth_gt(rng, h, w)
        if k == 2:
            obj[:] = 0  # no object at all: J = 1 for an empty mask
            boxes = []
        name = "synth%d" % k
        lines.append("gt synth %s %d %d %d %s %s" % (name, w, h, len(boxes),
                                                     " ".join("%.17g" % v for b in boxes for v in b) or "-",
                                                     obj.tobytes().hex()))
        pols = [("square480", 16, 30, 30), ("square480", 16, 5, 9), ("short480", 16, 4, 3),
                ("native16", 8) + policy_grid("native16", 8, w, h), ("native16", 16) + policy_grid("native16", 16, w, h)]
        cases_for(rng, name, obj, boxes, lines, pols)
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "cases.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


# ---- the tiny dataset and masks caches for the end-to-end test ------------------------------------

TINY_IDS = ["t_000001", "t_000002", "t_000003", "t_000004"]
TINY_SIZES = [(64, 48), (48, 64), (80, 40), (50, 50)]  # (w, h)
SETTINGS = ["t0.15-bin-mean-corners-n3", "t0.20-bin-mean-seed-n1", "t0.25-wtd-zero-minority-n2"]


def palette():
    pal = []
    for i in range(256):
        c, r, g, b = i, 0, 0, 0
        for j in range(8):
            r |= ((c >> 0) & 1) << (7 - j)
            g |= ((c >> 1) & 1) << (7 - j)
            b |= ((c >> 2) & 1) << (7 - j)
            c >>= 3
        pal += [r, g, b]
    return pal


def write_tiny():
    import h5py
    from PIL import Image
    rng = np.random.default_rng(7)
    root = os.path.join(OUT, "tiny")
    for d in ("JPEGImages", "SegmentationObject", "SegmentationClass", "Annotations", "ImageSets/Segmentation"):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    gts = {}
    for i, (w, h) in zip(TINY_IDS, TINY_SIZES):
        obj, boxes = synth_gt(rng, h, w)
        gts[i] = (obj, boxes)
        Image.fromarray(rng.integers(0, 255, (h, w, 3), dtype=np.uint8)).save(
            os.path.join(root, "JPEGImages", i + ".jpg"), quality=50)
        for sub, arr in (("SegmentationObject", obj), ("SegmentationClass", np.where(obj == 255, 255, (obj > 0) * 12).astype(np.uint8))):
            im = Image.fromarray(arr, mode="P")
            im.putpalette(palette())
            im.save(os.path.join(root, sub, i + ".png"))
        objs = "".join(
            "\t<object>\n\t\t<name>dog</name>\n\t\t<bndbox>\n\t\t\t<xmin>%s</xmin>\n\t\t\t<ymin>%s</ymin>\n"
            "\t\t\t<xmax>%s</xmax>\n\t\t\t<ymax>%s</ymax>\n\t\t</bndbox>\n\t</object>\n" % tuple("%.17g" % v for v in b)
            for b in boxes)
        with open(os.path.join(root, "Annotations", i + ".xml"), "w") as f:
            f.write("<annotation>\n\t<filename>%s.jpg</filename>\n\t<size>\n\t\t<width>%d</width>\n\t\t<height>%d</height>\n"
                    "\t\t<depth>3</depth>\n\t</size>\n%s</annotation>\n" % (i, w, h, objs))
    with open(os.path.join(root, "ImageSets/Segmentation/val.txt"), "w") as f:
        f.write("\n".join(TINY_IDS) + "\n")

    def write_cache(path, ids, policy, patch, sizes, network=None):
        grids = [policy_grid(policy, patch, w, h) for (w, h) in sizes]
        summary = []
        with h5py.File(path, "w", track_order=False) as f:
            for k, v in (("format", "keycut-masks"), ("format_version", "1"), ("policy", policy),
                         ("patch", str(patch))):
                f.attrs[k] = v
            if network:
                f.attrs["network"] = network
            f.create_dataset("index/ids", data=np.array(ids, dtype=h5py.string_dtype("utf-8")))
            f.create_dataset("index/grid", data=np.array(grids, np.int32))
            f.create_dataset("index/size", data=np.array([(h, w) for (w, h) in sizes], np.int32))
            for s in SETTINGS:
                js, cs = [], []
                for i, (w, h), (gh, gw) in zip(ids, sizes, grids):
                    obj, boxes = gts.get(i, (None, None))
                    lab = gen_labels(rng, gh, gw, "box" if rng.random() < 0.7 else "blob", boxes, w, h)
                    d = f.create_dataset("masks/%s/%s" % (s, i), data=lab)
                    d.attrs["lambda2"] = np.array([0.125, np.nan, np.nan], np.float32)
                    d.attrs["eigengap"] = np.array([0.0625, np.nan, np.nan], np.float32)
                    d.attrs["degenerate"] = np.int32(0)
                    if obj is not None:
                        j, c, _ = jaccard_corloc(obj, boxes, policy, patch, lab)
                        js.append(j)
                        cs.append(c)
                summary.append((s, len(ids), float(np.mean(js)) if js else 0.0, float(np.mean(cs)) if cs else 0.0))
        return summary

    sizes = TINY_SIZES
    summ = write_cache(os.path.join(root, "masks.h5"), TINY_IDS, "square480", 16, sizes, "tinynet")
    with open(os.path.join(root, "expected_summary.csv"), "w") as f:
        f.write("setting,images,jaccard,corloc\n")
        for s, n, j, c in sorted(summ):
            f.write("%s,%d,%.17g,%.17g\n" % (s, n, j, c))
    summ = write_cache(os.path.join(root, "masks_native.h5"), TINY_IDS, "native16", 16, sizes)
    with open(os.path.join(root, "expected_summary_native.csv"), "w") as f:
        f.write("setting,images,jaccard,corloc\n")
        for s, n, j, c in sorted(summ):
            f.write("%s,%d,%.17g,%.17g\n" % (s, n, j, c))
    # a cache of other images (one id differs) and one with other sizes
    other = TINY_IDS[:3] + ["t_000009"]
    write_cache(os.path.join(root, "masks_other.h5"), other, "square480", 16, sizes)
    write_cache(os.path.join(root, "masks_size.h5"), TINY_IDS, "native16", 16,
                [(w + 16, h) for (w, h) in sizes])


def write_selection():
    """The selection rule on a generated train list of 1,500 ids: first 1,000 in sha256 order."""
    import hashlib
    ids = ["2008_%06d" % (7 * k + 3) for k in range(1500)]
    with open(os.path.join(OUT, "train1500.txt"), "w") as f:
        f.write("\n".join(ids) + "\n")
    sel = sorted(ids, key=lambda i: (hashlib.sha256(i.encode()).hexdigest(), i))[:1000]
    text = "".join(i + "\n" for i in sel)
    with open(os.path.join(OUT, "select1000.expected.sha256"), "w") as f:
        f.write("%s %s %s\n" % (hashlib.sha256(text.encode()).hexdigest(), sel[0], sel[-1]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=os.environ.get("KC_SHARED_DATA", "../shared/data"))
    a = ap.parse_args()
    shared = a.shared if os.path.isdir(os.path.join(a.shared, "voc_official")) else None
    if not shared:
        print("voc_ref.py: no shared data at %s; real-image cases left out" % a.shared)
    write_cases(shared)
    write_tiny()
    write_selection()


if __name__ == "__main__":
    main()
