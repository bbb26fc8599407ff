/* tests/test_ncut.c — the normalized-cut decoders (decoders/): parity with the NumPy/SciPy
 * reference (tests/ref/ncut_ref.py -> tests/data/ncut/), planted clusters, the Krylov solver
 * against the dense LAPACKE one, the naive decoder against the shared grid, settings and grids,
 * bad input, determinism across thread counts; ties and knife edges (docs/ties.md) on graphs built
 * to have exact ties, on both solver paths; the edit distance behind kc-decode --check-setting
 * against hand-worked pairs and the recursive definition, and the nearest grid id. */
#include <math.h>
#include <omp.h>
#include <stdint.h>

#include "decoders/eigen.h"
#include "decoders/grid.h"
#include "decoders/ties.h"
#include "pipeline/model/vit.h"
#include "pipeline/kc.h"
#include "tests/test.h"

typedef struct tcase {
    int gh, gw, dim;
    float *feats;
} tcase;

static int load_cases(tcase *c, int max)
{
    uint8_t *data;
    size_t size, off = 0;
    if (kc_read_file("tests/data/ncut/inputs.bin", &data, &size) < 0) return -1;
    int n = 0;
    while (off + 12 <= size && n < max) {
        int32_t h[3];
        memcpy(h, data + off, 12);
        off += 12;
        size_t bytes = (size_t)h[0] * h[1] * h[2] * 4;
        if (off + bytes > size) break;
        c[n] = (tcase){h[0], h[1], h[2], kc_malloc(bytes)};
        memcpy(c[n].feats, data + off, bytes);
        off += bytes;
        n++;
    }
    free(data);
    return n;
}

static int parse_list(char *s, double *v, int max)
{
    int n = 0;
    for (char *save = NULL, *t = strtok_r(s, ",", &save); t && n < max; t = strtok_r(NULL, ",", &save))
        v[n++] = strtod(t, NULL);
    return n;
}

/* ---- parity with the reference ---------------------------------------------------------------- */
static void test_parity(tcase *cases, int n_cases)
{
    FILE *f = fopen("tests/data/ncut/expected.tsv", "r");
    CHECK(f != NULL, "tests/data/ncut/expected.tsv missing (run tests/ref/ncut_ref.py)");
    if (!f) return;
    enum { MAXS = 144 };
    char ids[MAXS][64];
    int identical[MAXS] = {0}, total[MAXS] = {0}, n_ids = 0;
    int knife_total = 0, knife_differ = 0, lines = 0, bad_masks = 0, knife_ours = 0, knife_gap = 0;
    double worst_rel = 0;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int cur_case = -1;
    ncut_grid grid = {0, NULL};
    ncut_result *res = NULL;
    /* read all lines of one case, run them as one grid */
    char **pending = NULL;
    int n_pending = 0;
    for (;;) {
        len = getline(&line, &cap, f);
        int ci = -1;
        if (len > 0 && line[0] != '#') ci = atoi(line);
        if (len > 0 && line[0] == '#') continue;
        if ((len <= 0 || ci != cur_case) && n_pending > 0) {
            tcase *c = &cases[cur_case];
            const int n = c->gh * c->gw;
            grid.set = kc_malloc((size_t)n_pending * sizeof *grid.set);
            grid.n = 0;
            for (int k = 0; k < n_pending; k++) {
                char id[64];
                sscanf(pending[k], "%*d\t%63s", id);
                CHECK(ncut_setting_parse(&grid.set[grid.n++], id) == 0, "parse %s: %s", id, kc_error());
            }
            res = kc_calloc((size_t)grid.n, sizeof *res);
            ncut_stats st = {0, 0, 0, 0};
            int rc = ncut_grid_run(&grid, c->feats, c->gh, c->gw, c->dim, "case", res, &st);
            CHECK(rc == 0, "grid run case %d: %s", cur_case, kc_error());
            if (grid.n == 144) CHECK(st.solves <= 104, "case %d: %ld solves for 144 settings", cur_case, st.solves);
            for (int k = 0; rc == 0 && k < n_pending; k++) {
                char *fields[7], *save = NULL;
                int nf = 0;
                for (char *t = strtok_r(pending[k], "\t\n", &save); t && nf < 7; t = strtok_r(NULL, "\t\n", &save))
                    fields[nf++] = t;
                if (nf != 7) continue;
                lines++;
                int deg = atoi(fields[2]), knife = atoi(fields[3]);
                double lam[NCUT_MAX_ROUNDS], gap[NCUT_MAX_ROUNDS];
                int nl = parse_list(fields[4], lam, NCUT_MAX_ROUNDS);
                parse_list(fields[5], gap, NCUT_MAX_ROUNDS);
                ncut_result *r = &res[k];
                int same = (int)strlen(fields[6]) == n;
                for (int i = 0; same && i < n; i++) same = r->labels[i] == fields[6][i] - '0';
                same = same && r->degenerate == deg;
                int s = 0;
                while (s < n_ids && strcmp(ids[s], fields[1])) s++;
                if (s == n_ids && n_ids < MAXS) snprintf(ids[n_ids++], 64, "%s", fields[1]);
                if (s < MAXS) {
                    total[s]++;
                    identical[s] += same;
                }
                knife_ours += r->knife;
                knife_gap += r->knife && !(r->knife_margin <= NCUT_TIE_KNIFE); /* flagged by the eigengap */
                knife = knife || r->knife; /* the reference's flag or ours (docs/ties.md) */
                knife_total += knife;
                if (!same && knife) knife_differ++;
                if (!same && !knife) {
                    bad_masks++;
                    fprintf(stderr, "case %d %s: mask differs from the reference (not a knife edge)\n", cur_case,
                            fields[1]);
                }
                /* eigenvalues of the rounds both ran (knife edges: a near-tau cosine moves them; skipped) */
                for (int q = 0; q < nl && q < r->n_masks && !knife; q++) {
                    if (isnan(lam[q]) || isnan(r->lambda2[q])) {
                        CHECK(isnan(lam[q]) == isnan(r->lambda2[q]), "case %d %s round %d: run in one only",
                              cur_case, fields[1], q + 1);
                        continue;
                    }
                    /* the file stores float32-rounded values: 6e-8 relative */
                    double rel = fabs(r->lambda2[q] - lam[q]) / fabs(lam[q]);
                    if (rel > worst_rel) worst_rel = rel;
                    CHECK(rel <= 1e-5, "case %d %s round %d: lambda2 %.9g vs %.9g", cur_case, fields[1], q + 1,
                          r->lambda2[q], lam[q]);
                    if (gap[q] > 1e-4)
                        CHECK(fabs(r->eigengap[q] - gap[q]) <= 1e-5 * fabs(gap[q]) + 1e-7,
                              "case %d %s round %d: eigengap %.9g vs %.9g", cur_case, fields[1], q + 1,
                              r->eigengap[q], gap[q]);
                }
            }
            ncut_results_free(res, grid.n);
            free(res);
            ncut_grid_free(&grid);
            for (int k = 0; k < n_pending; k++) free(pending[k]);
            n_pending = 0;
        }
        if (len <= 0) break;
        if (ci < 0 || ci >= n_cases) continue;
        cur_case = ci;
        pending = kc_realloc(pending, (size_t)(n_pending + 1) * sizeof *pending);
        pending[n_pending++] = kc_strdup(line);
    }
    free(pending);
    free(line);
    fclose(f);
    CHECK(lines > 600, "only %d reference lines", lines);
    CHECK(bad_masks == 0, "%d masks differ outside knife edges", bad_masks);
    printf("parity: %d masks compared, %d knife-edge (%d flagged by kc's tie rules, %d of them for an eigengap in "
           "[0.9e-6, 1e-5) alone; the rest by the reference's own rules or an edge on the order of S's double sum; %d of them "
           "differ), %d differ elsewhere; worst lambda2 relative error %.2e (tol 1e-5)\n",
           lines, knife_total, knife_ours, knife_gap, knife_differ, bad_masks, worst_rel);
    printf("identical masks per setting (over the cases that ran it):\n");
    for (int s = 0; s < n_ids; s++) printf("  %-28s %d/%d%s", ids[s], identical[s], total[s], s % 3 == 2 ? "\n" : "");
    printf("\n");
}

/* ---- planted clusters ------------------------------------------------------------------------- */
static void test_planted(tcase *cases)
{
    /* the blocks of tests/ref/ncut_ref.py planted() on a 20x20 grid */
    uint8_t block[2][400] = {{0}};
    for (int r = 0; r < 20; r++)
        for (int c = 0; c < 20; c++) {
            block[0][r * 20 + c] = r >= 5 && r < 12 && c >= 4 && c < 10;
            block[1][r * 20 + c] = r >= 13 && r < 18 && c >= 12 && c < 17;
        }
    ncut_grid g;
    CHECK(ncut_grid_load(&g, "configs/sweep.ini") == 0, "load grid: %s", kc_error());
    if (g.n == 0) return;
    ncut_result *res = kc_calloc((size_t)g.n, sizeof *res);
    for (int ci = 0; ci < 2; ci++) {
        CHECK(ncut_grid_run(&g, cases[ci].feats, 20, 20, cases[ci].dim, "planted", res, NULL) == 0, "run: %s",
              kc_error());
        int exact = 0, tried = 0;
        for (int s = 0; s < g.n; s++) {
            const ncut_setting *st = &g.set[s];
            if (st->split != NCUT_SPLIT_MEAN || res[s].degenerate) continue;
            /* mean split, every rule: the rounds give the planted blocks, one label each */
            int want = ci == 0 || st->rule == NCUT_RULE_SEED ? 1 : (st->n_masks < 2 ? 1 : 2), ok = 1;
            uint8_t got[3] = {0, 0, 0};
            for (int i = 0; i < 400; i++) {
                int lab = res[s].labels[i];
                if (lab > 2) ok = 0;
                else if (lab) got[lab] = 1;
            }
            for (int lab = 1; lab <= want && ok; lab++) {
                int which = -1;
                for (int b = 0; b < 2; b++) {
                    int eq = 1;
                    for (int i = 0; i < 400 && eq; i++) eq = (res[s].labels[i] == lab) == block[b][i];
                    if (eq) which = b;
                }
                ok = which >= 0;
            }
            if (ci == 0) ok = ok && !got[2];
            tried++;
            exact += ok;
            if (!ok && (st->tau < 0.245)) /* tau 0.25 on 3 clusters: a knife-edge eigengap (~7e-5) */
                CHECK(0, "planted case %d %s: masks are not the planted blocks", ci, st->id);
        }
        printf("planted case %d: %d/%d mean-split settings give exactly the planted blocks\n", ci, exact, tried);
        ncut_results_free(res, g.n);
    }
    free(res);
    ncut_grid_free(&g);
}

/* ---- Krylov against dense --------------------------------------------------------------------- */
static void test_krylov(void)
{
    uint64_t s = 12345;
    int converged = 0, total = 0, degenerate_agree = 0;
    double worst_l = 0, worst_x = 0;
    for (int t = 0; t < 40; t++) {
        int n = 200 + (int)(t * 37 % 500), dim = 4 + t % 5 * 12;
        float *f = kc_malloc((size_t)n * dim * sizeof *f);
        int kind = t % 5; /* 0 noise, 1 offset noise (near-complete), 2 blobs, 3 duplicates, 4 constant */
        for (int i = 0; i < n; i++)
            for (int k = 0; k < dim; k++) {
                s ^= s << 13, s ^= s >> 7, s ^= s << 17;
                float u = (float)((s >> 11) * (1.0 / 9007199254740992.0)) - 0.5f;
                float v = u;
                if (kind == 1) v = u + 3.0f;
                if (kind == 2) v = 0.3f * u + (k % 4 == (i * 7 / n) % 4 ? 1.0f : 0.0f);
                if (kind == 3) v = (k == (i % 3)) ? 1.0f : 0.0f;
                if (kind == 4) v = 1.0f;
                if (i % 50 == 7 && kind != 4) v = 0; /* some zero rows */
                f[(size_t)i * dim + k] = v;
            }
        float *S = kc_malloc((size_t)n * n * sizeof *S);
        CHECK(ncut_cosine(f, n, dim, S, "rand") == 0, "cosine");
        for (int w = 0; w < 2; w++) {
            ncut_graph g;
            ncut_graph_init(&g, S, n, 0.1 + 0.05 * (t % 4), w);
            double *xk = kc_malloc((size_t)n * sizeof *xk), *xd = kc_malloc((size_t)n * sizeof *xd);
            ncut_eig ek, ed;
            int rk = ncut_eigen(&g, xk, &ek), rd = ncut_eigen_dense(&g, xd, &ed);
            CHECK(rk == 0 && rd == 0, "solvers: %s", kc_error());
            total++;
            converged += ek.method == NCUT_EIG_KRYLOV;
            double dl = fmax(fabs(ek.lambda2 - ed.lambda2), fabs(ek.lambda3 - ed.lambda3));
            if (dl > worst_l) worst_l = dl;
            CHECK(dl <= 1e-9, "graph %d/%d (kind %d, n %d): lambda %.12g %.12g vs dense %.12g %.12g", t, w, kind, n,
                  ek.lambda2, ek.lambda3, ed.lambda2, ed.lambda3);
            int dk = ek.eigengap < NCUT_DEGENERATE_GAP, dd = ed.eigengap < NCUT_DEGENERATE_GAP;
            CHECK(dk == dd || fabs(ed.eigengap - NCUT_DEGENERATE_GAP) < 1e-9, "graph %d/%d: degenerate %d vs %d", t, w,
                  dk, dd);
            degenerate_agree += dk && dd;
            if (ed.eigengap > 1e-4) {
                double dx = 0, xm = 0;
                for (int i = 0; i < n; i++) {
                    dx = fmax(dx, fabs(xk[i] - xd[i]));
                    xm = fmax(xm, fabs(xd[i]));
                }
                if (dx / xm > worst_x) worst_x = dx / xm;
                CHECK(dx <= 1e-7 * xm, "graph %d/%d: eigenvector differs by %.3g (max %.3g, gap %.3g)", t, w, dx, xm,
                      ed.eigengap);
            }
            ncut_graph_free(&g);
            free(xk);
            free(xd);
        }
        free(S);
        free(f);
    }
    printf("krylov vs dense: %d graphs, %d solved by Krylov (rest fell back), %d degenerate in both; worst "
           "|dlambda| %.2e (tol 1e-9), worst eigenvector difference %.2e of max|x| (tol 1e-7)\n",
           total, converged, degenerate_agree, worst_l, worst_x);
    CHECK(converged >= total / 2, "Krylov converged on only %d of %d graphs", converged, total);
}

/* ---- the cosine matrix: the same bits on every kernel path and thread count (docs/ties.md) ------- */
static void test_cosine_paths(void)
{
    static const int shapes[][2] = {{1, 1}, {3, 5}, {5, 1}, {13, 17}, {37, 64}, {200, 3}, {257, 384}, {300, 96}};
    uint64_t s = 4242;
    int have512 = __builtin_cpu_supports("avx512f"), checked = 0;
    double worst_ulp = 0;
    for (size_t t = 0; t < sizeof shapes / sizeof *shapes; t++) {
        int n = shapes[t][0], dim = shapes[t][1];
        float *f = kc_malloc((size_t)n * dim * sizeof *f), *u = kc_malloc((size_t)n * dim * sizeof *u);
        for (int i = 0; i < n; i++)
            for (int k = 0; k < dim; k++) {
                s ^= s << 13, s ^= s >> 7, s ^= s << 17;
                float v = (float)((s >> 11) * (1.0 / 9007199254740992.0)) - 0.5f;
                f[(size_t)i * dim + k] = i % 11 == 6 ? 0.0f : v + (t % 2 ? 3.0f : 0.0f); /* zero rows, offsets */
            }
        /* the definition, written here: unit rows in float32, then a double sum in k order */
        for (int i = 0; i < n; i++) {
            double ss = 0;
            for (int k = 0; k < dim; k++) ss += (double)f[(size_t)i * dim + k] * f[(size_t)i * dim + k];
            float inv = ss > 0 ? (float)(1.0 / sqrt(ss)) : 0.0f;
            for (int k = 0; k < dim; k++) u[(size_t)i * dim + k] = f[(size_t)i * dim + k] * inv;
        }
        float *R = kc_malloc((size_t)n * n * sizeof *R), *S = kc_malloc((size_t)n * n * sizeof *S);
        double shape_ulp = 0;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                double acc = 0;
                long double ex = 0;
                for (int k = 0; k < dim; k++) {
                    double p = (double)u[(size_t)i * dim + k] * u[(size_t)j * dim + k];
                    acc += p;
                    ex += (long double)p;
                }
                R[(size_t)i * n + j] = (float)acc;
                /* within half an ulp of the (nearly) exact dot product, plus the double sum's error */
                float r = (float)acc;
                double ulp = nextafterf(fabsf(r), INFINITY) - fabsf(r);
                double e = fabs((double)((long double)r - ex)) / ulp;
                if (e > shape_ulp) shape_ulp = e;
            }
        CHECK(shape_ulp <= 0.5 + 1e-6, "cosine %dx%d: an entry is %.4f ulp from the exact dot product", n, dim,
              shape_ulp);
        if (shape_ulp > worst_ulp) worst_ulp = shape_ulp;
        const char *names[] = {"auto", "avx2", "avx512", "serial"};
        for (int path = NCUT_COS_AUTO; path <= NCUT_COS_SERIAL; path++)
            for (int th = 1; th <= 2; th++) {
                if (path == NCUT_COS_AVX512 && !have512) continue;
                omp_set_num_threads(th);
                memset(S, 0xff, (size_t)n * n * sizeof *S);
                CHECK(ncut_cosine_path(f, n, dim, S, "paths", path) == 0, "cosine: %s", kc_error());
                int diff = memcmp(S, R, (size_t)n * n * sizeof *S) != 0;
                CHECK(!diff, "cosine %dx%d: the %s path on %d thread(s) differs from the fixed-order loop", n, dim,
                      names[path], th);
                checked++;
            }
        omp_set_num_threads(2);
        free(f);
        free(u);
        free(R);
        free(S);
    }
    printf("cosine: %d (shape, path, threads) runs bit-identical to the fixed-order loop (AVX-512 %s); worst "
           "distance from the exact dot product %.4f ulp (bound 0.5)\n",
           checked, have512 ? "run" : "not on this CPU", worst_ulp);
}

/* ---- the graph's product forms (edge lists, gap lists, dense rows) against the dense W ------------ */
static void test_graph_forms(void)
{
    uint64_t s = 777;
    int forms[3] = {0, 0, 0}, graphs = 0;
    double worst_y = 0, worst_d = 0;
    for (int t = 0; t < 12; t++) {
        int n = t % 3 == 0 ? 37 : 300 + t, dim = 16 + 8 * (t % 3);
        float *f = kc_malloc((size_t)n * dim * sizeof *f);
        for (int i = 0; i < n; i++)
            for (int k = 0; k < dim; k++) {
                s ^= s << 13, s ^= s >> 7, s ^= s << 17;
                float u = (float)((s >> 11) * (1.0 / 9007199254740992.0)) - 0.5f;
                /* t % 4: 0 noise (sparse), 1 offset (near-complete), 2 two halves, 3 mixed offset */
                float v = t % 4 == 1 ? u + 2.0f : t % 4 == 2 ? u + (k % 2 == i * 2 / n ? 0.6f : 0.0f)
                                                             : t % 4 == 3 ? u + 0.25f : u;
                f[(size_t)i * dim + k] = i % 9 == 4 ? 0.0f : v; /* zero rows: inactive patches */
            }
        float *S = kc_malloc((size_t)n * n * sizeof *S);
        CHECK(ncut_cosine(f, n, dim, S, "forms") == 0, "cosine");
        if (t == 5) /* not symmetric on a zero row: its column keeps edges (the lists must notice) */
            for (int j = 0; j < n; j++) S[(size_t)13 * n + j] = 0.0f;
        double *W = kc_malloc((size_t)n * n * sizeof *W);
        double *X = kc_malloc((size_t)n * 4 * sizeof *X), *Y = kc_malloc((size_t)n * 4 * sizeof *Y);
        for (int w = 0; w < 2; w++) {
            ncut_graph g;
            ncut_graph_init(&g, S, n, 0.1 + 0.05 * (t % 3), w);
            ncut_graph_dense(&g, W);
            graphs++;
            for (int i = 0; i < n; i++) forms[g.form[i]]++;
            double dmax = 0, ddiff = 0;
            for (int i = 0; i < n; i++) {
                double d = 0;
                for (int j = 0; j < n; j++) d += W[(size_t)i * n + j];
                ddiff = fmax(ddiff, fabs(d - g.deg[i]) / d);
                dmax = fmax(dmax, d);
            }
            worst_d = fmax(worst_d, ddiff);
            CHECK(ddiff <= 1e-13, "graph %d/%d: degrees differ by %.3g relative", t, w, ddiff);
            for (int nb = 1; nb <= 4; nb++) {
                for (int i = 0; i < n * nb; i++) {
                    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
                    X[i] = (double)(s >> 11) * (1.0 / 9007199254740992.0) - 0.5;
                }
                ncut_graph_apply(&g, X, Y, nb);
                double diff = 0, ymax = 0;
                for (int i = 0; i < n; i++)
                    for (int b = 0; b < nb; b++) {
                        double ref = 0;
                        for (int j = 0; j < n; j++) ref += W[(size_t)i * n + j] * X[(size_t)j * nb + b];
                        diff = fmax(diff, fabs(ref - Y[(size_t)i * nb + b]));
                        ymax = fmax(ymax, fabs(ref));
                    }
                /* sums of n terms of size <= 0.5: rounding ~ n * 1e-16 of the row's scale */
                double rel = diff / fmax(ymax, 1e-300);
                worst_y = fmax(worst_y, rel);
                CHECK(rel <= 1e-12, "graph %d/%d nb %d: W x differs by %.3g of max |W x|", t, w, nb, rel);
            }
            ncut_graph_free(&g);
        }
        free(W);
        free(X);
        free(Y);
        free(S);
        free(f);
    }
    printf("graph products: %d graphs, rows as edge lists %d, gap lists %d, dense %d; worst |W x - dense W x| "
           "%.2e of max (tol 1e-12), worst degree %.2e relative (tol 1e-13)\n",
           graphs, forms[0], forms[1], forms[2], worst_y, worst_d);
    CHECK(forms[0] > 0 && forms[1] > 0 && forms[2] > 0, "every product form exercised (%d %d %d)", forms[0],
          forms[1], forms[2]);
}

/* ---- naive decoder against the shared grid ------------------------------------------------------ */
static void test_naive(tcase *c)
{
    const char *ids[] = {"t0.20-bin-mean-seed-n1", "t0.15-bin-mean-corners-n3", "t0.10-wtd-zero-minority-n3",
                         "t0.25-wtd-mean-corners-n2", "t0.15-bin-zero-seed-n3"};
    ncut_grid g = {0, kc_malloc(5 * sizeof(ncut_setting))};
    for (int k = 0; k < 5; k++) CHECK(ncut_setting_parse(&g.set[g.n++], ids[k]) == 0, "parse");
    ncut_result res[5] = {{0}}, nv;
    CHECK(ncut_grid_run(&g, c->feats, c->gh, c->gw, c->dim, "case", res, NULL) == 0, "grid: %s", kc_error());
    int same = 0;
    double worst = 0;
    for (int k = 0; k < 5; k++) {
        CHECK(ncut_decode_naive(&g.set[k], c->feats, c->gh, c->gw, c->dim, "case", &nv) == 0, "naive: %s", kc_error());
        same += !memcmp(nv.labels, res[k].labels, (size_t)c->gh * c->gw) && nv.degenerate == res[k].degenerate;
        for (int q = 0; q < g.set[k].n_masks; q++)
            if (!isnan(nv.lambda2[q])) worst = fmax(worst, fabs(nv.lambda2[q] - res[k].lambda2[q]) / nv.lambda2[q]);
        ncut_results_free(&nv, 1);
    }
    printf("naive step-by-step decoder vs shared grid: %d/5 identical, worst lambda2 relative difference %.2e "
           "(tol 1e-5)\n",
           same, worst);
    CHECK(same == 5, "naive and grid differ on %d settings", 5 - same);
    CHECK(worst <= 1e-5, "lambda2 naive vs grid %.3g", worst);
    ncut_results_free(res, 5);
    ncut_grid_free(&g);
}

/* ---- settings, grids, bad input, determinism, degenerate ---------------------------------------- */
static void test_grid_and_errors(tcase *c)
{
    ncut_grid g;
    CHECK(ncut_grid_load(&g, "configs/sweep.ini") == 0, "sweep.ini: %s", kc_error());
    CHECK(g.n == 144, "sweep.ini gives %d settings", g.n);
    int unique = 1;
    for (int i = 0; i < g.n; i++)
        for (int j = 0; j < i; j++) unique &= strcmp(g.set[i].id, g.set[j].id) != 0;
    CHECK(unique, "duplicate ids");
    CHECK(ncut_grid_find(&g, "t0.20-bin-mean-seed-n1") >= 0 && ncut_grid_find(&g, "t0.15-bin-mean-corners-n3") >= 0 &&
              ncut_grid_find(&g, "t0.25-wtd-zero-minority-n3") >= 0,
          "published ids in the grid");
    CHECK(g.n && !strcmp(g.set[0].id, "t0.10-bin-mean-seed-n1"), "first id %s", g.n ? g.set[0].id : "");
    /* 1 vs 2 threads: identical */
    ncut_result *a = kc_calloc((size_t)g.n, sizeof *a), *b = kc_calloc((size_t)g.n, sizeof *b);
    omp_set_num_threads(1);
    CHECK(ncut_grid_run(&g, c->feats, c->gh, c->gw, c->dim, "t", a, NULL) == 0, "1 thread");
    omp_set_num_threads(2);
    CHECK(ncut_grid_run(&g, c->feats, c->gh, c->gw, c->dim, "t", b, NULL) == 0, "2 threads");
    int diff = 0;
    for (int s = 0; s < g.n; s++)
        diff += memcmp(a[s].labels, b[s].labels, (size_t)c->gh * c->gw) || memcmp(a[s].lambda2, b[s].lambda2, sizeof a[s].lambda2) ||
                a[s].degenerate != b[s].degenerate;
    CHECK(diff == 0, "1 vs 2 threads: %d settings differ", diff);
    ncut_results_free(a, g.n);
    ncut_results_free(b, g.n);
    /* constant features: a complete graph, every setting degenerate, empty masks, later rounds NaN */
    float *cst = kc_malloc(400 * 8 * sizeof *cst);
    for (int i = 0; i < 400 * 8; i++) cst[i] = 0.5f;
    CHECK(ncut_grid_run(&g, cst, 20, 20, 8, "const", a, NULL) == 0, "constant: %s", kc_error());
    int all_deg = 1;
    for (int s = 0; s < g.n; s++) {
        all_deg &= a[s].degenerate == 1;
        for (int i = 0; i < 400; i++) all_deg &= a[s].labels[i] == 0;
        if (a[s].n_masks > 1) all_deg &= isnan(a[s].lambda2[1]) && !isnan(a[s].lambda2[0]);
    }
    CHECK(all_deg, "constant features: every setting degenerate with empty masks");
    ncut_results_free(a, g.n);
    /* a NaN feature is an error before any solve */
    cst[123] = NAN;
    int rc = ncut_grid_run(&g, cst, 20, 20, 8, "img7", a, NULL);
    CHECK(rc < 0 && strstr(kc_error(), "img7") && strstr(kc_error(), "non-finite"), "NaN: %s", kc_error());
    cst[123] = INFINITY;
    rc = ncut_decode_naive(&g.set[0], cst, 20, 20, 8, "img8", a);
    CHECK(rc < 0 && strstr(kc_error(), "non-finite"), "Inf naive: %s", kc_error());
    free(cst);
    free(a);
    free(b);
    ncut_grid_free(&g);
    /* setting ids */
    ncut_setting st;
    CHECK(ncut_setting_parse(&st, "t0.20-bin-mean-seed-n1") == 0 && st.tau == 0.2 && !st.weighted &&
              st.rule == NCUT_RULE_SEED && st.n_masks == 1,
          "parse TokenCut id");
    CHECK(ncut_setting_parse(&st, "t0.125-wtd-zero-minority-n8") == 0 && !strcmp(st.id, "t0.125-wtd-zero-minority-n8"),
          "3-digit tau: %s", kc_error());
    const char *bad[][2] = {{"t0.20-bin-mean-seed", "expected 5 parts"}, {"t1.5-bin-mean-seed-n1", "bad tau"},
                            {"x0.20-bin-mean-seed-n1", "bad tau"},     {"t0.20-bim-mean-seed-n1", "unknown edges"},
                            {"t0.20-bin-median-seed-n1", "unknown split"}, {"t0.20-bin-mean-blob-n1", "unknown foreground"},
                            {"t0.20-bin-mean-seed-n9", "bad masks"},   {"t0.2-bin-mean-seed-n1", "canonical"}};
    for (int k = 0; k < 8; k++) {
        rc = ncut_setting_parse(&st, bad[k][0]);
        CHECK(rc < 0 && strstr(kc_error(), bad[k][1]) && strstr(kc_error(), bad[k][0]), "%s: %s", bad[k][0], kc_error());
    }
    /* grids */
    const char *badgrid[][2] = {
        {"[grid]\ntau=\nedges=bin\nsplit=mean\nforeground=seed\nmasks=1\n", "axis 'tau' is empty"},
        {"[grid]\ntau=0.2\nedges=bin\nsplit=mean\nforeground=seed,blob\nmasks=1\n", "unknown value 'blob'"},
        {"[grid]\ntau=0.2\nedges=bin\nsplit=mean\nforeground=seed\n", "axis 'masks' missing"},
        {"[grid]\ntau=0.2\nedges=bin\nsplit=mean\nforeground=seed\nmasks=1\ncolour=red\n", "unknown axis 'colour'"},
        {"[grd]\ntau=0.2\n", "unknown section"},
        {"[grid]\ntau=0.2,0.20\nedges=bin\nsplit=mean\nforeground=seed\nmasks=1\n", "given twice"},
        {"[grid]\ntau=0\nedges=bin\nsplit=mean\nforeground=seed\nmasks=1\n", "unknown value '0'"}};
    for (int k = 0; k < 7; k++) {
        rc = ncut_grid_parse(&g, "my.ini", badgrid[k][0]);
        CHECK(rc < 0 && strstr(kc_error(), badgrid[k][1]) && strstr(kc_error(), "my.ini"), "grid %d: %s", k, kc_error());
    }
    rc = ncut_grid_parse(&g, "my.ini", "[grid]\ntau = 0.3\nedges = weighted\nsplit = zero\nforeground = corners minority\nmasks = 2\n");
    CHECK(rc == 0 && g.n == 2 && !strcmp(g.set[1].id, "t0.30-wtd-zero-minority-n2"), "small grid: %s",
          rc == 0 ? g.set[1].id : kc_error());
    if (rc == 0) ncut_grid_free(&g);
    rc = ncut_grid_load(&g, "no/such/grid.ini");
    CHECK(rc < 0 && strstr(kc_error(), "no/such/grid.ini"), "missing grid: %s", kc_error());
}


/* ---- edit distance and the nearest grid id (kc-decode --check-setting) ------------------------- */
/* The definition itself, no table: exponential, for short strings only. */
static int lev_naive(const char *a, const char *b)
{
    if (!*a) return (int)strlen(b);
    if (!*b) return (int)strlen(a);
    int sub = lev_naive(a + 1, b + 1) + (*a != *b), del = lev_naive(a + 1, b) + 1, ins = lev_naive(a, b + 1) + 1;
    return sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
}

static void test_edit_distance(void)
{
    /* worked by hand (kitten -> sitten -> sittin -> sitting, ...); no transposition: ab/ba is 2 */
    static const struct { const char *a, *b; int d; } table[] = {
        {"", "", 0},           {"", "abc", 3},          {"abc", "", 3},        {"abc", "abc", 0},
        {"a", "b", 1},         {"ab", "ba", 2},         {"kitten", "sitting", 3}, {"flaw", "lawn", 2},
        {"sunday", "saturday", 3}, {"intention", "execution", 5}, {"abcdef", "azced", 3},
        {"t0.20-bin-mean-sed-n1", "t0.20-bin-mean-seed-n1", 1},
        {"t0.20-bin-mean-seed-n9", "t0.20-bin-mean-seed-n1", 1},
        {"t1.50-bin-mean-seed-n1", "t0.10-bin-mean-seed-n1", 2},
        {"t1.50-bin-mean-seed-n1", "t0.15-bin-mean-seed-n1", 3},
        {"best", "t0.10-bin-mean-seed-n1", 19}};
    const int n_table = (int)(sizeof table / sizeof table[0]);
    int wrong = 0;
    for (int k = 0; k < n_table; k++) {
        int d = ncut_edit_distance(table[k].a, table[k].b), back = ncut_edit_distance(table[k].b, table[k].a);
        if (d != table[k].d || back != table[k].d) {
            wrong++;
            fprintf(stderr, "edit distance '%s' '%s': %d and %d, by hand %d\n", table[k].a, table[k].b, d, back, table[k].d);
        }
    }
    CHECK(wrong == 0, "edit distance: %d of %d hand-worked pairs wrong", wrong, n_table);
    /* random strings of 0..5 letters of a 3-letter alphabet against the recursive definition */
    uint64_t rng = 12345;
    int differ = 0, pairs = 400;
    for (int k = 0; k < pairs; k++) {
        char a[6], b[6];
        for (int i = 0; i < 6; i++) {
            rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
            a[i] = (char)('a' + rng % 3);
            b[i] = (char)('a' + (rng >> 8) % 3);
        }
        a[rng % 6] = 0; // lengths 0..5
        b[(rng >> 16) % 6] = 0;
        differ += ncut_edit_distance(a, b) != lev_naive(a, b);
    }
    printf("edit distance: %d hand-worked pairs, %d random pairs vs the recursive definition: %d differ (exact)\n",
           n_table, pairs, differ);
    CHECK(differ == 0, "edit distance vs the recursive definition: %d of %d pairs differ", differ, pairs);
    /* the nearest id of the sweep grid, ties broken by grid order */
    ncut_grid g;
    CHECK(ncut_grid_load(&g, "configs/sweep.ini") == 0, "sweep.ini: %s", kc_error());
    static const char *const nearest[][2] = {{"t0.20-bin-mean-sed-n1", "t0.20-bin-mean-seed-n1"},
                                             {"t0.20-bin-mean-seed-n9", "t0.20-bin-mean-seed-n1"},
                                             {"t1.50-bin-mean-seed-n1", "t0.10-bin-mean-seed-n1"},
                                             {"t0.25-wtd-zero-minority-n3", "t0.25-wtd-zero-minority-n3"},
                                             {"0.25 wtd corners", "t0.25-wtd-mean-corners-n1"},
                                             {"", "t0.10-bin-mean-seed-n1"}};
    for (int k = 0; k < 6; k++) {
        int i = ncut_grid_nearest(&g, nearest[k][0]);
        CHECK(i >= 0 && !strcmp(g.set[i].id, nearest[k][1]), "nearest of '%s': %s, expected %s", nearest[k][0],
              i >= 0 ? g.set[i].id : "none", nearest[k][1]);
    }
    ncut_grid_free(&g);
    ncut_grid empty = {0, NULL};
    CHECK(ncut_grid_nearest(&empty, "x") == -1, "nearest of an empty grid");
    /* the check's message: the reason, then the nearest id */
    CHECK(ncut_setting_check("t0.20-bin-mean-seed-n1", "SETTING", NULL, NULL) == 0, "valid id refused: %s", kc_error());
    int rc = ncut_setting_check("t0.20-bin-mean-seed-n9", "SETTING", NULL, NULL);
    CHECK(rc < 0 && !strcmp(kc_error(), "SETTING 't0.20-bin-mean-seed-n9' is not a decoder setting "
                                        "(tau-edges-split-foreground-masks, e.g. t0.20-bin-mean-seed-n1): "
                                        "bad masks part 'n9' (n1 .. n8)"),
          "check n9: %s", kc_error());
}

/* ---- ties (docs/ties.md) ------------------------------------------------------------------------ */
static uint64_t tie_rng = 99;
static float tie_u(void)
{
    tie_rng ^= tie_rng << 13, tie_rng ^= tie_rng >> 7, tie_rng ^= tie_rng << 17;
    return (float)((tie_rng >> 11) * (1.0 / 9007199254740992.0)) - 0.5f;
}

/* Naive reference of the tie rules, written from docs/ties.md: W's rows through ncut_graph_weight,
 * candidates by plain loops.  mode 0 |x|, 1 x, 2 -x; cand NULL = all.  Returns the winner; eff (n)
 * gets each candidate's distance (its row group's smallest within the band), INFINITY elsewhere. */
static double ref_v(const double *x, int i, int mode) { return mode == 0 ? fabs(x[i]) : mode == 1 ? x[i] : -x[i]; }
static int ref_argmax(const ncut_graph *g, const double *x, int mode, const uint8_t *cand, double M, double *eff)
{
    const int n = g->n;
    double vmax = -INFINITY;
    for (int i = 0; i < n; i++)
        if (!cand || cand[i]) vmax = fmax(vmax, ref_v(x, i, mode));
    for (int i = 0; i < n; i++) eff[i] = !cand || cand[i] ? (vmax - ref_v(x, i, mode)) / M : INFINITY;
    if (vmax == -INFINITY) return -1;
    /* a band candidate takes the distance of the first earlier candidate within 5e-7 M of its value
     * whose row of W is identical (at most 64 rows compared) */
    int win = -1;
    for (int i = 0; i < n; i++) {
        if (eff[i] <= NCUT_TIE_CLEAR || eff[i] > NCUT_TIE_KNIFE) continue;
        for (int j = 0, tried = 0; j < i && tried < 64; j++) {
            if (eff[j] > NCUT_TIE_KNIFE || fabs(ref_v(x, j, mode) - ref_v(x, i, mode)) > NCUT_TIE_CLEAR * M) continue;
            tried++;
            int same = 1;
            for (int k = 0; k < n && same; k++) same = ncut_graph_weight(g, i, k) == ncut_graph_weight(g, j, k);
            if (same) {
                eff[i] = fmin(eff[i], eff[j]);
                break;
            }
        }
    }
    for (int i = 0; i < n && win < 0; i++)
        if (eff[i] <= NCUT_TIE) win = i;
    return win;
}

/* possible winners on another path: the first clear tie, band candidates of lower index; one of
 * another outcome (same[i] == 0, or the other sign when same is NULL) than win: the pair's band
 * distance; farther ones of another outcome: their distance (reported only) */
static void ref_note(const double *x, int n, const double *eff, const uint8_t *same, int win, double *margin)
{
    if (win < 0) return;
    int first_clear = n;
    for (int i = 0; i < n && first_clear == n; i++)
        if (eff[i] <= NCUT_TIE_CLEAR) first_clear = i;
    for (int i = 0; i < n; i++) {
        int other = same ? !same[i] : (x[i] < 0) != (x[win] < 0);
        if (!other) continue;
        double d = eff[i];
        if (d <= NCUT_TIE_KNIFE) {
            int possible = d <= NCUT_TIE_CLEAR ? i == first_clear : i < first_clear;
            if (possible) d = fmax(d, eff[win]);
            else continue;
        }
        if (d > NCUT_TIE_CLEAR && d < *margin) *margin = d;
    }
}

/* sign, split, rule by the reference; returns the seed, side (n) the foreground, mask (n) its component */
static int ref_rules(const ncut_graph *g, double *x, int gh, int gw, int split, int rule, uint8_t *side, uint8_t *mask,
                     double *margin)
{
    const int n = g->n;
    double M = 0, t = 0, *eff = kc_malloc((size_t)n * sizeof *eff);
    for (int i = 0; i < n; i++) M = fmax(M, fabs(x[i]));
    int s0 = ref_argmax(g, x, 0, NULL, M, eff);
    ref_note(x, n, eff, NULL, s0, margin);
    if (x[s0] < 0)
        for (int i = 0; i < n; i++) x[i] = -x[i];
    if (split == NCUT_SPLIT_MEAN) {
        for (int i = 0; i < n; i++) t += x[i];
        t /= n;
    }
    int in_p = 0, mode = 0, seed;
    for (int i = 0; i < n; i++) {
        side[i] = x[i] - t > NCUT_TIE * M;
        in_p += side[i];
    }
    const uint8_t *cand = NULL;
    if (rule == NCUT_RULE_CORNERS) {
        mode = 1;
        if (side[0] + side[gw - 1] + side[(gh - 1) * gw] + side[n - 1] >= 3) {
            for (int i = 0; i < n; i++) side[i] = !side[i];
            mode = 2;
        }
    } else if (rule == NCUT_RULE_MINORITY) {
        if (2 * in_p > n)
            for (int i = 0; i < n; i++) side[i] = !side[i];
        cand = side;
    }
    seed = ref_argmax(g, x, mode, cand, M, eff);
    /* the component by repeated sweeps (independent of the library's queue) */
    memset(mask, 0, (size_t)n);
    if (seed >= 0 && side[seed]) mask[seed] = 1;
    for (int changed = 1; changed;) {
        changed = 0;
        for (int i = 0; i < n; i++) {
            if (mask[i] || !side[i]) continue;
            int r = i / gw, c = i % gw;
            if ((r > 0 && mask[i - gw]) || (r + 1 < gh && mask[i + gw]) || (c > 0 && mask[i - 1]) ||
                (c + 1 < gw && mask[i + 1]))
                mask[i] = 1, changed = 1;
        }
    }
    ref_note(x, n, eff, mask, seed, margin);
    /* split entries in the band that can change the mask (docs/ties.md) */
    int band = 0;
    for (int i = 0; i < n; i++) band += fabs(x[i] - t) / M > NCUT_TIE_CLEAR && fabs(x[i] - t) / M <= NCUT_TIE_KNIFE;
    for (int i = 0; i < n; i++) {
        double d = fabs(x[i] - t) / M;
        int r = i / gw, c = i % gw, matters = i == seed || mask[i];
        for (int j = 0; j < n; j++) /* 4-neighbours in the mask, by coordinates */
            if (mask[j] && abs(j / gw - r) + abs(j % gw - c) == 1) matters = 1;
        if (rule == NCUT_RULE_CORNERS && (r == 0 || r == gh - 1) && (c == 0 || c == gw - 1)) matters = 1;
        if (rule == NCUT_RULE_MINORITY &&
            (abs(n - 2 * in_p) <= 2 * band || (seed >= 0 && fabs(x[i]) >= fabs(x[seed]) - NCUT_TIE_KNIFE * M)))
            matters = 1;
        if (matters && d > NCUT_TIE_CLEAR && d < *margin) *margin = d;
    }
    free(eff);
    return seed;
}

typedef struct tie_stats {
    int decisions, knife, path_differ_knife, path_differ, ref_differ, ties_resolved;
} tie_stats;

/* Every (tau, edges, split, rule) of one feature set on both solver paths: the library's tie rules
 * against the reference, and the two paths against each other (identical unless a knife edge).
 * seeds (optional, (8 graphs, 6 chains)): the Krylov path's seeds. */
static void tie_check(const char *name, const float *feats, int gh, int gw, int dim, tie_stats *ts, int *seeds)
{
    const int n = gh * gw;
    float *S = kc_malloc((size_t)n * n * sizeof *S);
    CHECK(ncut_cosine(feats, n, dim, S, name) == 0, "%s: cosine", name);
    double *x[2], *xr = kc_malloc((size_t)n * sizeof *xr);
    uint8_t *side[2], *mask[2], *sref = kc_malloc((size_t)n), *mref_mask = kc_malloc((size_t)n);
    int *queue = kc_malloc((size_t)n * sizeof *queue);
    for (int p = 0; p < 2; p++) {
        x[p] = kc_malloc((size_t)n * sizeof *x[p]);
        side[p] = kc_malloc((size_t)n);
        mask[p] = kc_malloc((size_t)n);
    }
    for (int gi = 0; gi < 8; gi++) {
        double tau = 0.10 + 0.05 * (gi / 2);
        int weighted = gi % 2;
        ncut_graph g;
        ncut_graph_init(&g, S, n, tau, weighted);
        ncut_eig e[2];
        CHECK(ncut_eigen(&g, x[0], &e[0]) == 0 && ncut_eigen_dense(&g, x[1], &e[1]) == 0, "%s: solve", name);
        if (!(e[1].eigengap >= NCUT_DEGENERATE_GAP)) {
            ncut_graph_free(&g);
            continue;
        }
        ncut_rows rows = {S, NULL, n, tau, weighted};
        double sign_margin[2] = {INFINITY, INFINITY};
        for (int p = 0; p < 2; p++) ncut_sign_tied(x[p], n, &rows, &sign_margin[p]);
        for (int c = 0; c < 6; c++) {
            int split = c / 3, rule = c % 3, seed[2], knife = ncut_gap_knife(e[0].eigengap) || ncut_gap_knife(e[1].eigengap);
            for (int p = 0; p < 2; p++) {
                double margin = sign_margin[p], mref = INFINITY;
                ncut_seed_mask_tied(x[p], gh, gw, split, rule, &rows, side[p], queue, mask[p], &margin, &seed[p]);
                knife |= margin <= NCUT_TIE_KNIFE;
                memcpy(xr, x[p], (size_t)n * sizeof *xr);
                /* the reference redoes the sign (its distances do not depend on it) */
                int sr = ref_rules(&g, xr, gh, gw, split, rule, sref, mref_mask, &mref);
                int same_ref = sr == seed[p] && !memcmp(sref, side[p], (size_t)n) && !memcmp(mref_mask, mask[p], (size_t)n) &&
                               (mref == margin || fabs(mref - margin) <= 1e-12);
                ts->ref_differ += !same_ref;
                CHECK(same_ref, "%s tau %.2f %s split %d rule %d path %d: seed %d vs reference %d, margin %.3g vs %.3g",
                      name, tau, weighted ? "wtd" : "bin", split, rule, p, seed[p], sr, margin, mref);
                /* a tie resolved: the plain first-maximum would have chosen another seed */
                if (p == 0 && seed[p] >= 0) {
                    int plain = -1;
                    for (int i = 0; i < n; i++) {
                        if (rule == NCUT_RULE_MINORITY && !side[p][i]) continue;
                        double v = rule == NCUT_RULE_SEED || rule == NCUT_RULE_MINORITY ? fabs(x[p][i])
                                   : side[p][seed[p]] && x[p][seed[p]] >= 0 ? x[p][i] : -x[p][i];
                        double vb = plain < 0 ? -INFINITY
                                    : rule == NCUT_RULE_SEED || rule == NCUT_RULE_MINORITY ? fabs(x[p][plain])
                                    : side[p][seed[p]] && x[p][seed[p]] >= 0 ? x[p][plain] : -x[p][plain];
                        if (v > vb) plain = i;
                    }
                    ts->ties_resolved += plain != seed[p];
                }
            }
            if (seeds) seeds[gi * 6 + c] = seed[0];
            ts->decisions++;
            ts->knife += knife;
            int same = !memcmp(mask[0], mask[1], (size_t)n) && !memcmp(side[0], side[1], (size_t)n);
            if (!same && knife) ts->path_differ_knife++;
            if (!same && !knife) {
                ts->path_differ++;
                CHECK(0, "%s tau %.2f %s split %d rule %d: Krylov and dense differ (seeds %d / %d) and no knife edge",
                      name, tau, weighted ? "wtd" : "bin", split, rule, seed[0], seed[1]);
            }
        }
        ncut_graph_free(&g);
    }
    for (int p = 0; p < 2; p++) {
        free(x[p]);
        free(side[p]);
        free(mask[p]);
    }
    free(xr);
    free(sref);
    free(mref_mask);
    free(queue);
    free(S);
}

static void test_ties(void)
{
    enum { GH = 20, GW = 20, N = GH * GW, DIM = 16 };
    float *f = kc_malloc((size_t)N * DIM * sizeof *f);
    tie_stats ts = {0, 0, 0, 0, 0, 0};
    int seeds[48];
    /* 1. duplicate patches: two disjoint constant blocks of the same feature over a noise background.
     * Rows of W of all block patches are identical (binary): x is equal on both blocks, and every
     * seed in a block is the lowest index of the first block (row 3, column 2). */
    float v[DIM];
    for (int k = 0; k < DIM; k++) v[k] = tie_u();
    for (int i = 0; i < N; i++) {
        int r = i / GW, c = i % GW, blk = (r >= 3 && r < 8 && c >= 2 && c < 7) || (r >= 12 && r < 17 && c >= 12 && c < 17);
        for (int k = 0; k < DIM; k++) f[(size_t)i * DIM + k] = blk ? v[k] : tie_u();
    }
    tie_check("duplicate blocks", f, GH, GW, DIM, &ts, seeds);
    int in_block = 0, at_first = 0;
    for (int q = 0; q < 48; q++) {
        int s = seeds[q], r = s / GW, c = s % GW;
        if (s < 0) continue;
        int blk = (r >= 3 && r < 8 && c >= 2 && c < 7) || (r >= 12 && r < 17 && c >= 12 && c < 17);
        in_block += blk;
        at_first += s == 3 * GW + 2;
    }
    printf("ties, duplicate blocks: %d of 48 seeds in a block, %d of them at the first block's lowest index\n",
           in_block, at_first);
    CHECK(in_block > 0 && at_first == in_block, "duplicate blocks: a seed in a block is not the lowest index");
    /* through the grid, both solver paths: TokenCut's setting gives the first block, never the second */
    {
        ncut_grid g;
        CHECK(ncut_grid_load(&g, "configs/sweep.ini") == 0, "grid");
        ncut_result *res[2] = {kc_calloc((size_t)g.n, sizeof(ncut_result)), kc_calloc((size_t)g.n, sizeof(ncut_result))};
        CHECK(ncut_grid_run(&g, f, GH, GW, DIM, "dup", res[0], NULL) == 0, "grid run");
        setenv("KC_NCUT_SOLVER", "dense", 1);
        CHECK(ncut_grid_run(&g, f, GH, GW, DIM, "dup", res[1], NULL) == 0, "grid run dense");
        unsetenv("KC_NCUT_SOLVER");
        int second = 0, differ = 0, first_block = 0, flagged = 0;
        for (int s = 0; s < g.n; s++) {
            int hit_first = 0;
            for (int i = 0; i < N; i++) {
                int r = i / GW, c = i % GW;
                if (res[0][s].labels[i] == 1 && r >= 12 && r < 17 && c >= 12 && c < 17) second++;
                hit_first |= res[0][s].labels[i] == 1 && r >= 3 && r < 8 && c >= 2 && c < 7;
            }
            first_block += hit_first;
            int knife = res[0][s].knife || res[1][s].knife;
            flagged += knife;
            if (memcmp(res[0][s].labels, res[1][s].labels, N) || res[0][s].degenerate != res[1][s].degenerate) {
                CHECK(knife, "duplicate blocks %s: Krylov and dense masks differ without a knife edge", g.set[s].id);
                differ++;
            }
        }
        printf("ties, duplicate blocks through the grid: %d settings label the first block 1, %d label-1 patches "
               "in the second block; Krylov vs dense: %d differ (all flagged), %d flagged\n",
               first_block, second, differ, flagged);
        CHECK(first_block > 0 && second == 0, "duplicate blocks: round 1 took the second block (%d patches)", second);
        ncut_results_free(res[0], g.n);
        ncut_results_free(res[1], g.n);
        free(res[0]);
        free(res[1]);
        ncut_grid_free(&g);
    }
    /* 2. a mirror-symmetric image (f(r, c) = f(r, W-1-c)) with two mirrored blobs: |x| is tied between
     * mirror patches; every seed must be the left one (lower row-major index). */
    for (int k = 0; k < DIM; k++) v[k] = tie_u();
    for (int r = 0; r < GH; r++)
        for (int c = 0; c < GW / 2; c++) {
            int blob = r >= 6 && r < 11 && c >= 2 && c < 6;
            for (int k = 0; k < DIM; k++) {
                float a = blob ? v[k] + 0.1f * tie_u() : tie_u();
                f[(size_t)(r * GW + c) * DIM + k] = f[(size_t)(r * GW + GW - 1 - c) * DIM + k] = a;
            }
        }
    tie_check("mirror", f, GH, GW, DIM, &ts, seeds);
    int right = 0;
    for (int q = 0; q < 48; q++) right += seeds[q] >= 0 && seeds[q] % GW >= GW / 2;
    CHECK(right == 0, "mirror: %d seeds in the right half (ties go to the lowest index)", right);
    /* 3. constant blocks: four flat quadrants of two features (exact ties everywhere) */
    for (int i = 0; i < N; i++) {
        int q = (i / GW < GH / 2) ^ (i % GW < GW / 2);
        for (int k = 0; k < DIM; k++) f[(size_t)i * DIM + k] = q ? (k == 0 ? 1.0f : 0.1f) : (k == 1 ? 1.0f : 0.1f);
        if (i % 37 == 5) /* a few noisy patches, so the graph is not degenerate everywhere */
            for (int k = 0; k < DIM; k++) f[(size_t)i * DIM + k] += tie_u();
    }
    tie_check("constant blocks", f, GH, GW, DIM, &ts, NULL);
    /* 4. colour features of flat synthetic scenes (the demo's objects without texture): flat regions
     * give many identical rows */
    {
        const int P = 16, H = GH * P, Wd = GW * P;
        float *chw = kc_malloc((size_t)3 * H * Wd * sizeof *chw), *cf = kc_malloc((size_t)N * COLOR_DIM * sizeof *cf);
        for (int scene = 0; scene < 3; scene++) {
            for (int y = 0; y < H; y++)
                for (int xx = 0; xx < Wd; xx++) {
                    float dy = (float)(y - H / 2 - 20 * scene), dx = (float)(xx - Wd / 3);
                    int ell = dy * dy / 3600.0f + dx * dx / 1600.0f < 1.0f;
                    int box = scene > 0 && y > 40 && y < 120 && xx > 200 + 20 * scene && xx < 290;
                    float rgb[3] = {0.1f, 0.05f, 0.0f};
                    if (ell) rgb[0] = 2.0f, rgb[1] = -1.0f, rgb[2] = -0.5f;
                    if (box) rgb[0] = -1.2f, rgb[1] = 0.3f, rgb[2] = 1.8f;
                    for (int ch = 0; ch < 3; ch++) chw[((size_t)ch * H + y) * Wd + xx] = rgb[ch];
                }
            CHECK(color_features(chw, GH, GW, P, cf) == 0, "color features");
            char nm[32];
            snprintf(nm, sizeof nm, "colour scene %d", scene);
            tie_check(nm, cf, GH, GW, COLOR_DIM, &ts, NULL);
        }
        free(chw);
        free(cf);
    }
    printf("ties: %d decisions (sign, split, rule) on exact-tie graphs, %d resolved a tie the plain first maximum "
           "would break otherwise, %d knife edges; library vs naive reference: %d differ; Krylov vs dense: %d "
           "differ on knife edges, %d elsewhere\n",
           ts.decisions, ts.ties_resolved, ts.knife, ts.ref_differ, ts.path_differ_knife, ts.path_differ);
    CHECK(ts.ties_resolved > 0, "no tie was exercised");
    free(f);
}

int main(void)
{
    kc_set_prog("test_ncut");
    tcase cases[16];
    int n_cases = load_cases(cases, 16);
    CHECK(n_cases == 8, "tests/data/ncut/inputs.bin: %d cases (%s)", n_cases, kc_error());
    if (n_cases == 8) {
        test_parity(cases, n_cases);
        test_planted(cases);
        test_naive(&cases[5]);
        test_grid_and_errors(&cases[4]);
    }
    test_edit_distance();
    test_cosine_paths();
    test_graph_forms();
    test_krylov();
    test_ties();
    for (int i = 0; i < n_cases; i++) free(cases[i].feats);
    return test_done();
}
