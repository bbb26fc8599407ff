/* stages/kc-score.c — VOC Jaccard and CorLoc of every setting in a masks cache.
 *
 *   kc-score --masks FILE --voc ROOT --split FILE --out DIR [--ledger FILE] [--network NAME]
 *   kc-score --make-selection TRAIN_LIST --out DIR [--count N]
 *
 * Scoring writes DIR/<setting id>.csv (header id,setting,jaccard,corloc,area,lambda2,eigengap,
 * degenerate,knife_edge; lambda2 and eigengap of round 1; knife_edge 0/1 from the mask's attribute,
 * empty for a cache written before it existed), DIR/summary.csv (setting,images,jaccard,corloc)
 * and, when a network name is known, DIR/network; every file atomically.  Only after all of them
 * are written is one line appended to the ledger (see eval/ledger.h).  The masks cache must hold
 * exactly the split's ids, with the ground truth's image sizes, a known `policy` root attribute,
 * a `patch` attribute (required for native16) and grids that fit the policy.
 *
 * Attention-mass settings (attn-mass<m>, kc-decode --kind attn: (heads, h, w) stacks) are scored
 * by DINO's protocol instead (score_attn, eval/attn_metrics.h, docs/attention-baseline.md): the
 * per-image CSV is id,setting,jaccard,objects,fg_jaccard_h0..; DIR/<setting>.heads.csv holds the
 * per-head means and names the best fixed head; DIR/<setting>.columns.txt says what each column
 * means; the summary line has an empty corloc.
 *
 * --make-selection writes the selection split (datasets/splits.h) DIR/select<N>.txt and its
 * .sha256; it opens no labels and appends nothing to the ledger.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/coco.h"
#include "datasets/splits.h"
#include "datasets/voc.h"
#include "decoders/attn_mass.h"
#include "eval/attn_metrics.h"
#include "eval/corloc.h"
#include "eval/ledger.h"
#include "eval/voc_metrics.h"
#include "pipeline/cache/cache.h"
#include "pipeline/kc.h"
#include "pipeline/lock.h"
#include "pipeline/progress.h"
#include "pipeline/sha256.h"

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

typedef struct image_gt {
    voc_cells cells;
    voc_gt px; /* refined pixel masks: the ground truth itself, scored per pixel (voc_score_naive) */
    int ok;
} image_gt;


/* The image sizes and grids of the cache must fit the ground truth and the policy. */
static int check_cache(const cache_reader *r, char **ids, int n, kc_policy *policy, int *patch)
{
    const char *kind = cache_attr(r, "dataset_kind");
    if (kind && !strcmp(kind, "davis"))
        return kc_fail("%s: decoded from a DAVIS dataset (%s), not from VOC images", r->path,
                       cache_attr(r, "dataset") ? cache_attr(r, "dataset") : "davis");
    const char *pol = cache_attr(r, "policy");
    if (!pol) return kc_fail("%s: no 'policy' attribute (not a masks cache keycut can score)", r->path);
    if (voc_policy_parse(pol, policy) < 0) return kc_fail_prefix("%s", r->path);
    const char *ps = cache_attr(r, "patch");
    *patch = 0;
    if (ps) {
        char *end;
        long v = strtol(ps, &end, 10);
        if (end == ps || *end || v <= 0 || v > 1024) return kc_fail("%s: bad 'patch' attribute '%s'", r->path, ps);
        *patch = (int)v;
    } else if (*policy == POLICY_NATIVE16) {
        return kc_fail("%s: native16 masks without a 'patch' attribute", r->path);
    }
    if (r->index.n != n) {
        /* name one id that differs */
        for (int i = 0; i < n; i++)
            if (cache_index_find(&r->index, ids[i]) < 0)
                return kc_fail("%s: decoded from other images than the split (%d images vs %d; split id '%s' "
                               "is not in the cache)", r->path, r->index.n, n, ids[i]);
        return kc_fail("%s: decoded from other images than the split (%d images vs %d in the split)", r->path,
                       r->index.n, n);
    }
    for (int i = 0; i < n; i++)
        if (cache_index_find(&r->index, ids[i]) < 0)
            return kc_fail("%s: decoded from other images than the split (split id '%s' is not in the cache)",
                           r->path, ids[i]);
    if (*patch > 0)
        for (int i = 0; i < n; i++) {
            int gh, gw, h = r->index.size[2 * i], w = r->index.size[2 * i + 1];
            voc_expected_grid(*policy, *patch, w, h, &gh, &gw);
            if (gh != r->index.grid[2 * i] || gw != r->index.grid[2 * i + 1])
                return kc_fail("%s: image %s has a %dx%d grid; %s with patch %d gives %dx%d for %dx%d pixels",
                               r->path, r->index.ids[i], r->index.grid[2 * i + 1], r->index.grid[2 * i], pol,
                               *patch, gw, gh, w, h);
        }
    return 0;
}

static int make_selection(const char *train, const char *out, int count)
{
    char *path, name[32];
    kc_lock *lock;
    snprintf(name, sizeof name, "select%d", count);
    KC_TRY(kc_lock_folder(&lock, out, name));
    kc_outputs_begin();
    if (split_make_selection(train, out, count, &path) < 0 || kc_outputs_commit() < 0) return -1;
    kc_lock_release(lock);
    kc_info("wrote %s (%d ids) and %s.sha256", path, count, path);
    free(path);
    return 0;
}

typedef struct setting_result {
    char *name;
    kc_buf csv;
    double jaccard, corloc;
    kc_buf heads, columns; /* attention settings only: DIR/<setting>.heads.csv, .columns.txt */
} setting_result;

/* The error a parallel loop over n images reports: that of the lowest-numbered image that failed,
 * the one a serial loop would have stopped at.  first_error_note(&e, i) from the failing thread,
 * right after the failed call (kc_error() is per thread); first_error_raise after the loop. */
typedef struct first_error {
    int i, n;
    char msg[2048];
} first_error;

static void first_error_init(first_error *e, int n)
{
    e->i = e->n = n;
    e->msg[0] = 0;
}

static void first_error_note(first_error *e, int i)
{
#pragma omp critical(score_err)
    if (i < e->i) {
        e->i = i;
        snprintf(e->msg, sizeof e->msg, "%s", kc_error());
    }
}

/* 0 when no image failed; else -1 with the first image's error set. */
static int first_error_raise(const first_error *e)
{
    if (e->i >= e->n) return 0;
    kc_set_error(e->msg);
    return -1;
}

/* One label map of a masks cache, /masks/<setting>/<id>, with its attributes: lambda2 and eigengap
 * of round 1 (NaN when absent), degenerate, and knife_edge (-1 for a cache written before the
 * knife-edge flag existed).  k: the image's row in the cache index, whose grid the map must have. */
typedef struct mask_read {
    uint8_t *labels; /* (rows, cols) */
    int rows, cols;
    float lambda2, eigengap;
    int32_t degenerate, knife;
} mask_read;

/* 1 for a cache of kc-refine: label maps are pixel masks at the original image size, scored with
 * the pixel-centre rule of a grid as large as the image, which maps each pixel to itself. */
static int pixel_masks(const cache_reader *r)
{
    const char *v = cache_attr(r, "refine");
    return v && strcmp(v, "none");
}

static int read_mask(const cache_reader *r, const char *setting, const char *id, int k, mask_read *m)
{
    char *d = kc_strfmt("/masks/%s/%s", setting, id);
    float v[64];
    m->labels = NULL;
    m->lambda2 = m->eigengap = NAN;
    m->degenerate = 0;
    m->knife = -1;
    int rc = cache_read_u8(r, d, &m->labels, &m->rows, &m->cols);
    const int32_t *shape = pixel_masks(r) ? r->index.size : r->index.grid;
    if (rc == 0 && (m->rows != shape[2 * k] || m->cols != shape[2 * k + 1]))
        rc = kc_fail("%s: %s is %dx%d, /index/%s says %dx%d", r->path, d, m->cols, m->rows,
                     pixel_masks(r) ? "size (refined pixel masks)" : "grid", shape[2 * k + 1], shape[2 * k]);
    if (rc == 0) rc = cache_read_attr_f32(r, d, "lambda2", v, 64);
    if (rc > 0) m->lambda2 = v[0];
    if (rc >= 0) rc = cache_read_attr_f32(r, d, "eigengap", v, 64);
    if (rc > 0) m->eigengap = v[0];
    if (rc >= 0) rc = cache_read_attr_i32(r, d, "degenerate", &m->degenerate);
    if (rc >= 0 && cache_has_attr(r, d, "knife_edge")) rc = cache_read_attr_i32(r, d, "knife_edge", &m->knife);
    free(d);
    return rc < 0 ? -1 : 0;
}

/* Ground truth of every image as attn_metrics cells (loaded once, for the attention settings). */
static int load_attn_cells(const cache_reader *r, const char *voc, char **ids, int n, const int *cix,
                           kc_policy policy, int patch, attn_cells *cells)
{
    first_error bad;
    first_error_init(&bad, n);
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
        if (rc < 0) first_error_note(&bad, i);
    }
    return first_error_raise(&bad);
}

/* One attention-mass setting: DINO's best-head Jaccard per image (mean over its objects), the
 * plain foreground Jaccard of every head, and their means.  cells: NULL-initialised on first use. */
static int score_attn(const cache_reader *r, const char *voc, char **ids, int n, const int *cix, kc_policy policy,
                      int patch, const char *setting, attn_cells **cells, setting_result *o)
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

/* The end of a scoring run, after the per-setting CSVs: the summary at sp, DIR/network when the
 * network is known, and only then the ledger line (a run that fails appends nothing). */
static int write_summary(const char *sp, const kc_buf *summary, const char *out, const char *network, const char *split,
                         const char split_hash[65], int n_settings, const char *ledger)
{
    if (kc_write_file_atomic(sp, summary->s, summary->n) < 0) return -1;
    if (network) {
        char *np = kc_strfmt("%s/network", out), *nl = kc_strfmt("%s\n", network);
        if (kc_write_file_atomic(np, nl, strlen(nl)) < 0) return -1;
        free(np);
        free(nl);
    }
    /* every file of the run was left under its temporary name: now all are renamed, then the
     * ledger line follows */
    if (kc_outputs_commit() < 0) return -1;
    ledger_entry le;
    memset(&le, 0, sizeof le);
    le.split = (char *)split;
    memcpy(le.split_sha256, split_hash, 65);
    le.networks = (char *)(network ? network : "-");
    le.n_settings = n_settings;
    kc_sha256_buf_hex(summary->s, summary->n, le.summary_sha256);
    return ledger_append(ledger, &le);
}

/* ---- box-only CorLoc, the LOST / TokenCut protocol (eval/corloc.h, docs/corloc.md) ---------- */
typedef struct box_gt {
    int n;
    kc_box *boxes; /* shifted / rounded as the protocol says */
    int w, h;      /* from the annotation (0 = not given) */
    int skip;      /* --no-hard: no box left, left out of the denominator as theirs */
} box_gt;

/* Foreground fraction of the image: the pixels of cells labelled > 0 (grid-to-image mapping of
 * docs/design.md, "From the grid back to the image"). */
static double mask_area(kc_policy p, int patch, int w, int h, const uint8_t *lab, int gh, int gw)
{
    int64_t px = 0;
    if (p == POLICY_NATIVE16) {
        for (int y = 0; y < gh; y++)
            for (int x = 0; x < gw; x++)
                if (lab[(size_t)y * gw + x]) {
                    int64_t cw = (int64_t)((x + 1) * patch < w ? (x + 1) * patch : w) - (int64_t)x * patch;
                    int64_t ch = (int64_t)((y + 1) * patch < h ? (y + 1) * patch : h) - (int64_t)y * patch;
                    if (cw > 0 && ch > 0) px += cw * ch;
                }
    } else {
        for (int y = 0; y < h; y++) {
            int cy = voc_pixel_cell(p, patch, y, h, gh);
            for (int x = 0; x < w; x++)
                if (lab[(size_t)cy * gw + (size_t)voc_pixel_cell(p, patch, x, w, gw)]) px++;
        }
    }
    return (double)px / ((double)w * h);
}

static int score_boxes(const char *masks, const char *voc, const char *coco, const char *split, const char *out,
                       const char *ledger, const char *network, int no_hard, const char *box_cache, double t0)
{
    char **ids = NULL;
    int n = 0;
    box_gt *gt = NULL;
    coco_gt cg = {0};
    if (coco) {
        if (coco_gt_load(coco, split, box_cache, &cg) < 0) return -1;
        n = cg.n;
        ids = kc_malloc((size_t)n * sizeof *ids);
        gt = kc_calloc((size_t)n, sizeof *gt);
        int crowd_only = 0;
        for (int i = 0; i < n; i++) {
            ids[i] = kc_strdup(cg.img[i].id);
            gt[i] = (box_gt){cg.img[i].n_boxes, cg.img[i].boxes, cg.img[i].w, cg.img[i].h, 0};
            cg.img[i].boxes = NULL;
            crowd_only += cg.img[i].n_boxes == 0;
        }
        if (crowd_only) kc_warn("%s: %d listed images have only crowd boxes (misses, counted)", split, crowd_only);
        coco_gt_free(&cg);
    } else {
        if (split_read(split, &ids, &n) < 0) return -1;
        gt = kc_calloc((size_t)n, sizeof *gt);
        voc_init();
        first_error bad;
        first_error_init(&bad, n);
#pragma omp parallel for schedule(dynamic, 8)
        for (int i = 0; i < n; i++) {
            char *xml = kc_strfmt("%s/Annotations/%s.xml", voc, ids[i]);
            voc_box *b;
            char **names;
            uint8_t *hard;
            int nb, w, h;
            int rc = voc_read_annotation_hard(xml, &b, &names, &hard, &nb, &w, &h);
            if (rc == 0) {
                int k = 0;
                for (int j = 0; j < nb; j++) {
                    free(names[j]);
                    if (no_hard && hard[j]) continue;
                    b[k] = b[j];
                    b[k].xmin -= 1; /* 1-based inclusive corners -> [xmin - 1, xmax] as theirs */
                    b[k].ymin -= 1;
                    k++;
                }
                free(names);
                free(hard);
                gt[i] = (box_gt){k, b, w, h, no_hard && k == 0};
            } else {
                first_error_note(&bad, i);
            }
            free(xml);
        }
        if (first_error_raise(&bad) < 0) return -1;
    }
    char split_hash[65];
    if (kc_sha256_file(split, split_hash) < 0) return -1;
    cache_reader r;
    if (cache_open(&r, masks, CACHE_FORMAT_MASKS) < 0) return -1;
    kc_policy policy;
    int patch;
    if (check_cache(&r, ids, n, &policy, &patch) < 0) return -1;
    if (policy != POLICY_NATIVE16) kc_warn("%s: %s masks; the published CorLoc uses native16", masks, voc_policy_name(policy));
    if (pixel_masks(&r)) policy = POLICY_SQUARE480; /* pixel masks: the identity mapping */
    char **settings;
    int n_settings;
    if (cache_list(&r, "/masks", &settings, &n_settings) < 0) return -1;
    if (n_settings == 0) return kc_fail("%s: no settings under /masks", masks);
    if (!network) network = cache_attr(&r, "network");
    int *cix = kc_malloc((size_t)n * sizeof *cix), n_used = 0;
    for (int i = 0; i < n; i++) {
        int k = cix[i] = cache_index_find(&r.index, ids[i]);
        int h = r.index.size[2 * k], w = r.index.size[2 * k + 1];
        if (gt[i].w > 0 && gt[i].h > 0 && (gt[i].w != w || gt[i].h != h))
            return kc_fail("%s: image %s is %dx%d in the masks cache but %dx%d in its %s annotation", masks, ids[i], w,
                           h, gt[i].w, gt[i].h, coco ? "COCO" : "VOC");
        n_used += !gt[i].skip;
    }
    if (n_used == 0) return kc_fail("%s: --no-hard leaves no image", split);
    if (n_used < n) kc_info("--no-hard: %d of %d images have only difficult or truncated objects and are left out", n - n_used, n);
    setting_result *res = kc_calloc((size_t)n_settings, sizeof *res);
    progress pg;
    progress_init(&pg, "corloc", (long)n_settings * n, "masks");
    for (int s = 0; s < n_settings; s++) {
        setting_result *o = &res[s];
        o->name = settings[s];
        kc_buf_printf(&o->csv, "id,setting,jaccard,corloc,area,lambda2,eigengap,degenerate,knife_edge\n");
        double hits = 0;
        for (int i = 0; i < n; i++) {
            int k = cix[i];
            mask_read m;
            if (read_mask(&r, settings[s], ids[i], k, &m) < 0) return -1;
            if (!gt[i].skip) {
                int h = r.index.size[2 * k], w = r.index.size[2 * k + 1];
                double box[4];
                int hit = voc_mask_box(policy, patch, w, h, m.labels, m.rows, m.cols, box) && corloc_hit(box, gt[i].boxes, gt[i].n);
                kc_buf_printf(&o->csv, "%s,%s,,%d,%.9g,%.9g,%.9g,%d,", ids[i], settings[s], hit,
                              mask_area(policy, patch, w, h, m.labels, m.rows, m.cols), (double)m.lambda2,
                              (double)m.eigengap, (int)m.degenerate);
                if (m.knife >= 0) kc_buf_printf(&o->csv, "%d", (int)m.knife); /* empty: the cache predates the flag */
                kc_buf_printf(&o->csv, "\n");
                hits += hit;
            }
            free(m.labels);
        }
        o->corloc = hits / n_used;
        progress_add(&pg, n);
    }
    progress_end(&pg);
    if (kc_mkdirs(out) < 0) return -1;
    kc_buf summary = {0};
    kc_buf_printf(&summary, "setting,images,jaccard,corloc\n");
    for (int s = 0; s < n_settings; s++) {
        char *p = kc_strfmt("%s/%s.csv", out, res[s].name);
        if (kc_write_file_atomic(p, res[s].csv.s, res[s].csv.n) < 0) return -1;
        free(p);
        kc_buf_printf(&summary, "%s,%d,,%.9g\n", res[s].name, n_used, res[s].corloc);
    }
    char *sp = kc_strfmt("%s/summary.csv", out);
    if (write_summary(sp, &summary, out, network, split, split_hash, n_settings, ledger) < 0) return -1;
    char tbuf[32];
    progress_fmt_time(kc_now() - t0, tbuf, sizeof tbuf);
    kc_info("boxes only: %d settings x %d images -> %s (CorLoc %.4f at %s) in %s", n_settings, n_used, sp,
            res[0].corloc, res[0].name, tbuf);
    free(sp);
    free(summary.s);
    for (int s = 0; s < n_settings; s++) {
        free(res[s].csv.s);
        free(settings[s]);
    }
    free(res);
    free(settings);
    for (int i = 0; i < n; i++) free(gt[i].boxes);
    free(gt);
    free(cix);
    cache_close(&r);
    split_free(ids, n);
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
    /* one run per score folder; every file appears at the end, together (kc_outputs_begin) */
    kc_lock *lock = NULL;
    if (!selection && out) {
        if (kc_lock_folder(&lock, out, NULL) < 0) kc_die();
        kc_outputs_begin();
    }
    if (selection) {
        if (!out) kc_die_msg("--make-selection needs --out DIR");
        if (make_selection(selection, out, count) < 0) kc_die();
        return 0;
    }
    if (boxes_only) {
        if (!masks || !(voc || coco) || !split || !out)
            kc_die_msg("--boxes-only needs --masks, --voc ROOT or --coco ROOT, --split and --out (see --help)");
        if (score_boxes(masks, coco ? NULL : voc, coco, split, out, ledger, network, no_hard, box_cache, t0) < 0) kc_die();
        kc_lock_release(lock);
        return 0;
    }
    if (no_hard) kc_die_msg("--no-hard applies to --boxes-only scoring (see --help)");
    if (!masks || !voc || !split || !out) kc_die_msg("--masks, --voc, --split and --out are required (see --help)");

    /* the split and its hash */
    char **ids;
    int n;
    if (split_read(split, &ids, &n) < 0) kc_die();
    char split_hash[65];
    if (kc_sha256_file(split, split_hash) < 0) kc_die();

    /* the masks cache and its provenance */
    cache_reader r;
    if (cache_open(&r, masks, CACHE_FORMAT_MASKS) < 0) kc_die();
    kc_policy policy;
    int patch;
    if (check_cache(&r, ids, n, &policy, &patch) < 0) kc_die();
    const int pixel = pixel_masks(&r);
    if (pixel) policy = POLICY_SQUARE480; /* pixel masks: the identity mapping */
    char **settings;
    int n_settings;
    if (cache_list(&r, "/masks", &settings, &n_settings) < 0) kc_die();
    if (n_settings == 0) kc_die_msg("%s: no settings under /masks", masks);
    if (!network) network = cache_attr(&r, "network");

    /* ground truth: everything the score needs, per image */
    voc_init();
    image_gt *gt = kc_calloc((size_t)n, sizeof *gt);
    int *cix = kc_malloc((size_t)n * sizeof *cix);
    for (int i = 0; i < n; i++) cix[i] = cache_index_find(&r.index, ids[i]);
    progress pg;
    progress_init(&pg, "ground truth", n, "images");
    first_error bad;
    first_error_init(&bad, n);
#pragma omp parallel for schedule(dynamic, 4)
    for (int i = 0; i < n; i++) {
        voc_gt g;
        int rc = voc_gt_load(voc, ids[i], 0, &g);
        if (rc == 0) {
            int k = cix[i];
            int h = r.index.size[2 * k], w = r.index.size[2 * k + 1];
            if (g.h != h || g.w != w)
                rc = kc_fail("%s: image %s is %dx%d in the masks cache but %dx%d in %s (other images?)", masks,
                             ids[i], w, h, g.w, g.h, voc);
            else if (pixel) /* per-cell counts of a pixel grid would take 12 bytes a pixel: keep the labels */
                gt[i].px = g, g.object = NULL;
            else if ((rc = voc_cells_init(&gt[i].cells, g.object, g.h, g.w, g.boxes, g.n_boxes, policy, patch,
                                          r.index.grid[2 * k], r.index.grid[2 * k + 1])) < 0)
                kc_fail_prefix("%s: image %s", masks, ids[i]);
            if (g.object) voc_gt_free(&g);
        }
        gt[i].ok = rc == 0;
        if (rc < 0) first_error_note(&bad, i);
        progress_add(&pg, 1);
    }
    progress_end(&pg);
    if (first_error_raise(&bad) < 0) kc_die();

    /* every setting */
    setting_result *res = kc_calloc((size_t)n_settings, sizeof *res);
    mask_read *mr = kc_calloc((size_t)n, sizeof *mr);
    voc_score *sc = kc_malloc((size_t)n * sizeof *sc);
    progress_init(&pg, "score", (long)n_settings * n, "masks");
    attn_cells *acells = NULL;
    for (int s = 0; s < n_settings; s++) {
        if (attn_mass_is_setting(settings[s])) {
            res[s].name = settings[s];
            if (score_attn(&r, voc, ids, n, cix, policy, patch, settings[s], &acells, &res[s]) < 0) kc_die();
            progress_add(&pg, n);
            continue;
        }
        for (int i = 0; i < n; i++)
            if (read_mask(&r, settings[s], ids[i], cix[i], &mr[i]) < 0) kc_die();
        /* about a microsecond per mask: serial (a parallel region per setting costs more on a busy
         * machine than the work; the HDF5 reads above dominate anyway) */
        for (int i = 0; i < n; i++)
            if (pixel)
                voc_score_naive(gt[i].px.object, gt[i].px.h, gt[i].px.w, gt[i].px.boxes, gt[i].px.n_boxes, policy, patch,
                                mr[i].labels, mr[i].rows, mr[i].cols, &sc[i]);
            else
                voc_score_mask(&gt[i].cells, mr[i].labels, &sc[i]);
        setting_result *o = &res[s];
        o->name = settings[s];
        kc_buf_printf(&o->csv, "id,setting,jaccard,corloc,area,lambda2,eigengap,degenerate,knife_edge\n");
        double sj = 0, sl = 0;
        for (int i = 0; i < n; i++) {
            kc_buf_printf(&o->csv, "%s,%s,%.9g,%d,%.9g,%.9g,%.9g,%d,", ids[i], settings[s], sc[i].jaccard,
                      sc[i].corloc, sc[i].area, (double)mr[i].lambda2, (double)mr[i].eigengap, (int)mr[i].degenerate);
            if (mr[i].knife >= 0) kc_buf_printf(&o->csv, "%d", (int)mr[i].knife);
            kc_buf_printf(&o->csv, "\n");
            sj += sc[i].jaccard;
            sl += sc[i].corloc;
            free(mr[i].labels);
            mr[i].labels = NULL;
        }
        o->jaccard = sj / n;
        o->corloc = sl / n;
        progress_add(&pg, n);
    }
    progress_end(&pg);

    /* outputs: all files, then the ledger line */
    if (kc_mkdirs(out) < 0) kc_die();
    kc_buf summary = {0};
    kc_buf_printf(&summary, "setting,images,jaccard,corloc\n");
    for (int s = 0; s < n_settings; s++) {
        char *p = kc_strfmt("%s/%s.csv", out, res[s].name);
        if (kc_write_file_atomic(p, res[s].csv.s, res[s].csv.n) < 0) kc_die();
        free(p);
        if (isnan(res[s].corloc)) /* attention settings: no CorLoc */
            kc_buf_printf(&summary, "%s,%d,%.9g,\n", res[s].name, n, res[s].jaccard);
        else
            kc_buf_printf(&summary, "%s,%d,%.9g,%.9g\n", res[s].name, n, res[s].jaccard, res[s].corloc);
        if (res[s].heads.n) {
            char *hp = kc_strfmt("%s/%s.heads.csv", out, res[s].name), *cp = kc_strfmt("%s/%s.columns.txt", out, res[s].name);
            if (kc_write_file_atomic(hp, res[s].heads.s, res[s].heads.n) < 0 ||
                kc_write_file_atomic(cp, res[s].columns.s, res[s].columns.n) < 0)
                kc_die();
            free(hp);
            free(cp);
        }
    }
    char *sp = kc_strfmt("%s/summary.csv", out);
    if (write_summary(sp, &summary, out, network, split, split_hash, n_settings, ledger) < 0) kc_die();

    int best = 0;
    for (int s = 1; s < n_settings; s++)
        if (res[s].jaccard > res[best].jaccard) best = s;
    char tbuf[32];
    progress_fmt_time(kc_now() - t0, tbuf, sizeof tbuf);
    kc_info("%d settings x %d images -> %s (best Jaccard %.4f at %s; CorLoc %.4f) in %s", n_settings, n, sp,
            res[best].jaccard, res[best].name, res[best].corloc, tbuf);

    free(sp);
    free(summary.s);
    for (int s = 0; s < n_settings; s++) {
        free(res[s].csv.s);
        free(res[s].heads.s);
        free(res[s].columns.s);
        free(settings[s]);
    }
    free(res);
    free(settings);
    for (int i = 0; i < n; i++) {
        voc_cells_free(&gt[i].cells);
        if (gt[i].px.object) voc_gt_free(&gt[i].px);
    }
    for (int i = 0; acells && i < n; i++) attn_cells_free(&acells[i]);
    free(acells);
    free(gt);
    free(cix);
    free(mr);
    free(sc);
    cache_close(&r);
    split_free(ids, n);
    kc_lock_release(lock);
    return 0;
}
