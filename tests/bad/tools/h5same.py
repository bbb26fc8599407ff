#!/usr/bin/python3
"""tests/bad/tools/h5same.py A.h5 B.h5 — exit 0 when two HDF5 files hold the same groups,
datasets (dtype, shape, bit-identical values) and attributes, the root attribute `created` aside;
otherwise prints the first difference and exits 1 (2 when a file cannot be read completely).
h5same.py --max-abs A.h5 B.h5: the same walk, but float datasets may differ; prints the largest
absolute and relative difference of float data (used for keys under different thread counts).
--ignore-hashes: root attributes *content_hash are not compared (implied by --max-abs).
--ignore-command: the root attribute `command` is not compared (the same stage from another build)."""
import sys
import h5py
import numpy as np

IGNORE = {"created"}

def walk(f):
    out = {}
    def visit(name, obj):
        out[name] = obj
    f.visititems(visit)
    return out

def attrs(obj, root):
    a = {}
    for k in obj.attrs:
        if root and k in IGNORE:
            continue
        v = obj.attrs[k]
        a[k] = v.tobytes() if isinstance(v, np.ndarray) else v
    return a

def main():
    args = sys.argv[1:]
    tolerant = "--max-abs" in args
    if tolerant or "--ignore-hashes" in args:
        # content hashes necessarily differ when values do; compare the rest
        IGNORE.update({"content_hash", "input_content_hash", "features_content_hash"})
    if "--ignore-command" in args:
        IGNORE.add("command")
    args = [a for a in args if not a.startswith("--")]
    try:
        fa, fb = h5py.File(args[0], "r"), h5py.File(args[1], "r")
        oa, ob = walk(fa), walk(fb)
    except Exception as e:
        print(f"cannot read: {e}")
        return 2
    if attrs(fa, True) != attrs(fb, True):
        ka, kb = attrs(fa, True), attrs(fb, True)
        diff = sorted(k for k in set(ka) | set(kb) if ka.get(k) != kb.get(k))
        print(f"root attributes differ: {diff}")
        return 1
    if set(oa) != set(ob):
        print(f"objects differ: only in A {sorted(set(oa) - set(ob))[:5]}, only in B {sorted(set(ob) - set(oa))[:5]}")
        return 1
    worst_abs = worst_rel = 0.0
    for name in sorted(oa):
        a, b = oa[name], ob[name]
        if type(a) != type(b):
            print(f"{name}: group vs dataset"); return 1
        if attrs(a, False) != attrs(b, False):
            print(f"{name}: attributes differ"); return 1
        if isinstance(a, h5py.Dataset):
            try:
                va, vb = a[()], b[()]
            except Exception as e:
                print(f"{name}: cannot read: {e}"); return 2
            if a.dtype != b.dtype or np.shape(va) != np.shape(vb):
                print(f"{name}: dtype/shape {a.dtype}{np.shape(va)} vs {b.dtype}{np.shape(vb)}"); return 1
            if tolerant and a.dtype.kind == "f":
                d = np.abs(va.astype(np.float64) - vb.astype(np.float64))
                if d.size:
                    worst_abs = max(worst_abs, float(d.max()))
                    worst_rel = max(worst_rel, float(d.max() / max(np.abs(va).max(), 1e-30)))
                continue
            if a.dtype.kind == "O":
                same = [bytes(x) if isinstance(x, bytes) else x for x in np.ravel(va)] == \
                       [bytes(x) if isinstance(x, bytes) else x for x in np.ravel(vb)]
            else:
                same = np.asarray(va).tobytes() == np.asarray(vb).tobytes()
            if not same:
                print(f"{name}: values differ"); return 1
    if tolerant:
        print(f"max_abs {worst_abs:.3g} max_rel {worst_rel:.3g}")
    return 0

if __name__ == "__main__":
    sys.exit(main())
