/* decoders/graph.h — the affinity graph of the normalized cut (DESIGN.md, "Decoders: Graph").
 *
 *   f_i  = feats_i / ||feats_i||            (a zero row stays zero: its similarities, its own
 *                                            included, are 0)
 *   S    = F F^T                            cosine matrix, float32, exactly symmetric
 *   W_ij = 1        if S_ij >  tau          (binary edges)
 *          S_ij     if S_ij >= tau          (weighted edges)
 *          eps      otherwise,  eps = 1e-5  (self-loops kept: the diagonal follows the same rule)
 *   d_i  = sum_j W_ij
 *
 * The comparison with tau is made in float32 (S is float32 and tau is rounded to float32), as
 * NumPy compares a float32 array with a Python float.  W is never stored: the operator computes
 * its entries from S on the fly (S is shared by every (tau, edges) graph of an image), in double.
 *
 *     float *S = kc_malloc(n * n * sizeof *S);
 *     if (ncut_cosine(feats, n, dim, S, "img1") < 0) return -1;     // non-finite -> error
 *     ncut_graph g;
 *     ncut_graph_init(&g, S, n, 0.2, 0);                             // computes the degrees
 *     ncut_graph_apply(&g, X, Y, 4);                                  // Y = W X, four vectors
 *     ncut_graph_free(&g);
 */
#ifndef KC_NCUT_GRAPH_H
#define KC_NCUT_GRAPH_H

#define NCUT_EPS 1e-5

typedef struct ncut_graph {
    int n;
    const float *sim; /* (n, n) row-major cosine similarities, not owned */
    float tau;        /* rounded to float32, as the comparison is made */
    int weighted;     /* 0 binary, 1 weighted */
    double *deg;      /* (n) row sums of W, owned */
} ncut_graph;

/* S = normalised feats times its transpose.  feats: (n, dim) row-major; S: (n, n).  A non-finite
 * feature value is an error naming `what` (no NaN ever reaches BLAS or LAPACK). */
int ncut_cosine(const float *feats, int n, int dim, float *S, const char *what);
/* Binds S, rounds tau, computes the degrees. */
void ncut_graph_init(ncut_graph *g, const float *S, int n, double tau, int weighted);
void ncut_graph_free(ncut_graph *g);
/* One entry of W (the rule above), for the naive paths. */
double ncut_graph_weight(const ncut_graph *g, int i, int j);
/* Y = W X for nb vectors (1 <= nb <= 4).  X, Y: (nb, n), each vector contiguous.  Each row is a
 * fixed-order sum, so results do not depend on threads. */
void ncut_graph_apply(const ncut_graph *g, const double *X, double *Y, int nb);
/* Naive reference: W as a dense (n, n) double matrix. */
void ncut_graph_dense(const ncut_graph *g, double *W);
#endif
