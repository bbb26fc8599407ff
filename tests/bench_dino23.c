/* tests/bench_dino23.c — speed of the forward of a network read from a weights file (the DINOv2 /
 * DINOv3 ViT-S files tests/ref/dino23_ref.py weights writes), for tests/bench_vit.sh to print
 * beside DINO's and PyTorch's.  Not a test: no assertions.  Prints the lines tests/bench_vit.c
 * prints ("keycut forward: X ms/image mean, Y ms best, ...", "keycut forward GFLOP: ...").
 *
 *     build/tests/bench_dino23 --weights FILE [--size 480] [--width W] [--images 5] [--tokens]
 *
 * --size defaults to the 480 policy of the file's patch: patch * ceil(480 / patch).
 */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/kc.h"
#include "pipeline/model/vit.h"
#include "pipeline/weights/weights.h"

int main(int argc, char **argv)
{
    const char *path = NULL;
    int size = 0, width = 0, images = 5, want_tokens = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--weights") && i + 1 < argc) path = argv[++i];
        else if (!strcmp(argv[i], "--size") && i + 1 < argc) size = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--width") && i + 1 < argc) width = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--images") && i + 1 < argc) images = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--tokens")) want_tokens = 1;
        else path = NULL, i = argc;
    }
    if (!path || images < 1) {
        fprintf(stderr, "usage: %s --weights FILE [--size 480] [--width W] [--images 5] [--tokens]\n", argv[0]);
        return 2;
    }
    kc_weights w;
    vit_opts o = VIT_OPTS_DEFAULT;
    vit_model *m;
    if (weights_load(&w, path, NULL) < 0 || vit_init(&m, &w, &o) < 0) {
        fprintf(stderr, "bench_dino23: %s\n", kc_error());
        return 1;
    }
    weights_free(&w);
    const int p = vit_patch(m), D = vit_dim(m);
    if (size <= 0) size = p * ((480 + p - 1) / p);
    if (width <= 0) width = size;
    const int gh = size / p, gw = width / p;
    if (gh < 1 || gw < 1) {
        fprintf(stderr, "bench_dino23: bad sizes\n");
        return 2;
    }
    vit_state *s;
    if (vit_state_new(&s, m, gh, gw) < 0) {
        fprintf(stderr, "bench_dino23: %s\n", kc_error());
        return 1;
    }
    const size_t n_in = (size_t)3 * gh * p * gw * p, G = (size_t)gh * gw;
    float *chw = kc_malloc(n_in * sizeof(float));
    uint32_t r = 12345u;
    for (size_t i = 0; i < n_in; i++) {
        r = r * 1664525u + 1013904223u;
        chw[i] = (float)((r >> 8) / 16777216.0 * 4 - 2);
    }
    vit_outputs out = {want_tokens ? NULL : kc_malloc(G * D * sizeof(float)),
                       want_tokens ? kc_malloc(G * D * sizeof(float)) : NULL, NULL};
    if (vit_forward_ex(m, s, chw, gh, gw, &out) < 0) { /* warm-up */
        fprintf(stderr, "bench_dino23: %s\n", kc_error());
        return 1;
    }
    double best = 1e30, total = 0;
    for (int i = 0; i < images; i++) {
        double t0 = kc_now();
        vit_forward_ex(m, s, chw, gh, gw, &out);
        double t = kc_now() - t0;
        total += t;
        if (t < best) best = t;
    }
    const double flops = vit_flops(m, gh, gw, want_tokens);
    printf("model: %s (%s)\n", vit_describe(m), vit_forward_kind(m));
    printf("input: %dx%d, grid %dx%d, %s, %d threads, attention %s\n", gh * p, gw * p, gh, gw,
           want_tokens ? "tokens" : "keys", omp_get_max_threads(), vit_attention_path(m));
    printf("keycut forward: %.1f ms/image mean, %.1f ms best, %.2f images/s\n", 1e3 * total / images,
           1e3 * best, images / total);
    printf("keycut forward GFLOP: %.2f, rate %.1f GFLOP/s (mean) %.1f (best)\n", flops / 1e9,
           flops / (total / images) / 1e9, flops / best / 1e9);
    free(chw);
    free(out.keys);
    free(out.tokens);
    vit_state_free(s);
    vit_free(m);
    return 0;
}
