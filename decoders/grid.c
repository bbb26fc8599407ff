/* decoders/grid.c — see grid.h. */
#include "decoders/grid.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "decoders/attn_mass.h"
#include "decoders/ties.h"
#include "pipeline/ini.h"
#include "pipeline/kc.h"

static const char *const EDGE_NAME[2] = {"bin", "wtd"};
static const char *const SPLIT_NAME[2] = {"mean", "zero"};
static const char *const RULE_NAME[3] = {"seed", "corners", "minority"};

static int lookup(const char *const *names, int n, const char *v)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(names[i], v)) return i;
    return -1;
}

static int parse_tau(const char *v, double *tau)
{
    char *end;
    double t = strtod(v, &end);
    if (end == v || *end || !(t > 0 && t < 1)) return -1;
    *tau = t;
    return 0;
}

static int parse_masks(const char *v, int *n)
{
    char *end;
    long k = strtol(v, &end, 10);
    if (end == v || *end || k < 1 || k > NCUT_MAX_ROUNDS) return -1;
    *n = (int)k;
    return 0;
}

void ncut_setting_format(ncut_setting *s)
{
    char tau[32];
    for (int digits = 2; digits <= 9; digits++) {
        snprintf(tau, sizeof tau, "%.*f", digits, s->tau);
        if (strtod(tau, NULL) == s->tau) break;
    }
    snprintf(s->id, sizeof s->id, "t%s-%s-%s-%s-n%d", tau, EDGE_NAME[s->weighted], SPLIT_NAME[s->split],
             RULE_NAME[s->rule], s->n_masks);
}

enum { SETTING_ID_MAX = 128 }; // longer ids are refused before they are split

/* Parses id into s.  On failure kc_error() says why without naming the id ("bad masks part 'n9'
 * (n1 .. n8)"); returns -2 when id does not have the 5 parts (the caller then says what they are). */
static int setting_parse(ncut_setting *s, const char *id)
{
    char buf[SETTING_ID_MAX], *part[5];
    int np = 0;
    if (strlen(id) >= sizeof buf) return kc_fail("too long (%zu characters)", strlen(id));
    strcpy(buf, id);
    for (char *p = buf, *save = NULL, *tok; (tok = strtok_r(p, "-", &save)); p = NULL, np++)
        if (np < 5) part[np] = tok;
    if (np != 5) {
        kc_fail("%d part%s instead of 5", np, np == 1 ? "" : "s");
        return -2;
    }
    memset(s, 0, sizeof *s);
    if (part[0][0] != 't' || parse_tau(part[0] + 1, &s->tau) < 0)
        return kc_fail("bad tau part '%s' (expected t<number in (0, 1)>, e.g. t0.20)", part[0]);
    if ((s->weighted = lookup(EDGE_NAME, 2, part[1])) < 0) return kc_fail("unknown edges '%s' (bin or wtd)", part[1]);
    if ((s->split = lookup(SPLIT_NAME, 2, part[2])) < 0) return kc_fail("unknown split '%s' (mean or zero)", part[2]);
    if ((s->rule = lookup(RULE_NAME, 3, part[3])) < 0)
        return kc_fail("unknown foreground rule '%s' (seed, corners or minority)", part[3]);
    if (part[4][0] != 'n' || parse_masks(part[4] + 1, &s->n_masks) < 0)
        return kc_fail("bad masks part '%s' (n1 .. n%d)", part[4], NCUT_MAX_ROUNDS);
    ncut_setting_format(s);
    if (strcmp(s->id, id)) return kc_fail("not in canonical form (did you mean %s?)", s->id);
    return 0;
}

int ncut_setting_parse(ncut_setting *s, const char *id)
{
    if (strlen(id) >= SETTING_ID_MAX) return kc_fail("setting id '%.40s...': too long", id);
    int rc = setting_parse(s, id);
    if (rc == -2)
        return kc_fail("setting id '%s': expected 5 parts like t0.20-bin-mean-seed-n1 (tau-edges-split-foreground-masks)",
                       id);
    return rc < 0 ? kc_fail_prefix("setting id '%s'", id) : 0;
}

int ncut_edit_distance(const char *a, const char *b)
{
    const size_t na = strlen(a), nb = strlen(b);
    int *row = kc_malloc((nb + 1) * sizeof *row); // row[j]: distance of a[0 .. i) to b[0 .. j)
    for (size_t j = 0; j <= nb; j++) row[j] = (int)j;
    for (size_t i = 1; i <= na; i++) {
        int diag = row[0]; // the previous row's row[j - 1]
        row[0] = (int)i;
        for (size_t j = 1; j <= nb; j++) {
            int sub = diag + (a[i - 1] != b[j - 1]), del = row[j] + 1, ins = row[j - 1] + 1;
            diag = row[j];
            row[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
    }
    int d = row[nb];
    free(row);
    return d;
}

int ncut_grid_nearest(const ncut_grid *g, const char *id)
{
    int best = -1, best_d = 0;
    for (int i = 0; i < g->n; i++) {
        int d = ncut_edit_distance(id, g->set[i].id);
        if (best < 0 || d < best_d) best = i, best_d = d;
    }
    return best;
}

int ncut_setting_check(const char *id, const char *what, const ncut_grid *g, const char *grid_name)
{
    ncut_setting s;
    char why[512];
    if (!strcmp(id, "best"))
        snprintf(why, sizeof why, "'best' is resolved by the pipeline (kc-table --print-best), not a setting id");
    else if (attn_mass_is_setting(id))
        snprintf(why, sizeof why, "attn-mass<m> is the attention baseline's setting (kc-decode --kind attn)");
    else if (setting_parse(&s, id) == 0)
        return 0;
    else
        snprintf(why, sizeof why, "%s", kc_error());
    int near = g ? ncut_grid_nearest(g, id) : -1;
    if (near < 0)
        return kc_fail("%s '%.200s' is not a decoder setting (tau-edges-split-foreground-masks, e.g. "
                       "t0.20-bin-mean-seed-n1): %s",
                       what, id, why);
    return kc_fail("%s '%.200s' is not a decoder setting (tau-edges-split-foreground-masks, e.g. "
                   "t0.20-bin-mean-seed-n1): %s; nearest of %s: %s",
                   what, id, why, grid_name ? grid_name : "the grid", g->set[near].id);
}

int ncut_grid_single(ncut_grid *g, const char *id)
{
    g->n = 0;
    g->set = kc_malloc(sizeof *g->set);
    if (ncut_setting_parse(&g->set[0], id) < 0) {
        free(g->set);
        g->set = NULL;
        return -1;
    }
    g->n = 1;
    return 0;
}

static const char *const AXES[5] = {"tau", "edges", "split", "foreground", "masks"};

/* Parses one axis value into an int code (or tau into *tau). */
static int axis_value(int axis, const char *v, int *code, double *tau)
{
    switch (axis) {
    case 0: return parse_tau(v, tau);
    case 1:
        *code = lookup(EDGE_NAME, 2, v);
        if (*code < 0) *code = !strcmp(v, "binary") ? 0 : !strcmp(v, "weighted") ? 1 : -1;
        return *code < 0 ? -1 : 0;
    case 2: return (*code = lookup(SPLIT_NAME, 2, v)) < 0 ? -1 : 0;
    case 3: return (*code = lookup(RULE_NAME, 3, v)) < 0 ? -1 : 0;
    default: return parse_masks(v, code);
    }
}

static const char *const AXIS_HINT[5] = {"a number in (0, 1)", "bin, wtd, binary or weighted", "mean or zero",
                                         "seed, corners or minority", "an integer 1..8"};

int ncut_grid_parse(ncut_grid *g, const char *path, const char *text)
{
    g->n = 0;
    g->set = NULL;
    ini_file f;
    KC_TRY(ini_parse(&f, path, text));
    int rc = 0, count[5] = {0};
    char **items[5] = {NULL};
    int codes[5][64];
    double taus[64];
    for (int i = 0; i < f.n && rc == 0; i++) {
        if (strcmp(f.e[i].section, "grid"))
            rc = kc_fail("%s:%d: unknown section [%s] (a grid file has only [grid])", path, f.e[i].line, f.e[i].section);
        else if (lookup(AXES, 5, f.e[i].key) < 0)
            rc = kc_fail("%s:%d: unknown axis '%s' (tau, edges, split, foreground, masks)", path, f.e[i].line,
                         f.e[i].key);
    }
    for (int a = 0; a < 5 && rc == 0; a++) {
        const char *v = ini_get(&f, "grid", AXES[a]);
        if (!v) {
            rc = kc_fail("%s: axis '%s' missing in [grid]", path, AXES[a]);
            break;
        }
        count[a] = ini_split_list(v, &items[a]);
        if (count[a] == 0) {
            rc = kc_fail("%s: axis '%s' is empty", path, AXES[a]);
            break;
        }
        if (count[a] > 64) {
            rc = kc_fail("%s: axis '%s' has more than 64 values", path, AXES[a]);
            break;
        }
        for (int k = 0; k < count[a] && rc == 0; k++) {
            if (axis_value(a, items[a][k], &codes[a][k], &taus[k]) < 0) {
                rc = kc_fail("%s: axis '%s': unknown value '%s' (expected %s)", path, AXES[a], items[a][k],
                             AXIS_HINT[a]);
                break;
            }
            for (int q = 0; q < k; q++)
                if (a == 0 ? taus[q] == taus[k] : codes[a][q] == codes[a][k])
                    rc = kc_fail("%s: axis '%s': value '%s' given twice", path, AXES[a], items[a][k]);
        }
    }
    if (rc == 0) {
        int total = count[0] * count[1] * count[2] * count[3] * count[4];
        g->set = kc_malloc((size_t)total * sizeof *g->set);
        for (int t = 0; t < count[0]; t++)
            for (int e = 0; e < count[1]; e++)
                for (int s = 0; s < count[2]; s++)
                    for (int r = 0; r < count[3]; r++)
                        for (int m = 0; m < count[4]; m++) {
                            ncut_setting *st = &g->set[g->n++];
                            memset(st, 0, sizeof *st);
                            st->tau = taus[t];
                            st->weighted = codes[1][e];
                            st->split = codes[2][s];
                            st->rule = codes[3][r];
                            st->n_masks = codes[4][m];
                            ncut_setting_format(st);
                        }
    }
    for (int a = 0; a < 5; a++) {
        for (int k = 0; k < count[a]; k++) free(items[a][k]);
        free(items[a]);
    }
    ini_free(&f);
    return rc;
}

int ncut_grid_load(ncut_grid *g, const char *path)
{
    uint8_t *data;
    size_t size;
    g->n = 0;
    g->set = NULL;
    KC_TRY(kc_read_file(path, &data, &size));
    if (memchr(data, 0, size)) {
        free(data);
        return kc_fail("%s: not a text file", path);
    }
    int rc = ncut_grid_parse(g, path, (const char *)data);
    free(data);
    return rc;
}

int ncut_grid_find(const ncut_grid *g, const char *id)
{
    for (int i = 0; i < g->n; i++)
        if (!strcmp(g->set[i].id, id)) return i;
    return -1;
}

void ncut_grid_free(ncut_grid *g)
{
    free(g->set);
    g->set = NULL;
    g->n = 0;
}

void ncut_results_free(ncut_result *r, int n)
{
    for (int i = 0; i < n; i++) {
        free(r[i].labels);
        r[i].labels = NULL;
    }
}

/* ---- running ------------------------------------------------------------------------------ */

typedef struct group {
    double tau;
    int weighted, n_chains;
    ncut_chain chain[6 * 1]; /* (split, rule) pairs: at most 2 x 3 */
    ncut_stats st;
    int rc;
    char err[512];
} group;

int ncut_grid_run(const ncut_grid *g, const float *feats, int grid_h, int grid_w, int dim, const char *what,
                  ncut_result *out, ncut_stats *stats)
{
    const int n = grid_h * grid_w;
    if (n < 3 || dim < 1) return kc_fail("%s: a %dx%d grid with %d channels is too small to cut", what, grid_h, grid_w, dim);
    float *S = kc_malloc((size_t)n * n * sizeof *S); // (n, n)
    if (ncut_cosine(feats, n, dim, S, what) < 0) {
        free(S);
        return -1;
    }
    /* groups by (tau, edges), chains by (split, rule) with the largest N */
    group *gr = kc_calloc((size_t)g->n, sizeof *gr);
    int n_groups = 0;
    int *gi = kc_malloc((size_t)g->n * sizeof *gi), *ci = kc_malloc((size_t)g->n * sizeof *ci);
    for (int s = 0; s < g->n; s++) {
        const ncut_setting *st = &g->set[s];
        int k = 0;
        while (k < n_groups && !((float)gr[k].tau == (float)st->tau && gr[k].weighted == st->weighted)) k++;
        if (k == n_groups) {
            gr[k].tau = st->tau;
            gr[k].weighted = st->weighted;
            n_groups++;
        }
        int c = 0;
        while (c < gr[k].n_chains && !(gr[k].chain[c].split == st->split && gr[k].chain[c].rule == st->rule)) c++;
        if (c == gr[k].n_chains) {
            gr[k].chain[c] = (ncut_chain){.split = st->split, .rule = st->rule, .rounds = st->n_masks};
            gr[k].n_chains++;
        }
        if (st->n_masks > gr[k].chain[c].rounds) gr[k].chain[c].rounds = st->n_masks;
        gi[s] = k;
        ci[s] = c;
    }
#ifdef _OPENMP
    int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads > n_groups ? n_groups : threads)
#endif
    for (int k = 0; k < n_groups; k++) {
        gr[k].rc = ncut_rounds_run(S, grid_h, grid_w, gr[k].tau, gr[k].weighted, gr[k].chain, gr[k].n_chains, &gr[k].st);
        if (gr[k].rc < 0) snprintf(gr[k].err, sizeof gr[k].err, "%s", kc_error());
    }
    int rc = 0;
    for (int k = 0; k < n_groups && rc == 0; k++)
        if (gr[k].rc < 0) {
            kc_set_error(gr[k].err);
            rc = kc_fail_prefix("%s", what);
        }
    if (rc == 0)
        for (int s = 0; s < g->n; s++) {
            ncut_result *r = &out[s];
            r->labels = kc_malloc((size_t)n);
            r->n_masks = g->set[s].n_masks;
            ncut_chain_labels(&gr[gi[s]].chain[ci[s]], n, r->n_masks, r->labels, r->lambda2, r->eigengap,
                              &r->degenerate);
            ncut_chain_knife(&gr[gi[s]].chain[ci[s]], r->n_masks, &r->knife, &r->knife_margin);
        }
    for (int k = 0; k < n_groups; k++) {
        if (stats) {
            stats->solves += gr[k].st.solves;
            stats->reused += gr[k].st.reused;
            stats->dense += gr[k].st.dense;
            stats->matvecs += gr[k].st.matvecs;
        }
        for (int c = 0; c < gr[k].n_chains; c++) ncut_chain_free(&gr[k].chain[c]);
    }
    free(gi);
    free(ci);
    free(gr);
    free(S);
    return rc;
}

int ncut_decode_naive(const ncut_setting *s, const float *feats, int grid_h, int grid_w, int dim,
                      const char *what, ncut_result *out)
{
    const int n = grid_h * grid_w, N = s->n_masks;
    if (n < 3 || dim < 1) return kc_fail("%s: a %dx%d grid with %d channels is too small to cut", what, grid_h, grid_w, dim);
    for (size_t i = 0; i < (size_t)n * dim; i++)
        if (!isfinite(feats[i])) return kc_fail("%s: non-finite feature value at token %zu", what, i / (size_t)dim);
    float *f = kc_malloc((size_t)n * dim * sizeof *f), *S = kc_malloc((size_t)n * n * sizeof *S);
    double *x = kc_malloc((size_t)n * sizeof *x);
    uint8_t *kept = kc_calloc((size_t)N * n, 1), *side = kc_malloc((size_t)n), *mask = kc_malloc((size_t)n);
    int *queue = kc_malloc((size_t)n * sizeof *queue), rc = 0;
    memcpy(f, feats, (size_t)n * dim * sizeof *f);
    out->labels = kc_calloc((size_t)n, 1);
    out->n_masks = N;
    out->degenerate = 0;
    out->knife = 0;
    double margin = INFINITY;
    for (int r = 0; r < NCUT_MAX_ROUNDS; r++) out->lambda2[r] = out->eigengap[r] = NAN;
    for (int r = 0; r < N; r++) {
        /* 1. zero the kept masks' features */
        for (int q = 0; q < r; q++)
            for (int i = 0; i < n; i++)
                if (kept[(size_t)q * n + i]) memset(f + (size_t)i * dim, 0, (size_t)dim * sizeof *f);
        /* 2. cosine by a triple loop, graph, dense solve, rule, component */
        for (int i = 0; i < n; i++) {
            double ni = 0;
            for (int k = 0; k < dim; k++) ni += (double)f[(size_t)i * dim + k] * f[(size_t)i * dim + k];
            for (int j = 0; j < n; j++) {
                double nj = 0, dot = 0;
                for (int k = 0; k < dim; k++) {
                    nj += (double)f[(size_t)j * dim + k] * f[(size_t)j * dim + k];
                    dot += (double)f[(size_t)i * dim + k] * f[(size_t)j * dim + k];
                }
                S[(size_t)i * n + j] = ni > 0 && nj > 0 ? (float)(dot / sqrt(ni) / sqrt(nj)) : 0.0f;
            }
        }
        ncut_graph gr;
        ncut_graph_init(&gr, S, n, s->tau, s->weighted);
        ncut_eig e;
        rc = ncut_eigen_dense(&gr, x, &e);
        ncut_graph_free(&gr);
        if (rc < 0) break;
        out->lambda2[r] = (float)e.lambda2;
        out->eigengap[r] = (float)e.eigengap;
        out->knife |= ncut_gap_knife(e.eigengap);
        if (!(e.eigengap >= NCUT_DEGENERATE_GAP)) {
            out->degenerate = 1;
            break;
        }
        /* ties (ties.h): S already holds the zeroed rows */
        ncut_rows rows = {S, NULL, n, s->tau, s->weighted};
        ncut_sign_tied(x, n, &rows, &margin);
        int area = ncut_seed_mask_tied(x, grid_h, grid_w, s->split, s->rule, &rows, side, queue, mask, &margin, NULL);
        /* 3. the drop rule */
        if (r > 0) {
            int inter = 0, uni = 0;
            for (int i = 0; i < n; i++) {
                inter += mask[i] && kept[(size_t)(r - 1) * n + i];
                uni += mask[i] || kept[(size_t)(r - 1) * n + i];
            }
            if ((double)inter / (uni ? uni : 1) > 0.5 || area <= 0.01 * n) continue;
        }
        memcpy(kept + (size_t)r * n, mask, (size_t)n);
        /* 4. labels */
        for (int i = 0; i < n; i++)
            if (mask[i] && !out->labels[i]) out->labels[i] = (uint8_t)(r + 1);
    }
    out->knife |= margin <= NCUT_TIE_KNIFE;
    out->knife_margin = isinf(margin) ? NAN : (float)margin;
    free(f);
    free(S);
    free(x);
    free(kept);
    free(side);
    free(mask);
    free(queue);
    if (rc < 0) {
        free(out->labels);
        out->labels = NULL;
        return kc_fail_prefix("%s", what);
    }
    return 0;
}
