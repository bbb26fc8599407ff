/* pipeline/cache/merge.h — join the shard caches of one stage run into the cache its single run
 * writes (kc-merge).
 *
 * The shards (kc-extract / kc-center / kc-decode --shard i/n, in any order) must be exactly
 * 1/n .. n/n, each once, with the same provenance apart from `command`, `created`,
 * `content_hash`, `products` and the shard attributes (pipeline/cache/shard.h): the same format,
 * code version, inputs, weights and settings.  Anything else is refused with the offending file
 * and attribute.
 *
 * Identity with the single run.  The merged index is the shards' indexes concatenated (shards are
 * contiguous slices, in input order), checked against the full list's count and hash that every
 * shard records.  The datasets are regrouped into the single run's pieces (shard_batch images per
 * piece) and written through the cache's own crash-safe writer (OUT.partial/, then OUT), so
 * datasets, values, dataset attributes, /index and `content_hash` equal the single run's.  Root
 * attributes: those of the shards without the shard ones; `products` the shards' distinct values
 * joined by " | "; `command` the single-run-equivalent command: shard 1's command without
 * `--shard i/n`, with its output path replaced by OUT.  Only `created` differs.
 *
 * Verification (MERGE_VERIFY, and MERGE_REMOVE after writing): OUT's image count and index
 * against the shards', OUT's content_hash recomputed from its data, and each shard's
 * content_hash recomputed from OUT's slice of its images (cache_hash_images).
 *
 *     const char *shards[] = {"keys.h5.shards/1-of-2.h5", "keys.h5.shards/2-of-2.h5"};
 *     if (merge_shards("keys.h5", shards, 2, MERGE_WRITE) < 0) kc_die();
 */
#ifndef KC_MERGE_H
#define KC_MERGE_H

typedef enum merge_mode {
    MERGE_WRITE,  /* write OUT (resuming from OUT.partial/) */
    MERGE_VERIFY, /* only check an existing OUT against the shards */
    MERGE_REMOVE, /* write OUT, verify it, then delete the shard files (and their folder when
                   * empty); a failed check deletes OUT and keeps the shards */
} merge_mode;

/* Merges (or verifies) the n_shards shard caches at shards[] into out, printing what it did
 * (kc_info) and the merge's progress.  0, or -1 with the error set (naming the file). */
int merge_shards(const char *out, const char *const *shards, int n_shards, merge_mode mode);
#endif
