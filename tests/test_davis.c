/* tests/test_davis.c — J, F and J&F against the official davis2017-evaluation.
 *
 * 1. seg2bmap on a hand-checked mask; the fast F (windows, row distances) against the naive F
 *    (whole-image maps, explicit disk dilation as cv2.dilate with skimage's disk) on random masks,
 *    touching the borders, empty and full; J against a brute count.
 * 2. davis_statistics' decay bins against edges computed by NumPy (tests/ref/davis_ref.py --edges).
 * 3. Official parity: the OSVOS results in shared/data/davis_results against shared/data/davis:
 *    every per-frame J and F, per-object M/R/D and global value of
 *    expected_metrics_official_fullprec.json to 1e-6, and the two CSVs byte for byte.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/davis/davis_jf.h"
#include "pipeline/json.h"
#include "pipeline/kc.h"
#include "tests/test.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

/* Random blobs of label id (and a few other ids) in a w x h map. */
static void random_labels(uint8_t *lab, int w, int h, int id, int style)
{
    memset(lab, 0, (size_t)w * h);
    if (style == 0) return; /* empty */
    if (style == 1) {       /* full */
        memset(lab, id, (size_t)w * h);
        return;
    }
    int n_blobs = 1 + rnd() % 4;
    for (int b = 0; b < n_blobs; b++) {
        int cx = (int)(rnd() % w), cy = (int)(rnd() % h);
        int rx = 1 + (int)(rnd() % (w / 2 + 1)), ry = 1 + (int)(rnd() % (h / 2 + 1));
        int val = (rnd() % 4 == 0) ? id + 1 : id;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                double dx = (double)(x - cx) / rx, dy = (double)(y - cy) / ry;
                int inside = style == 2 ? dx * dx + dy * dy <= 1 : fabs(dx) <= 1 && fabs(dy) <= 1;
                if (inside) lab[y * w + x] = (uint8_t)val;
            }
    }
    if (style == 4) /* speckle noise */
        for (int i = 0; i < w * h; i++)
            if (rnd() % 17 == 0) lab[i] = rnd() % 2 ? (uint8_t)id : 0;
}

static void test_boundary(void)
{
    /* 4x3 map: a 2x2 square at (1,0)-(2,1).  seg2bmap by the rule, worked out by hand. */
    const uint8_t lab[12] = {0, 1, 1, 0,
                             0, 1, 1, 0,
                             0, 0, 0, 0};
    const uint8_t want[12] = {1, 0, 1, 0,
                              1, 1, 1, 0,
                              0, 0, 0, 0};
    uint8_t got[12];
    davis_seg2bmap(lab, 4, 3, 1, got);
    int bad = 0;
    for (int i = 0; i < 12; i++) bad += got[i] != want[i];
    CHECK(bad == 0, "seg2bmap of a 2x2 square: %d pixels differ from the hand-made map", bad);
    /* a mask touching the last row and column: last row compares with the right only, last column with
     * the one below only, the corner never */
    const uint8_t lab2[9] = {0, 0, 0,
                             0, 1, 1,
                             0, 1, 1};
    const uint8_t want2[9] = {1, 1, 1,
                              1, 0, 0,
                              1, 0, 0};
    davis_seg2bmap(lab2, 3, 3, 1, got);
    bad = 0;
    for (int i = 0; i < 9; i++) bad += got[i] != want2[i];
    CHECK(bad == 0, "seg2bmap at the last row/column: %d pixels differ", bad);

    CHECK(davis_bound_radius(854, 480, DAVIS_BOUND_TH) == 8, "radius at 854x480: %d, want 8",
          davis_bound_radius(854, 480, DAVIS_BOUND_TH));
    CHECK(davis_bound_radius(1920, 1080, DAVIS_BOUND_TH) == 18, "radius at 1920x1080: %d, want 18",
          davis_bound_radius(1920, 1080, DAVIS_BOUND_TH));

    /* fast F == naive F, J == brute J, on random masks */
    int n_cases = 0, n_bad_f = 0, n_bad_j = 0;
    double worst_f = 0, worst_j = 0;
    for (int c = 0; c < 400; c++) {
        int w = 3 + rnd() % 60, h = 3 + rnd() % 45;
        int radius = (c % 5 == 0) ? davis_bound_radius(w, h, DAVIS_BOUND_TH) : 1 + (int)(rnd() % 9);
        uint8_t *gt = malloc((size_t)w * h), *res = malloc((size_t)w * h);
        random_labels(gt, w, h, 1, c % 7 == 0 ? 0 : c % 11 == 0 ? 1 : 2 + rnd() % 3);
        random_labels(res, w, h, 1, c % 5 == 0 ? 0 : c % 13 == 0 ? 1 : 2 + rnd() % 3);
        double f = davis_f_measure(gt, res, w, h, 1, radius);
        double fn = davis_f_measure_naive(gt, res, w, h, 1, radius);
        if (fabs(f - fn) > worst_f) worst_f = fabs(f - fn);
        n_bad_f += fabs(f - fn) > 1e-12;
        long inter = 0, uni = 0;
        for (int i = 0; i < w * h; i++) {
            inter += gt[i] == 1 && res[i] == 1;
            uni += gt[i] == 1 || res[i] == 1;
        }
        double jb = uni ? (double)inter / uni : 1.0, j = davis_jaccard(gt, res, w, h, 1);
        if (fabs(j - jb) > worst_j) worst_j = fabs(j - jb);
        n_bad_j += fabs(j - jb) > 1e-15;
        n_cases++;
        free(gt);
        free(res);
    }
    CHECK(n_bad_f == 0, "fast F vs naive F: %d of %d cases differ by more than 1e-12 (worst %.3g)", n_bad_f, n_cases,
          worst_f);
    CHECK(n_bad_j == 0, "J vs brute count: %d of %d differ (worst %.3g)", n_bad_j, n_cases, worst_j);
    printf("fast vs naive F: %d cases, worst |diff| %.3g (tol 1e-12); J worst %.3g (tol 1e-15)\n", n_cases, worst_f,
           worst_j);

    /* the edge cases */
    uint8_t z[16] = {0}, o[16];
    memset(o, 0, sizeof o);
    o[5] = 1;
    CHECK_CLOSE(davis_f_measure(z, z, 4, 4, 1, 2), 1.0, 0, "F with both empty");
    CHECK_CLOSE(davis_jaccard(z, z, 4, 4, 1), 1.0, 0, "J with both empty");
    CHECK_CLOSE(davis_f_measure(o, z, 4, 4, 1, 2), 0.0, 0, "F with an empty prediction (P=1, R=0)");
    CHECK_CLOSE(davis_f_measure(z, o, 4, 4, 1, 2), 0.0, 0, "F with an empty ground truth (P=0, R=1)");
    CHECK_CLOSE(davis_f_measure(o, o, 4, 4, 1, 2), 1.0, 0, "F of a mask with itself");
}

static void test_statistics(void)
{
    /* edges round(linspace(1, n, 5) + 1e-10) - 1 as NumPy gives them (tests/ref/davis_ref.py --edges) */
    static const int edges[][6] = {
        {1, 0, 0, 0, 0, 0},     {2, 0, 0, 1, 1, 1},     {3, 0, 1, 1, 2, 2},     {4, 0, 1, 2, 2, 3},
        {5, 0, 1, 2, 3, 4},     {6, 0, 1, 3, 4, 5},     {7, 0, 2, 3, 5, 6},     {10, 0, 2, 5, 7, 9},
        {38, 0, 9, 19, 28, 37}, {47, 0, 12, 23, 35, 46}, {48, 0, 12, 24, 35, 47}};
    int bad = 0;
    for (size_t c = 0; c < sizeof edges / sizeof edges[0]; c++) {
        int n = edges[c][0];
        double v[64];
        /* distinct values: each bin mean depends on its ends */
        for (int i = 0; i < n; i++) v[i] = i * i + 0.25 * i;
        double m, r, d;
        davis_statistics(v, n, &m, &r, &d);
        double b0 = 0, b3 = 0;
        for (int i = edges[c][1]; i <= edges[c][2]; i++) b0 += v[i];
        for (int i = edges[c][4]; i <= edges[c][5]; i++) b3 += v[i];
        double want = b0 / (edges[c][2] - edges[c][1] + 1) - b3 / (edges[c][5] - edges[c][4] + 1);
        if (fabs(d - want) > 1e-12) {
            bad++;
            fprintf(stderr, "decay for n=%d: %.9g, want %.9g\n", n, d, want);
        }
    }
    CHECK(bad == 0, "decay bins: %d cases differ from NumPy's edges (tol 1e-12)", bad);
    double v[4] = {0.2, 0.6, 0.51, 0.5}, m, r, d;
    davis_statistics(v, 4, &m, &r, &d);
    CHECK_CLOSE(m, 0.4525, 1e-15, "mean");
    CHECK_CLOSE(r, 0.5, 0, "recall counts values > 0.5 only");
}

static int files_equal(const char *a, const char *b)
{
    uint8_t *da, *db;
    size_t na, nb;
    if (kc_read_file(a, &da, &na) < 0) return 0;
    if (kc_read_file(b, &db, &nb) < 0) {
        free(da);
        return 0;
    }
    int eq = na == nb && memcmp(da, db, na) == 0;
    if (!eq) fprintf(stderr, "--- %s\n%s--- %s\n%s", a, (char *)da, b, (char *)db);
    free(da);
    free(db);
    return eq;
}

static void test_official(void)
{
    const char *shared = test_shared_data();
    if (!shared) {
        SKIP("shared data absent: no official parity check");
        return;
    }
    char *root = kc_strfmt("%s/davis", shared), *res = kc_strfmt("%s/davis_results/semi-supervised/osvos", shared);
    char *expect = kc_strfmt("%s/expected_metrics_official_fullprec.json", res);
    davis_eval ev;
    double t0 = kc_now();
    int rc = davis_evaluate(res, root, "val", &ev);
    CHECK(rc == 0, "davis_evaluate on the OSVOS results: %s", kc_error());
    if (rc < 0) goto out;
    printf("evaluated %d objects, %d frames in %.2fs\n", ev.n_obj, ev.n_frames, kc_now() - t0);
    uint8_t *text;
    size_t len;
    json_value js;
    if (kc_read_file(expect, &text, &len) < 0 || json_parse(&js, (char *)text, len, expect) < 0) {
        CHECK(0, "cannot read %s: %s", expect, kc_error());
        davis_eval_free(&ev);
        goto out;
    }
    free(text);
    const json_value *glob = json_get(&js, "global"), *per_frame = json_get(&js, "per_frame");
    double worst = 0;
    const char *worst_what = "";
    int n_values = 0, missing = 0;
    for (int k = 0; k < DAVIS_N_GLOBAL; k++) {
        const json_value *v = json_get(glob, davis_global_names[k]);
        if (!v) {
            missing++;
            continue;
        }
        double d = fabs(v->number - ev.global[k]);
        n_values++;
        if (d > worst) worst = d, worst_what = davis_global_names[k];
    }
    CHECK(json_count(per_frame) == ev.n_obj, "objects: %d, official %d", ev.n_obj, json_count(per_frame));
    for (int i = 0; i < ev.n_obj; i++) {
        const davis_object *o = &ev.obj[i];
        const json_value *po = json_get(per_frame, o->name);
        if (!po) {
            missing++;
            continue;
        }
        const json_value *jj = json_get(po, "J"), *ff = json_get(po, "F"), *fr = json_get(po, "frames");
        const json_value *js3 = json_get(po, "J-stats(M,R,D)"), *fs3 = json_get(po, "F-stats(M,R,D)");
        CHECK(json_count(jj) == o->n && json_count(ff) == o->n && json_count(fr) == o->n,
              "%s: %d scored frames, official %d", o->name, o->n, json_count(jj));
        if (json_count(jj) != o->n) continue;
        for (int t = 0; t < o->n; t++) {
            CHECK(strcmp(json_item(fr, t)->string, o->frames[t]) == 0, "%s frame %d: %s vs %s", o->name, t,
                  o->frames[t], json_item(fr, t)->string);
            double dj = fabs(json_item(jj, t)->number - o->J[t]), df = fabs(json_item(ff, t)->number - o->F[t]);
            n_values += 2;
            if (dj > worst) worst = dj, worst_what = "per-frame J";
            if (df > worst) worst = df, worst_what = "per-frame F";
        }
        for (int k = 0; k < 3; k++) {
            double dj = fabs(json_item(js3, k)->number - o->j_stats[k]);
            double df = fabs(json_item(fs3, k)->number - o->f_stats[k]);
            n_values += 2;
            if (dj > worst) worst = dj, worst_what = "per-object J stats";
            if (df > worst) worst = df, worst_what = "per-object F stats";
        }
    }
    CHECK(missing == 0, "%d official values have no counterpart", missing);
    CHECK(worst <= 1e-6, "official parity: worst |diff| %.3g in %s (tol 1e-6)", worst, worst_what);
    printf("official parity: %d values, worst |diff| %.3g (%s), tol 1e-6\n", n_values, worst, worst_what);
    json_free(&js);

    /* the CSVs, byte for byte */
    const char *tmp = test_tmpdir("davis");
    CHECK(davis_write_outputs(&ev, tmp, "val", 0) == 0, "write outputs: %s", kc_error());
    CHECK(davis_write_outputs(&ev, tmp, "val", 0) < 0 && strstr(kc_error(), "--force"),
          "a second write without force must refuse: '%s'", kc_error());
    CHECK(davis_write_outputs(&ev, tmp, "val", 1) == 0, "write outputs with force: %s", kc_error());
    const char *names[2] = {"global_results-val.csv", "per-sequence_results-val.csv"};
    for (int k = 0; k < 2; k++) {
        char *a = kc_strfmt("%s/%s", tmp, names[k]), *b = kc_strfmt("%s/%s", res, names[k]);
        CHECK(files_equal(a, b), "%s differs from the official one", names[k]);
        free(a);
        free(b);
    }
    /* our own JSON parses and holds the seven global names */
    char *ours = kc_strfmt("%s/global_results-val.json", tmp);
    if (kc_read_file(ours, &text, &len) == 0 && json_parse(&js, (char *)text, len, ours) == 0) {
        int have = 0;
        for (int k = 0; k < DAVIS_N_GLOBAL; k++) {
            const json_value *v = json_get(json_get(&js, "global"), davis_global_names[k]);
            have += v && fabs(v->number - ev.global[k]) == 0;
        }
        CHECK(have == DAVIS_N_GLOBAL, "our JSON holds %d of the 7 global values at full precision", have);
        json_free(&js);
        free(text);
    } else {
        CHECK(0, "our JSON does not parse: %s", kc_error());
    }
    free(ours);
    davis_eval_free(&ev);
out:
    free(root);
    free(res);
    free(expect);
}

int main(void)
{
    test_boundary();
    test_statistics();
    test_official();
    return test_done();
}
