/* pipeline/model/vit.h — the ViT forward, keys and tokens.  (Owner: model module.)
 *
 * Architecture from the tensors (patch size, width, depth, MLP width, class token, final norm,
 * trained position grid n x n, register tokens, LayerScale, RoPE periods); heads = dim / 64 unless
 * opts.heads or config.json says otherwise.  Four families follow from the tensors:
 *   DINO / timm / SelfPatch   no LayerScale, no registers; LN eps 1e-6 (HF ViTModel: config or 1e-12)
 *   DINOv2                    + LayerScale (blocks.i.ls1.gamma, ls2.gamma); eps 1e-6
 *   DINOv2 with registers     + register_tokens (R, after the class token, no position row)
 *   DINOv3                    + R storage tokens, RoPE (rope_embed.periods) instead of pos_embed,
 *                             masked key bias (qkv.bias * bias_mask); eps 1e-5
 * Token sequence: [class, R registers, G patches], T = 1 + R + G; the registers take part in every
 * softmax and never leave the forward (no output has a row for them).  LayerScale is folded into
 * proj and fc2 at load.  RoPE (DINOv3) rotates q and k of the patch rows per head after the qkv
 * product: pairs (d, d + hd/2), angle 2 pi y / period[d] (d < hd/4) or 2 pi x / period[d - hd/4],
 * y = 2 (row + 0.5) / grid_h - 1, x = 2 (col + 0.5) / grid_w - 1 (each axis on its own).
 * Keys: last block, LayerNorm-1 of its input times rows dim..2dim-1 of qkv.weight plus that bias
 * slice (masked: none under DINOv3), after RoPE (opts.keys_pre_rope: before), unscaled, patch rows
 * only; only the blocks before the last run in full.
 * Tokens: last block's output, after the final norm when present, patch rows only.
 * Class attention (attn): in the last block, per head h, the class token's attention weights
 *     a_h = softmax_over_all_T_tokens( q_cls,h k_t,h^T / sqrt(head_dim) ),  q_cls = LN1(x_cls)
 *     W_qkv[0:D]^T + b_qkv[0:D], k_t the key rows above; the class and register columns dropped
 *     after the softmax, not renormalised (DINO's visualize_attention.py: attentions[0, :, 0, 1:]);
 *     (heads, G) float32.  Only for networks that run a class token (vit_has_cls).
 * Position embeddings resampled to the working grid (VIT_POS_*): "dino" (bicubic a=-0.75, source
 * coordinate (dst + 0.5) * n / (g + 0.1) - 0.5: DINO and DINOv2), "hf" ((dst + 0.5) * n / g - 0.5),
 * or "antialias" (DINOv2 with registers: vit_resample_pos_mode); copied when the grid is n x n.
 *
 *     vit_model *m;  vit_opts o = VIT_OPTS_DEFAULT;
 *     if (vit_init(&m, &w, &o) < 0) kc_die();    // checks every tensor by name, shape, finiteness
 *     weights_free(&w);                           // the model holds its own copy of the weights
 *     vit_state *s;  vit_state_new(&s, m, 30, 30);
 *     vit_forward(m, s, chw, 30, 30, keys, NULL); // chw: (3, 480, 480); keys: (900, 384)
 *     vit_state_free(s); vit_free(m);
 *
 * Threads: vit_forward runs one OpenMP parallel region (omp_get_max_threads() at vit_state_new)
 * and calls the products (pipeline/model/gemm.h) single-threaded from inside it; vit_init sets the
 * pthread build of OpenBLAS to one thread for the whole process (its fallback path).  One state
 * per concurrent forward.  KC_VIT_THREADING=openblas (benchmarks only) runs each product over
 * all rows on the product library's own threads instead; KC_VIT_LINEAR=0 (benchmarks only) keeps
 * the linear layers off the matmul path (kc_linear, pipeline/model/gemm.h) for an A/B comparison.
 */
#ifndef KC_VIT_H
#define KC_VIT_H
#include "pipeline/weights/weights.h"

/* Position-embedding resampling (vit_resample_pos): the rule of the file's family by default. */
enum {
    VIT_POS_AUTO = 0,  /* DINO, timm, DINOv2: VIT_POS_DINO; DINOv2 with registers: VIT_POS_AA */
    VIT_POS_DINO = 1,  /* bicubic by scale factor (g + 0.1) / n (DINO, DINOv2 vits14) */
    VIT_POS_HF = 2,    /* bicubic to size g (Hugging Face ViTModel, Dinov2Model) */
    VIT_POS_AA = 3     /* bicubic to size g with antialias (DINOv2 with registers) */
};

typedef struct vit_opts {
    int heads;         /* 0: from config.json, else dim / 64 */
    double ln_eps;     /* 0: the family's (1e-6 DINO/timm/DINOv2, 1e-5 DINOv3, config.json / 1e-12 HF ViT) */
    int drop_cls;      /* run DINO weights as the converted network (no class token, no final norm) */
    int posembed;      /* VIT_POS_* */
    int keys_pre_rope; /* DINOv3: keys before the rotation (default: after, what attention uses) */
} vit_opts;
#define VIT_OPTS_DEFAULT ((vit_opts){0, 0.0, 0, VIT_POS_AUTO, 0})

typedef struct vit_model vit_model; /* opaque: read-only after init, shared by threads */
typedef struct vit_state vit_state; /* opaque: scratch for one forward at a time */

int vit_init(vit_model **m, const kc_weights *w, const vit_opts *o);
void vit_free(vit_model *m);
int vit_patch(const vit_model *m);
int vit_dim(const vit_model *m);
int vit_depth(const vit_model *m);
int vit_heads(const vit_model *m);
int vit_has_cls(const vit_model *m);   /* 1 when the forward runs a class token */
/* "vit dim=384 depth=12 heads=6 patch=16 mlp=1536 cls=1 final_norm=1 pos_grid=14x14", and for the
 * DINOv2 / DINOv3 families " registers=4 layerscale=1 rope_periods=16" after it */
const char *vit_describe(const vit_model *m);
double vit_ln_eps(const vit_model *m);
/* "dino", "selfpatch-like (no class token)", "dino converted (--drop-cls)", "dinov2 ...",
 * "dinov2 with registers ...", "dinov3 ..." */
const char *vit_forward_kind(const vit_model *m);
/* The position rule the forward runs: "dino", "hf", "antialias", or "rope" (DINOv3, none to resample). */
const char *vit_posembed_name(const vit_model *m);
int vit_registers(const vit_model *m); /* register / storage tokens (0 for DINO, DINOv2 plain) */
/* How attention runs: "fused avx512" or "fused avx2" (pipeline/model/attn.h), or "products"
 * (pipeline/model/gemm.h: head_dim other than 64, or KC_VIT_ATTN=products). */
const char *vit_attention_path(const vit_model *m);

/* Multiply-adds x 2 of one forward on a grid_h x grid_w grid (keys only, or keys and tokens). */
double vit_flops(const vit_model *m, int grid_h, int grid_w, int want_tokens);

/* Position embedding trained on n x n, resampled to grid_h x grid_w (bicubic, a = -0.75,
 * edge-clamped taps, per axis source coordinate (dst + 0.5) * n / (g + 0.1) - 0.5 for DINO, or
 * (dst + 0.5) * n / g - 0.5 for hf = 1); copied unchanged when the grid is n x n.
 * src: (n*n, dim) row-major; dst: (grid_h*grid_w, dim). */
int vit_resample_pos(const float *src, int n, int dim, int grid_h, int grid_w, int hf, float *dst);
/* The same by rule: VIT_POS_DINO, VIT_POS_HF, or VIT_POS_AA (PyTorch's bicubic with antialias to
 * size g, Keys' cubic a = -0.5 widened by n / g when reducing, taps cut at the edges and renormalised;
 * DINOv2 with registers resamples so, also when enlarging). */
int vit_resample_pos_mode(const float *src, int n, int dim, int grid_h, int grid_w, int mode, float *dst);

int vit_state_new(vit_state **s, const vit_model *m, int grid_h, int grid_w);
/* The same for a forward on `threads` threads (0: omp_get_max_threads()); threads = 1 for one
 * image per core (several states, each forward called from its own thread of a parallel region).
 * Where the linear layers run on the matmul path (kc_linear_available()) every output row is
 * computed the same way whatever the split, so one forward on 1 or n threads gives the same bytes. */
int vit_state_new_threads(vit_state **s, const vit_model *m, int grid_h, int grid_w, int threads);
void vit_state_free(vit_state *s);
/* chw: (3, grid_h*patch, grid_w*patch) normalised.  keys, tokens: (grid_h*grid_w, dim) or NULL. */
int vit_forward(const vit_model *m, vit_state *s, const float *chw, int grid_h, int grid_w,
                float *keys, float *tokens);
/* What one forward writes; any pointer may be NULL.  attn: (heads, grid_h*grid_w); asking for it
 * from a network without a class token is an error (nothing written). */
typedef struct vit_outputs {
    float *keys;   /* (G, dim) */
    float *tokens; /* (G, dim) */
    float *attn;   /* (heads, G) */
} vit_outputs;
int vit_forward_ex(const vit_model *m, vit_state *s, const float *chw, int grid_h, int grid_w,
                   const vit_outputs *out);

/* The no-learning colour extractor (--model color): per-patch colour and position statistics on
 * the same grid.  feats: (grid_h*grid_w, COLOR_DIM). */
#define COLOR_DIM 16
int color_features(const float *chw, int grid_h, int grid_w, int patch, float *feats);
#endif
