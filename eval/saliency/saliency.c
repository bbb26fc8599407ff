/* eval/saliency/saliency.c — the run of kc-saliency.  See saliency.h. */
#include "eval/saliency/saliency.h"

#include <dirent.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "datasets/dataset.h"
#include "eval/saliency/sal_metrics.h"
#include "eval/voc/score_io.h"
#include "pipeline/cache/cache.h"
#include "pipeline/extract/image_check.h"
#include "pipeline/images/grid_map.h"
#include "pipeline/images/image.h"
#include "pipeline/kc.h"
#include "pipeline/progress.h"
#include "pipeline/sha256.h"

void saliency_luma(const uint8_t *rgb, long n_pixels, uint8_t *luma)
{
    for (long i = 0; i < n_pixels; i++) {
        const uint8_t *p = rgb + 3 * i;
        luma[i] = (uint8_t)((p[0] * 19595u + p[1] * 38470u + p[2] * 7471u + 0x8000u) >> 16);
    }
}

int saliency_write_npy(const char *path, const double *v, int h, int w)
{
    char dict[128];
    int dn = snprintf(dict, sizeof dict, "{'descr': '<f8', 'fortran_order': False, 'shape': (%d, %d), }", h, w);
    /* magic (6) + version (2) + header length (2) + dict + padding + '\n': a multiple of 64 */
    size_t head = 10 + (size_t)dn + 1, pad = (64 - head % 64) % 64;
    size_t hl = (size_t)dn + pad + 1, n = (size_t)h * w, size = 10 + hl + 8 * n;
    uint8_t *buf = kc_malloc(size);
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (uint8_t)(hl & 0xff);
    buf[9] = (uint8_t)(hl >> 8);
    memcpy(buf + 10, dict, (size_t)dn);
    memset(buf + 10 + dn, ' ', pad);
    buf[10 + hl - 1] = '\n';
    memcpy(buf + 10 + hl, v, 8 * n); /* x86-64: little-endian doubles */
    int rc = kc_write_file_atomic(path, buf, size);
    free(buf);
    return rc;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* rm -rf path (absent: nothing to do). */
static int remove_tree(const char *path)
{
    if (!kc_exists(path)) return 0;
    if (nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0) return kc_fail("%s: cannot remove the folder", path);
    return 0;
}

/* 0 when dir is absent or holds only .png files (an earlier run's pictures, which the run replaces);
 * else -1 naming what else is there: a folder of the user's is never removed. */
static int png_dir_replaceable(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return kc_exists(dir) ? kc_fail("%s: --png names something that is not a folder", dir) : 0;
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        const char *dot = strrchr(e->d_name, '.');
        char *p = kc_strfmt("%s/%s", dir, e->d_name);
        struct stat st;
        if (!dot || strcmp(dot, ".png") || lstat(p, &st) != 0 || !S_ISREG(st.st_mode))
            rc = kc_fail("%s: holds %s, not a picture of kc-saliency; --png replaces the whole folder, so give a new "
                         "one or one of its own", dir, e->d_name);
        free(p);
    }
    closedir(d);
    return rc;
}

/* One image's work and results. */
typedef struct sal_item {
    const char *id, *path;
    char *gt_path;
    int k;           /* row in the cache index */
    int w, h;        /* original size (the cache's) */
    score_mask mask; /* the grid mask */
    sal_image score[2]; /* [0] the decoder's mask, [1] the solver's output */
    bs_stats bs;
} sal_item;

/* The setting to score: the one asked for, else the cache's only one, else TokenCut's. */
static int pick_setting(const cache_reader *r, const char *masks, const char *want, char **setting)
{
    char **have;
    int n_have;
    KC_TRY(cache_list(r, "/masks", &have, &n_have));
    int found = -1;
    const char *target = want ? want : n_have == 1 ? have[0] : SALIENCY_DEFAULT_SETTING;
    for (int j = 0; j < n_have; j++)
        if (!strcmp(have[j], target)) found = j;
    int rc = 0;
    if (found < 0) {
        kc_buf b = {0};
        for (int j = 0; j < n_have && j < 6; j++) kc_buf_printf(&b, "%s%s", j ? ", " : "", have[j]);
        if (n_have > 6) kc_buf_printf(&b, ", ... (%d in all)", n_have);
        rc = kc_fail("%s: no setting '%s' under /masks (it holds %s)%s", masks, target, n_have ? b.s : "none",
                     want ? "" : "; give --setting");
        free(b.s);
    } else {
        *setting = kc_strdup(have[found]);
    }
    for (int j = 0; j < n_have; j++) free(have[j]);
    free(have);
    return rc;
}

/* Steps 2-5 of saliency.h for one image. */
static int score_one(const saliency_opts *o, const char *png_tmp, kc_policy policy, int patch, sal_item *it)
{
    kc_image im = {0}, gt = {0};
    double *target = NULL, *soft = NULL;
    uint8_t *luma = NULL;
    int32_t *col = NULL;
    int rc = -1;
    if (image_load_rgb(it->path, &im) < 0) goto done;
    if (im.w != it->w || im.h != it->h) {
        kc_fail("%s: is %dx%d, but its masks were made from a %dx%d image (changed since?)", it->path, im.w, im.h,
                it->w, it->h);
        goto done;
    }
    if (!kc_exists(it->gt_path)) {
        kc_fail("%s: ground truth of %s not found", it->gt_path, it->path);
        goto done;
    }
    if (image_load_rgb(it->gt_path, &gt) < 0) goto done;
    if (gt.w != im.w || gt.h != im.h) {
        kc_fail("%s: ground truth of %dx%d for a %dx%d image (%s)", it->gt_path, gt.w, gt.h, im.w, im.h, it->path);
        goto done;
    }
    const long n = (long)im.w * im.h;
    luma = kc_malloc((size_t)n);
    saliency_luma(gt.rgb, n, luma);
    /* the decoder's mask at the image's size (every label > 0 is foreground) */
    target = kc_malloc(sizeof(double) * (size_t)n);
    soft = kc_malloc(sizeof(double) * (size_t)n);
    col = kc_malloc(sizeof(int32_t) * (size_t)im.w);
    grid_axis_cells(policy, patch, im.w, it->mask.cols, col);
    for (int y = 0; y < im.h; y++) {
        const uint8_t *g = it->mask.labels + (size_t)grid_pixel_cell(policy, patch, y, im.h, it->mask.rows) * it->mask.cols;
        double *t = target + (size_t)y * im.w;
        for (int x = 0; x < im.w; x++) t[x] = g[col[x]] ? 1.0 : 0.0;
    }
    if (bs_solve(&o->bs, im.rgb, im.w, im.h, target, soft, &it->bs) < 0) goto done;
    if (sal_image_score(luma, target, n, &it->score[0]) < 0 || sal_image_score(luma, soft, n, &it->score[1]) < 0)
        goto done;
    if (png_tmp) {
        uint8_t *v = luma; /* reused: the ground truth is scored */
        for (long i = 0; i < n; i++) v[i] = (uint8_t)((target[i] > 0.5) | (soft[i] > 0.5) << 1);
        uint8_t palette[768];
        image_davis_palette(palette);
        char *p = kc_strfmt("%s/%s.png", png_tmp, it->id);
        int wrc = image_write_png_index(p, im.w, im.h, v, palette);
        free(p);
        if (wrc < 0) goto done;
    }
    if (o->soft_dir) {
        char *p = kc_strfmt("%s/%s.npy", o->soft_dir, it->id);
        int wrc = saliency_write_npy(p, soft, im.h, im.w);
        free(p);
        if (wrc < 0) goto done;
    }
    rc = 0;
done:
    image_free(&im);
    image_free(&gt);
    free(target);
    free(soft);
    free(luma);
    free(col);
    return rc;
}

static const char *const REFINE_NAME[2] = {"none", "bs"};

static void fmt_num(kc_buf *b, double v)
{
    if (isnan(v)) kc_buf_printf(b, "nan");
    else kc_buf_printf(b, "%.9g", v);
}

int saliency_run(const saliency_opts *o)
{
    kc_dataset ds;
    memset(&ds, 0, sizeof ds);
    cache_reader r;
    memset(&r, 0, sizeof r);
    sal_item *items = NULL;
    sal_image *per = NULL;
    char *setting = NULL, *summary_path = NULL, *png_tmp = NULL;
    kc_buf csv = {0}, summary = {0}, idlist = {0};
    int n = 0, rc = -1;

    if (dataset_open(&ds, o->dataset) < 0) goto done;
    if (strcmp(ds.kind, "saliency")) {
        kc_fail("dataset '%s': kc-saliency scores a saliency:ROOT dataset (it has ground-truth masks)", o->dataset);
        goto done;
    }
    if (cache_open(&r, o->masks, CACHE_FORMAT_MASKS) < 0) goto done;
    const char *kind = cache_attr(&r, "dataset_kind");
    if (kind && strcmp(kind, "saliency")) {
        kc_fail("%s: masks of a %s dataset (%s), not of a saliency dataset", o->masks, kind,
                cache_attr(&r, "dataset") ? cache_attr(&r, "dataset") : kind);
        goto done;
    }
    if (cache_attr(&r, "refine")) {
        kc_fail("%s: pixel masks of kc-refine; give kc-saliency the masks of kc-decode (it runs the solver itself)",
                o->masks);
        goto done;
    }
    if (cache_masks_are_stacks(&r)) {
        kc_fail("%s: attention-mass stacks; kc-saliency scores decoder masks", o->masks);
        goto done;
    }
    const char *pol = cache_attr(&r, "policy"), *ps = cache_attr(&r, "patch");
    kc_policy policy;
    if (!pol) {
        kc_fail("%s: no 'policy' attribute (not a masks cache of kc-decode)", o->masks);
        goto done;
    }
    if (policy_parse(pol, &policy) < 0) goto done;
    const int patch = ps ? atoi(ps) : 0;
    if (patch <= 0 || patch > 1024) {
        kc_fail("%s: no valid 'patch' attribute (got '%s')", o->masks, ps ? ps : "(none)");
        goto done;
    }
    if (policy != POLICY_ROUND)
        kc_warn("%s: features at policy %s, not TokenCut's saliency protocol (round: each side rounded to the nearest "
                "multiple of the patch)", o->masks, pol);
    if (pick_setting(&r, o->masks, o->setting, &setting) < 0) goto done;

    /* the images: the dataset's, each in the cache, of the size the masks were made from */
    n = ds.n;
    if (r.index.n != n) {
        kc_fail("%s: masks of %d images, but %s has %d (made from another folder, or the folder changed since?)",
                o->masks, r.index.n, o->dataset, n);
        goto done;
    }
    items = kc_calloc((size_t)n, sizeof *items);
    for (int i = 0; i < n; i++) {
        sal_item *it = &items[i];
        it->id = ds.ids[i];
        it->path = ds.paths[i];
        it->gt_path = dataset_saliency_gt(&ds, i);
        it->k = cache_index_find(&r.index, ds.ids[i]);
        if (it->k < 0) {
            kc_fail("%s: image %s of %s is not in the masks (made from another folder?)", o->masks, ds.ids[i],
                    o->dataset);
            goto done;
        }
        it->h = r.index.size[2 * it->k];
        it->w = r.index.size[2 * it->k + 1];
        if (score_mask_read(&r, setting, it->id, it->k, &it->mask) < 0) goto done;
        char *dset = kc_strfmt("/masks/%s/%s", setting, it->id);
        int crc = image_check_unchanged(&r, dset, it->path);
        free(dset);
        if (crc < 0) goto done;
        if (grid_check_policy(o->masks, policy, patch, it->w, it->h, it->mask.rows, it->mask.cols) < 0) goto done;
        kc_buf_printf(&idlist, "%s\n", it->id);
    }
    /* the pictures go to a fresh folder beside png_dir, which replaces png_dir once the scores are
     * committed: a run that fails leaves the earlier pictures as they were */
    if (o->png_dir) {
        if (png_dir_replaceable(o->png_dir) < 0) goto done;
        png_tmp = kc_strfmt("%s.partial", o->png_dir);
        if (remove_tree(png_tmp) < 0 || kc_mkdirs(png_tmp) < 0) goto done;
    }
    if (o->soft_dir && kc_mkdirs(o->soft_dir) < 0) goto done;

    /* the images in parallel, one per thread; the results do not depend on the order */
    score_first_error err;
    score_first_error_init(&err, n);
    progress pg;
    progress_init(&pg, "saliency", n, "images");
#pragma omp parallel for schedule(dynamic, 1)
    for (int i = 0; i < n; i++) {
        if (score_one(o, png_tmp, policy, patch, &items[i]) < 0) score_first_error_note(&err, i);
        progress_add(&pg, 1);
    }
    progress_end(&pg);
    if (score_first_error_raise(&err) < 0) goto done;

    /* the two summaries, then the files */
    sal_summary sum[2];
    per = kc_malloc(sizeof *per * (size_t)n);
    for (int m = 0; m < 2; m++) {
        for (int i = 0; i < n; i++) per[i] = items[i].score[m];
        if (sal_summarise(per, n, &sum[m]) < 0) goto done;
    }
    kc_buf_printf(&csv, "id,setting,refine,iou,accuracy,fbeta,gt_pixels,mask_pixels,pixels\n");
    for (int i = 0; i < n; i++)
        for (int m = 0; m < 2; m++) {
            const sal_image *s = &items[i].score[m];
            kc_buf_printf(&csv, "%s,%s,%s,", items[i].id, setting, REFINE_NAME[m]);
            fmt_num(&csv, s->iou);
            kc_buf_printf(&csv, ",");
            fmt_num(&csv, s->accuracy);
            kc_buf_printf(&csv, ",");
            fmt_num(&csv, sal_image_fbeta(s, sum[m].best_bin));
            kc_buf_printf(&csv, ",%ld,%ld,%ld\n", s->fg, s->pred_fg, s->pixels);
        }
    kc_buf_printf(&summary, "setting,refine,dataset,images,max_fbeta,iou,accuracy,threshold\n");
    for (int m = 0; m < 2; m++) {
        kc_buf_printf(&summary, "%s,%s,%s,%d,", setting, REFINE_NAME[m], ds.split, n);
        fmt_num(&summary, sum[m].max_fbeta);
        kc_buf_printf(&summary, ",");
        fmt_num(&summary, sum[m].iou);
        kc_buf_printf(&summary, ",");
        fmt_num(&summary, sum[m].accuracy);
        kc_buf_printf(&summary, ",%.9g\n", sal_threshold(sum[m].best_bin));
    }
    int n_nan = 0, first_nan = -1;
    for (int i = 0; i < n; i++)
        if (isnan(items[i].score[0].iou) || isnan(items[i].score[1].iou)) {
            if (first_nan < 0) first_nan = i;
            n_nan++;
        }
    if (n_nan)
        kc_warn("%d image%s with an empty mask and an empty ground truth (first: %s): TokenCut's IoU is 0/0 there, so "
                "its mean IoU is nan, as metric.py gives it", n_nan, kc_s(n_nan), items[first_nan].id);
    char split_hash[65];
    kc_sha256_buf_hex(idlist.s, idlist.n, split_hash);
    const char *network = o->network ? o->network : cache_attr(&r, "network");
    if (kc_mkdirs(o->out) < 0) goto done;
    kc_outputs_begin(); /* the CSVs, the summary and the network's name appear together */
    char *cp = kc_strfmt("%s/%s.csv", o->out, setting);
    int wrc = kc_write_file_atomic(cp, csv.s, csv.n);
    free(cp);
    if (wrc < 0) goto done;
    char *dp = kc_strfmt("%s/dataset", o->out), *dl = kc_strfmt("%s\n", o->dataset);
    wrc = kc_write_file_atomic(dp, dl, strlen(dl));
    free(dp);
    free(dl);
    if (wrc < 0) goto done;
    summary_path = kc_strfmt("%s/summary.csv", o->out);
    if (score_write_summary(summary_path, &summary, o->out, network, o->dataset, split_hash, 1, o->ledger) < 0)
        goto done;
    if (png_tmp) {
        if (remove_tree(o->png_dir) < 0) goto done;
        if (rename(png_tmp, o->png_dir) != 0) {
            kc_fail("%s: cannot rename to %s", png_tmp, o->png_dir);
            goto done;
        }
        kc_fsync_dir_of(o->png_dir);
    }
    char tbuf[32];
    progress_fmt_time(kc_now() - o->t0, tbuf, sizeof tbuf);
    kc_info("%s (%d image%s) at %s -> %s: max F-beta %.4f, IoU %.4f, accuracy %.4f; with the bilateral solver "
            "%.4f, %.4f, %.4f; in %s", ds.split, n, kc_s(n), setting, summary_path, sum[0].max_fbeta, sum[0].iou,
            sum[0].accuracy, sum[1].max_fbeta, sum[1].iou, sum[1].accuracy, tbuf);
    rc = 0;
done:
    for (int i = 0; items && i < n; i++) {
        free(items[i].gt_path);
        free(items[i].mask.labels);
    }
    free(items);
    free(per);
    free(setting);
    free(summary_path);
    if (png_tmp && rc < 0) remove_tree(png_tmp);
    free(png_tmp);
    free(csv.s);
    free(summary.s);
    free(idlist.s);
    if (r.path) cache_close(&r);
    dataset_free(&ds);
    return rc;
}
