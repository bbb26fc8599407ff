/* tests/bench_vitnet.h — the ViT of seeded random weights that the ViT benchmarks share
 * (tests/bench_vit.c builds it in memory, tests/bench_attn.c writes it as a safetensors file for
 * kc-extract): DINO / timm tensor names, class token, final norm; ViT-S/16 shapes by default.
 * Tensor i holds offset + scale * bench_frand() for each value, drawn in the listed order, so both
 * benchmarks run the same network.
 *
 *     bench_tensor t[BENCH_VIT_MAX_TENSORS(12)];
 *     int n = bench_vit_tensors(t, 384, 12, 1536, 16, 14);   // width, depth, MLP, patch, pos grid
 */
#ifndef KC_BENCH_VITNET_H
#define KC_BENCH_VITNET_H
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define BENCH_VIT_MAX_TENSORS(depth) (6 + 12 * (depth))

typedef struct bench_tensor {
    char name[64];
    int ndim;
    int64_t shape[4];
    float scale, offset;
} bench_tensor;

static uint64_t bench_rng = 88172645463325252ull;
static inline float bench_frand(void)
{
    bench_rng ^= bench_rng << 13;
    bench_rng ^= bench_rng >> 7;
    bench_rng ^= bench_rng << 17;
    return (float)((bench_rng >> 40) / 16777216.0) - 0.5f;
}

static inline int64_t bench_numel(const bench_tensor *t)
{
    int64_t n = 1;
    for (int d = 0; d < t->ndim; d++) n *= t->shape[d];
    return n;
}

/* Fills t (room for BENCH_VIT_MAX_TENSORS(depth)); returns the number of tensors. */
static inline int bench_vit_tensors(bench_tensor *t, int D, int depth, int M, int p, int n)
{
    int k = 0;
#define BT(nm, sc, off, nd, ...)                                                                  \
    do {                                                                                         \
        const int64_t sh_[] = {__VA_ARGS__};                                                     \
        memset(&t[k], 0, sizeof t[k]);                                                           \
        snprintf(t[k].name, sizeof t[k].name, "%s", nm);                                         \
        t[k].ndim = nd;                                                                          \
        memcpy(t[k].shape, sh_, sizeof sh_);                                                     \
        t[k].scale = sc;                                                                         \
        t[k++].offset = off;                                                                     \
    } while (0)
    char nm[64];
    BT("patch_embed.proj.weight", 0.1f, 0, 4, D, 3, p, p);
    BT("patch_embed.proj.bias", 0.1f, 0, 1, D);
    BT("cls_token", 0.5f, 0, 3, 1, 1, D);
    BT("pos_embed", 0.5f, 0, 3, 1, n * n + 1, D);
    for (int b = 0; b < depth; b++) {
#define BB(suffix, sc, off, nd, ...)                                                              \
    snprintf(nm, sizeof nm, "blocks.%d.%s", b, suffix);                                           \
    BT(nm, sc, off, nd, __VA_ARGS__)
        BB("norm1.weight", 0.2f, 1, 1, D);
        BB("norm1.bias", 0.2f, 0, 1, D);
        BB("attn.qkv.weight", 0.1f, 0, 2, 3 * D, D);
        BB("attn.qkv.bias", 0.1f, 0, 1, 3 * D);
        BB("attn.proj.weight", 0.1f, 0, 2, D, D);
        BB("attn.proj.bias", 0.1f, 0, 1, D);
        BB("norm2.weight", 0.2f, 1, 1, D);
        BB("norm2.bias", 0.2f, 0, 1, D);
        BB("mlp.fc1.weight", 0.1f, 0, 2, M, D);
        BB("mlp.fc1.bias", 0.1f, 0, 1, M);
        BB("mlp.fc2.weight", 0.05f, 0, 2, D, M);
        BB("mlp.fc2.bias", 0.1f, 0, 1, D);
#undef BB
    }
    BT("norm.weight", 0.2f, 1, 1, D);
    BT("norm.bias", 0.2f, 0, 1, D);
#undef BT
    return k;
}
#endif
