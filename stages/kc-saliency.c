/* stages/kc-saliency.c — unsupervised saliency detection scored as TokenCut scores it: options,
 * usage, exit code.  The protocol and the outputs are eval/saliency/saliency.h's.
 *
 *   kc-saliency --masks FILE --dataset saliency:ROOT --out DIR [--setting ID] [--network NAME]
 *               [--ledger FILE] [--png DIR] [--soft DIR] [--bs-sigma-spatial S ...]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/refine/refine.h"
#include "eval/saliency/saliency.h"
#include "pipeline/kc.h"
#include "pipeline/lock.h"
#include "pipeline/opts.h"

static const char usage[] =
    "usage: kc-saliency --masks FILE --dataset saliency:ROOT --out DIR [--setting ID] [--network NAME]\n"
    "                   [--ledger FILE] [--png DIR] [--soft DIR] [solver constants]\n"
    "\n"
    "Scores unsupervised saliency detection as TokenCut's get_saliency.py does: each image's mask\n"
    "of the masks cache (kc-decode on keys extracted with kc-extract --dataset saliency:ROOT, whose\n"
    "policy `round` is TokenCut's resize) is brought to the image's size as torch's nearest\n"
    "interpolation does, then refined by TokenCut's bilateral solver on the original image; both\n"
    "are scored against the ground truth (any nonzero value of its PIL convert('L') is\n"
    "foreground) by TokenCut's metric.py: mean IoU and accuracy at 0.5, max F-beta (beta^2 0.3)\n"
    "over 255 thresholds.  The solver's row scores its soft output, as get_saliency.py does.\n"
    "Writes DIR/<setting>.csv (per image, refine none then bs), DIR/summary.csv (one line each)\n"
    "and one ledger line (default ./ledger.tsv).\n"
    "\n"
    "saliency:ROOT is ECSSD (images/, ground_truth_mask/), DUTS-TE (DUTS-TE-Image/,\n"
    "DUTS-TE-Mask/), DUT-OMRON (DUT-OMRON-image/, pixelwiseGT-new-PNG/) or TokenCut's own\n"
    "re-packaging (img/, gt/), as the releases lay them out.\n"
    "\n"
    "  --masks FILE        a masks cache of kc-decode (one setting, or --setting)\n"
    "  --dataset SPEC      saliency:ROOT, the dataset the masks were decoded from\n"
    "  --out DIR           the score folder\n"
    "  --setting ID        the setting to score (default: the cache's only one, else\n"
    "                      t0.20-bin-mean-seed-n1, TokenCut's)\n"
    "  --network NAME      the network's name for the ledger and DIR/network (default: the cache's)\n"
    "  --ledger FILE       default ./ledger.tsv\n"
    "  --png DIR           also DIR/<id>.png: 1 where the decoder's mask is, + 2 where the solver's\n"
    "                      output exceeds 0.5 (palette PNG; the results browser's galleries)\n"
    "  --soft DIR          also DIR/<id>.npy: the solver's output, float64 (h, w), for NumPy\n"
    "solver constants (TokenCut's get_saliency.py):\n"
    "  --bs-sigma-spatial 16  --bs-sigma-luma 16  --bs-sigma-chroma 8  --bs-lambda 256\n"
    "  --bs-confidence 0.999  --bs-bistoch-iters 10  --bs-cg-tol 1e-5  --bs-cg-maxiter 25\n"
    "  --bs-diag-min 1e-5\n"
    "\n"
    "example:\n"
    "  kc-extract --weights dino_deitsmall16_pretrain.pth --dataset saliency:/data/ECSSD --out ecssd/keys.h5\n"
    "  kc-decode --features ecssd/keys.h5 --setting t0.20-bin-mean-seed-n1 --out ecssd/masks.h5\n"
    "  kc-saliency --masks ecssd/masks.h5 --dataset saliency:/data/ECSSD --out ecssd/scores\n";

static int read_constant(const opts_option *opt, const char *value)
{
    char *end;
    double x = strtod(value, &end);
    if (end == value || *end || !isfinite(x)) return kc_fail("%s: '%s' is not a number", opt->name, value);
    if (opt->number == OPTS_INT && x != (int)x) return kc_fail("%s: '%s' is not a whole number", opt->name, value);
    opts_store_number(opt, x);
    return 0;
}

int main(int argc, char **argv)
{
    kc_set_prog("kc-saliency");
    kc_keep_freed_memory();
    kc_set_cmdline(argc, argv);
    saliency_opts o = SALIENCY_DEFAULTS;
    const opts_option options[] = {
        {"--masks", .value = &o.masks}, {"--dataset", .value = &o.dataset}, {"--out", .value = &o.out},
        {"--setting", .value = &o.setting}, {"--network", .value = &o.network}, {"--ledger", .value = &o.ledger},
        {"--png", .value = &o.png_dir}, {"--soft", .value = &o.soft_dir},
        REFINE_BS_OPTIONS(read_constant, o.bs), {0}};
    const opts_cli cli = {.usage = usage, .options = options};
    int rc = opts_parse(&cli, argc, argv);
    if (rc < 0) kc_die();
    if (rc != OPTS_OK) exit(opts_usage(&cli, rc));
    o.t0 = kc_now();
    kc_lock *lock = NULL;
    if (o.out && kc_lock_folder(&lock, o.out, NULL) < 0) kc_die();
    if (!o.masks || !o.dataset || !o.out) kc_die_msg("--masks, --dataset and --out are required (see --help)");
    refine_opts range = REFINE_DEFAULTS; /* the solver's constants, checked as kc-refine checks them */
    range.bs = o.bs;
    if (refine_check(&range) < 0) kc_die();
    if (saliency_run(&o) < 0) kc_die();
    kc_lock_release(lock);
    return 0;
}
