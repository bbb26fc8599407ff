/* decoders/refine/bilateral.h — the fast bilateral solver (Barron & Poole 2016) as TokenCut runs it
 * (its bilateral_solver.py: a simplified bilateral grid, bistochastisation, Jacobi-preconditioned
 * conjugate gradients through SciPy 1.10's cg).
 *
 * Grid.  Pixel (x, y) with YUV (JPEG/BT.601 full range: Y = .299 R + .587 G + .114 B,
 * U = -.168736 R - .331264 G + .5 B + 128, V = .5 R - .418688 G - .081312 B + 128, each sum an
 * FMA chain in R, G, B order as numpy's tensordot computes it through OpenBLAS) has the integer
 * coordinates (trunc(x / s), trunc(y / s), trunc(Y / l), trunc(U / c), trunc(V / c)); the distinct
 * coordinates are the vertices, ordered by TokenCut's hash x + 255 y + 255^2 Y + 255^3 U + 255^4 V,
 * and neighbours are found by that hash +- 255^k (as TokenCut does; two coordinates alias only when
 * one exceeds 254, e.g. an image wider than 254 s pixels).  S (vertices x pixels) splats, S^T
 * slices, blur B = 2 * 5 I + the sum over the 5 axes of the [1 0 1] neighbour sums.
 *
 * Bistochastisation: m = S 1, n = 1, 10 times n = sqrt(n m / (B n)), then m = n B n.
 * Solve: A = lambda (diag(m) - diag(n) B diag(n)) + diag(S c), b = S (c t), y0 = b / S c,
 * y = cg(A, b, y0, M = diag(1 / max(diag A, 1e-5)), tol 1e-5, maxiter 25) with SciPy 1.10's
 * stopping rule (atol "legacy"): y0 kept when |A y0 - b| <= tol; else stop when the residual
 * |r| <= tol |b| (rechecked as b - A y after the first iteration), or after maxiter iterations;
 * the output is S^T y.
 *
 *     bs_params p = BS_TOKENCUT_RUNS;
 *     bs_stats st;
 *     bs_solve(&p, rgb, w, h, target, out, &st);   // target, out: (h, w) double
 *     // or bs_init(&s, &p, rgb, w, h); bs_run(s, target, out, &st) per mask; bs_free(s);
 */
#ifndef KC_BILATERAL_H
#define KC_BILATERAL_H
#include <stdint.h>

typedef struct bs_params {
    double sigma_spatial, sigma_luma, sigma_chroma;
    double lambda, confidence, diag_min, cg_tol;
    int cg_maxiter, bistoch_iters;
} bs_params;
/* TokenCut's published runs (get_saliency.py: sigma_spatial 16, luma 16, chroma 8) ... */
#define BS_TOKENCUT_RUNS ((bs_params){16, 16, 8, 256, 0.999, 1e-5, 1e-5, 25, 10})
/* ... and the defaults of its bilateral_solver_output(): 24 / 4 / 4. */
#define BS_TOKENCUT_DEFAULTS ((bs_params){24, 4, 4, 256, 0.999, 1e-5, 1e-5, 25, 10})

typedef struct bs_stats {
    int vertices, cg_iters;
    int kept_start; /* 1: the starting guess was within the tolerance, returned as is */
    double residual; /* the last residual norm computed (0 when kept_start) */
} bs_stats;

/* The grid, the bistochastisation and A depend on the image only: built once, then one solve per
 * target (the rounds of a mask). */
typedef struct bs_solver bs_solver;
int bs_init(bs_solver **s, const bs_params *p, const uint8_t *rgb, int w, int h);
int bs_vertices(const bs_solver *s);
/* One solve; no allocation (its vectors live in s: one thread per solver). */
void bs_run(bs_solver *s, const double *target, double *out, bs_stats *st);
void bs_free(bs_solver *s);
/* bs_init + bs_run + bs_free.  rgb: (h, w, 3); target, out: (h, w).  Errors: sigmas <= 0, ... */
int bs_solve(const bs_params *p, const uint8_t *rgb, int w, int h, const double *target, double *out, bs_stats *st);
#endif
