/* stages/kc-propagate.c — DINO's DAVIS-2017 label propagation from a features cache.
 *
 *   kc-propagate --features FILE --davis ROOT --split NAME --out DIR [--kind tokens|keys]
 *                [--window 12] [--topk 5] [--temperature 0.1] [--context 7] [--patch P]
 *                [--shard i/n] [--replace]
 *
 * For every sequence of ROOT/ImageSets/2017/NAME.txt: the first frame's annotation is copied,
 * every later frame gets the propagated labels (eval/davis/propagate.h), as palette PNGs
 * DIR/<seq>/<frame>.png, the layout kc-davis and the official evaluator read.  The run (resume,
 * DIR/propagate.json, --replace, shards, the locks) is eval/davis/propagate_run.h's; this file reads the
 * command line.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/davis/propagate.h"
#include "eval/davis/propagate_run.h"
#include "pipeline/cache/shard.h"
#include "pipeline/kc.h"

static void usage(int status)
{
    fprintf(status ? stderr : stdout,
            "usage: kc-propagate --features FILE --davis ROOT --split NAME --out DIR [--kind tokens|keys]\n"
            "                    [--window 12] [--topk 5] [--temperature 0.1] [--context 7] [--patch P]\n"
            "                    [--shard i/n] [--replace]\n"
            "\n"
            "Propagates each DAVIS sequence's first-frame annotation through the video with the frozen\n"
            "features of FILE (a kc-extract cache with ids <sequence>/<frame>), DINO's protocol: context =\n"
            "the first frame and the --context most recent frames, affinity exp(cos / temperature) within\n"
            "+-window patches, the top-k sources, x patch bilinear upsampling, per-channel min-max, argmax.\n"
            "The patch is the features cache's (its 'patch' attribute; --patch, when given, must equal it;\n"
            "16 for a cache that records none).\n"
            "Writes palette PNGs DIR/<sequence>/<frame>.png and DIR/propagate.json (the settings).\n"
            "Finished sequences are kept: rerunning the command resumes.  Default kind: tokens.\n"
            "A DIR holding results of other features or settings (another propagate.json) is refused;\n"
            "--replace discards them instead (every sequence, and kc-davis's scores of them), then runs;\n"
            "results of these same features and settings are kept and resumed as always.\n"
            "--shard i/n propagates only slice i of n of the sequences (whole videos, pipeline/cache/shard.h);\n"
            "the n shards may run at once into the same DIR, which then holds every sequence (with\n"
            "--replace, the first shard discards the old results and the others keep what it recorded).\n"
            "\n"
            "example:\n"
            "  kc-propagate --features cache/dino/davis17-val/tokens.h5 --davis /data/DAVIS --split val \\\n"
            "               --out results/dino/davis17-val\n"
            "  kc-davis --results results/dino/davis17-val --davis /data/DAVIS --split val\n");
    exit(status);
}

static int parse_int(const char *opt, const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || end == s || v < -1000000 || v > 1000000) return kc_fail("%s %s: not an integer", opt, s);
    *out = (int)v;
    return 0;
}

int main(int argc, char **argv)
{
    kc_set_prog("kc-propagate");
    kc_keep_freed_memory();
    kc_set_cmdline(argc, argv);
    prop_run_config c = {.kind = "tokens", .shard = KC_SHARD_NONE};
    prop_config_default(&c.prop);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) usage(0);
        if (!strcmp(a, "--replace")) {
            c.replace = 1;
            continue;
        }
        if (i + 1 >= argc) kc_die_msg("%s needs a value (see --help)", a);
        const char *val = argv[++i];
        if (!strcmp(a, "--features")) c.features = val;
        else if (!strcmp(a, "--davis")) c.davis = val;
        else if (!strcmp(a, "--split")) c.split = val;
        else if (!strcmp(a, "--out")) c.out = val;
        else if (!strcmp(a, "--shard")) {
            if (shard_parse(val, &c.shard) < 0) kc_die();
        }
        else if (!strcmp(a, "--kind")) {
            if (strcmp(val, "tokens") && strcmp(val, "keys")) kc_die_msg("--kind %s: must be tokens or keys", val);
            c.kind = val;
        } else if (!strcmp(a, "--window")) {
            if (parse_int(a, val, &c.prop.window) < 0) kc_die();
        } else if (!strcmp(a, "--topk")) {
            if (parse_int(a, val, &c.prop.topk) < 0) kc_die();
        } else if (!strcmp(a, "--context")) {
            if (parse_int(a, val, &c.prop.context) < 0) kc_die();
        } else if (!strcmp(a, "--patch")) {
            if (parse_int(a, val, &c.prop.patch) < 0) kc_die();
            c.patch_given = 1;
        } else if (!strcmp(a, "--temperature")) {
            char *end;
            c.prop.temperature = strtod(val, &end);
            if (*end || end == val) kc_die_msg("--temperature %s: not a number", val);
        } else
            kc_die_msg("unknown option %s (see --help)", a);
    }
    if (!c.features || !c.davis || !c.split || !c.out)
        kc_die_msg("--features, --davis, --split and --out are required (see --help)");
    if (prop_config_check(&c.prop) < 0 || prop_run(&c) < 0) kc_die();
    return 0;
}
