/* decoders/grid.h — decoder settings, their ids, the sweep grid and running it on one image.
 *
 * A setting is (tau, edges, split, foreground, masks N); its id joins the parts with '-':
 *     t0.20-bin-mean-seed-n1        TokenCut's published setting
 *     t0.15-bin-mean-corners-n3     MaskCut's
 * tau is written with two decimals (more when the value needs them: t0.125); edges bin|wtd;
 * split mean|zero; foreground seed|corners|minority; n1..n8.  0 < tau < 1.
 *
 * A grid file (configs/sweep.ini) lists each axis in section [grid]; the settings are the product
 * in the order tau, edges, split, foreground, masks (the last varying fastest):
 *     [grid]
 *     tau        = 0.10, 0.15, 0.20, 0.25
 *     edges      = bin, wtd          ; or binary, weighted
 *     split      = mean, zero
 *     foreground = seed, corners, minority
 *     masks      = 1, 2, 3
 *
 * Running a grid on one image (ncut_grid_run) shares all work that does not depend on an axis:
 * the cosine matrix once; per (tau, edges) the graph and first eigenpair; per first-round outcome
 * (tau, edges, split, foreground) the later rounds, identical zero sets solved once (rounds.h);
 * N only truncates.  The 144 settings need at most 8 + 48 + 48 = 104 solves.  The (tau, edges)
 * groups run in parallel (OpenMP) when called outside a parallel region; results do not depend on
 * the number of threads.  ncut_decode_naive is the step-by-step reference for one setting.
 *
 *     ncut_grid g;
 *     if (ncut_grid_load(&g, "configs/sweep.ini") < 0) kc_die();    // or ncut_grid_single(&g, id)
 *     ncut_result *res = kc_calloc(g.n, sizeof *res);
 *     if (ncut_grid_run(&g, keys, grid_h, grid_w, dim, "img1", res, &stats) < 0) ...
 *     ... res[s].labels (grid_h * grid_w), res[s].lambda2[0 .. N-1] ...
 *     ncut_results_free(res, g.n); ncut_grid_free(&g);
 */
#ifndef KC_NCUT_GRID_H
#define KC_NCUT_GRID_H
#include <stdint.h>

#include "decoders/rounds.h"
#include "decoders/rules.h"

typedef struct ncut_setting {
    char id[64];
    double tau;
    int weighted; /* 0 bin, 1 wtd */
    int split;    /* NCUT_SPLIT_* */
    int rule;     /* NCUT_RULE_* */
    int n_masks;  /* 1..NCUT_MAX_ROUNDS */
} ncut_setting;

typedef struct ncut_grid {
    int n;
    ncut_setting *set;
} ncut_grid;

typedef struct ncut_result {
    uint8_t *labels; /* (grid_h * grid_w), owned */
    int n_masks;
    float lambda2[NCUT_MAX_ROUNDS], eigengap[NCUT_MAX_ROUNDS]; /* n_masks values, NaN: not run */
    int degenerate;
    int knife;          /* 1: a decision of some round was too close to call (ties.h) */
    float knife_margin; /* the smallest decision margin over max|x| (NaN: no decision made) */
} ncut_result;

/* Parses an id; errors say which part is wrong. */
int ncut_setting_parse(ncut_setting *s, const char *id);
/* 0 when id is a setting id ncut_setting_parse accepts; otherwise -1 and one line naming id as
 * what ("SETTING"), the format, why, and when g is given (grid_name names it) g's nearest id:
 *     SETTING 't0.20-bin-mean-sed-n1' is not a decoder setting (tau-edges-split-foreground-masks,
 *     e.g. t0.20-bin-mean-seed-n1): unknown foreground rule 'sed' (...); nearest of configs/sweep.ini: t0.20-bin-mean-seed-n1
 * `best` (the pipeline's word for the setting it chooses) and attn-mass<m> (decoders/attn_mass.h)
 * are refused, saying so.  g may be NULL. */
int ncut_setting_check(const char *id, const char *what, const ncut_grid *g, const char *grid_name);
/* Levenshtein distance: the fewest insertions, deletions and substitutions of one character that
 * turn a into b (no transpositions: "ab" to "ba" is 2).  O(|a| |b|) time, O(|b|) memory. */
int ncut_edit_distance(const char *a, const char *b);
/* Index of the grid id nearest id by ncut_edit_distance (ties: the first in grid order); -1 for an
 * empty grid. */
int ncut_grid_nearest(const ncut_grid *g, const char *id);
/* Writes s->id from the other fields. */
void ncut_setting_format(ncut_setting *s);
int ncut_grid_parse(ncut_grid *g, const char *path, const char *text);
int ncut_grid_load(ncut_grid *g, const char *path);
/* A grid of one setting. */
int ncut_grid_single(ncut_grid *g, const char *id);
/* Index of id in the grid, or -1. */
int ncut_grid_find(const ncut_grid *g, const char *id);
void ncut_grid_free(ncut_grid *g);

/* feats: (grid_h * grid_w, dim).  out: g->n results (labels allocated here).  what names the
 * image in messages.  stats may be NULL. */
int ncut_grid_run(const ncut_grid *g, const float *feats, int grid_h, int grid_w, int dim, const char *what,
                  ncut_result *out, ncut_stats *stats);
/* Reference: one setting step by step (features zeroed and re-normalised per round, cosine by a
 * triple loop, dense LAPACKE solver). */
int ncut_decode_naive(const ncut_setting *s, const float *feats, int grid_h, int grid_w, int dim,
                      const char *what, ncut_result *out);
void ncut_results_free(ncut_result *r, int n);
#endif
