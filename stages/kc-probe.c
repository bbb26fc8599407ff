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
#include "pipeline/opts.h"

static const char usage[] =
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
    "                --labels voc:/data/VOC2012:val --out scores/dino/probe\n";

/* ---- options ----------------------------------------------------------------------------------- */

/* A number in [opt->lo, opt->hi]. */
static int num(const opts_option *opt, const char *v, double *x)
{
    char *end;
    *x = strtod(v, &end);
    if (end == v || *end || !(*x >= opt->lo && *x <= opt->hi))
        return kc_fail("%s: bad value '%s' (%g..%g)", opt->name, v, opt->lo, opt->hi);
    return 0;
}

static int read_number(const opts_option *opt, const char *v)
{
    double x;
    KC_TRY(num(opt, v, &x));
    opts_store_number(opt, x);
    return 0;
}

static int read_eval_size(const opts_option *opt, const char *v)
{
    if (!strcmp(v, "full")) *(int *)opt->target = 1;
    else if (strcmp(v, "mask")) return kc_fail("--eval-size: unknown '%s' (mask or full)", v);
    return 0;
}

int main(int argc, char **argv)
{
    kc_set_prog("kc-probe");
    kc_set_cmdline(argc, argv);
    kc_keep_freed_memory();
    probe_run_opts o = probe_run_defaults();
    const opts_option options[] = {
        {"--features", .value = &o.features}, {"--labels", .value = &o.labels}, {"--out", .value = &o.out},
        {"--head", .value = &o.head}, {"--label-dir", .value = &o.label_dir}, {"--ledger", .value = &o.ledger},
        {"--network", .value = &o.network}, {"--trace", .value = &o.trace},
        {"--epochs", .read = read_number, .target = &o.epochs, .lo = 1, .hi = 100000},
        {"--batch", .read = read_number, .target = &o.batch, .lo = 1, .hi = 100000},
        {"--drop-at", .read = read_number, .target = &o.drop_at, .lo = 0, .hi = 100000},
        {"--mask-size", .read = read_number, .target = &o.mask, .lo = 1, .hi = 4096},
        {"--size", .read = read_number, .target = &o.size, .lo = 1, .hi = 8192},
        {"--classes", .read = read_number, .target = &o.classes, .lo = 2, .hi = 255},
        {"--lr", .read = read_number, .target = &o.lr, .lo = 0, .hi = 100, .number = OPTS_DOUBLE},
        {"--momentum", .read = read_number, .target = &o.momentum, .lo = 0, .hi = 1, .number = OPTS_DOUBLE},
        {"--weight-decay", .read = read_number, .target = &o.weight_decay, .lo = 0, .hi = 1, .number = OPTS_DOUBLE},
        {"--seed", .read = read_number, .target = &o.seed, .lo = 0, .hi = 9007199254740991.0, .number = OPTS_LONG_LONG},
        {"--eval-size", .read = read_eval_size, .target = &o.full}, {0}};
    const opts_cli cli = {.usage = usage, .options = options};
    if (argc < 2) exit(opts_usage(&cli, OPTS_USAGE));
    if (opts_is_help(argv[1])) exit(opts_usage(&cli, OPTS_HELP));
    int rc = opts_parse(&cli, argc - 1, argv + 1); /* (the options after the command) */
    if (rc < 0) kc_die();
    if (rc != OPTS_OK) exit(opts_usage(&cli, rc));
    if (o.full && o.size) kc_die_msg("--eval-size full compares at the labels' own size: --size does not apply");
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
