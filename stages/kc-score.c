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

#include "datasets/splits.h"
#include "eval/voc/score.h"
#include "pipeline/kc.h"
#include "pipeline/lock.h"

static void usage(int status)
{
    fprintf(status ? stderr : stdout,
            "usage: kc-score --masks FILE --voc ROOT --split FILE --out DIR [--ledger FILE] [--network NAME]\n"
            "       kc-score --boxes-only --masks FILE (--voc ROOT | --coco ROOT) --split FILE --out DIR [--no-hard]\n"
            "                [--box-cache DIR] [--ledger FILE] [--network NAME]\n"
            "       kc-score --make-selection TRAIN_LIST --out DIR [--count N]\n"
            "\n"
            "Scores every setting of a masks cache on VOC ground truth (Jaccard, CorLoc): writes\n"
            "DIR/<setting>.csv and DIR/summary.csv, then appends one line to the ledger\n"
            "(default ./ledger.tsv).  --make-selection writes the selection split: the first N\n"
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
            "  kc-score --boxes-only --masks voc07.h5 --voc VOC2007 --split VOC2007/ImageSets/Main/trainval.txt --out s\n");
    exit(status);
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
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) usage(0);
        if (!strcmp(a, "--boxes-only")) { boxes_only = 1; continue; }
        if (!strcmp(a, "--no-hard")) { no_hard = 1; continue; }
        if (!strcmp(a, "--coco") && i + 1 < argc) { coco = argv[++i]; boxes_only = 1; continue; }
        if (!strcmp(a, "--box-cache") && i + 1 < argc) { box_cache = argv[++i]; continue; }
        if (i + 1 >= argc) kc_die_msg("%s needs a value (see --help)", a);
        const char *v = argv[++i];
        if (!strcmp(a, "--masks")) masks = v;
        else if (!strcmp(a, "--voc")) voc = v;
        else if (!strcmp(a, "--split")) split = v;
        else if (!strcmp(a, "--out")) out = v;
        else if (!strcmp(a, "--ledger")) ledger = v;
        else if (!strcmp(a, "--network")) network = v;
        else if (!strcmp(a, "--make-selection")) selection = v;
        else if (!strcmp(a, "--count")) {
            char *end;
            long c = strtol(v, &end, 10);
            if (end == v || *end || c <= 0 || c > 10000000) kc_die_msg("--count: bad value '%s'", v);
            count = (int)c;
        } else kc_die_msg("unknown option %s (see --help)", a);
    }
    double t0 = kc_now();
    /* one run per score folder, its lock taken before the options are checked (as ever) */
    kc_lock *lock = NULL;
    if (!selection && out && kc_lock_folder(&lock, out, NULL) < 0) kc_die();
    if (selection) {
        if (!out) kc_die_msg("--make-selection needs --out DIR");
        if (score_make_selection(selection, out, count) < 0) kc_die();
        return 0;
    }
    if (boxes_only) {
        if (!masks || !(voc || coco) || !split || !out)
            kc_die_msg("--boxes-only needs --masks, --voc ROOT or --coco ROOT, --split and --out (see --help)");
        score_opts o = {.masks = masks, .voc = coco ? NULL : voc, .coco = coco, .split = split, .out = out, .ledger = ledger,
                        .network = network, .box_cache = box_cache, .no_hard = no_hard, .t0 = t0};
        if (score_boxes(&o) < 0) kc_die();
        kc_lock_release(lock);
        return 0;
    }
    if (no_hard) kc_die_msg("--no-hard applies to --boxes-only scoring (see --help)");
    if (!masks || !voc || !split || !out) kc_die_msg("--masks, --voc, --split and --out are required (see --help)");

    score_opts o = {.masks = masks, .voc = voc, .split = split, .out = out, .ledger = ledger, .network = network, .t0 = t0};
    if (score_voc(&o) < 0) kc_die();
    kc_lock_release(lock);
    return 0;
}
