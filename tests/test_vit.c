/* tests/test_vit.c — the ViT forward, its fast math, the position resampler and the colour
 * extractor.
 *
 * Reference blobs in tests/data/vit/ come from tests/ref/vit_ref.py (torch primitives): tiny
 * models (width 32, depth 2, heads 2) as .pth / safetensors / Hugging Face names, inputs and
 * their keys and tokens.  Tolerance of every forward check: max |diff| <= 1e-4 * max |ref|.
 */
#include <lapacke.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/model/fastmath.h"
#include "pipeline/kc.h"
#include "pipeline/model/vit.h"
#include "pipeline/weights/weights.h"
#include "tests/test.h"

#define DATA "tests/data/vit"
/* where cases.txt and its files are: DATA, or argv[1] (tests/test_vit_full.sh passes the
 * full-size cases it generated) */
static const char *case_dir = DATA;

static float *read_f32(const char *path, size_t n) { return test_read_exact(path, n * sizeof(float)); }

/* max |a - b| and max |b| */
static void compare(const float *a, const float *b, size_t n, double *maxdiff, double *maxref,
                    size_t *worst)
{
    *maxdiff = 0;
    *maxref = 0;
    *worst = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]);
        if (!(d <= *maxdiff)) { *maxdiff = d; *worst = i; } /* NaN counts as worst */
        if (fabs(b[i]) > *maxref) *maxref = fabs(b[i]);
    }
}

/* ---- fast math ---------------------------------------------------------------------------- */

static void test_fastmath(void)
{
    double worst = 0, at = 0;
    for (double x = -87.3; x <= 88.3; x += 3.1e-5) {
        float xf = (float)x;
        double ref = exp((double)xf), got = kc_expf(xf);
        double rel = fabs(got - ref) / ref;
        if (!(rel <= worst)) { worst = rel; at = xf; }
    }
    printf("kc_expf: worst relative error %.3g at %.6g (tolerance 2.5e-7) over [-87.3, 88.3]\n",
           worst, at);
    CHECK(worst <= 2.5e-7, "kc_expf relative error %.3g at %.6g", worst, at);
    CHECK(kc_expf(-87.5f) == 0.0f && kc_expf(-1e30f) == 0.0f, "kc_expf underflow is not 0");
    CHECK(kc_expf(0.0f) == 1.0f, "kc_expf(0) = %.9g", (double)kc_expf(0.0f));
    CHECK(isfinite(kc_expf(1e30f)) && kc_expf(1e30f) > 1e38f, "kc_expf overflow clamp");

    worst = 0;
    for (double x = -10; x <= 10; x += 7.7e-6) {
        float xf = (float)x;
        double ref = erf((double)xf), got = kc_erff(xf);
        double rel = fabs(got - ref) / fmax(fabs(ref), 1e-30);
        if (!(rel <= worst)) { worst = rel; at = xf; }
    }
    printf("kc_erff: worst relative error %.3g at %.6g (tolerance 3e-7) over [-10, 10]\n", worst, at);
    CHECK(worst <= 3e-7, "kc_erff relative error %.3g at %.6g", worst, at);
    CHECK(kc_erff(0.0f) == 0.0f && kc_erff(30.0f) == 1.0f && kc_erff(-30.0f) == -1.0f,
          "kc_erff limits");

    /* GELU: relative error scaled by (1 + x^2 / 2): below zero GELU is x erfc(|x| / sqrt 2) / 2,
     * whose condition number grows like x^2 (the rounding of x / sqrt 2 and of z^2 in exp(-z^2)
     * alone cost ~x^2 * 6e-8); absolute error everywhere. */
    double worst_rel = 0, worst_abs = 0, at_abs = 0;
    for (double x = -16; x <= 16; x += 9.1e-6) {
        float xf = (float)x;
        double xd = xf, ref = 0.5 * xd * erfc(-xd / sqrt(2.0)), got = kc_gelu(xf);
        double ad = fabs(got - ref);
        if (xd >= -8 && fabs(ref) > 0) {
            double rel = ad / fabs(ref) / (1 + xd * xd / 2);
            if (!(rel <= worst_rel)) { worst_rel = rel; at = xf; }
        }
        if (!(ad <= worst_abs)) { worst_abs = ad; at_abs = xf; }
    }
    printf("kc_gelu: worst relative error / (1 + x^2/2) %.3g at %.6g on [-8, 16] (tolerance "
           "5e-7), worst absolute %.3g at %.6g on [-16, 16] (tolerance 1e-6)\n",
           worst_rel, at, worst_abs, at_abs);
    CHECK(worst_rel <= 5e-7, "kc_gelu relative error / (1 + x^2/2) %.3g at %.6g", worst_rel, at);
    CHECK(worst_abs <= 1e-6, "kc_gelu absolute error %.3g at %.6g", worst_abs, at_abs);

    /* the array forms equal the scalar ones */
    enum { N = 1003 };
    float a[N], b[N];
    int same = 1;
    for (int i = 0; i < N; i++) a[i] = b[i] = -40.0f + 0.08f * (float)i;
    kc_vexpf(a, N);
    for (int i = 0; i < N; i++) same &= a[i] == kc_expf(b[i]);
    for (int i = 0; i < N; i++) a[i] = b[i];
    kc_vgelu(a, N);
    for (int i = 0; i < N; i++) same &= a[i] == kc_gelu(b[i]);
    CHECK(same, "kc_vexpf / kc_vgelu differ from the scalar forms");
}

/* ---- position embedding resampling against a naive double implementation ---------------- */

static double naive_cubic(double x)
{
    const double A = -0.75;
    x = fabs(x);
    if (x <= 1) return ((A + 2) * x - (A + 3)) * x * x + 1;
    if (x < 2) return A * x * x * x - 5 * A * x * x + 8 * A * x - 4 * A;
    return 0;
}

static void naive_resample(const float *src, int n, int dim, int gh, int gw, int hf, float *dst)
{
    for (int oy = 0; oy < gh; oy++)
        for (int ox = 0; ox < gw; ox++)
            for (int d = 0; d < dim; d++) {
                double sy = (oy + 0.5) * n / (hf ? gh : gh + 0.1) - 0.5;
                double sx = (ox + 0.5) * n / (hf ? gw : gw + 0.1) - 0.5;
                int fy = (int)floor(sy), fx = (int)floor(sx);
                double acc = 0;
                for (int j = fy - 1; j <= fy + 2; j++)
                    for (int k = fx - 1; k <= fx + 2; k++) {
                        int cy = j < 0 ? 0 : j >= n ? n - 1 : j;
                        int cx = k < 0 ? 0 : k >= n ? n - 1 : k;
                        acc += naive_cubic(sy - j) * naive_cubic(sx - k) *
                               src[((size_t)cy * n + cx) * dim + d];
                    }
                dst[((size_t)oy * gw + ox) * dim + d] = (float)acc;
            }
}

static void test_resample(void)
{
    const int cases[][4] = {{3, 4, 3, 0},  {3, 4, 3, 1},   {14, 30, 30, 0}, {14, 30, 52, 1},
                            {14, 14, 20, 0}, {14, 30, 30, 1}, {6, 2, 3, 0},   {6, 2, 3, 1},
                            {1, 3, 2, 0},  {14, 14, 14, 0}};
    const int dim = 5;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int n = cases[c][0], gh = cases[c][1], gw = cases[c][2], hf = cases[c][3];
        float *src = malloc(sizeof(float) * n * n * dim);
        float *got = malloc(sizeof(float) * gh * gw * dim), *ref = malloc(sizeof(float) * gh * gw * dim);
        uint32_t r = 12345u + (uint32_t)c;
        for (int i = 0; i < n * n * dim; i++) {
            r = r * 1664525u + 1013904223u;
            src[i] = (float)((r >> 8) / 16777216.0 * 2 - 1);
        }
        CHECK(vit_resample_pos(src, n, dim, gh, gw, hf, got) == 0, "vit_resample_pos: %s", kc_error());
        if (gh == n && gw == n)
            memcpy(ref, src, sizeof(float) * n * n * dim); /* no resampling at all */
        else
            naive_resample(src, n, dim, gh, gw, hf, ref);
        double md, mr;
        size_t wi;
        compare(got, ref, (size_t)gh * gw * dim, &md, &mr, &wi);
        double tol = (gh == n && gw == n) ? 0 : 1e-5 * mr;
        printf("resample n=%d -> %dx%d %s: max |diff| %.3g (tolerance %.3g)\n", n, gh, gw,
               hf ? "hf" : "dino", md, tol);
        CHECK(md <= tol, "resample n=%d -> %dx%d %s: max diff %.3g at %zu", n, gh, gw,
              hf ? "hf" : "dino", md, wi);
        free(src);
        free(got);
        free(ref);
    }
}

/* ---- forward against torch ---------------------------------------------------------------- */

typedef struct vcase {
    char name[64], weights[128], input[128], keys[128], tokens[128];
    int heads, drop_cls, hf, h, w;
} vcase;

static int read_cases(vcase *c, int max)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/cases.txt", case_dir);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    int n = 0;
    while (n < max && fscanf(f, "%63s %127s %d %d %d %d %d %127s %127s %127s", c[n].name,
                             c[n].weights, &c[n].heads, &c[n].drop_cls, &c[n].hf, &c[n].h, &c[n].w,
                             c[n].input, c[n].keys, c[n].tokens) == 10)
        n++;
    fclose(f);
    return n;
}

static void run_case(const vcase *c)
{
    char path[4400];
    kc_weights w;
    snprintf(path, sizeof path, "%s/%s", case_dir, c->weights);
    if (weights_load(&w, path, NULL) < 0) {
        CHECK(0, "%s: weights_load: %s", c->name, kc_error());
        return;
    }
    vit_opts o = VIT_OPTS_DEFAULT;
    o.heads = c->heads;
    o.drop_cls = c->drop_cls;
    o.posembed = c->hf ? VIT_POS_HF : VIT_POS_DINO;
    vit_model *m = NULL;
    if (vit_init(&m, &w, &o) < 0) {
        CHECK(0, "%s: vit_init: %s", c->name, kc_error());
        weights_free(&w);
        return;
    }
    weights_free(&w); /* the model keeps its own copy */
    int p = vit_patch(m), D = vit_dim(m), gh = c->h / p, gw = c->w / p;
    size_t G = (size_t)gh * gw;
    snprintf(path, sizeof path, "%s/%s", case_dir, c->input);
    float *in = read_f32(path, (size_t)3 * c->h * c->w);
    snprintf(path, sizeof path, "%s/%s", case_dir, c->keys);
    float *rk = read_f32(path, G * D);
    snprintf(path, sizeof path, "%s/%s", case_dir, c->tokens);
    float *rt = read_f32(path, G * D);
    CHECK(in && rk && rt, "%s: reference blobs missing or of the wrong size", c->name);
    vit_state *s = NULL;
    CHECK(vit_state_new(&s, m, gh, gw) == 0, "%s: vit_state_new: %s", c->name, kc_error());
    if (in && rk && rt && s) {
        float *keys = malloc(G * D * sizeof(float)), *tokens = malloc(G * D * sizeof(float));
        float *keys_only = malloc(G * D * sizeof(float));
        double t0 = kc_now();
        CHECK(vit_forward(m, s, in, gh, gw, keys, tokens) == 0, "%s: %s", c->name, kc_error());
        double t_both = kc_now() - t0;
        CHECK(vit_forward(m, s, in, gh, gw, keys_only, NULL) == 0, "%s: %s", c->name, kc_error());
        double md, mr, md2, mr2, md3, mr3;
        size_t wi, wi2, wi3;
        compare(keys, rk, G * D, &md, &mr, &wi);
        compare(tokens, rt, G * D, &md2, &mr2, &wi2);
        compare(keys_only, rk, G * D, &md3, &mr3, &wi3);
        printf("%-13s %-22s grid %dx%d  keys max|diff| %.3g (%.2g of max|ref| %.3g)  tokens "
               "%.3g (%.2g of %.3g)  keys-only %.3g  %.0f ms  [%s]\n",
               c->name, c->weights, gh, gw, md, md / mr, mr, md2, md2 / mr2, mr2, md3,
               1e3 * t_both, vit_forward_kind(m));
        CHECK(md <= 1e-4 * mr, "%s: keys max diff %.3g > 1e-4 * %.3g (at %zu: %.7g vs %.7g)",
              c->name, md, mr, wi, (double)keys[wi], (double)rk[wi]);
        CHECK(md2 <= 1e-4 * mr2, "%s: tokens max diff %.3g > 1e-4 * %.3g (at %zu: %.7g vs %.7g)",
              c->name, md2, mr2, wi2, (double)tokens[wi2], (double)rt[wi2]);
        CHECK(md3 <= 1e-4 * mr3, "%s: keys-only max diff %.3g", c->name, md3);
        free(keys);
        free(tokens);
        free(keys_only);
    }
    if (strcmp(c->name, "hf") == 0) {
        CHECK(vit_heads(m) == vit_dim(m) / 16 || vit_heads(m) == vit_dim(m) / 64,
              "hf: heads %d not from config.json", vit_heads(m));
        CHECK(vit_ln_eps(m) == 1e-12, "hf: ln eps %g, config.json says 1e-12", vit_ln_eps(m));
    } else {
        CHECK(vit_ln_eps(m) == 1e-6, "%s: ln eps %g, expected 1e-6", c->name, vit_ln_eps(m));
    }
    if (strcmp(c->name, "dino_pth") == 0) {
        CHECK(strcmp(vit_describe(m), "vit dim=32 depth=2 heads=2 patch=16 mlp=128 cls=1 "
                                      "final_norm=1 pos_grid=3x3") == 0,
              "describe: %s", vit_describe(m));
        CHECK(strstr(vit_forward_kind(m), "dino (") != NULL, "kind: %s", vit_forward_kind(m));
    }
    if (c->drop_cls) CHECK(strstr(vit_forward_kind(m), "drop-cls") != NULL, "kind: %s", vit_forward_kind(m));
    if (strcmp(c->name, "selfpatch") == 0)
        CHECK(strstr(vit_forward_kind(m), "selfpatch") != NULL && !vit_has_cls(m), "kind: %s",
              vit_forward_kind(m));
    vit_state_free(s);
    vit_free(m);
    free(in);
    free(rk);
    free(rt);
}

/* Nearly the same output with 1 and 3 threads (OpenBLAS's edge kernels for the split rows may
 * round differently; nothing else depends on the thread count). */
static void test_threads(void)
{
    kc_weights w;
    if (weights_load(&w, DATA "/dino.pth", NULL) < 0) {
        CHECK(0, "weights_load: %s", kc_error());
        return;
    }
    vit_opts o = VIT_OPTS_DEFAULT;
    o.heads = 2;
    vit_model *m;
    CHECK(vit_init(&m, &w, &o) == 0, "vit_init: %s", kc_error());
    weights_free(&w);
    float *in = read_f32(DATA "/dino_pth.in.f32", 3 * 64 * 48);
    float k1[12 * 32], t1[12 * 32], k2[12 * 32], t2[12 * 32];
    int saved = omp_get_max_threads();
    vit_state *s1, *s2;
    omp_set_num_threads(1);
    CHECK(vit_state_new(&s1, m, 4, 3) == 0, "state");
    omp_set_num_threads(3);
    CHECK(vit_state_new(&s2, m, 4, 3) == 0, "state");
    omp_set_num_threads(saved);
    CHECK(in != NULL, "input blob");
    if (in) {
        vit_forward(m, s1, in, 4, 3, k1, t1);
        vit_forward(m, s2, in, 4, 3, k2, t2);
        double md, mr, md2, mr2;
        size_t wi;
        compare(k1, k2, 12 * 32, &md, &mr, &wi);
        compare(t1, t2, 12 * 32, &md2, &mr2, &wi);
        printf("1 vs 3 threads: keys max|diff| %.3g, tokens %.3g (tolerance 1e-6 * max)\n", md, md2);
        CHECK(md <= 1e-6 * mr && md2 <= 1e-6 * mr2, "thread count changes the output: %.3g %.3g", md, md2);
        CHECK(vit_forward(m, s1, in, 3, 4, k1, NULL) < 0 && strstr(kc_error(), "grid"),
              "a state of another grid is refused");
    }
    vit_state_free(s1);
    vit_state_free(s2);
    vit_free(m);
    free(in);
}

/* ---- vit_init errors ---------------------------------------------------------------------- */

static kc_tensor *find_t(kc_tensor *t, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(t[i].name, name) == 0) return &t[i];
    return NULL;
}

/* vit_init on a shallow copy of w changed by `mutate`; expects failure with msg containing
 * every needle. */
static void expect_init_error(const kc_weights *w, const char *what, int heads,
                              void (*mutate)(kc_weights *, kc_tensor *, float *), const char *n1,
                              const char *n2)
{
    kc_weights c = *w;
    c.t = malloc(sizeof(kc_tensor) * (size_t)(w->n + 1));
    memcpy(c.t, w->t, sizeof(kc_tensor) * (size_t)w->n);
    float *scratch = NULL;
    if (mutate) {
        scratch = malloc(sizeof(float) * 3 * 32 * 32);
        mutate(&c, c.t, scratch);
    }
    vit_opts o = VIT_OPTS_DEFAULT;
    o.heads = heads;
    vit_model *m = NULL;
    int rc = vit_init(&m, &c, &o);
    const char *e = kc_error();
    CHECK(rc < 0 && m == NULL && strstr(e, n1) && (!n2 || strstr(e, n2)) && strstr(e, "dino.pth"),
          "%s: rc %d, message \"%s\"", what, rc, e);
    printf("%-26s -> %s\n", what, e);
    vit_free(m);
    free(c.t);
    free(scratch);
}

static void mut_shape(kc_weights *c, kc_tensor *t, float *s)
{
    (void)s;
    find_t(t, c->n, "blocks.1.mlp.fc1.bias")->shape[0] = 127;
}
static void mut_missing(kc_weights *c, kc_tensor *t, float *s)
{
    (void)s;
    kc_tensor *x = find_t(t, c->n, "blocks.1.norm2.weight");
    *x = t[c->n - 1];
    c->n--;
}
static void mut_nan(kc_weights *c, kc_tensor *t, float *s)
{
    kc_tensor *x = find_t(t, c->n, "blocks.0.attn.proj.weight");
    memcpy(s, x->data, sizeof(float) * 32 * 32);
    s[77] = NAN;
    x->data = s;
}
static void mut_extra(kc_weights *c, kc_tensor *t, float *s)
{
    static char name[] = "blocks.0.attn.extra";
    t[c->n] = *find_t(t, c->n, "blocks.0.attn.proj.bias");
    t[c->n].name = name;
    c->n++;
    (void)s;
}
static void mut_pos(kc_weights *c, kc_tensor *t, float *s)
{
    (void)s;
    find_t(t, c->n, "pos_embed")->shape[1] = 9; /* 8 rows + cls: not a square grid */
}
static void mut_cls_shape(kc_weights *c, kc_tensor *t, float *s)
{
    (void)s;
    find_t(t, c->n, "cls_token")->shape[2] = 31;
}
static void mut_norm_half(kc_weights *c, kc_tensor *t, float *s)
{
    (void)s;
    kc_tensor *x = find_t(t, c->n, "norm.bias");
    *x = t[c->n - 1];
    c->n--;
}

static void test_errors(void)
{
    kc_weights w;
    if (weights_load(&w, DATA "/dino.pth", NULL) < 0) {
        CHECK(0, "weights_load: %s", kc_error());
        return;
    }
    expect_init_error(&w, "wrong shape", 2, mut_shape, "blocks.1.mlp.fc1.bias", "(127)");
    expect_init_error(&w, "missing tensor", 2, mut_missing, "missing tensor blocks.1.norm2.weight", NULL);
    expect_init_error(&w, "NaN weight", 2, mut_nan, "blocks.0.attn.proj.weight", "non-finite");
    expect_init_error(&w, "extra backbone tensor", 2, mut_extra, "unexpected backbone tensor blocks.0.attn.extra", NULL);
    expect_init_error(&w, "pos_embed not square", 2, mut_pos, "pos_embed", "square");
    expect_init_error(&w, "cls_token shape", 2, mut_cls_shape, "cls_token", "(1, 1, 31)");
    expect_init_error(&w, "final norm half present", 2, mut_norm_half, "missing tensor norm.bias", NULL);
    expect_init_error(&w, "heads not dividing", 3, NULL, "3 heads", "32");
    expect_init_error(&w, "heads not inferable", 0, NULL, "multiple of 64", "--heads");
    weights_free(&w);
}

/* ---- colour extractor --------------------------------------------------------------------- */

/* A textured background (noise and stripes in grey-green) and one coloured rectangle. */
static void make_scene(float *chw, int H, int W, int seed, int y0, int y1, int x0, int x1,
                       const float rgb[3])
{
    uint32_t r = 2654435761u * (uint32_t)(seed + 1);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            r = r * 1664525u + 1013904223u;
            float noise = (float)((r >> 8) / 16777216.0) - 0.5f;
            float stripe = ((x + 2 * y + seed * 7) / 6) % 2 ? 0.15f : -0.15f;
            float base[3] = {0.45f + stripe + 0.3f * noise, 0.5f + stripe + 0.3f * noise,
                             0.4f + stripe + 0.3f * noise};
            int in = y >= y0 && y < y1 && x >= x0 && x < x1;
            for (int c = 0; c < 3; c++) {
                const float mean[3] = {0.485f, 0.456f, 0.406f}, sd[3] = {0.229f, 0.224f, 0.225f};
                float v = in ? rgb[c] + 0.05f * noise : base[c];
                chw[((size_t)c * H + y) * W + x] = (v - mean[c]) / sd[c];
            }
        }
}

/* TokenCut-style normalised cut (tau 0.2, binary edges, mean split, seed = argmax |x|). */
static int tiny_ncut(const float *f, int n, int dim, unsigned char *fg)
{
    double *norm = calloc((size_t)n, sizeof(double)), *A = calloc((size_t)n * n, sizeof(double));
    double *d = calloc((size_t)n, sizeof(double)), *ev = calloc((size_t)n, sizeof(double));
    for (int i = 0; i < n; i++) {
        double s = 0;
        for (int k = 0; k < dim; k++) s += (double)f[i * dim + k] * f[i * dim + k];
        norm[i] = s > 0 ? 1 / sqrt(s) : 0;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int k = 0; k < dim; k++) s += (double)f[i * dim + k] * f[j * dim + k];
            s *= norm[i] * norm[j];
            A[(size_t)i * n + j] = s > 0.2 ? 1 : 1e-5;
            d[i] += A[(size_t)i * n + j];
        }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) A[(size_t)i * n + j] /= sqrt(d[i] * d[j]);
    /* largest eigenvalues of D^-1/2 W D^-1/2 <-> smallest of the normalised Laplacian */
    int rc = (int)LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'V', 'U', n, A, n, ev);
    if (rc == 0) {
        double mean = 0, best = -1;
        int seed = 0;
        double *x = ev; /* reuse: second-largest eigenvector, column n-2 */
        for (int i = 0; i < n; i++) x[i] = A[(size_t)i * n + (n - 2)] / sqrt(d[i]);
        for (int i = 0; i < n; i++) mean += x[i] / n;
        for (int i = 0; i < n; i++)
            if (fabs(x[i]) > best) { best = fabs(x[i]); seed = i; }
        int side = x[seed] > mean;
        for (int i = 0; i < n; i++) fg[i] = (x[i] > mean) == side;
    }
    free(norm);
    free(A);
    free(d);
    free(ev);
    return rc;
}

static void test_color(void)
{
    const int p = 16, gh = 12, gw = 16, H = gh * p, W = gw * p, n = gh * gw;
    float *chw = malloc(sizeof(float) * 3 * H * W), *f = malloc(sizeof(float) * n * COLOR_DIM);
    unsigned char fg[12 * 16];
    const float colours[4][3] = {{0.9f, 0.1f, 0.1f}, {0.1f, 0.2f, 0.9f}, {0.95f, 0.85f, 0.1f},
                                 {0.2f, 0.2f, 0.2f}};
    const int boxes[4][4] = {{3, 8, 4, 9}, {1, 6, 9, 15}, {5, 11, 2, 7}, {4, 9, 6, 12}};
    for (int sc = 0; sc < 4; sc++) {
        const int *b = boxes[sc];
        make_scene(chw, H, W, sc, b[0] * p, b[1] * p, b[2] * p, b[3] * p, colours[sc]);
        CHECK(color_features(chw, gh, gw, p, f) == 0, "color_features: %s", kc_error());
        int finite = 1;
        for (int i = 0; i < n * COLOR_DIM; i++) finite &= isfinite(f[i]);
        CHECK(finite, "scene %d: non-finite colour features", sc);
        if (tiny_ncut(f, n, COLOR_DIM, fg) != 0) {
            CHECK(0, "scene %d: dsyev failed", sc);
            continue;
        }
        int inter = 0, uni = 0;
        for (int y = 0; y < gh; y++)
            for (int x = 0; x < gw; x++) {
                int obj = y >= b[0] && y < b[1] && x >= b[2] && x < b[3];
                inter += obj && fg[y * gw + x];
                uni += obj || fg[y * gw + x];
            }
        double iou = (double)inter / uni;
        printf("colour scene %d: normalised-cut foreground IoU with the object %.3f (need >= 0.8)\n",
               sc, iou);
        CHECK(iou >= 0.8, "colour scene %d: IoU %.3f", sc, iou);
    }
    CHECK(color_features(chw, 0, 3, p, f) < 0, "a 0-row grid is refused");
    free(chw);
    free(f);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* lines reach the log even if something crashes */
    if (argc > 1) { /* only the forward cases of another folder */
        case_dir = argv[1];
        vcase *cases = malloc(sizeof(vcase) * 32);
        int n = read_cases(cases, 32);
        CHECK(n > 0, "%s/cases.txt: no cases", case_dir);
        for (int i = 0; i < n; i++) run_case(&cases[i]);
        free(cases);
        return test_done();
    }
    test_fastmath();
    test_resample();
    vcase cases[32];
    int n = read_cases(cases, 32);
    CHECK(n >= 9, "tests/data/vit/cases.txt: %d cases", n);
    for (int i = 0; i < n; i++) run_case(&cases[i]);
    test_threads();
    test_errors();
    test_color();
    return test_done();
}
