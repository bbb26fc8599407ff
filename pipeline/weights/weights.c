/* pipeline/weights/weights.c — weights files to canonical DINO/timm float32 tensors (see weights.h).
 *
 * Steps: map the file; sha256 of its bytes (on a thread, beside the rest); the format from its first
 * bytes (zip "PK\3\4" = .pth, 8-byte length + '{' = safetensors); for .pth the state dict inside the
 * checkpoint; then the names:
 *   1. "module." / "backbone." stripped from each name; a Hugging Face model prefix ("vit.",
 *      "dinov2.", "dinov2_with_registers.", "dinov3_vit.", "model.") stripped from every name of a
 *      file where it is followed by that model's own names;
 *   2. the file's scheme from all its names: Hugging Face DINOv3ViTModel if any name only it has
 *      appears (layer.N.*, embeddings.patch_embeddings.{weight,bias}, rope_embeddings.*), else
 *      Hugging Face ViTModel / Dinov2Model if any name starts embeddings. / encoder. / layernorm. /
 *      pooler., else DINO/timm (DINO, DINOv2, DINOv3 .pth names);
 *   3. each name classified under that scheme: backbone name -> kept under its canonical name
 *      (q, k, v -> qkv rows); gated MLP -> refused; other name inside the backbone namespace, or
 *      a name of another scheme -> error; anything else -> skipped and listed;
 *   4. DINOv2's chunked block names checked (one chunk per block, chunks non-decreasing);
 *   5. the family from what the names hold (weights.h), config.json beside the file (heads, LN
 *      eps, RoPE base, register count), the tensors assembled in file order, and for
 *      DINOv3ViTModel the RoPE periods computed as that model computes them (add_hf_periods).
 * Duplicate canonical names are errors.
 */
#include "pipeline/weights/weights.h"

#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pipeline/json.h"
#include "pipeline/kc.h"
#include "pipeline/weights/pth.h"
#include "pipeline/weights/safetensors.h"
#include "pipeline/sha256.h"

/* ---- names ------------------------------------------------------------------------------------ */

enum { NAME_SKIP = 0, NAME_KEEP = 1, NAME_UNKNOWN = -1, NAME_REFUSED = -2 };

/* The naming scheme of a file, decided from all its names before any is classified. */
enum { SCHEME_DINO, SCHEME_HF_VIT, SCHEME_HF_DINOV3 };

/* What a name says about the family (kc_weights.family). */
enum {
    MARK_LS = 1,      /* LayerScale: blocks.i.ls1.gamma (DINO names) */
    MARK_REG = 4,     /* register tokens */
    MARK_V3 = 8,      /* storage_tokens, rope_embed.periods, attn.qkv.bias_mask */
    MARK_HF_VIT = 16, /* ViTModel-only names: layernorm_before/after, intermediate.dense, output.dense */
    MARK_HF_V2 = 32,  /* Dinov2Model-only names: norm1/2, mlp.fc1/2, layer_scale*, register_tokens */
};

static int starts(const char *s, const char *prefix) { return !strncmp(s, prefix, strlen(prefix)); }
static int is_wb(const char *s) { return !strcmp(s, "weight") || !strcmp(s, "bias"); }
static int ends(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

/* "12.rest" -> 12 and *rest = "rest"; -1 when not a block number. */
static int block_index(const char *s, const char **rest)
{
    int n = 0, digits = 0;
    while (*s >= '0' && *s <= '9') {
        if (++digits > 5) return -1;
        n = n * 10 + (*s++ - '0');
    }
    if (!digits || *s != '.') return -1;
    *rest = s + 1;
    return n;
}

/* One name's verdict: keep as canon (a new string), part of qkv (-1, or 0/1/2 for the q/k/v rows),
 * block index and DINOv2 chunk (-1 when none), family marks, and the reason of a refusal. */
typedef struct verdict {
    char *canon;
    int part, block, chunk, marks;
    const char *why;
} verdict;

static int keep_as(verdict *v, char *canon, int marks)
{
    v->canon = canon;
    v->marks |= marks;
    return NAME_KEEP;
}

static const char *const gated_why =
    "a gated (SwiGLU) MLP, which keycut does not run (only the GELU MLP of ViT-S/B/L: fc1, fc2)";

/* DINO / timm / DINOv2 / DINOv3 names: keep, unknown (inside the backbone namespace) or skip.
 * Block names may be DINOv2's chunked blocks.C.i.<part> (block_chunks > 0). */
static int classify_dino(const char *name, verdict *v)
{
    static const struct {
        const char *name, *canon;
        int marks;
    } top[] = {
        {"cls_token", "cls_token", 0},
        {"pos_embed", "pos_embed", 0},
        {"register_tokens", "register_tokens", MARK_REG},
        {"storage_tokens", "register_tokens", MARK_V3},
        {"rope_embed.periods", "rope_embed.periods", MARK_V3},
        {"patch_embed.proj.weight", "patch_embed.proj.weight", 0},
        {"patch_embed.proj.bias", "patch_embed.proj.bias", 0},
        {"norm.weight", "norm.weight", 0},
        {"norm.bias", "norm.bias", 0},
    };
    for (size_t k = 0; k < sizeof top / sizeof *top; k++)
        if (!strcmp(name, top[k].name)) return keep_as(v, kc_strdup(top[k].canon), top[k].marks);
    if (!strcmp(name, "mask_token")) return NAME_SKIP; /* DINOv2 / DINOv3 training only */
    if (!strcmp(name, "reg_token")) { /* timm's register layout: no class row in pos_embed */
        v->why = "timm's DINOv2-with-registers layout (reg_token, the class position folded into cls_token), "
                 "which keycut does not read: use the official dinov2_*_reg4_pretrain.pth";
        return NAME_REFUSED;
    }
    if (starts(name, "blocks.")) {
        const char *r, *r2;
        int b = block_index(name + 7, &r);
        if (b < 0) return NAME_UNKNOWN;
        int inner = block_index(r, &r2);
        if (inner >= 0) { /* blocks.<chunk>.<block>.<part> */
            v->chunk = b;
            b = inner;
            r = r2;
        }
        v->block = b;
        static const char *parts[] = {"norm1.", "norm2.", "attn.qkv.", "attn.proj.", "mlp.fc1.", "mlp.fc2."};
        for (size_t k = 0; k < sizeof parts / sizeof *parts; k++)
            if (starts(r, parts[k]) && is_wb(r + strlen(parts[k]))) return keep_as(v, kc_strfmt("blocks.%d.%s", b, r), 0);
        if (!strcmp(r, "ls1.gamma") || !strcmp(r, "ls2.gamma")) return keep_as(v, kc_strfmt("blocks.%d.%s", b, r), MARK_LS);
        if (!strcmp(r, "attn.qkv.bias_mask")) return keep_as(v, kc_strfmt("blocks.%d.%s", b, r), MARK_V3);
        if (starts(r, "mlp.w")) { /* DINOv2 giant's mlp.w12 / w3, DINOv3's mlp.w1 / w2 / w3 */
            v->why = gated_why;
            return NAME_REFUSED;
        }
        return NAME_UNKNOWN;
    }
    if (starts(name, "cls_token") || starts(name, "pos_embed") || starts(name, "patch_embed.") || starts(name, "norm.") ||
        starts(name, "register_tokens") || starts(name, "storage_tokens") || starts(name, "rope_embed."))
        return NAME_UNKNOWN;
    return NAME_SKIP;
}

/* The first names of the Hugging Face schemes (after any model prefix). */
static int in_hf_vit_namespace(const char *name)
{
    return starts(name, "embeddings.") || starts(name, "encoder.") || starts(name, "layernorm.") || starts(name, "pooler.");
}

static int in_hf_dinov3_namespace(const char *name)
{
    const char *r;
    return starts(name, "embeddings.") || starts(name, "rope_embeddings.") || starts(name, "norm.") ||
           (starts(name, "layer.") && block_index(name + 6, &r) >= 0);
}

static int in_dino_namespace(const char *name)
{
    verdict v = {NULL, -1, -1, -1, 0, NULL};
    int c = classify_dino(name, &v);
    free(v.canon);
    return c != NAME_SKIP || !strcmp(name, "mask_token");
}

/* Names only DINOv3ViTModel has: its layers (layer.N.), its patch convolution without
 * ".projection", its RoPE module. */
static int says_hf_dinov3(const char *name)
{
    const char *r;
    return (starts(name, "layer.") && block_index(name + 6, &r) >= 0) || starts(name, "rope_embeddings.") ||
           !strcmp(name, "embeddings.patch_embeddings.weight") || !strcmp(name, "embeddings.patch_embeddings.bias");
}

/* Hugging Face ViTModel / Dinov2Model / Dinov2WithRegistersModel names. */
static int classify_hf_vit(const char *name, verdict *v)
{
    if (!strcmp(name, "embeddings.cls_token")) return keep_as(v, kc_strdup("cls_token"), 0);
    if (!strcmp(name, "embeddings.position_embeddings")) return keep_as(v, kc_strdup("pos_embed"), 0);
    if (!strcmp(name, "embeddings.register_tokens")) return keep_as(v, kc_strdup("register_tokens"), MARK_REG | MARK_HF_V2);
    if (starts(name, "embeddings.patch_embeddings.projection.") && is_wb(name + 39))
        return keep_as(v, kc_strfmt("patch_embed.proj.%s", name + 39), 0);
    if (!strcmp(name, "embeddings.mask_token") || starts(name, "pooler.")) return NAME_SKIP;
    if (starts(name, "layernorm.") && is_wb(name + 10)) return keep_as(v, kc_strfmt("norm.%s", name + 10), 0);
    if (starts(name, "encoder.layer.")) {
        const char *r;
        int b = block_index(name + 14, &r);
        if (b < 0) return NAME_UNKNOWN;
        v->block = b;
        static const struct {
            const char *hf, *dino;
            int part, marks;
        } map[] = {
            {"layernorm_before.", "norm1.", -1, MARK_HF_VIT},    {"layernorm_after.", "norm2.", -1, MARK_HF_VIT},
            {"intermediate.dense.", "mlp.fc1.", -1, MARK_HF_VIT}, {"output.dense.", "mlp.fc2.", -1, MARK_HF_VIT},
            {"norm1.", "norm1.", -1, MARK_HF_V2},                 {"norm2.", "norm2.", -1, MARK_HF_V2},
            {"mlp.fc1.", "mlp.fc1.", -1, MARK_HF_V2},             {"mlp.fc2.", "mlp.fc2.", -1, MARK_HF_V2},
            {"attention.attention.query.", "attn.qkv.", 0, 0},    {"attention.attention.key.", "attn.qkv.", 1, 0},
            {"attention.attention.value.", "attn.qkv.", 2, 0},    {"attention.output.dense.", "attn.proj.", -1, 0},
        };
        for (size_t k = 0; k < sizeof map / sizeof *map; k++) {
            size_t l = strlen(map[k].hf);
            if (starts(r, map[k].hf) && is_wb(r + l)) {
                v->part = map[k].part;
                return keep_as(v, kc_strfmt("blocks.%d.%s%s", b, map[k].dino, r + l), map[k].marks);
            }
        }
        if (!strcmp(r, "layer_scale1.lambda1") || !strcmp(r, "layer_scale2.lambda1"))
            return keep_as(v, kc_strfmt("blocks.%d.ls%c.gamma", b, r[11]), MARK_HF_V2);
        if (starts(r, "mlp.weights_in.") || starts(r, "mlp.weights_out.")) { /* Dinov2 giant's SwiGLU */
            v->why = gated_why;
            return NAME_REFUSED;
        }
        return NAME_UNKNOWN;
    }
    return NAME_UNKNOWN; /* other embeddings.*, encoder.*, layernorm.* */
}

/* Hugging Face DINOv3ViTModel names. */
static int classify_hf_dinov3(const char *name, verdict *v)
{
    if (!strcmp(name, "embeddings.cls_token")) return keep_as(v, kc_strdup("cls_token"), 0);
    if (!strcmp(name, "embeddings.register_tokens")) return keep_as(v, kc_strdup("register_tokens"), MARK_REG);
    if (starts(name, "embeddings.patch_embeddings.") && is_wb(name + 28))
        return keep_as(v, kc_strfmt("patch_embed.proj.%s", name + 28), 0);
    if (!strcmp(name, "embeddings.mask_token")) return NAME_SKIP;
    /* inv_freq is a non-persistent buffer (absent from saved files); the periods are made from
     * config.json either way */
    if (!strcmp(name, "rope_embeddings.inv_freq")) return NAME_SKIP;
    if (starts(name, "norm.") && is_wb(name + 5)) return keep_as(v, kc_strfmt("norm.%s", name + 5), 0);
    if (starts(name, "layer.")) {
        const char *r;
        int b = block_index(name + 6, &r);
        if (b < 0) return NAME_UNKNOWN;
        v->block = b;
        static const struct {
            const char *hf, *dino;
            int part;
        } map[] = {
            {"norm1.", "norm1.", -1},          {"norm2.", "norm2.", -1},          {"attention.q_proj.", "attn.qkv.", 0},
            {"attention.k_proj.", "attn.qkv.", 1}, {"attention.v_proj.", "attn.qkv.", 2}, {"attention.o_proj.", "attn.proj.", -1},
            {"mlp.up_proj.", "mlp.fc1.", -1},  {"mlp.down_proj.", "mlp.fc2.", -1},
        };
        for (size_t k = 0; k < sizeof map / sizeof *map; k++) {
            size_t l = strlen(map[k].hf);
            if (starts(r, map[k].hf) && is_wb(r + l)) {
                v->part = map[k].part;
                return keep_as(v, kc_strfmt("blocks.%d.%s%s", b, map[k].dino, r + l), 0);
            }
        }
        if (!strcmp(r, "layer_scale1.lambda1") || !strcmp(r, "layer_scale2.lambda1"))
            return keep_as(v, kc_strfmt("blocks.%d.ls%c.gamma", b, r[11]), 0);
        if (starts(r, "mlp.gate_proj.")) {
            v->why = gated_why;
            return NAME_REFUSED;
        }
        return NAME_UNKNOWN;
    }
    return NAME_UNKNOWN; /* other embeddings.*, rope_embeddings.*, norm.* */
}

static const char *strip_prefixes(const char *name)
{
    for (;;) {
        if (starts(name, "module.")) name += 7;
        else if (starts(name, "backbone.")) name += 9;
        else return name;
    }
}

/* The prefix of a Hugging Face model inside a larger one ("vit." in ViTForImageClassification,
 * "dinov2." / "dinov2_with_registers." in their classifiers, "dinov3_vit.", "model."): stripped
 * from every name of a file where some name continues with the model's own names. */
static const char *const hf_model_prefixes[] = {"vit.", "dinov2.", "dinov2_with_registers.", "dinov3_vit.", "model."};
enum { N_HF_MODEL_PREFIXES = sizeof hf_model_prefixes / sizeof *hf_model_prefixes };

static int hf_model_body(const char *rest)
{
    const char *r;
    return in_hf_vit_namespace(rest) || starts(rest, "rope_embeddings.") || (starts(rest, "layer.") && block_index(rest + 6, &r) >= 0);
}

/* ---- the source tensors of a file ------------------------------------------------------------- */

typedef struct source {
    const char *raw;       /* name in the file */
    const char *name;      /* raw without module. / backbone. / a Hugging Face model prefix */
    const pk_value *pt;    /* .pth tensor, or */
    const st_tensor *st;   /* safetensors tensor */
    char *canon;           /* canonical name when kept */
    int part;              /* -1, or 0/1/2: the q/k/v rows of a Hugging Face layer's qkv */
    int block, chunk;      /* block index and DINOv2 chunk of a block tensor, else -1 */
    int order;             /* index in the file */
} source;

typedef struct loader {
    kc_weights *w;
    const char *path;
    source *src;
    int n_src;
    size_t size;           /* of the file */
    pth_file pth;
    st_file st;
    int is_pth, is_st;
    int scheme;            /* SCHEME_* */
} loader;

static void add_skipped(kc_weights *w, const char *name)
{
    w->skipped = kc_realloc(w->skipped, (size_t)(w->n_skipped + 1) * sizeof *w->skipped);
    w->skipped[w->n_skipped++] = kc_strdup(name);
}

static void src_shape(const source *s, int *ndim, const int64_t **shape)
{
    if (s->pt) {
        *ndim = s->pt->ndim;
        *shape = s->pt->shape;
    } else {
        *ndim = s->st->ndim;
        *shape = s->st->shape;
    }
}

static int src_f32(loader *L, const source *s, float **out)
{
    return s->pt ? pth_tensor_f32(&L->pth, s->pt, s->raw, out) : st_tensor_f32(&L->st, s->st, out);
}

static int dict_holds_tensors(const pk_value *d)
{
    if (!d || d->type != PK_DICT) return 0;
    for (int i = 0; i < d->n / 2; i++)
        if (d->items[2 * i + 1]->type == PK_TENSOR) return 1;
    return 0;
}

/* Last value of a string key (Python: later assignments win). */
static const pk_value *dict_get(const pk_value *d, const char *key)
{
    const pk_value *v = NULL;
    for (int i = 0; d && d->type == PK_DICT && i < d->n / 2; i++)
        if (pk_str(d->items[2 * i]) && !strcmp(d->items[2 * i]->s, key)) v = d->items[2 * i + 1];
    return v;
}

static char *dict_keys_text(const pk_value *d)
{
    size_t len = 0, cap = 256;
    char *s = kc_malloc(cap);
    s[0] = 0;
    for (int i = 0; i < d->n / 2 && len < 200; i++) {
        const char *k = pk_str(d->items[2 * i]);
        if (!k) continue;
        size_t need = len + strlen(k) + 3;
        if (need >= cap) s = kc_realloc(s, cap = 2 * need);
        len += (size_t)sprintf(s + len, "%s%s", len ? ", " : "", k);
    }
    return s;
}

static int pth_sources(loader *L, const char *checkpoint_key)
{
    const pk_value *root = L->pth.root, *sd = NULL;
    if (root->type != PK_DICT) return kc_fail("%s: the checkpoint is a %s, not a dict of tensors", L->path, root->type == PK_LIST ? "list" : "value");
    if (checkpoint_key && *checkpoint_key) {
        sd = dict_get(root, checkpoint_key);
        if (!sd || sd->type != PK_DICT) {
            char *keys = dict_keys_text(root);
            kc_fail("%s: no state dict under checkpoint key \"%s\" (top-level keys: %s)", L->path, checkpoint_key, keys);
            free(keys);
            return -1;
        }
        snprintf(L->w->checkpoint_key, sizeof L->w->checkpoint_key, "%s", checkpoint_key);
    } else if (dict_holds_tensors(root)) {
        sd = root;
    } else {
        static const char *keys[] = {"teacher", "student", "model", "state_dict"};
        for (size_t k = 0; k < 4 && !sd; k++)
            if (dict_holds_tensors(dict_get(root, keys[k]))) {
                sd = dict_get(root, keys[k]);
                snprintf(L->w->checkpoint_key, sizeof L->w->checkpoint_key, "%s", keys[k]);
            }
        if (!sd) {
            char *list = dict_keys_text(root);
            kc_fail("%s: no tensors at the top level and none under teacher, student, model or state_dict (keys: %s)", L->path, list);
            free(list);
            return -1;
        }
    }
    L->src = kc_calloc((size_t)(sd->n ? sd->n : 1), sizeof *L->src);
    for (int i = 0; i < sd->n / 2; i++) {
        const char *name = pk_str(sd->items[2 * i]);
        const pk_value *v = sd->items[2 * i + 1];
        if (!name) continue;
        if (v->type != PK_TENSOR) {
            add_skipped(L->w, name);
            continue;
        }
        L->src[L->n_src].raw = name;
        L->src[L->n_src].pt = v;
        L->n_src++;
    }
    return 0;
}

/* ---- file mapping ----------------------------------------------------------------------------- */

static int map_file(const char *path, uint8_t **data, size_t *size)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) return kc_fail("%s: cannot open (%s)", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return kc_fail("%s: not a regular file", path);
    }
    if (st.st_size == 0) {
        close(fd);
        return kc_fail("%s: empty file", path);
    }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return kc_fail("%s: cannot map (%s)", path, strerror(errno));
    *data = p;
    *size = (size_t)st.st_size;
    return 0;
}

/* config.json beside the weights (Hugging Face), when present: heads, LN eps, RoPE base, registers. */
static int read_config(kc_weights *w, const char *path)
{
    const char *slash = strrchr(path, '/');
    char *cfg = slash ? kc_strfmt("%.*s/config.json", (int)(slash - path), path) : kc_strdup("config.json");
    int rc = 0;
    if (kc_exists(cfg)) {
        uint8_t *text = NULL;
        size_t n;
        json_value root;
        if (kc_read_file(cfg, &text, &n) < 0 || json_parse(&root, (const char *)text, n, cfg) < 0) {
            free(text);
            rc = -1;
        } else {
            free(text);
            const json_value *h = json_get(&root, "num_attention_heads"), *e = json_get(&root, "layer_norm_eps");
            const json_value *th = json_get(&root, "rope_theta"), *r = json_get(&root, "num_register_tokens");
            int64_t heads, regs;
            if (h && (json_get_int(h, &heads) < 0 || heads < 1 || heads > 4096)) rc = kc_fail("%s: num_attention_heads is not a positive integer", cfg);
            else if (h) w->config_heads = (int)heads;
            if (e && (json_get_number(e, &w->config_ln_eps) < 0 || !(w->config_ln_eps > 0 && w->config_ln_eps < 1)))
                rc = kc_fail("%s: layer_norm_eps is not a number in (0, 1)", cfg);
            if (th && (json_get_number(th, &w->config_rope_theta) < 0 || !(w->config_rope_theta > 1 && w->config_rope_theta < 1e12)))
                rc = kc_fail("%s: rope_theta is not a number in (1, 1e12)", cfg);
            if (r && (json_get_int(r, &regs) < 0 || regs < 0 || regs > 4096)) rc = kc_fail("%s: num_register_tokens is not an integer in [0, 4096]", cfg);
            else if (r) w->config_registers = (int)regs;
            json_free(&root);
        }
    }
    free(cfg);
    return rc;
}

/* ---- the file's naming scheme and family ------------------------------------------------------ */

/* Strips module. / backbone. from every name, then a Hugging Face model prefix, and decides the
 * scheme: DINOv3ViTModel when a name only it has is present, else ViTModel / Dinov2Model when any
 * name starts like theirs, else DINO/timm. */
static void find_scheme(loader *L)
{
    for (int i = 0; i < L->n_src; i++) L->src[i].name = strip_prefixes(L->src[i].raw);
    for (int k = 0; k < N_HF_MODEL_PREFIXES; k++) {
        const char *p = hf_model_prefixes[k];
        const size_t lp = strlen(p);
        int used = 0;
        for (int i = 0; i < L->n_src && !used; i++) used = starts(L->src[i].name, p) && hf_model_body(L->src[i].name + lp);
        for (int i = 0; i < L->n_src && used; i++)
            if (starts(L->src[i].name, p)) L->src[i].name += lp;
    }
    int v3 = 0, vit = 0;
    for (int i = 0; i < L->n_src; i++) {
        v3 |= says_hf_dinov3(L->src[i].name);
        vit |= in_hf_vit_namespace(L->src[i].name);
    }
    L->scheme = v3 ? SCHEME_HF_DINOV3 : vit ? SCHEME_HF_VIT : SCHEME_DINO;
}

/* Classifies every name under the file's scheme; fills canon / part / block / chunk and the marks. */
static int classify_all(loader *L, int *marks)
{
    static const char *const scheme_name[] = {"DINO/timm", "Hugging Face ViTModel/Dinov2Model", "Hugging Face DINOv3ViTModel"};
    const source *first_hf = NULL, *vit_only = NULL, *v2_only = NULL;
    for (int i = 0; i < L->n_src; i++)
        if (!first_hf && L->scheme != SCHEME_DINO && (L->scheme == SCHEME_HF_DINOV3 ? in_hf_dinov3_namespace(L->src[i].name) : in_hf_vit_namespace(L->src[i].name)))
            first_hf = &L->src[i];
    for (int i = 0; i < L->n_src; i++) {
        source *s = &L->src[i];
        const char *name = s->name;
        verdict v = {NULL, -1, -1, -1, 0, NULL};
        int c;
        s->order = i;
        if (L->scheme == SCHEME_HF_DINOV3 && in_hf_dinov3_namespace(name)) {
            c = classify_hf_dinov3(name, &v);
        } else if (L->scheme == SCHEME_HF_VIT && in_hf_vit_namespace(name)) {
            c = classify_hf_vit(name, &v);
        } else if (L->scheme == SCHEME_DINO) {
            c = classify_dino(name, &v);
        } else if (in_dino_namespace(name) || in_hf_vit_namespace(name)) {
            return kc_fail("%s: mixes %s names (%s) with names of another scheme (%s)", L->path, scheme_name[L->scheme],
                           first_hf->raw, s->raw);
        } else {
            c = NAME_SKIP;
        }
        s->canon = v.canon;
        s->part = v.part;
        s->block = v.block;
        s->chunk = v.chunk;
        *marks |= v.marks;
        if ((v.marks & MARK_HF_VIT) && !vit_only) vit_only = s;
        if ((v.marks & MARK_HF_V2) && !v2_only) v2_only = s;
        if (c == NAME_REFUSED) return kc_fail("%s: tensor %s belongs to %s", L->path, s->raw, v.why);
        if (c == NAME_UNKNOWN) return kc_fail("%s: unknown tensor %s inside the backbone's names", L->path, s->raw);
        if (c == NAME_SKIP) add_skipped(L->w, s->raw);
    }
    if (vit_only && v2_only)
        return kc_fail("%s: mixes ViTModel names (%s) and Dinov2Model names (%s)", L->path, vit_only->raw, v2_only->raw);
    return 0;
}

/* DINOv2's chunked block names (blocks.C.i.*, block_chunks > 0): every block in one chunk, the
 * chunk numbers non-decreasing with the block index, and no plain blocks.i.* beside them. */
static int check_chunks(loader *L)
{
    const source *chunked = NULL, *plain = NULL;
    int max_block = -1;
    for (int i = 0; i < L->n_src; i++) {
        const source *s = &L->src[i];
        if (!s->canon || s->block < 0) continue;
        if (s->chunk >= 0 && !chunked) chunked = s;
        if (s->chunk < 0 && !plain) plain = s;
        if (s->block > max_block) max_block = s->block;
    }
    if (!chunked) return 0;
    if (plain) return kc_fail("%s: block names mix DINOv2's chunked form (%s) and the plain one (%s)", L->path, chunked->raw, plain->raw);
    const source **by_block = kc_calloc((size_t)max_block + 1, sizeof *by_block);
    int rc = 0;
    for (int i = 0; i < L->n_src && rc == 0; i++) {
        const source *s = &L->src[i];
        if (!s->canon || s->block < 0) continue;
        const source *seen = by_block[s->block];
        if (!seen) by_block[s->block] = s;
        else if (seen->chunk != s->chunk)
            rc = kc_fail("%s: block %d appears in chunk %d (%s) and in chunk %d (%s)", L->path, s->block, seen->chunk, seen->raw,
                         s->chunk, s->raw);
    }
    const source *prev = NULL;
    for (int b = 0; b <= max_block && rc == 0; b++) {
        const source *s = by_block[b];
        if (!s) continue;
        if (prev && s->chunk < prev->chunk)
            rc = kc_fail("%s: chunk numbers decrease: block %d is in chunk %d (%s) after block %d in chunk %d (%s)", L->path, b,
                         s->chunk, s->raw, prev->block, prev->chunk, prev->raw);
        prev = s;
    }
    free(by_block);
    return rc;
}

static void set_family(kc_weights *w, int scheme, int marks)
{
    const char *f;
    if (scheme == SCHEME_HF_DINOV3) f = "hf-dinov3";
    else if (scheme == SCHEME_HF_VIT) f = marks & MARK_REG ? "hf-dinov2-reg" : marks & MARK_HF_V2 ? "hf-dinov2" : "hf-vit";
    else f = marks & MARK_V3 ? "dinov3" : marks & MARK_REG ? "dinov2-reg" : marks & MARK_LS ? "dinov2" : "dino";
    snprintf(w->family, sizeof w->family, "%s", f);
}

/* Hugging Face DINOv3ViTModel stores no periods: DINOv3ViTRopePositionEmbedding computes, in
 * float32,  inv_freq = 1 / rope_theta ** torch.arange(0, 1, 4 / head_dim)  (head_dim / 4 values)
 * and its angles as 2 pi * coordinate * inv_freq.  Here, step by step:
 *   x_j       = fp32(j * (4.0 / head_dim))            j = 0 .. head_dim/4 - 1   (torch.arange)
 *   p_j       = fp32(theta ^ x_j), pow in double      (torch's float32 pow)
 *   inv_j     = fp32(1 / p_j)                          (inv_freq)
 *   periods_j = fp32(1 / inv_j)                        (the canonical rope_embed.periods)
 * For theta 100 and head_dim 16, 32, 64 or 128 (64 in every released DINOv3 ViT, 128 in the 7B)
 * the step is a power of two and these equal torch's float32 values bit for bit (checked against
 * torch; tests/ref/dino23_weights_ref.py writes them).  For other head dims torch's vectorised
 * arange and pow are themselves platform dependent to an ulp.  theta = config.json's rope_theta,
 * else 100 (DINOv3ViTConfig's default); head_dim = width / num_attention_heads, else 64. */
static int add_hf_periods(loader *L)
{
    kc_weights *w = L->w;
    const kc_tensor *ref = weights_find(w, "cls_token");
    int64_t width = ref && ref->ndim >= 1 ? ref->shape[ref->ndim - 1] : 0;
    if (!width && (ref = weights_find(w, "patch_embed.proj.weight")) && ref->ndim >= 1) width = ref->shape[0];
    if (width < 1) return kc_fail("%s: cannot make DINOv3's RoPE periods: no embeddings.cls_token or patch_embeddings to give the width", L->path);
    int64_t head_dim = 64;
    if (w->config_heads > 0) {
        if (width % w->config_heads != 0)
            return kc_fail("%s: config.json's num_attention_heads %d does not divide the width %lld", L->path, w->config_heads, (long long)width);
        head_dim = width / w->config_heads;
    }
    if (head_dim % 4 != 0)
        return kc_fail("%s: head dimension %lld is not a multiple of 4 (DINOv3's RoPE needs head_dim / 4 periods)", L->path, (long long)head_dim);
    const double theta = w->config_rope_theta > 0 ? w->config_rope_theta : 100.0;
    const int n = (int)(head_dim / 4);
    float *periods = kc_malloc((size_t)n * sizeof *periods);
    for (int j = 0; j < n; j++) {
        const float x = (float)(j * (4.0 / (double)head_dim));
        const float p = (float)pow(theta, (double)x);
        const float inv_freq = 1.0f / p;
        periods[j] = 1.0f / inv_freq;
    }
    w->t = kc_realloc(w->t, (size_t)(w->n + 1) * sizeof *w->t);
    kc_tensor *t = &w->t[w->n++];
    memset(t, 0, sizeof *t);
    t->name = kc_strdup("rope_embed.periods");
    t->ndim = 1;
    t->shape[0] = n;
    t->data = periods;
    w->periods_from_config = 1;
    return 0;
}

/* config.json's num_register_tokens against the file's register tokens (1, R, D). */
static int check_config_registers(const loader *L)
{
    const kc_weights *w = L->w;
    if (w->config_registers < 0) return 0;
    const kc_tensor *r = weights_find(w, "register_tokens");
    const int64_t have = r && r->ndim == 3 ? r->shape[1] : 0;
    if (have != w->config_registers)
        return kc_fail("%s: config.json beside it says num_register_tokens %d, the file holds %lld register tokens", L->path,
                       w->config_registers, (long long)have);
    return 0;
}

/* ---- assembling the output -------------------------------------------------------------------- */

static int cmp_source(const void *a, const void *b)
{
    const source *x = *(const source *const *)a, *y = *(const source *const *)b;
    int c = strcmp(x->canon, y->canon);
    return c ? c : x->part - y->part;
}

static int cmp_pair(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The q, k and v parts (keep[0..n), sorted by part) of one Hugging Face layer's weight or bias
 * into t as the rows of qkv, q first.  Each part must appear once, with the same shape, 1-D or 2-D;
 * DINOv3ViTModel has no k_proj.bias (key_bias=False: its keys have no bias), so there a missing k
 * bias gives zero rows.  *first = the smallest file order of the parts. */
static int assemble_qkv(loader *L, source *const *keep, int n, kc_tensor *t, int64_t *first)
{
    static const char *const vit_part[3] = {"attention.attention.query", "attention.attention.key", "attention.attention.value"};
    static const char *const v3_part[3] = {"attention.q_proj", "attention.k_proj", "attention.v_proj"};
    const char *const *part_name = L->scheme == SCHEME_HF_DINOV3 ? v3_part : vit_part;
    const char *canon = keep[0]->canon;
    const source *ps[3] = {NULL, NULL, NULL};
    for (int k = 0; k < n; k++) {
        if (ps[keep[k]->part])
            return kc_fail("%s: %s has a repeated %s part (Hugging Face names: %s and %s)", L->path, canon,
                           part_name[keep[k]->part], ps[keep[k]->part]->raw, keep[k]->raw);
        ps[keep[k]->part] = keep[k];
    }
    const int k_may_lack = L->scheme == SCHEME_HF_DINOV3 && ends(canon, ".bias");
    for (int k = 0; k < 3; k++)
        if (!ps[k] && !(k == 1 && k_may_lack))
            return kc_fail("%s: %s has no %s part (Hugging Face names)", L->path, canon, part_name[k]);
    const source *ref = ps[0] ? ps[0] : ps[2];
    int nd;
    const int64_t *sh;
    src_shape(ref, &nd, &sh);
    for (int k = 0; k < 3; k++) {
        if (!ps[k]) continue;
        int ndk;
        const int64_t *shk;
        src_shape(ps[k], &ndk, &shk);
        if (nd < 1 || nd > 2 || ndk != nd || memcmp(sh, shk, (size_t)nd * sizeof *sh))
            return kc_fail("%s: the q, k and v parts of %s differ in shape or are not 1-D/2-D (%s)", L->path, canon, ps[k]->raw);
    }
    const int64_t rows = sh[0], cols = nd == 2 ? sh[1] : 1, per = rows * cols;
    float *all = kc_calloc((size_t)(per > 0 ? 3 * per : 1), sizeof *all); /* a missing k stays 0 */
    *first = INT64_MAX;
    for (int k = 0; k < 3; k++) {
        if (!ps[k]) continue;
        float *part;
        if (src_f32(L, ps[k], &part) < 0) {
            free(all);
            return -1;
        }
        memcpy(all + k * per, part, (size_t)per * sizeof *part);
        free(part);
        if (ps[k]->order < *first) *first = ps[k]->order;
    }
    t->data = all;
    t->ndim = nd;
    t->shape[0] = 3 * rows;
    if (nd == 2) t->shape[1] = cols;
    t->name = kc_strdup(canon);
    return 0;
}

/* Builds w->t from the kept sources. */
static int assemble(loader *L)
{
    kc_weights *w = L->w;
    int n_keep = 0;
    source **keep = kc_malloc((size_t)(L->n_src ? L->n_src : 1) * sizeof *keep);
    for (int i = 0; i < L->n_src; i++)
        if (L->src[i].canon) keep[n_keep++] = &L->src[i];
    qsort(keep, (size_t)n_keep, sizeof *keep, cmp_source);
    w->t = kc_calloc((size_t)(n_keep ? n_keep : 1), sizeof *w->t);
    int64_t *order = kc_malloc((size_t)(n_keep ? n_keep : 1) * sizeof *order);
    int rc = 0;
    /* views may share a storage: the converted floats must stay within what the file holds */
    uint64_t out_floats = 0, out_limit = 2 * (uint64_t)L->size + ((uint64_t)16 << 20);
    for (int i = 0; i < n_keep; i++) {
        int ndim;
        const int64_t *shape;
        src_shape(keep[i], &ndim, &shape);
        uint64_t n = 1;
        for (int d = 0; d < ndim; d++)
            if (__builtin_mul_overflow(n, (uint64_t)shape[d], &n)) n = UINT64_MAX;
        if (n > out_limit / 4 || (out_floats += n) > out_limit / 4) {
            rc = kc_fail("%s: the tensors' views hold more values than the file justifies (over %llu MB as float32)",
                         L->path, (unsigned long long)(out_limit >> 20));
            break;
        }
    }
    for (int i = 0; i < n_keep && rc == 0;) {
        int j = i + 1;
        while (j < n_keep && !strcmp(keep[j]->canon, keep[i]->canon)) j++;
        const source *s = keep[i];
        kc_tensor *t = &w->t[w->n];
        int64_t first = s->order;
        int ndim;
        const int64_t *shape;
        src_shape(s, &ndim, &shape);
        if (s->part < 0) {
            if (j - i > 1) {
                rc = kc_fail("%s: tensor %s appears twice (as %s and %s)", L->path, s->canon, keep[i]->raw, keep[i + 1]->raw);
                break;
            }
            if (ndim > 8) {
                rc = kc_fail("%s: tensor %s has %d dimensions (at most 8)", L->path, s->raw, ndim);
                break;
            }
            if (src_f32(L, s, &t->data) < 0) {
                rc = -1;
                break;
            }
            t->ndim = ndim;
            memcpy(t->shape, shape, (size_t)ndim * sizeof *shape);
            t->name = kc_strdup(s->canon);
            order[w->n++] = s->order;
        } else if ((rc = assemble_qkv(L, keep + i, j - i, t, &first)) == 0) {
            order[w->n++] = first;
        } else {
            break;
        }
        i = j;
    }
    if (rc == 0) { /* back to file order: sort (order, index) pairs */
        int64_t *key = kc_malloc((size_t)(w->n ? w->n : 1) * 2 * sizeof *key);
        for (int i = 0; i < w->n; i++) {
            key[2 * i] = order[i];
            key[2 * i + 1] = i;
        }
        qsort(key, (size_t)w->n, 2 * sizeof *key, cmp_pair);
        kc_tensor *sorted = kc_malloc((size_t)(w->n ? w->n : 1) * sizeof *sorted);
        for (int i = 0; i < w->n; i++) sorted[i] = w->t[key[2 * i + 1]];
        free(w->t);
        w->t = sorted;
        free(key);
    }
    free(order);
    free(keep);
    return rc;
}

/* The file's sha256, on a thread of its own while the tensors are parsed and copied (hashing 86 MB
 * takes about as long as the copies). */
typedef struct hash_job {
    const uint8_t *data;
    size_t size;
    char *hex;
} hash_job;

static void *hash_thread(void *arg)
{
    const hash_job *h = arg;
    kc_sha256_buf_hex(h->data, h->size, h->hex);
    return NULL;
}

int weights_load(kc_weights *w, const char *path, const char *checkpoint_key)
{
    memset(w, 0, sizeof *w);
    w->path = kc_strdup(path);
    w->config_registers = -1;
    uint8_t *data = NULL;
    size_t size = 0;
    if (map_file(path, &data, &size) < 0) {
        weights_free(w);
        return -1;
    }
    loader L = {0};
    L.w = w;
    L.path = path;
    L.size = size;
    int rc = 0;
    hash_job hj = {data, size, w->sha256};
    pthread_t hash_tid;
    const int hashing = pthread_create(&hash_tid, NULL, hash_thread, &hj) == 0;
    if (!hashing) hash_thread(&hj);
    if (size >= 4 && !memcmp(data, "PK\x03\x04", 4)) {
        snprintf(w->format, sizeof w->format, "pth");
        L.is_pth = 1;
        rc = pth_open(&L.pth, path, data, size);
        if (rc == 0) rc = pth_sources(&L, checkpoint_key);
    } else if (st_detect(data, size)) {
        snprintf(w->format, sizeof w->format, "safetensors");
        L.is_st = 1;
        rc = st_open(&L.st, path, data, size);
        if (rc == 0) {
            L.src = kc_calloc((size_t)(L.st.n ? L.st.n : 1), sizeof *L.src);
            for (int i = 0; i < L.st.n; i++) {
                L.src[i].raw = L.st.t[i].name;
                L.src[i].st = &L.st.t[i];
            }
            L.n_src = L.st.n;
        }
    } else if (data[0] == 0x80 && size >= 2 && data[1] <= 5) {
        rc = kc_fail("%s: a legacy (PyTorch < 1.6, non-zip) torch.save file; re-save it with a newer torch.save", path);
    } else {
        rc = kc_fail("%s: neither a PyTorch .pth (zip) nor a safetensors file", path);
    }
    /* names: the scheme, each name's verdict, DINOv2's chunks, the family */
    int marks = 0, n_keep = 0;
    if (rc == 0) {
        find_scheme(&L);
        rc = classify_all(&L, &marks);
    }
    if (rc == 0) rc = check_chunks(&L);
    for (int i = 0; rc == 0 && i < L.n_src; i++) n_keep += L.src[i].canon != NULL;
    if (rc == 0 && n_keep == 0)
        rc = kc_fail("%s: no backbone tensors (cls_token, pos_embed, patch_embed.*, blocks.*, norm.*, or their Hugging Face names) found", path);
    if (rc == 0) {
        set_family(w, L.scheme, marks);
        w->hf_names = L.scheme != SCHEME_DINO;
        rc = read_config(w, path);
    }
    if (rc == 0) rc = assemble(&L);
    if (rc == 0 && L.scheme == SCHEME_HF_DINOV3) rc = add_hf_periods(&L);
    if (rc == 0) rc = check_config_registers(&L);
    for (int i = 0; i < L.n_src; i++) free(L.src[i].canon);
    free(L.src);
    if (L.is_pth) pth_close(&L.pth);
    if (L.is_st) st_close(&L.st);
    if (hashing) pthread_join(hash_tid, NULL);
    munmap(data, size);
    if (rc < 0) {
        weights_free(w);
        return -1;
    }
    return 0;
}

const kc_tensor *weights_find(const kc_weights *w, const char *name)
{
    for (int i = 0; i < w->n; i++)
        if (!strcmp(w->t[i].name, name)) return &w->t[i];
    return NULL;
}

void weights_free(kc_weights *w)
{
    for (int i = 0; i < w->n; i++) {
        free(w->t[i].name);
        free(w->t[i].data);
    }
    free(w->t);
    for (int i = 0; i < w->n_skipped; i++) free(w->skipped[i]);
    free(w->skipped);
    free(w->path);
    memset(w, 0, sizeof *w);
}
