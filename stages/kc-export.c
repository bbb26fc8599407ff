/* stages/kc-export.c — a masks cache as PNG masks and a COCO JSON (eval/export/export.h).
 *
 *   kc-export --masks FILE --setting ID --images DATASET --out DIR [--score eigengap|lambda2|none]
 */
#include <stdlib.h>

#include "eval/export/export.h"
#include "pipeline/kc.h"
#include "pipeline/opts.h"

static const char usage[] =
    "usage: kc-export --masks FILE --setting ID --images DATASET --out DIR [--score eigengap|lambda2|none]\n"
    "\n"
    "Writes the masks of one decoder setting as files other tools read, at each image's original\n"
    "size, with exactly the pixels kc-score scores and kc-show draws:\n"
    "  DIR/png/<image id>.png  8-bit palette PNG (the VOC/DAVIS palette): 0 background, 1..N the\n"
    "                          objects (label k: the decoder's round k)\n"
    "  DIR/coco.json           COCO: images (ids 1..n by image id), annotations (one per object,\n"
    "                          ids 1..m) with segmentation as compressed RLE (pycocotools' string),\n"
    "                          area, bbox [x, y, w, h], iscrowd 0, category_id 1, score; categories\n"
    "                          [{\"id\": 1, \"name\": \"object\"}]\n"
    "Nothing is written unless every image is found at the size its masks were made from; the\n"
    "files appear together at the end.\n"
    "\n"
    "  --masks FILE      a masks cache (kc-decode --out, or kc-refine's pixel masks)\n"
    "  --setting ID      a setting id under /masks, e.g. t0.15-bin-mean-corners-n3\n"
    "  --images DATASET  where the images are: dir:DIR, list:FILE, voc:ROOT:SPLIT, davis:ROOT:SPLIT\n"
    "  --out DIR         output folder (created)\n"
    "  --score S         the annotations' score, from the decoder's record of the object's round:\n"
    "                    eigengap (default; larger = a clearer cut), lambda2 (the normalized cut's\n"
    "                    value as it is: smaller is better) or none.  Masks without the record\n"
    "                    (attention-mass stacks) get no score.\n"
    "\n"
    "example:\n"
    "  kc-export --masks work/cache/color/photos/masks-t0.15-bin-mean-corners-n3.h5 \\\n"
    "            --setting t0.15-bin-mean-corners-n3 --images dir:photos --out export/\n";

static int read_score(const opts_option *opt, const char *v) { return export_score_parse(v, opt->target); }

int main(int argc, char **argv)
{
    kc_set_prog("kc-export");
    kc_set_cmdline(argc, argv);
    export_request q = {.score = EXPORT_SCORE_EIGENGAP};
    const opts_option options[] = {{"--masks", .value = &q.masks},     {"--setting", .value = &q.setting},
                                   {"--images", .value = &q.images},   {"--out", .value = &q.out},
                                   {"--score", .read = read_score, .target = &q.score}, {0}};
    const opts_cli cli = {.usage = usage, .options = options};
    int rc = opts_parse(&cli, argc, argv);
    if (rc < 0) kc_die();
    if (rc != OPTS_OK) exit(opts_usage(&cli, rc));
    if (!q.masks || !q.setting || !q.images || !q.out)
        kc_die_msg("--masks, --setting, --images and --out are required (see --help)");
    if (export_masks(&q) < 0) kc_die();
    return 0;
}
