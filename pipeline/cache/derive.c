/* pipeline/cache/derive.c — see derive.h. */
#include "pipeline/cache/derive.h"

#include "pipeline/kc.h"

int derive_open(derive_input *in, const char *path, const char *format, const kc_shard *shard)
{
    in->shard = *shard;
    in->full_ids[0] = 0;
    in->full_n = 0;
    if (cache_open(&in->r, path, format) < 0 || shard_check_input(&in->shard, &in->r) < 0) return -1;
    const char *hash = cache_content_hash(&in->r);
    in->hash = hash ? hash : "";
    return 0;
}

void derive_slice(derive_input *in)
{
    in->full_n = in->r.index.n;
    shard_ids_hash((const char *const *)in->r.index.ids, in->r.index.n, in->full_ids);
    shard_index(&in->shard, &in->r.index);
}

void derive_prov(cache_prov *prov, const derive_input *in)
{
    const cache_prov *from = &in->r.prov;
    for (int k = 0; k < from->n; k++)
        if (!prov_is_reserved(from->key[k]) && !shard_prov_key(from->key[k])) prov_set(prov, from->key[k], from->value[k]);
    prov_set(prov, "command", kc_cmdline());
}

int derive_batch_todo(const cache_writer *w, progress *p, int b, int batch, int n, int *i0, int *i1)
{
    *i0 = b * batch;
    *i1 = *i0 + batch < n ? *i0 + batch : n;
    if (!cache_writer_have(w, b)) return 1;
    progress_skip(p, *i1 - *i0);
    return 0;
}

int derive_batch_error(const int *rc, char (*err)[1024], int count)
{
    for (int k = 0; k < count; k++)
        if (rc[k] < 0) {
            kc_set_error(err[k]);
            return -1;
        }
    return 0;
}

int derive_finish(derive_input *in, cache_writer *w, cache_prov *prov, int batch, const char *out)
{
    shard_prov(&in->shard, prov, in->full_ids, in->full_n, batch, out);
    if (cache_writer_finish(w, &in->r.index, prov) < 0) return -1;
    prov_free(prov);
    cache_writer_free(w);
    cache_close(&in->r);
    return 0;
}
