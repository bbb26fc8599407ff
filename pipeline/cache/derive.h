/* pipeline/cache/derive.h — the frame of a stage that derives one cache from another (kc-center,
 * kc-decode, kc-refine): open the input cache, take the `--shard i/n` slice of its images, inherit
 * its provenance, and finish the output cache.
 *
 * Provenance of the derived cache, in this order: the input's root attributes except the
 * reserved ones (prov_is_reserved: format, created, content_hash, command, ...) and the shard
 * attributes (shard_prov_key: a shard's slice is described afresh); then `command` (this run's
 * command line); then what the stage adds; last, when sharded, the shard attributes of this run
 * (pipeline/cache/shard.h).
 *
 *     kc_shard shard = KC_SHARD_NONE;   // shard_parse(...) when --shard is given
 *     derive_input in;
 *     if (derive_open(&in, "keys.h5", CACHE_FORMAT_FEATURES, &shard) < 0) kc_die();
 *     ... check the input holds what the stage reads (in.r.index.ids[0] is the first image) ...
 *     derive_slice(&in);                 // in.r.index is now the shard's slice
 *     ... fingerprint (with in.hash), cache_writer_open(&w, ...) ...
 *     for (int b = 0; b < n_batches; b++) {
 *         int i0, i1;
 *         if (!derive_batch_todo(&w, &p, b, BATCH, n, &i0, &i1)) continue;   // resumed
 *         ... images [i0, i1) into piece b ...
 *     }
 *     cache_prov prov = {0, NULL, NULL};
 *     derive_prov(&prov, &in);           // inherited attributes and command
 *     prov_set(&prov, "input", "keys.h5");
 *     if (derive_finish(&in, &w, &prov, BATCH, out) < 0) kc_die();   // frees prov, w, closes in.r
 */
#ifndef KC_DERIVE_H
#define KC_DERIVE_H

#include "pipeline/cache/cache.h"
#include "pipeline/progress.h"
#include "pipeline/cache/shard.h"

typedef struct derive_input {
    cache_reader r;      /* the input; after derive_slice its index is the shard's slice */
    kc_shard shard;
    const char *hash;    /* the input's content hash, "" when it has none (never NULL) */
    char full_ids[65];   /* shard_ids_hash of the FULL input's ids (set by derive_slice) */
    int full_n;          /* number of images of the FULL input (set by derive_slice) */
} derive_input;

/* Opens the input cache (cache_open with format) and checks that a sharded run reads a full
 * cache (shard_check_input).  0, or -1 with the error set (naming the file). */
int derive_open(derive_input *in, const char *path, const char *format, const kc_shard *shard);
/* Notes the full input's ids (full_ids, full_n), then keeps only the shard's slice of in->r.index
 * (no-op when not sharded). */
void derive_slice(derive_input *in);
/* Adds to prov the attributes inherited from the input, then `command`. */
void derive_prov(cache_prov *prov, const derive_input *in);
/* Batch b of n images, batch images per piece: [*i0, *i1) = [b batch, min((b + 1) batch, n)).
 * Returns 1 when piece b is still to be written; 0 when w already holds it (resumed from
 * OUT.partial/), whose images then count in p as skipped. */
int derive_batch_todo(const cache_writer *w, progress *p, int b, int batch, int n, int *i0, int *i1);
/* After the images of a batch ran in parallel (one image per thread): rc (count) their results,
 * err (count) the message of each that failed.  -1 with the first failed image's message set, or 0
 * when none failed. */
int derive_batch_error(const int *rc, char (*err)[1024], int count);
/* Adds the shard attributes (batch: images per piece; out: the output path), merges the pieces
 * into out (cache_writer_finish), then frees prov and w and closes the input.  0, or -1 with the
 * error set (nothing freed then: the caller dies). */
int derive_finish(derive_input *in, cache_writer *w, cache_prov *prov, int batch, const char *out);
#endif
