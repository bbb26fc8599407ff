#!/usr/bin/python3
"""tests/ref/parity_real.py — parity of kc-decode and kc-propagate with the NumPy/SciPy/PyTorch
references on REAL images run through a seeded ViT (tests/test_parity_real.sh drives it).

    parity_real.py model OUT.pth [--depth 12] [--seed 11]
        a ViT-S/16 in the DINO layout (dim 384, heads 6, MLP 1536, patch 16, 14x14 position grid,
        class token, final norm) with seeded random weights: tests/ref/vit_ref.py's make_params,
        the same parameters (seed 11, scale 0.05) as tests/test_vit_full.sh's vits16.pth.
    parity_real.py decode --features F.h5 --masks M.h5 [--label NAME] [--settings all|LIST]
        runs tests/ref/ncut_ref.py's decode() on every image of the features cache F.h5 (read with
        h5py) for every setting in M.h5 (or the comma list), and compares with kc-decode's masks:
        labels identical except on knife edges -- masks kc-decode flagged knife_edge, or that the
        reference flags by the same rules (docs/ties.md: an eigengap in [0.9e-6, 1e-5), a decision
        distance in (5e-7, 2e-6] of max|x| that can change the mask) or for an edge that depends
        on the order of S's double sum (ncut_ref.cosine; never seen) -- which are counted; degenerate
        flags equal; lambda2 of every round both ran to 1e-5 relative and
        the eigengap to 1e-5 of lambda3 for every identical mask (beyond that on a knife edge: counted).  Prints the
        identical-mask count per setting, the knife and degenerate counts and the worst errors;
        exits 1 on any mismatch outside a knife edge.
    parity_real.py propagate ARGS...
        tests/ref/propagate_ref.py's main() with ARGS (--features --davis --split --check ...).
"""
import argparse
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def cmd_model(argv):
    ap = argparse.ArgumentParser(prog="parity_real.py model")
    ap.add_argument("out")
    ap.add_argument("--depth", type=int, default=12)
    ap.add_argument("--seed", type=int, default=11)
    a = ap.parse_args(argv)
    import torch
    import vit_ref
    p = vit_ref.make_params(a.seed, 384, a.depth, 1536, 16, 14, True, True, scale=0.05)
    torch.save(p, a.out)
    print("model: ViT-S/16 shape, depth %d, seed %d -> %s" % (a.depth, a.seed, a.out))


def cmd_decode(argv):
    ap = argparse.ArgumentParser(prog="parity_real.py decode")
    ap.add_argument("--features", required=True)
    ap.add_argument("--masks", required=True)
    ap.add_argument("--label", default="")
    ap.add_argument("--settings", default="all")
    a = ap.parse_args(argv)
    import h5py
    import numpy as np
    import ncut_ref
    t0 = time.time()
    fe, ma = h5py.File(a.features, "r"), h5py.File(a.masks, "r")
    ids = list(fe["index/ids"].asstr()[()])
    grid = fe["index/grid"][()]
    settings = sorted(ma["masks"].keys()) if a.settings == "all" else a.settings.split(",")
    order = {s: i for i, s in enumerate(ncut_ref.settings_all())}
    settings.sort(key=lambda s: order.get(s, 1 << 30))
    stats = {s: [0, 0, 0, 0, 0] for s in settings}  # identical, knife, knife-and-differ, degenerate, bad
    why_count = {"gap": 0, "x": 0, "tau": 0, "kc": 0, "kc_only": 0, "ref_x_only": 0}
    worst_lam = worst_gap = 0.0
    worst_lam_at = worst_gap_at = ""
    bad_lines = []
    n_solves = 0
    for i, name in enumerate(ids):
        gh, gw = (int(v) for v in grid[i])
        feats = fe["features/keys/" + name][()].astype(np.float32)
        memo = {}
        for s in settings:
            why = set()
            ref, lam, gap, deg, knife = ncut_ref.decode(feats, gh, gw, s, memo, why)
            for w in why:
                why_count[w] += 1
            d = ma["masks/%s/%s" % (s, name)]
            got = d[()].reshape(-1)
            glam = np.atleast_1d(d.attrs["lambda2"]).astype(np.float64)
            ggap = np.atleast_1d(d.attrs["eigengap"]).astype(np.float64)
            gdeg = int(np.atleast_1d(d.attrs["degenerate"])[0])
            gknife = int(np.atleast_1d(d.attrs["knife_edge"])[0]) if "knife_edge" in d.attrs else 0
            why_count["kc"] += gknife
            why_count["kc_only"] += gknife and not knife
            why_count["ref_x_only"] += ("x" in why or "gap" in why) and not gknife
            knife = knife or bool(gknife)
            st = stats[s]
            same = got.shape == ref.shape and bool((got == ref).all()) and gdeg == int(deg)
            st[0] += same
            st[1] += knife
            st[3] += int(deg)
            if not same and knife:
                st[2] += 1
                print("knife edge %s %s %s (%s): masks differ (ref %d / C %d patches, degenerate %d / %d, "
                      "lambda2 %s / %s, eigengap %s / %s)"
                      % (a.label, name, s, ",".join(sorted(why)), int((ref > 0).sum()), int((got > 0).sum()),
                         int(deg), gdeg, fmt(lam), fmt(glam), fmt(gap), fmt(ggap)))
            if not same and not knife:
                st[4] += 1
                bad_lines.append("MISMATCH %s %s %s: ref %d patches (degenerate %d), C %d patches (degenerate "
                                 "%d), %d patches differ; lambda2 ref %s C %s; eigengap ref %s C %s"
                                 % (a.label, name, s, int((ref > 0).sum()), int(deg), int((got > 0).sum()), gdeg,
                                    int((got != ref).sum()), fmt(lam), fmt(glam), fmt(gap), fmt(ggap)))
            if not same:
                continue  # a knife-edge difference (printed above) or a mismatch (listed)
            for r in range(min(len(lam), len(glam))):
                if math.isnan(lam[r]) or math.isnan(glam[r]):
                    if math.isnan(lam[r]) != math.isnan(glam[r]):
                        st[4] += 1
                        bad_lines.append("MISMATCH %s %s %s round %d: run in one only (lambda2 ref %s C %s)"
                                         % (a.label, name, s, r + 1, fmt(lam), fmt(glam)))
                    continue
                rel = abs(glam[r] - lam[r]) / max(abs(lam[r]), 1e-300)
                if rel > worst_lam:
                    worst_lam, worst_lam_at = rel, "%s %s round %d: C %.9g ref %.9g" % (name, s, r + 1, glam[r], lam[r])
                gerr = abs(ggap[r] - gap[r]) / max(abs(lam[r] + gap[r]), 1e-300)
                if gerr > worst_gap:
                    worst_gap, worst_gap_at = gerr, "%s %s round %d: C %.9g ref %.9g" % (name, s, r + 1, ggap[r], gap[r])
                if (rel > 1e-5 or gerr > 1e-5) and knife:
                    st[2] += 1
                    print("knife edge %s %s %s (%s) round %d: lambda2 C %.9g ref %.9g (rel %.2e), eigengap C %.9g "
                          "ref %.9g (%.2e of lambda3)" % (a.label, name, s, ",".join(sorted(why)), r + 1, glam[r],
                                                          lam[r], rel, ggap[r], gap[r], gerr))
                elif rel > 1e-5 or gerr > 1e-5:
                    st[4] += 1
                    bad_lines.append("MISMATCH %s %s %s round %d: lambda2 C %.9g ref %.9g (rel %.2e), eigengap "
                                     "C %.9g ref %.9g (%.2e of lambda3)" % (a.label, name, s, r + 1, glam[r], lam[r],
                                                                          rel, ggap[r], gap[r], gerr))
        n_solves += len(memo) - ("cos" in memo)
    n_img = len(ids)
    print("%s: %d images x %d settings, %d reference solves in %.1f s" % (a.label, n_img, len(settings), n_solves,
                                                                         time.time() - t0))
    print("%s: identical masks per setting (of %d images; knife = knife-edge masks, kd = knife-edge masks that "
          "differ or whose eigenvalues differ beyond 1e-5, deg = degenerate in the reference)" % (a.label, n_img))
    row = []
    for s in settings:
        st = stats[s]
        row.append("%-27s %d/%d knife %d kd %d deg %d" % (s, st[0], n_img, st[1], st[2], st[3]))
        if len(row) == 2:
            print("  " + "   ".join(row))
            row = []
    if row:
        print("  " + "   ".join(row))
    tot = [sum(st[k] for st in stats.values()) for k in range(5)]
    n = n_img * len(settings)
    print("%s: %d masks, %d identical, %d knife-edge (%d of them differ): %d flagged knife_edge by kc-decode "
          "(%d of them not by the reference); the reference's reasons over masks: eigengap in [0.9e-6, 1e-5) %d, "
          "a decision within the tie band %d (%d of them not flagged by kc-decode), an edge on the summation order of S %d; "
          "%d degenerate, %d mismatches beyond knife edges"
          % (a.label, n, tot[0], tot[1], tot[2], why_count["kc"], why_count["kc_only"], why_count["gap"],
             why_count["x"], why_count["ref_x_only"], why_count["tau"], tot[3], tot[4]))
    print("%s: worst lambda2 relative error %.2e (tol 1e-5) at %s" % (a.label, worst_lam, worst_lam_at or "-"))
    print("%s: worst eigengap error %.2e of lambda3 (tol 1e-5) at %s" % (a.label, worst_gap, worst_gap_at or "-"))
    for line in bad_lines[:40]:
        print(line)
    if len(bad_lines) > 40:
        print("... %d more mismatches" % (len(bad_lines) - 40))
    return 1 if tot[4] else 0


def fmt(v):
    return "[" + ",".join("%.9g" % float(t) for t in v) + "]"


def cmd_propagate(argv):
    import propagate_ref
    sys.argv = ["propagate_ref.py"] + argv
    return propagate_ref.main()


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("model", "decode", "propagate"):
        sys.exit(__doc__)
    cmd, argv = sys.argv[1], sys.argv[2:]
    rc = {"model": cmd_model, "decode": cmd_decode, "propagate": cmd_propagate}[cmd](argv)
    sys.exit(rc or 0)


if __name__ == "__main__":
    main()
