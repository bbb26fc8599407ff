/* tests/bench_attn.c — writes a ViT-S/16-shaped network with seeded random weights as a
 * safetensors file (DINO names, class token, final norm) for tests/bench_attn.sh, which times
 * kc-extract --features keys against --features keys,attn.  Not a test: no assertions.
 *
 *     build/tests/bench_attn OUT.safetensors [--dim 384] [--depth 12]
 *     build/tests/bench_attn --forward FILE.safetensors [ROUNDS]   the forward alone: keys against
 *         keys + class attention on one random 480x480 input, alternating, best and mean of ROUNDS
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/kc.h"
#include "pipeline/model/vit.h"
#include "pipeline/weights/weights.h"
#include "tests/bench_vitnet.h"

static float frand(void) { return bench_frand(); }

static int forward_bench(const char *path, int rounds)
{
    kc_weights w;
    vit_model *m = NULL;
    const vit_opts vo = VIT_OPTS_DEFAULT;
    if (weights_load(&w, path, NULL) < 0 || vit_init(&m, &w, &vo) < 0) {
        fprintf(stderr, "bench_attn: %s\n", kc_error());
        return 1;
    }
    weights_free(&w);
    const int g = 480 / vit_patch(m), G = g * g, D = vit_dim(m);
    float *chw = kc_malloc((size_t)3 * 480 * 480 * sizeof(float));
    for (size_t i = 0; i < (size_t)3 * 480 * 480; i++) chw[i] = 2 * frand();
    float *keys = kc_malloc((size_t)G * D * sizeof(float)), *attn = kc_malloc((size_t)G * vit_heads(m) * sizeof(float));
    vit_state *s;
    if (vit_state_new(&s, m, g, g) < 0) return 1;
    double best[2] = {1e30, 1e30}, sum[2] = {0, 0};
    for (int r = 0; r <= rounds; r++)
        for (int k = 0; k < 2; k++) {
            vit_outputs o = {keys, NULL, k ? attn : NULL};
            double t0 = kc_now();
            vit_forward_ex(m, s, chw, g, g, &o);
            double t = kc_now() - t0;
            if (r == 0) continue; /* warm-up */
            sum[k] += t;
            if (t < best[k]) best[k] = t;
        }
    printf("forward keys:       best %.1f ms  mean %.1f ms\n", 1e3 * best[0], 1e3 * sum[0] / rounds);
    printf("forward keys+attn:  best %.1f ms  mean %.1f ms\n", 1e3 * best[1], 1e3 * sum[1] / rounds);
    printf("forward attn overhead: best %+.2f %%, mean %+.2f %%\n", 100 * (best[1] / best[0] - 1), 100 * (sum[1] / sum[0] - 1));
    vit_state_free(s);
    vit_free(m);
    free(chw);
    free(keys);
    free(attn);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && !strcmp(argv[1], "--forward")) return forward_bench(argv[2], argc > 3 ? atoi(argv[3]) : 5);
    int D = 384, depth = 12, p = 16, n = 14;
    if (argc < 2) {
        fprintf(stderr, "usage: %s OUT.safetensors [--dim 384] [--depth 12]\n", argv[0]);
        return 2;
    }
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--dim")) D = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--depth")) depth = atoi(argv[i + 1]);
    }
    bench_tensor *t = calloc((size_t)BENCH_VIT_MAX_TENSORS(depth), sizeof *t);
    if (!t) return 1;
    const int nt = bench_vit_tensors(t, D, depth, 4 * D, p, n);
    /* header: {"name":{"dtype":"F32","shape":[...],"data_offsets":[a,b]},...} padded to 8 bytes */
    kc_buf h = {0};
    int64_t off = 0;
    kc_buf_printf(&h, "{");
    for (int i = 0; i < nt; i++) {
        int64_t count = 1;
        kc_buf_printf(&h, "%s\"%s\":{\"dtype\":\"F32\",\"shape\":[", i ? "," : "", t[i].name);
        for (int d = 0; d < t[i].ndim; d++) {
            kc_buf_printf(&h, "%s%lld", d ? "," : "", (long long)t[i].shape[d]);
            count *= t[i].shape[d];
        }
        kc_buf_printf(&h, "],\"data_offsets\":[%lld,%lld]}", (long long)off, (long long)(off + 4 * count));
        off += 4 * count;
    }
    kc_buf_printf(&h, "}");
    while (h.n % 8) kc_buf_printf(&h, " ");
    FILE *f = fopen(argv[1], "wb");
    if (!f) {
        fprintf(stderr, "bench_attn: cannot write %s\n", argv[1]);
        return 1;
    }
    uint64_t hl = h.n;
    fwrite(&hl, 8, 1, f);
    fwrite(h.s, 1, h.n, f);
    for (int i = 0; i < nt; i++) {
        int64_t count = 1;
        for (int d = 0; d < t[i].ndim; d++) count *= t[i].shape[d];
        for (int64_t k = 0; k < count; k++) {
            float v = t[i].offset + t[i].scale * frand();
            fwrite(&v, 4, 1, f);
        }
    }
    int bad = fclose(f) != 0;
    free(h.s);
    free(t);
    printf("wrote %s (ViT dim %d depth %d, %lld bytes of weights)\n", argv[1], D, depth, (long long)off);
    return bad;
}
