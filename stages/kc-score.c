/* stages/kc-score.c — VOC Jaccard and CorLoc of every setting in a masks cache: options, usage,
 * exit code.
 *
 *   kc-score --masks FILE --voc ROOT --split FILE --out DIR [--ledger FILE] [--network NAME]
 *   kc-score --boxes-only --masks FILE (--voc ROOT | --coco ROOT) --split FILE --out DIR [--no-hard]
 *   kc-score --make-selection TRAIN_LIST --out DIR [--count N]
 *
 * The runs, their protocols and their outputs are eval/voc/score.h's.  The lock of DIR is taken here,
 * before the options are checked, as it always was: a run on a folder another run holds is refused
 * for that, whatever else is wrong with its options.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/dataset.h"
#include "datasets/splits.h"
#include "eval/voc/score.h"
#include "pipeline/kc.h"
#include "pipeline/lock.h"
#include "pipeline/opts.h"

static const char usage[] =
    "usage: kc-score --masks FILE --voc ROOT --split SPLIT --out DIR [--ledger FILE] [--network NAME]\n"
    "       kc-score --boxes-only --masks FILE (--voc ROOT | --coco ROOT) --split SPLIT --out DIR [--no-hard]\n"
    "                [--box-cache DIR] [--ledger FILE] [--network NAME]\n"
    "       kc-score --make-selection TRAIN_LIST --out DIR [--count N]\n"
    "\n"
    "Scores every setting of a masks cache on VOC ground truth (Jaccard, CorLoc): writes\n"
    "DIR/<setting>.csv and DIR/summary.csv, then appends one line to the ledger\n"
    "(default ./ledger.tsv).  SPLIT with --voc is a file or a split name, found as kc-extract's\n"
    "--dataset voc:ROOT:SPLIT finds it (val: ROOT/ImageSets/Segmentation/val.txt, else Main/val.txt).\n"
    "--make-selection writes the selection split: the first N\n"
    "(default 1000) ids of TRAIN_LIST in sha256 order, as DIR/selectN.txt and its .sha256.\n"
    "Attention-mass masks (kc-decode --kind attn, settings attn-mass<m>) are scored as DINO's\n"
    "authors did: per object the best head's Jaccard (DIR/<setting>.columns.txt says more).\n"
    "--boxes-only scores CorLoc alone by the LOST/TokenCut protocol (docs/corloc.md): VOC\n"
    "Annotations XML only (no segmentation PNGs; --no-hard drops difficult/truncated objects\n"
    "and images left without any), or with --coco (implies --boxes-only) the images of the\n"
    "list --split and their boxes from ROOT/annotations/instances_train2014.json, cached in\n"
    "--box-cache DIR (default $KC_BOX_CACHE, else no cache).  The CSVs keep their columns;\n"
    "jaccard is empty.\n"
    "\n"
    "example:\n"
    "  kc-score --make-selection VOC2012/ImageSets/Segmentation/train.txt --out datasets/splits\n"
    "  kc-score --masks out/dino/masks.h5 --voc VOC2012 --split datasets/splits/select1000.txt \\\n"
    "           --out out/dino/scores --network dino\n"
    "  kc-score --boxes-only --masks voc07.h5 --voc VOC2007 --split VOC2007/ImageSets/Main/trainval.txt --out s\n";

static int read_count(const opts_option *opt, const char *v)
{
    char *end;
    long c = strtol(v, &end, 10);
    if (end == v || *end || c <= 0 || c > 10000000) return kc_fail("--count: bad value '%s'", v);
    *(int *)opt->target = (int)c;
    return 0;
}

int main(int argc, char **argv)
{
    kc_set_prog("kc-score");
    kc_keep_freed_memory();
    kc_set_cmdline(argc, argv);
    const char *masks = NULL, *voc = NULL, *split = NULL, *out = NULL, *ledger = "ledger.tsv";
    const char *network = NULL, *selection = NULL;
    int count = SPLIT_SELECTION_COUNT;
    const char *coco = NULL, *box_cache = getenv("KC_BOX_CACHE");
    int boxes_only = 0, no_hard = 0;
    const opts_option options[] = {
        {"--boxes-only", .flag = &boxes_only}, {"--no-hard", .flag = &no_hard}, {"--coco", .value = &coco},
        {"--box-cache", .value = &box_cache}, {"--masks", .value = &masks}, {"--voc", .value = &voc},
        {"--split", .value = &split}, {"--out", .value = &out}, {"--ledger", .value = &ledger},
        {"--network", .value = &network}, {"--make-selection", .value = &selection},
        {"--count", .read = read_count, .target = &count}, {0}};
    const opts_cli cli = {.usage = usage, .options = options};
    int rc = opts_parse(&cli, argc, argv);
    if (rc < 0) kc_die();
    if (rc != OPTS_OK) exit(opts_usage(&cli, rc));
    if (coco) boxes_only = 1; /* --coco implies --boxes-only */
    double t0 = kc_now();
    /* one run per score folder, its lock taken before the options are checked (as ever) */
    kc_lock *lock = NULL;
    if (!selection && out && kc_lock_folder(&lock, out, NULL) < 0) kc_die();
    if (selection) {
        if (!out) kc_die_msg("--make-selection needs --out DIR");
        if (score_make_selection(selection, out, count) < 0) kc_die();
        return 0;
    }
    /* --split NAME with --voc ROOT: the split file voc:ROOT:NAME reads (as kc-extract's --dataset) */
    char *split_file = split && voc && !coco ? dataset_voc_split_file(voc, split) : NULL;
    if (split_file) split = split_file;
    if (boxes_only) {
        if (!masks || !(voc || coco) || !split || !out)
            kc_die_msg("--boxes-only needs --masks, --voc ROOT or --coco ROOT, --split and --out (see --help)");
        score_opts o = {.masks = masks, .voc = coco ? NULL : voc, .coco = coco, .split = split, .out = out, .ledger = ledger,
                        .network = network, .box_cache = box_cache, .no_hard = no_hard, .t0 = t0};
        if (score_boxes(&o) < 0) kc_die();
        free(split_file);
        kc_lock_release(lock);
        return 0;
    }
    if (no_hard) kc_die_msg("--no-hard applies to --boxes-only scoring (see --help)");
    if (!masks || !voc || !split || !out) kc_die_msg("--masks, --voc, --split and --out are required (see --help)");

    score_opts o = {.masks = masks, .voc = voc, .split = split, .out = out, .ledger = ledger, .network = network, .t0 = t0};
    if (score_voc(&o) < 0) kc_die();
    free(split_file);
    kc_lock_release(lock);
    return 0;
}
