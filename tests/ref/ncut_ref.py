#!/usr/bin/python3
"""Reference for keycut's normalized-cut decoders (docs/design.md "Decoders"), written step by step in
NumPy/SciPy, independent of the C code.  Writes tests/data/ncut/:

  inputs.bin     cases, each: int32 grid_h, grid_w, dim, then float32 (grid_h*grid_w, dim)
  expected.tsv   one line per (case, setting): case, setting id, degenerate, knife (1 when some
                 round is a knife edge by the rules of docs/ties.md -- an eigengap in [0.9e-6, 1e-5),
                 a decision distance in (5e-7, 2e-6] of max|x| -- or an edge that depends on the
                 order of S's double sum, see cosine()), lambda2 and
                 eigengap per round (comma lists, nan when not run), labels (grid_h*grid_w digits,
                 row-major)

Ties (docs/ties.md, written here from that text): every decision that reads x compares distances
relative to M = max|x|: within 1e-6 M tied (the lowest row-major index wins; on the split an entry
within 1e-6 M of the split value is not in P), a distance in (5e-7 M, 2e-6 M] too close to call
when it can change the mask; a band candidate with the same row of W as an earlier candidate of
(nearly) the same value takes that candidate's distance: they are tied whatever x says.

Cases: planted clusters (exact masks known), random / noisy features (raw and with a large common
offset, a near-complete graph), and "keys-like" features of two real VOC photos from
../shared/data (random projection of 16x16 patches through tanh plus a constant key-bias vector),
raw and centred.  Usage: /usr/bin/python3 tests/ref/ncut_ref.py [SHARED_DATA]
(NCUT_REF_KEEP_INPUTS=1: only expected.tsv, from the committed inputs.bin).
"""
import os
import struct
import sys

import numpy as np
import scipy.linalg
import scipy.ndimage

EPS = 1e-5
TIE, TIE_CLEAR, TIE_KNIFE = 1e-6, 5e-7, 2e-6  # relative to max|x| (docs/ties.md)
GAP_KNIFE_LO, GAP_KNIFE = 0.9e-6, 1e-5
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "data", "ncut")


def settings_all():
    out = []
    for tau in ("0.10", "0.15", "0.20", "0.25"):
        for edges in ("bin", "wtd"):
            for split in ("mean", "zero"):
                for fg in ("seed", "corners", "minority"):
                    for n in (1, 2, 3):
                        out.append(f"t{tau}-{edges}-{split}-{fg}-n{n}")
    return out


def solve(cos, zero, tau, weighted):
    """Second-smallest generalized eigenpair of (D - W) x = lambda D x, through the symmetric form
    I - D^-1/2 W D^-1/2 (LAPACK dsyevr, two eigenpairs); x's sign made canonical with ties.
    cos: cosine(feats) of the image; zero: the patches zeroed by earlier rounds (their features
    are 0, so their rows and columns of S are 0).
    Returns lambda2, eigengap, x, tau_edge, the sign decision's margin, W's row groups."""
    S, lo, hi = cos
    t = np.float32(tau)
    if weighted:
        amb = (lo >= t) != (hi >= t)
    else:
        amb = (lo > t) != (hi > t)
    if zero.any():
        S = S.copy()
        S[zero, :] = 0
        S[:, zero] = 0
        amb[zero, :] = False
        amb[:, zero] = False
    # an ambiguous float32 rounding of a cosine that changes an edge (see cosine())
    tau_edge = bool(amb.any())
    E = S >= t if weighted else S > t
    W = np.where(E, S.astype(np.float64), EPS) if weighted else np.where(E, 1.0, EPS)
    d = W.sum(axis=1)
    isd = 1.0 / np.sqrt(d)
    L = W * isd[:, None]
    L *= isd[None, :]
    np.negative(L, out=L)
    L[np.diag_indices_from(L)] += 1.0  # I - D^-1/2 W D^-1/2
    w, v = scipy.linalg.eigh(L, subset_by_index=[1, 2], driver="evr", overwrite_a=True, check_finite=False)
    x = v[:, 0] * isd
    # identical rows of W: one group (structural ties), named by its first row
    rows = W if weighted else E
    first = {}
    groups = np.array([first.setdefault(rows[i].tobytes(), i) for i in range(len(d))])
    margin = [np.inf]
    if w[1] - w[0] >= 1e-6:
        i, eff = argmax_tied(np.abs(x), None, np.abs(x).max(), groups)
        note_others(x, eff, None, i, margin)
        if x[i] < 0:
            x = -x
    return w[0], w[1] - w[0], x, tau_edge, margin[0], groups


def cosine(feats):
    """S as graph.h defines it: unit rows u_i = f_i * fl32(1 / sqrt(sum_k f_ik^2)) (the sum in double,
    k in order: a cumulative sum), S_ij = fl32(sum_k u_ik u_jk) with the products exact in double.
    The sum here is BLAS's dgemm (its own order): it and keycut's k-order sum are each within
    dim 2^-53 of the exact value (|u| = 1), so S is keycut's S except where fl32 of the double sum is
    ambiguous within twice that bound.  Returns S and the float32 roundings of the sum minus and
    plus that bound (lo, hi): an edge where they disagree would depend on the order of the sum
    (solve's tau_edge; never seen)."""
    f = feats.astype(np.float32)
    f64 = f.astype(np.float64)
    ss = np.cumsum(f64 * f64, axis=1)[:, -1]
    inv = np.where(ss > 0, 1.0 / np.sqrt(np.where(ss > 0, ss, 1.0)), 0.0).astype(np.float32)
    u = (f * inv[:, None]).astype(np.float32)
    u64 = u.astype(np.float64)
    S64 = u64 @ u64.T
    delta = 2.02 * f.shape[1] * 2.0 ** -53
    return S64.astype(np.float32), (S64 - delta).astype(np.float32), (S64 + delta).astype(np.float32)


def note(d, margin):
    if d > TIE_CLEAR and d < margin[0]:
        margin[0] = d


def argmax_tied(v, cand, M, groups):
    """Argmax of v over cand (None: all) with ties.  A candidate in the band (5e-7 M, 2e-6 M] from the
    best takes the distance of the first earlier candidate within 5e-7 M of its value that has the
    same row of W (at most 64 rows compared); the lowest index within 1e-6 M wins.  Returns the
    winner (-1: none) and the distances eff (inf outside cand)."""
    n = len(v)
    c = np.ones(n, bool) if cand is None else np.asarray(cand, bool)
    eff = np.full(n, np.inf)
    if not c.any():
        return -1, eff
    vmax = v[c].max()
    eff[c] = (vmax - v[c]) / M
    near = np.flatnonzero(eff <= TIE_KNIFE)
    for k, i in enumerate(near):
        if eff[i] <= TIE_CLEAR:
            continue
        tried = 0
        for j in near[:k]:
            if abs(v[j] - v[i]) > TIE_CLEAR * M:
                continue
            tried += 1
            if tried > 64:
                break
            if groups[j] == groups[i]:
                eff[i] = min(eff[i], eff[j])
                break
    for i in near:
        if eff[i] <= TIE:
            return int(i), eff
    return -1, eff


def note_others(x, eff, same, win, margin):
    """Possible winners on another path: the first clear tie and band candidates of a lower index;
    one whose outcome (same[i]; None: the sign of x_i) differs from win's: the pair's band distance.
    Farther candidates of another outcome lower the margin reported."""
    if win < 0:
        return
    other = (~same) if same is not None else ((x < 0) != (x[win] < 0))
    clear = np.flatnonzero(eff <= TIE_CLEAR)
    first_clear = clear[0] if len(clear) else len(x)
    for i in np.flatnonzero(other & (eff <= TIE_KNIFE)):
        possible = i == first_clear if eff[i] <= TIE_CLEAR else i < first_clear
        if possible:
            note(max(eff[i], eff[win]), margin)
    far = eff[other & (eff > TIE_KNIFE) & np.isfinite(eff)]
    if len(far):
        note(far.min(), margin)


def seed_mask(x, gh, gw, split, fg, groups, margin):
    """The rule's mask with ties; margin: [value], min-updated with the split's and seed's."""
    n = gh * gw
    M = np.abs(x).max()
    split_value = x.mean() if split == "mean" else 0.0
    P = (x - split_value) > TIE * M
    cand = None
    if fg == "seed":
        F, v = P, np.abs(x)
    elif fg == "corners":
        corners = P.reshape(gh, gw)[[0, 0, -1, -1], [0, -1, 0, -1]].sum()
        F, v = (~P, -x) if corners >= 3 else (P, x)
    else:
        F, v = (P if P.sum() <= (~P).sum() else ~P), np.abs(x)
        cand = F
    s, eff = argmax_tied(v, cand, M, groups)
    C = np.zeros(n, bool)
    if s >= 0 and F[s]:
        lab, _ = scipy.ndimage.label(F.reshape(gh, gw))  # default structure: 4-connected
        C = lab.reshape(-1) == lab.reshape(-1)[s]
    note_others(x, eff, C, s, margin)
    # split entries in the band that can change the mask
    ds = np.abs(x - split_value) / M
    band = int(((ds > TIE_CLEAR) & (ds <= TIE_KNIFE)).sum())
    C2 = C.reshape(gh, gw)
    nb = C2.copy()
    nb[1:, :] |= C2[:-1, :]
    nb[:-1, :] |= C2[1:, :]
    nb[:, 1:] |= C2[:, :-1]
    nb[:, :-1] |= C2[:, 1:]
    matters = nb.reshape(-1).copy()
    if s >= 0:
        matters[s] = True
    if fg == "corners":
        matters[[0, gw - 1, (gh - 1) * gw, n - 1]] = True
    if fg == "minority":
        if abs(n - 2 * int(P.sum())) <= 2 * band:
            matters[:] = True
        if s >= 0:
            matters |= np.abs(x) >= abs(x[s]) - TIE_KNIFE * M
    dm = ds[matters & (ds > TIE_CLEAR)]
    if len(dm):
        note(dm.min(), margin)
    return C


def decode(feats, gh, gw, setting, memo, why=None):
    """why: an optional set; the knife-edge reasons met ("gap", "x", "tau") are added to it.  The
    knife flag is the reference's: a decision too close to call (docs/ties.md) or a tau edge."""
    tau_s, edges, split, fg, n_s = setting.split("-")
    tau, weighted, N = float(tau_s[1:]), edges == "wtd", int(n_s[1:])
    n = gh * gw
    labels = np.zeros(n, np.uint8)
    lam = [float("nan")] * N
    gap = [float("nan")] * N
    kept = []
    degenerate = knife = False
    for r in range(N):
        zero = np.zeros(n, bool)
        for k in kept:
            zero |= k
        key = (tau_s, edges, zero.tobytes())
        if key not in memo:
            if "cos" not in memo:  # S once per image (memo: one image's)
                memo["cos"] = cosine(feats)
            memo[key] = solve(memo["cos"], zero, tau, weighted)
        l2, g, x, tau_edge, sign_margin, groups = memo[key]
        lam[r], gap[r] = l2, g
        gap_knife = GAP_KNIFE_LO <= g < GAP_KNIFE
        if gap_knife or tau_edge:
            knife = True
            if why is not None:
                why.update((["gap"] if gap_knife else []) + (["tau"] if tau_edge else []))
        if g < 1e-6:
            degenerate = True
            kept.append(np.zeros(n, bool))
            break
        margin = [sign_margin]
        C = seed_mask(x, gh, gw, split, fg, groups, margin)
        if margin[0] <= TIE_KNIFE:
            knife = True
            if why is not None:
                why.add("x")
        if r > 0:
            prev = kept[-1]
            inter, union = (C & prev).sum(), (C | prev).sum()
            if (union > 0 and inter / union > 0.5) or C.sum() <= 0.01 * n:
                C = np.zeros(n, bool)
        kept.append(C)
        labels[C & (labels == 0)] = r + 1
    return labels, lam, gap, degenerate, knife


def planted(gh, gw, dim, rng, k):
    """k spatial blocks with orthogonal directions, small noise."""
    lab = np.zeros((gh, gw), int)
    lab[gh // 4: gh // 2 + 2, gw // 5: gw // 2] = 1
    if k > 2:
        lab[gh // 2 + 3: gh - 2, gw // 2 + 2: gw - 3] = 2
    dirs = np.linalg.qr(rng.standard_normal((dim, dim)))[0][:k]
    f = dirs[lab.reshape(-1)] + 0.05 * rng.standard_normal((gh * gw, dim))
    return f.astype(np.float32)


def keys_like(path, rng, dim=32, offset=3.0):
    from PIL import Image
    img = Image.open(path).convert("RGB").resize((480, 480), Image.LANCZOS)
    a = np.asarray(img, np.float32) / 255.0
    a = (a - np.array([0.485, 0.456, 0.406], np.float32)) / np.array([0.229, 0.224, 0.225], np.float32)
    p = a.reshape(30, 16, 30, 16, 3).transpose(0, 2, 1, 3, 4).reshape(900, 768)
    proj = rng.standard_normal((768, dim)).astype(np.float32) / np.sqrt(768)
    bias = offset * rng.standard_normal(dim).astype(np.float32) / np.sqrt(dim)
    pos = 0.3 * rng.standard_normal((900, dim)).astype(np.float32)
    return (np.tanh(p @ proj) + pos + bias).astype(np.float32)


def main():
    shared = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "..", "shared", "data")
    rng = np.random.default_rng(20240611)
    allset = settings_all()
    sample = ["t0.20-bin-mean-seed-n1", "t0.15-bin-mean-corners-n3"]
    others = [s for s in allset if s not in sample]
    sample += [others[i] for i in rng.choice(len(others), 22, replace=False)]
    cases = []  # (name, feats, gh, gw, settings)
    cases.append(("planted2", planted(20, 20, 16, rng, 2), 20, 20, allset))
    cases.append(("planted3", planted(20, 20, 32, rng, 3), 20, 20, allset))
    noise = rng.standard_normal((400, 24)).astype(np.float32)
    cases.append(("random", noise, 20, 20, allset))
    cases.append(("random_offset", (noise + 4.0).astype(np.float32), 20, 20, allset))
    imgs = ["2011_000003.jpg", "2011_000025.jpg"]
    for name in imgs:
        path = os.path.join(shared, "voc_labelme", "JPEGImages", name)
        if not os.path.exists(path):
            sys.exit(f"{path}: missing (pass the shared data folder as the first argument)")
        k = keys_like(path, rng)
        cases.append(("raw_" + name[:-4], k, 30, 30, sample))
        cases.append(("centred_" + name[:-4], (k - k.mean(axis=0, dtype=np.float64)).astype(np.float32), 30, 30, sample))
    os.makedirs(OUT, exist_ok=True)
    if os.environ.get("NCUT_REF_KEEP_INPUTS") == "1":
        # expected.tsv again from the committed inputs.bin (its float32 products depend on the BLAS)
        blob, off = open(os.path.join(OUT, "inputs.bin"), "rb").read(), 0
        for ci, (name, _, _, _, sets) in enumerate(cases):
            gh, gw, dim = struct.unpack("<3i", blob[off:off + 12])
            off += 12
            f = np.frombuffer(blob[off:off + gh * gw * dim * 4], "<f4").reshape(gh * gw, dim).astype(np.float32)
            off += gh * gw * dim * 4
            cases[ci] = (name, f, gh, gw, sets)
    else:
        with open(os.path.join(OUT, "inputs.bin"), "wb") as fo:
            for _, f, gh, gw, _ in cases:
                fo.write(struct.pack("<3i", gh, gw, f.shape[1]))
                fo.write(np.ascontiguousarray(f, "<f4").tobytes())
    lines = []
    for ci, (name, f, gh, gw, sets) in enumerate(cases):
        memo = {}
        for s in sets:
            labels, lam, gap, deg, knife = decode(f, gh, gw, s, memo)
            fmt = lambda v: ",".join("%.17g" % t for t in v)
            lines.append("%d\t%s\t%d\t%d\t%s\t%s\t%s\n" % (ci, s, deg, knife, fmt(lam), fmt(gap),
                                                       "".join(str(int(v)) for v in labels)))
        print(f"case {ci} {name}: {len(sets)} settings, {len(memo) - ('cos' in memo)} solves", file=sys.stderr)
    with open(os.path.join(OUT, "expected.tsv"), "w") as fo:
        fo.write("# case\tsetting\tdegenerate\tknife\tlambda2\teigengap\tlabels   (tests/ref/ncut_ref.py)\n")
        fo.writelines(lines)
    # planted truth for the planted cases (the cluster label map)
    with open(os.path.join(OUT, "cases.txt"), "w") as fo:
        for ci, (name, _, gh, gw, _) in enumerate(cases):
            fo.write(f"{ci} {name} {gh} {gw}\n")


if __name__ == "__main__":
    main()
