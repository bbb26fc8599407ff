/* decoders/rounds.c — see rounds.h. */
#include "decoders/rounds.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/rules.h"
#include "decoders/ties.h"
#include "pipeline/kc.h"

typedef struct solved {
    uint8_t *zero; /* (n) zeroed patches */
    double *x;     /* (n) eigenvector, sign canonical with ties */
    double margin; /* the sign decision's margin (ties.h) */
    ncut_eig e;
} solved;

static int solve(const float *S, float *work, int n, double tau, int weighted, const uint8_t *zero, int any_zero,
                 double *x, ncut_eig *e, ncut_stats *st)
{
    const float *sim = S;
    if (any_zero) {
        for (int i = 0; i < n; i++) {
            float *w = work + (size_t)i * n;
            if (zero[i]) {
                memset(w, 0, (size_t)n * sizeof *w);
                continue;
            }
            const float *s = S + (size_t)i * n;
            for (int j = 0; j < n; j++) w[j] = zero[j] ? 0.0f : s[j];
        }
        sim = work;
    }
    ncut_graph g;
    ncut_graph_init(&g, sim, n, tau, weighted);
    int rc = ncut_eigen(&g, x, e);
    ncut_graph_free(&g);
    if (rc < 0) return -1;
    st->solves++;
    st->dense += e->method == NCUT_EIG_DENSE;
    st->matvecs += e->matvecs;
    return 0;
}

int ncut_rounds_run(const float *S, int grid_h, int grid_w, double tau, int weighted, ncut_chain *chains,
                    int n_chains, ncut_stats *stats)
{
    const int n = grid_h * grid_w;
    int max_rounds = 0;
    for (int c = 0; c < n_chains; c++) {
        ncut_chain *ch = &chains[c];
        if (ch->rounds < 1 || ch->rounds > NCUT_MAX_ROUNDS)
            return kc_fail("rounds must be 1..%d (got %d)", NCUT_MAX_ROUNDS, ch->rounds);
        ch->run = ch->degenerate = 0;
        ch->kept = kc_calloc((size_t)ch->rounds * n, 1);
        for (int r = 0; r < NCUT_MAX_ROUNDS; r++) {
            ch->lambda2[r] = ch->eigengap[r] = NAN;
            ch->margin[r] = INFINITY;
            ch->knife[r] = 0;
        }
        if (ch->rounds > max_rounds) max_rounds = ch->rounds;
    }
    ncut_stats st = {0, 0, 0, 0};
    int cap = 1 + n_chains * (max_rounds - 1), n_solved = 0, rc = 0;
    solved *memo = kc_calloc((size_t)cap, sizeof *memo);
    float *work = NULL;
    uint8_t *zero = kc_malloc((size_t)n), *side = kc_malloc((size_t)n), *mask = kc_malloc((size_t)n);
    int *queue = kc_malloc((size_t)n * sizeof *queue);
    for (int r = 0; r < max_rounds && rc == 0; r++) {
        for (int c = 0; c < n_chains && rc == 0; c++) {
            ncut_chain *ch = &chains[c];
            if (ch->rounds <= r || ch->degenerate) continue;
            /* the zero set: union of kept masks of earlier rounds */
            memset(zero, 0, (size_t)n);
            int any_zero = 0;
            for (int q = 0; q < r; q++)
                for (int i = 0; i < n; i++)
                    if (ch->kept[(size_t)q * n + i]) zero[i] = 1, any_zero = 1;
            solved *sv = NULL;
            for (int k = 0; k < n_solved && !sv; k++)
                if (!memcmp(memo[k].zero, zero, (size_t)n)) sv = &memo[k];
            if (sv) {
                st.reused++;
            } else {
                sv = &memo[n_solved];
                sv->zero = kc_malloc((size_t)n);
                memcpy(sv->zero, zero, (size_t)n);
                sv->x = kc_malloc((size_t)n * sizeof *sv->x);
                n_solved++;
                if (any_zero && !work) work = kc_malloc((size_t)n * n * sizeof *work);
                if (solve(S, work, n, tau, weighted, zero, any_zero, sv->x, &sv->e, &st) < 0) {
                    rc = -1;
                    break;
                }
                sv->margin = INFINITY;
                ncut_rows rows = {S, sv->zero, n, tau, weighted};
                if (sv->e.eigengap >= NCUT_DEGENERATE_GAP) ncut_sign_tied(sv->x, n, &rows, &sv->margin);
            }
            ch->lambda2[r] = sv->e.lambda2;
            ch->eigengap[r] = sv->e.eigengap;
            ch->run = r + 1;
            uint8_t *kept = ch->kept + (size_t)r * n;
            ch->knife[r] = (uint8_t)ncut_gap_knife(sv->e.eigengap);
            if (!(sv->e.eigengap >= NCUT_DEGENERATE_GAP)) {
                ch->degenerate = r + 1;
                continue; /* kept stays empty */
            }
            ncut_rows rows = {S, sv->zero, n, tau, weighted};
            double margin = sv->margin;
            int area = ncut_seed_mask_tied(sv->x, grid_h, grid_w, ch->split, ch->rule, &rows, side, queue, mask, &margin, NULL);
            ch->margin[r] = margin;
            ch->knife[r] |= margin <= NCUT_TIE_KNIFE;
            if (r > 0) {
                const uint8_t *prev = ch->kept + (size_t)(r - 1) * n;
                int inter = 0, uni = 0;
                for (int i = 0; i < n; i++) {
                    inter += mask[i] & prev[i];
                    uni += mask[i] | prev[i];
                }
                if (2 * inter > uni || 100 * area <= n) continue; /* dropped */
            }
            memcpy(kept, mask, (size_t)n);
        }
    }
    for (int k = 0; k < n_solved; k++) {
        free(memo[k].zero);
        free(memo[k].x);
    }
    free(memo);
    free(work);
    free(zero);
    free(side);
    free(mask);
    free(queue);
    if (stats) {
        stats->solves += st.solves;
        stats->reused += st.reused;
        stats->dense += st.dense;
        stats->matvecs += st.matvecs;
    }
    if (rc < 0)
        for (int c = 0; c < n_chains; c++) ncut_chain_free(&chains[c]);
    return rc;
}

void ncut_chain_labels(const ncut_chain *c, int n, int N, uint8_t *labels, float *lambda2, float *eigengap,
                       int *degenerate)
{
    memset(labels, 0, (size_t)n);
    for (int r = 0; r < N && r < c->run; r++) {
        const uint8_t *kept = c->kept + (size_t)r * n;
        for (int i = 0; i < n; i++)
            if (kept[i] && !labels[i]) labels[i] = (uint8_t)(r + 1);
    }
    for (int r = 0; r < N; r++) {
        lambda2[r] = r < c->run ? (float)c->lambda2[r] : NAN;
        eigengap[r] = r < c->run ? (float)c->eigengap[r] : NAN;
    }
    *degenerate = c->degenerate > 0 && c->degenerate <= N;
}

void ncut_chain_knife(const ncut_chain *c, int N, int *knife, float *margin)
{
    double m = INFINITY;
    int k = 0;
    for (int r = 0; r < N && r < c->run; r++) {
        k |= c->knife[r];
        if (c->margin[r] < m) m = c->margin[r];
    }
    *knife = k;
    *margin = isinf(m) ? NAN : (float)m;
}

void ncut_chain_free(ncut_chain *c)
{
    free(c->kept);
    c->kept = NULL;
}
