/* decoders/ties.h — decisions on the eigenvector that do not depend on rounding (docs/ties.md).
 *
 * Every decision that reads x (the canonical sign, the split, the seed) compares values relative
 * to M = max_i |x_i| with three thresholds:
 *
 *   d <= NCUT_TIE_CLEAR * M   (5e-7)  a clear tie: the values are equal
 *   d <= NCUT_TIE       * M   (1e-6)  tied (the decision rule below), but too close to call
 *   d <= NCUT_TIE_KNIFE * M   (2e-6)  distinct, but too close to call
 *   otherwise                         distinct
 *
 * A decision is a *knife edge* when a distance that could change its outcome lies in (5e-7 M, 2e-6 M]:
 * for the sign, a candidate of the other sign; for the seed, a candidate outside the winner's
 * component; for the split, an entry that is the seed, in the mask or next to it, a corner (corners
 * rule), or any entry when the band could swap the minority side (minority rule: also an entry that
 * could become the seed).  A solver
 * error below 2.5e-7 M per entry (docs/ties.md derives and measures it: 1.3e-8 M at worst between
 * the Krylov and the dense solver) cannot move a distance from outside that band across the 1e-6 M
 * line, so a decision that is not a knife edge comes out the same on every path.  The margin of a
 * decision is its smallest distance above 5e-7 M, over M.
 *
 *   sign      the entry of largest |x| is positive: candidates |x_i| >= M - 1e-6 M, the lowest
 *             row-major index wins;
 *   split     P = { i : x_i - t > 1e-6 M }, t = mean(x) or 0 (an entry on the split is not in P);
 *             distances |x_i - t|;
 *   seed      argmax of v (|x|, x or -x, over F for minority): candidates v_i >= vmax - 1e-6 M,
 *             the lowest index wins; distances vmax - v_i.
 *
 * Structural ties: two patches whose rows of W are identical (binary edges: their cosines fall on
 * the same side of tau for every patch, themselves included; zeroed patches of later rounds) have
 * equal entries of x in exact arithmetic ((1 - lambda) d_i x_i = (W x)_i).  A candidate of an
 * argmax in the band (5e-7 M, 2e-6 M] from the best takes the distance of the first earlier
 * candidate within 5e-7 M of its own value whose row of W is identical (ncut_rows_same, O(n) per
 * comparison, at most 64 comparisons): the two are tied whatever x says.
 *
 * The eigenpair itself is too close to call when the eigengap is below NCUT_GAP_KNIFE (1e-5; the
 * eigenvector's error grows as residual / gap) but not far below the degenerate threshold 1e-6
 * (at or above 0.9e-6): such rounds set the knife flag too.
 *
 *     ncut_rows r = {S, zero, n, tau, weighted};          // W's rows, for structural ties
 *     double margin = INFINITY;
 *     ncut_sign_tied(x, n, &r, &margin);
 *     int area = ncut_seed_mask_tied(x, grid_h, grid_w, split, rule, &r, side, queue, mask, &margin, NULL);
 *     int knife = margin <= NCUT_TIE_KNIFE;
 */
#ifndef KC_NCUT_TIES_H
#define KC_NCUT_TIES_H
#include <stdint.h>

#define NCUT_TIE_CLEAR 5e-7 /* relative to max|x|: below, a clear tie */
#define NCUT_TIE 1e-6       /* the tie tolerance */
#define NCUT_TIE_KNIFE 2e-6 /* above, clearly distinct */
#define NCUT_GAP_KNIFE 1e-5 /* an eigengap in [0.9e-6, 1e-5): knife edge */
#define NCUT_GAP_KNIFE_LO 0.9e-6

/* The rows of W that a decision may compare (the graph of one solve). */
typedef struct ncut_rows {
    const float *S;      /* (n, n) cosine matrix before zeroing */
    const uint8_t *zero; /* (n) patches zeroed by earlier rounds (their S rows and columns are 0), or NULL */
    int n;
    double tau;
    int weighted;
} ncut_rows;

/* 1 when rows i and j of W are identical (O(n)).  rows NULL: 0. */
int ncut_rows_same(const ncut_rows *rows, int i, int j);
/* Canonical sign with ties (above).  margin: min-updated. */
void ncut_sign_tied(double *x, int n, const ncut_rows *rows, double *margin);
/* ncut_seed_mask (rules.h) with ties: side (n) gets F, mask (n) the seed's component (queue: (n)
 * scratch); returns its area.  margin: min-updated with the split's and the seed's margins; seed
 * (may be NULL): the seed, -1 when F is empty. */
int ncut_seed_mask_tied(const double *x, int grid_h, int grid_w, int split, int rule, const ncut_rows *rows,
                        uint8_t *side, int *queue, uint8_t *mask, double *margin, int *seed);
/* 1 when an eigengap is too close to call (above). */
int ncut_gap_knife(double eigengap);
#endif
