/* pipeline/model/vit.c — the ViT forward: keys and tokens of DINO-style Vision Transformers.
 *
 * Network (DINO / timm layout, pre-norm; DINOv2 and DINOv3 add what vit.h lists), for an image of
 * grid_h x grid_w patches:
 *   x0    = [cls + pos_cls ; registers ; patches(chw) W_pe^T + b_pe + resample(pos)]   // (T, D)
 *   per block:  x += g1 * proj(attn(LN1(x)));  x += g2 * fc2(GELU(fc1(LN2(x))))   (g = 1 without
 *         LayerScale; g folded into proj and fc2 at load)
 *   attn: qkv = LN1(x) W_qkv^T + b_qkv  (T, 3D) (b_qkv masked under DINOv3); RoPE on the q and k
 *         rows of the patches (DINOv3); per head h (rows h*hd .. of q, k, v):
 *         O_h = softmax(q_h k_h^T / sqrt(hd)) v_h
 *   keys   = LN1_last(x_{depth-1}) W_qkv[D:2D]^T + b_qkv[D:2D], RoPE'd under DINOv3 (patch rows, unscaled)
 *   tokens = norm(x_depth) when the network has a final norm, else x_depth (patch rows)
 *   attn   = per head, softmax_t(q_cls,h . k_t,h / sqrt(hd)) over all T tokens, class and register
 *            columns dropped after the softmax; q_cls from LN1_last(x_cls) and qkv rows 0..D-1
 *            (class_attention below, run once on the last block)
 * GELU is exact (erf).  Only the blocks before the last run in full when just the keys are wanted.
 *
 * Threads.  One OpenMP parallel region per forward.  Each thread owns a contiguous range of token
 * rows and runs every row-local step on it (LayerNorm, the qkv / proj / fc1 / fc2 products as
 * single-threaded calls on its rows, GELU, residuals); attention is split into (head, block of
 * query rows) items.  So a block costs two barriers.  The products go through pipeline/model/gemm.h
 * (oneDNN, kernels chosen from the CPU's feature bits), which uses keycut's OpenMP runtime and
 * runs single-threaded inside a parallel region; no second thread pool exists to spin (vit_init
 * also sets the pthread build of OpenBLAS to one thread, for the fallback path).
 * Attention: where head_dim is 64 (m->attn_fused), each item (head, 48 query rows) is one call of
 * the fused kernel of pipeline/model/attn.h, AVX-512 or AVX2 with the same bytes (scores, softmax and
 * P V kept in L1/L2, k and v read in place from qkv).  Elsewhere (and under KC_VIT_ATTN=products, for
 * benchmarks) the two products of pipeline/model/gemm.h with the softmax between them, which leaves its
 * 1/sum for after the product P V: the (rows, head_dim) output is scaled instead of the (rows, T)
 * scores, one pass over the scores fewer.  Either way the items depend on T alone, not on the
 * threads, and the fused kernel's rows do not even depend on their item.  Attention items run
 * head-major, so consecutive items reuse the head's k and v rows from cache.
 * Linear layers: where pipeline/model/gemm.h offers kc_linear (oneDNN matmul, AVX-512), every linear
 * layer (patch embedding, qkv, the keys slice, proj, fc1, fc2) runs on weights packed once at
 * vit_init, with bias, GELU and the residual add fused into the product (no pass over memory of
 * their own); its rows come out the same whatever the row split, so the forward's bytes do not
 * depend on the thread count.  Elsewhere: kc_gemm_nt and the row kernels below, as before.
 *
 * Position embedding resampling: see vit_resample_pos in vit.h.
 */
#include "pipeline/model/vit.h"

#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/model/attn.h"
#include "pipeline/model/fastmath.h"
#include "pipeline/model/gemm.h"
#include "pipeline/kc.h"

/* Query rows per attention work item: the score block (ATT_ROWS, T) stays in L2.  The fused
 * kernel (pipeline/model/attn.h) takes KC_ATTN_ROWS (48) per item; its scratch fits in the same buffer. */
#define ATT_ROWS 96

static int g_simd512; /* row-wise kernels: 1 = AVX-512 versions; set by vit_init (see kernels) */

typedef struct vit_block {
    const float *ln1_w, *ln1_b;   /* (D) */
    const float *qkv_w, *qkv_b;   /* (3D, D), (3D) */
    const float *proj_w, *proj_b; /* (D, D), (D) */
    const float *ln2_w, *ln2_b;   /* (D) */
    const float *fc1_w, *fc1_b;   /* (M, D), (M) */
    const float *fc2_w, *fc2_b;   /* (D, M), (D) */
    /* the same layers with packed weights and fused post-ops (pipeline/model/gemm.h kc_linear), or
     * all NULL: qkv (bias), keys = qkv rows D..2D-1 (bias; last block only), proj (residual),
     * fc1 (GELU), fc2 (residual) */
    kc_linear *lin_qkv, *lin_keys, *lin_proj, *lin_fc1, *lin_fc2;
} vit_block;

/* What a file's tensors say about its family (vit_init): decides the defaults below. */
enum { FAM_DINO = 0, FAM_DINOV2 = 1, FAM_DINOV2_REG = 2, FAM_DINOV3 = 3 };

struct vit_model {
    int dim, depth, heads, head_dim, patch, mlp;
    int pos_n;                 /* trained position grid n x n */
    int file_cls, file_norm;   /* what the weights hold */
    int cls, final_norm;       /* what the forward runs (differs under drop_cls) */
    int posembed;              /* VIT_POS_DINO, _HF or _AA (resolved); 0 without a position embedding */
    int family;                /* FAM_* */
    int n_reg;                 /* register / storage tokens after the class token (DINOv2-reg, DINOv3) */
    int prefix;                /* rows before the patches: class token + registers */
    int layerscale;            /* 1: LayerScale gammas, folded into proj and fc2 at load */
    int n_periods;             /* RoPE: head_dim / 4 periods (DINOv3), else 0 */
    int keys_pre_rope;         /* keys before the rotation (--keys pre-rope) */
    int blas_pool;             /* KC_VIT_THREADING=openblas (benchmarks only) */
    int attn_fused;            /* attention by pipeline/model/attn.h (AVX-512, head_dim 64) */
    double ln_eps;
    float *slab;               /* every tensor the forward uses, copied */
    const float *pe_w, *pe_b;  /* (D, 3*p*p), (D) */
    const float *cls_token;    /* (D) or NULL */
    const float *pos_cls;      /* (D) or NULL */
    const float *pos;          /* (n*n, D), or NULL (DINOv3: RoPE instead) */
    const float *reg_tokens;   /* (n_reg, D) or NULL */
    const float *rope_periods; /* (n_periods) or NULL */
    const float *norm_w, *norm_b;
    vit_block *blocks;
    kc_linear *lin_pe;         /* patch embedding (bias), NULL when the linear layers are off */
    char describe[256];
    const char *kind;
    char kind_buf[128];
};

struct vit_state {
    int grid_h, grid_w, n_tok, n_threads;
    float *pos;      /* (G, D) resampled position embedding, or NULL */
    float *rope_cos, *rope_sin; /* (G, head_dim / 2) RoPE tables (DINOv3), or NULL */
    float *patches;  /* (G, 3*p*p) im2col */
    float *x;        /* (T, D) residual stream */
    float *xn;       /* (T, D) LayerNorm output */
    float *qkv;      /* (T, 3D) */
    float *att;      /* (T, D) attention output, heads concatenated */
    float *hidden;   /* (T, M) */
    float *scores;   /* (n_threads, ATT_ROWS, T) */
    float *cls_q;    /* (D + T) class query and its scores (class attention), or NULL */
};

/* ---- loading ------------------------------------------------------------------------------ */

typedef struct loader {
    const kc_weights *w;
    char *used;
    size_t n_floats;      /* pass 1: count; pass 2: offset */
    float *slab;
} loader;

static const char *wpath(const kc_weights *w) { return w->path ? w->path : "(weights)"; }

static int find_index(const kc_weights *w, const char *name)
{
    for (int i = 0; i < w->n; i++)
        if (w->t[i].name && strcmp(w->t[i].name, name) == 0) return i;
    return -1;
}

static void shape_str(char *buf, size_t n, int ndim, const int64_t *shape)
{
    size_t k = (size_t)snprintf(buf, n, "(");
    for (int i = 0; i < ndim && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? ", " : "", (long long)shape[i]);
    if (k < n) snprintf(buf + k, n - k, ")");
}

static int64_t numel(const kc_tensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
    return n;
}

/* Looks a tensor up and checks its shape (ndim values in want; -1 matches anything) and values. */
static int check_tensor(loader *L, const char *name, int ndim, const int64_t *want, int required,
                        const kc_tensor **out)
{
    const kc_weights *w = L->w;
    *out = NULL;
    int i = find_index(w, name);
    if (i < 0) {
        if (required) return kc_fail("%s: missing tensor %s", wpath(w), name);
        return 0;
    }
    const kc_tensor *t = &w->t[i];
    int ok = t->ndim == ndim && t->data != NULL;
    for (int d = 0; ok && d < ndim; d++)
        if (want[d] >= 0 && t->shape[d] != want[d]) ok = 0;
    if (!ok) {
        char got[128], exp[128];
        shape_str(got, sizeof got, t->ndim, t->shape);
        shape_str(exp, sizeof exp, ndim, want);
        for (char *p = exp; *p; p++) /* show -1 as '?' */
            if (p[0] == '-' && p[1] == '1') { p[0] = ' '; p[1] = '?'; }
        return kc_fail("%s: tensor %s has shape %s, expected %s", wpath(w), name, got, exp);
    }
    int64_t n = numel(t);
    for (int64_t k = 0; k < n; k++)
        if (!isfinite(t->data[k]))
            return kc_fail("%s: tensor %s holds a non-finite value (%g at flat index %lld)",
                           wpath(w), name, (double)t->data[k], (long long)k);
    L->used[i] = 1;
    *out = t;
    return 1;
}

#define SHAPE(...) ((const int64_t[]){__VA_ARGS__})

/* Reserves room for a tensor in the slab (slab == NULL: counting pass). */
static const float *take(loader *L, const kc_tensor *t, int64_t offset, int64_t count)
{
    size_t at = L->n_floats;
    L->n_floats += (size_t)count;
    if (!L->slab) return NULL;
    memcpy(L->slab + at, t->data + offset, (size_t)count * sizeof(float));
    return L->slab + at;
}

/* A tensor copied into the slab that load_all may still change (the folds below). */
static float *take_mut(loader *L, const kc_tensor *t, int64_t count) { return (float *)take(L, t, 0, count); }

static int load_all(vit_model *m, loader *L, const vit_opts *o)
{
    const kc_weights *w = L->w;
    const kc_tensor *t;
    const int D = m->dim, M = m->mlp, p = m->patch;
    char name[96];

    KC_TRY(check_tensor(L, "patch_embed.proj.weight", 4, SHAPE(D, 3, p, p), 1, &t));
    m->pe_w = take(L, t, 0, (int64_t)D * 3 * p * p);
    KC_TRY(check_tensor(L, "patch_embed.proj.bias", 1, SHAPE(D), 1, &t));
    m->pe_b = take(L, t, 0, D);

    int has_cls;
    KC_TRY(has_cls = check_tensor(L, "cls_token", 3, SHAPE(1, 1, D), 0, &t));
    m->file_cls = has_cls;
    m->cls = has_cls && !o->drop_cls;
    m->cls_token = m->cls ? take(L, t, 0, D) : NULL;

    int has_reg;
    KC_TRY(has_reg = check_tensor(L, "register_tokens", 3, SHAPE(1, -1, D), 0, &t));
    if (has_reg) {
        if (t->shape[1] < 1 || t->shape[1] > 256)
            return kc_fail("%s: tensor register_tokens holds %lld tokens (expected 1 to 256)", wpath(w),
                           (long long)t->shape[1]);
        if (!has_cls) return kc_fail("%s: register tokens without a class token (cls_token)", wpath(w));
        m->n_reg = (int)t->shape[1];
        m->reg_tokens = take(L, t, 0, (int64_t)m->n_reg * D);
    }

    int has_rope;
    KC_TRY(has_rope = check_tensor(L, "rope_embed.periods", 1, SHAPE(m->head_dim / 4), 0, &t));
    if (has_rope) {
        if (m->head_dim % 4 != 0)
            return kc_fail("%s: RoPE needs a head width divisible by 4 (heads %d of width %d)", wpath(w), m->heads,
                           m->head_dim);
        for (int i = 0; i < m->head_dim / 4; i++)
            if (!(t->data[i] > 0))
                return kc_fail("%s: tensor rope_embed.periods holds a period that is not positive (%g at %d)",
                               wpath(w), (double)t->data[i], i);
        m->n_periods = m->head_dim / 4;
        m->rope_periods = take(L, t, 0, m->n_periods);
    }

    int has_pos;
    KC_TRY(has_pos = check_tensor(L, "pos_embed", 3, SHAPE(1, -1, D), !has_rope, &t));
    if (has_pos && has_rope)
        return kc_fail("%s: both a position embedding (pos_embed) and RoPE periods (rope_embed.periods): "
                       "not a layout keycut knows", wpath(w));
    if (has_pos) {
        int64_t rows = t->shape[1] - has_cls;
        int n = (int)floor(sqrt((double)(rows > 0 ? rows : 0)) + 0.5);
        if (rows < 1 || (int64_t)n * n != rows)
            return kc_fail("%s: tensor pos_embed has %lld rows: not a square grid%s", wpath(w),
                           (long long)t->shape[1], has_cls ? " plus the class token's row" : "");
        m->pos_n = n;
        m->pos_cls = m->cls ? take(L, t, 0, D) : NULL;
        m->pos = take(L, t, (int64_t)has_cls * D, rows * D);
    }

    for (int b = 0; b < m->depth; b++) {
        vit_block *B = &m->blocks[b];
#define BT(field, suffix, nd, ...)                                                             \
    do {                                                                                       \
        snprintf(name, sizeof name, "blocks.%d.%s", b, suffix);                                \
        KC_TRY(check_tensor(L, name, nd, SHAPE(__VA_ARGS__), 1, &t));                          \
        B->field = take(L, t, 0, numel(t));                                                    \
    } while (0)
        BT(ln1_w, "norm1.weight", 1, D);
        BT(ln1_b, "norm1.bias", 1, D);
        BT(qkv_w, "attn.qkv.weight", 2, 3 * D, D);
        snprintf(name, sizeof name, "blocks.%d.attn.qkv.bias", b);
        KC_TRY(check_tensor(L, name, 1, SHAPE(3 * D), 1, &t));
        float *qkv_b = take_mut(L, t, 3 * D);
        B->qkv_b = qkv_b;
        BT(proj_w, "attn.proj.weight", 2, D, D);
        BT(proj_b, "attn.proj.bias", 1, D);
        BT(ln2_w, "norm2.weight", 1, D);
        BT(ln2_b, "norm2.bias", 1, D);
        BT(fc1_w, "mlp.fc1.weight", 2, M, D);
        BT(fc1_b, "mlp.fc1.bias", 1, M);
        BT(fc2_w, "mlp.fc2.weight", 2, D, M);
        BT(fc2_b, "mlp.fc2.bias", 1, D);
#undef BT
        /* DINOv3's masked key bias: the bias used is qkv.bias * bias_mask (0 on the k rows) */
        snprintf(name, sizeof name, "blocks.%d.attn.qkv.bias_mask", b);
        int has_mask;
        KC_TRY(has_mask = check_tensor(L, name, 1, SHAPE(3 * D), 0, &t));
        if (has_mask) {
            for (int i = 0; i < 3 * D; i++)
                if (t->data[i] != 0.0f && t->data[i] != 1.0f)
                    return kc_fail("%s: tensor %s holds %g at %d (a mask holds 0 or 1)", wpath(w), name,
                                   (double)t->data[i], i);
            if (qkv_b)
                for (int i = 0; i < 3 * D; i++) qkv_b[i] *= t->data[i];
        }
        /* LayerScale (DINOv2, DINOv3): x += g1 * proj(...), x += g2 * fc2(...), folded into the rows
         * of proj and fc2 and their biases (g (A W^T + b) = A (g W)^T + g b), so it costs nothing */
        const kc_tensor *g[2];
        int has_g[2];
        for (int k = 0; k < 2; k++) {
            snprintf(name, sizeof name, "blocks.%d.ls%d.gamma", b, k + 1);
            KC_TRY(has_g[k] = check_tensor(L, name, 1, SHAPE(D), 0, &g[k]));
        }
        /* all blocks have both gammas, or none has any (block 0 decides) */
        const int want = b == 0 ? has_g[0] || has_g[1] : m->layerscale;
        for (int k = 0; k < 2; k++)
            if (has_g[k] != want)
                return kc_fail("%s: LayerScale in some blocks only: blocks.%d.ls%d.gamma is %s", wpath(w), b, k + 1,
                               want ? "missing" : "unexpected");
        m->layerscale = want;
        if (m->layerscale && L->slab) {
            float *pw = (float *)B->proj_w, *pb = (float *)B->proj_b;
            float *fw = (float *)B->fc2_w, *fb = (float *)B->fc2_b;
            for (int j = 0; j < D; j++) {
                const float g1 = g[0]->data[j], g2 = g[1]->data[j];
                for (int i = 0; i < D; i++) pw[(size_t)j * D + i] *= g1;
                pb[j] *= g1;
                for (int i = 0; i < M; i++) fw[(size_t)j * M + i] *= g2;
                fb[j] *= g2;
            }
        }
    }

    const kc_tensor *nw, *nb;
    int has_nw, has_nb;
    KC_TRY(has_nw = check_tensor(L, "norm.weight", 1, SHAPE(D), 0, &nw));
    KC_TRY(has_nb = check_tensor(L, "norm.bias", 1, SHAPE(D), 0, &nb));
    if (has_nw != has_nb)
        return kc_fail("%s: missing tensor %s", wpath(w), has_nw ? "norm.bias" : "norm.weight");
    m->file_norm = has_nw;
    m->final_norm = has_nw && !o->drop_cls;
    m->norm_w = m->final_norm ? take(L, nw, 0, D) : NULL;
    m->norm_b = m->final_norm ? take(L, nb, 0, D) : NULL;

    for (int i = 0; i < w->n; i++)
        if (!L->used[i])
            return kc_fail("%s: unexpected backbone tensor %s (not part of a ViT of depth %d)",
                           wpath(w), w->t[i].name ? w->t[i].name : "?", m->depth);
    return 0;
}

/* Patch size, width, depth and MLP width from the tensors. */
static int infer_arch(vit_model *m, const kc_weights *w)
{
    int i = find_index(w, "patch_embed.proj.weight");
    if (i < 0) return kc_fail("%s: missing tensor patch_embed.proj.weight", wpath(w));
    const kc_tensor *t = &w->t[i];
    if (t->ndim != 4 || t->shape[1] != 3 || t->shape[2] != t->shape[3] || t->shape[2] < 1 ||
        t->shape[0] < 1 || t->shape[0] > 65536 || t->shape[2] > 1024) {
        char got[128];
        shape_str(got, sizeof got, t->ndim, t->shape);
        return kc_fail("%s: tensor patch_embed.proj.weight has shape %s, expected (dim, 3, p, p)",
                       wpath(w), got);
    }
    m->dim = (int)t->shape[0];
    m->patch = (int)t->shape[2];
    int depth = 0;
    for (int k = 0; k < w->n; k++) {
        const char *nm = w->t[k].name;
        if (!nm || strncmp(nm, "blocks.", 7) != 0) continue;
        char *end;
        long b = strtol(nm + 7, &end, 10);
        if (end == nm + 7 || *end != '.' || b < 0 || b > 4096)
            return kc_fail("%s: unexpected backbone tensor %s", wpath(w), nm);
        if (b + 1 > depth) depth = (int)b + 1;
    }
    if (depth < 1) return kc_fail("%s: no transformer blocks (tensors blocks.N.*)", wpath(w));
    m->depth = depth;
    i = find_index(w, "blocks.0.mlp.fc1.weight");
    if (i < 0) return kc_fail("%s: missing tensor blocks.0.mlp.fc1.weight", wpath(w));
    t = &w->t[i];
    if (t->ndim != 2 || t->shape[0] < 1 || t->shape[0] > (1 << 20) || t->shape[1] != m->dim) {
        char got[128];
        shape_str(got, sizeof got, t->ndim, t->shape);
        return kc_fail("%s: tensor blocks.0.mlp.fc1.weight has shape %s, expected (mlp, %d)",
                       wpath(w), got, m->dim);
    }
    m->mlp = (int)t->shape[0];
    return 0;
}

static void unpack_linear(vit_model *m)
{
    kc_linear_free(m->lin_pe);
    m->lin_pe = NULL;
    for (int b = 0; b < m->depth && m->blocks; b++) {
        vit_block *B = &m->blocks[b];
        kc_linear_free(B->lin_qkv), kc_linear_free(B->lin_keys), kc_linear_free(B->lin_proj);
        kc_linear_free(B->lin_fc1), kc_linear_free(B->lin_fc2);
        B->lin_qkv = B->lin_keys = B->lin_proj = B->lin_fc1 = B->lin_fc2 = NULL;
    }
}

/* Every linear layer's weights packed once for the matmul path; 1 = all made. */
static int pack_linear(vit_model *m)
{
    const int D = m->dim, M = m->mlp, K = 3 * m->patch * m->patch;
    int ok = (m->lin_pe = kc_linear_new(D, K, m->pe_w, K, m->pe_b, KC_LINEAR_BIAS, K, D)) != NULL;
    for (int b = 0; b < m->depth && ok; b++) {
        vit_block *B = &m->blocks[b];
        B->lin_qkv = kc_linear_new(3 * D, D, B->qkv_w, D, B->qkv_b, KC_LINEAR_BIAS, D, 3 * D);
        B->lin_proj = kc_linear_new(D, D, B->proj_w, D, B->proj_b, KC_LINEAR_RESIDUAL, D, D);
        B->lin_fc1 = kc_linear_new(M, D, B->fc1_w, D, B->fc1_b, KC_LINEAR_GELU, D, M);
        B->lin_fc2 = kc_linear_new(D, M, B->fc2_w, M, B->fc2_b, KC_LINEAR_RESIDUAL, M, D);
        ok = B->lin_qkv && B->lin_proj && B->lin_fc1 && B->lin_fc2;
        if (ok && b == m->depth - 1)
            ok = (B->lin_keys = kc_linear_new(D, D, B->qkv_w + (size_t)D * D, D, B->qkv_b + D,
                                              KC_LINEAR_BIAS, D, D)) != NULL; /* into s->att, dense */
    }
    return ok;
}

static void blas_single_threaded(void)
{
    /* pthread build: our OpenMP threads call sgemm concurrently, each on its own rows. */
    if (openblas_get_parallel() == 1 && openblas_get_num_threads() != 1) openblas_set_num_threads(1);
}

int vit_init(vit_model **out, const kc_weights *w, const vit_opts *o)
{
    vit_opts def = VIT_OPTS_DEFAULT;
    if (!o) o = &def;
    *out = NULL;
    vit_model *m = kc_calloc(1, sizeof *m);
    loader L = {w, NULL, 0, NULL};
    if (infer_arch(m, w) < 0) goto fail;

    int heads = o->heads > 0 ? o->heads : w->config_heads > 0 ? w->config_heads : 0;
    if (heads <= 0) {
        if (m->dim % 64 != 0) {
            kc_fail("%s: cannot infer the number of heads: width %d is not a multiple of 64 "
                    "(give --heads)", wpath(w), m->dim);
            goto fail;
        }
        heads = m->dim / 64;
    }
    if (m->dim % heads != 0) {
        kc_fail("%s: %d heads do not divide the width %d", wpath(w), heads, m->dim);
        goto fail;
    }
    m->heads = heads;
    m->head_dim = m->dim / heads;
    m->blocks = kc_calloc((size_t)m->depth, sizeof *m->blocks);
    L.used = kc_calloc((size_t)(w->n > 0 ? w->n : 1), 1);
    if (load_all(m, &L, o) < 0) goto fail; /* pass 1: checks and counts */
    m->slab = kc_malloc(L.n_floats * sizeof(float));
    L.slab = m->slab;
    L.n_floats = 0;
    memset(L.used, 0, (size_t)(w->n > 0 ? w->n : 1));
    if (load_all(m, &L, o) < 0) goto fail; /* pass 2: copies */
    free(L.used);
    L.used = NULL;

    /* the family, from the tensors: RoPE periods = DINOv3; LayerScale = DINOv2 (registers or not) */
    m->family = m->n_periods ? FAM_DINOV3 : !m->layerscale ? FAM_DINO : m->n_reg ? FAM_DINOV2_REG : FAM_DINOV2;
    if (o->drop_cls && m->family != FAM_DINO) {
        kc_fail("%s: --drop-cls applies to DINO-layout networks, not to this %s", wpath(w),
                m->family == FAM_DINOV3 ? "DINOv3 network" : "DINOv2 network");
        goto fail;
    }
    if (m->family == FAM_DINOV3 && o->posembed != VIT_POS_AUTO) {
        kc_fail("%s: a DINOv3 network places its patches by RoPE and has no position embedding to resample "
                "(--posembed applies to networks with pos_embed)", wpath(w));
        goto fail;
    }
    m->prefix = m->cls + m->n_reg;
    m->keys_pre_rope = o->keys_pre_rope != 0;
    if (m->keys_pre_rope && !m->n_periods) {
        kc_fail("%s: keys before RoPE asked for, and this network has no RoPE", wpath(w));
        goto fail;
    }
    /* LayerNorm eps: given; else config.json's for Hugging Face names; else the family's */
    m->ln_eps = o->ln_eps > 0 ? o->ln_eps
              : w->hf_names && w->config_ln_eps > 0 ? w->config_ln_eps
              : m->family == FAM_DINOV3 ? 1e-5
              : w->hf_names && m->family == FAM_DINO ? 1e-12
              : 1e-6;
    /* position embedding: the official rule of the family unless given */
    m->posembed = !m->pos ? 0
                : o->posembed != VIT_POS_AUTO ? o->posembed
                : m->family == FAM_DINOV2_REG ? VIT_POS_AA : VIT_POS_DINO;

    static const char *fam_kind[] = {NULL, "dinov2 (class token, LayerScale, final norm)",
                                     "dinov2 with registers (class token, %d registers, LayerScale, final norm)",
                                     "dinov3 (class token, %d storage tokens, LayerScale, RoPE, masked key bias, final norm)"};
    if (m->family != FAM_DINO) {
        snprintf(m->kind_buf, sizeof m->kind_buf, fam_kind[m->family], m->n_reg);
        m->kind = m->kind_buf;
    } else if (m->file_cls && o->drop_cls)
        m->kind = "dino converted (--drop-cls: no class token, no final norm)";
    else if (m->cls && m->final_norm)
        m->kind = "dino (class token, final norm)";
    else if (m->cls)
        m->kind = "class token, no final norm";
    else if (m->final_norm)
        m->kind = "no class token, final norm";
    else
        m->kind = "selfpatch-like or converted (no class token, no final norm)";
    int k = snprintf(m->describe, sizeof m->describe,
                     "vit dim=%d depth=%d heads=%d patch=%d mlp=%d cls=%d final_norm=%d pos_grid=%dx%d",
                     m->dim, m->depth, m->heads, m->patch, m->mlp, m->file_cls, m->file_norm, m->pos_n,
                     m->pos_n);
    if (m->family != FAM_DINO && k > 0 && (size_t)k < sizeof m->describe)
        snprintf(m->describe + k, sizeof m->describe - (size_t)k, " registers=%d layerscale=%d rope_periods=%d",
                 m->n_reg, m->layerscale, m->n_periods);
    blas_single_threaded();
    kc_gemm_init(); /* selects and checks the product path now, outside any parallel region */
    g_simd512 = kc_simd_level() >= 2;
    const char *lin = getenv("KC_VIT_LINEAR"); /* =0: benchmarks only, the layers as before */
    if (kc_linear_available() && !(lin && !strcmp(lin, "0")) && !pack_linear(m))
        unpack_linear(m); /* out of memory: the products as before */
    const char *th = getenv("KC_VIT_THREADING");
    m->blas_pool = th && strcmp(th, "openblas") == 0 && openblas_get_parallel() == 1;
    const char *fa = getenv("KC_VIT_ATTN"); /* =products: benchmarks only, attention as before */
    m->attn_fused = kc_attn_available(m->head_dim) && !(fa && !strcmp(fa, "products"));
    *out = m;
    return 0;
fail:
    free(L.used);
    vit_free(m);
    return -1;
}

void vit_free(vit_model *m)
{
    if (!m) return;
    unpack_linear(m);
    free(m->slab);
    free(m->blocks);
    free(m);
}

int vit_patch(const vit_model *m) { return m->patch; }
int vit_dim(const vit_model *m) { return m->dim; }
int vit_depth(const vit_model *m) { return m->depth; }
int vit_heads(const vit_model *m) { return m->heads; }
int vit_has_cls(const vit_model *m) { return m->cls; }
const char *vit_describe(const vit_model *m) { return m->describe; }
double vit_ln_eps(const vit_model *m) { return m->ln_eps; }
const char *vit_forward_kind(const vit_model *m) { return m->kind; }
int vit_registers(const vit_model *m) { return m->n_reg; }
const char *vit_posembed_name(const vit_model *m)
{
    return m->n_periods ? "rope" : m->posembed == VIT_POS_HF ? "hf" : m->posembed == VIT_POS_AA ? "antialias" : "dino";
}
const char *vit_attention_path(const vit_model *m) { return m->attn_fused ? kc_attn_describe() : "products"; }

double vit_flops(const vit_model *m, int grid_h, int grid_w, int want_tokens)
{
    double G = (double)grid_h * grid_w, T = G + m->prefix, D = m->dim, M = m->mlp;
    double p2 = (double)m->patch * m->patch;
    double block = 2 * T * D * 3 * D + 2 * 2 * T * T * D + 2 * T * D * D + 2 * 2 * T * D * M;
    double f = 2 * G * 3 * p2 * D + (m->depth - 1) * block;
    f += want_tokens ? block : 2 * T * D * D;
    return f;
}

/* ---- position embedding ------------------------------------------------------------------- */

static float cubic1(float x, float A) { return ((A + 2) * x - (A + 3)) * x * x + 1; }
static float cubic2(float x, float A) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; }

/* Taps and weights of one output position along one axis (as PyTorch's bicubic upsampling). */
static void cubic_taps(int n, int g, int hf, int dst, int idx[4], float wt[4])
{
    const float A = -0.75f;
    float scale = hf ? (float)n / (float)g : (float)(1.0 / ((g + 0.1) / n));
    float src = scale * ((float)dst + 0.5f) - 0.5f;
    float f = floorf(src);
    float t = src - f;
    int i0 = (int)f;
    wt[0] = cubic2(t + 1.0f, A);
    wt[1] = cubic1(t, A);
    wt[2] = cubic1(1.0f - t, A);
    wt[3] = cubic2(2.0f - t, A);
    for (int k = 0; k < 4; k++) {
        int i = i0 - 1 + k;
        idx[k] = i < 0 ? 0 : i > n - 1 ? n - 1 : i;
    }
}

/* Keys' cubic with a = -0.5, in float: the kernel of PyTorch's antialiased bicubic resampling. */
static float keys_cubic(float z)
{
    const float a = -0.5f;
    z = fabsf(z);
    if (z < 1.0f) return cubic1(z, a);
    if (z < 2.0f) return cubic2(z, a);
    return 0.0f;
}

/* Weights (g, n), dense, of the antialiased bicubic resampling of n samples to g along one axis,
 * in PyTorch's float arithmetic (UpSampleKernel.cpp, its _compute_weights_aa for float input):
 * scale s = float(n) / g; support 2 s when reducing (s >= 1), else 2; inv = 1 / s (s >= 1) or 1;
 * output i centred on c = float(s (i + 0.5)); taps j from max(int(c - support + 0.5), 0) to
 * min(int(c + support + 0.5), n) - 1 with weights K(float((j - c + 0.5) inv)) divided by their float
 * sum.  No clamping: the taps stop at the edges.  (In double the weights differ by up to 2e-6 at
 * 37 -> 35, enough to show in the keys at the 2e-6 tolerance.) */
static void aa_weights(int n, int g, float *wt)
{
    const float scale = (float)n / (float)g;
    const float support = scale >= 1.0f ? (float)(2.0 * scale) : 2.0f;
    const float inv = scale >= 1.0f ? (float)(1.0 / scale) : 1.0f;
    for (int i = 0; i < g; i++) {
        float *row = wt + (size_t)i * n;
        memset(row, 0, (size_t)n * sizeof *row);
        const float c = (float)(scale * (i + 0.5));
        int j0 = (int)((double)(c - support) + 0.5), j1 = (int)((double)(c + support) + 0.5);
        if (j0 < 0) j0 = 0;
        if (j1 > n) j1 = n;
        float total = 0;
        for (int j = j0; j < j1; j++) {
            row[j] = keys_cubic((float)(((double)((float)j - c) + 0.5) * inv));
            total += row[j];
        }
        if (total != 0.0f)
            for (int j = j0; j < j1; j++) row[j] /= total;
    }
}

/* out (gh*gw, dim) = Wr (gh, n) . src (n, n, dim) . Wc (gw, n)^T, columns first. */
static void resample_dense(const float *src, int n, int dim, int grid_h, int grid_w, const float *wr,
                           const float *wc, float *dst)
{
    float *tmp = kc_calloc((size_t)n * grid_w * dim, sizeof *tmp); /* (n, gw, dim) */
    for (int i = 0; i < n; i++)
        for (int b = 0; b < grid_w; b++) {
            float *t = tmp + ((size_t)i * grid_w + b) * dim;
            for (int j = 0; j < n; j++) {
                const float w = wc[(size_t)b * n + j];
                if (w == 0) continue;
                const float *r = src + ((size_t)i * n + j) * dim;
                for (int d = 0; d < dim; d++) t[d] += w * r[d];
            }
        }
    for (int a = 0; a < grid_h; a++)
        for (int b = 0; b < grid_w; b++) {
            float *o = dst + ((size_t)a * grid_w + b) * dim;
            memset(o, 0, (size_t)dim * sizeof *o);
            for (int i = 0; i < n; i++) {
                const float w = wr[(size_t)a * n + i];
                if (w == 0) continue;
                const float *t = tmp + ((size_t)i * grid_w + b) * dim;
                for (int d = 0; d < dim; d++) o[d] += w * t[d];
            }
        }
    free(tmp);
}

int vit_resample_pos_mode(const float *src, int n, int dim, int grid_h, int grid_w, int mode, float *dst)
{
    if (mode != VIT_POS_AA) return vit_resample_pos(src, n, dim, grid_h, grid_w, mode == VIT_POS_HF, dst);
    if (n < 1 || dim < 1 || grid_h < 1 || grid_w < 1)
        return kc_fail("position embedding: bad sizes n=%d dim=%d grid=%dx%d", n, dim, grid_h, grid_w);
    if (grid_h == n && grid_w == n) {
        memcpy(dst, src, (size_t)n * n * dim * sizeof(float));
        return 0;
    }
    float *wr = kc_malloc((size_t)grid_h * n * sizeof *wr), *wc = kc_malloc((size_t)grid_w * n * sizeof *wc);
    aa_weights(n, grid_h, wr);
    aa_weights(n, grid_w, wc);
    resample_dense(src, n, dim, grid_h, grid_w, wr, wc, dst);
    free(wr);
    free(wc);
    return 0;
}

int vit_resample_pos(const float *src, int n, int dim, int grid_h, int grid_w, int hf, float *dst)
{
    if (n < 1 || dim < 1 || grid_h < 1 || grid_w < 1)
        return kc_fail("position embedding: bad sizes n=%d dim=%d grid=%dx%d", n, dim, grid_h,
                       grid_w);
    if (grid_h == n && grid_w == n) {
        memcpy(dst, src, (size_t)n * n * dim * sizeof(float));
        return 0;
    }
    for (int oy = 0; oy < grid_h; oy++) {
        int iy[4];
        float wy[4];
        cubic_taps(n, grid_h, hf, oy, iy, wy);
        for (int ox = 0; ox < grid_w; ox++) {
            int ix[4];
            float wx[4];
            cubic_taps(n, grid_w, hf, ox, ix, wx);
            float *o = dst + ((size_t)oy * grid_w + ox) * dim;
            for (int d = 0; d < dim; d++) {
                float acc = 0;
                for (int j = 0; j < 4; j++) {
                    const float *r = src + (size_t)iy[j] * n * dim + d;
                    float row = wx[0] * r[(size_t)ix[0] * dim] + wx[1] * r[(size_t)ix[1] * dim] +
                                wx[2] * r[(size_t)ix[2] * dim] + wx[3] * r[(size_t)ix[3] * dim];
                    acc += wy[j] * row;
                }
                o[d] = acc;
            }
        }
    }
    return 0;
}

/* ---- state -------------------------------------------------------------------------------- */

int vit_state_new(vit_state **out, const vit_model *m, int grid_h, int grid_w)
{
    return vit_state_new_threads(out, m, grid_h, grid_w, 0);
}

/* Floats of attention scratch per thread: the (ATT_ROWS, T) score block, or the fused kernel's. */
static size_t vit_scores_floats(size_t T)
{
    size_t a = ATT_ROWS * T, b = kc_attn_work_floats((int)T);
    return a > b ? a : b;
}

/* RoPE tables (DINOv3), computed as its code does in float32: patch (r, c) at y = 2 (r + 0.5) / gh - 1,
 * x = 2 (c + 0.5) / gw - 1 (each axis normalised on its own); angle d = 2 pi y / period[d] for the
 * first head_dim / 4 entries, 2 pi x / period[d - head_dim / 4] for the next; the second half of the
 * head repeats the first, so (G, head_dim / 2) of each table suffice. */
static void rope_tables(const vit_model *m, vit_state *s)
{
    const int half = m->head_dim / 2, np = m->n_periods, gh = s->grid_h, gw = s->grid_w;
    const float two_pi = (float)(2 * M_PI);
    s->rope_cos = kc_malloc((size_t)gh * gw * half * sizeof(float));
    s->rope_sin = kc_malloc((size_t)gh * gw * half * sizeof(float));
    for (int r = 0; r < gh; r++)
        for (int c = 0; c < gw; c++) {
            const float y = 2.0f * (((float)r + 0.5f) / (float)gh) - 1.0f;
            const float x = 2.0f * (((float)c + 0.5f) / (float)gw) - 1.0f;
            float *co = s->rope_cos + ((size_t)r * gw + c) * half, *si = s->rope_sin + ((size_t)r * gw + c) * half;
            for (int d = 0; d < half; d++) {
                const float v = (two_pi * (d < np ? y : x)) / m->rope_periods[d < np ? d : d - np];
                co[d] = cosf(v);
                si[d] = sinf(v);
            }
        }
}

int vit_state_new_threads(vit_state **out, const vit_model *m, int grid_h, int grid_w, int threads)
{
    *out = NULL;
    if (grid_h < 1 || grid_w < 1 || (int64_t)grid_h * grid_w > 1000000)
        return kc_fail("vit: bad patch grid %dx%d", grid_h, grid_w);
    vit_state *s = kc_calloc(1, sizeof *s);
    const size_t G = (size_t)grid_h * grid_w, T = G + (size_t)m->prefix, D = (size_t)m->dim;
    s->grid_h = grid_h;
    s->grid_w = grid_w;
    s->n_tok = (int)T;
    s->n_threads = threads > 0 ? threads : omp_get_max_threads();
    if (s->n_threads < 1) s->n_threads = 1;
    s->pos = m->pos ? kc_malloc(G * D * sizeof(float)) : NULL;
    s->patches = kc_malloc(G * 3 * (size_t)m->patch * m->patch * sizeof(float));
    s->x = kc_malloc(T * D * sizeof(float));
    s->xn = kc_malloc(T * D * sizeof(float));
    s->qkv = kc_malloc(T * 3 * D * sizeof(float));
    s->att = kc_malloc(T * D * sizeof(float));
    s->hidden = kc_malloc(T * (size_t)m->mlp * sizeof(float));
    s->scores = kc_malloc((size_t)s->n_threads * vit_scores_floats(T) * sizeof(float));
    s->cls_q = m->cls ? kc_malloc((D + T) * sizeof(float)) : NULL;
    if (m->pos && vit_resample_pos_mode(m->pos, m->pos_n, m->dim, grid_h, grid_w, m->posembed, s->pos) < 0) {
        vit_state_free(s);
        return -1;
    }
    if (m->n_periods) rope_tables(m, s);
    *out = s;
    return 0;
}

void vit_state_free(vit_state *s)
{
    if (!s) return;
    free(s->pos);
    free(s->rope_cos);
    free(s->rope_sin);
    free(s->patches);
    free(s->x);
    free(s->xn);
    free(s->qkv);
    free(s->att);
    free(s->hidden);
    free(s->scores);
    free(s->cls_q);
    free(s);
}

/* ---- kernels ------------------------------------------------------------------------------ */

/* A linear layer on its packed weights with fused post-ops (1), or 0: the caller computes it with
 * gemm_nt and the row kernels below (no packed layer, or no primitive for this row count). */
#define LINEAR(L, rows, A, C) ((L) && kc_linear_run((L), (rows), (A), (C)) == 0)

/* C (M, N) = A (M, K) B^T + beta C, with B (N, K): every product of the forward. */
static void gemm_nt(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                    int ldb, float beta, float *C, int ldc)
{
    kc_gemm_nt(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

/* Row-wise kernels.  Each body is compiled twice: for the build's baseline (x86-64-v3: AVX2, FMA)
 * and for AVX-512 (F, VL, BW, DQ, 512-bit vectors); vit_init picks one per process from
 * kc_simd_level() (CPU feature bits, and KC_ISA when set), so one binary runs everywhere. */
#if defined(__clang__) /* (clang, the fuzz build: no prefer-vector-width in a target attribute) */
#define KC_TARGET_512 __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq")))
#else
#define KC_TARGET_512 __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,prefer-vector-width=512")))
#endif
#define KC_BODY static inline __attribute__((always_inline))

#define DISPATCH(name, params, args)                                                           \
    static void name##_base params { name##_body args; }                                       \
    KC_TARGET_512 static void name##_512 params { name##_body args; }                          \
    static void name params                                                                    \
    {                                                                                          \
        if (g_simd512) name##_512 args;                                                        \
        else name##_base args;                                                                 \
    }

/* y (rows, D) = LayerNorm(x) * g + b, rows with stride ld (x) and ldy (y). */
KC_BODY void layer_norm_body(const float *x, int ldx, float *y, int ldy, int rows, int D,
                             const float *g, const float *b, float eps)
{
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * ldx;
        float *yr = y + (size_t)r * ldy;
        float sum = 0;
#pragma omp simd reduction(+ : sum)
        for (int i = 0; i < D; i++) sum += xr[i];
        float mean = sum / (float)D;
        float var = 0;
#pragma omp simd reduction(+ : var)
        for (int i = 0; i < D; i++) {
            float d = xr[i] - mean;
            var += d * d;
        }
        float rstd = 1.0f / sqrtf(var / (float)D + eps);
#pragma omp simd
        for (int i = 0; i < D; i++) yr[i] = (xr[i] - mean) * rstd * g[i] + b[i];
    }
}
DISPATCH(layer_norm,
         (const float *x, int ldx, float *y, int ldy, int rows, int D, const float *g,
          const float *b, float eps),
         (x, ldx, y, ldy, rows, D, g, b, eps))

KC_BODY void add_bias_body(float *c, int ldc, int rows, int N, const float *bias)
{
    for (int r = 0; r < rows; r++) {
        float *cr = c + (size_t)r * ldc;
#pragma omp simd
        for (int i = 0; i < N; i++) cr[i] += bias[i];
    }
}
DISPATCH(add_bias, (float *c, int ldc, int rows, int N, const float *bias), (c, ldc, rows, N, bias))

KC_BODY void bias_gelu_body(float *c, int rows, int N, const float *bias)
{
    for (int r = 0; r < rows; r++) {
        float *cr = c + (size_t)r * N;
#pragma omp simd
        for (int i = 0; i < N; i++) cr[i] = kc_gelu(cr[i] + bias[i]);
    }
}
DISPATCH(bias_gelu, (float *c, int rows, int N, const float *bias), (c, rows, N, bias))

/* s (rows, n) <- exp(s - rowmax), inv_sum[r] = 1 / sum of row r: the softmax without its last
 * pass; the caller scales the (rows, head_dim) product P V instead of the (rows, n) scores. */
KC_BODY void softmax_exp_body(float *s, int rows, int n, float *inv_sum)
{
    for (int r = 0; r < rows; r++) {
        float *sr = s + (size_t)r * n;
        float mx = sr[0];
#pragma omp simd reduction(max : mx)
        for (int i = 0; i < n; i++) mx = sr[i] > mx ? sr[i] : mx;
        float sum = 0;
#pragma omp simd reduction(+ : sum)
        for (int i = 0; i < n; i++) {
            float e = kc_expf(sr[i] - mx);
            sr[i] = e;
            sum += e;
        }
        inv_sum[r] = 1.0f / sum;
    }
}
DISPATCH(softmax_exp, (float *s, int rows, int n, float *inv_sum), (s, rows, n, inv_sum))

/* c (rows, N) with stride ldc: row r *= scale[r] */
KC_BODY void scale_rows_body(float *c, int ldc, int rows, int N, const float *scale)
{
    for (int r = 0; r < rows; r++) {
        float *cr = c + (size_t)r * ldc;
        const float f = scale[r];
#pragma omp simd
        for (int i = 0; i < N; i++) cr[i] *= f;
    }
}
DISPATCH(scale_rows, (float *c, int ldc, int rows, int N, const float *scale), (c, ldc, rows, N, scale))

/* Rows r0..r1 of the token sequence [class, registers, patches]: the class token plus its position
 * row (none under RoPE), the registers as stored (no position), the patches embedded. */
static void embed_rows(const vit_model *m, vit_state *s, const float *chw, int r0, int r1)
{
    const int D = m->dim, p = m->patch, gw = s->grid_w, W = gw * p, H = s->grid_h * p, P = m->prefix;
    const int K = 3 * p * p;
    for (; r0 < r1 && r0 < P; r0++) {
        float *x = s->x + (size_t)r0 * D;
        if (m->cls && r0 == 0)
            for (int i = 0; i < D; i++) x[i] = m->cls_token[i] + (m->pos_cls ? m->pos_cls[i] : 0.0f);
        else
            memcpy(x, m->reg_tokens + (size_t)(r0 - m->cls) * D, (size_t)D * sizeof(float));
    }
    int g0 = r0 - P, g1 = r1 - P;
    if (g1 <= g0) return;
    for (int g = g0; g < g1; g++) {
        int gy = g / gw, gx = g % gw;
        float *row = s->patches + (size_t)g * K;
        for (int c = 0; c < 3; c++)
            for (int ky = 0; ky < p; ky++)
                memcpy(row + (c * p + ky) * p,
                       chw + ((size_t)c * H + (size_t)gy * p + ky) * W + (size_t)gx * p,
                       (size_t)p * sizeof(float));
    }
    float *xr = s->x + (size_t)r0 * D;
    if (m->lin_pe && kc_linear_run(m->lin_pe, g1 - g0, s->patches + (size_t)g0 * K, xr) == 0) {
        if (s->pos) /* the bias is in already */
            for (int g = g0; g < g1; g++) {
                float *o = s->x + (size_t)(g + P) * D;
                const float *pe = s->pos + (size_t)g * D;
#pragma omp simd
                for (int i = 0; i < D; i++) o[i] += pe[i];
            }
        return;
    }
    gemm_nt(g1 - g0, D, K, 1.0f, s->patches + (size_t)g0 * K, K, m->pe_w, K, 0.0f, xr, D);
    for (int g = g0; g < g1; g++) {
        float *o = s->x + (size_t)(g + P) * D;
        const float *pe = s->pos ? s->pos + (size_t)g * D : NULL;
        if (pe) {
#pragma omp simd
            for (int i = 0; i < D; i++) o[i] += m->pe_b[i] + pe[i];
        } else {
#pragma omp simd
            for (int i = 0; i < D; i++) o[i] += m->pe_b[i];
        }
    }
}

/* RoPE (DINOv3) on rows r0..r1 of qkv, patch rows only: per head, the rotation of each pair
 * (x[d], x[d + hd/2]) by the angle of d:  x[d] cos - x[d + hd/2] sin,  x[d + hd/2] cos + x[d] sin.
 * q too when with_q (a full block); k always.  Runs on this thread's rows right after their qkv
 * product, while they are in cache. */
static void rope_rows(const vit_model *m, const vit_state *s, int with_q, int r0, int r1)
{
    const int D = m->dim, hd = m->head_dim, half = hd / 2, P = m->prefix;
    for (int r = r0 > P ? r0 : P; r < r1; r++) {
        const float *co = s->rope_cos + (size_t)(r - P) * half, *si = s->rope_sin + (size_t)(r - P) * half;
        for (int part = with_q ? 0 : 1; part < 2; part++) {
            float *base = s->qkv + (size_t)r * 3 * D + (size_t)part * D;
            for (int h = 0; h < m->heads; h++) {
                float *x = base + (size_t)h * hd;
#pragma omp simd
                for (int d = 0; d < half; d++) {
                    const float a = x[d], b = x[d + half];
                    x[d] = a * co[d] - b * si[d];
                    x[d + half] = b * co[d] + a * si[d];
                }
            }
        }
    }
}

/* The keys out of qkv: the k rows of the patch tokens r0..r1 (heads concatenated). */
static void copy_keys(const vit_model *m, const vit_state *s, float *keys, int r0, int r1)
{
    const int D = m->dim, P = m->prefix;
    for (int r = r0 > P ? r0 : P; r < r1; r++)
        memcpy(keys + (size_t)(r - P) * D, s->qkv + (size_t)r * 3 * D + D, (size_t)D * sizeof(float));
}

/* Attention of head h for query rows q0..q1 into s->att (at most ATT_ROWS rows; at most
 * KC_ATTN_ROWS when m->attn_fused). */
static void attention_item(const vit_model *m, vit_state *s, float *scores, int h, int q0, int q1)
{
    const int D = m->dim, hd = m->head_dim, T = s->n_tok, ld = 3 * D;
    const float *q = s->qkv + (size_t)q0 * ld + (size_t)h * hd;
    const float *k = s->qkv + D + (size_t)h * hd;
    const float *v = s->qkv + 2 * D + (size_t)h * hd;
    int rows = q1 - q0;
    float inv_sum[ATT_ROWS];
    float *out = s->att + (size_t)q0 * D + (size_t)h * hd;
    if (m->attn_fused) {
        kc_attn_rows(rows, T, 1.0f / sqrtf((float)hd), q, k, v, ld, out, D, scores);
        return;
    }
    gemm_nt(rows, T, hd, 1.0f / sqrtf((float)hd), q, ld, k, ld, 0.0f, scores, T);
    softmax_exp(scores, rows, T, inv_sum);
    kc_gemm_nn(rows, hd, T, 1.0f, scores, T, v, ld, 0.0f, out, D);
    scale_rows(out, D, rows, hd, inv_sum);
}

/* The class token's attention in the last block B, per head, over the patch tokens:
 * q = LN1(x_cls) W_qkv[0:D]^T + b_qkv[0:D] (s->xn row 0, never rotated), scores against the k rows
 * already in s->qkv (after RoPE under DINOv3), scaled by hd^-0.5, softmax over all T tokens, the
 * class and register columns dropped after it (not renormalised).  attn: (heads, G).  Serial: about D (D + T) multiply-adds, under 1 % of a forward. */
static void class_attention(const vit_model *m, vit_state *s, const vit_block *B, float *attn)
{
    const int D = m->dim, hd = m->head_dim, T = s->n_tok, ld = 3 * D;
    float *q = s->cls_q, *sc = s->cls_q + D;
    const float scale = 1.0f / sqrtf((float)hd);
    cblas_sgemv(CblasRowMajor, CblasNoTrans, D, D, 1.0f, B->qkv_w, D, s->xn, 1, 0.0f, q, 1);
    for (int i = 0; i < D; i++) q[i] += B->qkv_b[i];
    for (int h = 0; h < m->heads; h++) {
        const float *qh = q + (size_t)h * hd;
        float mx = -INFINITY;
        for (int t = 0; t < T; t++) {
            const float *kt = s->qkv + (size_t)t * ld + D + (size_t)h * hd;
            float dot = 0;
#pragma omp simd reduction(+ : dot)
            for (int i = 0; i < hd; i++) dot += qh[i] * kt[i];
            sc[t] = dot * scale;
            if (sc[t] > mx) mx = sc[t];
        }
        double sum = 0;
        for (int t = 0; t < T; t++) {
            sc[t] = expf(sc[t] - mx);
            sum += sc[t];
        }
        const float inv = (float)(1.0 / sum);
        const int P = m->prefix;
        float *row = attn + (size_t)h * (T - P);
        for (int t = P; t < T; t++) row[t - P] = sc[t] * inv;
    }
}

/* The other way to share two cores, kept for tests/bench_vit.sh (KC_VIT_THREADING=openblas):
 * every product over all rows on OpenBLAS's own thread pool, OpenMP only for the row-wise steps
 * and the attention items (OpenBLAS single-threaded inside those).  Same results. */
#define ROWS_PARALLEL(nt, T, body)                                                               \
    _Pragma("omp parallel for num_threads(nt) schedule(static)")                               \
    for (int c_ = 0; c_ < (nt); c_++) {                                                         \
        const int r0 = (int)((int64_t)(T) * c_ / (nt)), r1 = (int)((int64_t)(T) * (c_ + 1) / (nt)); \
        body                                                                                     \
    }

static int forward_blas_pool(const vit_model *m, vit_state *s, const float *chw, float *keys,
                             float *tokens, float *attn)
{
    const int D = m->dim, M = m->mlp, T = s->n_tok, P = m->prefix, nt = s->n_threads;
    const float eps = (float)m->ln_eps;
    const int att_rows = m->attn_fused ? KC_ATTN_ROWS : ATT_ROWS;
    const int per_head = (T + att_rows - 1) / att_rows, n_items = m->heads * per_head;
    const int full_blocks = tokens ? m->depth : m->depth - 1;
    openblas_set_num_threads(nt);
    embed_rows(m, s, chw, 0, T);
    for (int b = 0; b < m->depth; b++) {
        const vit_block *B = &m->blocks[b];
        const int full = b < full_blocks;
        ROWS_PARALLEL(nt, T, layer_norm(s->x + (size_t)r0 * D, D, s->xn + (size_t)r0 * D, D,
                                        r1 - r0, D, B->ln1_w, B->ln1_b, eps);)
        if (full) {
            gemm_nt(T, 3 * D, D, 1.0f, s->xn, D, B->qkv_w, D, 0.0f, s->qkv, 3 * D);
            add_bias(s->qkv, 3 * D, T, 3 * D, B->qkv_b);
        } else {
            gemm_nt(T, D, D, 1.0f, s->xn, D, B->qkv_w + (size_t)D * D, D, 0.0f, s->qkv + D, 3 * D);
            add_bias(s->qkv + D, 3 * D, T, D, B->qkv_b + D);
        }
        if (keys && b == m->depth - 1 && m->keys_pre_rope) copy_keys(m, s, keys, 0, T);
        if (m->n_periods) {
            ROWS_PARALLEL(nt, T, rope_rows(m, s, full, r0, r1);)
        }
        if (keys && b == m->depth - 1 && !m->keys_pre_rope) copy_keys(m, s, keys, 0, T);
        if (attn && b == m->depth - 1) class_attention(m, s, B, attn);
        if (!full) break;
        openblas_set_num_threads(1);
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
        for (int it = 0; it < n_items; it++) {
            int h = it % m->heads, q0 = it / m->heads * att_rows;
            int q1 = q0 + att_rows < T ? q0 + att_rows : T;
            attention_item(m, s, s->scores + (size_t)omp_get_thread_num() * vit_scores_floats(T), h, q0, q1);
        }
        openblas_set_num_threads(nt);
        gemm_nt(T, D, D, 1.0f, s->att, D, B->proj_w, D, 1.0f, s->x, D);
        ROWS_PARALLEL(nt, T, add_bias(s->x + (size_t)r0 * D, D, r1 - r0, D, B->proj_b);
                      layer_norm(s->x + (size_t)r0 * D, D, s->xn + (size_t)r0 * D, D, r1 - r0, D,
                                 B->ln2_w, B->ln2_b, eps);)
        gemm_nt(T, M, D, 1.0f, s->xn, D, B->fc1_w, D, 0.0f, s->hidden, M);
        ROWS_PARALLEL(nt, T, bias_gelu(s->hidden + (size_t)r0 * M, r1 - r0, M, B->fc1_b);)
        gemm_nt(T, D, M, 1.0f, s->hidden, M, B->fc2_w, M, 1.0f, s->x, D);
        add_bias(s->x, D, T, D, B->fc2_b);
    }
    if (tokens) {
        if (m->final_norm)
            layer_norm(s->x + (size_t)P * D, D, tokens, D, T - P, D, m->norm_w, m->norm_b, eps);
        else
            memcpy(tokens, s->x + (size_t)P * D, (size_t)(T - P) * D * sizeof(float));
    }
    openblas_set_num_threads(1);
    return 0;
}

int vit_forward(const vit_model *m, vit_state *s, const float *chw, int grid_h, int grid_w,
                float *keys, float *tokens)
{
    const vit_outputs out = {keys, tokens, NULL};
    return vit_forward_ex(m, s, chw, grid_h, grid_w, &out);
}

/* Block B's steps before attention, on rows r0..r1: LN1, then qkv (full) or the keys alone
 * (the last block when only keys are wanted), and the keys copied out on the last block. */
static void rows_before_attention(const vit_model *m, vit_state *s, const vit_block *B, int full,
                                  int last, float *keys, int r0, int r1)
{
    const int D = m->dim, rows = r1 - r0;
    const float eps = (float)m->ln_eps;
    float *xr = s->x + (size_t)r0 * D, *xnr = s->xn + (size_t)r0 * D;
    float *qkvr = s->qkv + (size_t)r0 * 3 * D;
    if (rows <= 0) return;
    layer_norm(xr, D, xnr, D, rows, D, B->ln1_w, B->ln1_b, eps);
    if (full) {
        if (!LINEAR(B->lin_qkv, rows, xnr, qkvr)) {
            gemm_nt(rows, 3 * D, D, 1.0f, xnr, D, B->qkv_w, D, 0.0f, qkvr, 3 * D);
            add_bias(qkvr, 3 * D, rows, 3 * D, B->qkv_b);
        }
    } else if (LINEAR(B->lin_keys, rows, xnr, s->att + (size_t)r0 * D)) { /* keys only */
        for (int r = 0; r < rows; r++) /* (the matmul takes a dense C: via s->att) */
            memcpy(qkvr + (size_t)r * 3 * D + D, s->att + (size_t)(r0 + r) * D, (size_t)D * sizeof(float));
    } else { /* keys only: the k rows of qkv */
        gemm_nt(rows, D, D, 1.0f, xnr, D, B->qkv_w + (size_t)D * D, D, 0.0f, qkvr + D, 3 * D);
        add_bias(qkvr + D, 3 * D, rows, D, B->qkv_b + D);
    }
    if (keys && last && m->keys_pre_rope) copy_keys(m, s, keys, r0, r1);
    if (m->n_periods) rope_rows(m, s, full, r0, r1);
    if (keys && last && !m->keys_pre_rope) copy_keys(m, s, keys, r0, r1);
}

/* Block B's steps after attention, on rows r0..r1: x += proj(att); x += fc2(GELU(fc1(LN2(x)))). */
static void rows_after_attention(const vit_model *m, vit_state *s, const vit_block *B, int r0, int r1)
{
    const int D = m->dim, M = m->mlp, rows = r1 - r0;
    const float eps = (float)m->ln_eps;
    float *xr = s->x + (size_t)r0 * D, *xnr = s->xn + (size_t)r0 * D;
    float *attr = s->att + (size_t)r0 * D, *hid = s->hidden + (size_t)r0 * M;
    if (rows <= 0) return;
    if (!LINEAR(B->lin_proj, rows, attr, xr)) {
        gemm_nt(rows, D, D, 1.0f, attr, D, B->proj_w, D, 1.0f, xr, D);
        add_bias(xr, D, rows, D, B->proj_b);
    }
    layer_norm(xr, D, xnr, D, rows, D, B->ln2_w, B->ln2_b, eps);
    if (!LINEAR(B->lin_fc1, rows, xnr, hid)) {
        gemm_nt(rows, M, D, 1.0f, xnr, D, B->fc1_w, D, 0.0f, hid, M);
        bias_gelu(hid, rows, M, B->fc1_b);
    }
    if (!LINEAR(B->lin_fc2, rows, hid, xr)) {
        gemm_nt(rows, D, M, 1.0f, hid, M, B->fc2_w, M, 1.0f, xr, D);
        add_bias(xr, D, rows, D, B->fc2_b);
    }
}

int vit_forward_ex(const vit_model *m, vit_state *s, const float *chw, int grid_h, int grid_w,
                   const vit_outputs *out)
{
    float *keys = out->keys, *tokens = out->tokens, *attn = out->attn;
    if (grid_h != s->grid_h || grid_w != s->grid_w)
        return kc_fail("vit: state made for a %dx%d grid used for %dx%d", s->grid_h, s->grid_w,
                       grid_h, grid_w);
    if (attn && !m->cls)
        return kc_fail("vit: class attention needs a class token, and this network runs none (%s)",
                       m->kind);
    if (!keys && !tokens && !attn) return 0;
    if (m->blas_pool) return forward_blas_pool(m, s, chw, keys, tokens, attn);
    const int D = m->dim, T = s->n_tok, P = m->prefix, depth = m->depth;
    const float eps = (float)m->ln_eps;
    const int att_rows = m->attn_fused ? KC_ATTN_ROWS : ATT_ROWS;
    const int n_items_per_head = (T + att_rows - 1) / att_rows;
    const int n_items = m->heads * n_items_per_head;
    const int full_blocks = tokens ? depth : depth - 1;

#pragma omp parallel num_threads(s->n_threads)
    {
        const int nt = omp_get_num_threads(), tid = omp_get_thread_num();
        const int r0 = (int)((int64_t)T * tid / nt), r1 = (int)((int64_t)T * (tid + 1) / nt);
        float *scores = s->scores + (size_t)tid * vit_scores_floats(T);

        embed_rows(m, s, chw, r0, r1);
        for (int b = 0; b < depth; b++) {
            const vit_block *B = &m->blocks[b];
            const int full = b < full_blocks, last = b == depth - 1;
            rows_before_attention(m, s, B, full, last, keys, r0, r1);
            if (attn && last) {
#pragma omp barrier
#pragma omp single
                class_attention(m, s, B, attn);
            }
            if (!full) break;
#pragma omp barrier
#pragma omp for schedule(dynamic, 1)
            for (int it = 0; it < n_items; it++) {
                /* head-major: consecutive items share the head's k and v rows (in cache) */
                int h = it / n_items_per_head, blk = it % n_items_per_head;
                int q0 = blk * att_rows, q1 = q0 + att_rows < T ? q0 + att_rows : T;
                attention_item(m, s, scores, h, q0, q1);
            }
            /* (implicit barrier) the rest is local to this thread's rows */
            rows_after_attention(m, s, B, r0, r1);
        }
        if (tokens) {
            int a = r0 > P ? r0 : P;
            if (r1 > a) {
                float *dst = tokens + (size_t)(a - P) * D;
                const float *src = s->x + (size_t)a * D;
                if (m->final_norm)
                    layer_norm(src, D, dst, D, r1 - a, D, m->norm_w, m->norm_b, eps);
                else
                    memcpy(dst, src, (size_t)(r1 - a) * D * sizeof(float));
            }
        }
    }
    return 0;
}
