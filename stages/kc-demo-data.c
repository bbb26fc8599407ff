/* stages/kc-demo-data.c — writes the demo's synthetic VOC-layout scenes and DAVIS-layout videos. */
#include <stdio.h>
#include <stdlib.h>

#include "datasets/demo_gen.h"
#include "pipeline/kc.h"
#include "pipeline/opts.h"

static const char usage[] =
    "usage: kc-demo-data --out DIR [--seed S] [--train N] [--val N] [--videos N] [--frames N]\n"
    "\n"
    "Writes DIR/voc (VOC layout: scenes, object and class masks with void bands, XML boxes,\n"
    "train and val lists) and DIR/davis (DAVIS-2017 layout: short videos with moving objects\n"
    "and their annotations).  The same seed gives the same files.\n"
    "\n"
    "example:\n"
    "  kc-demo-data --out demo/data\n";

/* (strtoul, as ever: no check, a bad number reads as 0) */
static int read_seed(const opts_option *opt, const char *value)
{
    *(unsigned *)opt->target = (unsigned)strtoul(value, NULL, 10);
    return 0;
}

int main(int argc, char **argv)
{
    kc_set_prog("kc-demo-data");
    const char *out = NULL;
    unsigned seed = 2026;
    int n_train = 16, n_val = 16, n_videos = 2, n_frames = 12;
    const opts_option options[] = {
        {"--out", .value = &out}, {"--seed", .read = read_seed, .target = &seed},
        {"--train", .read = opts_read_atoi, .target = &n_train}, {"--val", .read = opts_read_atoi, .target = &n_val},
        {"--videos", .read = opts_read_atoi, .target = &n_videos},
        {"--frames", .read = opts_read_atoi, .target = &n_frames}, {0}};
    const opts_cli cli = {.usage = usage, .options = options, .syntax = OPTS_GETOPT, .max_args = OPTS_ANY};
    int rc = opts_parse(&cli, argc, argv);
    if (rc < 0) kc_die();
    if (rc != OPTS_OK) exit(opts_usage(&cli, rc));
    if (!out) kc_die_msg("--out DIR is required (see --help)");
    if (n_train < 1 || n_val < 1 || n_videos < 1 || n_frames < 3 || n_train + n_val > 100000)
        kc_die_msg("need at least 1 train and 1 val scene, 1 video and 3 frames");
    double t0 = kc_now();
    if (demo_generate(out, seed, n_train, n_val, n_videos, n_frames) < 0) kc_die();
    kc_info("wrote %d scene%s and %d video%s of %d frame%s to %s in %.1fs", n_train + n_val, kc_s(n_train + n_val),
            n_videos, kc_s(n_videos), n_frames, kc_s(n_frames), out, kc_now() - t0);
    return 0;
}
