/* stages/kc-merge.c — join the shard caches of one stage into the cache its single run writes.
 *
 *   kc-merge [--remove-shards] OUT.h5 SHARD.h5...
 *   kc-merge --verify OUT.h5 SHARD.h5...
 *
 * The shards (kc-extract / kc-center / kc-decode --shard i/n, any order on the command line) must
 * be exactly 1/n .. n/n, each once, with the same provenance apart from `command`, `created`,
 * `content_hash` and the shard attributes (pipeline/cache/shard.h).  The merged cache equals the
 * single run's but for `created`; `command` is the single-run-equivalent command.  The merge, its
 * checks and the verification are pipeline/cache/merge.h's; this file reads the command line.
 */
#include <stdio.h>
#include <stdlib.h>

#include "pipeline/cache/merge.h"
#include "pipeline/kc.h"
#include "pipeline/opts.h"

static const char usage[] =
    "usage: kc-merge [--remove-shards] OUT.h5 SHARD.h5...\n"
    "       kc-merge --verify OUT.h5 SHARD.h5...\n"
    "\n"
    "Joins the n shard caches of one stage run with --shard i/n (1/n .. n/n, each exactly once,\n"
    "in any order) into OUT, the cache the stage writes without --shard: the same datasets,\n"
    "values, attributes and content_hash; only the creation time differs, and `command` is the\n"
    "single-run-equivalent command (--shard dropped, the shard's path replaced by OUT).  Shards of\n"
    "different inputs, settings or code versions, or an incomplete or duplicated set, are refused.\n"
    "Written atomically; an interrupted merge resumes from OUT.partial/.\n"
    "\n"
    "  --verify          only check an existing OUT against the shards: image count, index, OUT's\n"
    "                    content_hash recomputed from its data, and each shard's content_hash\n"
    "                    recomputed from OUT's slice of its images\n"
    "  --remove-shards   merge, run that check, then delete the shard files (and their folder when\n"
    "                    empty); if the check fails, OUT is deleted and the shards are kept\n"
    "\n"
    "example:\n"
    "  for i in 1 2 3 4; do kc-extract --model color --dataset voc:/data/VOC2012:val --shard $i/4 \\\n"
    "      --out keys.h5.shards/$i-of-4.h5; done\n"
    "  kc-merge keys.h5 keys.h5.shards/*-of-4.h5\n";

/* --verify and --remove-shards (flags before the paths): refused together as soon as both are seen */
typedef struct merge_flags {
    int verify_only, remove_shards;
} merge_flags;

static int read_flag(const opts_option *opt, const char *value)
{
    (void)value;
    const merge_flags *f = opt->target;
    if (f->verify_only && f->remove_shards) return kc_fail("--verify and --remove-shards exclude each other");
    return 0;
}

int main(int argc, char **argv)
{
    kc_set_prog("kc-merge");
    kc_set_cmdline(argc, argv);
    merge_flags f = {0, 0};
    const char **paths = kc_calloc((size_t)argc, sizeof *paths); /* OUT.h5 SHARD.h5... */
    int n_paths = 0;
    const opts_option options[] = {
        {"--verify", .flag = &f.verify_only, .read = read_flag, .target = &f},
        {"--remove-shards", .flag = &f.remove_shards, .read = read_flag, .target = &f}, {0}};
    const opts_cli cli = {.usage = usage, .options = options, .syntax = OPTS_ARGS, .args = paths, .n_args = &n_paths,
                          .min_args = 2, .max_args = OPTS_ANY, .options_first = 1};
    int rc = opts_parse(&cli, argc, argv);
    if (rc < 0) kc_die();
    if (rc != OPTS_OK) exit(opts_usage(&cli, rc));
    merge_mode mode = f.verify_only ? MERGE_VERIFY : f.remove_shards ? MERGE_REMOVE : MERGE_WRITE;
    if (merge_shards(paths[0], paths + 1, n_paths - 1, mode) < 0) kc_die();
    free(paths);
    return 0;
}
