/* decoders/refine/refine_cache.c — kc-refine's run over a masks cache (see refine_cache.h). */
#include "decoders/refine/refine_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/cache/cache.h"
#include "pipeline/images/image.h"
#include "pipeline/kc.h"
#include "pipeline/progress.h"

enum { BATCH = 8, MAX_ROUNDS = 16 };

/* One refined mask and the attributes it carries on. */
typedef struct mask_out {
    uint8_t *px; /* (H, W) */
    float lambda2[MAX_ROUNDS], eigengap[MAX_ROUNDS], knife_margin, iou[MAX_ROUNDS];
    int n_rounds, has_knife;
    int32_t degenerate, knife, dropped;
} mask_out;

/* One image (row k_row of the index, its file path), every setting: reads the label maps and the
 * decoder's attributes, refines them.  0 or -1 with the error set. */
static int refine_one(const cache_reader *r, const refine_opts *o, char **settings, int n_settings, kc_policy policy,
                      int patch, int k_row, const char *path, mask_out *outs)
{
    const char *id = r->index.ids[k_row];
    const int gh = r->index.grid[2 * k_row], gw = r->index.grid[2 * k_row + 1];
    const int H = r->index.size[2 * k_row], W = r->index.size[2 * k_row + 1];
    kc_image img;
    KC_TRY(image_load_rgb(path, &img));
    int rc = 0;
    if (img.w != W || img.h != H)
        rc = kc_fail("%s: is %dx%d, but the masks of %s were made from a %dx%d image (changed since?)", path, img.w,
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

/* Every constant of the method, for the fingerprint and the provenance (refine_params). */
static void params_text(const refine_opts *o, const char *policy_name, char *params, size_t size)
{
    if (o->method == REFINE_CRF)
        snprintf(params, size,
                 "crf (MaskCut crf.py, densecrf permutohedral lattice, symmetric normalisation, Potts): iters %d, "
                 "gaussian sxy %.9g w %.9g, bilateral sxy %.9g srgb %.9g w %.9g, unary clip %.9g, min IoU %.9g; "
                 "mask repeated to the %s image, argmax (tie: background), holes filled, back by Pillow bicubic, "
                 "threshold max/2",
                 o->crf.iters, o->crf.gauss_sxy, o->crf.gauss_w, o->crf.bi_sxy, o->crf.bi_srgb, o->crf.bi_w, o->crf_clip,
                 o->crf_min_iou, policy_name);
    else
        snprintf(params, size,
                 "bs (TokenCut bilateral_solver.py, SciPy 1.10 cg): sigma spatial %.9g luma %.9g chroma %.9g, lambda "
                 "%.9g, confidence %.9g, bistochastisation %d, cg tol %.9g maxiter %d, diag min %.9g, threshold %.9g, "
                 "holes filled, components %s",
                 o->bs.sigma_spatial, o->bs.sigma_luma, o->bs.sigma_chroma, o->bs.lambda, o->bs.confidence, o->bs.bistoch_iters,
                 o->bs.cg_tol, o->bs.cg_maxiter, o->bs.diag_min, o->bs_threshold, o->bs_components ? "tokencut" : "plain");
}

int refine_cache(const refine_run *run)
{
    const refine_opts o = *run->o;
    derive_input *const in = run->in;
    const cache_reader *const r = &in->r;
    const char *const masks = run->masks, *const spec = run->spec, *const out = run->out, *const pol = run->policy_name;
    char **const settings = run->settings;
    const int n_settings = run->n_settings, n = r->index.n;
    char params[1024];
    params_text(&o, pol, params, sizeof params);
    char shard_s[32];
    int n_parts = 6 + n_settings + shard_active(&in->shard);
    const char **parts = kc_malloc((size_t)n_parts * sizeof *parts);
    parts[0] = "kc-refine";
    parts[1] = KC_VERSION;
    parts[2] = masks;
    parts[3] = in->hash;
    parts[4] = spec;
    parts[5] = params;
    for (int s = 0; s < n_settings; s++) parts[6 + s] = settings[s];
    if (shard_active(&in->shard)) parts[6 + n_settings] = shard_str(&in->shard, shard_s);
    char fp[65];
    cache_fingerprint(fp, n_parts, parts);
    free(parts);
    int n_batches = (n + BATCH - 1) / BATCH;
    cache_writer w;
    KC_TRY(cache_writer_open(&w, out, CACHE_FORMAT_MASKS, fp, n_batches));
    kc_info("%d image%s x %d setting%s, %s", n, kc_s(n), n_settings, kc_s(n_settings), refine_method_name(o.method));
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
            rc_img[k] = refine_one(r, &o, settings, n_settings, run->policy, run->patch, i, run->paths[i],
                                   res + (size_t)k * n_settings);
            if (rc_img[k] < 0) snprintf(err[k], sizeof err[k], "%s", kc_error());
            progress_add(&p, 1);
        }
        KC_TRY(derive_batch_error(rc_img, err, i1 - i0));
        cache_piece *pc = cache_piece_new(&w, b);
        for (int s = 0; s < n_settings; s++)
            for (int i = i0; i < i1; i++) {
                mask_out *m = &res[(size_t)(i - i0) * n_settings + s];
                char *dset = kc_strfmt("/masks/%s/%s", settings[s], r->index.ids[i]);
                const cache_mask cm = {m->px, r->index.size[2 * i], r->index.size[2 * i + 1], m->lambda2, m->eigengap,
                                       m->n_rounds, m->degenerate, m->has_knife, m->knife, m->knife_margin};
                int rc = cache_piece_put_mask(pc, dset, &cm);
                if (rc == 0) rc = cache_piece_attr_f32(pc, dset, "refine_iou", m->iou, m->n_rounds);
                if (rc == 0) rc = cache_piece_attr_i32(pc, dset, "refine_dropped", m->dropped);
                if (rc == 0) rc = cache_piece_copy_image_sha(pc, dset, r, dset);
                if (rc < 0) {
                    cache_piece_abort(pc);
                    return -1;
                }
                dropped_total += m->dropped;
                free(m->px);
                m->px = NULL;
                free(dset);
            }
        KC_TRY(cache_piece_commit(pc));
    }
    progress_end(&p);
    free(res);
    cache_prov prov = {0, NULL, NULL};
    derive_prov(&prov, in);
    prov_set(&prov, "refine", refine_method_name(o.method));
    prov_set(&prov, "refine_params", params);
    prov_set(&prov, "masks", masks);
    prov_set(&prov, "masks_content_hash", in->hash);
    prov_set(&prov, "refine_dataset", spec);
    KC_TRY(derive_finish(in, &w, &prov, BATCH, out));
    char took[32];
    progress_fmt_time(kc_now() - run->t0, took, sizeof took);
    if (o.method == REFINE_CRF) kc_info("%ld masks dropped by the IoU filter (< %g)", dropped_total, o.crf_min_iou);
    kc_info("wrote %s (%d image%s x %d setting%s, %s) in %s", out, n, kc_s(n), n_settings, kc_s(n_settings),
            refine_method_name(o.method), took);
    return 0;
}
