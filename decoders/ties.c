/* decoders/ties.c — see ties.h. */
#include "decoders/ties.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/graph.h"
#include "decoders/rules.h"
#include "pipeline/kc.h"

enum { MAX_GROUPS = 64 }; /* rows compared, at most, per candidate */

static inline double w_of(const ncut_rows *r, int i, int k)
{
    float s = (r->zero && (r->zero[i] || r->zero[k])) ? 0.0f : r->S[(size_t)i * r->n + k];
    float t = (float)r->tau;
    if (r->weighted) return s >= t ? (double)s : NCUT_EPS;
    return s > t ? 1.0 : NCUT_EPS;
}

int ncut_rows_same(const ncut_rows *r, int i, int j)
{
    if (!r || !r->S) return 0;
    if (i == j) return 1;
    for (int k = 0; k < r->n; k++)
        if (w_of(r, i, k) != w_of(r, j, k)) return 0;
    return 1;
}

static double max_abs(const double *x, int n)
{
    double m = 0;
    for (int i = 0; i < n; i++)
        if (fabs(x[i]) > m) m = fabs(x[i]);
    return m;
}

static inline void note(double d, double *margin)
{
    if (d > NCUT_TIE_CLEAR && d < *margin) *margin = d;
}

/* The candidates of one argmax within the knife band of the best, grouped by identical rows. */
typedef struct near_set {
    int k;
    int *idx;  /* (k) in index order */
    double *d; /* (k) the distance of the candidate's group (its smallest member's) */
    double vmax;
} near_set;

#define V(i) (mode == 0 ? fabs(x[i]) : mode == 1 ? x[i] : -x[i])

/* The argmax with ties of v over the candidates (cand NULL: all; else cand[i] != 0), distances
 * relative to M.  mode 0: v = |x|, 1: v = x, 2: v = -x.  Returns -1 when there is no candidate.
 * ns->idx, ns->d: (n) buffers.  A band candidate (d > 5e-7) takes the distance of the first earlier
 * candidate within 5e-7 M of its value whose row of W is identical (at most 64 rows compared). */
static int argmax_tied(const double *x, int n, int mode, const uint8_t *cand, double M, const ncut_rows *rows,
                       near_set *ns)
{
    int best = -1;
    ns->k = 0;
    for (int i = 0; i < n; i++)
        if ((!cand || cand[i]) && (best < 0 || V(i) > V(best))) best = i;
    if (best < 0 || !(M > 0)) return best;
    ns->vmax = V(best);
    for (int i = 0; i < n; i++) {
        if (cand && !cand[i]) continue;
        double d = (ns->vmax - V(i)) / M;
        if (d > NCUT_TIE_KNIFE) continue;
        int k = ns->k;
        ns->idx[k] = i;
        ns->d[k] = d;
        if (d > NCUT_TIE_CLEAR)
            for (int q = 0, tried = 0; q < k && tried < MAX_GROUPS; q++) {
                int j = ns->idx[q];
                if (fabs(V(j) - V(i)) > NCUT_TIE_CLEAR * M) continue;
                tried++;
                if (ncut_rows_same(rows, j, i)) {
                    if (ns->d[q] < d) ns->d[k] = ns->d[q];
                    break;
                }
            }
        ns->k++;
    }
    for (int q = 0; q < ns->k; q++)
        if (ns->d[q] <= NCUT_TIE) return ns->idx[q];
    return -1;
}

/* The margin of the argmax's outcome (same: (n) 1 where the outcome is the winner's; NULL: sign
 * mode, the outcome is the sign of x_i).  On another path the tie set T holds every clear tie (d <=
 * 5e-7 M) and some of the band (5e-7 M, 2e-6 M], so the possible winners are the first clear tie
 * and every band candidate of a lower index; one of them with another outcome than the winner
 * makes a knife edge (margin: the band distance of the pair).  Farther candidates of another
 * outcome only lower the margin reported. */
static void note_others(const double *x, int n, int mode, const uint8_t *cand, double M, const near_set *ns,
                        const uint8_t *same, int win, double *margin)
{
    if (win < 0 || !(M > 0)) return;
#define OTHER(i) (same ? !same[i] : (x[i] < 0) != (x[win] < 0))
    int first_clear = n;
    double d_win = 0;
    for (int q = 0; q < ns->k; q++) {
        if (ns->d[q] <= NCUT_TIE_CLEAR && ns->idx[q] < first_clear) first_clear = ns->idx[q];
        if (ns->idx[q] == win) d_win = ns->d[q];
    }
    for (int q = 0; q < ns->k; q++) {
        int i = ns->idx[q];
        double d = ns->d[q];
        int possible = d <= NCUT_TIE_CLEAR ? i == first_clear : i < first_clear;
        if (possible && OTHER(i)) note(fmax(d, d_win), margin);
    }
    double far = INFINITY;
    for (int i = 0; i < n; i++) {
        if ((cand && !cand[i]) || !OTHER(i)) continue;
        double d = (ns->vmax - V(i)) / M;
        if (d > NCUT_TIE_KNIFE && d < far) far = d;
    }
    note(far, margin);
#undef OTHER
}
#undef V

void ncut_sign_tied(double *x, int n, const ncut_rows *rows, double *margin)
{
    const double M = max_abs(x, n);
    near_set ns = {0, kc_malloc((size_t)n * sizeof(int)), kc_malloc((size_t)n * sizeof(double)), 0};
    int s = argmax_tied(x, n, 0, NULL, M, rows, &ns);
    note_others(x, n, 0, NULL, M, &ns, NULL, s, margin);
    free(ns.idx);
    free(ns.d);
    if (s >= 0 && x[s] < 0)
        for (int i = 0; i < n; i++) x[i] = -x[i];
}

int ncut_gap_knife(double eigengap)
{
    return eigengap >= NCUT_GAP_KNIFE_LO && eigengap < NCUT_GAP_KNIFE;
}

int ncut_seed_mask_tied(const double *x, int grid_h, int grid_w, int split, int rule, const ncut_rows *rows,
                        uint8_t *side, int *queue, uint8_t *mask, double *margin, int *seed_out)
{
    const int n = grid_h * grid_w;
    const double M = max_abs(x, n), t = ncut_split_value(x, n, split);
    int in_p = 0;
    for (int i = 0; i < n; i++) in_p += side[i] = M > 0 && x[i] - t > NCUT_TIE * M;
    int mode = 0;
    const uint8_t *cand = NULL;
    if (rule == NCUT_RULE_CORNERS) {
        const int corner[4] = {0, grid_w - 1, (grid_h - 1) * grid_w, n - 1};
        int c = 0;
        for (int k = 0; k < 4; k++) c += side[corner[k]];
        mode = 1;
        if (c >= 3) {
            for (int i = 0; i < n; i++) side[i] = !side[i];
            mode = 2;
        }
    } else if (rule == NCUT_RULE_MINORITY) {
        if (n - in_p < in_p)
            for (int i = 0; i < n; i++) side[i] = !side[i];
        cand = side;
    }
    near_set ns = {0, kc_malloc((size_t)n * sizeof(int)), kc_malloc((size_t)n * sizeof(double)), 0};
    int seed = argmax_tied(x, n, mode, cand, M, rows, &ns);
    int area = ncut_component(side, grid_h, grid_w, seed, mask, queue);
    note_others(x, n, mode, cand, M, &ns, mask, seed, margin);
    free(ns.idx);
    free(ns.d);
    if (seed_out) *seed_out = seed;
    if (!(M > 0)) return area;
    /* the split: an entry whose distance to the split value is in the band may change side on
     * another path; that changes the mask when the entry is the seed, in the mask or next to it, a
     * corner (corners), or when it can swap the minority side or become the minority seed */
    int band = 0;
    for (int i = 0; i < n; i++) {
        double d = fabs(x[i] - t) / M;
        band += d > NCUT_TIE_CLEAR && d <= NCUT_TIE_KNIFE;
    }
    const int gap_sizes = abs(n - 2 * in_p);
    const double vseed = seed >= 0 ? fabs(x[seed]) : 0;
    for (int i = 0; i < n; i++) {
        double d = fabs(x[i] - t) / M;
        if (d <= NCUT_TIE_CLEAR) continue;
        int r = i / grid_w, c = i % grid_w;
        int matters = i == seed || mask[i] || (r > 0 && mask[i - grid_w]) || (r + 1 < grid_h && mask[i + grid_w]) ||
                      (c > 0 && mask[i - 1]) || (c + 1 < grid_w && mask[i + 1]);
        if (rule == NCUT_RULE_CORNERS)
            matters |= i == 0 || i == grid_w - 1 || i == (grid_h - 1) * grid_w || i == n - 1;
        if (rule == NCUT_RULE_MINORITY)
            matters |= gap_sizes <= 2 * band || fabs(x[i]) >= vseed - NCUT_TIE_KNIFE * M;
        if (matters) note(d, margin);
    }
    return area;
}
