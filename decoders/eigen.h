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
 * ncut_eigen_krylov  block Lanczos (block 4) with full reorthogonalisation (twice, classical
 *                    Gram-Schmidt) against v1 and the basis, Rayleigh-Ritz on the projected matrix
 *                    H = Q^T A Q (LAPACKE_dsyevr on the small problem), thick restart keeping the
 *                    12 largest Ritz vectors, stopping when the residuals ||A y - theta y|| of the
 *                    two largest Ritz pairs are below 1e-10.  A block of 4 also captures repeated
 *                    eigenvalues (mu2 = mu3 exactly on symmetric or complete graphs).  Breakdown
 *                    (an invariant subspace, e.g. a complete graph, where A v = 0 on v1-perp) is
 *                    continued with fresh deterministic random vectors.  Returns 1 when it does not
 *                    converge within its budget.
 * ncut_eigen         the Krylov solver, falling back to the dense one (small n, no convergence).
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
