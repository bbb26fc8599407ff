/* decoders/eigen.c — see eigen.h. */
#include "decoders/eigen.h"

#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/kc.h"

enum {
    KRYLOV_BLOCK = 4,       /* vectors per block (ncut_graph_apply handles up to 4) */
    KRYLOV_MAX_BASIS = 64,  /* basis size before a thick restart */
    KRYLOV_KEEP = 12,       /* Ritz vectors kept at a restart */
    KRYLOV_MIN_N = 200,     /* below this the dense solver is cheap: use it */
    KRYLOV_MAX_MATVECS = 480,
};
#define KRYLOV_TOL 1e-10

void ncut_canonical_sign(double *x, int n)
{
    int best = 0;
    for (int i = 1; i < n; i++)
        if (fabs(x[i]) > fabs(x[best])) best = i;
    if (n > 0 && x[best] < 0)
        for (int i = 0; i < n; i++) x[i] = -x[i];
}

/* y (unit, on v1-perp) -> x = D^-1/2 y with x^T D x = 1, canonical sign */
static void finish_vector(const ncut_graph *g, const double *y, double *x)
{
    double nrm = 0;
    for (int i = 0; i < g->n; i++) nrm += y[i] * y[i];
    nrm = sqrt(nrm);
    for (int i = 0; i < g->n; i++) x[i] = y[i] / nrm / sqrt(g->deg[i]);
    ncut_canonical_sign(x, g->n);
}

int ncut_eigen_dense(const ncut_graph *g, double *x, ncut_eig *e)
{
    const int n = g->n;
    if (n < 3) return kc_fail("normalized cut needs at least 3 tokens (got %d)", n);
    double *L = kc_malloc((size_t)n * n * sizeof *L); // (n, n)
    double *isd = kc_malloc((size_t)n * sizeof *isd);
    for (int i = 0; i < n; i++) isd[i] = 1.0 / sqrt(g->deg[i]);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            L[(size_t)i * n + j] = (i == j ? 1.0 : 0.0) - ncut_graph_weight(g, i, j) * isd[i] * isd[j];
    double w[3], *z = kc_malloc((size_t)n * 2 * sizeof *z); // (n, 2)
    lapack_int *isuppz = kc_malloc((size_t)4 * n * sizeof *isuppz);
    lapack_int m = 0;
    lapack_int info = LAPACKE_dsyevr(LAPACK_ROW_MAJOR, 'V', 'I', 'U', n, L, n, 0.0, 0.0, 2, 3,
                                     LAPACKE_dlamch('S'), &m, w, z, 2, isuppz);
    int rc = 0;
    if (info != 0 || m != 2) {
        rc = kc_fail("LAPACKE_dsyevr failed on a %d-node graph (info %d, %d eigenvalues)", n, (int)info, (int)m);
    } else {
        double *y = kc_malloc((size_t)n * sizeof *y);
        for (int i = 0; i < n; i++) y[i] = z[2 * i];
        finish_vector(g, y, x);
        free(y);
        e->lambda2 = w[0];
        e->lambda3 = w[1];
        e->eigengap = w[1] - w[0];
        e->residual = 0;
        e->method = NCUT_EIG_DENSE;
        e->matvecs = 0;
    }
    free(isuppz);
    free(z);
    free(isd);
    free(L);
    return rc;
}

/* ---- block Krylov ---------------------------------------------------------------------------- */

typedef struct krylov {
    const ncut_graph *g;
    int n, m;            /* basis size */
    double *Q, *AQ;      /* (KRYLOV_MAX_BASIS, n): basis vectors and A times them */
    double *H;           /* (KRYLOV_MAX_BASIS, KRYLOV_MAX_BASIS) projected matrix */
    double *v1, *isd;    /* (n) deflated top eigenvector, D^-1/2 */
    double *z, *az;      /* (KRYLOV_BLOCK, n) scratch for A products */
    uint64_t rng;
    int matvecs;
} krylov;

static double rand_unit(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (double)(*s >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

/* Orthogonalises v against v1 and the first m basis vectors, twice; returns its norm after. */
static double orthogonalise(krylov *k, double *v, int m)
{
    const int n = k->n;
    double c[KRYLOV_MAX_BASIS + KRYLOV_BLOCK];
    for (int pass = 0; pass < 2; pass++) {
        double a = cblas_ddot(n, k->v1, 1, v, 1);
        cblas_daxpy(n, -a, k->v1, 1, v, 1);
        if (m > 0) {
            cblas_dgemv(CblasRowMajor, CblasNoTrans, m, n, 1.0, k->Q, n, v, 1, 0.0, c, 1);
            cblas_dgemv(CblasRowMajor, CblasTrans, m, n, -1.0, k->Q, n, c, 1, 1.0, v, 1);
        }
    }
    return cblas_dnrm2(n, v, 1);
}

/* Appends candidate vectors (nb rows of cand) to the basis, orthonormalised; returns how many
 * were appended. */
static int append_block(krylov *k, double *cand, int nb)
{
    const int n = k->n;
    int added = 0;
    for (int b = 0; b < nb && k->m < KRYLOV_MAX_BASIS; b++) {
        double *v = cand + (size_t)b * n;
        double before = cblas_dnrm2(n, v, 1);
        double after = before > 0 ? orthogonalise(k, v, k->m) : 0;
        for (int tries = 0; !(after > 1e-8 * before && after > 1e-200) && tries < 5; tries++) {
            for (int i = 0; i < n; i++) v[i] = rand_unit(&k->rng);
            before = cblas_dnrm2(n, v, 1);
            after = orthogonalise(k, v, k->m);
        }
        if (!(after > 1e-8 * before)) break; /* space exhausted (cannot happen for n >= KRYLOV_MIN_N) */
        cblas_dscal(n, 1.0 / after, v, 1);
        memcpy(k->Q + (size_t)k->m * n, v, (size_t)n * sizeof *v);
        k->m++;
        added++;
    }
    return added;
}

/* AQ rows [from, m) and the matching rows/columns of H. */
static void extend_products(krylov *k, int from)
{
    const int n = k->n;
    for (int c0 = from; c0 < k->m; c0 += KRYLOV_BLOCK) {
        int nb = k->m - c0 < KRYLOV_BLOCK ? k->m - c0 : KRYLOV_BLOCK;
        for (int b = 0; b < nb; b++)
            for (int i = 0; i < n; i++) k->z[(size_t)b * n + i] = k->Q[(size_t)(c0 + b) * n + i] * k->isd[i];
        ncut_graph_apply(k->g, k->z, k->az, nb);
        for (int b = 0; b < nb; b++)
            for (int i = 0; i < n; i++) k->AQ[(size_t)(c0 + b) * n + i] = k->az[(size_t)b * n + i] * k->isd[i];
        k->matvecs += nb;
    }
    for (int c = from; c < k->m; c++)
        for (int r = 0; r <= c; r++) {
            double h = cblas_ddot(n, k->Q + (size_t)r * n, 1, k->AQ + (size_t)c * n, 1);
            if (r < from) h = 0.5 * (h + cblas_ddot(n, k->Q + (size_t)c * n, 1, k->AQ + (size_t)r * n, 1));
            k->H[r * KRYLOV_MAX_BASIS + c] = k->H[c * KRYLOV_MAX_BASIS + r] = h;
        }
}

int ncut_eigen_krylov(const ncut_graph *g, double *x, ncut_eig *e)
{
    const int n = g->n, MB = KRYLOV_MAX_BASIS;
    if (n < KRYLOV_MIN_N) return 1;
    krylov k = {.g = g, .n = n, .m = 0, .rng = 0x9e3779b97f4a7c15ull, .matvecs = 0};
    k.Q = kc_malloc((size_t)MB * n * sizeof *k.Q);
    k.AQ = kc_malloc((size_t)MB * n * sizeof *k.AQ);
    k.H = kc_calloc((size_t)MB * MB, sizeof *k.H);
    k.v1 = kc_malloc((size_t)n * sizeof *k.v1);
    k.isd = kc_malloc((size_t)n * sizeof *k.isd);
    k.z = kc_malloc((size_t)KRYLOV_BLOCK * n * sizeof *k.z);
    k.az = kc_malloc((size_t)KRYLOV_BLOCK * n * sizeof *k.az);
    double *cand = kc_malloc((size_t)KRYLOV_KEEP * n * sizeof *cand);
    double *Hc = kc_malloc((size_t)MB * MB * sizeof *Hc);
    double *S = kc_malloc((size_t)MB * KRYLOV_KEEP * sizeof *S); // (m, keep) Ritz coefficients
    double *tmp = kc_malloc((size_t)KRYLOV_KEEP * n * sizeof *tmp);
    double theta[MB], res[2] = {1, 1};
    lapack_int isuppz[2 * MB];
    double dsum = 0;
    for (int i = 0; i < n; i++) dsum += g->deg[i];
    for (int i = 0; i < n; i++) {
        k.v1[i] = sqrt(g->deg[i] / dsum);
        k.isd[i] = 1.0 / sqrt(g->deg[i]);
    }
    int rc = 1;
    for (int i = 0; i < KRYLOV_BLOCK * n; i++) cand[i] = rand_unit(&k.rng);
    int from = 0, added = append_block(&k, cand, KRYLOV_BLOCK);
    while (added > 0) {
        extend_products(&k, from);
        /* Rayleigh-Ritz: the kk largest eigenpairs of H (m, m), ascending */
        int m = k.m, kk = m < KRYLOV_KEEP ? m : KRYLOV_KEEP;
        for (int r = 0; r < m; r++) memcpy(Hc + r * m, k.H + r * MB, (size_t)m * sizeof *Hc);
        lapack_int found = 0;
        lapack_int info = LAPACKE_dsyevr(LAPACK_ROW_MAJOR, 'V', 'I', 'U', m, Hc, m, 0.0, 0.0, m - kk + 1, m,
                                         LAPACKE_dlamch('S'), &found, theta, S, kk, isuppz);
        if (info != 0 || found != kk) {
            rc = kc_fail("LAPACKE_dsyevr failed on a %d x %d projected matrix (info %d)", m, m, (int)info);
            break;
        }
        /* Ritz vectors, largest first: tmp[t] = sum_c S[c][kk-1-t] Q[c], A times them in cand; all kk
         * only when restarting, else the two wanted */
        int want = k.m + KRYLOV_BLOCK > MB ? kk : (kk < 2 ? kk : 2);
        for (int t = 0; t < want; t++) {
            const double *s = S + (kk - 1 - t);
            cblas_dgemv(CblasRowMajor, CblasTrans, m, n, 1.0, k.Q, n, s, kk, 0.0, tmp + (size_t)t * n, 1);
            cblas_dgemv(CblasRowMajor, CblasTrans, m, n, 1.0, k.AQ, n, s, kk, 0.0, cand + (size_t)t * n, 1);
        }
        for (int t = 0; t < 2 && t < kk; t++) {
            double th = theta[kk - 1 - t], r2 = 0;
            for (int i = 0; i < n; i++) {
                double d = cand[(size_t)t * n + i] - th * tmp[(size_t)t * n + i];
                r2 += d * d;
            }
            res[t] = sqrt(r2);
        }
        if (kk >= 2 && res[0] <= KRYLOV_TOL && res[1] <= KRYLOV_TOL) {
            double mu2 = theta[kk - 1], mu3 = theta[kk - 2];
            e->lambda2 = 1.0 - mu2;
            e->lambda3 = 1.0 - mu3;
            e->eigengap = e->lambda3 - e->lambda2;
            e->residual = res[0] > res[1] ? res[0] : res[1];
            e->method = NCUT_EIG_KRYLOV;
            e->matvecs = k.matvecs;
            finish_vector(g, tmp, x);
            rc = 0;
            break;
        }
        if (k.matvecs >= KRYLOV_MAX_MATVECS) break;
        int ncand;
        if (k.m + KRYLOV_BLOCK > MB) {
            /* thick restart: the kk largest Ritz vectors become the basis; the residuals of the
             * first KRYLOV_BLOCK of them continue the Krylov sequence */
            memcpy(k.Q, tmp, (size_t)kk * n * sizeof *k.Q);
            memcpy(k.AQ, cand, (size_t)kk * n * sizeof *k.AQ);
            k.m = kk;
            for (int r = 0; r < kk; r++)
                for (int c = 0; c <= r; c++) {
                    double h = 0.5 * (cblas_ddot(n, k.Q + (size_t)r * n, 1, k.AQ + (size_t)c * n, 1) +
                                      cblas_ddot(n, k.Q + (size_t)c * n, 1, k.AQ + (size_t)r * n, 1));
                    k.H[r * MB + c] = k.H[c * MB + r] = h;
                }
            for (int t = 0; t < KRYLOV_BLOCK; t++)
                for (int i = 0; i < n; i++)
                    cand[(size_t)t * n + i] = k.AQ[(size_t)t * n + i] - theta[kk - 1 - t] * k.Q[(size_t)t * n + i];
            ncand = KRYLOV_BLOCK;
        } else {
            /* Krylov step: A times the last block */
            int last = k.m - added;
            memcpy(cand, k.AQ + (size_t)last * n, (size_t)added * n * sizeof *cand);
            ncand = added;
        }
        from = k.m;
        added = append_block(&k, cand, ncand);
    }
    free(tmp);
    free(S);
    free(Hc);
    free(cand);
    free(k.az);
    free(k.z);
    free(k.isd);
    free(k.v1);
    free(k.H);
    free(k.AQ);
    free(k.Q);
    return rc;
}

int ncut_eigen(const ncut_graph *g, double *x, ncut_eig *e)
{
    int rc = ncut_eigen_krylov(g, x, e);
    if (rc <= 0) return rc;
    return ncut_eigen_dense(g, x, e);
}
