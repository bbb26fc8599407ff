/* decoders/graph.h — the affinity graph of the normalized cut (docs/design.md, "Decoders: Graph").
 *
 *   f_i  = feats_i / ||feats_i||            (a zero row stays zero: its similarities, its own
 *                                            included, are 0)
 *   S    = F F^T                            cosine matrix, float32, exactly symmetric, the same bits
 *                                            on every path (ncut_cosine below)
 *   W_ij = 1        if S_ij >  tau          (binary edges)
 *          S_ij     if S_ij >= tau          (weighted edges)
 *          eps      otherwise,  eps = 1e-5  (self-loops kept: the diagonal follows the same rule)
 *   d_i  = sum_j W_ij
 *
 * The comparison with tau is made in float32 (S is float32 and tau is rounded to float32), as
 * NumPy compares a float32 array with a Python float.  W is never stored; S is shared by every
 * (tau, edges) graph of an image.  The product is written as
 *
 *   (W x)_i = eps * sum_j x_j  +  sum_{j in E_i} (w_ij - eps) x_j       E_i = the edges of row i
 *
 * and ncut_graph_init picks, row by row, the cheapest exact way to evaluate the second sum:
 *   edges list   the columns of E_i (and for weighted edges their S_ij): sparse rows, e.g. centred
 *                keys, where few cosines pass tau;
 *   gaps list    binary edges only: the columns of row i that are NOT edges, using
 *                sum_{E_i} x = sum_{active j} x_j - sum_{gaps} x_j, where a column is active unless
 *                its S row is all zero (a patch zeroed by an earlier round): the near-complete
 *                graphs of uncentred or random keys, where few cosines fail tau;
 *   dense        from the S row itself (weighted rows with many edges); up to four consecutive
 *                dense rows share one pass over X, each row keeping its own fixed-order sums.
 * All sums run in double in a fixed order, so results do not depend on threads.
 *
 *     float *S = kc_malloc(n * n * sizeof *S);
 *     if (ncut_cosine(feats, n, dim, S, "img1") < 0) return -1;     // non-finite -> error
 *     ncut_graph g;
 *     ncut_graph_init(&g, S, n, 0.2, 0);                             // lists, degrees
 *     ncut_graph_apply(&g, X, Y, 4);                                  // Y = W X, four vectors
 *     ncut_graph_free(&g);
 */
#ifndef KC_NCUT_GRAPH_H
#define KC_NCUT_GRAPH_H
#include <stdint.h>

#define NCUT_EPS 1e-5
#define NCUT_MAX_BLOCK 4 /* vectors per ncut_graph_apply */

enum { NCUT_ROW_EDGES = 0, NCUT_ROW_GAPS = 1, NCUT_ROW_DENSE = 2 };

typedef struct ncut_graph {
    int n;
    const float *sim; /* (n, n) row-major cosine similarities, not owned */
    float tau;        /* rounded to float32, as the comparison is made */
    int weighted;     /* 0 binary, 1 weighted */
    double *deg;      /* (n) row sums of W, owned */
    /* the product's form, chosen per row by ncut_graph_init (owned) */
    uint8_t *form;    /* (n) NCUT_ROW_* */
    uint8_t *active;  /* (n) 0 when the S row is all zero (used by gaps rows) */
    int64_t *start;   /* (n + 1) offsets into col / val */
    uint16_t *col;    /* listed columns */
    float *val;       /* weighted edges lists: S_ij of each listed column */
    double *scratch;  /* (NCUT_MAX_BLOCK, n) for dense rows: the graph is not for concurrent use */
    long listed;      /* entries in the lists, for the record */
    int dense_rows;
} ncut_graph;

/* S = normalised feats times its transpose.  feats: (n, dim) row-major; S: (n, n).  A non-finite
 * feature value is an error naming `what` (no NaN ever reaches BLAS or LAPACK).
 *
 * One answer on every path (docs/ties.md): S does not depend on the CPU, the kernel, the thread
 * count or the build.  u_i = f_i * fl32(1 / sqrt(sum_k f_ik^2)) (the sum in double, k in order;
 * each u_ik rounded to float32), then
 *   s_0 = 0,  s_{k+1} = s_k + u_ik u_jk  (in double, k = 0 .. dim-1 in order),  S_ij = fl32(s_dim).
 * A product of two floats is exact in double, so a fused multiply-add and a multiply then add give
 * the same bits: FMA contraction (NATIVE=1 or not) cannot change S; the vector kernels (AVX2,
 * AVX-512) give one (i, j) sum per lane, so the vector width cannot either; S_ij and S_ji are the
 * same sum, so S is exactly symmetric.  The only rounding beyond float32 is the double sum's,
 * |error| <= dim * 2^-53 sum_k |u_ik u_jk| <= dim * 1.1e-16: S_ij is the correctly rounded float32
 * of the exact dot product of the float32 unit vectors unless that lies within ~4e-14 of a float32
 * rounding boundary.  Cost: n^2 dim / 2 double multiply-adds (the upper triangle). */
int ncut_cosine(const float *feats, int n, int dim, float *S, const char *what);
/* The same with a chosen path (tests and benchmarks): every path gives the same bits. */
enum { NCUT_COS_AUTO = 0, NCUT_COS_AVX2 = 1, NCUT_COS_AVX512 = 2, NCUT_COS_SERIAL = 3 };
int ncut_cosine_path(const float *feats, int n, int dim, float *S, const char *what, int path);
/* Binds S, rounds tau, builds the per-row lists, computes the degrees. */
void ncut_graph_init(ncut_graph *g, const float *S, int n, double tau, int weighted);
void ncut_graph_free(ncut_graph *g);
/* One entry of W (the rule above), for the naive paths. */
double ncut_graph_weight(const ncut_graph *g, int i, int j);
/* Y = W X for nb vectors (1 <= nb <= NCUT_MAX_BLOCK).  X, Y: (n, nb) row-major (the nb values of
 * one node together).  Fixed-order sums: results do not depend on threads. */
void ncut_graph_apply(const ncut_graph *g, const double *X, double *Y, int nb);
/* Naive reference: W as a dense (n, n) double matrix. */
void ncut_graph_dense(const ncut_graph *g, double *W);
#endif
