/* tests/bench_vit.c — speed of the ViT forward (keys of ViT-S/16 at 480x480 by default) beside
 * the FLOP rate of one large sgemm with the same thread count (keycut's product path and OpenBLAS
 * as loaded).  Not a test: no assertions.  This is kc-extract's forward, in process (no decoding).
 *
 *     build/tests/bench_vit [--size 480] [--width W] [--patch 16] [--images 5] [--tokens]
 *
 * The network has DINO's ViT-S/16 shapes (width 384, depth 12, MLP 1536, 14 x 14 position grid,
 * class token, final norm) with seeded random weights built in memory, so no file is needed.
 * Prints one "key: value" line per figure.
 */
#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "pipeline/model/gemm.h"
#include "pipeline/kc.h"
#include "pipeline/model/vit.h"
#include "tests/bench_vitnet.h"

static float frand(void) { return bench_frand(); }

/* The shared benchmark network (tests/bench_vitnet.h) as in-memory weights. */
static void build(kc_weights *w, int D, int depth, int M, int p, int n)
{
    memset(w, 0, sizeof *w);
    w->path = kc_strdup("(in-memory ViT)");
    bench_tensor *bt = kc_malloc(BENCH_VIT_MAX_TENSORS(depth) * sizeof *bt);
    const int nt = bench_vit_tensors(bt, D, depth, M, p, n);
    w->t = kc_calloc((size_t)nt, sizeof(kc_tensor));
    for (int i = 0; i < nt; i++) {
        kc_tensor *t = &w->t[w->n++];
        t->name = kc_strdup(bt[i].name);
        t->ndim = bt[i].ndim;
        memcpy(t->shape, bt[i].shape, sizeof bt[i].shape);
        const int64_t count = bench_numel(&bt[i]);
        t->data = kc_malloc((size_t)count * sizeof(float));
        for (int64_t k = 0; k < count; k++) t->data[k] = bt[i].offset + bt[i].scale * frand();
    }
    free(bt);
}

/* Adds one tensor of offset + scale * frand() values (or a fixed fill: fill >= 0). */
static void add_tensor(kc_weights *w, const char *name, int ndim, const int64_t *shape, float scale, float offset)
{
    w->t = realloc(w->t, (size_t)(w->n + 1) * sizeof *w->t);
    kc_tensor *t = &w->t[w->n++];
    memset(t, 0, sizeof *t);
    t->name = kc_strdup(name);
    t->ndim = ndim;
    int64_t count = 1;
    for (int d = 0; d < ndim; d++) count *= (t->shape[d] = shape[d]);
    t->data = kc_malloc((size_t)count * sizeof(float));
    for (int64_t k = 0; k < count; k++) t->data[k] = offset + scale * frand();
}

/* The DINOv2 / DINOv3 tensors on top of the DINO-layout network (--family): LayerScale, 4
 * registers; DINOv3 also RoPE periods (base 100) and the masked key bias instead of pos_embed. */
static void add_family(kc_weights *w, const char *family, int D, int depth, int heads)
{
    if (!strcmp(family, "dino")) return;
    char nm[64];
    for (int b = 0; b < depth; b++)
        for (int k = 1; k <= 2; k++) {
            snprintf(nm, sizeof nm, "blocks.%d.ls%d.gamma", b, k);
            add_tensor(w, nm, 1, (int64_t[]){D}, 0.4f, 0.8f);
        }
    if (!strcmp(family, "dinov2")) return;
    add_tensor(w, "register_tokens", 3, (int64_t[]){1, 4, D}, 0.5f, 0);
    if (!strcmp(family, "dinov2-reg")) return;
    for (int i = 0; i < w->n; i++) /* DINOv3: no position embedding */
        if (!strcmp(w->t[i].name, "pos_embed")) {
            free(w->t[i].name), free(w->t[i].data);
            w->t[i] = w->t[--w->n];
            break;
        }
    const int hd = D / heads;
    add_tensor(w, "rope_embed.periods", 1, (int64_t[]){hd / 4}, 0, 0);
    for (int i = 0; i < hd / 4; i++) w->t[w->n - 1].data[i] = powf(100.0f, 2.0f * i / (hd / 2));
    for (int b = 0; b < depth; b++) {
        snprintf(nm, sizeof nm, "blocks.%d.attn.qkv.bias_mask", b);
        add_tensor(w, nm, 1, (int64_t[]){3 * D}, 0, 1);
        for (int i = D; i < 2 * D; i++) w->t[w->n - 1].data[i] = 0;
    }
}

static void free_weights(kc_weights *w)
{
    for (int i = 0; i < w->n; i++) {
        free(w->t[i].name);
        free(w->t[i].data);
    }
    free(w->t);
    free(w->path);
}

/* CPU time of the process (all threads): less sensitive than wall time to a shared machine */
static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static double sgemm_rate(int n, int threads, int openblas)
{
    float *a = kc_malloc((size_t)n * n * sizeof(float)), *b = kc_malloc((size_t)n * n * sizeof(float));
    float *c = kc_malloc((size_t)n * n * sizeof(float));
    for (size_t i = 0; i < (size_t)n * n; i++) a[i] = frand(), b[i] = frand();
    int saved = openblas_get_num_threads();
    openblas_set_num_threads(threads);
    double best = 1e30;
    for (int r = 0; r < 4; r++) {
        double t0 = kc_now();
        if (openblas)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
        else
            kc_gemm_nt(n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
        double t = kc_now() - t0;
        if (r > 0 && t < best) best = t; /* the first run warms up */
    }
    openblas_set_num_threads(saved);
    free(a);
    free(b);
    free(c);
    return 2.0 * n * (double)n * n / best / 1e9;
}

int main(int argc, char **argv)
{
    int size = 480, width = 0, patch = 0, images = 5, want_tokens = 0;
    const char *family = "dino";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--size") && i + 1 < argc) size = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--width") && i + 1 < argc) width = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--patch") && i + 1 < argc) patch = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--images") && i + 1 < argc) images = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--tokens")) want_tokens = 1;
        else if (!strcmp(argv[i], "--family") && i + 1 < argc) family = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--size 480] [--width W] [--patch 16] [--images 5] [--tokens] "
                            "[--family dino|dinov2|dinov2-reg|dinov3]\n", argv[0]);
            return 2;
        }
    }
    const int v2 = !strncmp(family, "dinov2", 6);
    if (strcmp(family, "dino") && strcmp(family, "dinov2") && strcmp(family, "dinov2-reg") && strcmp(family, "dinov3")) {
        fprintf(stderr, "bench_vit: --family: unknown '%s'\n", family);
        return 2;
    }
    if (patch <= 0) patch = v2 ? 14 : 16;
    if (width <= 0) width = size;
    if (size < patch || width < patch || patch < 1 || images < 1) {
        fprintf(stderr, "bench_vit: bad sizes\n");
        return 2;
    }
    const int threads = omp_get_max_threads();
    kc_weights w;
    build(&w, 384, 12, 1536, patch, v2 ? 518 / patch : 224 / patch); /* DINOv2's grid: 37 x 37 */
    add_family(&w, family, 384, 12, 6);
    vit_opts o = VIT_OPTS_DEFAULT;
    vit_model *m;
    if (vit_init(&m, &w, &o) < 0) {
        fprintf(stderr, "bench_vit: %s\n", kc_error());
        return 1;
    }
    free_weights(&w);
    const int g = size / patch, gw = width / patch, D = vit_dim(m);
    vit_state *s;
    if (vit_state_new(&s, m, g, gw) < 0) {
        fprintf(stderr, "bench_vit: %s\n", kc_error());
        return 1;
    }
    float *chw = kc_malloc((size_t)3 * g * patch * gw * patch * sizeof(float));
    for (size_t i = 0; i < (size_t)3 * g * patch * gw * patch; i++) chw[i] = 2 * frand();
    float *keys = want_tokens ? NULL : kc_malloc((size_t)g * gw * D * sizeof(float));
    float *tokens = want_tokens ? kc_malloc((size_t)g * gw * D * sizeof(float)) : NULL;

    vit_forward(m, s, chw, g, gw, keys, tokens); /* warm-up */
    double best = 1e30, total = 0, cpu_best = 1e30;
    struct rusage ru0;
    getrusage(RUSAGE_SELF, &ru0);
    for (int i = 0; i < images; i++) {
        double t0 = kc_now(), c0 = cpu_seconds();
        vit_forward(m, s, chw, g, gw, keys, tokens);
        double t = kc_now() - t0, c = cpu_seconds() - c0;
        total += t;
        if (t < best) best = t;
        if (c < cpu_best) cpu_best = c;
    }
    struct rusage ru1;
    getrusage(RUSAGE_SELF, &ru1);
    const double faults = (double)(ru1.ru_minflt - ru0.ru_minflt) / images;
    double flops = vit_flops(m, g, gw, want_tokens);
    double rate = sgemm_rate(2048, threads, 0), rate_ob = sgemm_rate(2048, threads, 1);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("model: %s (%s)\n", vit_describe(m), vit_forward_kind(m));
    printf("input: %dx%d, grid %dx%d, %s, %d threads\n", size, width, g, gw,
           want_tokens ? "tokens" : "keys", threads);
    printf("products: %s; row kernels %s; attention %s\n", kc_gemm_describe(), kc_simd_level() >= 2 ? "avx512" : "avx2", vit_attention_path(m));
    printf("keycut forward: %.1f ms/image mean, %.1f ms best, %.2f images/s\n",
           1e3 * total / images, 1e3 * best, images / total);
    printf("keycut forward CPU time (all threads, best): %.1f ms/image\n", 1e3 * cpu_best);
    printf("keycut forward GFLOP: %.2f, rate %.1f GFLOP/s (mean) %.1f (best)\n", flops / 1e9,
           flops / (total / images) / 1e9, flops / best / 1e9);
    printf("sgemm 2048^3, %d threads, keycut's path: %.1f GFLOP/s\n", threads, rate);
    printf("sgemm 2048^3, %d threads, OpenBLAS %s as loaded: %.1f GFLOP/s\n", threads,
           openblas_get_corename(), rate_ob);
    printf("forward rate / sgemm rate: %.0f %% (mean) %.0f %% (best)\n",
           100 * flops / (total / images) / 1e9 / rate, 100 * flops / best / 1e9 / rate);
    printf("peak RSS: %.0f MB; page faults per forward (after the warm-up): %.0f\n", ru.ru_maxrss / 1024.0, faults);
    free(chw);
    free(keys);
    free(tokens);
    vit_state_free(s);
    vit_free(m);
    return 0;
}
