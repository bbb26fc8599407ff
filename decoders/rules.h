/* decoders/rules.h — from the eigenvector to one mask: split, foreground rule, seed component.
 *
 * x: (grid_h * grid_w) row-major, sign already canonical (eigen.h).  All argmax / argmin ties go
 * to the lowest row-major index.
 *   split  mean:  P = { i : x_i > mean(x) }        zero:  P = { i : x_i > 0 }
 *   rule   seed:      F = P, s = argmax |x_i|
 *          corners:   c = number of the 4 grid corners in P;  c >= 3: F = not P, s = argmax(-x_i)
 *                                                             else:   F = P,     s = argmax(x_i)
 *          minority:  F = the side with fewer patches (P on a tie), s = argmax over F of |x_i|
 *   mask = the 4-connected component of F holding s (empty when s is not in F or F is empty).
 *
 *     uint8_t *side = kc_malloc(n), *mask = kc_malloc(n);  int *queue = kc_malloc(n * sizeof *queue);
 *     int area = ncut_seed_mask(x, grid_h, grid_w, NCUT_SPLIT_MEAN, NCUT_RULE_SEED, side, queue, mask);
 */
#ifndef KC_NCUT_RULES_H
#define KC_NCUT_RULES_H
#include <stdint.h>

enum { NCUT_SPLIT_MEAN = 0, NCUT_SPLIT_ZERO = 1 };
enum { NCUT_RULE_SEED = 0, NCUT_RULE_CORNERS = 1, NCUT_RULE_MINORITY = 2 };

/* The split value: mean(x) (summed in index order) or 0. */
double ncut_split_value(const double *x, int n, int split);
/* Fills side (n) with 1 for the foreground side F; returns the seed index s (-1 when F is empty). */
int ncut_foreground(const double *x, int grid_h, int grid_w, int split, int rule, uint8_t *side);
/* 4-connected component of side holding seed into mask (n, 0/1); returns its area.  queue: (n). */
int ncut_component(const uint8_t *side, int grid_h, int grid_w, int seed, uint8_t *mask, int *queue);
/* Both steps (side: (n) scratch).  Returns the area of mask. */
int ncut_seed_mask(const double *x, int grid_h, int grid_w, int split, int rule, uint8_t *side, int *queue,
                   uint8_t *mask);
#endif
