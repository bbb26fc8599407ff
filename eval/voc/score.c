/* eval/voc/score.c — VOC Jaccard and CorLoc of every setting in a masks cache, attention-mass
 * settings by DINO's protocol, and the selection split (see score.h; box-only CorLoc is
 * score_boxes.c's). */
#include "eval/voc/score.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/splits.h"
#include "datasets/voc.h"
#include "eval/voc/attn_metrics.h"
#include "eval/voc/score_io.h"
#include "eval/voc/voc_metrics.h"
#include "pipeline/cache/cache.h"
#include "pipeline/kc.h"
#include "pipeline/lock.h"
#include "pipeline/progress.h"
#include "pipeline/sha256.h"

int score_make_selection(const char *train, const char *out, int count)
{
    char *path, name[32];
    kc_lock *lock;
    snprintf(name, sizeof name, "select%d", count);
    KC_TRY(kc_lock_folder(&lock, out, name));
    kc_outputs_begin();
    if (split_make_selection(train, out, count, &path) < 0 || kc_outputs_commit() < 0) return -1;
    kc_lock_release(lock);
    kc_info("wrote %s (%d id%s) and %s.sha256", path, count, kc_s(count), path);
    free(path);
    return 0;
}

/* ---- attention-mass settings (eval/voc/attn_metrics.h) ---------------------------------------------- */

/* Ground truth of every image as attn_metrics cells (loaded once, for the attention settings). */
static int load_attn_cells(const cache_reader *r, const char *voc, char **ids, int n, const int *cix,
                           kc_policy policy, int patch, attn_cells *cells)
{
    score_first_error bad;
    score_first_error_init(&bad, n);
#pragma omp parallel for schedule(dynamic, 4)
    for (int i = 0; i < n; i++) {
        voc_gt g;
        int k = cix[i], rc = voc_gt_load(voc, ids[i], 0, &g);
        if (rc == 0) {
            rc = attn_cells_init(&cells[i], g.object, g.h, g.w, policy, patch, r->index.grid[2 * k],
                                 r->index.grid[2 * k + 1]);
            if (rc < 0) kc_fail_prefix("%s: image %s", r->path, ids[i]);
            voc_gt_free(&g);
        }
        if (rc < 0) score_first_error_note(&bad, i);
    }
    return score_first_error_raise(&bad);
}

/* One attention-mass setting: DINO's best-head Jaccard per image (mean over its objects), the
 * plain foreground Jaccard of every head, and their means.  cells: NULL-initialised on first use. */
static int score_attn(const cache_reader *r, const char *voc, char **ids, int n, const int *cix, kc_policy policy,
                      int patch, const char *setting, attn_cells **cells, score_setting *o)
{
    if (!*cells) {
        *cells = kc_calloc((size_t)n, sizeof **cells);
        KC_TRY(load_attn_cells(r, voc, ids, n, cix, policy, patch, *cells));
    }
    int heads = 0, n_scored = 0, rc = 0;
    double *fg = NULL, *om = NULL, *sum_fg = NULL, *sum_om = NULL, sum_best = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        char *d = kc_strfmt("/masks/%s/%s", setting, ids[i]);
        uint8_t *m = NULL;
        int nh, gh, gw, k = cix[i];
        rc = cache_read_u8_stack(r, d, &m, &nh, &gh, &gw);
        if (rc == 0 && (gh != r->index.grid[2 * k] || gw != r->index.grid[2 * k + 1]))
            rc = kc_fail("%s: %s is %dx%d per head, /index/grid says %dx%d", r->path, d, gw, gh, r->index.grid[2 * k + 1],
                         r->index.grid[2 * k]);
        if (rc == 0 && heads && nh != heads)
            rc = kc_fail("%s: %s has %d heads, earlier images %d", r->path, d, nh, heads);
        if (rc == 0 && !heads) {
            heads = nh;
            fg = kc_calloc((size_t)heads, sizeof *fg);
            om = kc_calloc((size_t)heads, sizeof *om);
            sum_fg = kc_calloc((size_t)heads, sizeof *sum_fg);
            sum_om = kc_calloc((size_t)heads, sizeof *sum_om);
            kc_buf_printf(&o->csv, "id,setting,jaccard,objects");
            for (int h = 0; h < heads; h++) kc_buf_printf(&o->csv, ",fg_jaccard_h%d", h);
            kc_buf_printf(&o->csv, "\n");
        }
        if (rc == 0) {
            attn_score sc;
            attn_score_stack(&(*cells)[i], m, heads, &sc, fg, om);
            kc_buf_printf(&o->csv, "%s,%s,", ids[i], setting);
            if (sc.n_objects) kc_buf_printf(&o->csv, "%.9g", sc.best);
            kc_buf_printf(&o->csv, ",%d", sc.n_objects);
            for (int h = 0; h < heads; h++) kc_buf_printf(&o->csv, ",%.9g", fg[h]);
            kc_buf_printf(&o->csv, "\n");
            if (sc.n_objects) {
                sum_best += sc.best;
                n_scored++;
                for (int h = 0; h < heads; h++) sum_om[h] += om[h];
            }
            for (int h = 0; h < heads; h++) sum_fg[h] += fg[h];
        }
        free(m);
        free(d);
    }
    if (rc == 0 && n_scored == 0) rc = kc_fail("%s: %s: no image of the split has an object to score", r->path, setting);
    if (rc == 0) {
        o->jaccard = sum_best / n_scored;
        o->corloc = NAN;
        int best = 0;
        for (int h = 1; h < heads; h++)
            if (sum_fg[h] > sum_fg[best]) best = h;
        kc_buf_printf(&o->heads, "head,images,fg_jaccard,object_jaccard,best_fg\n");
        for (int h = 0; h < heads; h++)
            kc_buf_printf(&o->heads, "%d,%d,%.9g,%.9g,%d\n", h, n, sum_fg[h] / n, sum_om[h] / n_scored, h == best);
        kc_buf_printf(&o->columns,
                      "# %s: DINO's attention-mass masks scored as DINO's authors describe (dino issue 54;\n"
                      "# docs/attention-baseline.md).  Objects: SegmentationObject values 1..254; 255 (void) counts nowhere.\n"
                      "%s.csv, one row per image:\n"
                      "  id            image id\n"
                      "  setting       %s\n"
                      "  jaccard       mean over the image's objects of the best head's Jaccard with that object\n"
                      "                (empty for an image without objects, left out of the mean)\n"
                      "  objects       number of objects in SegmentationObject\n"
                      "  fg_jaccard_hH head H's mask against the union of all objects (the plain foreground Jaccard)\n"
                      "%s.heads.csv, one row per head:\n"
                      "  head, images  head index, images averaged\n"
                      "  fg_jaccard    mean over images of fg_jaccard_hH\n"
                      "  object_jaccard mean over images (with objects) of the mean over objects of head H's Jaccard\n"
                      "  best_fg       1 for the best fixed head by fg_jaccard (here head %d)\n"
                      "summary.csv: jaccard = mean of the per-image jaccard over the %d images with objects; corloc empty\n",
                      setting, setting, setting, setting, best, n_scored);
    }
    free(fg);
    free(om);
    free(sum_fg);
    free(sum_om);
    return rc;
}

/* ---- Jaccard and CorLoc (eval/voc/voc_metrics.h) ------------------------------------------------------ */

typedef struct image_gt {
    voc_cells cells;
    voc_gt px; /* refined pixel masks: the ground truth itself, scored per pixel (voc_score_naive) */
} image_gt;

/* Ground truth: everything the score needs, per image, checked against the cache's image sizes. */
static int load_gt(const cache_reader *r, const score_opts *o, char **ids, int n, const int *cix, kc_policy policy,
                   int patch, int pixel, image_gt *gt)
{
    voc_init();
    progress pg;
    progress_init(&pg, "ground truth", n, "images");
    score_first_error bad;
    score_first_error_init(&bad, n);
#pragma omp parallel for schedule(dynamic, 4)
    for (int i = 0; i < n; i++) {
        voc_gt g;
        int rc = voc_gt_load(o->voc, ids[i], 0, &g);
        if (rc == 0) {
            int k = cix[i];
            int h = r->index.size[2 * k], w = r->index.size[2 * k + 1];
            if (g.h != h || g.w != w)
                rc = kc_fail("%s: image %s is %dx%d in the masks cache but %dx%d in %s (other images?)", o->masks,
                             ids[i], w, h, g.w, g.h, o->voc);
            else if (pixel) /* per-cell counts of a pixel grid would take 12 bytes a pixel: keep the labels */
                gt[i].px = g, g.object = NULL;
            else if ((rc = voc_cells_init(&gt[i].cells, g.object, g.h, g.w, g.boxes, g.n_boxes, policy, patch,
                                          r->index.grid[2 * k], r->index.grid[2 * k + 1])) < 0)
                kc_fail_prefix("%s: image %s", o->masks, ids[i]);
            if (g.object) voc_gt_free(&g);
        }
        if (rc < 0) score_first_error_note(&bad, i);
        progress_add(&pg, 1);
    }
    progress_end(&pg);
    return score_first_error_raise(&bad);
}

/* One setting of label maps: mr (n) and sc (n) are scratch. */
static int score_labels(const cache_reader *r, char **ids, int n, const int *cix, kc_policy policy, int patch,
                        int pixel, const image_gt *gt, const char *setting, score_mask *mr, voc_score *sc,
                        score_setting *o)
{
    for (int i = 0; i < n; i++)
        if (score_mask_read(r, setting, ids[i], cix[i], &mr[i]) < 0) {
            for (int j = 0; j < i; j++) free(mr[j].labels), mr[j].labels = NULL;
            return -1;
        }
    /* about a microsecond per mask: serial (a parallel region per setting costs more on a busy
     * machine than the work; the HDF5 reads above dominate anyway) */
    for (int i = 0; i < n; i++)
        if (pixel)
            voc_score_naive(gt[i].px.object, gt[i].px.h, gt[i].px.w, gt[i].px.boxes, gt[i].px.n_boxes, policy, patch,
                            mr[i].labels, mr[i].rows, mr[i].cols, &sc[i]);
        else
            voc_score_mask(&gt[i].cells, mr[i].labels, &sc[i]);
    kc_buf_printf(&o->csv, "id,setting,jaccard,corloc,area,lambda2,eigengap,degenerate,knife_edge\n");
    double sj = 0, sl = 0;
    for (int i = 0; i < n; i++) {
        kc_buf_printf(&o->csv, "%s,%s,%.9g,%d,%.9g,%.9g,%.9g,%d,", ids[i], setting, sc[i].jaccard, sc[i].corloc,
                      sc[i].area, (double)mr[i].lambda2, (double)mr[i].eigengap, (int)mr[i].degenerate);
        if (mr[i].knife >= 0) kc_buf_printf(&o->csv, "%d", (int)mr[i].knife);
        kc_buf_printf(&o->csv, "\n");
        sj += sc[i].jaccard;
        sl += sc[i].corloc;
        free(mr[i].labels);
        mr[i].labels = NULL;
    }
    o->jaccard = sj / n;
    o->corloc = sl / n;
    return 0;
}

/* Every setting's CSV (and an attention setting's two more files), then the summary and the
 * ledger line. */
static int write_outputs(const score_opts *o, const score_setting *res, int n_settings, int n, const char *network,
                         const char split_hash[65], char **summary_path)
{
    KC_TRY(kc_mkdirs(o->out));
    kc_buf summary = {0};
    kc_buf_printf(&summary, "setting,images,jaccard,corloc\n");
    int rc = 0;
    for (int s = 0; s < n_settings && rc == 0; s++) {
        char *p = kc_strfmt("%s/%s.csv", o->out, res[s].name);
        rc = kc_write_file_atomic(p, res[s].csv.s, res[s].csv.n);
        free(p);
        if (isnan(res[s].corloc)) /* attention settings: no CorLoc */
            kc_buf_printf(&summary, "%s,%d,%.9g,\n", res[s].name, n, res[s].jaccard);
        else
            kc_buf_printf(&summary, "%s,%d,%.9g,%.9g\n", res[s].name, n, res[s].jaccard, res[s].corloc);
        if (rc == 0 && res[s].heads.n) {
            char *hp = kc_strfmt("%s/%s.heads.csv", o->out, res[s].name), *cp = kc_strfmt("%s/%s.columns.txt", o->out, res[s].name);
            if (kc_write_file_atomic(hp, res[s].heads.s, res[s].heads.n) < 0 ||
                kc_write_file_atomic(cp, res[s].columns.s, res[s].columns.n) < 0)
                rc = -1;
            free(hp);
            free(cp);
        }
    }
    *summary_path = kc_strfmt("%s/summary.csv", o->out);
    if (rc == 0)
        rc = score_write_summary(*summary_path, &summary, o->out, network, o->split, split_hash, n_settings, o->ledger);
    free(summary.s);
    return rc < 0 ? -1 : 0;
}

int score_voc(const score_opts *o)
{
    kc_outputs_begin(); /* every file appears at the end, together */
    /* the split and its hash */
    char **ids;
    int n;
    KC_TRY(split_read(o->split, &ids, &n));
    int rc = -1;
    char split_hash[65];
    cache_reader r = {0};
    char **settings = NULL;
    int n_settings = 0;
    image_gt *gt = NULL;
    int *cix = NULL;
    score_setting *res = NULL;
    score_mask *mr = NULL;
    voc_score *sc = NULL;
    attn_cells *acells = NULL;
    char *sp = NULL;
    if (kc_sha256_file(o->split, split_hash) < 0) goto done;

    /* the masks cache and its provenance */
    if (cache_open(&r, o->masks, CACHE_FORMAT_MASKS) < 0) goto done;
    kc_policy policy;
    int patch;
    if (score_check_cache(&r, ids, n, &policy, &patch) < 0) goto done;
    const int pixel = score_pixel_masks(&r);
    if (pixel) policy = POLICY_SQUARE480; /* pixel masks: the identity mapping */
    if (cache_list(&r, "/masks", &settings, &n_settings) < 0) goto done;
    if (n_settings == 0) {
        kc_fail("%s: no settings under /masks", o->masks);
        goto done;
    }
    const char *network = o->network ? o->network : cache_attr(&r, "network");
    const int stacks = cache_masks_are_stacks(&r); /* attention-mass settings, scored by DINO's protocol */

    gt = kc_calloc((size_t)n, sizeof *gt);
    cix = kc_malloc((size_t)n * sizeof *cix);
    for (int i = 0; i < n; i++) cix[i] = cache_index_find(&r.index, ids[i]);
    if (load_gt(&r, o, ids, n, cix, policy, patch, pixel, gt) < 0) goto done;

    /* every setting */
    res = kc_calloc((size_t)n_settings, sizeof *res);
    mr = kc_calloc((size_t)n, sizeof *mr);
    sc = kc_malloc((size_t)n * sizeof *sc);
    progress pg;
    progress_init(&pg, "score", (long)n_settings * n, "masks");
    for (int s = 0; s < n_settings; s++) {
        res[s].name = settings[s];
        if (stacks) {
            if (score_attn(&r, o->voc, ids, n, cix, policy, patch, settings[s], &acells, &res[s]) < 0) goto done;
        } else if (score_labels(&r, ids, n, cix, policy, patch, pixel, gt, settings[s], mr, sc, &res[s]) < 0) {
            goto done;
        }
        progress_add(&pg, n);
    }
    progress_end(&pg);

    /* outputs: all files, then the ledger line */
    if (write_outputs(o, res, n_settings, n, network, split_hash, &sp) < 0) goto done;
    int best = 0;
    for (int s = 1; s < n_settings; s++)
        if (res[s].jaccard > res[best].jaccard) best = s;
    char tbuf[32];
    progress_fmt_time(kc_now() - o->t0, tbuf, sizeof tbuf);
    kc_info("%d setting%s x %d image%s -> %s (best Jaccard %.4f at %s; CorLoc %.4f) in %s", n_settings,
            kc_s(n_settings), n, kc_s(n), sp, res[best].jaccard, res[best].name, res[best].corloc, tbuf);
    rc = 0;
done:
    free(sp);
    for (int s = 0; res && s < n_settings; s++) {
        free(res[s].csv.s);
        free(res[s].heads.s);
        free(res[s].columns.s);
    }
    for (int s = 0; s < n_settings; s++) free(settings[s]);
    free(res);
    free(settings);
    for (int i = 0; gt && i < n; i++) {
        voc_cells_free(&gt[i].cells);
        if (gt[i].px.object) voc_gt_free(&gt[i].px);
    }
    for (int i = 0; acells && i < n; i++) attn_cells_free(&acells[i]);
    free(acells);
    free(gt);
    free(cix);
    free(mr);
    free(sc);
    if (r.path) cache_close(&r);
    split_free(ids, n);
    return rc;
}
