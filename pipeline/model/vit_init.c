/* pipeline/model/vit_init.c — DINO's, DINOv2's and DINOv3's ViT initialisation from a counter-based
 * generator (see vit_init.h for the values and where each comes from). */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif
#include "pipeline/model/vit_init.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/kc.h"

#define DINO_ARCH(n, d, h, p, g)                                                                                      \
    {.name = n, .family = VIT_FAMILY_DINO, .dim = d, .depth = 12, .heads = h, .patch = p, .mlp = 4 * d, .grid = g}
static const vit_arch archs[] = {
    DINO_ARCH("vit-s/16", 384, 6, 16, 14), DINO_ARCH("vit-s/8", 384, 6, 8, 28),
    DINO_ARCH("vit-b/16", 768, 12, 16, 14), DINO_ARCH("vit-b/8", 768, 12, 8, 28),
    {.name = "toy/16", .family = VIT_FAMILY_DINO, .dim = 64, .depth = 2, .heads = 1, .patch = 16, .mlp = 256,
     .grid = 4},
    /* dinov2_vits14 / dinov2_vits14_reg: img_size 518 / patch 14 = a 37x37 pos_embed grid */
    {.name = "dinov2-s/14", .family = VIT_FAMILY_DINOV2, .dim = 384, .depth = 12, .heads = 6, .patch = 14, .mlp = 1536,
     .grid = 37},
    {.name = "dinov2-reg-s/14", .family = VIT_FAMILY_DINOV2, .dim = 384, .depth = 12, .heads = 6, .patch = 14,
     .mlp = 1536, .grid = 37, .n_reg = 4},
    /* dinov3_vits16: RoPE (no pos_embed), 4 storage tokens */
    {.name = "dinov3-s/16", .family = VIT_FAMILY_DINOV3, .dim = 384, .depth = 12, .heads = 6, .patch = 16, .mlp = 1536,
     .n_reg = 4},
};
#undef DINO_ARCH

const vit_arch *vit_init_find(const char *name)
{
    for (size_t i = 0; i < sizeof archs / sizeof *archs; i++)
        if (!strcmp(archs[i].name, name)) return &archs[i];
    return NULL;
}

const char *vit_init_names(void)
{
    return "vit-s/16, vit-s/8, vit-b/16, vit-b/8, toy/16, dinov2-s/14, dinov2-reg-s/14, dinov3-s/16";
}

const char *vit_init_describe(const vit_arch *a)
{
    switch (a->family) {
    case VIT_FAMILY_DINOV2:
        return "dinov2-vision_transformer (training init): trunc_normal std 0.02 in [-2, 2] for linear weights and "
               "pos_embed, zero biases, cls_token and register_tokens normal std 1e-6, mask_token 0, LayerNorm 1/0, "
               "LayerScale 1e-5 (ssl_default_config layerscale), patch_embed Conv2d default; philox4x32-10 polar";
    case VIT_FAMILY_DINOV3:
        return "dinov3-vision_transformer init_weights: trunc_normal std 0.02 in [-2, 2] for linear weights, zero "
               "biases, qkv.bias_mask 1/0/1, cls_token and storage_tokens normal std 0.02, mask_token 0, "
               "rope_embed.periods 100^(i/16) fp32, LayerNorm 1/0, LayerScale 1e-5, patch_embed uniform "
               "1/sqrt(fan_in); philox4x32-10 polar";
    case VIT_FAMILY_DINO: break;
    }
    return "dino-vision_transformer: trunc_normal std 0.02 in [-2, 2], zero biases, LayerNorm 1/0, patch_embed Conv2d "
           "default; philox4x32-10 polar";
}

/* ---- Philox4x32-10 ---------------------------------------------------------------------------- */

void philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3], k0 = key[0], k1 = key[1];
    for (int r = 0; r < 10; r++) {
        if (r) {
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c0 = n0;
        c1 = (uint32_t)p1;
        c2 = n2;
        c3 = (uint32_t)p0;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

uint64_t init_name_hash(const char *name)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        h ^= *p;
        h *= 0x100000001b3ull;
    }
    return h;
}

/* Two exact doubles in (-1, 1) from one Philox block. */
static void block_pair(uint64_t seed, uint64_t h, uint32_t i, uint32_t attempt, double *x, double *y)
{
    const uint32_t ctr[4] = {i, attempt, (uint32_t)h, (uint32_t)(h >> 32)};
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    uint32_t w[4];
    philox4x32_10(ctr, key, w);
    uint64_t a = ((uint64_t)w[1] << 32 | w[0]) >> 12, b = ((uint64_t)w[3] << 32 | w[2]) >> 12;
    *x = (double)((int64_t)(2 * a + 1) - ((int64_t)1 << 52)) * 0x1p-52;
    *y = (double)((int64_t)(2 * b + 1) - ((int64_t)1 << 52)) * 0x1p-52;
}

double init_ln(double s)
{
    static const double ln2 = 0.6931471805599453094;
    int e;
    double m = frexp(s, &e); /* exact: s = m 2^e, m in [0.5, 1) */
    if (m < 0.70710678118654752440) {
        m = m * 2.0;
        e = e - 1;
    }
    double t = (m - 1.0) / (m + 1.0), t2 = t * t;
    double p = 1.0 / 23;
    static const double coef[11] = {1.0 / 21, 1.0 / 19, 1.0 / 17, 1.0 / 15, 1.0 / 13, 1.0 / 11,
                                    1.0 / 9,  1.0 / 7,  1.0 / 5,  1.0 / 3,  1.0};
    for (int k = 0; k < 11; k++) p = p * t2 + coef[k];
    double lnm = 2.0 * t * p;
    return (double)e * ln2 + lnm;
}

double init_normal(uint64_t seed, uint64_t h, uint32_t i)
{
    for (uint32_t attempt = 0;; attempt++) {
        double x, y;
        block_pair(seed, h, i, attempt, &x, &y);
        double s = x * x + y * y;
        if (s >= 1.0) continue;
        double q = -2.0 * init_ln(s);
        q = q / s;
        return x * sqrt(q);
    }
}

double init_uniform(uint64_t seed, uint64_t h, uint32_t i)
{
    double x, y;
    block_pair(seed, h, i, 0, &x, &y);
    return x;
}

/* ---- the network ------------------------------------------------------------------------------- */

static void add(vit_init_net *net, init_kind kind, double scale, int ndim, const int64_t *shape, const char *fmt, int b,
                const char *suffix)
{
    init_tensor *t = &net->t[net->n++];
    t->name = b >= 0 ? kc_strfmt(fmt, b, suffix) : kc_strdup(fmt);
    t->kind = kind;
    t->scale = scale;
    t->ndim = ndim;
    t->numel = 1;
    for (int d = 0; d < ndim; d++) {
        t->shape[d] = shape[d];
        t->numel *= shape[d];
    }
}

static int cmp_tensor(const void *a, const void *b)
{
    return strcmp(((const init_tensor *)a)->name, ((const init_tensor *)b)->name);
}

void vit_init_build(vit_init_net *net, const vit_arch *a, uint64_t seed)
{
    memset(net, 0, sizeof *net);
    net->arch = a;
    net->seed = seed;
    net->t = kc_calloc((size_t)(8 + 15 * a->depth), sizeof *net->t);
    const int64_t D = a->dim, H = a->mlp, P = a->patch, G = a->grid, R = a->n_reg;
    const double std = 0.02, bound = 1.0 / sqrt((double)(3 * P * P));
    const vit_family fam = a->family;
    /* the embeddings (vit_init.h says which official line gives each value): DINO's cls_token is
     * trunc_normal_, DINOv2's and DINOv3's normal_ (std 1e-6 and 0.02), their prefix tokens likewise */
    const double cls_std = fam == VIT_FAMILY_DINOV2 ? 1e-6 : std;
    const init_kind cls_kind = fam == VIT_FAMILY_DINO ? INIT_TRUNC_NORMAL : INIT_NORMAL;
    add(net, cls_kind, cls_std, 3, (int64_t[]){1, 1, D}, "cls_token", -1, NULL);
    if (G > 0) add(net, INIT_TRUNC_NORMAL, std, 3, (int64_t[]){1, 1 + G * G, D}, "pos_embed", -1, NULL);
    if (fam != VIT_FAMILY_DINO) add(net, INIT_ZEROS, 0, 2, (int64_t[]){1, D}, "mask_token", -1, NULL);
    if (R > 0)
        add(net, INIT_NORMAL, cls_std, 3, (int64_t[]){1, R, D},
            fam == VIT_FAMILY_DINOV3 ? "storage_tokens" : "register_tokens", -1, NULL);
    if (fam == VIT_FAMILY_DINOV3)
        add(net, INIT_ROPE_PERIODS, 100.0, 1, (int64_t[]){D / a->heads / 4}, "rope_embed.periods", -1, NULL);
    add(net, INIT_UNIFORM, bound, 4, (int64_t[]){D, 3, P, P}, "patch_embed.proj.weight", -1, NULL);
    add(net, INIT_UNIFORM, bound, 1, (int64_t[]){D}, "patch_embed.proj.bias", -1, NULL);
    for (int b = 0; b < a->depth; b++) {
        static const char *f = "blocks.%d.%s";
        add(net, INIT_ONES, 0, 1, (int64_t[]){D}, f, b, "norm1.weight");
        add(net, INIT_ZEROS, 0, 1, (int64_t[]){D}, f, b, "norm1.bias");
        add(net, INIT_TRUNC_NORMAL, std, 2, (int64_t[]){3 * D, D}, f, b, "attn.qkv.weight");
        add(net, INIT_ZEROS, 0, 1, (int64_t[]){3 * D}, f, b, "attn.qkv.bias");
        if (fam == VIT_FAMILY_DINOV3)
            add(net, INIT_K_BIAS_MASK, 0, 1, (int64_t[]){3 * D}, f, b, "attn.qkv.bias_mask");
        add(net, INIT_TRUNC_NORMAL, std, 2, (int64_t[]){D, D}, f, b, "attn.proj.weight");
        add(net, INIT_ZEROS, 0, 1, (int64_t[]){D}, f, b, "attn.proj.bias");
        add(net, INIT_ONES, 0, 1, (int64_t[]){D}, f, b, "norm2.weight");
        add(net, INIT_ZEROS, 0, 1, (int64_t[]){D}, f, b, "norm2.bias");
        add(net, INIT_TRUNC_NORMAL, std, 2, (int64_t[]){H, D}, f, b, "mlp.fc1.weight");
        add(net, INIT_ZEROS, 0, 1, (int64_t[]){H}, f, b, "mlp.fc1.bias");
        add(net, INIT_TRUNC_NORMAL, std, 2, (int64_t[]){D, H}, f, b, "mlp.fc2.weight");
        add(net, INIT_ZEROS, 0, 1, (int64_t[]){D}, f, b, "mlp.fc2.bias");
        if (fam != VIT_FAMILY_DINO) { /* LayerScale: 1e-5 in both families' training */
            add(net, INIT_CONST, 1e-5, 1, (int64_t[]){D}, f, b, "ls1.gamma");
            add(net, INIT_CONST, 1e-5, 1, (int64_t[]){D}, f, b, "ls2.gamma");
        }
    }
    add(net, INIT_ONES, 0, 1, (int64_t[]){D}, "norm.weight", -1, NULL);
    add(net, INIT_ZEROS, 0, 1, (int64_t[]){D}, "norm.bias", -1, NULL);
    qsort(net->t, (size_t)net->n, sizeof *net->t, cmp_tensor);
    for (int k = 0; k < net->n; k++) {
        net->t[k].data = kc_malloc((size_t)net->t[k].numel * sizeof *net->t[k].data);
        vit_init_fill(&net->t[k], seed);
    }
}

void vit_init_fill(init_tensor *t, uint64_t seed)
{
    const uint64_t h = init_name_hash(t->name);
    const int64_t n = t->numel;
    float *x = t->data;
    switch (t->kind) {
    case INIT_ZEROS:
    case INIT_ONES:
        for (int64_t i = 0; i < n; i++) x[i] = t->kind == INIT_ONES ? 1.0f : 0.0f;
        break;
    case INIT_UNIFORM:
#pragma omp parallel for schedule(static) if (n > 65536)
        for (int64_t i = 0; i < n; i++) x[i] = (float)(t->scale * init_uniform(seed, h, (uint32_t)i));
        break;
    case INIT_CONST:
        for (int64_t i = 0; i < n; i++) x[i] = (float)t->scale;
        break;
    case INIT_ROPE_PERIODS: /* base ** (2 * arange(n) / (2 n)), i / n exact in double */
        for (int64_t i = 0; i < n; i++) x[i] = (float)pow(t->scale, (double)i / (double)n);
        break;
    case INIT_K_BIAS_MASK: /* fill 1, then [o // 3, 2 o // 3) 0 */
        for (int64_t i = 0; i < n; i++) x[i] = i >= n / 3 && i < 2 * n / 3 ? 0.0f : 1.0f;
        break;
    case INIT_NORMAL:
#pragma omp parallel for schedule(static) if (n > 65536)
        for (int64_t i = 0; i < n; i++) x[i] = (float)(t->scale * init_normal(seed, h, (uint32_t)i));
        break;
    case INIT_TRUNC_NORMAL:
#pragma omp parallel for schedule(static) if (n > 65536)
        for (int64_t i = 0; i < n; i++) {
            double v = t->scale * init_normal(seed, h, (uint32_t)i);
            if (v < -2.0) v = -2.0; /* DINO's trunc_normal_ bounds a = -2, b = 2 */
            if (v > 2.0) v = 2.0;
            x[i] = (float)v;
        }
        break;
    }
}

void vit_init_free(vit_init_net *net)
{
    for (int k = 0; k < net->n; k++) {
        free(net->t[k].name);
        free(net->t[k].data);
    }
    free(net->t);
    memset(net, 0, sizeof *net);
}
