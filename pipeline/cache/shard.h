/* pipeline/cache/shard.h — `--shard i/n`: which images a shard of a stage processes.
 *
 * The slice rule (the same in every stage, so shard i of kc-extract, kc-center, kc-decode and
 * kc-propagate hold the same images):
 *   1. The ids of the full input, in its order, are cut into *units*: a run of consecutive ids
 *      with the same unit key.  The unit key of "<sequence>/<frame>" (DAVIS) is the sequence, of
 *      any other id the id itself.  So a DAVIS video is never split between shards.
 *   2. With U units, shard i of n (1-based) takes units [floor((i-1) U / n), floor(i U / n)).
 * Shards are contiguous, in input order, and their concatenation 1..n is the full input, which is
 * how kc-merge rebuilds the single-run index.  When n > U some shards are empty (they still write
 * an empty shard cache, so a set of shards is always complete).
 *
 * A shard cache carries, besides the single run's provenance, the root attributes
 *   shard          "i/n"
 *   shard_images   number of images of the FULL input
 *   shard_ids      sha256 of the full input's ids (each followed by a NUL)
 *   shard_batch    images per piece of the stage's single run (kc-merge rebuilds those pieces, so
 *                  the merged cache's content_hash equals the single run's)
 *   shard_out      the path the shard was written to (kc-merge replaces it by its own OUT in
 *                  `command`, and drops `--shard i/n`: the single-run-equivalent command)
 *
 *     kc_shard sh = KC_SHARD_NONE;
 *     if (shard_parse(optarg, &sh) < 0) kc_die();
 *     ...
 *     int *keep = kc_malloc(n * sizeof *keep);
 *     shard_select(&sh, (const char *const *)ids, n, keep);   // keep[i] = 1 for this shard's ids
 */
#ifndef KC_SHARD_H
#define KC_SHARD_H

#include <stddef.h>

#include "pipeline/cache/cache.h"

typedef struct kc_shard {
    int index, count; /* 1..count; count == 0: not sharded */
} kc_shard;
#define KC_SHARD_NONE ((kc_shard){0, 0})

/* Parses "i/n" (1 <= i <= n <= 100000).  Errors name the option value. */
int shard_parse(const char *s, kc_shard *sh);
/* 1 when sh selects a slice. */
static inline int shard_active(const kc_shard *sh) { return sh->count > 0; }
/* Length of the unit key of id (the sequence of "<seq>/<frame>", else the whole id). */
size_t shard_unit_len(const char *id);
/* keep[i] = 1 for the ids in sh's slice (all when not sharded); returns how many. */
int shard_select(const kc_shard *sh, const char *const *ids, int n, int *keep);
/* sha256 hex of the ids (each with its NUL). */
void shard_ids_hash(const char *const *ids, int n, char hex[65]);
/* Keeps only sh's slice of an index, in place (no-op when not sharded). */
void shard_index(const kc_shard *sh, cache_index *ix);
/* Records the shard attributes above in prov (no-op when not sharded).  full_ids_hash/full_n:
 * shard_ids_hash and count of the FULL input's ids (taken before slicing); batch: the stage's
 * images per piece; out: the shard's output path. */
void shard_prov(const kc_shard *sh, cache_prov *prov, const char *full_ids_hash, int full_n, int batch,
                const char *out);
/* "i/n" or "-" (for fingerprints); buf of at least 32 bytes. */
const char *shard_str(const kc_shard *sh, char *buf);
/* Names of the shard attributes (NULL-terminated), which kc-merge drops and later stages do not
 * copy from their input. */
extern const char *const shard_prov_keys[];
int shard_prov_key(const char *key);
/* For a stage run with --shard on an input cache: the input must be a full cache (a merged one),
 * not itself a shard; fails with a message naming the file otherwise. */
int shard_check_input(const kc_shard *sh, const cache_reader *r);
#endif
