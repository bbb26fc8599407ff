#!/usr/bin/python3
"""tests/bad/tools/masks_same.py [--subset] A.h5 B.h5 [LABEL] — two masks caches decoded from the same features
on different paths (solver, KC_ISA, threads, build): docs/ties.md's promise, dataset by dataset.

Every /masks/<setting>/<id> of A must exist in B and the other way round (--subset: B's masks
must exist in A, e.g. B decoded one --shard of the images).  Where neither copy is
flagged knife_edge, the label maps must be byte-identical and degenerate equal; where one is
flagged, a difference is allowed and counted.  Prints one summary line (masks, flagged, differing
flagged, worst lambda2 relative difference over the compared masks); exits 1 on a difference outside
the flagged masks or different dataset lists, 2 when a file cannot be read.
lambda2 is stored as a float32 attribute (kc-decode), so solver differences below float32's
resolution (about 6e-8 relative) do not show: a worst difference of exactly 0 is the usual outcome,
even for the dense solver against Lanczos, whose double values differ in the last digits."""
import math
import sys

import h5py
import numpy as np


def masks(f):
    out = {}
    for s in f["masks"]:
        def visit(name, obj, s=s):
            if isinstance(obj, h5py.Dataset):
                out[s + "/" + name] = obj
        f["masks/" + s].visititems(visit)
    return out


def main():
    args = [a for a in sys.argv[1:] if a != "--subset"]
    subset = len(args) < len(sys.argv) - 1
    if len(args) < 2:
        sys.exit(__doc__)
    label = args[2] if len(args) > 2 else ""
    try:
        fa, fb = h5py.File(args[0], "r"), h5py.File(args[1], "r")
        ma, mb = masks(fa), masks(fb)
    except Exception as e:  # noqa: BLE001 (any read failure)
        print(f"{label}: cannot read: {e}")
        return 2
    if subset:
        ma = {k: v for k, v in ma.items() if k in mb}
    if set(ma) != set(mb) or not mb:
        print(f"{label}: dataset lists differ: only in A {sorted(set(ma) - set(mb))[:3]}, only in B "
              f"{sorted(set(mb) - set(ma))[:3]}")
        return 1
    n = flagged = flagged_differ = bad = 0
    worst = 0.0
    first_bad = ""
    for k in sorted(ma):
        a, b = ma[k], mb[k]
        ka, kb = (int(np.atleast_1d(d.attrs["knife_edge"])[0]) for d in (a, b))
        va, vb = a[()], b[()]
        same = va.shape == vb.shape and va.tobytes() == vb.tobytes() and \
            int(np.atleast_1d(a.attrs["degenerate"])[0]) == int(np.atleast_1d(b.attrs["degenerate"])[0])
        n += 1
        if ka or kb:
            flagged += 1
            flagged_differ += not same
            continue
        if ka != kb or not same:
            bad += 1
            first_bad = first_bad or k
            continue
        la, lb = (np.atleast_1d(d.attrs["lambda2"]).astype(np.float64) for d in (a, b))
        for x, y in zip(la, lb):
            if not (math.isnan(x) or math.isnan(y)):
                worst = max(worst, abs(x - y) / max(abs(x), 1e-300))
    print(f"{label}: {n} masks, {flagged} flagged knife_edge ({flagged_differ} of them differ), {bad} differ "
          f"unflagged{' (first: ' + first_bad + ')' if bad else ''}; worst lambda2 relative difference {worst:.2e} (as stored, float32)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
