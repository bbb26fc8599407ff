/* pipeline/model/vit_init.h — a randomly initialised ViT with DINO's initialisation, byte-reproducible.
 *
 * The tensors and their initialisation are those of DINO's vision_transformer.py (vit_small /
 * vit_base, qkv_bias=True, num_classes=0, img_size 224), with DINO/timm names:
 *   linear weights (qkv, proj, fc1, fc2), pos_embed, cls_token:
 *       DINO's utils.trunc_normal_(t, std=.02), whose bounds default to a = -2, b = 2 in absolute
 *       units (+-100 std): a normal N(0, 0.02^2) clamped to [-2, 2] (the clamp never acts);
 *   linear biases 0; LayerNorm weight 1, bias 0 (norm1, norm2 of every block, the final norm);
 *   patch_embed.proj (Conv2d, left at PyTorch's default reset_parameters by DINO's _init_weights):
 *       weight kaiming_uniform_(a = sqrt 5) = U(-1/sqrt(fan_in), 1/sqrt(fan_in)), bias the same
 *       bound, fan_in = 3 * patch^2.
 *
 * Random numbers (so that every machine gives the same bytes): Philox4x32-10 (Salmon et al. 2011,
 * the Random123 reference; key = the 64-bit seed as two 32-bit words, low first; counter =
 * (element index, attempt, low and high 32 bits of FNV-1a-64 of the tensor name)).  From one
 * Philox block (w0, w1, w2, w3): a = (w1:w0) >> 12 and b = (w3:w2) >> 12 (52 bits each), and
 * x = (2a + 1 - 2^52) 2^-52, y = likewise, both exact doubles in (-1, 1).
 *   uniform element:  bound * x                                                (attempt 0)
 *   normal element:   Marsaglia's polar method on the first attempt with s = x^2 + y^2 < 1:
 *                     z = x * sqrt(-2 ln(s) / s)  (y is discarded, so elements are independent)
 * All in double with IEEE-754 +, -, *, /, sqrt (correctly rounded everywhere) and an own ln:
 * s = m 2^e (frexp, exact), m moved into [sqrt(1/2), sqrt 2), t = (m - 1)/(m + 1),
 * ln s = e ln2 + 2 t sum_{k=0..11} t^(2k) / (2k + 1) (Horner), so no libm function whose last bit
 * may differ between builds enters.  The value is rounded to float32 once, at the end.  The file
 * must be compiled without floating-point contraction (GCC in -std=c11 mode does not contract;
 * for clang the pragma below turns it off).  tests/ref/init_ref.py is an independent NumPy
 * implementation of the same recipe that reproduces the bytes.
 *
 * Architectures (vit_init_find): vit-s/16, vit-s/8 (dim 384, 6 heads), vit-b/16, vit-b/8 (dim 768,
 * 12 heads), all 12 blocks, MLP 4 x dim, position embedding for 224 pixels (14x14 or 28x28 + 1);
 * toy/16: dim 64, 2 blocks, MLP 256, 4x4 position grid (64 pixels), 1 head, for tests and demos.
 *
 *     const vit_arch *a = vit_init_find("vit-s/16");
 *     vit_init_net net;
 *     vit_init_build(&net, a, seed);          // net.t[i].name, .ndim, .shape, .data (sorted by name)
 *     vit_init_free(&net);
 */
#ifndef KC_VIT_INIT_H
#define KC_VIT_INIT_H
#include <stdint.h>

typedef struct vit_arch {
    const char *name; /* "vit-s/16" */
    int dim, depth, patch, mlp, grid;
} vit_arch;

typedef enum { INIT_TRUNC_NORMAL, INIT_UNIFORM, INIT_ZEROS, INIT_ONES } init_kind;

typedef struct init_tensor {
    char *name;
    int ndim;
    int64_t shape[4];
    int64_t numel;
    init_kind kind;
    double scale;      /* std for INIT_TRUNC_NORMAL, bound for INIT_UNIFORM */
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
