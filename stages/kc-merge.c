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
#include <string.h>

#include "pipeline/cache/merge.h"
#include "pipeline/kc.h"

static void usage(int status)
{
    fprintf(status ? stderr : stdout,
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
            "  kc-merge keys.h5 keys.h5.shards/*-of-4.h5\n");
    exit(status);
}

int main(int argc, char **argv)
{
    kc_set_prog("kc-merge");
    kc_set_cmdline(argc, argv);
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) usage(0);
    int verify_only = 0, remove_shards = 0;
    while (argc > 1 && (!strcmp(argv[1], "--verify") || !strcmp(argv[1], "--remove-shards"))) {
        if (!strcmp(argv[1], "--verify")) verify_only = 1;
        else remove_shards = 1;
        argv++;
        argc--;
    }
    if (verify_only && remove_shards) kc_die_msg("--verify and --remove-shards exclude each other");
    if (argc < 3) usage(2);
    for (int i = 1; i < argc; i++)
        if (argv[i][0] == '-') kc_die_msg("unknown option %s (see --help)", argv[i]);
    merge_mode mode = verify_only ? MERGE_VERIFY : remove_shards ? MERGE_REMOVE : MERGE_WRITE;
    if (merge_shards(argv[1], (const char *const *)argv + 2, argc - 2, mode) < 0) kc_die();
    return 0;
}
