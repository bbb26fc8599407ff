/* datasets/coco.c — COCO boxes of listed images by a streaming yajl parse (see coco.h). */
#include "datasets/coco.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yajl/yajl_parse.h>

#include "datasets/dataset.h"
#include "pipeline/kc.h"
#include "pipeline/sha256.h"

double coco_round(double x)
{
    double r = round(x); /* half away from zero, then fix exact halves to even */
    if (fabs(x - r) == 0.5) r = 2.0 * round(x / 2.0);
    return r;
}

/* ---- small open-addressing maps: file name -> image, image id -> image ---------------------- */
static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static uint64_t hash_i64(int64_t v)
{
    uint64_t x = (uint64_t)v * 0x9E3779B97F4A7C15ull;
    return x ^ (x >> 29);
}

typedef struct coco_parse {
    const char *path;
    coco_gt *gt;
    size_t cap;       /* slots of both maps (power of two, > 2 n) */
    int *by_name;     /* (cap) image index or -1 */
    int *by_id;       /* (cap) image index or -1 */
    int64_t *ids;     /* (n) JSON image id of each listed image, -1 when not seen yet */
    int images_seen;  /* the `images` array has been read */
    /* annotations read before `images` (kept whole, filtered at the end) */
    struct pending { int64_t image_id; double b[4]; int crowd; } *pend;
    size_t n_pend, cap_pend;
    /* event state */
    int depth;
    enum { SEC_NONE, SEC_IMAGES, SEC_ANNOTATIONS } section;
    char key1[32], key3[32];
    int in_elem, in_bbox;
    long elem_index;
    /* the element being read */
    char *file_name;
    int64_t id, image_id;
    int has_id, has_image_id, crowd, n_bbox, w, h;
    double bbox[4];
    int bad_bbox;
    int failed; /* an error is recorded */
} coco_parse;

static int find_name(const coco_parse *p, const char *name)
{
    for (size_t k = hash_str(name) & (p->cap - 1);; k = (k + 1) & (p->cap - 1)) {
        int i = p->by_name[k];
        if (i < 0) return -1;
        if (!strcmp(p->gt->img[i].file_name, name)) return i;
    }
}

static int find_id(const coco_parse *p, int64_t id)
{
    for (size_t k = hash_i64(id) & (p->cap - 1);; k = (k + 1) & (p->cap - 1)) {
        int i = p->by_id[k];
        if (i < 0) return -1;
        if (p->ids[i] == id) return i;
    }
}

static void add_box(coco_image *im, const double b[4], int crowd)
{
    im->n_annotations++;
    if (crowd) {
        im->n_crowd++;
        return;
    }
    if ((im->n_boxes & (im->n_boxes - 1)) == 0) /* grow at 0, 1, 2, 4, ... */
        im->boxes = kc_realloc(im->boxes, (size_t)(im->n_boxes ? 2 * im->n_boxes : 1) * sizeof *im->boxes);
    /* x1y1x2y2 = [x, y, x + w, y + h], each int(round(.)) as extract_gt_COCO does */
    im->boxes[im->n_boxes++] = (kc_box){coco_round(b[0]), coco_round(b[1]), coco_round(b[0] + b[2]),
                                        coco_round(b[1] + b[3])};
}

static int pfail(coco_parse *p, const char *fmt, const char *a, long b)
{
    char msg[512];
    snprintf(msg, sizeof msg, fmt, a, b);
    kc_fail("%s: %s", p->path, msg);
    p->failed = 1;
    return 0; /* cancels the parse */
}

static void reset_elem(coco_parse *p)
{
    free(p->file_name);
    p->file_name = NULL;
    p->has_id = p->has_image_id = p->crowd = p->n_bbox = p->bad_bbox = 0;
    p->w = p->h = 0;
}

static int end_elem(coco_parse *p)
{
    long k = p->elem_index;
    if (p->section == SEC_IMAGES) {
        if (!p->file_name) return pfail(p, "images[%.0s%ld] has no file_name", "", k);
        if (!p->has_id) return pfail(p, "images[%.0s%ld] has no id", "", k);
        int i = find_name(p, p->file_name);
        if (i >= 0) {
            if (p->ids[i] >= 0) return pfail(p, "two images entries have the file_name '%s' (the second is images[%ld])", p->file_name, k);
            p->ids[i] = p->id;
            p->gt->img[i].w = p->w;
            p->gt->img[i].h = p->h;
            size_t s = hash_i64(p->id) & (p->cap - 1);
            while (p->by_id[s] >= 0) s = (s + 1) & (p->cap - 1);
            p->by_id[s] = i;
        }
    } else {
        if (!p->has_image_id) return pfail(p, "annotations[%.0s%ld] has no image_id", "", k);
        if (p->n_bbox != 4 || p->bad_bbox) return pfail(p, "annotations[%.0s%ld] has no bbox of 4 numbers", "", k);
        if (p->images_seen) {
            int i = find_id(p, p->image_id);
            if (i >= 0) add_box(&p->gt->img[i], p->bbox, p->crowd);
        } else {
            if (p->n_pend == p->cap_pend) {
                p->cap_pend = p->cap_pend ? 2 * p->cap_pend : 1024;
                p->pend = kc_realloc(p->pend, p->cap_pend * sizeof *p->pend);
            }
            struct pending *q = &p->pend[p->n_pend++];
            q->image_id = p->image_id;
            memcpy(q->b, p->bbox, sizeof q->b);
            q->crowd = p->crowd;
        }
    }
    reset_elem(p);
    return 1;
}

/* An image side from the JSON: sizes outside 0..1e9 (or NaN) are not sizes and count as not given (0). */
static int coco_dim(double v) { return v >= 0 && v <= 1e9 ? (int)v : 0; }

static int on_value_number(coco_parse *p, const char *s, size_t len)
{
    if (p->in_bbox && p->depth == 4) {
        char buf[64];
        if (len >= sizeof buf || p->n_bbox >= 4) {
            p->bad_bbox = 1;
            return 1;
        }
        memcpy(buf, s, len);
        buf[len] = 0;
        p->bbox[p->n_bbox++] = strtod(buf, NULL);
        return 1;
    }
    if (!p->in_elem || p->depth != 3) return 1;
    char buf[64];
    if (len >= sizeof buf) return 1;
    memcpy(buf, s, len);
    buf[len] = 0;
    const char *k = p->key3;
    int is_int = !strpbrk(buf, ".eE");
    if (p->section == SEC_IMAGES) {
        if (!strcmp(k, "id") && is_int) p->id = strtoll(buf, NULL, 10), p->has_id = 1;
        else if (!strcmp(k, "width")) p->w = coco_dim(strtod(buf, NULL));
        else if (!strcmp(k, "height")) p->h = coco_dim(strtod(buf, NULL));
    } else {
        if (!strcmp(k, "image_id") && is_int) p->image_id = strtoll(buf, NULL, 10), p->has_image_id = 1;
        else if (!strcmp(k, "iscrowd")) p->crowd = strtod(buf, NULL) == 1.0;
    }
    return 1;
}

static int cb_number(void *ctx, const char *s, size_t len) { return on_value_number(ctx, s, len); }

static int cb_other(void *ctx)
{
    coco_parse *p = ctx;
    if (p->in_bbox && p->depth == 4) p->bad_bbox = 1;
    return 1;
}
static int cb_bool(void *ctx, int v)
{
    coco_parse *p = ctx;
    if (p->in_elem && p->depth == 3 && p->section == SEC_ANNOTATIONS && !strcmp(p->key3, "iscrowd")) p->crowd = v != 0;
    return cb_other(ctx);
}

static int cb_string(void *ctx, const unsigned char *s, size_t len)
{
    coco_parse *p = ctx;
    if (p->in_bbox && p->depth == 4) p->bad_bbox = 1;
    if (p->in_elem && p->depth == 3 && p->section == SEC_IMAGES && !strcmp(p->key3, "file_name")) {
        free(p->file_name);
        p->file_name = kc_malloc(len + 1);
        memcpy(p->file_name, s, len);
        p->file_name[len] = 0;
    }
    return 1;
}

static void set_key(char *dst, const unsigned char *s, size_t len)
{
    size_t n = len < 31 ? len : 31;
    memcpy(dst, s, n);
    dst[n] = 0;
    if (len > 31) dst[0] = 0; /* no key we read is that long */
}

static int cb_map_key(void *ctx, const unsigned char *s, size_t len)
{
    coco_parse *p = ctx;
    if (p->depth == 1) set_key(p->key1, s, len);
    else if (p->depth == 3 && p->in_elem) set_key(p->key3, s, len);
    return 1;
}

static int cb_start_map(void *ctx)
{
    coco_parse *p = ctx;
    p->depth++;
    if (p->depth == 3 && p->section != SEC_NONE) {
        p->in_elem = 1;
        p->key3[0] = 0;
        reset_elem(p);
    }
    return 1;
}

static int cb_end_map(void *ctx)
{
    coco_parse *p = ctx;
    int rc = 1;
    if (p->depth == 3 && p->in_elem) {
        p->in_elem = 0;
        rc = end_elem(p);
        p->elem_index++;
    }
    p->depth--;
    return rc;
}

static int cb_start_array(void *ctx)
{
    coco_parse *p = ctx;
    p->depth++;
    if (p->depth == 2) {
        p->section = !strcmp(p->key1, "images") ? SEC_IMAGES : !strcmp(p->key1, "annotations") ? SEC_ANNOTATIONS : SEC_NONE;
        p->elem_index = 0;
    }
    if (p->depth == 4 && p->in_elem && !strcmp(p->key3, "bbox")) p->in_bbox = 1, p->n_bbox = 0;
    return 1;
}

static int cb_end_array(void *ctx)
{
    coco_parse *p = ctx;
    if (p->depth == 4) p->in_bbox = 0;
    if (p->depth == 2) {
        if (p->section == SEC_IMAGES) p->images_seen = 1;
        p->section = SEC_NONE;
    }
    p->depth--;
    return 1;
}

static const yajl_callbacks coco_callbacks = {
    cb_other, cb_bool, NULL, NULL, cb_number, cb_string, cb_start_map, cb_map_key, cb_end_map, cb_start_array,
    cb_end_array,
};

/* Depth = open containers: the root map's keys arrive at depth 1, the images / annotations array
 * is depth 2, an element map depth 3 (its keys and scalar values at depth 3), a bbox array depth 4.
 * Anything deeper (segmentation polygons and RLE counts) is skipped without being stored. */

static char *basename_dup(const char *path)
{
    const char *b = strrchr(path, '/');
    return kc_strdup(b ? b + 1 : path);
}

static char *stem_dup(const char *path)
{
    char *s = basename_dup(path);
    char *dot = strrchr(s, '.');
    if (dot && dot != s) *dot = 0;
    return s;
}

int coco_read_json(const char *json_path, char *const *file_names, int n, coco_gt *out)
{
    memset(out, 0, sizeof *out);
    out->n = n;
    out->img = kc_calloc((size_t)(n > 0 ? n : 1), sizeof *out->img);
    coco_parse p;
    memset(&p, 0, sizeof p);
    p.path = json_path;
    p.gt = out;
    p.cap = 16;
    while (p.cap < 2 * (size_t)n + 2) p.cap *= 2;
    p.by_name = kc_malloc(p.cap * sizeof *p.by_name);
    p.by_id = kc_malloc(p.cap * sizeof *p.by_id);
    p.ids = kc_malloc((size_t)(n > 0 ? n : 1) * sizeof *p.ids);
    memset(p.by_name, 0xff, p.cap * sizeof *p.by_name);
    memset(p.by_id, 0xff, p.cap * sizeof *p.by_id);
    int rc = 0;
    for (int i = 0; i < n; i++) {
        out->img[i].file_name = basename_dup(file_names[i]);
        out->img[i].id = stem_dup(file_names[i]);
        p.ids[i] = -1;
        if (find_name(&p, out->img[i].file_name) >= 0 && rc == 0)
            rc = kc_fail("%s: the list names '%s' twice", json_path, out->img[i].file_name);
        size_t s = hash_str(out->img[i].file_name) & (p.cap - 1);
        while (p.by_name[s] >= 0) s = (s + 1) & (p.cap - 1);
        p.by_name[s] = i;
    }
    FILE *f = rc == 0 ? fopen(json_path, "rb") : NULL;
    if (rc == 0 && !f) rc = kc_fail("%s: cannot open (%s)", json_path, strerror(errno));
    yajl_handle h = f ? yajl_alloc(&coco_callbacks, NULL, &p) : NULL;
    if (f) {
        size_t chunk = (size_t)1 << 20, total = 0;
        struct stat st_file;
        if (fstat(fileno(f), &st_file) == 0 && st_file.st_size >= 0 && (size_t)st_file.st_size < chunk)
            chunk = (size_t)st_file.st_size + 1; /* small files: no 1 MiB buffer */
        unsigned char *buf = kc_malloc(chunk);
        yajl_status st = yajl_status_ok;
        for (;;) {
            size_t got = fread(buf, 1, chunk, f);
            if (got == 0) break;
            st = yajl_parse(h, buf, got);
            if (st != yajl_status_ok) {
                total += yajl_get_bytes_consumed(h);
                break;
            }
            total += got;
        }
        if (st == yajl_status_ok && ferror(f)) rc = kc_fail("%s: read error", json_path);
        else if (st == yajl_status_ok) st = yajl_complete_parse(h);
        if (rc == 0 && st != yajl_status_ok) {
            if (p.failed) {
                rc = -1;
            } else {
                unsigned char *m = yajl_get_error(h, 0, NULL, 0);
                const char *msg = m ? (const char *)m : "error";
                const char *e = strstr(msg, "error: ");
                char clean[256];
                snprintf(clean, sizeof clean, "%s", e ? e + 7 : msg);
                size_t l = strlen(clean);
                while (l && (clean[l - 1] == '\n' || clean[l - 1] == ' ' || clean[l - 1] == '.')) clean[--l] = 0;
                if (!strcmp(clean, "premature EOF")) rc = kc_fail("%s: bad JSON: truncated (premature end of file at byte %zu)", json_path, total);
                else rc = kc_fail("%s: bad JSON: %s at byte %zu", json_path, clean, total);
                if (m) yajl_free_error(h, m);
            }
        }
        free(buf);
        yajl_free(h);
        fclose(f);
    }
    if (rc == 0 && !p.images_seen) rc = kc_fail("%s: no 'images' array", json_path);
    for (size_t k = 0; rc == 0 && k < p.n_pend; k++) {
        int i = find_id(&p, p.pend[k].image_id);
        if (i >= 0) add_box(&out->img[i], p.pend[k].b, p.pend[k].crowd);
    }
    for (int i = 0; rc == 0 && i < n; i++) {
        if (p.ids[i] < 0)
            rc = kc_fail("%s: listed image %s has no entry in 'images'", json_path, out->img[i].file_name);
        else if (out->img[i].n_annotations == 0)
            rc = kc_fail("%s: listed image %s (id %lld) has no entry in 'annotations' (LOST and TokenCut fail on "
                         "such an image too; remove it from the list)", json_path, out->img[i].file_name,
                         (long long)p.ids[i]);
    }
    reset_elem(&p);
    free(p.by_name);
    free(p.by_id);
    free(p.ids);
    free(p.pend);
    if (rc < 0) coco_gt_free(out);
    return rc;
}

void coco_gt_free(coco_gt *g)
{
    for (int i = 0; g->img && i < g->n; i++) {
        free(g->img[i].id);
        free(g->img[i].file_name);
        free(g->img[i].boxes);
    }
    free(g->img);
    memset(g, 0, sizeof *g);
}

/* ---- the list and the cache ------------------------------------------------------------------ */
#define COCO_CACHE_MAGIC "#keycut-coco-boxes 1"

static int read_list(const char *list, char ***lines, int *n_out)
{
    char **l;
    int n;
    KC_TRY(dataset_read_lines(list, 0, &l, &n));
    if (n == 0) {
        free(l);
        return kc_fail("%s: the list names no images", list);
    }
    *lines = l;
    *n_out = n;
    return 0;
}

static int write_cache(const char *path, const coco_gt *g, const char *json_hash)
{
    kc_buf b = {0};
    kc_buf_printf(&b, "%s\t%s\n", COCO_CACHE_MAGIC, json_hash);
    for (int i = 0; i < g->n; i++) {
        const coco_image *im = &g->img[i];
        kc_buf_printf(&b, "%s\t%d\t%d\t%d\t%d\t%d", im->file_name, im->w, im->h, im->n_annotations, im->n_crowd,
                      im->n_boxes);
        for (int k = 0; k < im->n_boxes; k++)
            kc_buf_printf(&b, "\t%.17g %.17g %.17g %.17g", im->boxes[k].xmin, im->boxes[k].ymin, im->boxes[k].xmax,
                          im->boxes[k].ymax);
        kc_buf_printf(&b, "\n");
    }
    int rc = kc_write_file_atomic(path, b.s, b.n);
    free(b.s);
    return rc;
}

/* 1 when read, 0 when the cache does not fit (ignored), -1 never (a damaged cache is ignored). */
static int read_cache(const char *path, char **lines, int n, const char *json_hash, coco_gt *g)
{
    uint8_t *data;
    size_t size;
    if (!kc_exists(path) || kc_read_file(path, &data, &size) < 0) return 0;
    memset(g, 0, sizeof *g);
    g->n = n;
    g->img = kc_calloc((size_t)n, sizeof *g->img);
    char *save = NULL, *line = strtok_r((char *)data, "\n", &save);
    char head[200];
    snprintf(head, sizeof head, "%s\t%s", COCO_CACHE_MAGIC, json_hash);
    int ok = line && !strcmp(line, head);
    for (int i = 0; ok && i < n; i++) {
        line = strtok_r(NULL, "\n", &save);
        coco_image *im = &g->img[i];
        im->file_name = basename_dup(lines[i]);
        im->id = stem_dup(lines[i]);
        char *tab = line ? strchr(line, '\t') : NULL;
        if (!tab || (size_t)(tab - line) != strlen(im->file_name) || strncmp(line, im->file_name, (size_t)(tab - line))) {
            ok = 0;
            break;
        }
        char *p = tab + 1, *end;
        long v[5];
        for (int k = 0; ok && k < 5; k++) {
            v[k] = strtol(p, &end, 10);
            if (end == p || v[k] < 0 || v[k] > 100000000) ok = 0;
            p = end;
        }
        if (!ok) break;
        im->w = (int)v[0], im->h = (int)v[1], im->n_annotations = (int)v[2], im->n_crowd = (int)v[3];
        im->n_boxes = (int)v[4];
        im->boxes = kc_malloc((size_t)(im->n_boxes ? im->n_boxes : 1) * sizeof *im->boxes);
        for (int k = 0; ok && k < im->n_boxes; k++) {
            double c[4];
            for (int j = 0; j < 4; j++) {
                c[j] = strtod(p, &end);
                if (end == p) ok = 0;
                p = end;
            }
            im->boxes[k] = (kc_box){c[0], c[1], c[2], c[3]};
        }
    }
    if (ok && strtok_r(NULL, "\n", &save)) ok = 0;
    free(data);
    if (!ok) {
        coco_gt_free(g);
        kc_warn("%s: box cache does not fit the list or the JSON; reading the JSON again", path);
        return 0;
    }
    return 1;
}

int coco_gt_load(const char *root, const char *list, const char *cache_dir, coco_gt *out)
{
    char **lines = NULL;
    int n = 0;
    KC_TRY(read_list(list, &lines, &n));
    char *json = kc_strfmt("%s/%s", root, COCO_ANNOTATIONS);
    char json_hash[65], list_hash[65], *cache = NULL;
    int rc = 0;
    if (!kc_exists(json)) rc = kc_fail("%s: COCO annotations not found", json);
    if (rc == 0 && cache_dir) {
        if (kc_sha256_file(json, json_hash) < 0 || kc_sha256_file(list, list_hash) < 0) rc = -1;
        else cache = kc_strfmt("%s/coco-boxes-%.16s-%.16s.tsv", cache_dir, json_hash, list_hash);
    }
    int hit = 0;
    if (rc == 0 && cache) hit = read_cache(cache, lines, n, json_hash, out);
    if (rc == 0 && !hit) {
        rc = coco_read_json(json, lines, n, out);
        if (rc == 0 && cache) {
            if (kc_mkdirs(cache_dir) < 0 || write_cache(cache, out, json_hash) < 0) {
                kc_warn("%s", kc_error());
                kc_warn("could not write the box cache %s (continuing)", cache);
            } else {
                kc_info("wrote the COCO box cache %s", cache);
            }
        }
    }
    for (int i = 0; i < n; i++) free(lines[i]);
    free(lines);
    free(json);
    free(cache);
    return rc;
}
