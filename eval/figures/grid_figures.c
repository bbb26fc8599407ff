/* eval/figures/grid_figures.c — the VOC and DAVIS picture grids.  See grid_figures.h. */
#include "eval/figures/grid_figures.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/dataset.h"
#include "datasets/davis_gt.h"
#include "datasets/voc.h"
#include "eval/figures/overlay.h"
#include "pipeline/cache/cache.h"
#include "pipeline/extract/image_check.h"
#include "pipeline/images/image.h"
#include "pipeline/kc.h"
#include "pipeline/lock.h"

/* The cell: a copy of the photo with the labels (or nothing, when NULL) drawn over it. */
static void overlay_cell(const kc_image *im, const uint8_t *labels, kc_image *cell)
{
    cell->w = im->w;
    cell->h = im->h;
    cell->rgb = kc_malloc((size_t)im->w * im->h * 3);
    memcpy(cell->rgb, im->rgb, (size_t)im->w * im->h * 3);
    if (labels) overlay_draw_masks(cell, labels, 0.45f);
}

/* Writes the grid under the folder's lock NAME, its files appearing together. */
static int grid_write(const char *out, const char *name, const fig_grid *g)
{
    kc_lock *lock;
    KC_TRY(kc_lock_folder(&lock, out, name));
    kc_outputs_begin();
    if (fig_grid_write(out, name, g) < 0 || kc_outputs_commit() < 0) return -1;
    kc_lock_release(lock);
    return 0;
}

static void free_cells(kc_image *cells, int n)
{
    for (int i = 0; i < n; i++) image_free(&cells[i]);
    free(cells);
}

/* The ids of the grid's rows: the --ids list, else the first o->first of the split. */
static int grid_ids(const voc_grid_opts *o, const kc_dataset *ds, char ***ids, int *n)
{
    *ids = NULL;
    *n = 0;
    if (!o->ids) {
        *n = o->first < ds->n ? o->first : ds->n;
        *ids = kc_malloc(sizeof(char *) * (size_t)(*n + 1));
        for (int i = 0; i < *n; i++) (*ids)[i] = kc_strdup(ds->ids[i]);
        return 0;
    }
    char *copy = kc_strdup(o->ids), *save = NULL;
    for (char *p = strtok_r(copy, ", ", &save); p; p = strtok_r(NULL, ", ", &save)) {
        *ids = kc_realloc(*ids, (size_t)(*n + 1) * sizeof **ids);
        (*ids)[(*n)++] = kc_strdup(p);
    }
    free(copy);
    return *n ? 0 : kc_fail("--ids: no id in '%s'", o->ids);
}

/* Row i of the VOC grid: the ground truth and every network's masks of image id. */
static int voc_row(const voc_grid_opts *o, const kc_dataset *ds, const cache_reader *rd, const char *spec, int i,
                   const char *id, kc_image *cells, kc_buf *csv)
{
    int j = 0, n_cols = o->n_masks + 1;
    while (j < ds->n && strcmp(ds->ids[j], id)) j++;
    if (j == ds->n) return kc_fail("--ids: %s is not in %s", id, spec);
    /* the photo every network's masks were made from (the hash each cache recorded, when it did) */
    for (int k = 0; k < o->n_masks; k++) {
        char *dset = kc_strfmt("/masks/%s/%s", o->setting, id);
        int rc = cache_has(&rd[k], dset) ? image_check_unchanged(&rd[k], dset, ds->paths[j]) : 0;
        free(dset);
        KC_TRY(rc);
    }
    kc_image im;
    KC_TRY(image_load_rgb(ds->paths[j], &im));
    voc_gt gt;
    int rc = voc_gt_load(o->root, id, 0, &gt);
    if (rc == 0 && (gt.w != im.w || gt.h != im.h))
        rc = kc_fail("%s: %dx%d, its ground truth %dx%d", ds->paths[j], im.w, im.h, gt.w, gt.h);
    if (rc == 0) {
        for (size_t p = 0; p < (size_t)gt.w * gt.h; p++)
            if (gt.object[p] == 255) gt.object[p] = 0;
        overlay_cell(&im, gt.object, &cells[(size_t)i * n_cols]);
        kc_buf_printf(csv, "%d,%s,ground truth,%s/SegmentationObject/%s.png\n", i + 1, id, o->root, id);
        voc_gt_free(&gt);
    }
    for (int k = 0; k < o->n_masks && rc == 0; k++) {
        uint8_t *lab;
        if (overlay_cache_labels(&rd[k], o->setting, id, im.w, im.h, &lab) < 0) {
            rc = -1;
            break;
        }
        overlay_cell(&im, lab, &cells[(size_t)i * n_cols + k + 1]);
        kc_buf_printf(csv, "%d,%s,%s,%s:/masks/%s/%s\n", i + 1, id, o->masks[k].name, o->masks[k].path, o->setting, id);
        free(lab);
    }
    image_free(&im);
    return rc;
}

int voc_grid_run(const voc_grid_opts *o)
{
    char *spec = kc_strfmt("voc:%s:%s", o->root, o->split);
    kc_dataset ds;
    if (dataset_open(&ds, spec) < 0) {
        free(spec);
        return -1;
    }
    char **ids = NULL;
    int n_ids = 0, n_open = 0, n_cols = o->n_masks + 1, rc = grid_ids(o, &ds, &ids, &n_ids);
    cache_reader *rd = kc_calloc((size_t)o->n_masks, sizeof *rd);
    for (int k = 0; k < o->n_masks && rc == 0; k++) {
        if (!kc_exists(o->masks[k].path))
            rc = kc_fail("network %s has no masks yet: %s does not exist (run make report first)", o->masks[k].name,
                         o->masks[k].path);
        else if (cache_open(&rd[k], o->masks[k].path, CACHE_FORMAT_MASKS) < 0) rc = -1;
        else n_open++;
    }
    voc_init();
    kc_image *cells = kc_calloc((size_t)n_ids * n_cols + 1, sizeof *cells);
    const char **cols = kc_malloc(sizeof(char *) * (size_t)n_cols);
    cols[0] = "ground truth";
    for (int k = 0; k < o->n_masks; k++) cols[k + 1] = o->masks[k].name;
    kc_buf csv = {0};
    kc_buf_printf(&csv, "row,id,column,source\n");
    for (int i = 0; i < n_ids && rc == 0; i++) rc = voc_row(o, &ds, rd, spec, i, ids[i], cells, &csv);
    char *caption = kc_strfmt("VOC images (rows) x ground truth and the networks' masks at %s (columns)", o->setting);
    fig_grid g = {n_ids, n_cols, (const char *const *)ids, cols, cells, csv.s, caption};
    if (rc == 0 && grid_write(o->out, o->name, &g) < 0) rc = -1;
    if (rc == 0)
        kc_info("wrote %s/%s.{pdf,svg,png,tex,csv}: %d image%s x %d network%s at %s", o->out, o->name, n_ids,
                kc_s(n_ids), o->n_masks, kc_s(o->n_masks), o->setting);
    free_cells(cells, n_ids * n_cols);
    free(cols);
    free(caption);
    free(csv.s);
    for (int k = 0; k < n_open; k++) cache_close(&rd[k]);
    free(rd);
    for (int i = 0; i < n_ids; i++) free(ids[i]);
    free(ids);
    dataset_free(&ds);
    free(spec);
    return rc;
}

/* The labels of one cell (k < 0: the annotation), 255 drawn as background; NULL when an
 * annotation is absent. */
static int davis_cell_labels(const davis_grid_opts *o, int k, const char *png, const char *jpg, const kc_image *im,
                             uint8_t **lab)
{
    *lab = NULL;
    int w, h;
    if (k >= 0 && !kc_exists(png))
        return kc_fail("network %s has no propagated result %s (run make davis first)", o->results[k].name, png);
    if (!kc_exists(png)) return 0;
    KC_TRY(davis_read_labels(png, &w, &h, lab));
    if (w != im->w || h != im->h) return kc_fail("%s: %dx%d, but the frame %s is %dx%d", png, w, h, jpg, im->w, im->h);
    for (size_t p = 0; p < (size_t)w * h; p++)
        if ((*lab)[p] == 255) (*lab)[p] = 0;
    return 0;
}

int davis_grid_run(const davis_grid_opts *o)
{
    char *imdir = davis_image_dir(o->root, o->sequence), *andir = davis_annotation_dir(o->root, o->sequence);
    char **frames = NULL;
    int n_all = 0, rc = davis_list_frames(imdir, ".jpg", &frames, &n_all);
    int n_frames = o->frames > n_all ? n_all : o->frames, n_cols = o->n_results + 1;
    if (rc < 0) n_frames = 0;
    kc_image *cells = kc_calloc((size_t)n_frames * n_cols + 1, sizeof *cells);
    const char **cols = kc_malloc(sizeof(char *) * (size_t)n_cols), **rows = kc_calloc((size_t)n_frames + 1, sizeof *rows);
    char **row_names = kc_calloc((size_t)n_frames + 1, sizeof *row_names);
    cols[0] = "ground truth";
    for (int k = 0; k < o->n_results; k++) cols[k + 1] = o->results[k].name;
    kc_buf csv = {0};
    kc_buf_printf(&csv, "row,frame,column,source\n");
    for (int i = 0; i < n_frames && rc == 0; i++) {
        int fi = n_frames == 1 ? 0 : (int)(((long)i * (n_all - 1) * 2 + (n_frames - 1)) / (2L * (n_frames - 1)));
        row_names[i] = kc_strfmt("%s/%s", o->sequence, frames[fi]);
        rows[i] = row_names[i];
        char *jpg = kc_strfmt("%s/%s.jpg", imdir, frames[fi]);
        kc_image im = {0};
        rc = image_load_rgb(jpg, &im);
        for (int k = -1; k < o->n_results && rc == 0; k++) {
            char *png = k < 0 ? kc_strfmt("%s/%s.png", andir, frames[fi])
                              : kc_strfmt("%s/%s/%s.png", o->results[k].path, o->sequence, frames[fi]);
            uint8_t *lab = NULL;
            rc = davis_cell_labels(o, k, png, jpg, &im, &lab);
            if (rc == 0) {
                overlay_cell(&im, lab, &cells[(size_t)i * n_cols + k + 1]);
                kc_buf_printf(&csv, "%d,%s,%s,%s\n", i + 1, row_names[i], k < 0 ? "ground truth" : o->results[k].name,
                              lab ? png : "");
            }
            free(lab);
            free(png);
        }
        if (im.rgb) image_free(&im);
        free(jpg);
    }
    char *caption =
        kc_strfmt("DAVIS frames of %s (rows) x ground truth and the networks' propagated labels (columns)", o->sequence);
    fig_grid g = {n_frames, n_cols, rows, cols, cells, csv.s, caption};
    if (rc == 0 && grid_write(o->out, o->name, &g) < 0) rc = -1;
    if (rc == 0)
        kc_info("wrote %s/%s.{pdf,svg,png,tex,csv}: %d frame%s of %s x %d network%s", o->out, o->name, n_frames,
                kc_s(n_frames), o->sequence, o->n_results, kc_s(o->n_results));
    free_cells(cells, n_frames * n_cols);
    for (int i = 0; i < n_frames; i++) free(row_names[i]);
    free(row_names);
    free(rows);
    free(cols);
    free(caption);
    free(csv.s);
    if (frames) davis_free_names(frames, n_all);
    free(imdir);
    free(andir);
    return rc;
}
