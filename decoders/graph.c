/* decoders/graph.c — see graph.h. */
#include "decoders/graph.h"

#include <float.h>
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) || defined(__AVX2__)
#include <immintrin.h>
#endif

#include "pipeline/model/gemm.h"
#include "pipeline/kc.h"

/* ---- the cosine matrix: a fixed-order product (see graph.h) --------------------------------------- */
#if defined(__FAST_MATH__)
#error "decoders/graph.c: S must be computed in IEEE arithmetic (no -ffast-math)"
#endif
_Static_assert(FLT_EVAL_METHOD == 0, "decoders/graph.c: float and double must be evaluated in their own precision");
_Static_assert(DBL_MANT_DIG >= 2 * FLT_MANT_DIG, "the product of two floats must be exact in double");

/* The micro-kernels: MR rows of A (row-major floats, lda = dim) times NR columns of a packed panel
 * (dim, NR) of doubles, each of the MR x NR sums run in k order, s = fma(a_k, b_k, s) from s = 0;
 * the MR x NR float results go to C (ldc = NR).  Every lane is an independent chain, so the vector
 * width does not change a bit. */
#define COS_MR 4   /* the AVX2 kernel: 4 rows x 12 columns (3 x 4 doubles) */
#define COS_NR 12
#define COS_MR5 8  /* the AVX-512 kernel: 8 rows x 24 columns (3 x 8 doubles) */
#define COS_NR5 24
#define COS_ROWS 8 /* unit's rows are padded to a multiple of both MRs */

/* COS_KERNEL(name, TARGET, B, MR): one text for both vector kernels.  It defines `name`, the
 * micro-kernel above for vectors of B bits: MR rows x 3 vectors of B / 64 doubles (NR = 3 B / 64
 * columns), accumulators c: (MR, 3) vectors.  In it __m##B##d stands for __m256d or __m512d and
 * _mm##B##_fmadd_pd for _mm256_fmadd_pd or _mm512_fmadd_pd; store_floats##B writes one vector of C
 * rounded to float32. */
#define COS_KERNEL(name, TARGET, B, MR)                                                                             \
    TARGET static void name(int dim, const float *A, const double *P, float *C)                                     \
    {                                                                                                               \
        enum { NR = 3 * (B / 64) };                                                                                 \
        __m##B##d c[MR][3];                                                                                         \
        _Pragma("GCC unroll 8")                                                                                     \
        for (int r = 0; r < MR; r++) c[r][0] = c[r][1] = c[r][2] = _mm##B##_setzero_pd();                           \
        for (int k = 0; k < dim; k++) {                                                                             \
            const double *p = P + (size_t)k * NR;                                                                   \
            __m##B##d b0 = _mm##B##_loadu_pd(p), b1 = _mm##B##_loadu_pd(p + B / 64),                                \
                      b2 = _mm##B##_loadu_pd(p + 2 * (B / 64));                                                     \
            _Pragma("GCC unroll 8")                                                                                 \
            for (int r = 0; r < MR; r++) {                                                                          \
                __m##B##d a = _mm##B##_set1_pd((double)A[(size_t)r * dim + k]);                                     \
                c[r][0] = _mm##B##_fmadd_pd(a, b0, c[r][0]);                                                        \
                c[r][1] = _mm##B##_fmadd_pd(a, b1, c[r][1]);                                                        \
                c[r][2] = _mm##B##_fmadd_pd(a, b2, c[r][2]);                                                        \
            }                                                                                                       \
        }                                                                                                           \
        _Pragma("GCC unroll 8")                                                                                     \
        for (int r = 0; r < MR; r++)                                                                                \
            _Pragma("GCC unroll 3")                                                                                 \
            for (int q = 0; q < 3; q++) store_floats##B(C + r * NR + (B / 64) * q, c[r][q]);                        \
    }

#if defined(__AVX2__) && defined(__FMA__)
/* dst[0..3] = v rounded to float32. */
static inline void store_floats256(float *dst, __m256d v) { _mm_storeu_ps(dst, _mm256_cvtpd_ps(v)); }
COS_KERNEL(cos_kernel_avx2, /* the build's target */, 256, COS_MR)
_Static_assert(3 * (256 / 64) == COS_NR, "the AVX2 kernel's columns");
#else
static void cos_kernel_avx2(int dim, const float *A, const double *P, float *C)
{
    for (int r = 0; r < COS_MR; r++)
        for (int q = 0; q < COS_NR; q++) {
            double s = 0;
            for (int k = 0; k < dim; k++) s = fma(A[(size_t)r * dim + k], P[(size_t)k * COS_NR + q], s);
            C[r * COS_NR + q] = (float)s;
        }
}
#endif

#if defined(__x86_64__) && defined(__GNUC__)
#define COS_HAVE_512 1
#define COS_T512 __attribute__((target("avx512f")))
/* dst[0..7] = v rounded to float32. */
COS_T512 static inline void store_floats512(float *dst, __m512d v) { _mm256_storeu_ps(dst, _mm512_cvtpd_ps(v)); }
COS_KERNEL(cos_kernel_avx512, COS_T512, 512, COS_MR5)
_Static_assert(3 * (512 / 64) == COS_NR5, "the AVX-512 kernel's columns");
#endif

/* S's upper triangle, panel by panel (nr columns packed as doubles, every row block reaching the
 * panel's last column), then mirrored.  unit: (n rounded up to mr, dim), the padding rows zero. */
static void cosine_product(const float *unit, int n, int dim, float *S, int wide)
{
    int mr = COS_MR, nr = COS_NR;
#ifdef COS_HAVE_512
    if (wide) mr = COS_MR5, nr = COS_NR5;
#else
    (void)wide;
#endif
    int npan = (n + nr - 1) / nr;
#pragma omp parallel if (!omp_in_parallel() && n >= 256)
    {
        double *P = kc_malloc((size_t)dim * nr * sizeof *P); // (dim, nr): one panel
        float C[COS_MR5 * COS_NR5 > COS_MR * COS_NR ? COS_MR5 * COS_NR5 : COS_MR * COS_NR];
#pragma omp for schedule(dynamic, 1)
        for (int p = npan - 1; p >= 0; p--) { /* the largest panels first */
            int j0 = p * nr, j1 = j0 + nr < n ? j0 + nr : n;
            for (int k = 0; k < dim; k++)
                for (int q = 0; q < nr; q++) P[(size_t)k * nr + q] = j0 + q < n ? unit[(size_t)(j0 + q) * dim + k] : 0.0;
            for (int i0 = 0; i0 < j1; i0 += mr) {
#ifdef COS_HAVE_512
                if (wide)
                    cos_kernel_avx512(dim, unit + (size_t)i0 * dim, P, C);
                else
#endif
                    cos_kernel_avx2(dim, unit + (size_t)i0 * dim, P, C);
                for (int r = 0; r < mr && i0 + r < n; r++)
                    memcpy(S + (size_t)(i0 + r) * n + j0, C + r * nr, (size_t)(j1 - j0) * sizeof *S);
            }
        }
        free(P);
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++) S[(size_t)i * n + j] = S[(size_t)j * n + i];
}

int ncut_cosine_path(const float *feats, int n, int dim, float *S, const char *what, int path)
{
    _Static_assert(COS_ROWS % COS_MR == 0 && COS_ROWS % COS_MR5 == 0, "row padding");
    size_t nrow = (size_t)(n + COS_ROWS - 1) / COS_ROWS * COS_ROWS;
    float *unit = kc_malloc(nrow * (size_t)dim * sizeof *unit); // (nrow, dim), the padding rows zero
    memset(unit + (size_t)n * dim, 0, (nrow - n) * (size_t)dim * sizeof *unit);
    for (int i = 0; i < n; i++) {
        const float *f = feats + (size_t)i * dim;
        double ss = 0;
        for (int k = 0; k < dim; k++) {
            if (!isfinite(f[k])) {
                free(unit);
                return kc_fail("%s: non-finite feature value at token %d, channel %d", what, i, k);
            }
            ss += (double)f[k] * f[k];
        }
        float inv = ss > 0 ? (float)(1.0 / sqrt(ss)) : 0.0f;
        for (int k = 0; k < dim; k++) unit[(size_t)i * dim + k] = f[k] * inv;
    }
    if (path == NCUT_COS_AUTO) path = kc_simd_level() >= 2 ? NCUT_COS_AVX512 : NCUT_COS_AVX2;
#ifdef COS_HAVE_512
    if (path == NCUT_COS_AVX512 && !__builtin_cpu_supports("avx512f")) path = NCUT_COS_AVX2;
#else
    if (path == NCUT_COS_AVX512) path = NCUT_COS_AVX2;
#endif
    if (path == NCUT_COS_SERIAL) {
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                double s = 0;
                for (int k = 0; k < dim; k++) s += (double)unit[(size_t)i * dim + k] * unit[(size_t)j * dim + k];
                S[(size_t)i * n + j] = (float)s;
            }
    } else {
        cosine_product(unit, n, dim, S, path == NCUT_COS_AVX512);
    }
    free(unit);
    return 0;
}

int ncut_cosine(const float *feats, int n, int dim, float *S, const char *what)
{
    return ncut_cosine_path(feats, n, dim, S, what, NCUT_COS_AUTO);
}

double ncut_graph_weight(const ncut_graph *g, int i, int j)
{
    float s = g->sim[(size_t)i * g->n + j];
    if (g->weighted) return s >= g->tau ? (double)s : NCUT_EPS;
    return s > g->tau ? 1.0 : NCUT_EPS;
}

/* A weighted row with more edges than this fraction is evaluated from S (dense). */
#define DENSE_FRACTION 0.3

#ifdef __AVX2__
static uint8_t compress_lut[256][8]; /* the set bit positions of each byte, in order */
static pthread_once_t compress_once = PTHREAD_ONCE_INIT;
static void compress_init(void)
{
    for (int m = 0; m < 256; m++) {
        int k = 0;
        for (int b = 0; b < 8; b++)
            if (m >> b & 1) compress_lut[m][k++] = (uint8_t)b;
    }
}
/* appends j0 + the set bit positions of mask to buf (writes 8 entries: buf needs 8 spare) */
static inline int append_bits(uint16_t *buf, int len, unsigned mask, int j0)
{
    __m128i idx = _mm_cvtepu8_epi16(_mm_loadl_epi64((const __m128i *)compress_lut[mask]));
    _mm_storeu_si128((__m128i *)(buf + len), _mm_add_epi16(idx, _mm_set1_epi16((short)j0)));
    return len + __builtin_popcount(mask);
}
#endif

/* One row of S: ebuf gets the edge columns; for binary edges gbuf gets the active non-edge
 * columns and bad is set when an inactive column is an edge.  ebuf, gbuf: n + 8 entries. */
static void scan_row(const float *s, int n, float t, int weighted, const uint8_t *actbits, uint16_t *ebuf,
                     uint16_t *gbuf, int *ne_out, int *ng_out, int *bad_out)
{
    int ne = 0, ng = 0, bad = 0, j = 0;
#ifdef __AVX2__
    pthread_once(&compress_once, compress_init);
    const __m256 t8 = _mm256_set1_ps(t);
    for (; j + 8 <= n; j += 8) {
        __m256 v = _mm256_loadu_ps(s + j);
        unsigned em = (unsigned)_mm256_movemask_ps(weighted ? _mm256_cmp_ps(v, t8, _CMP_GE_OQ)
                                                            : _mm256_cmp_ps(v, t8, _CMP_GT_OQ));
        ne = append_bits(ebuf, ne, em, j);
        if (!weighted) {
            unsigned am = actbits[j / 8];
            ng = append_bits(gbuf, ng, ~em & am & 0xffu, j);
            bad |= (em & ~am & 0xffu) != 0;
        }
    }
#endif
    for (; j < n; j++) {
        int e = weighted ? s[j] >= t : s[j] > t, a = actbits[j / 8] >> (j % 8) & 1;
        ebuf[ne] = gbuf[ng] = (uint16_t)j;
        ne += e;
        if (!weighted) {
            ng += (!e) & a;
            bad |= e & (!a);
        }
    }
    *ne_out = ne;
    *ng_out = ng;
    *bad_out = bad;
}

void ncut_graph_init(ncut_graph *g, const float *S, int n, double tau, int weighted)
{
    g->n = n;
    g->sim = S;
    g->tau = (float)tau;
    g->weighted = weighted;
    g->deg = kc_malloc((size_t)n * sizeof *g->deg);
    g->form = kc_malloc((size_t)n);
    g->active = kc_malloc((size_t)n);
    g->start = kc_malloc((size_t)(n + 1) * sizeof *g->start);
    g->scratch = kc_malloc((size_t)NCUT_MAX_BLOCK * n * sizeof *g->scratch);
    g->col = NULL;
    g->val = NULL;
    g->listed = 0;
    g->dense_rows = 0;
    const float t = g->tau;
    /* a row of S that is all zero (a zeroed patch) has no edge when 0 fails the rule; its column
     * then holds no edge either (S is symmetric), so gaps lists may skip it */
    const int zero_is_edge = weighted ? 0.0f >= t : 0.0f > t;
    for (int i = 0; i < n; i++) {
        const float *s = S + (size_t)i * n;
        int act = zero_is_edge || s[i] != 0.0f;
        for (int j = 0; j < n && !act; j++) act = s[j] != 0.0f;
        g->active[i] = (uint8_t)act;
    }
    if (n > 65535) { /* columns do not fit the lists: every row dense */
        memset(g->form, NCUT_ROW_DENSE, (size_t)n);
        memset(g->start, 0, (size_t)(n + 1) * sizeof *g->start);
        g->dense_rows = n;
    } else {
        size_t cap = weighted ? (size_t)n * ((size_t)(DENSE_FRACTION * n) + 1) : (size_t)n * ((size_t)n / 2 + 1);
        g->col = kc_malloc(cap * sizeof *g->col);
        if (weighted) g->val = kc_malloc(cap * sizeof *g->val);
        uint16_t *ebuf = kc_malloc((size_t)(n + 8) * sizeof *ebuf), *gbuf = kc_malloc((size_t)(n + 8) * sizeof *gbuf);
        uint8_t *actbits = kc_calloc((size_t)n / 8 + 1, 1); /* active columns, bit j % 8 of byte j / 8 */
        for (int j = 0; j < n; j++) actbits[j / 8] |= (uint8_t)(g->active[j] << (j % 8));
        size_t at = 0;
        for (int i = 0; i < n; i++) {
            const float *s = S + (size_t)i * n;
            int ne = 0, ng = 0, bad = 0;
            scan_row(s, n, t, weighted, actbits, ebuf, gbuf, &ne, &ng, &bad);
            g->start[i] = (int64_t)at;
            if (!weighted) g->deg[i] = (double)ne + NCUT_EPS * (n - ne); /* = sum_j W_ij */
            if (bad) { /* S not symmetric on a zero row: gaps lists would miss an edge */
                g->form[i] = NCUT_ROW_EDGES;
            } else if (weighted) {
                g->form[i] = ne <= DENSE_FRACTION * n ? NCUT_ROW_EDGES : NCUT_ROW_DENSE;
            } else {
                g->form[i] = ne <= ng || !g->active[i] ? NCUT_ROW_EDGES : NCUT_ROW_GAPS;
            }
            if (g->form[i] == NCUT_ROW_EDGES) {
                memcpy(g->col + at, ebuf, (size_t)ne * sizeof *ebuf);
                if (weighted)
                    for (int k = 0; k < ne; k++) g->val[at + k] = s[ebuf[k]];
                at += (size_t)ne;
            } else if (g->form[i] == NCUT_ROW_GAPS) {
                memcpy(g->col + at, gbuf, (size_t)ng * sizeof *gbuf);
                at += (size_t)ng;
            } else {
                g->dense_rows++;
            }
        }
        g->start[n] = (int64_t)at;
        g->listed = (long)at;
        free(ebuf);
        free(gbuf);
        free(actbits);
    }
    if (weighted || !g->col) {
        double *ones = kc_malloc((size_t)n * sizeof *ones);
        for (int i = 0; i < n; i++) ones[i] = 1.0;
        ncut_graph_apply(g, ones, g->deg, 1);
        free(ones);
    }
}

void ncut_graph_free(ncut_graph *g)
{
    free(g->deg);
    free(g->form);
    free(g->active);
    free(g->start);
    free(g->col);
    free(g->val);
    free(g->scratch);
    g->deg = g->scratch = NULL;
    g->form = g->active = NULL;
    g->start = NULL;
    g->col = NULL;
    g->val = NULL;
}

/* One dense row: y[k] = sum_j w_ij x[k][j] for k < NB, X: (NB, n).  The vector path keeps four
 * partial sums per vector (lanes j mod 4) and adds them in a fixed order.  WEIGHTED and NB are
 * compile-time constants at each call, so the loop carries no branch. */
static inline __attribute__((always_inline)) void dense_row_t(const ncut_graph *g, int i, const double *X,
                                                             double *y, const int WEIGHTED, const int NB)
{
    const int n = g->n;
    const float *s = g->sim + (size_t)i * n;
    double acc[4] = {0, 0, 0, 0};
    int j = 0;
#ifdef __AVX2__
    {
        __m256d a0 = _mm256_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;
        const __m128 tau4 = _mm_set1_ps(g->tau);
        const __m256d eps4 = _mm256_set1_pd(NCUT_EPS), one4 = _mm256_set1_pd(1.0);
        const double *x0 = X, *x1 = X + n, *x2 = X + 2 * (size_t)n, *x3 = X + 3 * (size_t)n;
        for (; j + 4 <= n; j += 4) {
            __m128 sv = _mm_loadu_ps(s + j);
            __m128 m = WEIGHTED ? _mm_cmp_ps(sv, tau4, _CMP_GE_OQ) : _mm_cmp_ps(sv, tau4, _CMP_GT_OQ);
            __m256d md = _mm256_castsi256_pd(_mm256_cvtepi32_epi64(_mm_castps_si128(m)));
            __m256d val = WEIGHTED ? _mm256_cvtps_pd(sv) : one4;
            __m256d w = _mm256_blendv_pd(eps4, val, md);
            a0 = _mm256_fmadd_pd(w, _mm256_loadu_pd(x0 + j), a0);
            if (NB > 1) a1 = _mm256_fmadd_pd(w, _mm256_loadu_pd(x1 + j), a1);
            if (NB > 2) a2 = _mm256_fmadd_pd(w, _mm256_loadu_pd(x2 + j), a2);
            if (NB > 3) a3 = _mm256_fmadd_pd(w, _mm256_loadu_pd(x3 + j), a3);
        }
        __m256d av[4] = {a0, a1, a2, a3};
        for (int k = 0; k < NB; k++) {
            double t[4];
            _mm256_storeu_pd(t, av[k]);
            acc[k] = (t[0] + t[1]) + (t[2] + t[3]);
        }
    }
#endif
    for (; j < n; j++) {
        double w = WEIGHTED ? (s[j] >= g->tau ? (double)s[j] : NCUT_EPS) : (s[j] > g->tau ? 1.0 : NCUT_EPS);
        for (int k = 0; k < NB; k++) acc[k] += w * X[(size_t)k * n + j];
    }
    for (int k = 0; k < NB; k++) y[k] = acc[k];
}

/* one binary dense row (only when n > 65535: weighted dense rows go through dense_rows) */
static void dense_row(const ncut_graph *g, int i, const double *X, double *y, int nb)
{
    switch (nb) {
    case 1: dense_row_t(g, i, X, y, 0, 1); break;
    case 2: dense_row_t(g, i, X, y, 0, 2); break;
    case 3: dense_row_t(g, i, X, y, 0, 3); break;
    default: dense_row_t(g, i, X, y, 0, 4);
    }
}

/* Weighted dense rows i0 .. i0 + R - 1, X: (NB, n): y[r][k] = sum_j w_ij x[k][j], w_ij = S_ij >= tau ?
 * S_ij : eps (compared in double, exact for float operands).  The R rows share each load of X; each
 * row and vector keeps its own four partial sums (lanes j mod 4) added in a fixed order, so a row's
 * result does not depend on R (how many dense rows happen to be consecutive). */
static inline __attribute__((always_inline)) void wrows_t(const ncut_graph *g, int i0, const double *X, double *y,
                                                         const int R, const int NB)
{
    const int n = g->n;
    const float *s = g->sim + (size_t)i0 * n;
    double acc[4][NCUT_MAX_BLOCK] = {{0}};
    int j = 0;
#ifdef __AVX2__
    {
        __m256d a[4][NCUT_MAX_BLOCK];
        const __m256d tau4 = _mm256_set1_pd((double)g->tau), eps4 = _mm256_set1_pd(NCUT_EPS);
#pragma GCC unroll 4
        for (int r = 0; r < R; r++)
#pragma GCC unroll 4
            for (int k = 0; k < NB; k++) a[r][k] = _mm256_setzero_pd();
        for (; j + 4 <= n; j += 4) {
            __m256d x[NCUT_MAX_BLOCK];
#pragma GCC unroll 4
            for (int k = 0; k < NB; k++) x[k] = _mm256_loadu_pd(X + (size_t)k * n + j);
#pragma GCC unroll 4
            for (int r = 0; r < R; r++) {
                __m256d v = _mm256_cvtps_pd(_mm_loadu_ps(s + (size_t)r * n + j));
                __m256d w = _mm256_blendv_pd(eps4, v, _mm256_cmp_pd(v, tau4, _CMP_GE_OQ));
#pragma GCC unroll 4
                for (int k = 0; k < NB; k++) a[r][k] = _mm256_fmadd_pd(w, x[k], a[r][k]);
            }
        }
#pragma GCC unroll 4
        for (int r = 0; r < R; r++)
#pragma GCC unroll 4
            for (int k = 0; k < NB; k++) {
                double t[4];
                _mm256_storeu_pd(t, a[r][k]);
                acc[r][k] = (t[0] + t[1]) + (t[2] + t[3]);
            }
    }
#endif
    for (; j < n; j++)
        for (int r = 0; r < R; r++) {
            float v = s[(size_t)r * n + j];
            double w = v >= g->tau ? (double)v : NCUT_EPS;
            for (int k = 0; k < NB; k++) acc[r][k] += w * X[(size_t)k * n + j];
        }
    for (int r = 0; r < R; r++)
        for (int k = 0; k < NB; k++) y[(size_t)r * NB + k] = acc[r][k];
}

/* Weighted dense rows i0 .. i0 + rows - 1 (rows <= 4); y: (rows, nb) */
static void dense_rows(const ncut_graph *g, int i0, int rows, const double *X, double *y, int nb)
{
#define WROWS_CASE(R, NB)                                                                                         \
    case (R) * 8 + (NB): wrows_t(g, i0, X, y, R, NB); break
    switch (rows * 8 + nb) {
        WROWS_CASE(1, 1); WROWS_CASE(2, 1); WROWS_CASE(3, 1); WROWS_CASE(4, 1);
        WROWS_CASE(1, 2); WROWS_CASE(2, 2); WROWS_CASE(3, 2); WROWS_CASE(4, 2);
        WROWS_CASE(1, 3); WROWS_CASE(2, 3);
        WROWS_CASE(1, 4); WROWS_CASE(2, 4);
    default: /* three or four rows of three or four vectors: two passes, to stay in registers */
        dense_rows(g, i0, 2, X, y, nb);
        dense_rows(g, i0 + 2, rows - 2, X, y + (size_t)2 * nb, nb);
    }
#undef WROWS_CASE
}

/* sum over a list of the (n, NB) rows of X: p[k] = sum x[j][k]; weighted: q[k] = sum v_j x[j][k] */
static inline void list_sum4(const uint16_t *c, const float *v, int len, const double *X, double *p, double *q)
{
#ifdef __AVX2__
    __m256d ap = _mm256_setzero_pd(), aq = ap;
    if (v)
        for (int k = 0; k < len; k++) {
            __m256d x = _mm256_loadu_pd(X + 4 * (size_t)c[k]);
            ap = _mm256_add_pd(ap, x);
            aq = _mm256_fmadd_pd(_mm256_set1_pd((double)v[k]), x, aq);
        }
    else
        for (int k = 0; k < len; k++) ap = _mm256_add_pd(ap, _mm256_loadu_pd(X + 4 * (size_t)c[k]));
    _mm256_storeu_pd(p, ap);
    _mm256_storeu_pd(q, aq);
#else
    for (int b = 0; b < 4; b++) p[b] = q[b] = 0;
    for (int k = 0; k < len; k++)
        for (int b = 0; b < 4; b++) {
            double x = X[4 * (size_t)c[k] + b];
            p[b] += x;
            if (v) q[b] += (double)v[k] * x;
        }
#endif
}

static inline void list_sum(const uint16_t *c, const float *v, int len, const double *X, int nb, double *p, double *q)
{
    if (nb == 4) {
        list_sum4(c, v, len, X, p, q);
        return;
    }
#ifdef __AVX2__
    if (nb == 2) { /* two lanes of 2: even and odd entries, added in a fixed order */
        __m128d p0 = _mm_setzero_pd(), p1 = p0, q0 = p0, q1 = p0;
        int k = 0;
        if (v) {
            for (; k + 2 <= len; k += 2) {
                __m128d x0 = _mm_loadu_pd(X + 2 * (size_t)c[k]), x1 = _mm_loadu_pd(X + 2 * (size_t)c[k + 1]);
                p0 = _mm_add_pd(p0, x0);
                p1 = _mm_add_pd(p1, x1);
                q0 = _mm_fmadd_pd(_mm_set1_pd((double)v[k]), x0, q0);
                q1 = _mm_fmadd_pd(_mm_set1_pd((double)v[k + 1]), x1, q1);
            }
            if (k < len) {
                __m128d x0 = _mm_loadu_pd(X + 2 * (size_t)c[k]);
                p0 = _mm_add_pd(p0, x0);
                q0 = _mm_fmadd_pd(_mm_set1_pd((double)v[k]), x0, q0);
            }
        } else {
            for (; k + 2 <= len; k += 2) {
                p0 = _mm_add_pd(p0, _mm_loadu_pd(X + 2 * (size_t)c[k]));
                p1 = _mm_add_pd(p1, _mm_loadu_pd(X + 2 * (size_t)c[k + 1]));
            }
            if (k < len) p0 = _mm_add_pd(p0, _mm_loadu_pd(X + 2 * (size_t)c[k]));
        }
        _mm_storeu_pd(p, _mm_add_pd(p0, p1));
        _mm_storeu_pd(q, _mm_add_pd(q0, q1));
        return;
    }
#endif
    if (nb == 1) { /* four partial sums, added in a fixed order */
        double a[4] = {0, 0, 0, 0}, w[4] = {0, 0, 0, 0};
        int k = 0;
        for (; k + 4 <= len; k += 4)
            for (int u = 0; u < 4; u++) {
                double x = X[c[k + u]];
                a[u] += x;
                if (v) w[u] += (double)v[k + u] * x;
            }
        for (; k < len; k++) {
            a[0] += X[c[k]];
            if (v) w[0] += (double)v[k] * X[c[k]];
        }
        p[0] = (a[0] + a[1]) + (a[2] + a[3]);
        q[0] = (w[0] + w[1]) + (w[2] + w[3]);
        return;
    }
    for (int b = 0; b < nb; b++) p[b] = q[b] = 0;
    for (int k = 0; k < len; k++) {
        const double *x = X + (size_t)nb * c[k];
        for (int b = 0; b < nb; b++) p[b] += x[b];
        if (v)
            for (int b = 0; b < nb; b++) q[b] += (double)v[k] * x[b];
    }
}

void ncut_graph_apply(const ncut_graph *g, const double *X, double *Y, int nb)
{
    const int n = g->n;
    double sum[NCUT_MAX_BLOCK] = {0}, sum_active[NCUT_MAX_BLOCK] = {0};
    for (int j = 0; j < n; j++)
        for (int b = 0; b < nb; b++) {
            sum[b] += X[(size_t)j * nb + b];
            if (g->active[j]) sum_active[b] += X[(size_t)j * nb + b];
        }
    if (g->dense_rows)
        for (int j = 0; j < n; j++)
            for (int b = 0; b < nb; b++) g->scratch[(size_t)b * n + j] = X[(size_t)j * nb + b];
    const double eps = NCUT_EPS;
    int dense_end = 0; /* weighted: rows [i, dense_end) already hold their products */
    for (int i = 0; i < n; i++) {
        double *y = Y + (size_t)i * nb, p[4], q[4];
        const uint16_t *c = g->col ? g->col + g->start[i] : NULL;
        int len = (int)(g->start[i + 1] - g->start[i]);
        switch (g->form[i]) {
        case NCUT_ROW_EDGES: /* edges: w x = eps (sum - p) + (binary: p, weighted: q) */
            list_sum(c, g->weighted ? g->val + g->start[i] : NULL, len, X, nb, p, q);
            for (int b = 0; b < nb; b++) y[b] = eps * (sum[b] - p[b]) + (g->weighted ? q[b] : p[b]);
            break;
        case NCUT_ROW_GAPS: /* binary: the edges' sum is sum_active - p */
            list_sum(c, NULL, len, X, nb, p, q);
            for (int b = 0; b < nb; b++) {
                double e = sum_active[b] - p[b];
                y[b] = eps * (sum[b] - e) + e;
            }
            break;
        default:
            if (!g->weighted) {
                dense_row(g, i, g->scratch, y, nb);
            } else if (i >= dense_end) { /* up to four consecutive dense rows share one pass over X */
                int rows = 1;
                while (rows < 4 && i + rows < n && g->form[i + rows] == NCUT_ROW_DENSE) rows++;
                dense_rows(g, i, rows, g->scratch, y, nb);
                dense_end = i + rows;
            }
        }
    }
}

void ncut_graph_dense(const ncut_graph *g, double *W)
{
    for (int i = 0; i < g->n; i++)
        for (int j = 0; j < g->n; j++) W[(size_t)i * g->n + j] = ncut_graph_weight(g, i, j);
}
