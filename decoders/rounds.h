/* decoders/rounds.h — repeated cuts (MaskCut's rounds) for one graph, with shared solves.
 *
 * A chain is one (split, rule) sequence of rounds r = 1..R under one graph (tau, edges):
 *   1. from round 2 on, the features of every patch in the union of the kept masks of earlier
 *      rounds are zero: S loses those rows and columns (they keep only eps edges);
 *   2. graph, eigenpair, split, rule, seed component C_r;  eigengap < 1e-6: C_r empty, the round
 *      is degenerate and later rounds are not run;  the sign, split and seed treat near-equal
 *      values as tied and flag decisions too close to call (ties.h, docs/ties.md);
 *   3. from round 2 on, C_r is dropped (kept empty) when IoU(C_r, C_(r-1) kept) > 0.5 or
 *      area(C_r) <= 1 % of the grid;
 *   4. labels: round r labels the patches of C_r that no earlier round labelled.
 * A setting with N masks is the first N rounds of its chain (N only truncates).
 *
 * Sharing: the eigenpair of a round depends only on the graph and the set of zeroed patches, so
 * ncut_rounds_run solves each distinct zero set once for all its chains (round 1: one solve for
 * all chains; later rounds: at most one per chain, fewer when rules agree).
 *
 *     ncut_chain ch[2] = {{.split = NCUT_SPLIT_MEAN, .rule = NCUT_RULE_CORNERS, .rounds = 3},
 *                         {.split = NCUT_SPLIT_MEAN, .rule = NCUT_RULE_SEED, .rounds = 1}};
 *     ncut_rounds_run(S, grid_h, grid_w, 0.15, 0, ch, 2, &stats);
 *     ncut_chain_labels(&ch[0], grid_h * grid_w, 3, labels, lambda2, eigengap, &degenerate);
 *     ncut_chain_free(&ch[0]); ncut_chain_free(&ch[1]);
 */
#ifndef KC_NCUT_ROUNDS_H
#define KC_NCUT_ROUNDS_H
#include <stdint.h>

#include "decoders/eigen.h"

#define NCUT_MAX_ROUNDS 8

typedef struct ncut_stats {
    long solves;  /* eigen-solves run */
    long reused;  /* rounds that reused an identical solve */
    long dense;   /* solves that fell back to (or chose) the dense solver */
    long matvecs; /* Krylov products with A */
} ncut_stats;

typedef struct ncut_chain {
    int split, rule, rounds; /* in: rounds wanted (1..NCUT_MAX_ROUNDS) */
    int run;                 /* out: rounds run (fewer after a degenerate round) */
    int degenerate;          /* out: the degenerate round (1-based), 0 when none */
    double lambda2[NCUT_MAX_ROUNDS], eigengap[NCUT_MAX_ROUNDS];
    double margin[NCUT_MAX_ROUNDS]; /* out: smallest decision margin / max|x| (ties.h), INFINITY: none */
    uint8_t knife[NCUT_MAX_ROUNDS];  /* out: 1 when a decision of the round was too close to call */
    uint8_t *kept;           /* out: (rounds, n) kept component per round, owned */
} ncut_chain;

/* S: (n, n) cosine matrix of the image (n = grid_h * grid_w), not modified. */
int ncut_rounds_run(const float *S, int grid_h, int grid_w, double tau, int weighted, ncut_chain *chains,
                    int n_chains, ncut_stats *stats);
/* The first N rounds of a chain: labels (n), lambda2 and eigengap (N values, NaN for rounds not
 * run), degenerate (0/1). */
void ncut_chain_labels(const ncut_chain *c, int n, int N, uint8_t *labels, float *lambda2, float *eigengap,
                       int *degenerate);
/* The knife-edge flag of the first N rounds (any round's) and their smallest margin (NaN when no
 * round made a decision). */
void ncut_chain_knife(const ncut_chain *c, int N, int *knife, float *margin);
void ncut_chain_free(ncut_chain *c);
#endif
