/* decoders/refine/crf.h — a fully connected CRF with Gaussian edge potentials (Krähenbühl & Koltun 2011),
 * mean-field inference through the permutohedral lattice (Adams, Baek & Davis 2010), computed as
 * densecrf (the C++ library under pydensecrf) computes it, so that MaskCut's crf.py gives the same
 * marginals.
 *
 * Model.  N pixels, L labels, unary energies U (N, L).  Kernels m = 1..K with features f_m (N, d_m)
 * (already divided by their standard deviations) and Potts weights w_m:
 *     k_m(i, j) = exp(-|f_m,i - f_m,j|^2 / 2)          (the i = j term included, as densecrf)
 * Mean field, T iterations:
 *     Q0 = softmax(-U)
 *     Q  = softmax(-U + sum_m w_m n_m .* K_m (n_m .* Q))     (per pixel over labels)
 * with densecrf's symmetric normalisation n_m = 1 / sqrt(K_m 1 + 1e-20) (its NORMALIZE_SYMMETRIC,
 * pydensecrf's default): Potts compatibility -w Q, subtracted from -U.
 *
 * The lattice (densecrf's permutohedral.cpp, its SSE init, sequential compute): each feature
 * vector is elevated onto the plane x . 1 = 0 of R^(d+1) with the scale sqrt(2/3) (d + 1), the
 * enclosing simplex is found by rounding to the nearest remainder-0 point (ties to even) and
 * ranking the differences, the d + 1 vertices get barycentric weights; splat (weights times
 * values summed per vertex), blur along each of the d + 1 lattice directions j = 0..d with
 * v + 0.5 (v_prev + v_next), slice (weights times vertex values) times alpha = 1 / (1 + 2^-d).
 * Every step is float32 in densecrf's order; exp/log differ from Eigen's by an ulp or so.
 *
 *     crf_params p = CRF_MASKCUT;
 *     crf_run(&p, rgb, w, h, unary, 2, q);   // rgb (h, w, 3) uint8; unary, q: (h*w, 2) float
 */
#ifndef KC_CRF_H
#define KC_CRF_H
#include <stdint.h>

/* The lattice over N points of d-dimensional features, built once and filtered many times. */
enum { LATTICE_VS = 4 }; /* value widths 1..LATTICE_VS use the lattice's own scratch rows */
typedef struct permutohedral {
    int d, n, m;     /* feature dimension, points, lattice vertices */
    int32_t *offset; /* (n, d + 1): value row (vertex id + 1) of each barycentric corner */
    float *bary;     /* (n, d + 1) */
    int32_t *nbr;    /* (d + 1, 2, m): rows of the previous and next vertex along each direction, 0 none */
    float *values, *next; /* scratch: (m + 1, LATTICE_VS) each, row 0 the absent vertex */
} permutohedral;

/* features: (n, d) row-major float; d <= 16. */
int permutohedral_init(permutohedral *lat, const float *features, int n, int d);
/* out (n, vs) = lattice Gaussian filter of in (n, vs), vs <= 16; out may equal in.  Uses lat's
 * scratch (vs <= LATTICE_VS): one thread per lattice. */
void permutohedral_compute(permutohedral *lat, const float *in, float *out, int vs);
/* use = 1: the lattice's AVX2 construction (eight pixels' simplices at a time) when the CPU has
 * AVX2 (the default unless KC_ISA is generic or reference), 0: scalar, -1: no change.  Returns the
 * previous setting.  Both give the same bits (tests/test_refine.c checks). */
int permutohedral_simd(int use);
void permutohedral_free(permutohedral *lat);

/* MaskCut's crf.py constants (a Gaussian kernel sxy 3 weight 7, a bilateral kernel sxy 50,
 * srgb 5 weight 10, 10 iterations). */
typedef struct crf_params {
    float gauss_sxy, gauss_w;
    float bi_sxy, bi_srgb, bi_w;
    int iters;
} crf_params;
#define CRF_MASKCUT ((crf_params){3.0f, 7.0f, 50.0f, 5.0f, 10.0f, 10})

/* Mean-field marginals.  rgb: (h, w, 3); unary, q: (h*w, labels).  exact = 1 replaces the
 * lattice by exact dense Gaussian filtering, O(N^2): for tests on small images only. */
int crf_run(const crf_params *p, const uint8_t *rgb, int w, int h, const float *unary, int labels, float *q);
int crf_run_exact(const crf_params *p, const uint8_t *rgb, int w, int h, const float *unary, int labels, float *q);
#endif
