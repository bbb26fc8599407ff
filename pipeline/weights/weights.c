/* pipeline/weights/weights.c — weights files to canonical DINO/timm float32 tensors (see weights.h).
 *
 * Steps: map the file; sha256 of its bytes (on a thread, beside the rest); the format from its first
 * bytes (zip "PK\3\4" = .pth, 8-byte length + '{' = safetensors); for .pth the state dict inside the
 * checkpoint; each name with "module." / "backbone." (and Hugging Face's "vit.") stripped, then
 * classified:
 *   DINO/timm backbone name -> kept;  Hugging Face ViTModel name -> mapped (q, k, v -> qkv rows);
 *   other name inside the backbone namespace -> error;  anything else -> skipped and listed.
 * Duplicate canonical names are errors.  config.json beside the file gives heads and LN eps.
 */
#include "pipeline/weights/weights.h"

#include <errno.h>
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

enum { NAME_SKIP = 0, NAME_KEEP = 1, NAME_UNKNOWN = -1 };

static int starts(const char *s, const char *prefix) { return !strncmp(s, prefix, strlen(prefix)); }
static int is_wb(const char *s) { return !strcmp(s, "weight") || !strcmp(s, "bias"); }

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

/* DINO/timm names: keep (canonical = name), unknown (inside the backbone namespace) or skip. */
static int classify_dino(const char *name)
{
    if (!strcmp(name, "cls_token") || !strcmp(name, "pos_embed") || !strcmp(name, "patch_embed.proj.weight") ||
        !strcmp(name, "patch_embed.proj.bias") || !strcmp(name, "norm.weight") || !strcmp(name, "norm.bias"))
        return NAME_KEEP;
    if (starts(name, "blocks.")) {
        const char *r;
        if (block_index(name + 7, &r) < 0) return NAME_UNKNOWN;
        static const char *parts[] = {"norm1.", "norm2.", "attn.qkv.", "attn.proj.", "mlp.fc1.", "mlp.fc2."};
        for (size_t k = 0; k < sizeof parts / sizeof *parts; k++)
            if (starts(r, parts[k]) && is_wb(r + strlen(parts[k]))) return NAME_KEEP;
        return NAME_UNKNOWN;
    }
    if (starts(name, "cls_token") || starts(name, "pos_embed") || starts(name, "patch_embed.") || starts(name, "norm."))
        return NAME_UNKNOWN;
    return NAME_SKIP;
}

static int is_hf_name(const char *name)
{
    return starts(name, "embeddings.") || starts(name, "encoder.") || starts(name, "layernorm.") || starts(name, "pooler.");
}

/* Hugging Face ViTModel names.  On keep, *canon is a new string and *part is -1, or 0/1/2 for
 * query/key/value (rows of qkv). */
static int classify_hf(const char *name, char **canon, int *part)
{
    *part = -1;
    if (!strcmp(name, "embeddings.cls_token")) return *canon = kc_strdup("cls_token"), NAME_KEEP;
    if (!strcmp(name, "embeddings.position_embeddings")) return *canon = kc_strdup("pos_embed"), NAME_KEEP;
    if (starts(name, "embeddings.patch_embeddings.projection.") && is_wb(name + 39))
        return *canon = kc_strfmt("patch_embed.proj.%s", name + 39), NAME_KEEP;
    if (!strcmp(name, "embeddings.mask_token") || starts(name, "pooler.")) return NAME_SKIP;
    if (starts(name, "layernorm.") && is_wb(name + 10)) return *canon = kc_strfmt("norm.%s", name + 10), NAME_KEEP;
    if (starts(name, "encoder.layer.")) {
        const char *r;
        int b = block_index(name + 14, &r);
        if (b < 0) return NAME_UNKNOWN;
        static const struct {
            const char *hf, *dino;
            int part;
        } map[] = {
            {"layernorm_before.", "norm1.", -1},           {"layernorm_after.", "norm2.", -1},
            {"attention.attention.query.", "attn.qkv.", 0}, {"attention.attention.key.", "attn.qkv.", 1},
            {"attention.attention.value.", "attn.qkv.", 2}, {"attention.output.dense.", "attn.proj.", -1},
            {"intermediate.dense.", "mlp.fc1.", -1},        {"output.dense.", "mlp.fc2.", -1},
        };
        for (size_t k = 0; k < sizeof map / sizeof *map; k++) {
            size_t l = strlen(map[k].hf);
            if (starts(r, map[k].hf) && is_wb(r + l)) {
                *canon = kc_strfmt("blocks.%d.%s%s", b, map[k].dino, r + l);
                *part = map[k].part;
                return NAME_KEEP;
            }
        }
        return NAME_UNKNOWN;
    }
    return NAME_UNKNOWN; /* other embeddings.*, encoder.*, layernorm.* */
}

static const char *strip_prefixes(const char *name)
{
    for (;;) {
        if (starts(name, "module.")) name += 7;
        else if (starts(name, "backbone.")) name += 9;
        else if (starts(name, "vit.") && is_hf_name(name + 4)) name += 4;
        else return name;
    }
}

/* ---- the source tensors of a file ------------------------------------------------------------- */

typedef struct source {
    const char *raw;       /* name in the file */
    const pk_value *pt;    /* .pth tensor, or */
    const st_tensor *st;   /* safetensors tensor */
    char *canon;
    int part, order;
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
    } else if (dict_holds_tensors(root)) {
        sd = root;
    } else {
        static const char *keys[] = {"teacher", "student", "model", "state_dict"};
        for (size_t k = 0; k < 4 && !sd; k++)
            if (dict_holds_tensors(dict_get(root, keys[k]))) sd = dict_get(root, keys[k]);
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
            int64_t heads;
            if (h && (json_get_int(h, &heads) < 0 || heads < 1 || heads > 4096)) rc = kc_fail("%s: num_attention_heads is not a positive integer", cfg);
            else if (h) w->config_heads = (int)heads;
            if (e && (json_get_number(e, &w->config_ln_eps) < 0 || !(w->config_ln_eps > 0 && w->config_ln_eps < 1)))
                rc = kc_fail("%s: layer_norm_eps is not a number in (0, 1)", cfg);
            json_free(&root);
        }
    }
    free(cfg);
    return rc;
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
        } else { /* q, k, v of a Hugging Face layer: exactly one each, same shape, 1-D or 2-D */
            if (j - i != 3 || keep[i]->part != 0 || keep[i + 1]->part != 1 || keep[i + 2]->part != 2) {
                static const char *qkv[] = {"query", "key", "value"};
                int have[3] = {0, 0, 0};
                for (int k = i; k < j; k++) have[keep[k]->part]++;
                for (int k = 0; k < 3; k++)
                    if (have[k] != 1) {
                        rc = kc_fail("%s: %s has %s attention.attention.%s part (Hugging Face names)", L->path, s->canon,
                                     have[k] ? "a repeated" : "no", qkv[k]);
                        break;
                    }
                break;
            }
            int nd[3];
            const int64_t *sh[3];
            for (int k = 0; k < 3; k++) src_shape(keep[i + k], &nd[k], &sh[k]);
            if (nd[0] < 1 || nd[0] > 2 || nd[1] != nd[0] || nd[2] != nd[0] || memcmp(sh[0], sh[1], (size_t)nd[0] * 8) || memcmp(sh[0], sh[2], (size_t)nd[0] * 8)) {
                rc = kc_fail("%s: query, key and value of %s differ in shape or are not 1-D/2-D", L->path, s->canon);
                break;
            }
            int64_t rows = sh[0][0], cols = nd[0] == 2 ? sh[0][1] : 1, per = rows * cols;
            float *all = kc_malloc((size_t)(per > 0 ? 3 * per : 1) * sizeof *all);
            for (int k = 0; k < 3 && rc == 0; k++) {
                float *part;
                if (src_f32(L, keep[i + k], &part) < 0) {
                    rc = -1;
                    break;
                }
                memcpy(all + k * per, part, (size_t)per * sizeof *part);
                free(part);
            }
            if (rc < 0) {
                free(all);
                break;
            }
            t->data = all;
            t->ndim = nd[0];
            t->shape[0] = 3 * rows;
            if (nd[0] == 2) t->shape[1] = cols;
            t->name = kc_strdup(s->canon);
            int64_t first = keep[i]->order;
            for (int k = i; k < j; k++)
                if (keep[k]->order < first) first = keep[k]->order;
            order[w->n++] = first;
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
    /* classify names */
    int n_dino = 0, n_hf = 0;
    for (int i = 0; rc == 0 && i < L.n_src; i++) {
        source *s = &L.src[i];
        const char *name = strip_prefixes(s->raw);
        s->order = i;
        s->part = -1;
        int c;
        if (is_hf_name(name)) {
            c = classify_hf(name, &s->canon, &s->part);
            if (c == NAME_KEEP) n_hf++;
        } else {
            c = classify_dino(name);
            if (c == NAME_KEEP) {
                s->canon = kc_strdup(name);
                n_dino++;
            }
        }
        if (c == NAME_UNKNOWN) rc = kc_fail("%s: unknown tensor %s inside the backbone's names", path, s->raw);
        else if (c == NAME_SKIP) add_skipped(w, s->raw);
    }
    if (rc == 0 && n_dino && n_hf) rc = kc_fail("%s: mixes DINO/timm and Hugging Face tensor names", path);
    w->hf_names = n_hf > 0;
    if (rc == 0 && n_dino + n_hf == 0) rc = kc_fail("%s: no backbone tensors (cls_token, pos_embed, patch_embed.*, blocks.*, norm.*) found", path);
    if (rc == 0) rc = assemble(&L);
    if (rc == 0) rc = read_config(w, path);
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
