/* tests/test_resize.c — Pillow 9.4 Lanczos and OpenCV 4.6 bilinear resampling, and the
 * preprocessing policies, against references written by tests/ref/image_refs.py (patch 16) and
 * tests/ref/policy_refs.py (patches 14 and 8: 490x490 Lanczos on real photos, every policy on a
 * small image), with the policies' sizes and grids per patch against a hand-computed table.
 * Expected: byte-exact (tolerance 0; the issue allows one grey level, the report prints the worst
 * difference and how many values differ). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/images/image.h"
#include "pipeline/kc.h"
#include "pipeline/images/resize.h"
#include "pipeline/sha256.h"
#include "tests/test.h"

#define DATA "tests/data/image"

typedef void (*resize_fn)(const uint8_t *, int, int, uint8_t *, int, int);

static size_t diff_stats(const uint8_t *a, const uint8_t *b, size_t n, int *worst)
{
    size_t nd = 0;
    *worst = 0;
    for (size_t i = 0; i < n; i++) {
        int d = abs((int)a[i] - (int)b[i]);
        nd += d != 0;
        if (d > *worst) *worst = d;
    }
    return nd;
}

/* "lanczos" (Pillow), "linear" (OpenCV), "bilinear" (Pillow's BILINEAR, the probe's policies) */
static resize_fn method_fn(const char *m)
{
    return !strcmp(m, "lanczos") ? resize_lanczos_pillow : !strcmp(m, "bilinear") ? resize_bilinear_pillow : resize_bilinear_cv;
}

/* The 97x61 crop resized as each line of tsv ("method w h") says, against the bytes in bin. */
static void check_small(const char *tsv, const char *bin, const char *script, int at_least)
{
    uint8_t *crop, *ref;
    size_t crop_n, ref_n;
    if (kc_read_file(DATA "/resize_crop.rgb", &crop, &crop_n) < 0 || kc_read_file(bin, &ref, &ref_n) < 0) {
        CHECK(0, "%s (run %s)", kc_error(), script);
        return;
    }
    CHECK(crop_n == 97 * 61 * 3, "resize_crop.rgb size %zu", crop_n);
    FILE *f = fopen(tsv, "r");
    char method[32];
    int w, h, n = 0, exact = 0, worst_all = 0;
    size_t off = 0;
    while (f && fscanf(f, "%31s %d %d", method, &w, &h) == 3) {
        size_t sz = (size_t)w * h * 3;
        if (off + sz > ref_n) {
            CHECK(0, "%s too short", bin);
            break;
        }
        uint8_t *out = kc_malloc(sz);
        method_fn(method)(crop, 97, 61, out, w, h);
        int worst;
        size_t nd = diff_stats(out, ref + off, sz, &worst);
        CHECK(nd == 0, "%s 97x61 -> %dx%d: %zu of %zu values differ, max |diff| %d (tol 0)", method, w, h, nd, sz, worst);
        exact += nd == 0;
        if (worst > worst_all) worst_all = worst;
        n++;
        off += sz;
        free(out);
    }
    if (f) fclose(f);
    printf("small resizes (%s): %d of %d exact, worst |diff| %d\n", tsv, exact, n, worst_all);
    CHECK(n >= at_least, "only %d small resizes in %s", n, tsv);
    free(crop);
    free(ref);
}

static void test_small(void) { check_small(DATA "/resize_small.tsv", DATA "/resize_small.bin", "tests/ref/image_refs.py", 30); }

static void test_real(void)
{
    const char *shared = test_shared_data();
    if (!shared) {
        SKIP("shared data absent: full-size resizes of real images not checked");
        return;
    }
    FILE *f = fopen(DATA "/resize_real.tsv", "r");
    CHECK(f != NULL, "cannot open resize_real.tsv");
    if (!f) return;
    char method[32], rel[1024], want[80];
    int dw, dh, n = 0, exact = 0, first = 1;
    while (fscanf(f, "%31s %1023s %d %d %79s", method, rel, &dw, &dh, want) == 5) {
        char *path = kc_strfmt("%s/%s", shared, rel);
        kc_image im;
        n++;
        if (image_load_rgb(path, &im) < 0) {
            CHECK(0, "%s", kc_error());
            free(path);
            continue;
        }
        int pw, ph;
        policy_size(strcmp(method, "lanczos") == 0 ? POLICY_SQUARE480 : POLICY_SHORT480, 16, im.w, im.h, &pw, &ph);
        CHECK(pw == dw && ph == dh, "%s %s: policy size %dx%d, reference %dx%d", method, rel, pw, ph, dw, dh);
        uint8_t *out = kc_malloc((size_t)dw * dh * 3);
        double t0 = kc_now();
        method_fn(method)(im.rgb, im.w, im.h, out, dw, dh);
        double ms = 1e3 * (kc_now() - t0);
        char hex[65];
        kc_sha256_buf_hex(out, (size_t)dw * dh * 3, hex);
        int ok = strcmp(hex, want) == 0;
        exact += ok;
        CHECK(ok, "%s %s -> %dx%d: output differs from the reference (sha256)", method, rel, dw, dh);
        printf("%-8s %-60s %dx%d -> %dx%d  %s  %.1f ms\n", method, rel, im.w, im.h, dw, dh, ok ? "exact" : "DIFFERS", ms);
        if (first || strcmp(method, "linear") == 0) {
            /* the strips of the first image: first and last 32 rows, lossless reference */
            char *sp = kc_strfmt(DATA "/resize_strips_%s.png", method);
            kc_image st;
            if (first || strcmp(rel, "davis/JPEGImages/480p/blackswan/00000.jpg") == 0) {
                if (image_load_rgb(sp, &st) == 0) {
                    size_t half = (size_t)32 * dw * 3;
                    int w1, w2;
                    size_t n1 = diff_stats(out, st.rgb, half, &w1);
                    size_t n2 = diff_stats(out + (size_t)(dh - 32) * dw * 3, st.rgb + half, half, &w2);
                    int worst = w1 > w2 ? w1 : w2;
                    CHECK(st.w == dw && st.h == 64 && worst <= 1, "%s strips: max |diff| %d (tol 1)", method, worst);
                    printf("%s strips of %s: %zu of %zu values differ, max |diff| %d\n", method, rel, n1 + n2, 2 * half, worst);
                    image_free(&st);
                } else {
                    CHECK(0, "%s", kc_error());
                }
            }
            free(sp);
        }
        first = 0;
        free(out);
        image_free(&im);
        free(path);
    }
    fclose(f);
    printf("full-size real resizes: %d of %d exact\n", exact, n);
    CHECK(n >= 10, "only %d real resizes", n);
}

static void test_policies(void)
{
    uint8_t *in;
    float *ref;
    size_t in_n, ref_n;
    if (kc_read_file(DATA "/policy_in.rgb", &in, &in_n) < 0 || kc_read_file(DATA "/policy.f32", (uint8_t **)&ref, &ref_n) < 0) {
        CHECK(0, "%s", kc_error());
        return;
    }
    kc_image im = {37, 29, in};
    FILE *f = fopen(DATA "/policy.tsv", "r");
    char name[32], want[80];
    int patch, H, W, n = 0;
    size_t off = 0;
    while (f && fscanf(f, "%31s %d %d %d %79s", name, &patch, &H, &W, want) == 5) {
        kc_policy p;
        CHECK(policy_parse(name, &p) == 0, "policy_parse(%s)", name);
        float *chw;
        int h, w;
        if (policy_prepare(&im, p, patch, &chw, &h, &w) < 0) {
            CHECK(0, "policy_prepare %s: %s", name, kc_error());
            continue;
        }
        CHECK(h == H && w == W && h % patch == 0 && w % patch == 0, "%s/%d: %dx%d, reference %dx%d", name, patch, h, w, H, W);
        size_t nv = (size_t)3 * H * W;
        if (h == H && w == W) {
            char hex[65];
            kc_sha256_buf_hex(chw, nv * sizeof(float), hex);
            CHECK(strcmp(hex, want) == 0, "%s/%d: float32 output differs from NumPy's (sha256)", name, patch);
            if (p == POLICY_NATIVE16 && (off + nv) * sizeof(float) <= ref_n) {
                double worst = 0;
                for (size_t i = 0; i < nv; i++) {
                    double d = fabs((double)chw[i] - (double)ref[off + i]);
                    if (d > worst) worst = d;
                }
                CHECK(worst == 0, "%s/%d: max |diff| %.3g (tol 0)", name, patch, worst);
                printf("%s patch %d: %dx%d, max |diff| vs NumPy float32 %.3g\n", name, patch, H, W, worst);
                /* padding is exactly zero */
                int pad_bad = 0;
                for (int c = 0; c < 3; c++)
                    for (int y = 0; y < H; y++)
                        for (int x = 0; x < W; x++)
                            if ((y >= 29 || x >= 37) && chw[((size_t)c * H + y) * W + x] != 0.0f) pad_bad++;
                CHECK(pad_bad == 0, "%d padding values are not zero", pad_bad);
                off += nv;
            }
        }
        n++;
        free(chw);
    }
    if (f) fclose(f);
    CHECK(n == 4, "%d policy cases", n);
    free(ref);

    /* geometry rules */
    int w, h;
    policy_size(POLICY_SHORT480, 16, 854, 480, &w, &h);
    CHECK(w == 832 && h == 480, "short480 854x480 -> %dx%d", w, h);
    policy_size(POLICY_SHORT480, 16, 500, 500, &w, &h);
    CHECK(w == 448 && h == 480, "short480 square -> %dx%d (DINO: 448 wide, 480 high)", w, h);
    policy_size(POLICY_SHORT480, 16, 375, 500, &w, &h);
    CHECK(w == 480 && h == 640, "short480 375x500 -> %dx%d", w, h);
    policy_size(POLICY_SQUARE480, 16, 500, 375, &w, &h);
    CHECK(w == 480 && h == 480, "square480 -> %dx%d", w, h);

    /* errors */
    kc_policy p;
    CHECK(policy_parse("square512", &p) < 0 && strstr(kc_error(), "square512"), "bad policy name: %s", kc_error());
    kc_image tiny = {15, 40, in};
    float *chw = NULL;
    CHECK(policy_prepare(&tiny, POLICY_NATIVE16, 16, &chw, &h, &w) < 0 && chw == NULL && strstr(kc_error(), "smaller"),
          "native16 on a 15-pixel-wide image must fail: %s", kc_error());
    kc_image exact16 = {16, 16, in};
    CHECK(policy_prepare(&exact16, POLICY_NATIVE16, 16, &chw, &h, &w) == 0 && h == 16 && w == 16, "16x16 native16");
    free(chw);

    /* unchanged size is a copy for both resamplers */
    uint8_t *o = kc_malloc(in_n);
    resize_lanczos_pillow(in, 37, 29, o, 37, 29);
    CHECK(memcmp(o, in, in_n) == 0, "Lanczos same size is not a copy");
    resize_bilinear_cv(in, 37, 29, o, 37, 29);
    CHECK(memcmp(o, in, in_n) == 0, "bilinear same size is not a copy");
    free(o);
    free(in);
}

/* Pillow's Lanczos written plainly from its definition (resize.c's header comment): double
 * weights, fixed point 2^22, one output value at a time, horizontal pass over every source row.
 * A second, independent reference for the shapes no Pillow blob covers (odd widths, tiny images,
 * both directions of both passes). */
static void naive_lanczos(const uint8_t *src, int sw, int sh, uint8_t *dst, int dw, int dh)
{
    uint8_t *mid = malloc((size_t)sh * dw * 3);
    for (int pass = 0; pass < 2; pass++) {
        const int in = pass ? sh : sw, out = pass ? dh : dw;
        if (in == out) {
            if (pass) memcpy(dst, mid, (size_t)sh * dw * 3);
            else memcpy(mid, src, (size_t)sh * sw * 3);
            continue;
        }
        const double scale = (double)in / out, fs = scale < 1 ? 1 : scale, support = 3 * fs;
        for (int o = 0; o < out; o++) {
            const double center = (o + 0.5) * scale;
            int lo = (int)(center - support + 0.5), hi = (int)(center + support + 0.5);
            if (lo < 0) lo = 0;
            if (hi > in) hi = in;
            double w[64], sum = 0;
            for (int i = lo; i < hi; i++) {
                double x = (i - center + 0.5) / fs, v = 0;
                if (x == 0) v = 1;
                else if (x >= -3 && x < 3) v = sin(M_PI * x) / (M_PI * x) * sin(M_PI * x / 3) / (M_PI * x / 3);
                w[i - lo] = v;
                sum += v;
            }
            int32_t k[64];
            for (int i = lo; i < hi; i++) {
                double v = (sum != 0 ? w[i - lo] / sum : w[i - lo]) * (1 << 22);
                k[i - lo] = v < 0 ? (int32_t)(v - 0.5) : (int32_t)(v + 0.5);
            }
            const int lines = pass ? dw : sh;
            for (int l = 0; l < lines; l++)
                for (int c = 0; c < 3; c++) {
                    int64_t acc = 1 << 21;
                    for (int i = lo; i < hi; i++)
                        acc += (int64_t)k[i - lo] * (pass ? mid[((size_t)i * dw + l) * 3 + c] : src[((size_t)l * sw + i) * 3 + c]);
                    int64_t v = acc >> 22;
                    uint8_t b = (uint8_t)(acc <= 0 ? 0 : v > 255 ? 255 : v);
                    if (pass) dst[((size_t)o * dw + l) * 3 + c] = b;
                    else mid[((size_t)l * dw + o) * 3 + c] = b;
                }
        }
    }
    free(mid);
}

static void test_lanczos_shapes(void)
{
    static const int shapes[][4] = {{37, 29, 17, 41}, {101, 7, 33, 9}, {5, 5, 3, 8}, {854, 48, 479, 31},
                                    {3, 40, 11, 13}, {64, 64, 64, 31}, {31, 64, 64, 64}, {9, 2, 1, 1}};
    uint32_t x = 7;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const int sw = shapes[s][0], sh = shapes[s][1], dw = shapes[s][2], dh = shapes[s][3];
        uint8_t *src = malloc((size_t)sw * sh * 3), *a = malloc((size_t)dw * dh * 3), *b = malloc((size_t)dw * dh * 3);
        for (int i = 0; i < sw * sh * 3; i++) {
            x = x * 1103515245u + 12345u;
            src[i] = (uint8_t)(i % 7 == 0 ? (x >> 16) & 1 ? 255 : 0 : x >> 24); /* some hard edges */
        }
        resize_lanczos_pillow(src, sw, sh, a, dw, dh);
        naive_lanczos(src, sw, sh, b, dw, dh);
        int worst;
        size_t nd = diff_stats(a, b, (size_t)dw * dh * 3, &worst);
        CHECK(nd == 0, "lanczos %dx%d -> %dx%d: %zu values differ from the plain loops (max %d)", sw, sh, dw, dh, nd, worst);
        free(src), free(a), free(b);
    }
    printf("lanczos against plain loops: %zu shapes\n", sizeof shapes / sizeof shapes[0]);
}

/* Pillow's BILINEAR (torchvision's Resize((S, S)) of a PIL image: the square224 / square448
 * policies of the linear probe), against tests/ref/probe_refs.py; byte-exact. */
static void test_pillow_bilinear(void)
{
    check_small("tests/data/probe/resize_small.tsv", "tests/data/probe/resize_small.bin", "tests/ref/probe_refs.py", 10);
    const char *shared = test_shared_data();
    if (!shared) {
        SKIP("shared data absent: square224 / square448 of real photos not checked");
        return;
    }
    FILE *f = fopen("tests/data/probe/resize_real.tsv", "r");
    char rel[1024], want[80];
    int S, exact = 0, n = 0;
    while (f && fscanf(f, "%1023s %d %79s", rel, &S, want) == 3) {
        char *path = kc_strfmt("%s/%s", shared, rel);
        kc_image im;
        n++;
        if (image_load_rgb(path, &im) < 0) {
            CHECK(0, "%s", kc_error());
            free(path);
            continue;
        }
        kc_policy p = S == 224 ? POLICY_SQUARE224 : POLICY_SQUARE448;
        int pw, ph;
        policy_size(p, 16, im.w, im.h, &pw, &ph);
        CHECK(pw == S && ph == S, "%s: policy size %dx%d", policy_name(p), pw, ph);
        uint8_t *out = kc_malloc((size_t)S * S * 3);
        resize_bilinear_pillow(im.rgb, im.w, im.h, out, S, S);
        char hex[65];
        kc_sha256_buf_hex(out, (size_t)S * S * 3, hex);
        int ok = strcmp(hex, want) == 0;
        exact += ok;
        CHECK(ok, "%s %s: output differs from Pillow's (sha256)", policy_name(p), rel);
        /* the policy's floats are the normalised bytes */
        float *chw;
        int H, W;
        if (policy_prepare(&im, p, 16, &chw, &H, &W) == 0) {
            int bad = 0;
            static const float mean[3] = {0.485f, 0.456f, 0.406f}, sd[3] = {0.229f, 0.224f, 0.225f};
            for (int c = 0; c < 3; c++)
                for (int i = 0; i < S * S; i++)
                    bad += chw[(size_t)c * S * S + i] != ((float)out[3 * i + c] / 255.0f - mean[c]) / sd[c];
            CHECK(H == S && W == S && bad == 0, "%s %s: %d normalised values differ", policy_name(p), rel, bad);
            free(chw);
        } else {
            CHECK(0, "%s", kc_error());
        }
        free(out);
        image_free(&im);
        free(path);
    }
    if (f) fclose(f);
    printf("Pillow bilinear, real photos: %d of %d exact\n", exact, n);
    CHECK(n >= 10, "only %d real square224/448 resizes", n);
}

/* ---- patch sizes other than 16 (issue 29: every side a multiple of the patch) --------------- */

#define PDATA "tests/data/policy"

/* The table of resize.h and docs/design.md, worked out by hand from the rule written there (each
 * side p ceil(side / p) of the reference size; short480: DINO's floor(480 L / S / 64) 64 first),
 * never from the code: policy_size and policy_grid must give exactly these numbers. */
static void test_policy_table(void)
{
    static const struct {
        kc_policy p;
        int patch, w, h, rw, rh, gw, gh;
    } t[] = {
        /* square480: 480 = 30 x 16 = 60 x 8 = 40 x 12 = 32 x 15; 490 = 35 x 14; 483 = 69 x 7 */
        {POLICY_SQUARE480, 16, 500, 375, 480, 480, 30, 30},
        {POLICY_SQUARE480, 14, 500, 375, 490, 490, 35, 35},
        {POLICY_SQUARE480, 8, 500, 375, 480, 480, 60, 60},
        {POLICY_SQUARE480, 12, 854, 480, 480, 480, 40, 40},
        {POLICY_SQUARE480, 15, 17, 23, 480, 480, 32, 32},
        {POLICY_SQUARE480, 7, 500, 375, 483, 483, 69, 69},
        /* the probe's: 224 = 14 x 16 = 16 x 14 = 28 x 8; 225 = 15 x 15; 228 = 19 x 12; 448 = 32 x 14; 450 = 30 x 15 */
        {POLICY_SQUARE224, 16, 500, 375, 224, 224, 14, 14},
        {POLICY_SQUARE224, 14, 500, 375, 224, 224, 16, 16},
        {POLICY_SQUARE224, 8, 500, 375, 224, 224, 28, 28},
        {POLICY_SQUARE224, 15, 500, 375, 225, 225, 15, 15},
        {POLICY_SQUARE224, 12, 500, 375, 228, 228, 19, 19},
        {POLICY_SQUARE448, 16, 500, 375, 448, 448, 28, 28},
        {POLICY_SQUARE448, 14, 500, 375, 448, 448, 32, 32},
        {POLICY_SQUARE448, 8, 500, 375, 448, 448, 56, 56},
        {POLICY_SQUARE448, 15, 500, 375, 450, 450, 30, 30},
        /* short480, landscape 854 x 480: 480 * 854 / 480 = 854 -> 13 x 64 = 832; 832 = 59.4 x 14 -> 840 */
        {POLICY_SHORT480, 16, 854, 480, 832, 480, 52, 30},
        {POLICY_SHORT480, 14, 854, 480, 840, 490, 60, 35},
        {POLICY_SHORT480, 8, 854, 480, 832, 480, 104, 60},
        {POLICY_SHORT480, 12, 854, 480, 840, 480, 70, 40}, /* 832 = 69.3 x 12 -> 840 */
        /* square 500 x 500: DINO's 448 wide, 480 high; 448 = 32 x 14 */
        {POLICY_SHORT480, 16, 500, 500, 448, 480, 28, 30},
        {POLICY_SHORT480, 14, 500, 500, 448, 490, 32, 35},
        {POLICY_SHORT480, 8, 500, 500, 448, 480, 56, 60},
        /* portrait 375 x 500: 480 * 500 / 375 = 640 = 10 x 64; 640 = 45.7 x 14 -> 644 */
        {POLICY_SHORT480, 16, 375, 500, 480, 640, 30, 40},
        {POLICY_SHORT480, 14, 375, 500, 490, 644, 35, 46},
        {POLICY_SHORT480, 8, 375, 500, 480, 640, 60, 80},
        /* 1280 x 480: 1280 = 20 x 64; 1280 = 91.4 x 14 -> 1288 */
        {POLICY_SHORT480, 16, 1280, 480, 1280, 480, 80, 30},
        {POLICY_SHORT480, 14, 1280, 480, 1288, 490, 92, 35},
        /* native16: the image itself, grid ceil(side / p): 500 = 35.7 x 14, 375 = 26.8 x 14, 500 = 62.5 x 8 */
        {POLICY_NATIVE16, 16, 500, 375, 500, 375, 32, 24},
        {POLICY_NATIVE16, 14, 500, 375, 500, 375, 36, 27},
        {POLICY_NATIVE16, 8, 500, 375, 500, 375, 63, 47},
        {POLICY_NATIVE16, 14, 854, 480, 854, 480, 61, 35},
    };
    int bad = 0;
    for (size_t k = 0; k < sizeof t / sizeof *t; k++) {
        int rw, rh, gh, gw;
        policy_size(t[k].p, t[k].patch, t[k].w, t[k].h, &rw, &rh);
        policy_grid(t[k].p, t[k].patch, t[k].w, t[k].h, &gh, &gw);
        int ok = rw == t[k].rw && rh == t[k].rh && gw == t[k].gw && gh == t[k].gh;
        bad += !ok;
        CHECK(ok, "%s patch %d on %dx%d: size %dx%d grid %dx%d, by hand %dx%d grid %dx%d", policy_name(t[k].p),
              t[k].patch, t[k].w, t[k].h, rw, rh, gw, gh, t[k].rw, t[k].rh, t[k].gw, t[k].gh);
    }
    printf("policy sizes and grids per patch: %zu cases, %d off the hand-computed table (tol 0)\n", sizeof t / sizeof *t,
           bad);

    /* provenance text: patch 16 (and 8, which rounds nothing) word for word as before patches
     * were rounded for; patch 14 names its sizes */
    static const char *const before[5] = {
        "square480: 480x480 Lanczos (Pillow 9.4), x/255, mean (0.485,0.456,0.406), std (0.229,0.224,0.225)",
        "short480: short side 480, long side floor(480*long/short/64)*64, bilinear (OpenCV 4.6), x/255, "
        "mean (0.485,0.456,0.406), std (0.228,0.224,0.225)",
        "native16: no resize, x/255, mean (0.485,0.456,0.406), std (0.229,0.224,0.225), zero padding after "
        "normalisation to a multiple of the patch size",
        "square224: 224x224 bilinear with antialias (Pillow 9.4, torchvision Resize((224, 224))), x/255, "
        "mean (0.485,0.456,0.406), std (0.229,0.224,0.225)",
        "square448: 448x448 bilinear with antialias (Pillow 9.4, torchvision Resize((448, 448))), x/255, "
        "mean (0.485,0.456,0.406), std (0.229,0.224,0.225)",
    };
    char text[512];
    for (int p = 0; p < 5; p++)
        for (int patch = 16; patch >= 8; patch -= 8) {
            policy_describe((kc_policy)p, patch, text, sizeof text);
            CHECK(!strcmp(text, before[p]), "%s patch %d described as '%s', before '%s'", policy_name((kc_policy)p),
                  patch, text, before[p]);
        }
    policy_describe(POLICY_SQUARE480, 14, text, sizeof text);
    CHECK(strstr(text, "490x490") != NULL, "square480 patch 14: '%s' (no 490x490)", text);
    policy_describe(POLICY_SHORT480, 14, text, sizeof text);
    CHECK(strstr(text, "rounded up to a multiple of patch 14") != NULL, "short480 patch 14: '%s'", text);
}

/* Every policy at patches 14 and 8 on the 37x29 image, against tests/ref/policy_refs.py (float32
 * output sha256; native16's floats themselves, max |diff| tol 0, padding exactly 0). */
static void test_patch_small(void)
{
    uint8_t *in;
    float *ref;
    size_t in_n, ref_n;
    if (kc_read_file(DATA "/policy_in.rgb", &in, &in_n) < 0 || kc_read_file(PDATA "/small.f32", (uint8_t **)&ref, &ref_n) < 0) {
        CHECK(0, "%s (run tests/ref/policy_refs.py)", kc_error());
        return;
    }
    kc_image im = {37, 29, in};
    FILE *f = fopen(PDATA "/small.tsv", "r");
    CHECK(f != NULL, "cannot open " PDATA "/small.tsv");
    char name[32], want[80];
    int patch, H, W, n = 0, exact = 0;
    size_t off = 0;
    double worst_native = 0;
    while (f && fscanf(f, "%31s %d %d %d %79s", name, &patch, &H, &W, want) == 5) {
        kc_policy p;
        CHECK(policy_parse(name, &p) == 0, "policy_parse(%s)", name);
        float *chw;
        int h, w;
        n++;
        if (policy_prepare(&im, p, patch, &chw, &h, &w) < 0) {
            CHECK(0, "policy_prepare %s/%d: %s", name, patch, kc_error());
            continue;
        }
        CHECK(h == H && w == W, "%s/%d: %dx%d, reference %dx%d", name, patch, w, h, W, H);
        const size_t nv = (size_t)3 * H * W;
        if (h == H && w == W) {
            char hex[65];
            kc_sha256_buf_hex(chw, nv * sizeof(float), hex);
            int ok = !strcmp(hex, want);
            exact += ok;
            CHECK(ok, "%s/%d: float32 output differs from NumPy's (sha256)", name, patch);
            if (p == POLICY_NATIVE16 && (off + nv) * sizeof(float) <= ref_n) {
                int pad_bad = 0;
                for (size_t i = 0; i < nv; i++) worst_native = fmax(worst_native, fabs((double)chw[i] - (double)ref[off + i]));
                for (int c = 0; c < 3; c++)
                    for (int y = 0; y < H; y++)
                        for (int x = 0; x < W; x++)
                            if ((y >= 29 || x >= 37) && chw[((size_t)c * H + y) * W + x] != 0.0f) pad_bad++;
                CHECK(pad_bad == 0, "native16/%d: %d padding values are not zero", patch, pad_bad);
                off += nv;
            }
        }
        free(chw);
    }
    if (f) fclose(f);
    printf("policies at patches 14 and 8 on 37x29: %d of %d float outputs exact; native16 max |diff| %.3g (tol 0)\n",
           exact, n, worst_native);
    CHECK(n == 10, "%d cases in small.tsv, expected 10", n);
    CHECK(off * sizeof(float) == ref_n, "small.f32: %zu floats used of %zu", off, ref_n / sizeof(float));
    CHECK(worst_native == 0, "native16 at patches 14 and 8: max |diff| %.3g (tol 0)", worst_native);
    free(in);
    free(ref);
}

/* Patch 14 on real photos (real.tsv): square480 is Pillow's Image.resize((490, 490), LANCZOS) byte
 * for byte, short480 OpenCV's resize to the rounded size, native16 the padded image; then the
 * float32 output of policy_prepare (sha256, tol 0).  The first photo's strips give the worst |diff|.
 * real_round.tsv: policy round (TokenCut's saliency resize, Pillow's LANCZOS to each side rounded to
 * the nearest multiple of the patch) at patches 16, 14 and 8, the same checks without strips. */
static void test_real_table(const char *file, const char *what, int want_strips, int min_n, int min_px)
{
    const char *shared = test_shared_data();
    if (!shared) {
        SKIP("shared data absent: %s on real photos not checked", what);
        return;
    }
    FILE *f = fopen(file, "r");
    CHECK(f != NULL, "cannot open %s (run tests/ref/policy_refs.py)", file);
    if (!f) return;
    char name[32], rel[1024], want_px[80], want_f[80];
    int patch, dw, dh, n = 0, exact_px = 0, n_px = 0, exact_f = 0, strips = 0, worst_strip = 0;
    while (fscanf(f, "%31s %d %1023s %d %d %79s %79s", name, &patch, rel, &dw, &dh, want_px, want_f) == 7) {
        kc_policy p;
        CHECK(policy_parse(name, &p) == 0, "policy_parse(%s)", name);
        char *path = kc_strfmt("%s/%s", shared, rel);
        kc_image im;
        n++;
        if (image_load_rgb(path, &im) < 0) {
            CHECK(0, "%s", kc_error());
            free(path);
            continue;
        }
        int pw, ph;
        policy_size(p, patch, im.w, im.h, &pw, &ph);
        CHECK(pw == dw && ph == dh, "%s/%d %s: policy size %dx%d, reference %dx%d", name, patch, rel, pw, ph, dw, dh);
        if (p != POLICY_NATIVE16 && pw == dw && ph == dh) {
            uint8_t *out = kc_malloc((size_t)dw * dh * 3);
            method_fn(p == POLICY_SQUARE480 || p == POLICY_ROUND ? "lanczos" : "linear")(im.rgb, im.w, im.h, out, dw, dh);
            char hex[65];
            kc_sha256_buf_hex(out, (size_t)dw * dh * 3, hex);
            int ok = !strcmp(hex, want_px);
            exact_px += ok;
            n_px++;
            CHECK(ok, "%s/%d %s -> %dx%d: resized bytes differ from the reference (sha256)", name, patch, rel, dw, dh);
            char *sp = kc_strfmt(PDATA "/strips_%s.png", name);
            kc_image st;
            if (want_strips && n <= 2 && image_load_rgb(sp, &st) == 0) { /* the first photo's two lines */
                const size_t half = (size_t)16 * dw * 3;
                int w1 = 0, w2 = 0;
                size_t nd = 0;
                if (st.w == dw && st.h == 32) {
                    nd = diff_stats(out, st.rgb, half, &w1) + diff_stats(out + (size_t)(dh - 16) * dw * 3, st.rgb + half, half, &w2);
                    int worst = w1 > w2 ? w1 : w2;
                    if (worst > worst_strip) worst_strip = worst;
                    printf("%s/%d strips of %s: %zu of %zu values differ, max |diff| %d (tol 0)\n", name, patch, rel, nd,
                           2 * half, worst);
                    strips++;
                } else {
                    CHECK(0, "%s: %dx%d, expected %dx32", sp, st.w, st.h, dw);
                }
                image_free(&st);
            }
            free(sp);
            free(out);
        }
        float *chw;
        int H, W;
        if (policy_prepare(&im, p, patch, &chw, &H, &W) == 0) {
            const int eh = (dh + patch - 1) / patch * patch, ew = (dw + patch - 1) / patch * patch;
            CHECK(H == eh && W == ew, "%s/%d %s: prepared %dx%d, expected %dx%d", name, patch, rel, W, H, ew, eh);
            char hex[65];
            kc_sha256_buf_hex(chw, (size_t)3 * H * W * sizeof(float), hex);
            int ok = H == eh && W == ew && !strcmp(hex, want_f);
            exact_f += ok;
            CHECK(ok, "%s/%d %s: float32 output differs from NumPy's (sha256)", name, patch, rel);
            free(chw);
        } else {
            CHECK(0, "policy_prepare %s/%d %s: %s", name, patch, rel, kc_error());
        }
        image_free(&im);
        free(path);
    }
    fclose(f);
    printf("%s on real photos: %d of %d resizes byte-exact, %d of %d policy outputs exact; strips max |diff| %d\n",
           what, exact_px, n_px, exact_f, n, worst_strip);
    CHECK(n >= min_n && n_px >= min_px, "only %d %s cases (%d resizes)", n, what, n_px);
    if (want_strips) CHECK(strips == 2 && worst_strip == 0, "strips: %d checked, max |diff| %d (tol 0)", strips, worst_strip);
}

static void test_patch14_real(void) { test_real_table(PDATA "/real.tsv", "patch 14", 1, 60, 40); }

/* policy round: sizes by Python's round (a half goes to the even multiple: 500 at patch 8 is 496) */
static void test_round_real(void)
{
    test_real_table(PDATA "/real_round.tsv", "policy round", 0, 75, 75);
    static const int cases[][5] = {{500, 375, 16, 496, 368}, {500, 375, 8, 496, 376}, {854, 480, 14, 854, 476},
                                   {902, 480, 16, 896, 480}, {910, 480, 16, 912, 480}, {24, 40, 16, 32, 32},
                                   {8, 9, 16, 0, 16}, {7, 300, 14, 0, 294}, {21, 300, 14, 28, 294}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int w, h, gh, gw;
        policy_size(POLICY_ROUND, cases[c][2], cases[c][0], cases[c][1], &w, &h);
        CHECK(w == cases[c][3] && h == cases[c][4], "round %dx%d patch %d -> %dx%d, expected %dx%d", cases[c][0],
              cases[c][1], cases[c][2], w, h, cases[c][3], cases[c][4]);
        policy_grid(POLICY_ROUND, cases[c][2], cases[c][0], cases[c][1], &gh, &gw);
        CHECK(gw * cases[c][2] == w && gh * cases[c][2] == h, "round grid %dx%d for %dx%d", gw, gh, w, h); /* 0.5 -> 0, 1.5 -> 2 */
    }
    /* a side below half a patch rounds to 0: refused */
    uint8_t px[3 * 8 * 9] = {0};
    kc_image small = {8, 9, px};
    float *chw = NULL;
    int H, W;
    CHECK(policy_prepare(&small, POLICY_ROUND, 16, &chw, &H, &W) < 0 && chw == NULL, "round: an 8-pixel side at patch 16 must fail");
}

int main(void)
{
    test_policy_table();
    test_patch_small();
    test_patch14_real();
    test_round_real();
    test_pillow_bilinear();
    test_lanczos_shapes();
    test_small();
    test_real();
    test_policies();
    return test_done();
}
