/* pipeline/weights/safetensors.c — safetensors header parsing and tensor conversion (see safetensors.h). */
#include "pipeline/weights/safetensors.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/json.h"
#include "pipeline/kc.h"

static const struct {
    const char *name;
    pk_dtype dtype;
    int size;
} st_dtypes[] = {
    {"F32", PK_F32, 4}, {"F16", PK_F16, 2}, {"BF16", PK_BF16, 2}, {"F64", PK_F64, 8}, {"I64", PK_I64, 8},
    {"I32", PK_I32, 4}, {"I16", PK_I16, 2}, {"I8", PK_I8, 1},     {"U8", PK_U8, 1},   {"BOOL", PK_BOOL_T, 1},
    {"U16", PK_OTHER_T, 2}, {"U32", PK_OTHER_T, 4}, {"U64", PK_OTHER_T, 8}, {"F8_E4M3", PK_OTHER_T, 1},
    {"F8_E5M2", PK_OTHER_T, 1},
};

int st_detect(const uint8_t *data, size_t size)
{
    if (size < 10) return 0;
    uint64_t n = 0;
    for (int k = 7; k >= 0; k--) n = n << 8 | data[k];
    return n >= 2 && data[8] == '{';
}

int st_open(st_file *f, const char *path, const uint8_t *data, size_t size)
{
    memset(f, 0, sizeof *f);
    f->path = path;
    if (size < 8) return kc_fail("%s: truncated safetensors file (%zu bytes)", path, size);
    uint64_t hlen = 0;
    for (int k = 7; k >= 0; k--) hlen = hlen << 8 | data[k];
    if (hlen > size - 8)
        return kc_fail("%s: safetensors header length %llu overruns the file (%zu bytes)", path, (unsigned long long)hlen, size);
    const uint8_t *buf = data + 8 + hlen;
    uint64_t buf_size = size - 8 - hlen;
    json_value root;
    char *what = kc_strfmt("%s: safetensors header", path);
    int rc = json_parse(&root, (const char *)data + 8, (size_t)hlen, what);
    free(what);
    if (rc < 0) return -1;
    if (root.type != JSON_OBJECT) {
        json_free(&root);
        return kc_fail("%s: safetensors header is not a JSON object", path);
    }
    f->t = kc_calloc((size_t)(root.n ? root.n : 1), sizeof *f->t);
    for (int i = 0; i < root.n; i++) {
        const char *name = root.keys[i];
        const json_value *v = &root.items[i];
        if (!strcmp(name, "__metadata__")) {
            for (int k = 0; k < json_count(v); k++) {
                const char *s = json_string(json_item(v, k));
                if (!s) continue;
                f->meta_key = kc_realloc(f->meta_key, sizeof *f->meta_key * (size_t)(f->n_meta + 1));
                f->meta_value = kc_realloc(f->meta_value, sizeof *f->meta_value * (size_t)(f->n_meta + 1));
                f->meta_key[f->n_meta] = kc_strdup(json_key(v, k));
                f->meta_value[f->n_meta++] = kc_strdup(s);
            }
            continue;
        }
        st_tensor *t = &f->t[f->n];
        t->name = kc_strdup(name);
        f->n++;
        const char *dt = json_string(json_get(v, "dtype"));
        const json_value *shape = json_get(v, "shape"), *offs = json_get(v, "data_offsets");
        if (!dt || !shape || shape->type != JSON_ARRAY || json_count(offs) != 2 || offs->type != JSON_ARRAY) {
            kc_fail("%s: safetensors entry %s lacks dtype, shape or data_offsets", path, name);
            goto fail;
        }
        int es = 0;
        t->dtype = PK_OTHER_T;
        for (size_t k = 0; k < sizeof st_dtypes / sizeof *st_dtypes; k++)
            if (!strcmp(dt, st_dtypes[k].name)) {
                t->dtype = st_dtypes[k].dtype;
                es = st_dtypes[k].size;
            }
        if (!es) {
            kc_fail("%s: tensor %s has an unknown dtype \"%.20s\"", path, name, dt);
            goto fail;
        }
        snprintf(t->dtype_name, sizeof t->dtype_name, "%s", dt);
        if (shape->n > 8) {
            kc_fail("%s: tensor %s has %d dimensions (at most 8)", path, name, shape->n);
            goto fail;
        }
        t->ndim = shape->n;
        t->numel = 1;
        for (int d = 0; d < shape->n; d++) {
            if (json_get_int(&shape->items[d], &t->shape[d]) < 0 || t->shape[d] < 0) {
                kc_fail("%s: tensor %s has a bad shape", path, name);
                goto fail;
            }
            if (__builtin_mul_overflow(t->numel, t->shape[d], &t->numel)) {
                kc_fail("%s: tensor %s: element count overflows", path, name);
                goto fail;
            }
        }
        int64_t b, e;
        if (json_get_int(&offs->items[0], &b) < 0 || json_get_int(&offs->items[1], &e) < 0 || b < 0 || e < b) {
            kc_fail("%s: tensor %s has bad data_offsets", path, name);
            goto fail;
        }
        if ((uint64_t)e > buf_size) {
            kc_fail("%s: tensor %s: data_offsets [%lld, %lld] overrun the %llu-byte data buffer (truncated file?)", path, name,
                    (long long)b, (long long)e, (unsigned long long)buf_size);
            goto fail;
        }
        int64_t nbytes;
        if (__builtin_mul_overflow(t->numel, (int64_t)es, &nbytes) || nbytes != e - b) {
            kc_fail("%s: tensor %s: data_offsets hold %lld bytes, its shape and dtype need %lld", path, name,
                    (long long)(e - b), (long long)nbytes);
            goto fail;
        }
        t->data = buf + b;
        t->nbytes = (uint64_t)nbytes;
    }
    json_free(&root);
    return 0;
fail:
    json_free(&root);
    st_close(f);
    return -1;
}

int st_tensor_f32(const st_file *f, const st_tensor *t, float **out)
{
    if (t->dtype != PK_F32 && t->dtype != PK_F16 && t->dtype != PK_BF16)
        return kc_fail("%s: tensor %s is %s, not F32, F16 or BF16", f->path, t->name, t->dtype_name);
    int64_t stride[8];
    int64_t s = 1;
    for (int d = t->ndim - 1; d >= 0; d--) {
        stride[d] = s;
        s *= t->shape[d] ? t->shape[d] : 1;
    }
    float *x = kc_malloc((size_t)(t->numel ? t->numel : 1) * sizeof *x);
    if (kc_strided_f32(t->data, t->numel, t->dtype, 0, t->ndim, t->shape, stride, x) < 0) {
        free(x);
        return kc_fail_prefix("%s: tensor %s", f->path, t->name);
    }
    *out = x;
    return 0;
}

void st_close(st_file *f)
{
    for (int i = 0; i < f->n; i++) free(f->t[i].name);
    free(f->t);
    for (int i = 0; i < f->n_meta; i++) free(f->meta_key[i]), free(f->meta_value[i]);
    free(f->meta_key);
    free(f->meta_value);
    memset(f, 0, sizeof *f);
}

const char *st_meta(const st_file *f, const char *key)
{
    for (int i = 0; i < f->n_meta; i++)
        if (!strcmp(f->meta_key[i], key)) return f->meta_value[i];
    return NULL;
}

/* ---- writing ---------------------------------------------------------------------------------- */

static void json_str(kc_buf *b, const char *s)
{
    kc_buf_printf(b, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') kc_buf_printf(b, "\\%c", *p);
        else if (*p < 0x20) kc_buf_printf(b, "\\u%04x", *p);
        else kc_buf_printf(b, "%c", *p);
    }
    kc_buf_printf(b, "\"");
}

static int cmp_out(const void *a, const void *b)
{
    return strcmp((*(const st_out_tensor *const *)a)->name, (*(const st_out_tensor *const *)b)->name);
}

static int cmp_meta(const void *a, const void *b) { return strcmp(**(const char *const *const *)a, **(const char *const *const *)b); }

static int write_all(int fd, const void *data, size_t size)
{
    const uint8_t *p = data;
    while (size > 0) {
        ssize_t w = write(fd, p, size);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += w;
        size -= (size_t)w;
    }
    return 0;
}

int st_write_f32(const char *path, const st_out_tensor *t, int n, const char *const *meta, int n_meta)
{
    const st_out_tensor **order = kc_malloc((size_t)(n ? n : 1) * sizeof *order);
    const char *const **mo = kc_malloc((size_t)(n_meta ? n_meta : 1) * sizeof *mo);
    for (int i = 0; i < n; i++) order[i] = &t[i];
    for (int i = 0; i < n_meta; i++) mo[i] = &meta[2 * i];
    qsort(order, (size_t)n, sizeof *order, cmp_out);
    qsort(mo, (size_t)n_meta, sizeof *mo, cmp_meta);
    int rc = 0;
    for (int i = 1; i < n && rc == 0; i++)
        if (!strcmp(order[i]->name, order[i - 1]->name)) rc = kc_fail("%s: tensor %s given twice", path, order[i]->name);
    for (int i = 1; i < n_meta && rc == 0; i++)
        if (!strcmp(mo[i][0], mo[i - 1][0])) rc = kc_fail("%s: metadata key %s given twice", path, mo[i][0]);
    for (int i = 0; i < n && rc == 0; i++)
        if (!strcmp(order[i]->name, "__metadata__") || order[i]->ndim < 0 || order[i]->ndim > 8)
            rc = kc_fail("%s: tensor %s: bad name or dimension count", path, order[i]->name);
    kc_buf h = {0};
    uint64_t offset = 0;
    kc_buf_printf(&h, "{");
    if (n_meta) {
        kc_buf_printf(&h, "\"__metadata__\":{");
        for (int i = 0; i < n_meta; i++) {
            if (i) kc_buf_printf(&h, ",");
            json_str(&h, mo[i][0]);
            kc_buf_printf(&h, ":");
            json_str(&h, mo[i][1]);
        }
        kc_buf_printf(&h, "}");
    }
    for (int i = 0; i < n && rc == 0; i++) {
        uint64_t numel = 1;
        if (n_meta || i) kc_buf_printf(&h, ",");
        json_str(&h, order[i]->name);
        kc_buf_printf(&h, ":{\"dtype\":\"F32\",\"shape\":[");
        for (int d = 0; d < order[i]->ndim; d++) {
            kc_buf_printf(&h, "%s%lld", d ? "," : "", (long long)order[i]->shape[d]);
            numel *= (uint64_t)order[i]->shape[d];
        }
        kc_buf_printf(&h, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)offset,
                      (unsigned long long)(offset + 4 * numel));
        offset += 4 * numel;
    }
    kc_buf_printf(&h, "}");
    while (h.n % 8) kc_buf_printf(&h, " ");
    char *tmp = kc_strfmt("%s.tmp", path);
    int fd = -1;
    if (rc == 0) {
        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) rc = kc_fail("%s: cannot create (%s)", tmp, strerror(errno));
    }
    if (rc == 0) {
        uint8_t len[8];
        for (int k = 0; k < 8; k++) len[k] = (uint8_t)((uint64_t)h.n >> (8 * k));
        if (write_all(fd, len, 8) < 0 || write_all(fd, h.s, h.n) < 0) rc = -1;
        enum { CHUNK = 1 << 16 };
        uint8_t *buf = kc_malloc(4 * CHUNK);
        for (int i = 0; i < n && rc == 0; i++) {
            uint64_t numel = 1;
            for (int d = 0; d < order[i]->ndim; d++) numel *= (uint64_t)order[i]->shape[d];
            for (uint64_t j = 0; j < numel && rc == 0; j += CHUNK) {
                uint64_t m = numel - j < CHUNK ? numel - j : CHUNK;
                for (uint64_t k = 0; k < m; k++) {
                    uint32_t u;
                    memcpy(&u, &order[i]->data[j + k], 4);
                    for (int q = 0; q < 4; q++) buf[4 * k + (uint64_t)q] = (uint8_t)(u >> (8 * q));
                }
                if (write_all(fd, buf, 4 * m) < 0) rc = -1;
            }
        }
        free(buf);
        if (rc < 0) kc_fail("%s: write failed (%s)", tmp, strerror(errno));
        if (rc == 0 && fsync(fd) != 0) rc = kc_fail("%s: write failed (%s)", tmp, strerror(errno));
        if (close(fd) != 0 && rc == 0) rc = kc_fail("%s: write failed (%s)", tmp, strerror(errno));
        if (rc == 0 && rename(tmp, path) != 0) rc = kc_fail("%s: cannot rename into place (%s)", path, strerror(errno));
        if (rc < 0) unlink(tmp);
    }
    free(tmp);
    free(h.s);
    free(order);
    free(mo);
    return rc;
}
