/* decoders/rules.c — see rules.h. */
#include "decoders/rules.h"

#include <math.h>
#include <string.h>

double ncut_split_value(const double *x, int n, int split)
{
    if (split == NCUT_SPLIT_ZERO) return 0.0;
    double s = 0;
    for (int i = 0; i < n; i++) s += x[i];
    return s / n;
}

int ncut_foreground(const double *x, int grid_h, int grid_w, int split, int rule, uint8_t *side)
{
    const int n = grid_h * grid_w;
    const double t = ncut_split_value(x, n, split);
    int in_p = 0;
    for (int i = 0; i < n; i++) in_p += side[i] = x[i] > t;
    int seed = -1;
    if (rule == NCUT_RULE_SEED) {
        seed = 0;
        for (int i = 1; i < n; i++)
            if (fabs(x[i]) > fabs(x[seed])) seed = i;
    } else if (rule == NCUT_RULE_CORNERS) {
        const int corner[4] = {0, grid_w - 1, (grid_h - 1) * grid_w, n - 1};
        int c = 0;
        for (int k = 0; k < 4; k++) c += side[corner[k]];
        seed = 0;
        if (c >= 3) {
            for (int i = 0; i < n; i++) side[i] = !side[i];
            for (int i = 1; i < n; i++)
                if (-x[i] > -x[seed]) seed = i;
        } else {
            for (int i = 1; i < n; i++)
                if (x[i] > x[seed]) seed = i;
        }
    } else { /* minority */
        if (n - in_p < in_p)
            for (int i = 0; i < n; i++) side[i] = !side[i];
        for (int i = 0; i < n; i++)
            if (side[i] && (seed < 0 || fabs(x[i]) > fabs(x[seed]))) seed = i;
    }
    return seed;
}

int ncut_component(const uint8_t *side, int grid_h, int grid_w, int seed, uint8_t *mask, int *queue)
{
    const int n = grid_h * grid_w;
    memset(mask, 0, (size_t)n);
    if (seed < 0 || seed >= n || !side[seed]) return 0;
    int head = 0, tail = 0;
    mask[seed] = 1;
    queue[tail++] = seed;
    while (head < tail) {
        int p = queue[head++], r = p / grid_w, c = p % grid_w;
        int nb[4] = {r > 0 ? p - grid_w : -1, r + 1 < grid_h ? p + grid_w : -1, c > 0 ? p - 1 : -1,
                     c + 1 < grid_w ? p + 1 : -1};
        for (int k = 0; k < 4; k++) {
            int q = nb[k];
            if (q >= 0 && side[q] && !mask[q]) {
                mask[q] = 1;
                queue[tail++] = q;
            }
        }
    }
    return tail;
}

int ncut_seed_mask(const double *x, int grid_h, int grid_w, int split, int rule, uint8_t *side, int *queue,
                   uint8_t *mask)
{
    int seed = ncut_foreground(x, grid_h, grid_w, split, rule, side);
    return ncut_component(side, grid_h, grid_w, seed, mask, queue);
}
