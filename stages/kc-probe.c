/* stages/kc-probe.c — the linear probe on frozen tokens, scored by mIoU: options, usage, exit code.
 *
 *   kc-probe train --features TRAIN.h5 --labels voc:ROOT:trainaug --out HEAD.safetensors [options]
 *   kc-probe eval  --head HEAD.safetensors --features VAL.h5 --labels voc:ROOT:val --out DIR
 *
 * The runs are eval/probe/probe_run.h's (the protocol, the outputs, resuming a killed train); what they
 * read is eval/probe/probe_data.h's, the head and checkpoint files eval/probe/probe_file.h's, the numerics
 * eval/probe/probe.h's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/probe/probe_run.h"
#include "pipeline/kc.h"

static void usage(int rc)
{
    FILE *f = rc ? stderr : stdout;
    fprintf(f,
            "usage: kc-probe train --features TRAIN.h5 --labels voc:ROOT:SPLIT --out HEAD.safetensors\n"
            "                      [--epochs 25] [--lr 0.01] [--batch 60] [--drop-at 20] [--momentum 0.9]\n"
            "                      [--weight-decay 1e-4] [--mask-size 100] [--size S] [--seed 0]\n"
            "                      [--classes 21] [--label-dir NAME] [--trace DIR]\n"
            "       kc-probe eval  --head HEAD.safetensors --features VAL.h5 --labels voc:ROOT:SPLIT --out DIR\n"
            "                      [--mask-size 100] [--eval-size mask|full] [--size S] [--classes 21]\n"
            "                      [--label-dir NAME] [--ledger FILE] [--network NAME]\n"
            "\n"
            "The thesis's second reading of a network: one linear layer trained with labels on the frozen\n"
            "last-block tokens (a features cache of kc-extract --features tokens --policy square224 or\n"
            "square448), scored by mIoU on the VOC classes (Leopart's linear protocol).\n"
            "  --labels SPEC    voc:ROOT:SPLIT: ROOT/ImageSets/Segmentation/SPLIT.txt, labels\n"
            "                   ROOT/SegmentationClass/<id>.png (SegmentationClassAug for trainaug; --label-dir\n"
            "                   names another folder); davis:ROOT:SPLIT: Annotations/480p/<seq>/<frame>.png\n"
            "                   (object ids as classes: --classes 2 for one object)\n"
            "  --size S         the side the labels are first resized to (nearest); default: the\n"
            "                   features' policy (224 or 448), which it must equal\n"
            "  --mask-size M    the side logits and labels are compared at (default 100)\n"
            "  --drop-at E      epochs E, E+1, ... (0-based) run at lr x 0.1\n"
            "  --eval-size full compare at each label's own size instead of M x M\n"
            "  --ledger FILE    eval: the ledger of label openings (default ./ledger.tsv)\n"
            "  --trace DIR      train: also write the ids, the initial head and every epoch's image order\n"
            "                   (what the PyTorch reference tests/ref/probe_ref.py replays)\n"
            "A killed train resumes from HEAD.partial/ when rerun with the same command.\n"
            "\n"
            "examples:\n"
            "  kc-probe train --features cache/dino/voc12-trainaug/tokens224.h5 --labels voc:/data/VOC2012:trainaug \\\n"
            "                 --out cache/dino/probe/head.safetensors\n"
            "  kc-probe eval --head cache/dino/probe/head.safetensors --features cache/dino/voc12-val/tokens224.h5 \\\n"
            "                --labels voc:/data/VOC2012:val --out scores/dino/probe\n");
    exit(rc);
}

/* ---- options ----------------------------------------------------------------------------------- */

static double num(const char *opt, const char *v, double lo, double hi)
{
    char *end;
    double x = strtod(v, &end);
    if (end == v || *end || !(x >= lo && x <= hi)) kc_die_msg("%s: bad value '%s' (%g..%g)", opt, v, lo, hi);
    return x;
}

static void parse(int argc, char **argv, probe_run_opts *o)
{
    *o = probe_run_defaults();
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) usage(0);
        if (i + 1 >= argc) kc_die_msg("%s needs a value (see --help)", a);
        const char *v = argv[++i];
        if (!strcmp(a, "--features")) o->features = v;
        else if (!strcmp(a, "--labels")) o->labels = v;
        else if (!strcmp(a, "--out")) o->out = v;
        else if (!strcmp(a, "--head")) o->head = v;
        else if (!strcmp(a, "--label-dir")) o->label_dir = v;
        else if (!strcmp(a, "--ledger")) o->ledger = v;
        else if (!strcmp(a, "--network")) o->network = v;
        else if (!strcmp(a, "--trace")) o->trace = v;
        else if (!strcmp(a, "--epochs")) o->epochs = (int)num(a, v, 1, 100000);
        else if (!strcmp(a, "--batch")) o->batch = (int)num(a, v, 1, 100000);
        else if (!strcmp(a, "--drop-at")) o->drop_at = (int)num(a, v, 0, 100000);
        else if (!strcmp(a, "--mask-size")) o->mask = (int)num(a, v, 1, 4096);
        else if (!strcmp(a, "--size")) o->size = (int)num(a, v, 1, 8192);
        else if (!strcmp(a, "--classes")) o->classes = (int)num(a, v, 2, 255);
        else if (!strcmp(a, "--lr")) o->lr = num(a, v, 0, 100);
        else if (!strcmp(a, "--momentum")) o->momentum = num(a, v, 0, 1);
        else if (!strcmp(a, "--weight-decay")) o->weight_decay = num(a, v, 0, 1);
        else if (!strcmp(a, "--seed")) o->seed = (long long)num(a, v, 0, 9007199254740991.0);
        else if (!strcmp(a, "--eval-size")) {
            if (!strcmp(v, "full")) o->full = 1;
            else if (strcmp(v, "mask")) kc_die_msg("--eval-size: unknown '%s' (mask or full)", v);
        } else kc_die_msg("unknown option %s (see --help)", a);
    }
    if (o->full && o->size) kc_die_msg("--eval-size full compares at the labels' own size: --size does not apply");
}

int main(int argc, char **argv)
{
    kc_set_prog("kc-probe");
    kc_set_cmdline(argc, argv);
    kc_keep_freed_memory();
    if (argc < 2) usage(2);
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) usage(0);
    probe_run_opts o;
    parse(argc, argv, &o);
    if (!strcmp(argv[1], "train")) {
        if (!o.features || !o.labels || !o.out) kc_die_msg("train needs --features, --labels and --out (see --help)");
        if (o.drop_at > o.epochs) kc_die_msg("--drop-at %d is after the last epoch (%d)", o.drop_at, o.epochs);
        if (probe_run_train(&o) < 0) kc_die();
        return 0;
    }
    if (!strcmp(argv[1], "eval")) {
        if (!o.head || !o.features || !o.labels || !o.out)
            kc_die_msg("eval needs --head, --features, --labels and --out (see --help)");
        if (probe_run_eval(&o) < 0) kc_die();
        return 0;
    }
    kc_die_msg("unknown command '%s' (train or eval; see --help)", argv[1]);
}
