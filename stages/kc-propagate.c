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
#include "pipeline/opts.h"

static const char usage[] =
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
    "  kc-davis --results results/dino/davis17-val --davis /data/DAVIS --split val\n";

static int parse_int(const char *opt, const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || end == s || v < -1000000 || v > 1000000) return kc_fail("%s %s: not an integer", opt, s);
    *out = (int)v;
    return 0;
}

static int read_int(const opts_option *opt, const char *value) { return parse_int(opt->name, value, opt->target); }

static int read_patch(const opts_option *opt, const char *value)
{
    prop_run_config *c = opt->target;
    KC_TRY(parse_int(opt->name, value, &c->prop.patch));
    c->patch_given = 1;
    return 0;
}

static int read_temperature(const opts_option *opt, const char *value)
{
    char *end;
    *(double *)opt->target = strtod(value, &end);
    if (*end || end == value) return kc_fail("--temperature %s: not a number", value);
    return 0;
}

static int read_kind(const opts_option *opt, const char *value)
{
    if (strcmp(value, "tokens") && strcmp(value, "keys")) return kc_fail("--kind %s: must be tokens or keys", value);
    *(const char **)opt->target = value;
    return 0;
}

static int read_shard(const opts_option *opt, const char *value) { return shard_parse(value, opt->target); }

int main(int argc, char **argv)
{
    kc_set_prog("kc-propagate");
    kc_keep_freed_memory();
    kc_set_cmdline(argc, argv);
    prop_run_config c = {.kind = "tokens", .shard = KC_SHARD_NONE};
    prop_config_default(&c.prop);
    const opts_option options[] = {
        {"--replace", .flag = &c.replace}, {"--features", .value = &c.features}, {"--davis", .value = &c.davis},
        {"--split", .value = &c.split}, {"--out", .value = &c.out}, {"--shard", .read = read_shard, .target = &c.shard},
        {"--kind", .read = read_kind, .target = &c.kind}, {"--window", .read = read_int, .target = &c.prop.window},
        {"--topk", .read = read_int, .target = &c.prop.topk},
        {"--context", .read = read_int, .target = &c.prop.context}, {"--patch", .read = read_patch, .target = &c},
        {"--temperature", .read = read_temperature, .target = &c.prop.temperature}, {0}};
    const opts_cli cli = {.usage = usage, .options = options};
    int rc = opts_parse(&cli, argc, argv);
    if (rc < 0) kc_die();
    if (rc != OPTS_OK) exit(opts_usage(&cli, rc));
    if (!c.features || !c.davis || !c.split || !c.out)
        kc_die_msg("--features, --davis, --split and --out are required (see --help)");
    if (prop_config_check(&c.prop) < 0 || prop_run(&c) < 0) kc_die();
    return 0;
}
