/* eval/voc/score_boxes.c — box-only CorLoc of every setting in a masks cache, the LOST / TokenCut
 * protocol (eval/voc/corloc.h, docs/corloc.md; see score.h).
 *
 * Per image the round-1 mask's box (voc_mask_box) is a hit when corloc_hit says so against the
 * image's boxes: VOC Annotations XML (corners xmin - 1, ymin - 1; no_hard drops difficult and
 * truncated objects, and an image left without any leaves the denominator, as theirs does) or
 * COCO instances (datasets/coco.h; an image with only crowd boxes counts as a miss).  CorLoc is
 * the hits over the images scored. */
#include "eval/voc/score.h"

#include <stdlib.h>

#include "datasets/coco.h"
#include "datasets/splits.h"
#include "datasets/voc.h"
#include "eval/voc/corloc.h"
#include "eval/voc/score_io.h"
#include "eval/voc/voc_metrics.h"
#include "pipeline/cache/cache.h"
#include "pipeline/kc.h"
#include "pipeline/progress.h"
#include "pipeline/sha256.h"

typedef struct box_gt {
    int n;
    kc_box *boxes; /* shifted / rounded as the protocol says */
    int w, h;      /* from the annotation (0 = not given) */
    int skip;      /* no_hard: no box left, left out of the denominator as theirs */
} box_gt;

static void box_gt_free(box_gt *gt, int n)
{
    for (int i = 0; gt && i < n; i++) free(gt[i].boxes);
    free(gt);
}

/* The images of the COCO list and their boxes. */
static int coco_boxes(const score_opts *o, char ***ids_out, int *n_out, box_gt **gt_out)
{
    coco_gt cg = {0};
    KC_TRY(coco_gt_load(o->coco, o->split, o->box_cache, &cg));
    const int n = cg.n;
    char **ids = kc_malloc((size_t)n * sizeof *ids);
    box_gt *gt = kc_calloc((size_t)n, sizeof *gt);
    int crowd_only = 0;
    for (int i = 0; i < n; i++) {
        ids[i] = kc_strdup(cg.img[i].id);
        gt[i] = (box_gt){cg.img[i].n_boxes, cg.img[i].boxes, cg.img[i].w, cg.img[i].h, 0};
        cg.img[i].boxes = NULL;
        crowd_only += cg.img[i].n_boxes == 0;
    }
    if (crowd_only) kc_warn("%s: %d listed images have only crowd boxes (misses, counted)", o->split, crowd_only);
    coco_gt_free(&cg);
    *ids_out = ids, *n_out = n, *gt_out = gt;
    return 0;
}

/* The split's ids and the boxes of their VOC annotations, read in parallel. */
static int voc_boxes(const score_opts *o, char ***ids_out, int *n_out, box_gt **gt_out)
{
    char **ids;
    int n;
    KC_TRY(split_read(o->split, &ids, &n));
    box_gt *gt = kc_calloc((size_t)n, sizeof *gt);
    *ids_out = ids, *n_out = n, *gt_out = gt; /* (the caller frees them, also on a failure) */
    voc_init();
    score_first_error bad;
    score_first_error_init(&bad, n);
#pragma omp parallel for schedule(dynamic, 8)
    for (int i = 0; i < n; i++) {
        char *xml = kc_strfmt("%s/Annotations/%s.xml", o->voc, ids[i]);
        voc_box *b;
        char **names;
        uint8_t *hard;
        int nb, w, h;
        int rc = voc_read_annotation_hard(xml, &b, &names, &hard, &nb, &w, &h);
        if (rc == 0) {
            int k = 0;
            for (int j = 0; j < nb; j++) {
                free(names[j]);
                if (o->no_hard && hard[j]) continue;
                b[k] = b[j];
                b[k].xmin -= 1; /* 1-based inclusive corners -> [xmin - 1, xmax] as theirs */
                b[k].ymin -= 1;
                k++;
            }
            free(names);
            free(hard);
            gt[i] = (box_gt){k, b, w, h, o->no_hard && k == 0};
        } else {
            score_first_error_note(&bad, i);
        }
        free(xml);
    }
    return score_first_error_raise(&bad);
}

/* One setting: the per-image CSV and CorLoc over the n_used images not skipped. */
static int score_setting_boxes(const cache_reader *r, char **ids, int n, const int *cix, kc_policy policy, int patch,
                               const box_gt *gt, int n_used, score_setting *o)
{
    kc_buf_printf(&o->csv, "id,setting,jaccard,corloc,area,lambda2,eigengap,degenerate,knife_edge\n");
    double hits = 0;
    for (int i = 0; i < n; i++) {
        int k = cix[i];
        score_mask m;
        KC_TRY(score_mask_read(r, o->name, ids[i], k, &m));
        if (!gt[i].skip) {
            int h = r->index.size[2 * k], w = r->index.size[2 * k + 1];
            double box[4];
            int hit = voc_mask_box(policy, patch, w, h, m.labels, m.rows, m.cols, box) && corloc_hit(box, gt[i].boxes, gt[i].n);
            kc_buf_printf(&o->csv, "%s,%s,,%d,%.9g,%.9g,%.9g,%d,", ids[i], o->name, hit,
                          voc_mask_area(policy, patch, w, h, m.labels, m.rows, m.cols), (double)m.lambda2,
                          (double)m.eigengap, (int)m.degenerate);
            if (m.knife >= 0) kc_buf_printf(&o->csv, "%d", (int)m.knife); /* empty: the cache predates the flag */
            kc_buf_printf(&o->csv, "\n");
            hits += hit;
        }
        free(m.labels);
    }
    o->corloc = hits / n_used;
    return 0;
}

int score_boxes(const score_opts *o)
{
    kc_outputs_begin(); /* every file appears at the end, together (the COCO box cache too) */
    char **ids = NULL;
    int n = 0;
    box_gt *gt = NULL;
    int rc = -1;
    cache_reader r = {0};
    char **settings = NULL;
    int n_settings = 0;
    int *cix = NULL;
    score_setting *res = NULL;
    kc_buf summary = {0};
    char *sp = NULL;
    if ((o->coco ? coco_boxes(o, &ids, &n, &gt) : voc_boxes(o, &ids, &n, &gt)) < 0) goto done;
    char split_hash[65];
    if (kc_sha256_file(o->split, split_hash) < 0) goto done;
    if (cache_open(&r, o->masks, CACHE_FORMAT_MASKS) < 0) goto done;
    kc_policy policy;
    int patch;
    if (score_check_cache(&r, ids, n, &policy, &patch) < 0) goto done;
    if (policy != POLICY_NATIVE16)
        kc_warn("%s: %s masks; the published CorLoc uses native16", o->masks, voc_policy_name(policy));
    if (score_pixel_masks(&r)) policy = POLICY_SQUARE480; /* pixel masks: the identity mapping */
    if (cache_list(&r, "/masks", &settings, &n_settings) < 0) goto done;
    if (n_settings == 0) {
        kc_fail("%s: no settings under /masks", o->masks);
        goto done;
    }
    const char *network = o->network ? o->network : cache_attr(&r, "network");
    cix = kc_malloc((size_t)n * sizeof *cix);
    int n_used = 0;
    for (int i = 0; i < n; i++) {
        int k = cix[i] = cache_index_find(&r.index, ids[i]);
        int h = r.index.size[2 * k], w = r.index.size[2 * k + 1];
        if (gt[i].w > 0 && gt[i].h > 0 && (gt[i].w != w || gt[i].h != h)) {
            kc_fail("%s: image %s is %dx%d in the masks cache but %dx%d in its %s annotation", o->masks, ids[i], w, h,
                    gt[i].w, gt[i].h, o->coco ? "COCO" : "VOC");
            goto done;
        }
        n_used += !gt[i].skip;
    }
    if (n_used == 0) {
        kc_fail("%s: --no-hard leaves no image", o->split);
        goto done;
    }
    if (n_used < n)
        kc_info("--no-hard: %d of %d images have only difficult or truncated objects and are left out", n - n_used, n);
    res = kc_calloc((size_t)n_settings, sizeof *res);
    progress pg;
    progress_init(&pg, "corloc", (long)n_settings * n, "masks");
    for (int s = 0; s < n_settings; s++) {
        res[s].name = settings[s];
        if (score_setting_boxes(&r, ids, n, cix, policy, patch, gt, n_used, &res[s]) < 0) goto done;
        progress_add(&pg, n);
    }
    progress_end(&pg);
    if (kc_mkdirs(o->out) < 0) goto done;
    kc_buf_printf(&summary, "setting,images,jaccard,corloc\n");
    for (int s = 0; s < n_settings; s++) {
        char *p = kc_strfmt("%s/%s.csv", o->out, res[s].name);
        int wrc = kc_write_file_atomic(p, res[s].csv.s, res[s].csv.n);
        free(p);
        if (wrc < 0) goto done;
        kc_buf_printf(&summary, "%s,%d,,%.9g\n", res[s].name, n_used, res[s].corloc);
    }
    sp = kc_strfmt("%s/summary.csv", o->out);
    if (score_write_summary(sp, &summary, o->out, network, o->split, split_hash, n_settings, o->ledger) < 0) goto done;
    char tbuf[32];
    progress_fmt_time(kc_now() - o->t0, tbuf, sizeof tbuf);
    kc_info("boxes only: %d setting%s x %d image%s -> %s (CorLoc %.4f at %s) in %s", n_settings, kc_s(n_settings),
            n_used, kc_s(n_used), sp, res[0].corloc, res[0].name, tbuf);
    rc = 0;
done:
    free(sp);
    free(summary.s);
    for (int s = 0; res && s < n_settings; s++) free(res[s].csv.s);
    for (int s = 0; s < n_settings; s++) free(settings[s]);
    free(res);
    free(settings);
    box_gt_free(gt, n);
    free(cix);
    if (r.path) cache_close(&r);
    if (ids) split_free(ids, n);
    return rc;
}
