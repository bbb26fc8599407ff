/* eval/davis/propagate_run.h — a DAVIS-2017 label propagation run over a features cache (kc-propagate):
 * every sequence of a split, written as palette PNGs, resumable and shardable.
 *
 * For every sequence of DAVIS/ImageSets/2017/<split>.txt (with a shard, only its slice of the
 * sequences: whole videos, the slice rule of pipeline/cache/shard.h): the first frame's
 * annotation is copied, every later frame gets the propagated labels (eval/davis/propagate.h) of the
 * features /features/<kind>/<sequence>/<frame>, as palette PNGs OUT/<seq>/<frame>.png, the
 * layout kc-davis and the official evaluator read.  The soft labels are upsampled by the patch the
 * cache records (its grid times the patch is the short480 image the features saw, 840 x 490 for an
 * 854 x 480 frame with patch 14), not by a fixed 16.
 *
 * Resuming.  Each sequence is written into OUT/<seq>.partial/ and renamed when complete: a rerun
 * skips finished sequences and redoes a partial one from scratch.  OUT/propagate.json records the
 * settings (code version, features and their content_hash, kind, split, prop_config) of every
 * finished sequence in OUT: one record per folder, which every finished sequence obeys.  An OUT
 * that records other settings (or none) is taken over when it holds no finished sequence; when
 * it does, it is refused, or with replace its results are discarded first (every finished and
 * partial sequence, and kc-davis's global_results-*.csv/.json and per-sequence_results-*.csv,
 * which scored them), then the run proceeds.  One run per OUT holds OUT's lock (kc-davis takes the
 * same); a shard holds its own (propagate-i-of-n), as shards write distinct sequences of the same
 * OUT at once.  All of them, and kc-davis, hold OUT/.propagate.keycut.lock (PROP_COMMIT_LOCK) for
 * the moments in which propagate.json is checked or changed and results are discarded, and in
 * which a sequence is renamed into place (after checking that propagate.json still records this
 * run's settings).  So n shards of the same settings with replace, started at once: the first to
 * take the commit lock discards the other settings' results and records its own; the others find
 * their settings recorded and discard nothing, so a shard never removes a sequence another shard
 * of the same settings wrote.  A run whose settings another run replaced while it ran stops at its
 * next commit (or at its end) with an error.
 *
 *     prop_run_config c = {.features = "tokens.h5", .davis = "/data/DAVIS", .split = "val",
 *                          .out = "results/davis17-val", .kind = "tokens", .shard = KC_SHARD_NONE};
 *     prop_config_default(&c.prop);
 *     if (prop_config_check(&c.prop) < 0 || prop_run(&c) < 0) kc_die();
 */
#ifndef KC_PROPAGATE_RUN_H
#define KC_PROPAGATE_RUN_H

#include "eval/davis/propagate.h"
#include "pipeline/cache/shard.h"

typedef struct prop_run_config {
    const char *features; /* a kc-extract cache with ids <sequence>/<frame> */
    const char *davis;    /* the DAVIS root */
    const char *split;    /* ImageSets/2017/<split>.txt */
    const char *out;      /* the results folder */
    const char *kind;     /* "tokens" or "keys" */
    prop_config prop;     /* checked by the caller (prop_config_check); its patch is replaced by the
                           * features cache's "patch" attribute when there is one */
    int patch_given;      /* 1: prop.patch was asked for (kc-propagate --patch): the cache's must equal it */
    kc_shard shard;       /* KC_SHARD_NONE: every sequence */
    int replace;          /* 1: discard the results of other settings or features (kc-propagate --replace) */
} prop_run_config;

/* The lock file, in OUT, of propagate.json and the set of finished sequences (held for moments). */
#define PROP_COMMIT_LOCK ".propagate.keycut.lock"

/* Propagates every (remaining) sequence, printing progress and a summary (kc_info).  0, or -1
 * with the error set (naming the file); finished sequences stay. */
int prop_run(const prop_run_config *c);
#endif
