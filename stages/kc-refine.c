/* stages/kc-refine.c — pixel-level refinement of a masks cache: MaskCut's dense CRF or TokenCut's
 * bilateral solver (eval/refine.h).
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
#include "eval/refine.h"
#include "eval/voc_metrics.h"
#include "pipeline/cache/cache.h"
#include "pipeline/cache/derive.h"
#include "pipeline/images/image.h"
#include "pipeline/kc.h"
#include "pipeline/progress.h"
#include "pipeline/sha256.h"
#include "pipeline/cache/shard.h"

enum { BATCH = 8, MAX_ROUNDS = 16 };

static void usage(int status)
{
    fprintf(status ? stderr : stdout,
            "usage: kc-refine --masks FILE --dataset SPEC --method crf|bs --out FILE [--setting ID[,ID...]]\n"
            "                 [--shard i/n] [constants]\n"
            "\n"
            "Refines every mask of a masks cache at pixel level, as the published decoders do:\n"
            "  crf  MaskCut's crf.py: the patch mask repeated to the policy's image (480x480 for\n"
            "       square480), a fully connected CRF (pydensecrf's, permutohedral lattice), holes\n"
            "       filled, a mask with IoU < 0.5 against its patch mask dropped, back to the original\n"
            "       size by Pillow's bicubic resize and a threshold at half the maximum\n"
            "  bs   TokenCut's bilateral solver on the original image (confidence 0.999, lambda 256,\n"
            "       sigmas of its published runs), output > 0.5, holes filled\n"
            "The output is a masks cache of pixel masks at the original image size (kc-score, kc-show\n"
            "and kc-plot read it).  An interrupted run resumes from FILE.partial/.\n"
            "\n"
            "  --masks FILE        a masks cache from kc-decode\n"
            "  --dataset SPEC      the images the masks were decoded from (voc:ROOT:SPLIT, dir:, list:)\n"
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
            "  kc-refine --masks one.h5 --dataset voc:/data/VOC2012:val --method bs --out one-bs.h5\n");
    exit(status);
}

static int parse_num(const char *opt, const char *s, double *v)
{
    char *end;
    *v = strtod(s, &end);
    if (end == s || *end || !isfinite(*v)) return kc_fail("%s: '%s' is not a number", opt, s);
    return 0;
}

typedef struct image_job {
    int k;          /* row of the (sliced) index */
    const char *path;
} image_job;

typedef struct mask_out {
    uint8_t *px; /* (H, W) */
    float lambda2[MAX_ROUNDS], eigengap[MAX_ROUNDS], knife_margin, iou[MAX_ROUNDS];
    int n_rounds, has_knife;
    int32_t degenerate, knife, dropped;
} mask_out;

/* One image, every setting: reads the label maps, refines them.  0 or -1 with the error set. */
static int refine_one(const cache_reader *r, const refine_opts *o, char **settings, int n_settings, kc_policy policy,
                      int patch, const image_job *job, mask_out *outs)
{
    const char *id = r->index.ids[job->k];
    const int gh = r->index.grid[2 * job->k], gw = r->index.grid[2 * job->k + 1];
    const int H = r->index.size[2 * job->k], W = r->index.size[2 * job->k + 1];
    kc_image img;
    KC_TRY(image_load_rgb(job->path, &img));
    int rc = 0;
    if (img.w != W || img.h != H)
        rc = kc_fail("%s: is %dx%d, but the masks of %s were made from a %dx%d image (changed since?)", job->path, img.w,
                     img.h, id, W, H);
    for (int s = 0; s < n_settings && rc == 0; s++) {
        mask_out *m = &outs[s];
        char *d = kc_strfmt("/masks/%s/%s", settings[s], id);
        uint8_t *labels = NULL;
        int rows, cols;
        rc = cache_read_u8(r, d, &labels, &rows, &cols);
        if (rc == 0 && (rows != gh || cols != gw))
            rc = kc_fail("%s: %s is %dx%d, /index/grid says %dx%d", r->path, d, cols, rows, gw, gh);
        int nl = 0;
        if (rc == 0) nl = cache_read_attr_f32(r, d, "lambda2", m->lambda2, MAX_ROUNDS);
        if (rc == 0 && nl < 1) rc = nl < 0 ? -1 : kc_fail("%s: %s has no lambda2 (rounds unknown)", r->path, d);
        if (rc == 0 && cache_read_attr_f32(r, d, "eigengap", m->eigengap, MAX_ROUNDS) < 0) rc = -1;
        if (rc == 0 && cache_read_attr_i32(r, d, "degenerate", &m->degenerate) < 0) rc = -1;
        m->has_knife = rc == 0 && cache_has_attr(r, d, "knife_edge");
        if (m->has_knife && (cache_read_attr_i32(r, d, "knife_edge", &m->knife) < 0 ||
                             cache_read_attr_f32(r, d, "knife_margin", &m->knife_margin, 1) < 0))
            rc = -1;
        if (rc == 0) {
            m->n_rounds = nl;
            m->px = kc_malloc((size_t)W * H);
            refine_info info;
            rc = refine_image(o, &img, policy, patch, labels, gh, gw, nl, m->px, &info);
            if (rc < 0) kc_fail_prefix("%s: %s", r->path, d);
            m->dropped = 0;
            for (int k = 0; k < nl; k++) {
                m->iou[k] = info.iou[k];
                m->dropped += info.dropped[k];
            }
        }
        free(labels);
        free(d);
    }
    image_free(&img);
    return rc;
}

int main(int argc, char **argv)
{
    kc_set_prog("kc-refine");
    kc_keep_freed_memory();
    kc_set_cmdline(argc, argv);
    const char *masks = NULL, *spec = NULL, *method_s = NULL, *out = NULL, *setting_arg = NULL, *shard_arg = NULL;
    refine_opts o = REFINE_DEFAULTS;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) usage(0);
        if (i + 1 >= argc) kc_die_msg("%s needs a value (see --help)", a);
        const char *v = argv[++i];
        double x = 0;
        const char **dst = !strcmp(a, "--masks") ? &masks : !strcmp(a, "--dataset") ? &spec
                           : !strcmp(a, "--method") ? &method_s : !strcmp(a, "--out") ? &out
                           : !strcmp(a, "--setting") ? &setting_arg : !strcmp(a, "--shard") ? &shard_arg : NULL;
        if (dst) {
            *dst = v;
            continue;
        }
        if (!strcmp(a, "--bs-components")) {
            if (!strcmp(v, "plain")) o.bs_components = 0;
            else if (!strcmp(v, "tokencut")) o.bs_components = 1;
            else kc_die_msg("--bs-components must be plain or tokencut (got '%s')", v);
            continue;
        }
        if (!strcmp(a, "--bs-sigmas")) {
            bs_params d = BS_TOKENCUT_DEFAULTS, pub = BS_TOKENCUT_RUNS;
            if (!strcmp(v, "function-defaults")) o.bs.sigma_spatial = d.sigma_spatial, o.bs.sigma_luma = d.sigma_luma, o.bs.sigma_chroma = d.sigma_chroma;
            else if (!strcmp(v, "published")) o.bs.sigma_spatial = pub.sigma_spatial, o.bs.sigma_luma = pub.sigma_luma, o.bs.sigma_chroma = pub.sigma_chroma;
            else kc_die_msg("--bs-sigmas must be published or function-defaults (got '%s')", v);
            continue;
        }
        if (parse_num(a, v, &x) < 0) kc_die();
        if (!strcmp(a, "--crf-iters")) o.crf.iters = x == (int)x ? (int)x : -1;
        else if (!strcmp(a, "--crf-gauss-sxy")) o.crf.gauss_sxy = (float)x;
        else if (!strcmp(a, "--crf-gauss-w")) o.crf.gauss_w = (float)x;
        else if (!strcmp(a, "--crf-bi-sxy")) o.crf.bi_sxy = (float)x;
        else if (!strcmp(a, "--crf-bi-srgb")) o.crf.bi_srgb = (float)x;
        else if (!strcmp(a, "--crf-bi-w")) o.crf.bi_w = (float)x;
        else if (!strcmp(a, "--crf-clip")) o.crf_clip = x;
        else if (!strcmp(a, "--crf-min-iou")) o.crf_min_iou = x;
        else if (!strcmp(a, "--bs-sigma-spatial")) o.bs.sigma_spatial = x;
        else if (!strcmp(a, "--bs-sigma-luma")) o.bs.sigma_luma = x;
        else if (!strcmp(a, "--bs-sigma-chroma")) o.bs.sigma_chroma = x;
        else if (!strcmp(a, "--bs-lambda")) o.bs.lambda = x;
        else if (!strcmp(a, "--bs-confidence")) o.bs.confidence = x;
        else if (!strcmp(a, "--bs-bistoch-iters")) o.bs.bistoch_iters = x == (int)x ? (int)x : -1;
        else if (!strcmp(a, "--bs-cg-tol")) o.bs.cg_tol = x;
        else if (!strcmp(a, "--bs-cg-maxiter")) o.bs.cg_maxiter = x == (int)x ? (int)x : -1;
        else if (!strcmp(a, "--bs-diag-min")) o.bs.diag_min = x;
        else if (!strcmp(a, "--bs-threshold")) o.bs_threshold = x;
        else kc_die_msg("unknown option '%s' (see --help)", a);
    }
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
    image_job *jobs = kc_malloc((size_t)(n ? n : 1) * sizeof *jobs);
    for (int i = 0; i < n; i++) {
        const char *id = r->index.ids[i];
        int j = 0;
        while (j < ds.n && strcmp(ds.ids[j], id)) j++;
        if (j == ds.n) kc_die_msg("%s: image %s of the masks is not in %s (masks from another dataset?)", masks, id, spec);
        jobs[i] = (image_job){i, ds.paths[j]};
        int w, h, gh, gw, H = r->index.size[2 * i], W = r->index.size[2 * i + 1];
        if (image_size(ds.paths[j], &w, &h) < 0) kc_die();
        if (w != W || h != H)
            kc_die_msg("%s: is %dx%d, but the masks of %s were made from a %dx%d image (changed since?)", ds.paths[j], w, h,
                       id, W, H);
        /* the image's file hash, when kc-extract recorded it (caches of older versions have none) */
        if (n_settings > 0) {
            char *d0 = kc_strfmt("/masks/%s/%s", settings[0], id);
            uint8_t want[32], got[32];
            int has = cache_read_image_sha(r, d0, want);
            if (has < 0 || (has && kc_sha256_file_raw(ds.paths[j], got) < 0)) kc_die();
            if (has && memcmp(got, want, 32) != 0)
                kc_die_msg("%s: changed since the masks of %s in %s were made (sha256 %02x%02x%02x%02x..., recorded "
                           "%02x%02x%02x%02x...)", ds.paths[j], id, masks, got[0], got[1], got[2], got[3], want[0], want[1],
                           want[2], want[3]);
            free(d0);
        }
        voc_expected_grid(policy, patch, W, H, &gh, &gw);
        if (gh != r->index.grid[2 * i] || gw != r->index.grid[2 * i + 1])
            kc_die_msg("%s: image %s has a %dx%d grid; %s with patch %d gives %dx%d for %dx%d pixels (another policy?)",
                       masks, id, r->index.grid[2 * i + 1], r->index.grid[2 * i], pol, patch, gw, gh, W, H);
    }

    /* every constant, for the fingerprint and the provenance */
    char params[1024];
    if (o.method == REFINE_CRF)
        snprintf(params, sizeof params,
                 "crf (MaskCut crf.py, densecrf permutohedral lattice, symmetric normalisation, Potts): iters %d, "
                 "gaussian sxy %.9g w %.9g, bilateral sxy %.9g srgb %.9g w %.9g, unary clip %.9g, min IoU %.9g; "
                 "mask repeated to the %s image, argmax (tie: background), holes filled, back by Pillow bicubic, "
                 "threshold max/2",
                 o.crf.iters, o.crf.gauss_sxy, o.crf.gauss_w, o.crf.bi_sxy, o.crf.bi_srgb, o.crf.bi_w, o.crf_clip,
                 o.crf_min_iou, pol);
    else
        snprintf(params, sizeof params,
                 "bs (TokenCut bilateral_solver.py, SciPy 1.10 cg): sigma spatial %.9g luma %.9g chroma %.9g, lambda "
                 "%.9g, confidence %.9g, bistochastisation %d, cg tol %.9g maxiter %d, diag min %.9g, threshold %.9g, "
                 "holes filled, components %s",
                 o.bs.sigma_spatial, o.bs.sigma_luma, o.bs.sigma_chroma, o.bs.lambda, o.bs.confidence, o.bs.bistoch_iters,
                 o.bs.cg_tol, o.bs.cg_maxiter, o.bs.diag_min, o.bs_threshold, o.bs_components ? "tokencut" : "plain");
    char shard_s[32];
    int n_parts = 6 + n_settings + shard_active(&shard);
    const char **parts = kc_malloc((size_t)n_parts * sizeof *parts);
    parts[0] = "kc-refine";
    parts[1] = KC_VERSION;
    parts[2] = masks;
    parts[3] = in.hash;
    parts[4] = spec;
    parts[5] = params;
    for (int s = 0; s < n_settings; s++) parts[6 + s] = settings[s];
    if (shard_active(&shard)) parts[6 + n_settings] = shard_str(&shard, shard_s);
    char fp[65];
    cache_fingerprint(fp, n_parts, parts);
    free(parts);
    int n_batches = (n + BATCH - 1) / BATCH;
    cache_writer w;
    if (cache_writer_open(&w, out, CACHE_FORMAT_MASKS, fp, n_batches) < 0) kc_die();
    kc_info("%d images x %d settings, %s", n, n_settings, refine_method_name(o.method));
    progress p;
    progress_init(&p, "refine", n, "images");
    mask_out *res = kc_calloc((size_t)BATCH * n_settings, sizeof *res); /* (BATCH, settings) */
    int rc_img[BATCH];
    char err[BATCH][1024];
    long dropped_total = 0;
    for (int b = 0; b < n_batches; b++) {
        int i0, i1;
        if (!derive_batch_todo(&w, &p, b, BATCH, n, &i0, &i1)) continue;
#pragma omp parallel for schedule(dynamic, 1)
        for (int i = i0; i < i1; i++) {
            int k = i - i0;
            rc_img[k] = refine_one(r, &o, settings, n_settings, policy, patch, &jobs[i], res + (size_t)k * n_settings);
            if (rc_img[k] < 0) snprintf(err[k], sizeof err[k], "%s", kc_error());
            progress_add(&p, 1);
        }
        for (int k = 0; k < i1 - i0; k++)
            if (rc_img[k] < 0) {
                kc_set_error(err[k]);
                kc_die();
            }
        cache_piece *pc = cache_piece_new(&w, b);
        for (int s = 0; s < n_settings; s++)
            for (int i = i0; i < i1; i++) {
                mask_out *m = &res[(size_t)(i - i0) * n_settings + s];
                char *dset = kc_strfmt("/masks/%s/%s", settings[s], r->index.ids[i]);
                int64_t dims[2] = {r->index.size[2 * i], r->index.size[2 * i + 1]};
                int rc = cache_piece_put_u8(pc, dset, m->px, 2, dims);
                if (rc == 0) rc = cache_piece_attr_f32(pc, dset, "lambda2", m->lambda2, m->n_rounds);
                if (rc == 0) rc = cache_piece_attr_f32(pc, dset, "eigengap", m->eigengap, m->n_rounds);
                if (rc == 0) rc = cache_piece_attr_i32(pc, dset, "degenerate", m->degenerate);
                if (rc == 0 && m->has_knife) rc = cache_piece_attr_i32(pc, dset, "knife_edge", m->knife);
                if (rc == 0 && m->has_knife) rc = cache_piece_attr_f32(pc, dset, "knife_margin", &m->knife_margin, 1);
                if (rc == 0) rc = cache_piece_attr_f32(pc, dset, "refine_iou", m->iou, m->n_rounds);
                if (rc == 0) rc = cache_piece_attr_i32(pc, dset, "refine_dropped", m->dropped);
                if (rc == 0) rc = cache_piece_copy_image_sha(pc, dset, r, dset);
                if (rc < 0) {
                    cache_piece_abort(pc);
                    kc_die();
                }
                dropped_total += m->dropped;
                free(m->px);
                m->px = NULL;
                free(dset);
            }
        if (cache_piece_commit(pc) < 0) kc_die();
    }
    progress_end(&p);
    free(res);
    cache_prov prov = {0, NULL, NULL};
    derive_prov(&prov, &in);
    prov_set(&prov, "refine", refine_method_name(o.method));
    prov_set(&prov, "refine_params", params);
    prov_set(&prov, "masks", masks);
    prov_set(&prov, "masks_content_hash", in.hash);
    prov_set(&prov, "refine_dataset", spec);
    if (derive_finish(&in, &w, &prov, BATCH, out) < 0) kc_die();
    char took[32];
    progress_fmt_time(kc_now() - t0, took, sizeof took);
    if (o.method == REFINE_CRF) kc_info("%ld masks dropped by the IoU filter (< %g)", dropped_total, o.crf_min_iou);
    kc_info("wrote %s (%d images x %d settings, %s) in %s", out, n, n_settings, refine_method_name(o.method), took);
    for (int s = 0; s < n_settings; s++) free(settings[s]);
    free(settings);
    free(jobs);
    dataset_free(&ds);
    return 0;
}
