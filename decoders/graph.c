/* decoders/graph.c — see graph.h. */
#include "decoders/graph.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef __AVX2__
#include <immintrin.h>
#endif

#include "pipeline/kc.h"

int ncut_cosine(const float *feats, int n, int dim, float *S, const char *what)
{
    float *unit = kc_malloc((size_t)n * (size_t)dim * sizeof *unit); // (n, dim)
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
    /* upper triangle by syrk, mirrored, so S is exactly symmetric */
    cblas_ssyrk(CblasRowMajor, CblasUpper, CblasNoTrans, n, dim, 1.0f, unit, dim, 0.0f, S, n);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++) S[(size_t)i * n + j] = S[(size_t)j * n + i];
    free(unit);
    return 0;
}

double ncut_graph_weight(const ncut_graph *g, int i, int j)
{
    float s = g->sim[(size_t)i * g->n + j];
    if (g->weighted) return s >= g->tau ? (double)s : NCUT_EPS;
    return s > g->tau ? 1.0 : NCUT_EPS;
}

void ncut_graph_init(ncut_graph *g, const float *S, int n, double tau, int weighted)
{
    g->n = n;
    g->sim = S;
    g->tau = (float)tau;
    g->weighted = weighted;
    g->deg = kc_malloc((size_t)n * sizeof *g->deg);
    double *ones = kc_malloc((size_t)n * sizeof *ones);
    for (int i = 0; i < n; i++) ones[i] = 1.0;
    ncut_graph_apply(g, ones, g->deg, 1);
    free(ones);
}

void ncut_graph_free(ncut_graph *g)
{
    free(g->deg);
    g->deg = NULL;
}

/* One row: y[k] = sum_j w_ij x[k][j] for k < nb.  The vector path keeps four partial sums per
 * vector (lanes j mod 4) and adds them in a fixed order. */
static void apply_row(const ncut_graph *g, int i, const double *X, double *y, int nb)
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
            __m128 m = g->weighted ? _mm_cmp_ps(sv, tau4, _CMP_GE_OQ) : _mm_cmp_ps(sv, tau4, _CMP_GT_OQ);
            __m256d md = _mm256_castsi256_pd(_mm256_cvtepi32_epi64(_mm_castps_si128(m)));
            __m256d val = g->weighted ? _mm256_cvtps_pd(sv) : one4;
            __m256d w = _mm256_blendv_pd(eps4, val, md);
            a0 = _mm256_fmadd_pd(w, _mm256_loadu_pd(x0 + j), a0);
            if (nb > 1) a1 = _mm256_fmadd_pd(w, _mm256_loadu_pd(x1 + j), a1);
            if (nb > 2) a2 = _mm256_fmadd_pd(w, _mm256_loadu_pd(x2 + j), a2);
            if (nb > 3) a3 = _mm256_fmadd_pd(w, _mm256_loadu_pd(x3 + j), a3);
        }
        __m256d av[4] = {a0, a1, a2, a3};
        for (int k = 0; k < nb; k++) {
            double t[4];
            _mm256_storeu_pd(t, av[k]);
            acc[k] = (t[0] + t[1]) + (t[2] + t[3]);
        }
    }
#endif
    for (; j < n; j++) {
        double w = g->weighted ? (s[j] >= g->tau ? (double)s[j] : NCUT_EPS) : (s[j] > g->tau ? 1.0 : NCUT_EPS);
        for (int k = 0; k < nb; k++) acc[k] += w * X[(size_t)k * n + j];
    }
    for (int k = 0; k < nb; k++) y[k] = acc[k];
}

void ncut_graph_apply(const ncut_graph *g, const double *X, double *Y, int nb)
{
    const int n = g->n;
    double y[4];
    for (int i = 0; i < n; i++) {
        apply_row(g, i, X, y, nb);
        for (int k = 0; k < nb; k++) Y[(size_t)k * n + i] = y[k];
    }
}

void ncut_graph_dense(const ncut_graph *g, double *W)
{
    for (int i = 0; i < g->n; i++)
        for (int j = 0; j < g->n; j++) W[(size_t)i * g->n + j] = ncut_graph_weight(g, i, j);
}
