/* tests/test_resize.c — Pillow 9.4 Lanczos and OpenCV 4.6 bilinear resampling, and the three
 * preprocessing policies, against references written by tests/ref/image_refs.py.
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
        policy_size(strcmp(method, "lanczos") == 0 ? POLICY_SQUARE480 : POLICY_SHORT480, im.w, im.h, &pw, &ph);
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
    policy_size(POLICY_SHORT480, 854, 480, &w, &h);
    CHECK(w == 832 && h == 480, "short480 854x480 -> %dx%d", w, h);
    policy_size(POLICY_SHORT480, 500, 500, &w, &h);
    CHECK(w == 448 && h == 480, "short480 square -> %dx%d (DINO: 448 wide, 480 high)", w, h);
    policy_size(POLICY_SHORT480, 375, 500, &w, &h);
    CHECK(w == 480 && h == 640, "short480 375x500 -> %dx%d", w, h);
    policy_size(POLICY_SQUARE480, 500, 375, &w, &h);
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
        policy_size(p, im.w, im.h, &pw, &ph);
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

int main(void)
{
    test_pillow_bilinear();
    test_lanczos_shapes();
    test_small();
    test_real();
    test_policies();
    return test_done();
}
