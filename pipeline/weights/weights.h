/* pipeline/weights/weights.h — weights files as a map of named float32 tensors.  (Owner: weights module.)
 *
 * Reads PyTorch .pth (zip + pickle, no code executed; see pth.h) and safetensors files.
 * After loading, names are canonical DINO/timm backbone names (cls_token, pos_embed,
 * patch_embed.proj.weight, blocks.N.norm1.weight, blocks.N.attn.qkv.weight, ..., norm.weight):
 * nested checkpoints are unwrapped (checkpoint_key, else the first of teacher / student / model /
 * state_dict holding tensors), prefixes "module." and "backbone." stripped, Hugging Face ViTModel
 * names mapped (query/key/value concatenated into qkv), float16 / bfloat16 converted to float32.
 * Tensors outside the backbone (head.*, projection, optimizer state) are skipped and listed; an
 * unknown name inside the backbone's namespace is an error naming it.
 *
 *     kc_weights w;
 *     if (weights_load(&w, "dino_deitsmall16_pretrain.pth", NULL) < 0) kc_die();
 *     const kc_tensor *t = weights_find(&w, "pos_embed");    // NULL when absent
 *     weights_free(&w);
 */
#ifndef KC_WEIGHTS_H
#define KC_WEIGHTS_H
#include <stdint.h>

typedef struct kc_tensor {
    char *name;
    int ndim;
    int64_t shape[8];
    float *data; /* row-major, prod(shape) values */
} kc_tensor;

typedef struct kc_weights {
    char *path;
    char sha256[65];       /* of the file's bytes */
    char format[16];       /* "pth" or "safetensors" */
    int hf_names;          /* 1 when the file used Hugging Face ViTModel names */
    int n;
    kc_tensor *t;
    int n_skipped;
    char **skipped;        /* names of tensors outside the backbone that were ignored */
    /* From a Hugging Face config.json beside the weights, when present; 0 / 0.0 otherwise. */
    int config_heads;
    double config_ln_eps;
} kc_weights;

/* checkpoint_key may be NULL or "" (automatic); safetensors files are flat and ignore it.
 * config.json beside the file is read for every format (a bad one is an error naming it).
 * Tensors keep the file's order; HF qkv takes the place of its first part.  Returns 0, or -1 with
 * "<path>: <problem>" (w is then empty). */
int weights_load(kc_weights *w, const char *path, const char *checkpoint_key);
const kc_tensor *weights_find(const kc_weights *w, const char *name);
void weights_free(kc_weights *w);
#endif
