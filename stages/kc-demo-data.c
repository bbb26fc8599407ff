/* stages/kc-demo-data.c — writes the demo's synthetic VOC-layout scenes and DAVIS-layout videos. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "datasets/demo_gen.h"
#include "pipeline/kc.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: kc-demo-data --out DIR [--seed S] [--train N] [--val N] [--videos N] [--frames N]\n"
               "\n"
               "Writes DIR/voc (VOC layout: scenes, object and class masks with void bands, XML boxes,\n"
               "train and val lists) and DIR/davis (DAVIS-2017 layout: short videos with moving objects\n"
               "and their annotations).  The same seed gives the same files.\n"
               "\n"
               "example:\n"
               "  kc-demo-data --out demo/data\n");
}

int main(int argc, char **argv)
{
    kc_set_prog("kc-demo-data");
    const char *out = NULL;
    unsigned seed = 2026;
    int n_train = 16, n_val = 16, n_videos = 2, n_frames = 12;
    static struct option opts[] = {{"out", 1, 0, 'o'},    {"seed", 1, 0, 's'},   {"train", 1, 0, 't'},
                                   {"val", 1, 0, 'v'},    {"videos", 1, 0, 'V'}, {"frames", 1, 0, 'f'},
                                   {"help", 0, 0, 'h'},   {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 's': seed = (unsigned)strtoul(optarg, NULL, 10); break;
        case 't': n_train = atoi(optarg); break;
        case 'v': n_val = atoi(optarg); break;
        case 'V': n_videos = atoi(optarg); break;
        case 'f': n_frames = atoi(optarg); break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (!out) kc_die_msg("--out DIR is required (see --help)");
    if (n_train < 1 || n_val < 1 || n_videos < 1 || n_frames < 3 || n_train + n_val > 100000)
        kc_die_msg("need at least 1 train and 1 val scene, 1 video and 3 frames");
    double t0 = kc_now();
    if (demo_generate(out, seed, n_train, n_val, n_videos, n_frames) < 0) kc_die();
    kc_info("wrote %d scenes and %d videos of %d frames to %s in %.1fs", n_train + n_val, n_videos, n_frames, out,
            kc_now() - t0);
    return 0;
}
