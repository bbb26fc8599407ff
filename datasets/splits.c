/* datasets/splits.c — split lists and the selection split.  See splits.h. */
#include "datasets/splits.h"

#include <stdlib.h>
#include <string.h>

#include "pipeline/kc.h"
#include "pipeline/sha256.h"

void split_free(char **ids, int n)
{
    for (int i = 0; i < n; i++) free(ids[i]);
    free(ids);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int split_read(const char *path, char ***ids_out, int *n_out)
{
    uint8_t *data;
    size_t size;
    *ids_out = NULL;
    *n_out = 0;
    KC_TRY(kc_read_text(path, &data, &size));
    char **ids = NULL;
    int n = 0, cap = 0, line = 0;
    char *s = (char *)data;
    while (*s) {
        char *e = strchr(s, '\n');
        if (e) *e = 0;
        line++;
        char *a = s, *b = s + strlen(s);
        while (*a == ' ' || *a == '\t' || *a == '\r') a++;
        while (b > a && (b[-1] == ' ' || b[-1] == '\t' || b[-1] == '\r')) b--;
        *b = 0;
        if (*a) {
            if (strpbrk(a, " \t/\\")) {
                kc_fail("%s:%d: bad id '%s' (blanks or slashes inside)", path, line, a);
                split_free(ids, n);
                free(data);
                return -1;
            }
            if (n == cap) {
                cap = cap ? 2 * cap : 256;
                ids = kc_realloc(ids, (size_t)cap * sizeof *ids);
            }
            ids[n++] = kc_strdup(a);
        }
        if (!e) break;
        s = e + 1;
    }
    free(data);
    if (n == 0) {
        free(ids);
        return kc_fail("%s: no ids", path);
    }
    /* duplicates */
    char **sorted = kc_malloc((size_t)n * sizeof *sorted);
    memcpy(sorted, ids, (size_t)n * sizeof *sorted);
    qsort(sorted, (size_t)n, sizeof *sorted, cmp_str);
    for (int i = 1; i < n; i++)
        if (!strcmp(sorted[i - 1], sorted[i])) {
            kc_fail("%s: id '%s' listed twice", path, sorted[i]);
            free(sorted);
            split_free(ids, n);
            return -1;
        }
    free(sorted);
    *ids_out = ids;
    *n_out = n;
    return 0;
}

typedef struct hashed_id {
    char hex[65];
    const char *id;
} hashed_id;

static int cmp_hashed(const void *a, const void *b)
{
    const hashed_id *x = a, *y = b;
    int c = strcmp(x->hex, y->hex);
    return c ? c : strcmp(x->id, y->id);
}

int split_make_selection(const char *train_list, const char *out_dir, int count, char **out_path)
{
    char **ids;
    int n;
    if (out_path) *out_path = NULL;
    if (count <= 0) return kc_fail("selection split: count must be positive (got %d)", count);
    KC_TRY(split_read(train_list, &ids, &n));
    if (n < count) {
        split_free(ids, n);
        return kc_fail("%s: %d ids, fewer than the %d the selection split takes", train_list, n, count);
    }
    hashed_id *h = kc_malloc((size_t)n * sizeof *h);
    for (int i = 0; i < n; i++) {
        kc_sha256_buf_hex(ids[i], strlen(ids[i]), h[i].hex);
        h[i].id = ids[i];
    }
    qsort(h, (size_t)n, sizeof *h, cmp_hashed);
    size_t len = 0;
    for (int i = 0; i < count; i++) len += strlen(h[i].id) + 1;
    char *text = kc_malloc(len + 1), *p = text;
    for (int i = 0; i < count; i++) {
        size_t k = strlen(h[i].id);
        memcpy(p, h[i].id, k);
        p[k] = '\n';
        p += k + 1;
    }
    *p = 0;
    free(h);
    split_free(ids, n);
    char *path = kc_strfmt("%s/select%d.txt", out_dir, count);
    char *hash_path = kc_strfmt("%s.sha256", path);
    char hex[65];
    kc_sha256_buf_hex(text, len, hex);
    char *hash_line = kc_strfmt("%s  select%d.txt\n", hex, count);
    int rc = kc_mkdirs(out_dir);
    if (rc == 0) rc = kc_write_file_atomic(path, text, len);
    if (rc == 0) rc = kc_write_file_atomic(hash_path, hash_line, strlen(hash_line));
    free(text);
    free(hash_line);
    free(hash_path);
    if (rc == 0 && out_path)
        *out_path = path;
    else
        free(path);
    return rc < 0 ? -1 : 0;
}
