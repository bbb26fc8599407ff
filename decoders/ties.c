/* decoders/ties.c — see ties.h. */
#include "decoders/ties.h"

#include <math.h>
#include <string.h>

#include "decoders/graph.h"
#include "decoders/rules.h"

enum { MAX_GROUPED = 64 }; /* candidates compared row by row, at most */

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

/* The argmax with ties of v over the candidates (cand NULL: all; else cand[i] != 0), distances
 * relative to M.  mode 0: v = |x|, 1: v = x, 2: v = -x.  Returns -1 when there is no candidate. */
static int argmax_tied(const double *x, int n, int mode, const uint8_t *cand, double M, const ncut_rows *rows,
                       double *margin)
{
#define V(i) (mode == 0 ? fabs(x[i]) : mode == 1 ? x[i] : -x[i])
    int best = -1;
    for (int i = 0; i < n; i++)
        if ((!cand || cand[i]) && (best < 0 || V(i) > V(best))) best = i;
    if (best < 0 || !(M > 0)) return best;
    const double vmax = V(best);
    /* candidates within the knife band, in index order, grouped by identical rows of W */
    int idx[MAX_GROUPED], grp[MAX_GROUPED], k = 0, overflow = 0;
    double gd[MAX_GROUPED]; /* per group: its smallest distance */
    for (int i = 0; i < n; i++) {
        if (cand && !cand[i]) continue;
        double d = (vmax - V(i)) / M;
        if (d > NCUT_TIE_KNIFE) {
            note(d, margin);
            continue;
        }
        if (k == MAX_GROUPED) {
            overflow = 1;
            note(d, margin);
            continue;
        }
        int g = k;
        for (int q = 0; q < k && g == k; q++)
            if (grp[q] == q && ncut_rows_same(rows, idx[q], i)) g = q;
        idx[k] = i;
        grp[k] = g;
        gd[k] = d;
        if (g != k && d < gd[g]) gd[g] = d;
        k++;
    }
    (void)overflow;
    int win = -1;
    for (int q = 0; q < k; q++) {
        double d = gd[grp[q]];
        if (grp[q] == q) note(d, margin); /* one distance per group */
        if (win < 0 && d <= NCUT_TIE) win = idx[q];
    }
    return win;
#undef V
}

void ncut_sign_tied(double *x, int n, const ncut_rows *rows, double *margin)
{
    const double M = max_abs(x, n);
    int s = argmax_tied(x, n, 0, NULL, M, rows, margin);
    if (s >= 0 && x[s] < 0)
        for (int i = 0; i < n; i++) x[i] = -x[i];
}

int ncut_gap_knife(double eigengap)
{
    return eigengap >= NCUT_GAP_KNIFE_LO && eigengap < NCUT_GAP_KNIFE;
}

int ncut_foreground_tied(const double *x, int grid_h, int grid_w, int split, int rule, const ncut_rows *rows,
                         uint8_t *side, double *margin)
{
    const int n = grid_h * grid_w;
    const double M = max_abs(x, n), t = ncut_split_value(x, n, split);
    int in_p = 0;
    for (int i = 0; i < n; i++) {
        double d = x[i] - t;
        in_p += side[i] = M > 0 && d > NCUT_TIE * M;
        if (M > 0) note(fabs(d) / M, margin);
    }
    if (rule == NCUT_RULE_SEED) return argmax_tied(x, n, 0, NULL, M, rows, margin);
    if (rule == NCUT_RULE_CORNERS) {
        const int corner[4] = {0, grid_w - 1, (grid_h - 1) * grid_w, n - 1};
        int c = 0;
        for (int k = 0; k < 4; k++) c += side[corner[k]];
        if (c >= 3) {
            for (int i = 0; i < n; i++) side[i] = !side[i];
            return argmax_tied(x, n, 2, NULL, M, rows, margin);
        }
        return argmax_tied(x, n, 1, NULL, M, rows, margin);
    }
    /* minority */
    if (n - in_p < in_p)
        for (int i = 0; i < n; i++) side[i] = !side[i];
    return argmax_tied(x, n, 0, side, M, rows, margin);
}
