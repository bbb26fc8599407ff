/* pipeline/cache/shard.c — see shard.h. */
#include "pipeline/cache/shard.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/kc.h"
#include "pipeline/sha256.h"

const char *const shard_prov_keys[] = {"shard", "shard_images", "shard_ids", "shard_batch", "shard_out", NULL};

int shard_parse(const char *s, kc_shard *sh)
{
    char *end;
    errno = 0;
    long i = strtol(s, &end, 10);
    if (errno || end == s || *end != '/') return kc_fail("--shard %s: expected i/n, e.g. 3/64", s);
    const char *t = end + 1;
    long n = strtol(t, &end, 10);
    if (errno || end == t || *end) return kc_fail("--shard %s: expected i/n, e.g. 3/64", s);
    if (n < 1 || n > 100000 || i < 1 || i > n) return kc_fail("--shard %s: need 1 <= i <= n <= 100000", s);
    sh->index = (int)i;
    sh->count = (int)n;
    return 0;
}

size_t shard_unit_len(const char *id)
{
    const char *slash = strrchr(id, '/');
    return slash ? (size_t)(slash - id) : strlen(id);
}

static int same_unit(const char *a, const char *b)
{
    size_t la = shard_unit_len(a), lb = shard_unit_len(b);
    return la == lb && !memcmp(a, b, la);
}

int shard_select(const kc_shard *sh, const char *const *ids, int n, int *keep)
{
    if (!shard_active(sh)) {
        for (int i = 0; i < n; i++) keep[i] = 1;
        return n;
    }
    long units = 0;
    for (int i = 0; i < n; i++)
        if (i == 0 || !same_unit(ids[i - 1], ids[i])) units++;
    long first = (long)((long long)(sh->index - 1) * units / sh->count);
    long last = (long)((long long)sh->index * units / sh->count); /* exclusive */
    long u = -1;
    int kept = 0;
    for (int i = 0; i < n; i++) {
        if (i == 0 || !same_unit(ids[i - 1], ids[i])) u++;
        keep[i] = u >= first && u < last;
        kept += keep[i];
    }
    return kept;
}

void shard_ids_hash(const char *const *ids, int n, char hex[65])
{
    kc_sha256 c;
    kc_sha256_init(&c);
    for (int i = 0; i < n; i++) kc_sha256_update(&c, ids[i], strlen(ids[i]) + 1);
    kc_sha256_hex(&c, hex);
}

void shard_index(const kc_shard *sh, cache_index *ix)
{
    if (!shard_active(sh)) return;
    int *keep = kc_malloc((size_t)(ix->n > 0 ? ix->n : 1) * sizeof *keep);
    shard_select(sh, (const char *const *)ix->ids, ix->n, keep);
    int m = 0;
    for (int i = 0; i < ix->n; i++) {
        if (!keep[i]) {
            free(ix->ids[i]);
            continue;
        }
        ix->ids[m] = ix->ids[i];
        ix->grid[2 * m] = ix->grid[2 * i];
        ix->grid[2 * m + 1] = ix->grid[2 * i + 1];
        ix->size[2 * m] = ix->size[2 * i];
        ix->size[2 * m + 1] = ix->size[2 * i + 1];
        if (ix->resized) memmove(ix->resized + 2 * m, ix->resized + 2 * i, 2 * sizeof *ix->resized);
        if (ix->box) memmove(ix->box + 4 * m, ix->box + 4 * i, 4 * sizeof *ix->box);
        m++;
    }
    ix->n = m;
    free(keep);
}

void shard_prov(const kc_shard *sh, cache_prov *prov, const char *full_ids_hash, int full_n, int batch,
                const char *out)
{
    if (!shard_active(sh)) return;
    const char *hex = full_ids_hash;
    prov_setf(prov, "shard", "%d/%d", sh->index, sh->count);
    prov_setf(prov, "shard_images", "%d", full_n);
    prov_set(prov, "shard_ids", hex);
    prov_setf(prov, "shard_batch", "%d", batch);
    prov_set(prov, "shard_out", out);
}

const char *shard_str(const kc_shard *sh, char *buf)
{
    if (!shard_active(sh)) return "-";
    snprintf(buf, 32, "%d/%d", sh->index, sh->count);
    return buf;
}

int shard_prov_key(const char *key)
{
    for (int i = 0; shard_prov_keys[i]; i++)
        if (!strcmp(key, shard_prov_keys[i])) return 1;
    return 0;
}

int shard_check_input(const kc_shard *sh, const cache_reader *r)
{
    const char *s = cache_attr(r, "shard");
    if (shard_active(sh) && s)
        return kc_fail("%s: is shard %s of a cache; a stage run with --shard reads the whole (merged) input: "
                       "join the shards with kc-merge first", r->path, s);
    return 0;
}
