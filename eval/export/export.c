/* eval/export/export.c — PNG masks and a COCO JSON from a masks cache.  See export.h. */
#include "eval/export/export.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_gen.h>

#include "datasets/dataset.h"
#include "eval/figures/overlay.h"
#include "pipeline/cache/cache.h"
#include "pipeline/extract/image_check.h"
#include "pipeline/images/image.h"
#include "pipeline/kc.h"
#include "pipeline/progress.h"

enum { MAX_LABELS = 255 };

int export_score_parse(const char *name, export_score *score)
{
    static const char *const names[] = {"eigengap", "lambda2", "none"};
    for (int i = 0; i < 3; i++)
        if (name && !strcmp(name, names[i])) {
            *score = (export_score)i;
            return 0;
        }
    return kc_fail("--score must be eigengap, lambda2 or none (got '%s')", name ? name : "");
}

size_t export_rle_counts(const uint8_t *labels, int h, int w, int label, uint32_t *counts)
{
    size_t n = 0;
    uint32_t run = 0;
    int inside = 0; /* the runs alternate 0s and 1s, starting with 0s */
    for (int x = 0; x < w; x++)
        for (int y = 0; y < h; y++) {
            int set = labels[(size_t)y * w + x] == label;
            if (set != inside) {
                counts[n++] = run;
                run = 0;
                inside = set;
            }
            run++;
        }
    counts[n++] = run;
    return n;
}

char *export_rle_string(const uint32_t *counts, size_t n)
{
    /* a value is within +-2^32: at most 7 groups of 5 bits */
    char *s = kc_malloc(7 * n + 1);
    size_t p = 0;
    for (size_t i = 0; i < n; i++) {
        long long v = counts[i];
        if (i > 2) v -= counts[i - 2];
        for (int more = 1; more;) {
            int group = (int)(v & 0x1f);
            v = (v - group) / 32; /* exact: an arithmetic shift by 5 */
            more = (group & 0x10) ? v != -1 : v != 0;
            if (more) group |= 0x20;
            s[p++] = (char)(group + 48);
        }
    }
    s[p] = 0;
    return s;
}

void export_rle_bbox(const uint32_t *counts, size_t n, int h, int bbox[4])
{
    size_t m = n / 2 * 2; /* a final run of 0s adds nothing */
    long long xs = -1, ys = h, xe = 0, ye = 0, start_x = 0, at = 0;
    if (m == 0) {
        bbox[0] = bbox[1] = bbox[2] = bbox[3] = 0;
        return;
    }
    for (size_t j = 0; j < m; j++) {
        at += counts[j];
        long long t = at - (long long)(j % 2), y = t % h, x = t / h; /* a run's first or last pixel */
        if (j % 2 == 0) start_x = x;
        else if (start_x < x) ys = 0, ye = h - 1; /* a run over two columns covers every row */
        if (xs < 0 || x < xs) xs = x;
        if (x > xe) xe = x;
        if (y < ys) ys = y;
        if (y > ye) ye = y;
    }
    bbox[0] = (int)xs;
    bbox[1] = (int)ys;
    bbox[2] = (int)(xe - xs + 1);
    bbox[3] = (int)(ye - ys + 1);
}

uint64_t export_rle_area(const uint32_t *counts, size_t n)
{
    uint64_t area = 0;
    for (size_t i = 1; i < n; i += 2) area += counts[i];
    return area;
}

/* ---- the export ---------------------------------------------------------------------------- */
typedef struct export_image {
    const char *id;
    int ix;   /* row of the cache's index */
    int where; /* position in the dataset */
} export_image;

static int by_id(const void *a, const void *b)
{
    return strcmp(((const export_image *)a)->id, ((const export_image *)b)->id);
}

/* The file name COCO records: the path relative to the dataset's root, else its base name. */
static const char *coco_file_name(const kc_dataset *ds, const char *path)
{
    size_t n = ds->root ? strlen(ds->root) : 0;
    if (n && !strncmp(path, ds->root, n) && path[n] == '/') return path + n + 1;
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static void gen_key(yajl_gen g, const char *key) { yajl_gen_string(g, (const unsigned char *)key, strlen(key)); }

static void gen_int(yajl_gen g, const char *key, long long v)
{
    gen_key(g, key);
    yajl_gen_integer(g, v);
}

/* The setting's score attribute of one mask (NaN for none): n values, or 0. */
static int read_scores(const cache_reader *r, const char *dset, export_score score, float *vals)
{
    const char *name = score == EXPORT_SCORE_LAMBDA2 ? "lambda2" : "eigengap";
    if (score == EXPORT_SCORE_NONE || !cache_has_attr(r, dset, name)) return 0;
    return cache_read_attr_f32(r, dset, name, vals, MAX_LABELS);
}

/* One image's annotations (each label 1..255 with a pixel) into g; *next_id the next annotation id.
 * counts: room for h w + 1 values. */
static int gen_annotations(yajl_gen g, const cache_reader *r, const char *dset, export_score score,
                           const uint8_t *labels, int h, int w, long long image_id, long long *next_id,
                           uint32_t *counts)
{
    float vals[MAX_LABELS];
    int n_vals = read_scores(r, dset, score, vals);
    if (n_vals < 0) return -1;
    int present[MAX_LABELS + 1] = {0};
    for (size_t k = 0; k < (size_t)h * w; k++) present[labels[k]] = 1;
    for (int label = 1; label <= MAX_LABELS; label++) {
        if (!present[label]) continue;
        size_t n = export_rle_counts(labels, h, w, label, counts);
        char *rle = export_rle_string(counts, n);
        int bbox[4];
        export_rle_bbox(counts, n, h, bbox);
        yajl_gen_map_open(g);
        gen_int(g, "id", (*next_id)++);
        gen_int(g, "image_id", image_id);
        gen_int(g, "category_id", 1);
        gen_int(g, "iscrowd", 0);
        gen_key(g, "segmentation");
        yajl_gen_map_open(g);
        gen_key(g, "size");
        yajl_gen_array_open(g);
        yajl_gen_integer(g, h);
        yajl_gen_integer(g, w);
        yajl_gen_array_close(g);
        gen_key(g, "counts");
        yajl_gen_string(g, (const unsigned char *)rle, strlen(rle));
        yajl_gen_map_close(g);
        gen_int(g, "area", (long long)export_rle_area(counts, n));
        gen_key(g, "bbox");
        yajl_gen_array_open(g);
        for (int i = 0; i < 4; i++) yajl_gen_integer(g, bbox[i]);
        yajl_gen_array_close(g);
        if (label <= n_vals && isfinite(vals[label - 1])) {
            char num[32];
            int len = snprintf(num, sizeof num, "%.9g", (double)vals[label - 1]);
            gen_key(g, "score");
            yajl_gen_number(g, num, (size_t)len);
        }
        yajl_gen_map_close(g);
        free(rle);
    }
    return 0;
}

/* Every image of the cache found in the dataset, its file at the size the masks were made from and
 * with the bytes they were extracted from (pipeline/extract/image_check.h: a photo replaced under
 * the same name is refused); *images: the cache's rows sorted by id. */
static int match_images(const cache_reader *r, const kc_dataset *ds, const char *spec, const char *setting,
                        export_image **images)
{
    const int n = r->index.n;
    export_image *im = kc_malloc(sizeof *im * (size_t)(n > 0 ? n : 1));
    for (int i = 0; i < n; i++) {
        im[i] = (export_image){r->index.ids[i], i, -1};
        for (int j = 0; j < ds->n && im[i].where < 0; j++)
            if (!strcmp(ds->ids[j], im[i].id)) im[i].where = j;
        int w, h;
        if (im[i].where < 0) {
            free(im);
            return kc_fail("image %s of %s is not in %s (wrong --images?)", r->index.ids[i], r->path, spec);
        }
        const char *path = ds->paths[im[i].where];
        if (image_size(path, &w, &h) < 0) {
            free(im);
            return -1;
        }
        if (h != r->index.size[2 * i] || w != r->index.size[2 * i + 1]) {
            free(im);
            return kc_fail("%s: %dx%d pixels, but the masks of image %s in %s were made from %dx%d (wrong --images?)",
                           path, w, h, r->index.ids[i], r->path, r->index.size[2 * i + 1], r->index.size[2 * i]);
        }
        char *dset = kc_strfmt("/masks/%s/%s", setting, im[i].id);
        int changed = image_check_unchanged(r, dset, path);
        free(dset);
        if (changed < 0) {
            free(im);
            return -1;
        }
    }
    qsort(im, (size_t)n, sizeof *im, by_id);
    *images = im;
    return 0;
}

static int has_setting(const cache_reader *r, const char *setting)
{
    char **settings = NULL;
    int n = 0, found = 0;
    KC_TRY(cache_list(r, "/masks", &settings, &n));
    for (int i = 0; i < n; i++) {
        found |= !strcmp(settings[i], setting);
        free(settings[i]);
    }
    free(settings);
    return found ? 0 : kc_fail("%s: no setting '%s' under /masks (%d settings)", r->path, setting, n);
}

/* Writes every PNG (deferred) and builds the JSON in g. */
static int export_all(const cache_reader *r, const kc_dataset *ds, const export_image *im, const export_request *q,
                      yajl_gen g)
{
    const int n = r->index.n;
    uint8_t palette[768];
    image_davis_palette(palette);
    yajl_gen_map_open(g);
    gen_key(g, "images");
    yajl_gen_array_open(g);
    for (int i = 0; i < n; i++) {
        const int ix = im[i].ix;
        const char *name = coco_file_name(ds, ds->paths[im[i].where]);
        yajl_gen_map_open(g);
        gen_int(g, "id", i + 1);
        gen_key(g, "file_name");
        if (yajl_gen_string(g, (const unsigned char *)name, strlen(name)) != yajl_gen_status_ok)
            return kc_fail("%s: the file name is not UTF-8 (JSON cannot hold it)", ds->paths[im[i].where]);
        gen_int(g, "width", r->index.size[2 * ix + 1]);
        gen_int(g, "height", r->index.size[2 * ix]);
        yajl_gen_map_close(g);
    }
    yajl_gen_array_close(g);
    gen_key(g, "annotations");
    yajl_gen_array_open(g);
    long long next_id = 1;
    int rc = 0;
    progress p;
    progress_init(&p, "export", n, "images");
    for (int i = 0; i < n && rc == 0; i++) {
        const int ix = im[i].ix, h = r->index.size[2 * ix], w = r->index.size[2 * ix + 1];
        uint8_t *labels = NULL;
        uint32_t *counts = NULL;
        char *dset = kc_strfmt("/masks/%s/%s", q->setting, im[i].id);
        char *png = kc_strfmt("%s/png/%s.png", q->out, im[i].id), *dir = kc_strdup(png);
        *strrchr(dir, '/') = 0;
        rc = overlay_cache_labels(r, q->setting, im[i].id, w, h, &labels);
        if (rc == 0) rc = kc_mkdirs(dir);
        if (rc == 0) rc = image_write_png_index(png, w, h, labels, palette);
        if (rc == 0) {
            counts = kc_malloc(sizeof *counts * ((size_t)w * h + 1));
            rc = gen_annotations(g, r, dset, q->score, labels, h, w, i + 1, &next_id, counts);
        }
        free(labels);
        free(counts);
        free(dset);
        free(png);
        free(dir);
        progress_add(&p, 1);
    }
    progress_end(&p);
    yajl_gen_array_close(g);
    gen_key(g, "categories");
    yajl_gen_array_open(g);
    yajl_gen_map_open(g);
    gen_int(g, "id", 1);
    gen_key(g, "name");
    yajl_gen_string(g, (const unsigned char *)"object", 6);
    yajl_gen_map_close(g);
    yajl_gen_array_close(g);
    yajl_gen_map_close(g);
    return rc;
}

int export_masks(const export_request *q)
{
    cache_reader r;
    kc_dataset ds;
    export_image *images = NULL;
    /* (checked first: cache_close after a failed cache_open is not safe, see kc-show) */
    if (!kc_exists(q->masks)) return kc_fail("%s: no such file", q->masks);
    KC_TRY(cache_open(&r, q->masks, CACHE_FORMAT_MASKS));
    int rc = has_setting(&r, q->setting);
    if (rc == 0 && !cache_attr(&r, "policy") && !cache_attr(&r, "refine"))
        rc = kc_fail("%s: no 'policy' attribute (cannot map the grid back to pixels)", q->masks);
    if (rc < 0) {
        cache_close(&r);
        return -1;
    }
    if (dataset_open(&ds, q->images) < 0) {
        cache_close(&r);
        return -1;
    }
    char *png_dir = kc_strfmt("%s/png", q->out), *json = kc_strfmt("%s/coco.json", q->out);
    rc = match_images(&r, &ds, q->images, q->setting, &images);
    if (rc == 0) rc = kc_mkdirs(png_dir);
    yajl_gen g = yajl_gen_alloc(NULL);
    yajl_gen_config(g, yajl_gen_validate_utf8, 1);
    if (rc == 0) {
        kc_outputs_begin(); /* every file under a temporary name until the end */
        rc = export_all(&r, &ds, images, q, g);
    }
    if (rc == 0) {
        const unsigned char *buf;
        size_t len;
        if (yajl_gen_get_buf(g, &buf, &len) != yajl_gen_status_ok) rc = kc_fail("%s: cannot write JSON", json);
        else rc = kc_write_file_atomic(json, buf, len);
    }
    if (rc == 0) rc = kc_outputs_commit();
    if (rc == 0)
        kc_info("%d image%s, %s of %s: %s/ and %s", r.index.n, kc_s(r.index.n), q->setting, q->masks, png_dir, json);
    yajl_gen_free(g);
    free(images);
    free(png_dir);
    free(json);
    dataset_free(&ds);
    cache_close(&r);
    return rc;
}
