/* decoders/eigen.h — the second-smallest generalized eigenpair of the normalized cut.
 *
 *   (D - W) x = lambda D x   <=>   L y = lambda y,  L = I - D^-1/2 W D^-1/2,  x = D^-1/2 y
 *
 * L's smallest eigenvalue is 0 with eigenvector D^1/2 1 (W has no zero entry: the graph is
 * connected).  We want lambda2 <= lambda3 and y2; eigengap = lambda3 - lambda2.  Equivalently
 * mu = 1 - lambda are the largest eigenvalues of A = D^-1/2 W D^-1/2 once its top eigenvector
 * v1 = D^1/2 1 / ||D^1/2 1|| (mu = 1) is deflated.
 *
 * ncut_eigen_dense   the naive reference and the fallback: L as a dense double matrix,
 *                    LAPACKE_dsyevr for indices 2..3 only (O(n^3), ~15-40 ms at n = 900).
 * ncut_eigen_krylov  block Lanczos (block 2, so that a double eigenvalue mu2 = mu3 of symmetric or
 *                    complete graphs is seen) with full reorthogonalisation (classical Gram-Schmidt,
 *                    twice, by BLAS-3 against v1 and the whole basis, no restart), Rayleigh-Ritz on
 *                    the block-tridiagonal projected matrix (LAPACKE_dsyevr, the three largest),
 *                    residuals from the last block's coupling.  Stopping rule, A's eigenvalues mu:
 *                      the wanted pair (mu2, y2):  ||A y - mu y|| <= clamp(1e-8 * gap, 1e-13, 1e-10)
 *                        (Davis-Kahan: the angle to the eigenvector is at most residual / gap);
 *                      the third eigenvalue mu3 (only its value is used, for the eigengap): its
 *                        error estimate min(r3, r3^2 / (mu3 - mu4)) <= 1e-10;
 *                      a degenerate gap (< 1e-6): both residuals <= 1e-10.
 *                    Rayleigh-Ritz runs at basis size 12, then at steps extrapolated from the
 *                    residuals' geometric decay.  The final residual is measured by one more product
 *                    (e.residual); an estimate that lied, or a basis beyond 240 vectors, returns 1.
 *                    A breakdown (invariant subspace, e.g. a complete graph where A v = 0 on v1-perp)
 *                    continues with fresh deterministic random vectors.  Products go through
 *                    ncut_graph_apply, which uses per-row edge / gap lists (graph.h): the
 *                    near-complete graphs of uncentred or random keys, which need the most products
 *                    (lambda2 near 1, small eigengap), have the cheapest ones.
 * ncut_eigen         the Krylov solver, falling back to the dense one (small n, no convergence);
 *                    the environment variable KC_NCUT_SOLVER=dense forces the dense one (tests
 *                    compare the two paths: tests/test_determinism.sh).
 *
 * The result x is normalised by x^T D x = 1 (as scipy.linalg.eigh(D - W, D) returns it) and its
 * sign is canonical: the entry of largest magnitude is positive (ties: lowest index).
 *
 *     ncut_eig e;
 *     double *x = kc_malloc(n * sizeof *x);
 *     if (ncut_eigen(&graph, x, &e) < 0) return -1;
 *     if (e.eigengap < NCUT_DEGENERATE_GAP) ...   // cut undefined
 */
#ifndef KC_NCUT_EIGEN_H
#define KC_NCUT_EIGEN_H
#include "decoders/graph.h"

#define NCUT_DEGENERATE_GAP 1e-6

enum { NCUT_EIG_KRYLOV = 0, NCUT_EIG_DENSE = 1 };

typedef struct ncut_eig {
    double lambda2, lambda3, eigengap;
    double residual; /* largest residual of the two Ritz pairs (Krylov), 0 for dense */
    int method;      /* NCUT_EIG_KRYLOV or NCUT_EIG_DENSE */
    int matvecs;     /* products with A (Krylov) */
} ncut_eig;

/* x: (n) output.  All return -1 with a message on failure (LAPACK error). */
int ncut_eigen_dense(const ncut_graph *g, double *x, ncut_eig *e);
int ncut_eigen_krylov(const ncut_graph *g, double *x, ncut_eig *e); /* 1: not converged */
int ncut_eigen(const ncut_graph *g, double *x, ncut_eig *e);
/* Makes the largest-magnitude entry positive (ties: lowest index). */
void ncut_canonical_sign(double *x, int n);
#endif
