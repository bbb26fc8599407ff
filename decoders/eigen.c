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
    KRYLOV_BLOCK = 2,       /* vectors per block (<= NCUT_MAX_BLOCK) */
    KRYLOV_MAX_BASIS = 240, /* basis size; beyond it the dense solver takes over */
    KRYLOV_MIN_N = 200,     /* below this the dense solver is cheap: use it */
    KRYLOV_FIRST_CHECK = 12,/* basis size of the first Rayleigh-Ritz */
};
/* stopping rule, see eigen.h */
#define TOL_VEC_MAX 1e-10  /* residual of the wanted pair, at most */
#define TOL_VEC_MIN 1e-13  /* ... and at least */
#define TOL_VEC_GAP 1e-8   /* ... times the eigengap (Davis-Kahan: angle <= residual / gap) */
#define TOL_VAL 1e-10      /* error estimate of the third eigenvalue: min(r, r^2 / gap to the next) */

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

/* ---- block Lanczos ---------------------------------------------------------------------------- */

typedef struct lanczos {
    const ncut_graph *g;
    int n, b, m;      /* vectors per block, basis size */
    double *Q;        /* (KRYLOV_MAX_BASIS + b, n) orthonormal basis, on v1-perp */
    double *T;        /* (KRYLOV_MAX_BASIS + b)^2 projected matrix, block tridiagonal */
    double *v1, *isd; /* (n) deflated top eigenvector D^1/2 1 / ||.||, D^-1/2 */
    double *X, *Y;    /* (n, b) interleaved product buffers */
    double *C;        /* (KRYLOV_MAX_BASIS + b, b) projection coefficients */
    uint64_t rng;
    int matvecs;
} lanczos;

static double rand_unit(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (double)(*s >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

/* Z (nb, n) := A Z, A = D^-1/2 W D^-1/2 */
static void apply_A(lanczos *k, double *Z, int nb)
{
    const int n = k->n;
    for (int i = 0; i < n; i++)
        for (int c = 0; c < nb; c++) k->X[(size_t)i * nb + c] = Z[(size_t)c * n + i] * k->isd[i];
    ncut_graph_apply(k->g, k->X, k->Y, nb);
    for (int c = 0; c < nb; c++)
        for (int i = 0; i < n; i++) Z[(size_t)c * n + i] = k->Y[(size_t)i * nb + c] * k->isd[i];
    k->matvecs += nb;
}

/* Z (nb, n) -= projections on v1 and the first m rows of Q; C (m, nb) gets the coefficients */
static void project_out(lanczos *k, double *Z, int nb, int m, double *C)
{
    const int n = k->n;
    for (int c = 0; c < nb; c++) {
        double *z = Z + (size_t)c * n;
        cblas_daxpy(n, -cblas_ddot(n, k->v1, 1, z, 1), k->v1, 1, z, 1);
    }
    if (m == 0) return;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, nb, n, 1.0, k->Q, n, Z, n, 0.0, C, nb);
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, nb, n, m, -1.0, C, nb, k->Q, n, 1.0, Z, n);
}

/* Orthonormalises the nb rows of Z against v1 and Q[0, m), then among themselves, appending them to
 * Q at row m.  L (nb, nb): z_l = sum_c L[l][c] q_(m+c) + (parts along the old basis).  A direction
 * lost to cancellation (an invariant subspace) is replaced by a fresh random vector, L[l][l] = 0. */
static void append_block(lanczos *k, double *Z, int nb, double *L)
{
    const int n = k->n, m = k->m;
    double znorm[NCUT_MAX_BLOCK];
    for (int c = 0; c < nb; c++) znorm[c] = cblas_dnrm2(n, Z + (size_t)c * n, 1);
    project_out(k, Z, nb, m, k->C);
    project_out(k, Z, nb, m, k->C);
    memset(L, 0, (size_t)nb * nb * sizeof *L);
    for (int l = 0; l < nb; l++) {
        double *z = Z + (size_t)l * n;
        for (int pass = 0; pass < 2; pass++)
            for (int c = 0; c < l; c++) {
                const double *q = k->Q + (size_t)(m + c) * n;
                double a = cblas_ddot(n, q, 1, z, 1);
                cblas_daxpy(n, -a, q, 1, z, 1);
                L[l * nb + c] += a;
            }
        double nrm = cblas_dnrm2(n, z, 1);
        if (nrm > 1e-10 * znorm[l] && nrm > 1e-14) {
            if (nrm < 1e-3 * znorm[l]) { /* heavy cancellation: once more against everything */
                project_out(k, z, 1, m + l, k->C);
                nrm = cblas_dnrm2(n, z, 1);
            }
            L[l * nb + l] = nrm;
        } else {
            /* breakdown (z_l lies in the span so far): a random direction orthogonal to it all */
            for (int tries = 0; tries < 8; tries++) {
                for (int i = 0; i < n; i++) z[i] = rand_unit(&k->rng);
                project_out(k, z, 1, m + l, k->C);
                project_out(k, z, 1, m + l, k->C);
                nrm = cblas_dnrm2(n, z, 1);
                if (nrm > 1e-6) break;
            }
            L[l * nb + l] = 0;
        }
        cblas_dscal(n, 1.0 / nrm, z, 1);
        memcpy(k->Q + (size_t)(m + l) * n, z, (size_t)n * sizeof *z);
    }
    k->m = m + nb;
}

int ncut_eigen_krylov(const ncut_graph *g, double *x, ncut_eig *e)
{
    const int n = g->n, b = KRYLOV_BLOCK;
    if (n < KRYLOV_MIN_N) return 1;
    int mmax = (n - 2) / b * b;
    if (mmax > KRYLOV_MAX_BASIS) mmax = KRYLOV_MAX_BASIS;
    const int MT = mmax + b;
    lanczos k = {.g = g, .n = n, .b = b, .m = 0, .rng = 0x9e3779b97f4a7c15ull, .matvecs = 0};
    k.Q = kc_malloc((size_t)MT * n * sizeof *k.Q);
    k.T = kc_calloc((size_t)MT * MT, sizeof *k.T);
    k.v1 = kc_malloc((size_t)n * sizeof *k.v1);
    k.isd = kc_malloc((size_t)n * sizeof *k.isd);
    k.X = kc_malloc((size_t)n * b * sizeof *k.X);
    k.Y = kc_malloc((size_t)n * b * sizeof *k.Y);
    k.C = kc_malloc((size_t)MT * b * sizeof *k.C);
    double *Z = kc_malloc((size_t)(b < 2 ? 2 : b) * n * sizeof *Z);
    double *H = kc_malloc((size_t)mmax * mmax * sizeof *H);
    double *S = kc_malloc((size_t)mmax * 3 * sizeof *S); /* (m, 3) Ritz coefficients, ascending */
    lapack_int *isuppz = kc_malloc((size_t)2 * mmax * sizeof *isuppz);
    double L[NCUT_MAX_BLOCK * NCUT_MAX_BLOCK];
    double dsum = 0;
    for (int i = 0; i < n; i++) dsum += g->deg[i];
    for (int i = 0; i < n; i++) {
        k.v1[i] = sqrt(g->deg[i] / dsum);
        k.isd[i] = 1.0 / sqrt(g->deg[i]);
    }
    for (int i = 0; i < b * n; i++) Z[i] = rand_unit(&k.rng);
    append_block(&k, Z, b, L);
    int rc = 1, next_check = KRYLOV_FIRST_CHECK;
    double prev_r[2] = {0, 0};
    int prev_m = 0;
    while (k.m + b <= MT) {
        /* A times the last block; its diagonal block of T; the next block and its coupling */
        const int j0 = k.m - b;
        memcpy(Z, k.Q + (size_t)j0 * n, (size_t)b * n * sizeof *Z);
        apply_A(&k, Z, b);
        for (int r = 0; r < b; r++)
            for (int c = 0; c <= r; c++) {
                double h = 0.5 * (cblas_ddot(n, k.Q + (size_t)(j0 + r) * n, 1, Z + (size_t)c * n, 1) +
                                  cblas_ddot(n, k.Q + (size_t)(j0 + c) * n, 1, Z + (size_t)r * n, 1));
                k.T[(size_t)(j0 + r) * MT + j0 + c] = k.T[(size_t)(j0 + c) * MT + j0 + r] = h;
            }
        const int m = k.m; /* T is known on [0, m); L couples block [j0, m) to the next */
        if (m + b > MT) break;
        append_block(&k, Z, b, L);
        for (int l = 0; l < b; l++)
            for (int c = 0; c < b; c++)
                k.T[(size_t)(m + c) * MT + j0 + l] = k.T[(size_t)(j0 + l) * MT + m + c] = L[l * b + c];
        if (m < next_check || m < 3) continue;
        /* Rayleigh-Ritz on T[0, m): the three largest */
        for (int r = 0; r < m; r++) memcpy(H + (size_t)r * m, k.T + (size_t)r * MT, (size_t)m * sizeof *H);
        double theta[KRYLOV_MAX_BASIS];
        lapack_int found = 0;
        lapack_int info = LAPACKE_dsyevr(LAPACK_ROW_MAJOR, 'V', 'I', 'U', m, H, m, 0.0, 0.0, m - 2, m,
                                         LAPACKE_dlamch('S'), &found, theta, S, 3, isuppz);
        if (info != 0 || found != 3) {
            rc = kc_fail("LAPACKE_dsyevr failed on a %d x %d projected matrix (info %d)", m, m, (int)info);
            break;
        }
        /* residual of Ritz pair t (t = 0: the largest): || L^T s_t[last block] || */
        double res[3];
        for (int t = 0; t < 3; t++) {
            double r2 = 0;
            for (int c = 0; c < b; c++) {
                double v = 0;
                for (int l = 0; l < b; l++) v += L[l * b + c] * S[(size_t)(j0 + l) * 3 + 2 - t];
                r2 += v * v;
            }
            res[t] = sqrt(r2);
        }
        const double mu2 = theta[2], mu3 = theta[1], mu4 = theta[0];
        double gap = mu2 - mu3, tol_vec = TOL_VEC_GAP * gap;
        if (tol_vec > TOL_VEC_MAX) tol_vec = TOL_VEC_MAX;
        if (tol_vec < TOL_VEC_MIN) tol_vec = TOL_VEC_MIN;
        double gap34 = mu3 - mu4, err3 = res[1];
        if (gap34 > 0 && res[1] * res[1] / gap34 < err3) err3 = res[1] * res[1] / gap34;
        int ok_vec = res[0] <= tol_vec, ok_val = err3 <= TOL_VAL;
        if (gap < NCUT_DEGENERATE_GAP) { /* no cut: only the eigengap's smallness must be sure */
            tol_vec = TOL_VEC_MAX;
            ok_vec = res[0] <= tol_vec;
            ok_val = res[1] <= tol_vec;
        }
        if (ok_vec && ok_val) {
            /* y = Q s, checked by one more product */
            double *y = Z, *ay = Z + n;
            cblas_dgemv(CblasRowMajor, CblasTrans, m, n, 1.0, k.Q, n, S + 2, 3, 0.0, y, 1);
            memcpy(ay, y, (size_t)n * sizeof *y);
            apply_A(&k, ay, 1);
            double r2 = 0;
            for (int i = 0; i < n; i++) r2 += (ay[i] - mu2 * y[i]) * (ay[i] - mu2 * y[i]);
            e->residual = sqrt(r2);
            if (e->residual > 100 * tol_vec + 1e-14) break; /* the estimate lied: fall back */
            e->lambda2 = 1.0 - mu2;
            e->lambda3 = 1.0 - mu3;
            e->eigengap = e->lambda3 - e->lambda2;
            e->method = NCUT_EIG_KRYLOV;
            e->matvecs = k.matvecs;
            finish_vector(g, y, x);
            rc = 0;
            break;
        }
        /* next check: extrapolate the residuals' geometric decay from the previous check */
        int steps = 1;
        if (prev_m > 0) {
            double need = 0;
            double now[2] = {res[0] / tol_vec, sqrt(err3 / TOL_VAL)};
            for (int t = 0; t < 2; t++) {
                if (now[t] <= 1 || prev_r[t] <= now[t]) continue;
                double per_step = log(prev_r[t] / now[t]) / ((m - prev_m) / b);
                double s = log(now[t]) / per_step;
                if (s > need) need = s;
            }
            steps = (int)(0.7 * need);
            if (steps < 1) steps = 1;
            if (steps > 8) steps = 8;
        }
        prev_r[0] = res[0] / tol_vec;
        prev_r[1] = sqrt(err3 / TOL_VAL);
        prev_m = m;
        next_check = m + steps * b;
    }
    free(isuppz);
    free(S);
    free(H);
    free(Z);
    free(k.C);
    free(k.Y);
    free(k.X);
    free(k.isd);
    free(k.v1);
    free(k.T);
    free(k.Q);
    return rc;
}

int ncut_eigen(const ncut_graph *g, double *x, ncut_eig *e)
{
    const char *force = getenv("KC_NCUT_SOLVER"); /* tests: "dense" forces the LAPACKE path */
    if (force && !strcmp(force, "dense")) return ncut_eigen_dense(g, x, e);
    int rc = ncut_eigen_krylov(g, x, e);
    if (rc <= 0) return rc;
    return ncut_eigen_dense(g, x, e);
}
