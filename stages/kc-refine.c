/* stages/kc-refine.c — pixel-level refinement of a masks cache: MaskCut's dense CRF or TokenCut's
 * bilateral solver (decoders/refine/refine.h).  The stage checks its inputs; the run over the images is
 * decoders/refine/refine_cache.h's.
 *
 *   kc-refine --masks FILE --dataset SPEC --method crf|bs --out FILE [--setting ID[,ID...]]
 *             [--shard i/n] [constants, see --help]
 *
 * Writes a masks cache of the same layout whose label maps are pixel masks at the original image
 * size: /masks/<setting>/<id> uint8 (H, W), deflate-compressed, with the decoder's attributes
 * (lambda2, eigengap, degenerate, knife_edge, knife_margin) copied, plus refine_iou (per round, the
 * CRF's IoU with the unrefined mask, NaN when not computed) and refine_dropped (rounds emptied by
 * MaskCut's IoU filter).  /index as in the input (grid = the decoder's patch grid).  Provenance: the
 * input's root attributes, then refine (the method), refine_params (every constant), masks (the
 * input's path) and masks_content_hash.  Images of a batch (8) are refined in parallel, one image
 * per thread; the output does not depend on the number of threads.  Resumable and atomic.
 *
 * Refused, one line, nothing written: a cache already refined, attention-mass stacks, images of
 * the cache missing from the dataset, an image whose size differs from the one the masks were made
 * from (changed since), grids that do not fit the cache's policy, a dataset of another kind than the
 * one the features were extracted from, a constant out of range.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/dataset.h"
#include "decoders/refine/refine.h"
#include "decoders/refine/refine_cache.h"
#include "pipeline/images/grid_map.h"
#include "pipeline/cache/cache.h"
#include "pipeline/cache/derive.h"
#include "pipeline/extract/image_check.h"
#include "pipeline/images/image.h"
#include "pipeline/kc.h"
#include "pipeline/opts.h"
#include "pipeline/cache/shard.h"

static const char usage[] =
    "usage: kc-refine --masks FILE --dataset SPEC --method crf|bs --out FILE [--setting ID[,ID...]]\n"
    "                 [--shard i/n] [constants]\n"
    "\n"
    "Refines every mask of a masks cache at pixel level, as the published decoders do:\n"
    "  crf  MaskCut's crf.py: the patch mask repeated to the policy's image (480x480 for\n"
    "       square480, 490x490 with patch 14), a fully connected CRF (pydensecrf's,\n"
    "       permutohedral lattice), holes filled, a mask with IoU < 0.5 against its patch mask\n"
    "       dropped, back to the original size by Pillow's bicubic resize and a threshold at\n"
    "       half the maximum\n"
    "  bs   TokenCut's bilateral solver on the original image (confidence 0.999, lambda 256,\n"
    "       sigmas of its published runs), output > 0.5, holes filled\n"
    "The output is a masks cache of pixel masks at the original image size (kc-score, kc-show\n"
    "and kc-plot read it).  An interrupted run resumes from FILE.partial/.\n"
    "\n"
    "  --masks FILE        a masks cache from kc-decode\n"
    "  --dataset SPEC      the images the masks were decoded from (voc:ROOT:SPLIT, dir:, list:)\n"
    "                      " DATASET_LIST_RULES
    "                      " DATASET_LIST_RULES2
    "  --setting IDS       only these settings (comma-separated; default every setting)\n"
    "  --shard i/n         only slice i of n of the images (join with kc-merge)\n"
    "crf constants (MaskCut's values):\n"
    "  --crf-iters 10  --crf-gauss-sxy 3  --crf-gauss-w 7  --crf-bi-sxy 50  --crf-bi-srgb 5\n"
    "  --crf-bi-w 10  --crf-clip 1e-5 (unary_from_softmax)  --crf-min-iou 0.5 (MaskCut's filter)\n"
    "bs constants (TokenCut's):\n"
    "  --bs-sigma-spatial 16  --bs-sigma-luma 16  --bs-sigma-chroma 8  (its published runs;\n"
    "  --bs-sigmas function-defaults gives 24 / 4 / 4, bilateral_solver_output's defaults)\n"
    "  --bs-lambda 256  --bs-confidence 0.999  --bs-bistoch-iters 10  --bs-cg-tol 1e-5\n"
    "  --bs-cg-maxiter 25  --bs-diag-min 1e-5  --bs-threshold 0.5\n"
    "  --bs-components plain|tokencut   plain (default): the thresholded, hole-filled mask;\n"
    "                      tokencut: then TokenCut's step, the second-largest region counting the\n"
    "                      background (which can return the background itself)\n"
    "\n"
    "examples:\n"
    "  kc-refine --masks cache/dino/voc12-val/masks-t0.15-bin-mean-corners-n3.h5 \\\n"
    "            --dataset voc:/data/VOC2012:val --method crf --out cache/dino/voc12-val/masks-...-crf.h5\n"
    "  kc-refine --masks one.h5 --dataset voc:/data/VOC2012:val --method bs --out one-bs.h5\n";

static int parse_num(const char *opt, const char *s, double *v)
{
    char *end;
    *v = strtod(s, &end);
    if (end == s || *end || !isfinite(*v)) return kc_fail("%s: '%s' is not a number", opt, s);
    return 0;
}

/* The constants: a number, stored as a float, a double, or an int (-1 when it is not a whole
 * number: refine_check refuses it). */
static int read_constant(const opts_option *opt, const char *value)
{
    double x;
    KC_TRY(parse_num(opt->name, value, &x));
    if (opt->number == OPTS_INT && x != (int)x) x = -1;
    opts_store_number(opt, x);
    return 0;
}

/* An unknown option's value is read as a constant's first (so a bad one is named as such). */
static int unknown_option(const char *name, const char *value)
{
    double x;
    KC_TRY(parse_num(name, value, &x));
    return kc_fail("unknown option '%s' (see --help)", name);
}

static int read_components(const opts_option *opt, const char *value)
{
    int *components = opt->target;
    if (!strcmp(value, "plain")) *components = 0;
    else if (!strcmp(value, "tokencut")) *components = 1;
    else return kc_fail("--bs-components must be plain or tokencut (got '%s')", value);
    return 0;
}

static int read_sigmas(const opts_option *opt, const char *value)
{
    const bs_params defaults = BS_TOKENCUT_DEFAULTS, published = BS_TOKENCUT_RUNS;
    const bs_params *from = !strcmp(value, "function-defaults") ? &defaults
                            : !strcmp(value, "published")       ? &published
                                                                : NULL;
    if (!from) return kc_fail("--bs-sigmas must be published or function-defaults (got '%s')", value);
    bs_params *bs = opt->target;
    bs->sigma_spatial = from->sigma_spatial;
    bs->sigma_luma = from->sigma_luma;
    bs->sigma_chroma = from->sigma_chroma;
    return 0;
}

int main(int argc, char **argv)
{
    kc_set_prog("kc-refine");
    kc_keep_freed_memory();
    kc_set_cmdline(argc, argv);
    const char *masks = NULL, *spec = NULL, *method_s = NULL, *out = NULL, *setting_arg = NULL, *shard_arg = NULL;
    refine_opts o = REFINE_DEFAULTS;
    const opts_option options[] = {
        {"--masks", .value = &masks}, {"--dataset", .value = &spec}, {"--method", .value = &method_s},
        {"--out", .value = &out}, {"--setting", .value = &setting_arg}, {"--shard", .value = &shard_arg},
        {"--bs-components", .read = read_components, .target = &o.bs_components},
        {"--bs-sigmas", .read = read_sigmas, .target = &o.bs},
        {"--crf-iters", .read = read_constant, .target = &o.crf.iters},
        {"--crf-gauss-sxy", .read = read_constant, .target = &o.crf.gauss_sxy, .number = OPTS_FLOAT},
        {"--crf-gauss-w", .read = read_constant, .target = &o.crf.gauss_w, .number = OPTS_FLOAT},
        {"--crf-bi-sxy", .read = read_constant, .target = &o.crf.bi_sxy, .number = OPTS_FLOAT},
        {"--crf-bi-srgb", .read = read_constant, .target = &o.crf.bi_srgb, .number = OPTS_FLOAT},
        {"--crf-bi-w", .read = read_constant, .target = &o.crf.bi_w, .number = OPTS_FLOAT},
        {"--crf-clip", .read = read_constant, .target = &o.crf_clip, .number = OPTS_DOUBLE},
        {"--crf-min-iou", .read = read_constant, .target = &o.crf_min_iou, .number = OPTS_DOUBLE},
        REFINE_BS_OPTIONS(read_constant, o.bs),
        {"--bs-threshold", .read = read_constant, .target = &o.bs_threshold, .number = OPTS_DOUBLE}, {0}};
    const opts_cli cli = {.usage = usage, .options = options, .unknown = unknown_option};
    int rc = opts_parse(&cli, argc, argv);
    if (rc < 0) kc_die();
    if (rc != OPTS_OK) exit(opts_usage(&cli, rc));
    if (!masks || !spec || !method_s || !out) kc_die_msg("--masks, --dataset, --method and --out are required (see --help)");
    if (refine_method_parse(method_s, &o.method) < 0) kc_die();
    if (o.method == REFINE_NONE) kc_die_msg("--method none: nothing to refine (use the masks cache as it is)");
    if (refine_check(&o) < 0) kc_die();
    kc_shard shard = KC_SHARD_NONE;
    if (shard_arg && shard_parse(shard_arg, &shard) < 0) kc_die();
    double t0 = kc_now();

    /* the input masks and what they were made from */
    derive_input in;
    if (derive_open(&in, masks, CACHE_FORMAT_MASKS, &shard) < 0) kc_die();
    cache_reader *const r = &in.r;
    if (cache_attr(r, "refine")) kc_die_msg("%s: already refined (refine = %s); give kc-refine the masks of kc-decode", masks, cache_attr(r, "refine"));
    const char *pol = cache_attr(r, "policy"), *ps = cache_attr(r, "patch");
    kc_policy policy;
    if (!pol) kc_die_msg("%s: no 'policy' attribute (not a masks cache of kc-decode)", masks);
    if (policy_parse(pol, &policy) < 0) kc_die();
    int patch = ps ? atoi(ps) : 0;
    if (patch <= 0 || patch > 1024) kc_die_msg("%s: no valid 'patch' attribute (got '%s')", masks, ps ? ps : "(none)");
    char **settings = NULL;
    int n_settings = 0;
    if (setting_arg) {
        char *copy = kc_strdup(setting_arg);
        for (char *t = strtok(copy, ","); t; t = strtok(NULL, ",")) {
            settings = kc_realloc(settings, (size_t)(n_settings + 1) * sizeof *settings);
            settings[n_settings++] = kc_strdup(t);
        }
        free(copy);
        char **have;
        int n_have;
        if (cache_list(r, "/masks", &have, &n_have) < 0) kc_die();
        for (int s = 0; s < n_settings; s++) {
            int found = 0;
            for (int j = 0; j < n_have; j++) found |= !strcmp(have[j], settings[s]);
            if (!found) kc_die_msg("%s: no setting '%s' under /masks", masks, settings[s]);
        }
        for (int j = 0; j < n_have; j++) free(have[j]);
        free(have);
    } else if (cache_list(r, "/masks", &settings, &n_settings) < 0) {
        kc_die();
    }
    if (n_settings == 0) kc_die_msg("%s: no settings under /masks", masks);
    for (int s = 0; s < n_settings; s++)
        if (!strncmp(settings[s], "attn-mass", 9))
            kc_die_msg("%s: %s holds attention-mass stacks (heads, h, w); kc-refine refines decoder masks only", masks, settings[s]);

    /* the images: every id of the cache in the dataset, of the size the masks were made from */
    kc_dataset ds;
    if (dataset_open(&ds, spec) < 0) kc_die();
    const char *kind = cache_attr(r, "dataset_kind");
    if (kind && strcmp(kind, ds.kind))
        kc_die_msg("%s: masks of a %s dataset (%s), but --dataset is %s", masks, kind,
                   cache_attr(r, "dataset") ? cache_attr(r, "dataset") : kind, spec);
    derive_slice(&in);
    const int n = r->index.n;
    const char **paths = kc_malloc((size_t)(n ? n : 1) * sizeof *paths); /* (n) the image of each row */
    for (int i = 0; i < n; i++) {
        const char *id = r->index.ids[i];
        int j = 0;
        while (j < ds.n && strcmp(ds.ids[j], id)) j++;
        if (j == ds.n) kc_die_msg("%s: image %s of the masks is not in %s (masks from another dataset?)", masks, id, spec);
        paths[i] = ds.paths[j];
        int w, h, gh, gw, H = r->index.size[2 * i], W = r->index.size[2 * i + 1];
        if (image_size(ds.paths[j], &w, &h) < 0) kc_die();
        if (w != W || h != H)
            kc_die_msg("%s: is %dx%d, but the masks of %s were made from a %dx%d image (changed since?)", ds.paths[j], w, h,
                       id, W, H);
        /* the image's file hash, when kc-extract recorded it (caches of older versions have none) */
        if (n_settings > 0) {
            char *d0 = kc_strfmt("/masks/%s/%s", settings[0], id);
            if (image_check_unchanged(r, d0, ds.paths[j]) < 0) kc_die();
            free(d0);
        }
        grid_expected(policy, patch, W, H, &gh, &gw);
        if (gh != r->index.grid[2 * i] || gw != r->index.grid[2 * i + 1])
            kc_die_msg("%s: image %s has a %dx%d grid; %s with patch %d gives %dx%d for %dx%d pixels (another policy?)",
                       masks, id, r->index.grid[2 * i + 1], r->index.grid[2 * i], pol, patch, gw, gh, W, H);
    }

    const refine_run run = {&o, &in, masks, spec, out, settings, n_settings, policy, pol, patch, paths, t0};
    if (refine_cache(&run) < 0) kc_die();
    for (int s = 0; s < n_settings; s++) free(settings[s]);
    free(settings);
    free(paths);
    dataset_free(&ds);
    return 0;
}
