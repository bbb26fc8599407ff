/* pipeline/weights/weights.h — weights files as a map of named float32 tensors.  (Owner: weights module.)
 *
 * Reads PyTorch .pth (zip + pickle, no code executed; see pth.h) and safetensors files.
 * After loading, names are canonical DINO/timm backbone names, the contract with the forward
 * (pipeline/model/vit.c):
 *   cls_token (1,1,D)  pos_embed (1,1+n*n,D)  register_tokens (1,R,D)  rope_embed.periods (head_dim/4)
 *   patch_embed.proj.{weight,bias}  norm.{weight,bias}
 *   blocks.i.{norm1,attn.qkv,attn.proj,norm2,mlp.fc1,mlp.fc2}.{weight,bias}
 *   blocks.i.ls1.gamma, blocks.i.ls2.gamma (D)  blocks.i.attn.qkv.bias_mask (3D)
 * Nested checkpoints are unwrapped (checkpoint_key, else the first of teacher / student / model /
 * state_dict holding tensors), prefixes "module." and "backbone." stripped, DINOv2's chunked
 * blocks.C.i.* renamed blocks.i.*, DINOv3's storage_tokens renamed register_tokens, Hugging Face
 * names mapped (below), float16 / bfloat16 converted to float32.  Tensors outside the backbone
 * (head.*, dino_head.*, ibot_head.*, mask_token, projections, optimizer state) are skipped and
 * listed; an unknown name inside the backbone's namespace is an error naming it, and so is a
 * gated (SwiGLU) MLP.  A file with no backbone name at all is refused.
 *
 * kc_weights.family says where the names came from:
 *   "dino"          DINO/timm names without LayerScale, registers or DINOv3 buffers
 *                   (DINO, SelfPatch, timm / supervised ViTs)
 *   "dinov2"        DINO names with LayerScale (blocks.i.ls1/ls2.gamma), no registers
 *                   (dinov2_vits14_pretrain.pth, timm's vit_*_patch14_dinov2; timm's other
 *                   LayerScale ViTs, DeiT III, read the same)
 *   "dinov2-reg"    the same plus register_tokens (dinov2_vits14_reg4_pretrain.pth)
 *   "dinov3"        storage_tokens, rope_embed.periods or attn.qkv.bias_mask (dinov3_vits16_pretrain_*.pth)
 *   "hf-vit"        Hugging Face ViTModel (layernorm_before/after, intermediate.dense, output.dense)
 *   "hf-dinov2"     Hugging Face Dinov2Model (norm1/2, mlp.fc1/2, layer_scale1/2.lambda1)
 *   "hf-dinov2-reg" Hugging Face Dinov2WithRegistersModel (+ embeddings.register_tokens)
 *   "hf-dinov3"     Hugging Face DINOv3ViTModel (layer.i.*, attention.{q,k,v,o}_proj, mlp.up/down_proj)
 * Hugging Face names, also under a model prefix (vit., dinov2., dinov2_with_registers., dinov3_vit.,
 * model.): embeddings.cls_token / position_embeddings / register_tokens -> cls_token / pos_embed /
 * register_tokens; embeddings.patch_embeddings(.projection).* -> patch_embed.proj.*; layernorm.* and
 * DINOv3's norm.* -> norm.*; query/key/value (q_proj/k_proj/v_proj) -> the q, k, v rows of
 * blocks.i.attn.qkv, where DINOv3ViTModel's absent k_proj.bias gives zero rows; layer_scaleN.lambda1
 * -> blocks.i.lsN.gamma.  DINOv3ViTModel stores no RoPE periods: rope_embed.periods is computed as
 * that model computes its frequencies (weights.c, add_hf_periods) and periods_from_config is set.
 *
 *     kc_weights w;
 *     if (weights_load(&w, "dinov2_vits14_reg4_pretrain.pth", NULL) < 0) kc_die();
 *     const kc_tensor *t = weights_find(&w, "register_tokens");   // NULL when absent
 *     printf("%s\n", w.family);                                    // "dinov2-reg"
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
    char checkpoint_key[64]; /* the key of a nested .pth whose state dict was taken ("teacher",
                              * "student", "model", "state_dict" or the one asked for); "" when the
                              * tensors were at the top level, and for safetensors */
    char family[24];       /* "dino", "dinov2", "dinov2-reg", "dinov3", "hf-vit", "hf-dinov2",
                            * "hf-dinov2-reg" or "hf-dinov3" (see above) */
    int hf_names;          /* 1 when the file used Hugging Face names (family "hf-*") */
    int periods_from_config; /* 1 when rope_embed.periods was computed (hf-dinov3), not read */
    int n;
    kc_tensor *t;
    int n_skipped;
    char **skipped;        /* names of tensors outside the backbone that were ignored */
    /* From a Hugging Face config.json beside the weights, when present; 0 / 0.0 otherwise
     * (config_registers: -1).  num_register_tokens must match the file's register tokens. */
    int config_heads;
    double config_ln_eps;
    double config_rope_theta;
    int config_registers;
} kc_weights;

/* checkpoint_key may be NULL or "" (automatic); safetensors files are flat and ignore it.
 * config.json beside the file is read for every format (a bad one is an error naming it).
 * Tensors keep the file's order; HF qkv takes the place of its first part; computed periods come
 * last.  Returns 0, or -1 with "<path>: <problem>" (w is then empty). */
int weights_load(kc_weights *w, const char *path, const char *checkpoint_key);
const kc_tensor *weights_find(const kc_weights *w, const char *name);
void weights_free(kc_weights *w);
#endif
