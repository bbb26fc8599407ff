/* tests/test_attn.c — DINO's attention baseline: the class attention of the ViT forward
 * (vit_forward_ex) against PyTorch (tests/ref/attn_ref.py tiny: tests/data/vit/NAME.attn.f32), the
 * attention-mass masks (decoders/attn_mass.h) against the NumPy blobs and a naive C loop (ties
 * included), the setting ids, and DINO's best-head Jaccard (eval/voc/attn_metrics.h) against its
 * per-pixel reference.  Tolerances: attention 1e-4 of max |ref|; masks identical; Jaccard 1e-12. */
#include <stdint.h>
#include <stdlib.h>

#include "decoders/attn_mass.h"
#include "eval/voc/attn_metrics.h"
#include "pipeline/kc.h"
#include "pipeline/model/vit.h"
#include "pipeline/weights/weights.h"
#include "tests/test.h"

#define DATA "tests/data/vit"

static void *read_blob(const char *name, size_t bytes)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", DATA, name);
    return test_read_exact(path, bytes);
}

static vit_model *load_tiny(int drop_cls)
{
    kc_weights w;
    if (weights_load(&w, DATA "/dino.pth", NULL) < 0) return NULL;
    vit_opts o = VIT_OPTS_DEFAULT;
    o.heads = 2;
    o.drop_cls = drop_cls;
    vit_model *m = NULL;
    int rc = vit_init(&m, &w, &o);
    weights_free(&w);
    return rc < 0 ? NULL : m;
}

/* One input of the tiny DINO network: attention vs torch, masks vs NumPy, keys/tokens unchanged. */
static void attn_case(const char *name, int h, int w, const char *threading)
{
    vit_model *m = load_tiny(0);
    CHECK(m != NULL, "%s: load: %s", name, kc_error());
    if (!m) return;
    const int heads = vit_heads(m), D = vit_dim(m), gh = h / 16, gw = w / 16, G = gh * gw;
    char b[128];
    snprintf(b, sizeof b, "%s.in.f32", name);
    float *in = read_blob(b, (size_t)3 * h * w * sizeof(float));
    snprintf(b, sizeof b, "%s.attn.f32", name);
    float *ref = read_blob(b, (size_t)heads * G * sizeof(float));
    snprintf(b, sizeof b, "%s.mass60.u8", name);
    uint8_t *ref_masks = read_blob(b, (size_t)heads * G);
    CHECK(in && ref && ref_masks, "%s: reference blobs missing or of the wrong size", name);
    vit_state *s = NULL;
    if (in && ref && ref_masks && vit_state_new(&s, m, gh, gw) == 0) {
        float *attn = calloc((size_t)heads * G, sizeof(float));
        float *k1 = malloc((size_t)G * D * sizeof(float)), *k2 = malloc((size_t)G * D * sizeof(float));
        float *t1 = malloc((size_t)G * D * sizeof(float)), *t2 = malloc((size_t)G * D * sizeof(float));
        /* attention alone (keys-only path: the last block's k rows only) */
        vit_outputs only = {NULL, NULL, attn};
        CHECK(vit_forward_ex(m, s, in, gh, gw, &only) == 0, "%s: forward: %s", name, kc_error());
        double md = 0, mr = 0;
        for (int i = 0; i < heads * G; i++) {
            double d = fabs((double)attn[i] - ref[i]);
            if (!(d <= md)) md = d;
            if (fabs(ref[i]) > mr) mr = fabs(ref[i]);
        }
        printf("%s (%s): class attention (%d, %d) max|diff| %.3g, max|ref| %.3g\n", name, threading, heads, G, md, mr);
        CHECK(md <= 1e-4 * mr, "%s (%s): attention max|diff| %.3g > 1e-4 * %.3g", name, threading, md, mr);
        /* with keys and tokens (the full last block): the same attention, keys and tokens unchanged */
        float *attn2 = calloc((size_t)heads * G, sizeof(float));
        vit_outputs all = {k1, t1, attn2};
        CHECK(vit_forward_ex(m, s, in, gh, gw, &all) == 0, "%s: forward: %s", name, kc_error());
        CHECK(vit_forward(m, s, in, gh, gw, k2, t2) == 0, "%s: forward: %s", name, kc_error());
        CHECK(!memcmp(k1, k2, (size_t)G * D * sizeof(float)) && !memcmp(t1, t2, (size_t)G * D * sizeof(float)),
              "%s: keys or tokens change when the attention is asked for too", name);
        double d2 = 0; /* the k rows come from a product of another shape: rounding only */
        for (int i = 0; i < heads * G; i++) d2 = fmax(d2, fabs((double)attn[i] - attn2[i]));
        CHECK(d2 <= 1e-5 * mr, "%s (%s): attention differs between the keys-only and the full last block by %.3g", name,
              threading, d2);
        /* the masks of the reference attention: exactly NumPy's */
        uint8_t *masks = malloc((size_t)heads * G);
        CHECK(attn_mass_masks(ref, heads, G, 0.6, masks) == 0, "%s: no knife edge expected", name);
        CHECK(!memcmp(masks, ref_masks, (size_t)heads * G), "%s: attn-mass0.60 masks differ from attn_ref.py", name);
        free(masks);
        free(attn);
        free(attn2);
        free(k1);
        free(k2);
        free(t1);
        free(t2);
    }
    vit_state_free(s);
    free(in);
    free(ref);
    free(ref_masks);
    vit_free(m);
}

static void test_no_class_token(void)
{
    vit_model *m = load_tiny(1);
    CHECK(m != NULL, "drop-cls load: %s", kc_error());
    if (!m) return;
    CHECK(!vit_has_cls(m), "--drop-cls runs no class token");
    vit_state *s = NULL;
    float *in = read_blob("dino_pth.in.f32", (size_t)3 * 64 * 48 * sizeof(float));
    float attn[2 * 12];
    if (in && vit_state_new(&s, m, 4, 3) == 0) {
        for (int i = 0; i < 24; i++) attn[i] = -7;
        vit_outputs o = {NULL, NULL, attn};
        int rc = vit_forward_ex(m, s, in, 4, 3, &o);
        CHECK(rc < 0 && strstr(kc_error(), "class token"), "attention without a class token: rc %d, '%s'", rc, kc_error());
        CHECK(attn[0] == -7 && attn[23] == -7, "nothing written on the error");
    }
    vit_state_free(s);
    free(in);
    vit_free(m);
}

/* Naive rule: c_g = the share of every patch at or before g in ascending (value, index) order,
 * summed in index order; keep c_g > 1 - m.  Patches within 1e-9 of the cut are not compared. */
static void test_mass_naive(void)
{
    uint32_t seed = 12345;
    int skipped = 0, compared = 0, differ = 0;
    for (int trial = 0; trial < 40; trial++) {
        const int heads = 1 + trial % 4, G = 7 + trial * 5;
        const double m = 0.05 + 0.95 * (trial % 9) / 8.0;
        float *a = malloc((size_t)heads * G * sizeof(float));
        for (int i = 0; i < heads * G; i++) {
            seed = seed * 1664525u + 1013904223u;
            int q = (int)(seed >> 24) % (trial % 2 ? 5 : 200); /* odd trials: many ties */
            a[i] = (float)(q + 1) / 7.0f;
        }
        uint8_t *got = malloc((size_t)heads * G);
        attn_mass_masks(a, heads, G, m, got);
        for (int h = 0; h < heads; h++) {
            const float *w = a + (size_t)h * G;
            double sum = 0;
            for (int g = 0; g < G; g++) sum += w[g];
            for (int g = 0; g < G; g++) {
                double c = 0;
                for (int j = 0; j < G; j++)
                    if (w[j] < w[g] || (w[j] == w[g] && j <= g)) c += w[j] / sum;
                if (fabs(c - (1 - m)) < 1e-9) {
                    skipped++;
                    continue;
                }
                compared++;
                differ += got[(size_t)h * G + g] != (c > 1 - m);
            }
        }
        free(a);
        free(got);
    }
    printf("mass rule vs naive loop: %d patches compared, %d differ, %d on the cut skipped\n", compared, differ, skipped);
    CHECK(differ == 0 && compared > 1000, "mass masks differ from the naive loop at %d of %d patches", differ, compared);
    /* ties, by hand: four equal weights, m = 0.5: ascending order 0,1,2,3, cumulative .25 .5 .75 1,
     * kept where > 0.5: patches 2 and 3 (the higher indices win a tie, as DINO's stable sort) */
    float eq[4] = {1, 1, 1, 1};
    uint8_t mk[4];
    attn_mass_masks(eq, 1, 4, 0.5, mk);
    CHECK(!mk[0] && !mk[1] && mk[2] && mk[3], "ties: got %d%d%d%d, expected 0011", mk[0], mk[1], mk[2], mk[3]);
    float one[3] = {0.2f, 0.7f, 0.1f};
    attn_mass_masks(one, 1, 3, 0.6, mk);
    CHECK(!mk[0] && mk[1] && !mk[2], "0.7 alone holds 60 %%: got %d%d%d", mk[0], mk[1], mk[2]);
    attn_mass_masks(one, 1, 3, 0.75, mk);
    CHECK(mk[0] && mk[1] && !mk[2], "0.7 + 0.2 for 75 %%: got %d%d%d", mk[0], mk[1], mk[2]);
    float zero[2] = {0, 0};
    CHECK(attn_mass_masks(zero, 1, 2, 0.6, mk) < 0, "an all-zero head is an error");
}

static void test_setting_ids(void)
{
    double m;
    char id[32];
    CHECK(attn_mass_parse("attn-mass0.60", &m, id) == 0 && m == 0.6 && !strcmp(id, "attn-mass0.60"), "attn-mass0.60");
    CHECK(attn_mass_parse("attn-mass0.6", &m, id) == 0 && !strcmp(id, "attn-mass0.60"), "attn-mass0.6 -> %s", id);
    CHECK(attn_mass_parse("attn-mass1", &m, id) == 0 && !strcmp(id, "attn-mass1.00"), "attn-mass1 -> %s", id);
    CHECK(attn_mass_parse("attn-mass0.625", &m, id) == 0 && !strcmp(id, "attn-mass0.625"), "attn-mass0.625 -> %s", id);
    const char *bad[] = {"attn-mass1.50", "attn-mass0", "attn-mass-0.5", "attn-mass", "attn-massabc", "attn-mass0.6x",
                         "attn-massnan", "t0.20-bin-mean-seed-n1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK(attn_mass_parse(bad[i], &m, id) < 0 && strstr(kc_error(), bad[i]), "%s refused, naming it: %s", bad[i],
              kc_error());
    CHECK(attn_mass_parse("attn-mass1.50", &m, id) < 0 && strstr(kc_error(), "outside (0, 1]"), "1.50: %s", kc_error());
}

static void test_jaccard(void)
{
    uint32_t seed = 99;
    struct { kc_policy p; int patch, h, w, gh, gw; } cases[] = {
        {POLICY_SQUARE480, 16, 37, 53, 30, 30}, {POLICY_SQUARE480, 16, 90, 61, 7, 9},
        {POLICY_NATIVE16, 16, 50, 33, 4, 3},    {POLICY_SHORT480, 16, 40, 70, 5, 8},
    };
    double worst = 0;
    int n_obj_total = 0;
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
        for (int rep = 0; rep < 3; rep++) {
            const int h = cases[c].h, w = cases[c].w, gh = cases[c].gh, gw = cases[c].gw, heads = 3;
            uint8_t *obj = malloc((size_t)h * w), *masks = malloc((size_t)heads * gh * gw);
            /* blobs of a few object ids, void borders, background */
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++) {
                    uint8_t v = 0;
                    if (x > w / 4 && x < w / 2 && y > h / 5) v = 3;
                    if (x > w / 2 && y < h / 2) v = 7;
                    if (rep == 1 && x < w / 5) v = 254;
                    if (v && (x == w / 4 + 1 || y == h / 5 + 1)) v = 255;
                    if (rep == 2) v = (x + y) % 17 == 0 ? 255 : 0; /* no object at all */
                    obj[(size_t)y * w + x] = v;
                }
            for (int i = 0; i < heads * gh * gw; i++) {
                seed = seed * 1664525u + 1013904223u;
                masks[i] = (seed >> 28) < 6;
            }
            attn_cells cells;
            attn_score fast, naive;
            double fg1[3], fg2[3], om1[3], om2[3];
            CHECK(attn_cells_init(&cells, obj, h, w, cases[c].p, cases[c].patch, gh, gw) == 0, "cells: %s", kc_error());
            attn_score_stack(&cells, masks, heads, &fast, fg1, om1);
            CHECK(attn_score_naive(obj, h, w, cases[c].p, cases[c].patch, masks, heads, gh, gw, &naive, fg2, om2) == 0,
                  "naive: %s", kc_error());
            CHECK(fast.n_objects == naive.n_objects, "objects %d vs %d", fast.n_objects, naive.n_objects);
            n_obj_total += fast.n_objects;
            if (fast.n_objects) {
                worst = fmax(worst, fabs(fast.best - naive.best));
            } else {
                CHECK(isnan(fast.best) && isnan(naive.best), "no objects: NaN");
            }
            for (int k = 0; k < heads; k++) {
                worst = fmax(worst, fabs(fg1[k] - fg2[k]));
                if (fast.n_objects) worst = fmax(worst, fabs(om1[k] - om2[k]));
            }
            attn_cells_free(&cells);
            free(obj);
            free(masks);
        }
    printf("best-head Jaccard, fast vs per-pixel: worst |diff| %.3g over %d objects\n", worst, n_obj_total);
    CHECK(worst <= 1e-12 && n_obj_total > 10, "Jaccard fast vs naive: %.3g", worst);
    /* by hand: 2x2 image, grid 2x2 square480, one object in the left column, void bottom right */
    uint8_t obj[4] = {5, 0, 5, 255}, m2[8] = {1, 1, 0, 0, /* head 1: */ 1, 0, 1, 1};
    attn_cells cells;
    attn_score sc;
    double fg[2];
    attn_cells_init(&cells, obj, 2, 2, POLICY_SQUARE480, 16, 2, 2);
    attn_score_stack(&cells, m2, 2, &sc, fg, NULL);
    /* head 0: inter 1, union {0,1,2} = 3 -> 1/3; head 1: inter 2, union 2 (void not counted) -> 1 */
    CHECK_CLOSE(fg[0], 1.0 / 3, 1e-15, "hand fg head 0");
    CHECK_CLOSE(fg[1], 1.0, 1e-15, "hand fg head 1");
    CHECK_CLOSE(sc.best, 1.0, 1e-15, "hand best head");
    attn_cells_free(&cells);
}

int main(void)
{
    attn_case("dino_pth", 64, 48, "omp");
    attn_case("dino_row", 48, 80, "omp");
    setenv("KC_VIT_THREADING", "openblas", 1);
    attn_case("dino_pth", 64, 48, "openblas");
    unsetenv("KC_VIT_THREADING");
    test_no_class_token();
    test_mass_naive();
    test_setting_ids();
    test_jaccard();
    return test_done();
}
