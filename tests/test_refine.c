/* tests/test_refine.c — decoders/refine/crf.c, decoders/refine/bilateral.c and decoders/refine/refine.c against the independent
 * NumPy/SciPy references of tests/ref/refine_ref.py.
 *
 *   test_refine            the committed blobs tests/data/refine (small images)
 *   test_refine DIR        the cases of DIR/cases.txt (test_refine.sh writes the shared photos' there)
 *
 * Tolerances: CRF marginals Q within 1e-5 of the reference (float32 throughout; the reference
 * accumulates the splat in float64, so the last bits differ), the refined mask equal on every pixel
 * whose two marginals are more than 1e-6 apart; the lattice against exact dense filtering is
 * reported (it is an approximation), and must agree on 90 % of the pixels; bilateral-solver output
 * within 1e-6, masks equal away from 1e-6 of the threshold; Pillow's bicubic resize exactly.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/refine/bilateral.h"
#include "decoders/refine/crf.h"
#include "decoders/refine/refine.h"
#include "pipeline/images/image.h"
#include "pipeline/kc.h"
#include "pipeline/images/resize.h"
#include "tests/test.h"

static char dir[4096];

static void *load(const char *name, const char *ext, size_t bytes)
{
    char p[8192];
    snprintf(p, sizeof p, "%s/%s%s", dir, name, ext);
    FILE *f = fopen(p, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", p);
        exit(2);
    }
    void *b = kc_malloc(bytes ? bytes : 1);
    size_t got = fread(b, 1, bytes, f);
    int extra = fgetc(f) != EOF;
    fclose(f);
    if (got != bytes || extra) {
        fprintf(stderr, "%s: expected %zu bytes\n", p, bytes);
        exit(2);
    }
    return b;
}

static const char *val(char **tok, int n, const char *key)
{
    size_t k = strlen(key);
    for (int i = 0; i < n; i++)
        if (!strncmp(tok[i], key, k) && tok[i][k] == '=') return tok[i] + k + 1;
    fprintf(stderr, "case without %s\n", key);
    exit(2);
}

/* Q against a reference: worst difference, and the map outside ties. */
static void compare_q(const char *what, const float *q, const float *ref, size_t n, double tol)
{
    double worst = 0;
    size_t at = 0;
    for (size_t i = 0; i < 2 * n; i++) {
        double d = fabs((double)q[i] - ref[i]);
        if (d > worst) worst = d, at = i / 2;
    }
    printf("%s: Q worst |diff| %.3g at pixel %zu (tol %.0e)\n", what, worst, at, tol);
    CHECK(worst <= tol, "%s: Q differs by %.3g (tol %.0e)", what, worst, tol);
}

static void compare_map(const char *what, const uint8_t *map, const uint8_t *ref, const float *q, size_t n)
{
    size_t bad = 0, ties = 0;
    for (size_t i = 0; i < n; i++) {
        int tie = fabsf(q[2 * i + 1] - q[2 * i]) <= 1e-6f;
        ties += tie;
        if (map[i] != ref[i] && !tie) bad++;
    }
    printf("%s: mask %zu of %zu pixels differ outside ties (%zu pixels within 1e-6 of a tie)\n", what, bad, n, ties);
    CHECK(bad == 0, "%s: %zu mask pixels differ", what, bad);
}

static void case_crf(char **tok, int nt)
{
    const char *name = val(tok, nt, "name");
    int w = atoi(val(tok, nt, "w")), h = atoi(val(tok, nt, "h"));
    size_t n = (size_t)w * h;
    refine_opts o = REFINE_DEFAULTS;
    o.method = REFINE_CRF;
    o.crf_min_iou = 0;
    o.crf = (crf_params){(float)atof(val(tok, nt, "gauss_sxy")), (float)atof(val(tok, nt, "gauss_w")),
                         (float)atof(val(tok, nt, "bi_sxy")), (float)atof(val(tok, nt, "bi_srgb")),
                         (float)atof(val(tok, nt, "bi_w")), atoi(val(tok, nt, "iters"))};
    uint8_t *rgb = load(name, ".rgb", n * 3), *mask = load(name, ".mask", n), *map_ref = load(name, ".map", n);
    float *q_ref = load(name, ".q", n * 8), *qx_ref = load(name, ".qexact", n * 8);
    float *q = kc_malloc(n * 8), *qx = kc_malloc(n * 8), *unary = kc_malloc(n * 8);
    uint8_t *map = kc_malloc(n);
    double iou;
    CHECK(refine_crf_mask(&o, rgb, w, h, mask, map, q, &iou) == 0, "%s: %s", name, kc_error());
    compare_q(name, q, q_ref, n, 1e-5);
    compare_map(name, map, map_ref, q, n);
    /* the lattice's scalar construction gives the same bits as the AVX2 one (when the CPU has it) */
    float *q_scalar = kc_malloc(n * 8);
    int was = permutohedral_simd(0);
    CHECK(refine_crf_mask(&o, rgb, w, h, mask, map, q_scalar, &iou) == 0, "%s scalar: %s", name, kc_error());
    permutohedral_simd(was);
    size_t differ = 0;
    for (size_t i = 0; i < 2 * n; i++) differ += memcmp(&q[i], &q_scalar[i], sizeof *q) != 0;
    printf("%s: scalar lattice against %s: %zu of %zu marginals differ in any bit (tol 0)\n", name,
           was ? "AVX2" : "scalar (no AVX2 here)", differ, 2 * n);
    CHECK(differ == 0, "%s: the scalar and AVX2 lattices differ in %zu marginals", name, differ);
    free(q_scalar);
    /* exact dense filtering, the same mean field */
    const float u1 = (float)-log(1 / (1 + exp(-1.0))), u0 = (float)-log(exp(-1.0) / (1 + exp(-1.0)));
    for (size_t i = 0; i < n; i++) {
        unary[2 * i] = mask[i] ? u0 : u1;
        unary[2 * i + 1] = mask[i] ? u1 : u0;
    }
    CHECK(crf_run_exact(&o.crf, rgb, w, h, unary, 2, qx) == 0, "%s exact: %s", name, kc_error());
    char what[256];
    snprintf(what, sizeof what, "%s exact dense", name);
    compare_q(what, qx, qx_ref, n, 1e-5);
    double worst = 0;
    size_t agree = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)q[2 * i + 1] - qx[2 * i + 1]);
        if (d > worst) worst = d;
        agree += (q[2 * i + 1] > q[2 * i]) == (qx[2 * i + 1] > qx[2 * i]);
    }
    printf("%s: lattice against exact dense filtering: Q(fg) worst |diff| %.3g, argmax agrees on %zu of %zu pixels "
           "(%.2f %%)\n", name, worst, agree, n, 100.0 * agree / n);
    CHECK(agree >= 0.9 * n, "%s: the lattice's argmax agrees with exact filtering on only %zu of %zu pixels", name, agree, n);
    free(rgb), free(mask), free(map_ref), free(q_ref), free(qx_ref), free(q), free(qx), free(unary), free(map);
}

static void compare_bs(const char *name, const double *out, const double *ref, size_t n, int vertices, int ref_vertices)
{
    double worst = 0;
    for (size_t i = 0; i < n; i++)
        if (fabs(out[i] - ref[i]) > worst) worst = fabs(out[i] - ref[i]);
    printf("%s: solver output worst |diff| %.3g (tol 1e-6); %d vertices (reference %d)\n", name, worst, vertices, ref_vertices);
    CHECK(worst <= 1e-6, "%s: solver output differs by %.3g", name, worst);
    CHECK(vertices == ref_vertices, "%s: %d grid vertices, the reference %d", name, vertices, ref_vertices);
}

static void compare_mask_away(const char *what, const uint8_t *m, const uint8_t *ref, const double *out, size_t n)
{
    size_t bad = 0, near = 0;
    for (size_t i = 0; i < n; i++) {
        int edge = fabs(out[i] - 0.5) <= 1e-6;
        near += edge;
        if (m[i] != ref[i] && !edge) bad++;
    }
    printf("%s: %zu of %zu pixels differ away from 0.5 (%zu within 1e-6 of it)\n", what, bad, n, near);
    CHECK(bad == 0, "%s: %zu mask pixels differ", what, bad);
}

static void case_bs(char **tok, int nt)
{
    const char *name = val(tok, nt, "name");
    int w = atoi(val(tok, nt, "w")), h = atoi(val(tok, nt, "h"));
    size_t n = (size_t)w * h;
    bs_params p = BS_TOKENCUT_RUNS;
    p.sigma_spatial = atof(val(tok, nt, "ss"));
    p.sigma_luma = atof(val(tok, nt, "sl"));
    p.sigma_chroma = atof(val(tok, nt, "sc"));
    uint8_t *rgb = load(name, ".rgb", n * 3), *mask = load(name, ".mask", n);
    uint8_t *m_ref = load(name, ".bsmask", n), *cc_ref = load(name, ".ccmask", n);
    double *ref = load(name, ".out", n * 8), *target = kc_malloc(n * 8), *out = kc_malloc(n * 8);
    for (size_t i = 0; i < n; i++) target[i] = mask[i];
    bs_stats st;
    CHECK(bs_solve(&p, rgb, w, h, target, out, &st) == 0, "%s: %s", name, kc_error());
    compare_bs(name, out, ref, n, st.vertices, atoi(val(tok, nt, "vertices")));
    printf("%s: %d CG iterations, residual %.3g%s\n", name, st.cg_iters, st.residual, st.kept_start ? " (start kept)" : "");
    /* the protocol on the same image: an n x n "grid" of 1-pixel cells is the mask itself */
    refine_opts o = REFINE_DEFAULTS;
    o.method = REFINE_BS;
    o.bs = p;
    kc_image img = {w, h, rgb};
    uint8_t *m = kc_malloc(n);
    refine_info info;
    CHECK(refine_image(&o, &img, POLICY_NATIVE16, 1, mask, h, w, 1, m, &info) == 0, "%s: %s", name, kc_error());
    compare_mask_away(name, m, m_ref, ref, n);
    o.bs_components = 1;
    CHECK(refine_image(&o, &img, POLICY_NATIVE16, 1, mask, h, w, 1, m, &info) == 0, "%s: %s", name, kc_error());
    char what[256];
    snprintf(what, sizeof what, "%s TokenCut components", name);
    compare_mask_away(what, m, cc_ref, ref, n);
    free(rgb), free(mask), free(m_ref), free(cc_ref), free(ref), free(target), free(out), free(m);
}

static void case_resize(char **tok, int nt)
{
    const char *name = val(tok, nt, "name");
    int sw = atoi(val(tok, nt, "sw")), sh = atoi(val(tok, nt, "sh")), dw = atoi(val(tok, nt, "dw")), dh = atoi(val(tok, nt, "dh"));
    uint8_t *src = load(name, ".src", (size_t)sw * sh), *ref = load(name, ".resized", (size_t)dw * dh);
    uint8_t *out = kc_malloc((size_t)dw * dh);
    refine_resize_bicubic_l(src, sw, sh, out, dw, dh);
    int worst = 0;
    for (size_t i = 0; i < (size_t)dw * dh; i++) worst = abs(out[i] - ref[i]) > worst ? abs(out[i] - ref[i]) : worst;
    printf("%s: Pillow bicubic %dx%d -> %dx%d worst |diff| %d (tol 0)\n", name, sw, sh, dw, dh, worst);
    CHECK(worst == 0, "%s: resize differs from Pillow by %d", name, worst);
    free(src), free(ref), free(out);
}

static void case_crfimg(char **tok, int nt)
{
    const char *name = val(tok, nt, "name"), *path = val(tok, nt, "image");
    int W = atoi(val(tok, nt, "w")), H = atoi(val(tok, nt, "h")), gw = atoi(val(tok, nt, "gw")), gh = atoi(val(tok, nt, "gh"));
    kc_image img;
    if (image_load_rgb(path, &img) < 0 || img.w != W || img.h != H) {
        CHECK(0, "%s: cannot load %s", name, path);
        return;
    }
    const size_t n = 480 * 480;
    uint8_t *grid = load(name, ".grid", (size_t)gw * gh), *map_ref = load(name, ".map", n);
    uint8_t *final_ref = load(name, ".final", (size_t)W * H);
    float *q_ref = load(name, ".q", n * 8), *q = kc_malloc(n * 8);
    uint8_t *rgb = kc_malloc(n * 3), *m = kc_malloc(n), *map = kc_malloc(n), *final = kc_malloc((size_t)W * H);
    resize_lanczos_pillow(img.rgb, W, H, rgb, 480, 480);
    for (int y = 0; y < 480; y++)
        for (int x = 0; x < 480; x++) m[y * 480 + x] = grid[(y / 16) * gw + x / 16] == 1;
    refine_opts o = REFINE_DEFAULTS;
    o.method = REFINE_CRF;
    o.crf_min_iou = 0;
    double iou, t0 = kc_now();
    CHECK(refine_crf_mask(&o, rgb, 480, 480, m, map, q, &iou) == 0, "%s: %s", name, kc_error());
    printf("%s: 480x480 CRF in %.0f ms\n", name, 1e3 * (kc_now() - t0));
    compare_q(name, q, q_ref, n, 1e-5);
    compare_map(name, map, map_ref, q, n);
    float *q_scalar = kc_malloc(n * 8); /* the scalar lattice construction: the same bits */
    int was = permutohedral_simd(0);
    CHECK(refine_crf_mask(&o, rgb, 480, 480, m, map, q_scalar, &iou) == 0, "%s scalar: %s", name, kc_error());
    permutohedral_simd(was);
    size_t differ = 0;
    for (size_t i = 0; i < 2 * n; i++) differ += memcmp(&q[i], &q_scalar[i], sizeof *q) != 0;
    printf("%s: scalar lattice against %s: %zu of %zu marginals differ in any bit (tol 0)\n", name,
           was ? "AVX2" : "scalar (no AVX2 here)", differ, 2 * n);
    CHECK(differ == 0, "%s: the scalar and AVX2 lattices differ in %zu marginals", name, differ);
    free(q_scalar);
    o.crf_min_iou = 0.5;
    refine_info info;
    CHECK(refine_image(&o, &img, POLICY_SQUARE480, 16, grid, gh, gw, 2, final, &info) == 0, "%s: %s", name, kc_error());
    size_t bad = 0;
    for (size_t i = 0; i < (size_t)W * H; i++) bad += final[i] != final_ref[i];
    printf("%s: the whole protocol (2 rounds, back to %dx%d): %zu pixels differ; round IoUs %.4f %.4f\n", name, W, H, bad,
           info.iou[0], info.iou[1]);
    CHECK(bad == 0, "%s: %zu pixels of the refined label map differ", name, bad);
    free(grid), free(map_ref), free(final_ref), free(q_ref), free(q), free(rgb), free(m), free(map), free(final);
    image_free(&img);
}

static void case_bsimg(char **tok, int nt)
{
    const char *name = val(tok, nt, "name"), *path = val(tok, nt, "image");
    int W = atoi(val(tok, nt, "w")), H = atoi(val(tok, nt, "h")), gw = atoi(val(tok, nt, "gw")), gh = atoi(val(tok, nt, "gh"));
    kc_image img;
    if (image_load_rgb(path, &img) < 0 || img.w != W || img.h != H) {
        CHECK(0, "%s: cannot load %s", name, path);
        return;
    }
    const size_t N = (size_t)W * H;
    uint8_t *grid = load(name, ".grid", (size_t)gw * gh), *m_ref = load(name, ".bsmask", N), *cc_ref = load(name, ".ccmask", N);
    double *ref = load(name, ".out", N * 8), *target = kc_malloc(N * 8), *out = kc_malloc(N * 8);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) target[(size_t)y * W + x] = grid[(y / 16) * gw + x / 16] == 1;
    bs_params p = BS_TOKENCUT_RUNS;
    bs_stats st;
    double t0 = kc_now();
    CHECK(bs_solve(&p, img.rgb, W, H, target, out, &st) == 0, "%s: %s", name, kc_error());
    printf("%s: %dx%d solve in %.1f ms, %d CG iterations\n", name, W, H, 1e3 * (kc_now() - t0), st.cg_iters);
    compare_bs(name, out, ref, N, st.vertices, atoi(val(tok, nt, "vertices")));
    uint8_t *one = kc_malloc((size_t)gw * gh), *m = kc_malloc(N);
    for (int i = 0; i < gw * gh; i++) one[i] = grid[i] == 1;
    refine_opts o = REFINE_DEFAULTS;
    o.method = REFINE_BS;
    refine_info info;
    CHECK(refine_image(&o, &img, POLICY_NATIVE16, 16, one, gh, gw, 1, m, &info) == 0, "%s: %s", name, kc_error());
    compare_mask_away(name, m, m_ref, ref, N);
    o.bs_components = 1;
    CHECK(refine_image(&o, &img, POLICY_NATIVE16, 16, one, gh, gw, 1, m, &info) == 0, "%s: %s", name, kc_error());
    char what[256];
    snprintf(what, sizeof what, "%s TokenCut components", name);
    compare_mask_away(what, m, cc_ref, ref, N);
    free(grid), free(m_ref), free(cc_ref), free(ref), free(target), free(out), free(one), free(m);
    image_free(&img);
}

/* Fill holes and TokenCut's component step on hand-made masks. */
static void unit_morphology(void)
{
    /* 6x5: a ring with a hole (filled), a notch open to the border (kept open) */
    uint8_t m[5 * 6] = {0, 0, 0, 0, 0, 0,
                        0, 1, 1, 1, 0, 0,
                        0, 1, 0, 1, 0, 1,
                        0, 1, 1, 1, 0, 1,
                        0, 0, 0, 0, 0, 0};
    refine_fill_holes(m, 6, 5);
    CHECK(m[2 * 6 + 2] == 1 && m[0] == 0 && m[2 * 6 + 4] == 0, "fill holes: the enclosed pixel is filled, the rest not");
    /* components: region A (9 px) and B (2 px), background 19: second-largest is A */
    refine_tokencut_components(m, 6, 5);
    int a = 0, b = 0;
    for (int i = 0; i < 30; i++) a += m[i];
    b = m[2 * 6 + 5];
    CHECK(a == 9 && b == 0, "TokenCut components: the 9-pixel region (%d) without the 2-pixel one (%d)", a, b);
    /* foreground larger than the background: the second largest is the background itself */
    uint8_t f[4] = {1, 1, 1, 0};
    refine_tokencut_components(f, 2, 2);
    CHECK(f[0] == 0 && f[3] == 1, "TokenCut components: returns the background when it is second largest");
    uint8_t e[4] = {0, 0, 0, 0};
    refine_tokencut_components(e, 2, 2);
    CHECK(e[0] == 1 && e[3] == 1, "TokenCut components: no region gives the whole image (TokenCut's except branch)");
}

int main(int argc, char **argv)
{
    snprintf(dir, sizeof dir, "%s", argc > 1 ? argv[1] : "tests/data/refine");
    unit_morphology();
    refine_opts bad = REFINE_DEFAULTS;
    bad.crf.bi_srgb = 0;
    CHECK(refine_check(&bad) < 0 && strstr(kc_error(), "--crf-bi-srgb"), "a zero srgb is refused naming the option");
    char cases[8192];
    snprintf(cases, sizeof cases, "%s/cases.txt", dir);
    FILE *f = fopen(cases, "r");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", cases);
        return 2;
    }
    char line[8192];
    while (fgets(line, sizeof line, f)) {
        char *tok[64];
        int nt = 0;
        for (char *t = strtok(line, " \n"); t && nt < 64; t = strtok(NULL, " \n")) tok[nt++] = t;
        if (!nt) continue;
        const char *kind = val(tok, nt, "kind");
        if (!strcmp(kind, "crf")) case_crf(tok, nt);
        else if (!strcmp(kind, "bs")) case_bs(tok, nt);
        else if (!strcmp(kind, "resize")) case_resize(tok, nt);
        else if (!strcmp(kind, "crfimg")) case_crfimg(tok, nt);
        else if (!strcmp(kind, "bsimg")) case_bsimg(tok, nt);
        else CHECK(0, "unknown case kind %s", kind);
    }
    fclose(f);
    return test_done();
}
