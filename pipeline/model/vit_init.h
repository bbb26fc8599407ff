/* pipeline/model/vit_init.h — randomly initialised ViTs with their family's official initialisation,
 * byte-reproducible: DINO's ViTs, DINOv2 ViT-S/14 (with and without registers) and DINOv3 ViT-S/16.
 *
 * Every tensor carries the official state-dict name of its family, so the file looks like a released
 * one.  Which value comes from where (each read in the official code; "trunc_normal_(std=.02)" is
 * torch.nn.init.trunc_normal_ or DINO's copy of it, bounds a = -2, b = 2 in absolute units, +-100 std,
 * so the clamp never acts; "normal_" is untruncated):
 *
 * DINO (facebookresearch/dino vision_transformer.py: vit_small / vit_base, qkv_bias=True,
 * num_classes=0, img_size 224): archs vit-s/16, vit-s/8, vit-b/16, vit-b/8, toy/16.
 *   linear weights (attn.qkv, attn.proj, mlp.fc1, mlp.fc2), pos_embed, cls_token:
 *       _init_weights / __init__: trunc_normal_(std=.02);
 *   linear biases 0; LayerNorm weight 1, bias 0 (norm1, norm2 of every block, the final norm);
 *   patch_embed.proj (Conv2d, left at PyTorch's default reset_parameters by DINO's _init_weights):
 *       weight kaiming_uniform_(a = sqrt 5) = U(-1/sqrt(fan_in), 1/sqrt(fan_in)), bias the same
 *       bound, fan_in = 3 * patch^2.
 *
 * DINOv2 (facebookresearch/dinov2: models/vision_transformer.py DinoVisionTransformer.__init__,
 * init_weights, init_weights_vit_timm; layers/layer_scale.py, layers/patch_embed.py, layers/block.py;
 * hub/backbones.py; models/__init__.py build_model; configs/ssl_default_config.yaml):
 * archs dinov2-s/14 (dinov2_vits14) and dinov2-reg-s/14 (dinov2_vits14_reg, 4 registers).
 *   pos_embed (1, 1 + 37*37, D)   init_weights: trunc_normal_(std=.02).  The grid is the released
 *                                 files' (hub img_size 518); training builds the model at
 *                                 crops.global_crops_size (224: 16x16), the init does not depend on it;
 *   cls_token (1, 1, D)           init_weights: normal_(std=1e-6);
 *   register_tokens (1, 4, D)     init_weights: normal_(std=1e-6) (dinov2-reg-s/14 only);
 *   mask_token (1, D)             __init__: torch.zeros, never re-initialised;
 *   linear weights / biases       init_weights_vit_timm (named_apply over every nn.Linear):
 *                                 trunc_normal_(std=.02) / zeros;
 *   LayerNorm (eps 1e-6)          not touched by init_weights: PyTorch's default, weight 1, bias 0;
 *   patch_embed.proj (D, 3, 14, 14) + bias   nn.Conv2d, not touched: PyTorch's default, U(+-1/sqrt(588));
 *   blocks.i.ls1.gamma, ls2.gamma LayerScale: init_values * ones(D), init_values = 1e-5: the TRAINING
 *                                 value (ssl_default_config.yaml student.layerscale 1.0e-05, passed by
 *                                 build_model as init_values).  The hub's _make_dinov2_model passes
 *                                 init_values=1.0, but only to build the module the released weights
 *                                 then overwrite; a random baseline is the network training starts
 *                                 from, so 1e-5.
 *
 * DINOv3 (facebookresearch/dinov3: models/vision_transformer.py DinoVisionTransformer.init_weights and
 * init_weights_vit; layers/{layer_scale,patch_embed,rope_position_encoding,attention}.py; hub/backbones.py
 * dinov3_vits16; train/ssl_meta_arch.py, whose init_weights calls the student backbone's
 * init_weights; configs/ssl_default_config.yaml): arch dinov3-s/16.  Its parameters are created
 * empty; init_weights() sets every one:
 *   rope_embed.periods (D_head/4 = 16)   RopePositionEmbedding._init_weights:
 *                                 base ** (2 * arange(16) / 32) = 100^(i/16), base 100 (hub and
 *                                 configs), in the RoPE dtype: fp32 as the hub builds it
 *                                 (pos_embed_rope_dtype "fp32"); the training configs say bf16, which
 *                                 would round them (1.3359375 for 1.3335215, ...); we write fp32.
 *                                 Computed as fp32(pow(100, i/16)) in double; tests/test_init.c
 *                                 compares the bits with PyTorch's;
 *   cls_token (1, 1, D)           init_weights: normal_(std=.02);
 *   storage_tokens (1, 4, D)      init_weights: normal_(std=.02) (configs: init_std_reg 0.02);
 *   mask_token (1, D)             init_weights: zeros_;
 *   linear weights / biases       init_weights_vit: trunc_normal_(std=.02) / zeros;
 *   blocks.i.attn.qkv.bias_mask (3D)   init_weights_vit (LinearKMaskedBias, mask_k_bias=True):
 *                                 fill 1, then rows [3D/3, 2*3D/3) (the k third) 0;
 *   LayerNorm (eps 1e-5)          reset_parameters: weight 1, bias 0;
 *   blocks.i.ls1.gamma, ls2.gamma LayerScale.reset_parameters: constant layerscale_init = 1e-5 (hub
 *                                 dinov3_vits16 and ssl_default_config student.layerscale agree);
 *   patch_embed.proj (D, 3, 16, 16) + bias   PatchEmbed.reset_parameters: U(+-sqrt(1/(3 * 16^2)))
 *                                 for weight and bias (= PyTorch's Conv2d default).
 *   No pos_embed (RoPE), no cls_norm (untie_cls_and_patch_norms False for vits16).
 *
 * Random numbers (so that every machine gives the same bytes): Philox4x32-10 (Salmon et al. 2011,
 * the Random123 reference; key = the 64-bit seed as two 32-bit words, low first; counter =
 * (element index, attempt, low and high 32 bits of FNV-1a-64 of the tensor name)).  The stream
 * depends on the seed and the tensor name only: the same seed gives tensors of the same name the
 * same draws in every architecture (vit-s/16 and dinov2-s/14 share their blocks' linear weights,
 * dinov2-s/14 and dinov2-reg-s/14 differ only by register_tokens); use other seeds for independent
 * networks.  From one Philox block (w0, w1, w2, w3): a = (w1:w0) >> 12 and b = (w3:w2) >> 12
 * (52 bits each), and x = (2a + 1 - 2^52) 2^-52, y = likewise, both exact doubles in (-1, 1).
 *   uniform element:  bound * x                                                (attempt 0)
 *   normal element:   Marsaglia's polar method on the first attempt with s = x^2 + y^2 < 1:
 *                     z = x * sqrt(-2 ln(s) / s)  (y is discarded, so elements are independent),
 *                     times std (clamped to [-2, 2] for trunc_normal_)
 * All in double with IEEE-754 +, -, *, /, sqrt (correctly rounded everywhere) and an own ln:
 * s = m 2^e (frexp, exact), m moved into [sqrt(1/2), sqrt 2), t = (m - 1)/(m + 1),
 * ln s = e ln2 + 2 t sum_{k=0..11} t^(2k) / (2k + 1) (Horner), so no libm function whose last bit
 * may differ between builds enters the random tensors (pow enters only the 16 RoPE periods, checked
 * bit for bit).  The value is rounded to float32 once, at the end.  The file must be compiled
 * without floating-point contraction (GCC in -std=c11 mode does not contract; for clang the pragma
 * in vit_init.c turns it off).  tests/ref/init_ref.py is an independent NumPy implementation of the
 * same recipe that reproduces the bytes.
 *
 * Architectures (vit_init_find): vit-s/16, vit-s/8 (dim 384, 6 heads), vit-b/16, vit-b/8 (dim 768,
 * 12 heads), all 12 blocks, MLP 4 x dim, position embedding for 224 pixels (14x14 or 28x28 + 1);
 * toy/16: dim 64, 2 blocks, MLP 256, 4x4 position grid (64 pixels), 1 head, for tests and demos;
 * dinov2-s/14, dinov2-reg-s/14, dinov3-s/16: dim 384, 12 blocks, 6 heads, MLP 1536, as above.
 *
 *     const vit_arch *a = vit_init_find("dinov3-s/16");
 *     vit_init_net net;
 *     vit_init_build(&net, a, seed);          // net.t[i].name, .ndim, .shape, .data (sorted by name)
 *     vit_init_free(&net);
 */
#ifndef KC_VIT_INIT_H
#define KC_VIT_INIT_H
#include <stdint.h>

typedef enum { VIT_FAMILY_DINO, VIT_FAMILY_DINOV2, VIT_FAMILY_DINOV3 } vit_family;

typedef struct vit_arch {
    const char *name; /* "vit-s/16" */
    vit_family family;
    int dim, depth, heads, patch, mlp;
    int grid;  /* side of pos_embed's patch grid; 0: no pos_embed (DINOv3's RoPE) */
    int n_reg; /* register_tokens (DINOv2) or storage_tokens (DINOv3); 0: none */
} vit_arch;

typedef enum {
    INIT_TRUNC_NORMAL, /* N(0, scale^2) clamped to [-2, 2] */
    INIT_UNIFORM,      /* U(-scale, scale) */
    INIT_ZEROS,
    INIT_ONES,
    INIT_NORMAL,       /* N(0, scale^2), untruncated */
    INIT_CONST,        /* every element = scale (LayerScale's gamma) */
    INIT_ROPE_PERIODS, /* element i = fp32(scale^(i / numel)): base^(2i / (D_head/2)), numel = D_head/4 */
    INIT_K_BIAS_MASK,  /* 1, except 0 on [numel/3, 2 numel/3) (the k third of qkv's bias) */
} init_kind;

typedef struct init_tensor {
    char *name;
    int ndim;
    int64_t shape[4];
    int64_t numel;
    init_kind kind;
    double scale;      /* std (normals), bound (uniform), value (const), base (RoPE periods) */
    float *data;       /* (numel) row-major */
} init_tensor;

typedef struct vit_init_net {
    const vit_arch *arch;
    uint64_t seed;
    int n;
    init_tensor *t;    /* sorted by name (strcmp) */
} vit_init_net;

/* NULL when the name is not a known architecture. */
const vit_arch *vit_init_find(const char *name);
/* "vit-s/16, vit-s/8, ..." (static). */
const char *vit_init_names(void);
/* One line naming the initialisation of arch's family, for a file's metadata (static). */
const char *vit_init_describe(const vit_arch *arch);
/* Builds every tensor of arch with seed (OpenMP over elements; the result does not depend on the
 * thread count). */
void vit_init_build(vit_init_net *net, const vit_arch *arch, uint64_t seed);
void vit_init_free(vit_init_net *net);
/* Fills t->data (allocated, t->numel floats) from t->name, kind and scale: what vit_init_build does
 * for each tensor. */
void vit_init_fill(init_tensor *t, uint64_t seed);

/* The pieces, exposed for tests. */
void philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);
uint64_t init_name_hash(const char *name); /* FNV-1a 64 */
double init_ln(double s);                  /* s > 0, finite */
/* Element i of a tensor named by hash h: a standard normal (polar method) or x in (-1, 1). */
double init_normal(uint64_t seed, uint64_t h, uint32_t i);
double init_uniform(uint64_t seed, uint64_t h, uint32_t i);
#endif
