#!/usr/bin/python3
"""tests/ref/corloc_ref.py — independent NumPy reference for box-only CorLoc (docs/corloc.md).

Written from the LOST / TokenCut protocol, not from keycut's C:
  * predicted box: bounding box of the cells labelled 1, times the patch (16), the max corner
    clipped to the image: [x0*16, y0*16, min((x1+1)*16, W), min((y1+1)*16, H)]; no cell = miss;
  * VOC ground truth: every <object>'s bndbox, xmin-1 and ymin-1 (with --no-hard: objects with
    difficult or truncated == "1" dropped; images left without boxes leave the denominator);
  * COCO ground truth: annotations of the image with iscrowd != 1, [x, y, x+w, y+h] each rounded
    with Python's round() (half to even);
  * IoU as their bbox_iou with eps = 1e-7, emulating torch's promotion with NumPy scalars: the
    prediction is int64, so h1 + eps and w1*h1 are float32; the rest is float32 when every GT
    corner of the image is integral (an int64 array), float64 otherwise;
  * hit when IoU >= 0.5 with any GT box.

Writes (into tests/data/corloc/):
  coco/                      a generated COCO-layout set: train2014/*.jpg, annotations/
                             instances_train2014.json (crowd boxes, odd xywh, polygons and RLE,
                             an unlisted image, annotations before... after images), list.txt
  masks_<set>.h5             random masks caches (native16, patch 16) for coco, voc_official,
                             voc_labelme (the last two sized from ../shared/data, read in place)
  expected_<set>.csv         setting,id,corloc per image (and expected_voc_official_nohard.csv)
Run:  /usr/bin/python3 tests/ref/corloc_ref.py [--shared ../shared/data] [--out DIR]
"""
import argparse, json, os, xml.etree.ElementTree as ET

import h5py
import numpy as np
from PIL import Image

OUT = "tests/data/corloc"  # --out changes it
P = 16
SETTINGS = ["t%.2f-%s-%s-seed-n1" % (t, e, s) for t in (0.10, 0.15, 0.20, 0.25) for e in ("bin", "wtd")
            for s in ("mean", "zero")]


def pred_box(lab, w, h):
    ys, xs = np.nonzero(lab == 1)
    if len(xs) == 0:
        return None
    return [int(xs.min()) * P, int(ys.min()) * P, min((int(xs.max()) + 1) * P, w), min((int(ys.max()) + 1) * P, h)]


def iou_any(pred, gts):
    if pred is None or len(gts) == 0:
        return 0
    f32 = np.float32
    eps32 = f32(1e-7)
    gint = all(float(v).is_integer() for g in gts for v in g)
    p = [int(v) for v in pred]
    h1 = f32(p[3] - p[1]) + eps32
    a1 = f32(p[2] - p[0]) * h1
    for g in gts:
        iw = max(0.0, min(p[2], g[2]) - max(p[0], g[0]))
        ih = max(0.0, min(p[3], g[3]) - max(p[1], g[1]))
        inter = iw * ih
        if gint:
            h2 = f32(g[3] - g[1]) + eps32
            a2 = f32(g[2] - g[0]) * h2
            u = f32(f32(f32(a1 + a2) - f32(inter)) + eps32)
            iou = f32(f32(inter) / u)
        else:
            u = float(a1) + (g[2] - g[0]) * ((g[3] - g[1]) + 1e-7) - inter + 1e-7
            iou = inter / u
        if iou >= 0.5:
            return 1
    return 0


def voc_boxes(xml, no_hard=False):
    out = []
    for o in ET.parse(xml).getroot().findall("object"):
        hard = (o.findtext("difficult") or "").strip() == "1" or (o.findtext("truncated") or "").strip() == "1"
        if no_hard and hard:
            continue
        b = o.find("bndbox")
        c = [float(b.findtext(k)) for k in ("xmin", "ymin", "xmax", "ymax")]
        out.append([c[0] - 1, c[1] - 1, c[2], c[3]])
    return out


def gen_labels(rng, gh, gw, w, h, gts):
    """Round-1 masks near a GT box (IoU around 0.5), blobs, empty maps and round-2 labels."""
    lab = np.zeros((gh, gw), np.uint8)
    r = rng.random()
    if r < 0.08:
        return lab
    if gts and r < 0.85:
        g = gts[rng.integers(len(gts))]
        c = [g[0] / P, g[1] / P, g[2] / P, g[3] / P]
        j = rng.normal(0, 1.2, 4)
        x0 = int(np.clip(np.floor(c[0] + j[0]), 0, gw - 1))
        y0 = int(np.clip(np.floor(c[1] + j[1]), 0, gh - 1))
        x1 = int(np.clip(np.ceil(c[2] + j[2]) - 1, x0, gw - 1))
        y1 = int(np.clip(np.ceil(c[3] + j[3]) - 1, y0, gh - 1))
        lab[y0:y1 + 1, x0:x1 + 1] = 1
        if rng.random() < 0.3:  # holes do not change the box unless they cut its rows/columns
            lab[y0 + (y1 - y0) // 2, x0 + (x1 - x0) // 2] = 0
    else:
        m = rng.random((gh, gw)) < 0.3
        lab[m] = 1
    if rng.random() < 0.4:
        lab[(lab == 0) & (rng.random((gh, gw)) < 0.2)] = 2
    return lab


def write_masks(path, ids, sizes, labels_of):
    with h5py.File(path, "w", track_order=False) as f:
        for k, v in (("format", "keycut-masks"), ("format_version", "1"), ("policy", "native16"), ("patch", str(P))):
            f.attrs[k] = v
        grids = [((h + P - 1) // P, (w + P - 1) // P) for (w, h) in sizes]
        f.create_dataset("index/ids", data=np.array(ids, dtype=h5py.string_dtype("utf-8")))
        f.create_dataset("index/grid", data=np.array(grids, np.int32))
        f.create_dataset("index/size", data=np.array([(h, w) for (w, h) in sizes], np.int32))
        for s in SETTINGS:
            for i, (gh, gw), (w, h) in zip(ids, grids, sizes):
                d = f.create_dataset("masks/%s/%s" % (s, i), data=labels_of(s, i, gh, gw, w, h))
                d.attrs["lambda2"] = np.array([0.125], np.float32)
                d.attrs["eigengap"] = np.array([0.0625], np.float32)
                d.attrs["degenerate"] = np.int32(0)


def score_set(name, ids, sizes, gts_of, rng, extra=()):
    labs = {}

    def labels_of(s, i, gh, gw, w, h):
        labs[s, i] = gen_labels(rng, gh, gw, w, h, gts_of(i))
        return labs[s, i]

    write_masks(os.path.join(OUT, "masks_%s.h5" % name), ids, sizes, labels_of)
    for suffix, gfun in (("", gts_of),) + tuple(extra):
        with open(os.path.join(OUT, "expected_%s%s.csv" % (name, suffix)), "w") as f:
            f.write("setting,id,corloc\n")
            for s in SETTINGS:
                for i, (w, h) in zip(ids, sizes):
                    g = gfun(i)
                    if g is None:
                        continue  # left out of the denominator (--no-hard)
                    f.write("%s,%s,%d\n" % (s, i, iou_any(pred_box(labs[s, i], w, h), g)))


def make_coco(rng):
    root = os.path.join(OUT, "coco")
    os.makedirs(os.path.join(root, "train2014"), exist_ok=True)
    os.makedirs(os.path.join(root, "annotations"), exist_ok=True)
    sizes = [(270, 150), (164, 148), (133, 247), (300, 137), (148, 164), (181, 181), (40, 40)]
    images, anns, listed = [], [], []
    aid = 1
    odd = [(2.5, 3.5, 100.5, 60.5), (0.4999, 1.5, 75.25, 99.75), (5.5, 6.5, 111.0, 112.0), (10.0, 4.0, 130.5, 80.5)]
    for k, (w, h) in enumerate(sizes):
        iid = 100000 + 17 * k
        fn = "COCO_train2014_%012d.jpg" % iid
        Image.fromarray(rng.integers(0, 255, (h, w, 3), dtype=np.uint8)).save(os.path.join(root, "train2014", fn), quality=60)
        images.append({"license": 1, "file_name": fn, "coco_url": "http://x/" + fn, "height": h, "width": w,
                       "date_captured": "2013-11-14 16:28:13", "flickr_url": "http://y", "id": iid})
        if k == 6:
            continue  # an unlisted image
        listed.append("train2014/" + fn)
        n = 1 + k % 3
        for j in range(n):
            if j == 0 and k < len(odd):
                x, y, bw, bh = odd[k]
            else:
                x, y = float(rng.integers(0, w // 2)), float(rng.integers(0, h // 2))
                bw, bh = float(rng.integers(24, w - x)), float(rng.integers(24, h - y))
                if rng.random() < 0.5:
                    x += 0.5
                    bw += 0.25
            crowd = 1 if (j == 1 and k % 2 == 0) or k == 5 else 0  # image 5: crowd boxes only
            seg = ({"counts": [int(v) for v in rng.integers(0, 50, 9)], "size": [h, w]} if crowd else
                   [[x, y, x + bw, y, x + bw, y + bh, x, y + bh]])
            anns.append({"segmentation": seg, "area": bw * bh, "iscrowd": crowd, "image_id": iid,
                         "bbox": [x, y, bw, bh], "category_id": 1 + j, "id": aid})
            aid += 1
    # one image whose only annotation is a crowd box: kept, a miss
    anns.append({"segmentation": {"counts": "abc", "size": [40, 40]}, "area": 9.0, "iscrowd": 1,
                 "image_id": 100000 + 17 * 3, "bbox": [1, 1, 3, 3], "category_id": 3, "id": aid})
    doc = {"info": {"description": "keycut test", "version": "1.0", "year": 2014},
           "images": images, "licenses": [{"url": "u", "id": 1, "name": "n"}], "annotations": anns,
           "categories": [{"supercategory": "s", "id": c, "name": "c%d" % c} for c in (1, 2, 3)]}
    with open(os.path.join(root, "annotations", "instances_train2014.json"), "w") as f:
        json.dump(doc, f)
    with open(os.path.join(root, "list.txt"), "w") as f:
        f.write("\n".join(listed) + "\n")
    ids = [os.path.splitext(os.path.basename(l))[0] for l in listed]
    by_id = {im["id"]: im for im in images}
    gts = {}
    for i, l in zip(ids, listed):
        iid = int(i.split("_")[-1])
        g = []
        for a in anns:
            if a["image_id"] != iid or a["iscrowd"] == 1:
                continue
            b = a["bbox"]
            g.append([int(round(v)) for v in (b[0], b[1], b[0] + b[2], b[1] + b[3])])
        gts[i] = g
    return ids, [(by_id[int(i.split("_")[-1])]["width"], by_id[int(i.split("_")[-1])]["height"]) for i in ids], gts


def main():
    global OUT
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default="../shared/data")
    ap.add_argument("--out", default=OUT)
    a = ap.parse_args()
    OUT = a.out
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(14)
    ids, sizes, gts = make_coco(rng)
    score_set("coco", ids, sizes, lambda i: gts[i], rng)
    for name in ("voc_official", "voc_labelme"):
        root = os.path.join(a.shared, name)
        split = [l.strip() for l in open(os.path.join(root, "ImageSets/Segmentation",
                 "train.txt" if name == "voc_official" else "val.txt")) if l.strip()]
        sz = [Image.open(os.path.join(root, "JPEGImages", i + ".jpg")).size for i in split]
        xml = lambda i: os.path.join(root, "Annotations", i + ".xml")
        nohard = lambda i: voc_boxes(xml(i), True) or None
        score_set(name, split, sz, lambda i: voc_boxes(xml(i)), rng, (("_nohard", nohard),))


if __name__ == "__main__":
    main()
