/* stages/kc-report.c — the results browser: one static HTML folder per run (issue 24).
 *
 *   kc-report --out DIR [--table FILE.csv]... [--figures DIR] [--scores NET=DIR]... [--masks NET=FILE]...
 *             [--images DATASET] [--voc ROOT] [--davis NET=DIR]... [--davis-root ROOT]
 *
 * Reads what the pipeline already wrote (kc-table's CSVs, kc-plot's figures, kc-score's per-image
 * CSVs, the masks caches, kc-propagate / kc-davis results) and writes DIR/:
 *
 *   index.html                  the tables (sortable), the galleries, the figures, provenance
 *   gallery-<net>-<setting>.html  every image of a per-image score CSV, worst Jaccard first; sort,
 *                               filter and pages in report.js; thumbnails load lazily
 *   images/<id>.html            one image: its ground truth and every gallery's mask, full size,
 *                               with Jaccard, CorLoc, lambda2, eigengap, knife edge, degenerate
 *   davis.html                  per network and sequence J and F, a strip of frames with the
 *                               propagated labels, and the frames where J drops most
 *   report.js, report.css       the page's script and style (eval/report_assets.h)
 *   photo/                      each photo once, full size and thumbnail (JPEG)
 *   full/, thumbs/              the masks as transparent PNG layers over the photo, drawn as kc-show
 *                               draws them (eval/overlay.h; pipeline/images/image_jpeg.h): ground truth
 *                               (gt/) and one folder per gallery; a thumbnail is the ground truth
 *                               beside the mask
 *   davis/                      DAVIS frames with the propagated labels (JPEG)
 *   figures/                    copies of the figures' .svg and .png
 *
 * Pictures are written once: one is redrawn only when it is missing or older than one of its
 * inputs (photo, ground truth, masks cache, results PNG, this program) or when the picture options
 * change (DIR/.pictures, the options' text).  Pages are rewritten each run, all renamed together
 * at the end (kc_outputs_begin).  Nothing is written outside DIR; DIR/.keycut.lock keeps one
 * writer.  Every user string (ids, names, paths, commands) is HTML-escaped (eval/html.h) and file
 * names come from html_safe_name.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "datasets/dataset.h"
#include "datasets/davis_gt.h"
#include "datasets/voc.h"
#include "decoders/attn_mass.h"
#include "eval/html.h"
#include "eval/overlay.h"
#include "eval/report_assets.h"
#include "pipeline/cache/cache.h"
#include "pipeline/images/image.h"
#include "pipeline/images/image_jpeg.h"
#include "pipeline/json.h"
#include "pipeline/kc.h"
#include "pipeline/lock.h"
#include "pipeline/progress.h"

static void usage(int status)
{
    fprintf(status ? stderr : stdout,
            "usage: kc-report --out DIR [--table FILE.csv]... [--figures DIR] [--scores NET=DIR]...\n"
            "                 [--masks NET=FILE]... [--images DATASET] [--voc ROOT]\n"
            "                 [--davis NET=DIR]... [--davis-root ROOT] [--title TEXT]\n"
            "\n"
            "Writes a static HTML results browser into DIR (DIR/index.html): the tables, the figures, one\n"
            "gallery per network and scored setting (every image with its Jaccard and CorLoc, worst first,\n"
            "each thumbnail the ground truth beside the mask), one page per image, and DAVIS per sequence.\n"
            "Opens from the file system in any browser; no server, no network.  Pictures are redrawn only\n"
            "when their inputs changed.\n"
            "\n"
            "  --out DIR          the report folder (created; nothing is written outside it)\n"
            "  --table FILE.csv   a kc-table CSV (report.csv, sweep.csv); repeatable\n"
            "  --figures DIR      kc-plot's folder: its .svg and .png are copied and shown\n"
            "  --scores NET=DIR   a kc-score folder: a gallery for each <setting>.csv in it; repeatable\n"
            "  --masks NET=FILE   a masks cache of NET (thumbnails, full-size overlays, provenance); repeatable\n"
            "  --images DATASET   the photos: voc:ROOT:SPLIT, list:FILE, dir:DIR\n"
            "  --voc ROOT         ground truth ROOT/SegmentationObject/<id>.png (default: ROOT of voc:ROOT:SPLIT)\n"
            "  --davis NET=DIR    kc-propagate / kc-davis results of NET; repeatable\n"
            "  --davis-root ROOT  DAVIS frames and annotations (for the DAVIS strips)\n"
            "  --title TEXT       the page title (default \"keycut report\")\n"
            "  --thumb-height N   thumbnail height in pixels (default 96)\n"
            "  --quality Q        JPEG quality of the photos (default 50: masks are sharp PNG layers)\n"
            "  --strip N          frames per DAVIS strip (default 8)\n"
            "\n"
            "example:\n"
            "  kc-report --out report --table tables/report.csv --figures figures \\\n"
            "            --scores dino=work/scores/dino/val-t0.15-bin-mean-corners-n3 \\\n"
            "            --masks dino=work/cache/dino/voc12-val/masks-t0.15-bin-mean-corners-n3.h5 \\\n"
            "            --images voc:/data/VOCdevkit/VOC2012:val \\\n"
            "            --davis dino=work/results/dino/davis17-val --davis-root /data/DAVIS\n");
    exit(status);
}

/* ---- inputs -------------------------------------------------------------------------------- */

typedef struct named {
    char *name, *path;
} named;

static void add_named(const char *opt, const char *v, named **list, int *n)
{
    const char *eq = strchr(v, '=');
    if (!eq || eq == v || !eq[1]) kc_die_msg("%s needs NET=PATH, got '%s'", opt, v);
    *list = kc_realloc(*list, sizeof **list * (size_t)(*n + 1));
    (*list)[*n].name = kc_strfmt("%.*s", (int)(eq - v), v);
    (*list)[*n].path = kc_strdup(eq + 1);
    (*n)++;
}

/* A CSV file as rows of fields (no quoting: keycut's CSVs write none). */
typedef struct csv {
    char *path;
    int n_cols, n_rows;
    char **head;   /* (n_cols) */
    char ***rows;  /* (n_rows, n_cols) */
} csv;

static void csv_free(csv *c)
{
    for (int i = 0; i < c->n_cols; i++) free(c->head[i]);
    free(c->head);
    for (int r = 0; r < c->n_rows; r++) {
        for (int i = 0; i < c->n_cols; i++) free(c->rows[r][i]);
        free(c->rows[r]);
    }
    free(c->rows);
    free(c->path);
    memset(c, 0, sizeof *c);
}

static int split_fields(char *line, char ***out)
{
    int n = 1;
    for (char *p = line; *p; p++) n += *p == ',';
    char **f = kc_malloc(sizeof(char *) * (size_t)n);
    int k = 0;
    for (char *p = line;; p++)
        if (*p == ',' || !*p) {
            int end = !*p;
            *p = 0;
            f[k++] = line;
            line = p + 1;
            if (end) break;
        }
    *out = f;
    return n;
}

/* Reads path.  A row with more fields than the header has its extra leading fields joined back
 * into the first column (an image id with commas in it).  Fewer fields: an error naming the line. */
static int csv_read(const char *path, csv *c)
{
    memset(c, 0, sizeof *c);
    uint8_t *data;
    size_t size;
    KC_TRY(kc_read_file(path, &data, &size));
    if (memchr(data, 0, size)) {
        free(data);
        return kc_fail("%s: not a text file (NUL byte)", path);
    }
    c->path = kc_strdup(path);
    char *save = NULL, *line = strtok_r((char *)data, "\n", &save);
    int lineno = 0;
    for (; line; line = strtok_r(NULL, "\n", &save)) {
        lineno++;
        size_t len = strlen(line);
        if (len && line[len - 1] == '\r') line[--len] = 0;
        if (!len) continue;
        char **f;
        int n = split_fields(line, &f);
        if (!c->head) {
            c->n_cols = n;
            c->head = kc_malloc(sizeof(char *) * (size_t)n);
            for (int i = 0; i < n; i++) c->head[i] = kc_strdup(f[i]);
            free(f);
            continue;
        }
        if (n < c->n_cols) {
            free(f);
            free(data);
            int rc = kc_fail("%s: line %d has %d fields, its header %d", path, lineno, n, c->n_cols);
            csv_free(c);
            return rc;
        }
        char **row = kc_malloc(sizeof(char *) * (size_t)c->n_cols);
        int extra = n - c->n_cols;
        kc_buf first = {0};
        for (int i = 0; i <= extra; i++) kc_buf_printf(&first, "%s%s", i ? "," : "", f[i]);
        row[0] = first.s;
        for (int i = 1; i < c->n_cols; i++) row[i] = kc_strdup(f[i + extra]);
        free(f);
        c->rows = kc_realloc(c->rows, sizeof(char **) * (size_t)(c->n_rows + 1));
        c->rows[c->n_rows++] = row;
    }
    free(data);
    if (!c->head) {
        csv_free(c);
        return kc_fail("%s: empty file (no header)", path);
    }
    return 0;
}

static int csv_col(const csv *c, const char *name)
{
    for (int i = 0; i < c->n_cols; i++)
        if (!strcmp(c->head[i], name)) return i;
    return -1;
}

/* Parses a finite number; NaN for an empty or non-numeric field. */
static double num(const char *s)
{
    if (!s || !*s) return NAN;
    char *end;
    double v = strtod(s, &end);
    return *end || !isfinite(v) ? NAN : v;
}

/* ---- the galleries ------------------------------------------------------------------------- */

enum { C_JACCARD, C_CORLOC, C_AREA, C_LAMBDA2, C_EIGENGAP, C_DEGENERATE, C_KNIFE, N_COLS };
static const char *const col_name[N_COLS] = {"jaccard", "corloc", "area", "lambda2", "eigengap", "degenerate",
                                             "knife_edge"};
static const char *const col_attr[N_COLS] = {"jaccard", "corloc", "area", "lambda2", "eigengap", "degenerate",
                                             "knife"};

typedef struct entry {
    int image;            /* index into the image table */
    const char *v[N_COLS]; /* the CSV's text ("" when the column is absent) */
    double jaccard;
    int pos;              /* row in the CSV */
} entry;

typedef struct gallery {
    const char *net;
    char *setting, *csv_path, *scores_dir, *page, *pic_dir, *summary;
    csv table;
    int n;
    entry *e;
    int masks;            /* index into the masks caches, -1: none has this setting */
} gallery;

typedef struct image_ref {
    char *id, *safe;
    const char *photo;    /* NULL: not in --images */
    int n_in;
    int *in_gallery, *in_entry;
} image_ref;

typedef struct report {
    const char *out, *title, *images_spec, *voc_root, *davis_root;
    int thumb_h, quality, strip;
    named *tables, *scores, *masks, *davis;
    int n_tables, n_scores, n_masks, n_davis;
    const char *figures;
    cache_reader *mr;     /* (n_masks) opened caches */
    kc_dataset ds;
    int have_ds;
    gallery *g;
    int n_g;
    image_ref *img;
    int n_img;
    double exe_mtime;
    int force;            /* picture options changed: redraw every picture */
    long drawn, kept;
} report;

static int cmp_entry(const void *pa, const void *pb)
{
    const entry *a = pa, *b = pb;
    int an = isnan(a->jaccard), bn = isnan(b->jaccard);
    if (an != bn) return an - bn;
    if (!an && a->jaccard != b->jaccard) return a->jaccard < b->jaccard ? -1 : 1;
    return a->pos - b->pos;
}

static int find_image(report *R, const char *id)
{
    for (int i = 0; i < R->n_img; i++)
        if (!strcmp(R->img[i].id, id)) return i;
    R->img = kc_realloc(R->img, sizeof *R->img * (size_t)(R->n_img + 1));
    image_ref *m = &R->img[R->n_img];
    memset(m, 0, sizeof *m);
    m->id = kc_strdup(id);
    m->safe = html_safe_name(id);
    return R->n_img++;
}

static int is_score_csv(const char *name)
{
    size_t n = strlen(name);
    if (n < 5 || strcmp(name + n - 4, ".csv")) return 0;
    if (!strcmp(name, "summary.csv") || !strcmp(name, "iou.csv")) return 0;
    return n < 10 || strcmp(name + n - 10, ".heads.csv") != 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The galleries of one --scores NET=DIR: each <setting>.csv with the columns id, setting, jaccard. */
static int load_scores(report *R, const named *s)
{
    DIR *d = opendir(s->path);
    if (!d) return kc_fail("%s: cannot open the scores folder of %s (%s)", s->path, s->name, strerror(errno));
    char **names = NULL;
    int n = 0;
    for (struct dirent *de; (de = readdir(d));)
        if (is_score_csv(de->d_name)) {
            names = kc_realloc(names, sizeof(char *) * (size_t)(n + 1));
            names[n++] = kc_strdup(de->d_name);
        }
    closedir(d);
    if (n == 0) return kc_fail("%s: no per-image score CSV (<setting>.csv) for %s", s->path, s->name);
    qsort(names, (size_t)n, sizeof(char *), cmp_str);
    for (int k = 0; k < n; k++) {
        gallery G;
        memset(&G, 0, sizeof G);
        G.net = s->name;
        G.csv_path = kc_strfmt("%s/%s", s->path, names[k]);
        G.scores_dir = kc_strdup(s->path);
        G.setting = kc_strfmt("%.*s", (int)strlen(names[k]) - 4, names[k]);
        G.masks = -1;
        if (csv_read(G.csv_path, &G.table) < 0) return -1;
        int cid = csv_col(&G.table, "id"), cj = csv_col(&G.table, "jaccard"), cs = csv_col(&G.table, "setting");
        if (cid != 0 || cj < 0 || cs < 0)
            return kc_fail("%s: not a kc-score per-image CSV (its header must start with id and have setting and "
                           "jaccard)", G.csv_path);
        int cols[N_COLS];
        for (int c = 0; c < N_COLS; c++) cols[c] = csv_col(&G.table, col_name[c]);
        G.n = G.table.n_rows;
        G.e = kc_calloc((size_t)(G.n ? G.n : 1), sizeof *G.e);
        for (int r = 0; r < G.n; r++) {
            char **row = G.table.rows[r];
            if (strcmp(row[cs], G.setting))
                return kc_fail("%s: line %d is of setting '%s', the file's name says '%s'", G.csv_path, r + 2,
                               row[cs], G.setting);
            entry *e = &G.e[r];
            for (int c = 0; c < N_COLS; c++) e->v[c] = cols[c] >= 0 ? row[cols[c]] : "";
            e->jaccard = num(e->v[C_JACCARD]);
            e->pos = r;
            e->image = find_image(R, row[cid]);
        }
        qsort(G.e, (size_t)G.n, sizeof *G.e, cmp_entry);
        char *sn = html_safe_name(s->name), *ss = html_safe_name(G.setting);
        G.page = kc_strfmt("gallery-%s-%s.html", sn, ss);
        G.pic_dir = kc_strfmt("%s/%s", sn, ss);
        free(sn);
        free(ss);
        char *sp = kc_strfmt("%s/summary.csv", s->path);
        uint8_t *text;
        size_t len;
        if (kc_exists(sp) && kc_read_file(sp, &text, &len) == 0) G.summary = (char *)text;
        free(sp);
        for (int i = 0; i < R->n_g; i++)
            if (!strcmp(R->g[i].page, G.page))
                return kc_fail("%s: network %s and setting %s are given twice (also %s)", G.csv_path, G.net,
                               G.setting, R->g[i].csv_path);
        R->g = kc_realloc(R->g, sizeof *R->g * (size_t)(R->n_g + 1));
        R->g[R->n_g++] = G;
        free(names[k]);
    }
    free(names);
    return 0;
}

/* ---- pictures ------------------------------------------------------------------------------ */

static double mtime_of(const char *path)
{
    struct stat st;
    if (!path || stat(path, &st) != 0) return -1;
    return (double)st.st_mtim.tv_sec + st.st_mtim.tv_nsec * 1e-9;
}

/* 1 when out must be (re)drawn: missing, or older than an input, this program or the options. */
static int stale(const report *R, const char *out, const char *const *inputs, int n)
{
    if (R->force) return 1;
    double t = mtime_of(out);
    if (t < 0 || t < R->exe_mtime) return 1;
    for (int i = 0; i < n; i++)
        if (inputs[i] && mtime_of(inputs[i]) > t) return 1;
    return 0;
}

static int write_picture(report *R, const char *rel, const kc_image *im)
{
    char *path = kc_strfmt("%s/%s", R->out, rel), *dir = kc_strdup(path);
    *strrchr(dir, '/') = 0;
    int rc = kc_mkdirs(dir) < 0 ? -1 : image_write_jpeg(path, im, R->quality);
    free(path);
    free(dir);
    if (rc == 0) R->drawn++;
    return rc;
}

static void copy_image(const kc_image *src, kc_image *dst)
{
    dst->w = src->w;
    dst->h = src->h;
    dst->rgb = kc_malloc((size_t)src->w * src->h * 3);
    memcpy(dst->rgb, src->rgb, (size_t)src->w * src->h * 3);
}

/* The picture of im at thumbnail height (never enlarged). */
static int thumb_of(const report *R, const kc_image *im, kc_image *out)
{
    if (im->h <= R->thumb_h) {
        copy_image(im, out);
        return 0;
    }
    int w = (int)lround((double)im->w * R->thumb_h / im->h);
    return image_shrink_area(im, w < 1 ? 1 : w, R->thumb_h, out);
}

/* a and b side by side (same height), a 2-pixel white gap between them. */
static void side_by_side(const kc_image *a, const kc_image *b, kc_image *out)
{
    const int gap = 2, h = a->h > b->h ? a->h : b->h;
    out->w = a->w + gap + b->w;
    out->h = h;
    out->rgb = kc_malloc((size_t)out->w * h * 3);
    memset(out->rgb, 255, (size_t)out->w * h * 3);
    for (int y = 0; y < a->h; y++) memcpy(out->rgb + (size_t)y * out->w * 3, a->rgb + (size_t)y * a->w * 3, (size_t)a->w * 3);
    for (int y = 0; y < b->h; y++)
        memcpy(out->rgb + ((size_t)y * out->w + a->w + gap) * 3, b->rgb + (size_t)y * b->w * 3, (size_t)b->w * 3);
}

/* The labels (H, W) of image id under one setting of a masks cache: grid masks mapped to pixels as
 * kc-show maps them, a refined cache's pixel masks as they are, an attention stack as the union of
 * its heads. */
static int mask_labels(const cache_reader *r, const char *setting, const char *id, int W, int H, uint8_t **labels)
{
    *labels = NULL;
    int ix = cache_index_find(&r->index, id);
    if (ix < 0) return kc_fail("%s: no image %s in its index", r->path, id);
    if (r->index.size[2 * ix] != H || r->index.size[2 * ix + 1] != W)
        return kc_fail("%s: image %s was %dx%d when decoded, the photo is %dx%d (wrong --images?)", r->path, id,
                       r->index.size[2 * ix + 1], r->index.size[2 * ix], W, H);
    const char *pol_name = cache_attr(r, "policy"), *ps = cache_attr(r, "patch");
    kc_policy pol;
    if (!pol_name) return kc_fail("%s: no 'policy' attribute (cannot map the grid back to pixels)", r->path);
    if (policy_parse(pol_name, &pol) < 0) return kc_fail_prefix("%s", r->path);
    int patch = ps ? atoi(ps) : 0;
    if (pol == POLICY_NATIVE16 && patch <= 0) return kc_fail("%s: native16 masks without a 'patch' attribute", r->path);
    char *dset = kc_strfmt("/masks/%s/%s", setting, id);
    uint8_t *grid = NULL;
    int gh = 0, gw = 0, rc = 0;
    if (!cache_has(r, dset)) rc = kc_fail("%s: no mask %s", r->path, dset);
    else if (attn_mass_is_setting(setting)) {
        int heads;
        if (cache_read_u8_stack(r, dset, &grid, &heads, &gh, &gw) < 0) rc = -1;
        else
            for (int h = 1; h < heads; h++)
                for (size_t k = 0; k < (size_t)gh * gw; k++) grid[k] |= grid[(size_t)h * gh * gw + k];
    } else if (cache_read_u8(r, dset, &grid, &gh, &gw) < 0) rc = -1;
    if (rc == 0) {
        *labels = kc_malloc((size_t)W * H);
        if (cache_attr(r, "refine") && gh == H && gw == W) memcpy(*labels, grid, (size_t)W * H);
        else if (overlay_grid_to_pixels(grid, gh, gw, pol, patch, W, H, *labels) < 0) {
            rc = kc_fail_prefix("%s: %s", r->path, dset);
            free(*labels);
            *labels = NULL;
        }
    }
    free(grid);
    free(dset);
    return rc;
}

static void with_labels(const kc_image *im, const uint8_t *labels, kc_image *out)
{
    copy_image(im, out);
    if (labels) overlay_draw_masks(out, labels, 0.45f);
}

static int write_layer_png(report *R, const char *rel, int w, int h, const uint8_t *rgba)
{
    char *path = kc_strfmt("%s/%s", R->out, rel), *dir = kc_strdup(path);
    *strrchr(dir, '/') = 0;
    int rc = kc_mkdirs(dir) < 0 ? -1 : image_write_png_rgba(path, w, h, rgba);
    free(path);
    free(dir);
    if (rc == 0) R->drawn++;
    return rc;
}

/* The masks' layer (eval/overlay.h's drawing, as kc-show draws it, as a transparent PNG): full
 * size as rel_full, thumbnail height as rel_thumb.  labels: (H, W). */
static int write_layers(report *R, const uint8_t *labels, int W, int H, const char *rel_full, const char *rel_thumb)
{
    const size_t n = (size_t)W * H;
    kc_image black = {W, H, kc_calloc(n * 3, 1)}, white = {W, H, kc_malloc(n * 3)}, sb = {0, 0, NULL},
             sw = {0, 0, NULL};
    memset(white.rgb, 255, n * 3);
    overlay_draw_masks(&black, labels, 0.45f);
    overlay_draw_masks(&white, labels, 0.45f);
    uint8_t *rgba = kc_malloc(n * 4);
    image_layer_from_pair(&black, &white, rgba);
    int rc = write_layer_png(R, rel_full, W, H, rgba);
    if (rc == 0) rc = thumb_of(R, &black, &sb);
    if (rc == 0) rc = thumb_of(R, &white, &sw);
    if (rc == 0) {
        image_layer_from_pair(&sb, &sw, rgba);
        rc = write_layer_png(R, rel_thumb, sb.w, sb.h, rgba);
    }
    free(rgba);
    image_free(&black);
    image_free(&white);
    image_free(&sb);
    image_free(&sw);
    return rc;
}

/* The pictures of one VOC image: the photo once (photo/<id>.jpg and the thumbnail
 * photo/<id>.t.jpg), the ground truth's layer (full/gt/<id>.png, thumbs/gt/<id>.png) and per
 * gallery the mask's layer (full/<net>/<setting>/<id>.png, thumbs/<net>/<setting>/<id>.png). */
static int draw_image(report *R, int i)
{
    image_ref *m = &R->img[i];
    if (!m->photo) return 0;
    int W, H, rc = 0;
    if (image_size(m->photo, &W, &H) < 0) return -1;
    char *gt_path = R->voc_root ? kc_strfmt("%s/SegmentationObject/%s.png", R->voc_root, m->id) : NULL;
    if (gt_path && !kc_exists(gt_path)) {
        free(gt_path);
        gt_path = NULL;
    }
    char *rel[2] = {kc_strfmt("photo/%s.jpg", m->safe), kc_strfmt("photo/%s.t.jpg", m->safe)};
    char *out[2] = {kc_strfmt("%s/%s", R->out, rel[0]), kc_strfmt("%s/%s", R->out, rel[1])};
    const char *in[3] = {m->photo, gt_path, NULL};
    if (stale(R, out[0], in, 1) || stale(R, out[1], in, 1)) {
        kc_image im = {0, 0, NULL}, small = {0, 0, NULL};
        rc = image_load_rgb(m->photo, &im);
        if (rc == 0) rc = write_picture(R, rel[0], &im);
        if (rc == 0) rc = thumb_of(R, &im, &small);
        if (rc == 0) rc = write_picture(R, rel[1], &small);
        image_free(&im);
        image_free(&small);
    } else {
        R->kept += 2;
    }
    for (int k = 0; k < 2; k++) {
        free(rel[k]);
        free(out[k]);
    }
    for (int k = -1; k < m->n_in && rc == 0; k++) {
        const gallery *G = k >= 0 ? &R->g[m->in_gallery[k]] : NULL;
        if (G ? G->masks < 0 : !gt_path) continue;
        rel[0] = kc_strfmt("full/%s/%s.png", G ? G->pic_dir : "gt", m->safe);
        rel[1] = kc_strfmt("thumbs/%s/%s.png", G ? G->pic_dir : "gt", m->safe);
        out[0] = kc_strfmt("%s/%s", R->out, rel[0]);
        out[1] = kc_strfmt("%s/%s", R->out, rel[1]);
        in[1] = G ? R->mr[G->masks].path : gt_path;
        if (stale(R, out[0], in, 2) || stale(R, out[1], in, 2)) {
            uint8_t *lab = NULL;
            if (G) {
                rc = mask_labels(&R->mr[G->masks], G->setting, m->id, W, H, &lab);
            } else {
                int w, h;
                rc = image_read_png_index(gt_path, &w, &h, &lab);
                if (rc == 0 && (w != W || h != H))
                    rc = kc_fail("%s: %dx%d, but the photo %s is %dx%d", gt_path, w, h, m->photo, W, H);
                for (size_t p = 0; rc == 0 && p < (size_t)W * H; p++)
                    if (lab[p] == 255) lab[p] = 0;
            }
            if (rc == 0) rc = write_layers(R, lab, W, H, rel[0], rel[1]);
            free(lab);
        } else {
            R->kept += 2;
        }
        for (int j = 0; j < 2; j++) {
            free(rel[j]);
            free(out[j]);
        }
    }
    free(gt_path);
    return rc;
}

/* ---- pages --------------------------------------------------------------------------------- */

static void esc(kc_buf *b, const char *s) { html_escape(b, s ? s : ""); }

static void page_begin(kc_buf *b, const char *root, const char *title, const report *R)
{
    kc_buf_printf(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>");
    esc(b, title);
    kc_buf_printf(b, "</title>\n<link rel=\"stylesheet\" href=\"%sreport.css\">\n"
                     "<script src=\"%sreport.js\" defer></script>\n</head>\n<body>\n"
                     "<nav><a href=\"%sindex.html\">tables and galleries</a>",
                  root, root, root);
    if (R->n_davis) kc_buf_printf(b, "<a href=\"%sdavis.html\">DAVIS</a>", root);
    kc_buf_printf(b, "</nav>\n<h1>");
    esc(b, title);
    kc_buf_printf(b, "</h1>\n");
}

static void page_end(kc_buf *b) { kc_buf_printf(b, "</body>\n</html>\n"); }

static int write_page(const report *R, const char *rel, kc_buf *b)
{
    char *path = kc_strfmt("%s/%s", R->out, rel), *dir = kc_strdup(path);
    *strrchr(dir, '/') = 0;
    int rc = kc_mkdirs(dir) < 0 ? -1 : kc_write_file_atomic(path, b->s, b->n);
    free(path);
    free(dir);
    free(b->s);
    memset(b, 0, sizeof *b);
    return rc;
}

/* A value as the Markdown tables show it: fractions in percent with one decimal. */
static void show_value(kc_buf *b, const char *v)
{
    double x = num(v);
    if (isnan(x)) esc(b, v);
    else kc_buf_printf(b, "%.1f", 100 * x);
}

static void prov_list(kc_buf *b, const cache_reader *r)
{
    static const char *const first[] = {"command", "created", "content_hash", "weights", "weights_sha256", "model",
                                        "dataset", "policy", "features", "features_content_hash", "code_version"};
    kc_buf_printf(b, "<dl class=\"prov\">\n");
    for (size_t k = 0; k < sizeof first / sizeof first[0]; k++) {
        const char *v = cache_attr(r, first[k]);
        if (!v) continue;
        kc_buf_printf(b, "<dt>%s</dt><dd>", first[k]);
        esc(b, v);
        kc_buf_printf(b, "</dd>\n");
    }
    kc_buf_printf(b, "</dl>\n<details><summary>all root attributes of ");
    esc(b, r->path);
    kc_buf_printf(b, "</summary>\n<dl class=\"prov\">\n");
    for (int k = 0; k < r->prov.n; k++) {
        kc_buf_printf(b, "<dt>");
        esc(b, r->prov.key[k]);
        kc_buf_printf(b, "</dt><dd>");
        esc(b, r->prov.value[k]);
        kc_buf_printf(b, "</dd>\n");
    }
    kc_buf_printf(b, "</dl></details>\n");
}

static void gallery_prov(kc_buf *b, const report *R, const gallery *G)
{
    kc_buf_printf(b, "<dl class=\"prov\">\n<dt>network</dt><dd>");
    esc(b, G->net);
    kc_buf_printf(b, "</dd>\n<dt>setting</dt><dd>");
    esc(b, G->setting);
    kc_buf_printf(b, "</dd>\n<dt>scores</dt><dd>");
    esc(b, G->csv_path);
    kc_buf_printf(b, " (kc-score)</dd>\n");
    if (G->summary) {
        kc_buf_printf(b, "<dt>summary.csv</dt><dd>");
        esc(b, G->summary);
        kc_buf_printf(b, "</dd>\n");
    }
    kc_buf_printf(b, "<dt>masks</dt><dd>");
    esc(b, G->masks >= 0 ? R->mr[G->masks].path : "(no masks cache given: no pictures)");
    kc_buf_printf(b, "</dd>\n</dl>\n");
    if (G->masks >= 0) prov_list(b, &R->mr[G->masks]);
}

static void write_table(kc_buf *b, const report *R, const csv *c)
{
    kc_buf_printf(b, "<table class=\"sortable\" data-source=\"");
    esc(b, c->path);
    kc_buf_printf(b, "\">\n<thead><tr>");
    for (int i = 0; i < c->n_cols; i++) {
        kc_buf_printf(b, "<th>");
        esc(b, c->head[i]);
        kc_buf_printf(b, "</th>");
    }
    kc_buf_printf(b, "</tr></thead>\n<tbody>\n");
    for (int r = 0; r < c->n_rows; r++) {
        kc_buf_printf(b, "<tr>");
        for (int i = 0; i < c->n_cols; i++) {
            const char *v = c->rows[r][i];
            kc_buf_printf(b, "<td data-v=\"");
            esc(b, v);
            kc_buf_printf(b, "\"%s>", isnan(num(v)) ? " class=\"text\"" : "");
            const gallery *link = NULL;
            if (i == 0)
                for (int k = 0; k < R->n_g && !link; k++)
                    if (!strcmp(R->g[k].net, v)) link = &R->g[k];
            if (link) {
                kc_buf_printf(b, "<a href=\"%s\">", link->page);
                esc(b, v);
                kc_buf_printf(b, "</a>");
            } else {
                show_value(b, v);
            }
            kc_buf_printf(b, "</td>");
        }
        kc_buf_printf(b, "</tr>\n");
    }
    kc_buf_printf(b, "</tbody>\n</table>\n");
}

static double mean_col(const gallery *G, int col, int *n)
{
    double s = 0;
    *n = 0;
    for (int i = 0; i < G->n; i++) {
        double v = num(G->e[i].v[col]);
        if (!isnan(v)) {
            s += v;
            (*n)++;
        }
    }
    return *n ? s / *n : NAN;
}

/* A photo with a layer over it: <span class="ov"><img photo><img class="layer"></span>; root is
 * the page's way back to the report folder, layer_dir the layer's folder. */
static void stack(kc_buf *b, const char *root, const char *safe, const char *photo_ext, const char *layer_dir,
                  const char *alt)
{
    kc_buf_printf(b, "<span class=\"ov\"><img src=\"%sphoto/%s%s\" loading=\"lazy\" alt=\"", root, safe, photo_ext);
    esc(b, alt);
    kc_buf_printf(b, "\"><img class=\"layer\" src=\"%s%s/%s.png\" loading=\"lazy\" alt=\"\"></span>", root,
                  layer_dir, safe);
}

/* "<kind>/<pic_dir>" in a buffer that lives until the next call (for stack's layer_dir). */
static const char *layer_dir_of(const char *pic_dir, const char *kind)
{
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/%s", kind, pic_dir);
    return buf;
}

static void write_gallery(kc_buf *b, const report *R, int gi)
{
    const gallery *G = &R->g[gi];
    char *title = kc_strfmt("%s at %s: %d images", G->net, G->setting, G->n);
    page_begin(b, "", title, R);
    free(title);
    int nj, nc;
    double mj = mean_col(G, C_JACCARD, &nj), mc = mean_col(G, C_CORLOC, &nc);
    kc_buf_printf(b, "<p>Mean Jaccard %.1f over %d images, CorLoc %.1f over %d; worst Jaccard first.  "
                     "Click a picture for the full-size masks of every network and setting.</p>\n",
                  100 * mj, nj, 100 * mc, nc);
    kc_buf_printf(b, "<details><summary>provenance</summary>\n");
    gallery_prov(b, R, G);
    kc_buf_printf(b, "</details>\n");
    kc_buf_printf(b,
                  "<div class=\"controls\">\n"
                  "<label>id contains <input id=\"filter\" type=\"search\" size=\"14\"></label>\n"
                  "<label>Jaccard at most <input id=\"jmax\" type=\"number\" min=\"0\" max=\"100\" step=\"1\" "
                  "size=\"4\"> %%</label>\n"
                  "<label><input id=\"knife\" type=\"checkbox\"> knife edge only</label>\n"
                  "<label>sort by <select id=\"sortkey\"><option value=\"jaccard\">Jaccard</option>"
                  "<option value=\"corloc\">CorLoc</option><option value=\"lambda2\">lambda2</option>"
                  "<option value=\"eigengap\">eigengap</option><option value=\"area\">area</option>"
                  "<option value=\"id\">id</option></select></label>\n"
                  "<select id=\"order\"><option value=\"asc\">ascending (worst first)</option>"
                  "<option value=\"desc\">descending</option></select>\n"
                  "<label>per page <select id=\"pagesize\"><option>50</option><option selected>100</option>"
                  "<option>500</option><option value=\"all\">all</option></select></label>\n"
                  "<button id=\"prev\" type=\"button\">previous</button><button id=\"next\" type=\"button\">next"
                  "</button>\n<span id=\"status\" class=\"muted\"></span>\n</div>\n");
    kc_buf_printf(b, "<ol id=\"items\" class=\"gallery\">\n");
    for (int i = 0; i < G->n; i++) {
        const entry *e = &G->e[i];
        const image_ref *m = &R->img[e->image];
        kc_buf_printf(b, "<li class=\"item\" data-id=\"");
        esc(b, m->id);
        kc_buf_printf(b, "\"");
        for (int c = 0; c < N_COLS; c++) {
            kc_buf_printf(b, " data-%s=\"", col_attr[c]);
            esc(b, e->v[c]);
            kc_buf_printf(b, "\"");
        }
        kc_buf_printf(b, "%s><a href=\"images/%s.html#g%d\">", i >= 100 ? " hidden" : "", m->safe, gi);
        if (G->masks >= 0 && m->photo) {
            if (R->voc_root) stack(b, "", m->safe, ".t.jpg", "thumbs/gt", "ground truth");
            stack(b, "", m->safe, ".t.jpg", layer_dir_of(G->pic_dir, "thumbs"), m->id);
        }
        kc_buf_printf(b, "</a>\n<div class=\"cap\"><span class=\"id\">");
        esc(b, m->id);
        kc_buf_printf(b, "</span> J ");
        show_value(b, e->v[C_JACCARD]);
        kc_buf_printf(b, " &middot; CorLoc ");
        esc(b, e->v[C_CORLOC]);
        if (*e->v[C_LAMBDA2]) {
            kc_buf_printf(b, " &middot; &lambda;2 ");
            esc(b, e->v[C_LAMBDA2]);
            kc_buf_printf(b, " &middot; gap ");
            esc(b, e->v[C_EIGENGAP]);
        }
        if (!strcmp(e->v[C_KNIFE], "1")) kc_buf_printf(b, " &middot; <span class=\"knife\">knife edge</span>");
        if (!strcmp(e->v[C_DEGENERATE], "1")) kc_buf_printf(b, " &middot; degenerate");
        kc_buf_printf(b, "</div></li>\n");
    }
    kc_buf_printf(b, "</ol>\n");
    page_end(b);
}

static void write_image_page(kc_buf *b, const report *R, int i)
{
    const image_ref *m = &R->img[i];
    char *title = kc_strfmt("image %s", m->id);
    page_begin(b, "../", title, R);
    free(title);
    kc_buf_printf(b, "<p class=\"muted\">photo: ");
    esc(b, m->photo ? m->photo : "(not in --images)");
    kc_buf_printf(b, "</p>\n<div class=\"side\">\n");
    if (m->photo && R->voc_root) {
        char *gt = kc_strfmt("%s/full/gt/%s.png", R->out, m->safe);
        if (kc_exists(gt)) {
            kc_buf_printf(b, "<figure>");
            stack(b, "../", m->safe, ".jpg", "full/gt", "ground truth");
            kc_buf_printf(b, "<figcaption>ground truth</figcaption></figure>\n");
        }
        free(gt);
    }
    for (int k = 0; k < m->n_in; k++) {
        const gallery *G = &R->g[m->in_gallery[k]];
        const entry *e = &G->e[m->in_entry[k]];
        kc_buf_printf(b, "<figure id=\"g%d\">", m->in_gallery[k]);
        if (G->masks >= 0 && m->photo) stack(b, "../", m->safe, ".jpg", layer_dir_of(G->pic_dir, "full"), G->net);
        kc_buf_printf(b, "<figcaption><a href=\"../%s\">", G->page);
        esc(b, G->net);
        kc_buf_printf(b, " at ");
        esc(b, G->setting);
        kc_buf_printf(b, "</a><br>Jaccard ");
        show_value(b, e->v[C_JACCARD]);
        kc_buf_printf(b, ", CorLoc ");
        esc(b, e->v[C_CORLOC]);
        kc_buf_printf(b, "<br>lambda2 ");
        esc(b, *e->v[C_LAMBDA2] ? e->v[C_LAMBDA2] : "-");
        kc_buf_printf(b, ", eigengap ");
        esc(b, *e->v[C_EIGENGAP] ? e->v[C_EIGENGAP] : "-");
        kc_buf_printf(b, "<br>knife edge %s, degenerate %s</figcaption></figure>\n",
                      !strcmp(e->v[C_KNIFE], "1") ? "<span class=\"knife\">yes</span>" : *e->v[C_KNIFE] ? "no" : "-",
                      !strcmp(e->v[C_DEGENERATE], "1") ? "yes" : *e->v[C_DEGENERATE] ? "no" : "-");
    }
    kc_buf_printf(b, "</div>\n");
    page_end(b);
}

/* ---- figures ------------------------------------------------------------------------------- */

typedef struct figure_list {
    int n;
    char **base; /* names without extension that have a .png (shown) and maybe an .svg (linked) */
    int *svg;
} figure_list;

static int copy_file(report *R, const char *src, const char *rel)
{
    char *dst = kc_strfmt("%s/%s", R->out, rel);
    int rc = 0;
    if (stale(R, dst, &src, 1)) {
        uint8_t *data;
        size_t size;
        rc = kc_read_file(src, &data, &size);
        if (rc == 0) {
            rc = kc_write_file_atomic(dst, data, size);
            free(data);
        }
    }
    free(dst);
    return rc;
}

static int copy_figures(report *R, figure_list *f)
{
    memset(f, 0, sizeof *f);
    if (!R->figures) return 0;
    DIR *d = opendir(R->figures);
    if (!d) return kc_fail("%s: cannot open the figures folder (%s)", R->figures, strerror(errno));
    for (struct dirent *de; (de = readdir(d));) {
        size_t n = strlen(de->d_name);
        if (n < 5 || de->d_name[0] == '.' || strcmp(de->d_name + n - 4, ".png")) continue;
        f->base = kc_realloc(f->base, sizeof(char *) * (size_t)(f->n + 1));
        f->base[f->n++] = kc_strfmt("%.*s", (int)n - 4, de->d_name);
    }
    closedir(d);
    qsort(f->base, (size_t)f->n, sizeof(char *), cmp_str);
    f->svg = kc_calloc((size_t)f->n + 1, sizeof(int));
    char *dir = kc_strfmt("%s/figures", R->out);
    int rc = kc_mkdirs(dir);
    free(dir);
    KC_TRY(rc);
    for (int i = 0; i < f->n; i++) {
        char *safe = html_safe_name(f->base[i]);
        char *src = kc_strfmt("%s/%s.png", R->figures, f->base[i]), *rel = kc_strfmt("figures/%s.png", safe);
        rc = copy_file(R, src, rel);
        free(src);
        free(rel);
        src = kc_strfmt("%s/%s.svg", R->figures, f->base[i]);
        rel = kc_strfmt("figures/%s.svg", safe);
        if (rc == 0 && kc_exists(src)) {
            f->svg[i] = 1;
            rc = copy_file(R, src, rel);
        }
        free(src);
        free(rel);
        free(f->base[i]);
        f->base[i] = safe;
        KC_TRY(rc);
    }
    return 0;
}

/* ---- DAVIS --------------------------------------------------------------------------------- */

typedef struct davis_seq {
    char *name;
    int n_obj;
    double j_mean, f_mean;   /* mean over the sequence's objects (per-sequence CSV) */
    int n_frames;
    char **frames;           /* per_frame frames (the first, given, frame excluded) */
    double *j;               /* (n_frames) mean J over the objects */
    int drops[3], n_drops;   /* frames (indices) with the largest fall of J from the frame before */
} davis_seq;

typedef struct davis_net {
    const named *in;
    char *split;
    csv global, per_seq;
    int n_seq;
    davis_seq *seq;
    char *features;          /* kc-propagate's propagate.json */
    char *prop_text;
} davis_net;

static void davis_net_free(davis_net *d)
{
    for (int s = 0; s < d->n_seq; s++) {
        free(d->seq[s].name);
        for (int k = 0; k < d->seq[s].n_frames; k++) free(d->seq[s].frames[k]);
        free(d->seq[s].frames);
        free(d->seq[s].j);
    }
    free(d->seq);
    free(d->split);
    free(d->features);
    free(d->prop_text);
    csv_free(&d->global);
    csv_free(&d->per_seq);
}

static int seq_of(davis_net *d, const char *object)
{
    const char *us = strrchr(object, '_');
    int len = us ? (int)(us - object) : (int)strlen(object);
    for (int s = 0; s < d->n_seq; s++)
        if ((int)strlen(d->seq[s].name) == len && !strncmp(d->seq[s].name, object, (size_t)len)) return s;
    d->seq = kc_realloc(d->seq, sizeof *d->seq * (size_t)(d->n_seq + 1));
    davis_seq *q = &d->seq[d->n_seq];
    memset(q, 0, sizeof *q);
    q->name = kc_strfmt("%.*s", len, object);
    return d->n_seq++;
}

static int load_davis(const named *in, davis_net *d)
{
    memset(d, 0, sizeof *d);
    d->in = in;
    DIR *dir = opendir(in->path);
    if (!dir) return kc_fail("%s: cannot open the DAVIS results of %s (%s)", in->path, in->name, strerror(errno));
    for (struct dirent *de; (de = readdir(dir));) {
        size_t n = strlen(de->d_name);
        if (!strncmp(de->d_name, "global_results-", 15) && n > 19 && !strcmp(de->d_name + n - 4, ".csv") && !d->split)
            d->split = kc_strfmt("%.*s", (int)n - 19, de->d_name + 15);
    }
    closedir(dir);
    if (!d->split) return kc_fail("%s: no global_results-<split>.csv (run kc-davis first)", in->path);
    char *p = kc_strfmt("%s/global_results-%s.csv", in->path, d->split);
    int rc = csv_read(p, &d->global);
    free(p);
    KC_TRY(rc);
    p = kc_strfmt("%s/per-sequence_results-%s.csv", in->path, d->split);
    rc = csv_read(p, &d->per_seq);
    free(p);
    KC_TRY(rc);
    int cj = csv_col(&d->per_seq, "J-Mean"), cf = csv_col(&d->per_seq, "F-Mean");
    if (cj < 0 || cf < 0) return kc_fail("%s: no J-Mean or F-Mean column", d->per_seq.path);
    for (int r = 0; r < d->per_seq.n_rows; r++) {
        int s = seq_of(d, d->per_seq.rows[r][0]);
        davis_seq *q = &d->seq[s];
        q->j_mean += num(d->per_seq.rows[r][cj]);
        q->f_mean += num(d->per_seq.rows[r][cf]);
        q->n_obj++;
    }
    for (int s = 0; s < d->n_seq; s++) {
        d->seq[s].j_mean /= d->seq[s].n_obj;
        d->seq[s].f_mean /= d->seq[s].n_obj;
    }
    /* per-frame J of every object: the frames where the sequence's mean J falls most */
    p = kc_strfmt("%s/global_results-%s.json", in->path, d->split);
    uint8_t *text;
    size_t len;
    if (kc_exists(p)) {
        json_value root;
        if (kc_read_file(p, &text, &len) < 0 || json_parse(&root, (char *)text, len, p) < 0) {
            free(p);
            return -1;
        }
        free(text);
        const json_value *pf = json_get(&root, "per_frame");
        for (int o = 0; o < json_count(pf); o++) {
            const json_value *ob = json_item(pf, o), *fr = json_get(ob, "frames"), *jv = json_get(ob, "J");
            int s = seq_of(d, json_key(pf, o));
            davis_seq *q = &d->seq[s];
            int n = json_count(fr);
            if (json_count(jv) != n) {
                json_free(&root);
                rc = kc_fail("%s: per_frame %s has %d frames but %d J values", p, json_key(pf, o), n, json_count(jv));
                free(p);
                return rc;
            }
            if (!q->frames) {
                q->n_frames = n;
                q->frames = kc_calloc((size_t)n + 1, sizeof(char *));
                q->j = kc_calloc((size_t)n + 1, sizeof(double));
                for (int k = 0; k < n; k++) q->frames[k] = kc_strdup(json_string(json_item(fr, k)) ? json_string(json_item(fr, k)) : "");
            }
            for (int k = 0; k < n && k < q->n_frames; k++) {
                double v = 0;
                json_get_number(json_item(jv, k), &v);
                q->j[k] += v;
            }
        }
        json_free(&root);
        for (int s = 0; s < d->n_seq; s++) {
            davis_seq *q = &d->seq[s];
            for (int k = 0; k < q->n_frames; k++) q->j[k] /= q->n_obj ? q->n_obj : 1;
            /* the three largest falls J(t-1) - J(t), J before the first listed frame taken as 1 */
            int used[4] = {-1, -1, -1, -1};
            for (int r = 0; r < 3 && r < q->n_frames; r++) {
                int best = -1;
                double bd = -INFINITY;
                for (int k = 0; k < q->n_frames; k++) {
                    int taken = 0;
                    for (int u = 0; u < r; u++) taken |= used[u] == k;
                    double fall = (k ? q->j[k - 1] : 1.0) - q->j[k];
                    if (!taken && fall > bd) {
                        bd = fall;
                        best = k;
                    }
                }
                used[r] = best;
                q->drops[q->n_drops++] = best;
            }
        }
    }
    free(p);
    p = kc_strfmt("%s/propagate.json", in->path);
    if (kc_exists(p) && kc_read_file(p, &text, &len) == 0) {
        d->prop_text = (char *)text;
        json_value root;
        if (json_parse(&root, (char *)text, len, p) == 0) {
            const char *f = json_string(json_get(&root, "features"));
            if (f) d->features = kc_strdup(f);
            json_free(&root);
        }
    }
    free(p);
    return 0;
}

/* One DAVIS frame with labels: rel (thumbnail height, or half size when full) from the results
 * PNG (and, when gt_beside, the annotation beside it). */
static int draw_davis_frame(report *R, const davis_net *d, const char *seq, const char *frame, int full,
                            const char *rel)
{
    char *jpg = kc_strfmt("%s/JPEGImages/480p/%s/%s.jpg", R->davis_root, seq, frame);
    char *res = kc_strfmt("%s/%s/%s.png", d->in->path, seq, frame);
    char *ann = kc_strfmt("%s/Annotations/480p/%s/%s.png", R->davis_root, seq, frame);
    char *out = kc_strfmt("%s/%s", R->out, rel);
    const char *in[3] = {jpg, res, full ? ann : NULL};
    int rc = 0;
    if (!stale(R, out, in, 3)) {
        R->kept++;
        goto done;
    }
    kc_image im = {0, 0, NULL}, a = {0, 0, NULL}, sa = {0, 0, NULL}, b = {0, 0, NULL}, sb = {0, 0, NULL},
             both = {0, 0, NULL};
    uint8_t *lab = NULL, *gt = NULL;
    int w, h;
    if ((rc = image_load_rgb(jpg, &im)) < 0) goto pics;
    if ((rc = image_read_png_index(res, &w, &h, &lab)) < 0) goto pics;
    if (w != im.w || h != im.h) {
        rc = kc_fail("%s: %dx%d, but the frame %s is %dx%d", res, w, h, jpg, im.w, im.h);
        goto pics;
    }
    for (size_t p = 0; p < (size_t)w * h; p++)
        if (lab[p] == 255) lab[p] = 0;
    with_labels(&im, lab, &b);
    if (!full) {
        rc = thumb_of(R, &b, &sb);
        if (rc == 0) rc = write_picture(R, rel, &sb);
        goto pics;
    }
    if (kc_exists(ann)) {
        if ((rc = image_read_png_index(ann, &w, &h, &gt)) < 0) goto pics;
        if (w != im.w || h != im.h) {
            rc = kc_fail("%s: %dx%d, but the frame %s is %dx%d", ann, w, h, jpg, im.w, im.h);
            goto pics;
        }
        for (size_t p = 0; p < (size_t)w * h; p++)
            if (gt[p] == 255) gt[p] = 0;
        with_labels(&im, gt, &a);
    }
    const int hw = im.w / 2 > 0 ? im.w / 2 : 1, hh = im.h / 2 > 0 ? im.h / 2 : 1;
    if ((rc = image_shrink_area(&b, hw, hh, &sb)) < 0) goto pics;
    if (a.rgb && (rc = image_shrink_area(&a, hw, hh, &sa)) < 0) goto pics;
    if (sa.rgb) side_by_side(&sa, &sb, &both);
    rc = write_picture(R, rel, both.rgb ? &both : &sb);
pics:
    image_free(&im);
    image_free(&a);
    image_free(&sa);
    image_free(&b);
    image_free(&sb);
    image_free(&both);
    free(lab);
    free(gt);
done:
    free(jpg);
    free(res);
    free(ann);
    free(out);
    return rc;
}

static int write_davis(report *R, davis_net *dn, kc_buf *b)
{
    page_begin(b, "", "DAVIS: label propagation per sequence", R);
    kc_buf_printf(b, "<p>J and F per sequence (the mean over its objects, from kc-davis's per-sequence CSV), a strip "
                     "of frames with the propagated labels, and the frames where the sequence's mean J falls most "
                     "from the frame before (ground truth left, propagated labels right).</p>\n");
    for (int k = 0; k < R->n_davis; k++) {
        davis_net *d = &dn[k];
        char *sn = html_safe_name(d->in->name);
        kc_buf_printf(b, "<h2 id=\"davis-%s\">", sn);
        esc(b, d->in->name);
        kc_buf_printf(b, "</h2>\n");
        write_table(b, R, &d->global);
        kc_buf_printf(b, "<table class=\"sortable\">\n<thead><tr><th>sequence</th><th>objects</th><th>J-Mean</th>"
                         "<th>F-Mean</th><th>J&amp;F</th><th>largest fall of J</th></tr></thead>\n<tbody>\n");
        for (int s = 0; s < d->n_seq; s++) {
            const davis_seq *q = &d->seq[s];
            char *ss = html_safe_name(q->name);
            kc_buf_printf(b, "<tr><td data-v=\"");
            esc(b, q->name);
            kc_buf_printf(b, "\" class=\"text\"><a href=\"#seq-%s-%s\">", sn, ss);
            esc(b, q->name);
            kc_buf_printf(b, "</a></td><td data-v=\"%d\">%d</td><td data-v=\"%.9g\">%.1f</td><td data-v=\"%.9g\">%.1f"
                             "</td><td data-v=\"%.9g\">%.1f</td>",
                          q->n_obj, q->n_obj, q->j_mean, 100 * q->j_mean, q->f_mean, 100 * q->f_mean,
                          (q->j_mean + q->f_mean) / 2, 50 * (q->j_mean + q->f_mean));
            if (q->n_drops) {
                int t = q->drops[0];
                double fall = (t ? q->j[t - 1] : 1.0) - q->j[t];
                kc_buf_printf(b, "<td data-v=\"%.9g\">%.1f (frame ", fall, 100 * fall);
                esc(b, q->frames[t]);
                kc_buf_printf(b, ")</td>");
            } else {
                kc_buf_printf(b, "<td data-v=\"\"></td>");
            }
            kc_buf_printf(b, "</tr>\n");
            free(ss);
        }
        kc_buf_printf(b, "</tbody>\n</table>\n");
        if (d->features) {
            kc_buf_printf(b, "<p class=\"muted\">features: ");
            esc(b, d->features);
            kc_buf_printf(b, " (kc-propagate, its propagate.json)</p>\n");
        }
        for (int s = 0; s < d->n_seq && R->davis_root; s++) {
            const davis_seq *q = &d->seq[s];
            char *ss = html_safe_name(q->name);
            char *rd = kc_strfmt("%s/%s", d->in->path, q->name);
            char **frames = NULL;
            int nf = 0;
            kc_buf_printf(b, "<h3 id=\"seq-%s-%s\">", sn, ss);
            esc(b, q->name);
            kc_buf_printf(b, "</h3>\n<div class=\"strip\">\n");
            if (davis_list_frames(rd, ".png", &frames, &nf) < 0) {
                free(rd);
                free(ss);
                free(sn);
                return -1;
            }
            int shown = nf < R->strip ? nf : R->strip;
            for (int f = 0; f < shown; f++) {
                int t = shown > 1 ? (int)((long)f * (nf - 1) / (shown - 1)) : 0;
                char *rel = kc_strfmt("davis/%s/%s/%s.jpg", sn, ss, frames[t]);
                char *sf = html_safe_name(frames[t]);
                free(rel);
                rel = kc_strfmt("davis/%s/%s/%s.jpg", sn, ss, sf);
                if (draw_davis_frame(R, d, q->name, frames[t], 0, rel) < 0) {
                    free(rel);
                    free(sf);
                    free(rd);
                    free(ss);
                    free(sn);
                    davis_free_names(frames, nf);
                    return -1;
                }
                kc_buf_printf(b, "<figure><img src=\"%s\" loading=\"lazy\" alt=\"", rel);
                esc(b, frames[t]);
                kc_buf_printf(b, "\"><figcaption>");
                esc(b, frames[t]);
                for (int k2 = 0; k2 < q->n_frames; k2++)
                    if (!strcmp(q->frames[k2], frames[t])) kc_buf_printf(b, " J %.1f", 100 * q->j[k2]);
                kc_buf_printf(b, "</figcaption></figure>\n");
                free(rel);
                free(sf);
            }
            kc_buf_printf(b, "</div>\n");
            if (q->n_drops) kc_buf_printf(b, "<p>Where J falls most:</p>\n<div class=\"strip\">\n");
            for (int r = 0; r < q->n_drops; r++) {
                int t = q->drops[r];
                char *sf = html_safe_name(q->frames[t]);
                char *rel = kc_strfmt("davis/%s/%s/drop-%s.jpg", sn, ss, sf);
                if (draw_davis_frame(R, d, q->name, q->frames[t], 1, rel) < 0) {
                    free(rel);
                    free(sf);
                    free(rd);
                    free(ss);
                    free(sn);
                    davis_free_names(frames, nf);
                    return -1;
                }
                double before = t ? q->j[t - 1] : 1.0;
                kc_buf_printf(b, "<figure><a href=\"%s\"><img src=\"%s\" loading=\"lazy\" width=\"427\" alt=\"", rel,
                              rel);
                esc(b, q->frames[t]);
                kc_buf_printf(b, "\"></a><figcaption>frame ");
                esc(b, q->frames[t]);
                kc_buf_printf(b, ": J %.1f after %.1f</figcaption></figure>\n", 100 * q->j[t], 100 * before);
                free(rel);
                free(sf);
            }
            if (q->n_drops) kc_buf_printf(b, "</div>\n");
            davis_free_names(frames, nf);
            free(rd);
            free(ss);
        }
        free(sn);
    }
    page_end(b);
    return 0;
}

/* ---- index --------------------------------------------------------------------------------- */

static void write_index(kc_buf *b, const report *R, const csv *tables, const figure_list *figs, const davis_net *dn)
{
    page_begin(b, "", R->title, R);
    char when[32];
    kc_utc_created(when);
    kc_buf_printf(b, "<p class=\"muted\">written %s by keycut %s: ", when, KC_VERSION);
    esc(b, kc_cmdline());
    kc_buf_printf(b, "</p>\n");
    for (int t = 0; t < R->n_tables; t++) {
        kc_buf_printf(b, "<h2>");
        esc(b, R->tables[t].name);
        kc_buf_printf(b, "</h2>\n<p class=\"muted\">from ");
        esc(b, tables[t].path);
        kc_buf_printf(b, " (kc-table; fractions shown in percent, the exact value in each cell's data; click a "
                         "column to sort)</p>\n");
        write_table(b, R, &tables[t]);
    }
    if (R->n_g) {
        kc_buf_printf(b, "<h2>Galleries</h2>\n<table class=\"sortable\">\n<thead><tr><th>network</th><th>setting</th>"
                         "<th>images</th><th>Jaccard</th><th>CorLoc</th><th>knife edge</th></tr></thead>\n<tbody>\n");
        for (int k = 0; k < R->n_g; k++) {
            const gallery *G = &R->g[k];
            int nj, nc, nk;
            double mj = mean_col(G, C_JACCARD, &nj), mc = mean_col(G, C_CORLOC, &nc), mk = mean_col(G, C_KNIFE, &nk);
            kc_buf_printf(b, "<tr><td data-v=\"");
            esc(b, G->net);
            kc_buf_printf(b, "\" class=\"text\"><a href=\"%s\">", G->page);
            esc(b, G->net);
            kc_buf_printf(b, "</a></td><td data-v=\"");
            esc(b, G->setting);
            kc_buf_printf(b, "\" class=\"text\">");
            esc(b, G->setting);
            kc_buf_printf(b, "</td><td data-v=\"%d\">%d</td><td data-v=\"%.9g\">%.1f</td><td data-v=\"%.9g\">%.1f</td>"
                             "<td data-v=\"%.9g\">%.1f</td></tr>\n",
                          G->n, G->n, mj, 100 * mj, mc, 100 * mc, mk, 100 * mk);
        }
        kc_buf_printf(b, "</tbody>\n</table>\n");
    }
    if (R->n_davis) kc_buf_printf(b, "<p><a href=\"davis.html\">DAVIS per sequence</a></p>\n");
    if (figs->n) {
        kc_buf_printf(b, "<h2>Figures</h2>\n<p class=\"muted\">from ");
        esc(b, R->figures);
        kc_buf_printf(b, " (kc-plot); click for the vector version</p>\n");
        for (int i = 0; i < figs->n; i++) {
            const char *ext = figs->svg[i] ? "svg" : "png";
            kc_buf_printf(b, "<figure class=\"fig\"><a href=\"figures/%s.%s\"><img src=\"figures/%s.png\" "
                             "loading=\"lazy\" alt=\"%s\"></a><figcaption>%s</figcaption></figure>\n",
                          figs->base[i], ext, figs->base[i], figs->base[i], figs->base[i]);
        }
    }
    kc_buf_printf(b, "<h2>Provenance</h2>\n<p>Which files, caches, weights and commands each number comes from "
                     "(the caches' root attributes, as <code>kc-inspect</code> prints them).</p>\n");
    for (int k = 0; k < R->n_g; k++) {
        const gallery *G = &R->g[k];
        char *sn = html_safe_name(G->net);
        kc_buf_printf(b, "<h3 id=\"prov-%s-%d\">", sn, k);
        esc(b, G->net);
        kc_buf_printf(b, " at ");
        esc(b, G->setting);
        kc_buf_printf(b, " (VOC)</h3>\n");
        gallery_prov(b, R, G);
        free(sn);
    }
    for (int k = 0; k < R->n_davis; k++) {
        const davis_net *d = &dn[k];
        kc_buf_printf(b, "<h3>");
        esc(b, d->in->name);
        kc_buf_printf(b, " (DAVIS)</h3>\n<dl class=\"prov\">\n<dt>results</dt><dd>");
        esc(b, d->in->path);
        kc_buf_printf(b, "</dd>\n<dt>J&amp;F</dt><dd>");
        esc(b, d->global.path);
        kc_buf_printf(b, " (kc-davis)</dd>\n");
        if (d->prop_text) {
            kc_buf_printf(b, "<dt>propagate.json</dt><dd>");
            esc(b, d->prop_text);
            kc_buf_printf(b, "</dd>\n");
        }
        kc_buf_printf(b, "</dl>\n");
        if (d->features && kc_exists(d->features)) {
            cache_reader r;
            if (cache_open(&r, d->features, NULL) == 0) {
                prov_list(b, &r);
                cache_close(&r);
            }
        }
    }
    page_end(b);
}

/* ---- main ---------------------------------------------------------------------------------- */

static int parse_int(const char *opt, const char *v, int lo, int hi)
{
    char *end;
    long x = strtol(v, &end, 10);
    if (end == v || *end || x < lo || x > hi) kc_die_msg("%s needs a number in %d..%d, got '%s'", opt, lo, hi, v);
    return (int)x;
}

int main(int argc, char **argv)
{
    kc_set_prog("kc-report");
    kc_set_cmdline(argc, argv);
    report R;
    memset(&R, 0, sizeof R);
    R.title = "keycut report";
    R.thumb_h = 96;
    R.quality = 50;
    R.strip = 8;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) usage(0);
        if (strncmp(a, "--", 2) != 0) kc_die_msg("unexpected argument '%s' (see --help)", a);
        if (i + 1 >= argc) kc_die_msg("%s needs a value (see --help)", a);
        const char *v = argv[++i];
        if (!strcmp(a, "--out")) R.out = v;
        else if (!strcmp(a, "--title")) R.title = v;
        else if (!strcmp(a, "--table")) {
            R.tables = kc_realloc(R.tables, sizeof *R.tables * (size_t)(R.n_tables + 1));
            const char *base = strrchr(v, '/') ? strrchr(v, '/') + 1 : v;
            R.tables[R.n_tables].name = kc_strdup(base);
            R.tables[R.n_tables++].path = kc_strdup(v);
        } else if (!strcmp(a, "--figures")) R.figures = v;
        else if (!strcmp(a, "--scores")) add_named(a, v, &R.scores, &R.n_scores);
        else if (!strcmp(a, "--masks")) add_named(a, v, &R.masks, &R.n_masks);
        else if (!strcmp(a, "--davis")) add_named(a, v, &R.davis, &R.n_davis);
        else if (!strcmp(a, "--images")) R.images_spec = v;
        else if (!strcmp(a, "--voc")) R.voc_root = v;
        else if (!strcmp(a, "--davis-root")) R.davis_root = v;
        else if (!strcmp(a, "--thumb-height")) R.thumb_h = parse_int(a, v, 16, 1024);
        else if (!strcmp(a, "--quality")) R.quality = parse_int(a, v, 1, 100);
        else if (!strcmp(a, "--strip")) R.strip = parse_int(a, v, 1, 100);
        else kc_die_msg("unknown option %s (see --help)", a);
    }
    if (!R.out) kc_die_msg("--out is required (see --help)");
    if (!R.n_tables && !R.n_scores && !R.n_davis && !R.figures)
        kc_die_msg("nothing to report: give --table, --scores, --davis or --figures (see --help)");
    double t0 = kc_now();

    /* read everything before writing anything */
    csv *tables = kc_calloc((size_t)R.n_tables + 1, sizeof *tables);
    for (int t = 0; t < R.n_tables; t++)
        if (csv_read(R.tables[t].path, &tables[t]) < 0) kc_die();
    for (int s = 0; s < R.n_scores; s++)
        if (load_scores(&R, &R.scores[s]) < 0) kc_die();
    R.mr = kc_calloc((size_t)R.n_masks + 1, sizeof *R.mr);
    for (int k = 0; k < R.n_masks; k++) {
        if (!kc_exists(R.masks[k].path)) kc_die_msg("%s: no such file (masks of %s)", R.masks[k].path, R.masks[k].name);
        if (cache_open(&R.mr[k], R.masks[k].path, CACHE_FORMAT_MASKS) < 0) kc_die();
    }
    for (int g = 0; g < R.n_g; g++) {
        gallery *G = &R.g[g];
        for (int k = 0; k < R.n_masks && G->masks < 0; k++) {
            char *grp = kc_strfmt("/masks/%s", G->setting);
            if (!strcmp(R.masks[k].name, G->net) && cache_has(&R.mr[k], grp)) G->masks = k;
            free(grp);
        }
        for (int i = 0; i < G->n; i++) {
            image_ref *m = &R.img[G->e[i].image];
            m->in_gallery = kc_realloc(m->in_gallery, sizeof(int) * (size_t)(m->n_in + 1));
            m->in_entry = kc_realloc(m->in_entry, sizeof(int) * (size_t)(m->n_in + 1));
            m->in_gallery[m->n_in] = g;
            m->in_entry[m->n_in++] = i;
        }
    }
    if (R.images_spec) {
        if (dataset_open(&R.ds, R.images_spec) < 0) kc_die();
        R.have_ds = 1;
        for (int j = 0; j < R.ds.n; j++)
            for (int i = 0; i < R.n_img; i++)
                if (!R.img[i].photo && !strcmp(R.img[i].id, R.ds.ids[j])) R.img[i].photo = R.ds.paths[j];
        if (!R.voc_root && !strcmp(R.ds.kind, "voc")) R.voc_root = R.ds.root;
        for (int i = 0; i < R.n_img; i++)
            if (!R.img[i].photo)
                kc_die_msg("image %s of %s is not in %s (wrong --images?)", R.img[i].id,
                           R.g[R.img[i].in_gallery[0]].csv_path, R.images_spec);
    }
    davis_net *dn = kc_calloc((size_t)R.n_davis + 1, sizeof *dn);
    for (int k = 0; k < R.n_davis; k++)
        if (load_davis(&R.davis[k], &dn[k]) < 0) kc_die();
    if (R.n_davis && R.davis_root && !kc_exists(R.davis_root)) kc_die_msg("%s: no such folder (--davis-root)", R.davis_root);
    voc_init();

    kc_lock *lock;
    if (kc_lock_folder(&lock, R.out, NULL) < 0) kc_die();
    R.exe_mtime = mtime_of("/proc/self/exe");
    /* the picture options: a change redraws every picture */
    char *opts_path = kc_strfmt("%s/.pictures", R.out);
    char *opts = kc_strfmt("keycut-report-pictures 1\nthumb-height %d\nquality %d\nimages %s\nvoc %s\ndavis-root %s\n",
                           R.thumb_h, R.quality, R.images_spec ? R.images_spec : "-", R.voc_root ? R.voc_root : "-",
                           R.davis_root ? R.davis_root : "-");
    {
        uint8_t *old;
        size_t len;
        R.force = !kc_exists(opts_path) || kc_read_file(opts_path, &old, &len) < 0;
        if (!R.force) {
            R.force = len != strlen(opts) || memcmp(old, opts, len) != 0;
            free(old);
        }
    }
    if (R.force && kc_exists(opts_path)) unlink(opts_path); /* a run that stops midway redraws next time */
    kc_on_interrupt("rerun the same command: pictures already drawn are kept");

    progress p;
    progress_init(&p, "report", R.n_img, "images");
    for (int i = 0; i < R.n_img; i++) {
        if (draw_image(&R, i) < 0) kc_die();
        progress_add(&p, 1);
    }
    progress_end(&p);
    figure_list figs;
    if (copy_figures(&R, &figs) < 0) kc_die();
    kc_buf davis_page = {0};
    if (R.n_davis && write_davis(&R, dn, &davis_page) < 0) kc_die();
    if (kc_write_file_atomic(opts_path, opts, strlen(opts)) < 0) kc_die();

    /* the pages, renamed together */
    kc_outputs_begin();
    kc_buf b = {0};
    for (int g = 0; g < R.n_g; g++) {
        write_gallery(&b, &R, g);
        if (write_page(&R, R.g[g].page, &b) < 0) kc_die();
    }
    for (int i = 0; i < R.n_img; i++) {
        write_image_page(&b, &R, i);
        char *rel = kc_strfmt("images/%s.html", R.img[i].safe);
        if (write_page(&R, rel, &b) < 0) kc_die();
        free(rel);
    }
    if (R.n_davis && write_page(&R, "davis.html", &davis_page) < 0) kc_die();
    write_index(&b, &R, tables, &figs, dn);
    if (write_page(&R, "index.html", &b) < 0) kc_die();
    char *js = kc_strfmt("%s/report.js", R.out), *css = kc_strfmt("%s/report.css", R.out);
    if (kc_write_file_atomic(js, report_js, strlen(report_js)) < 0 ||
        kc_write_file_atomic(css, report_css, strlen(report_css)) < 0 || kc_outputs_commit() < 0)
        kc_die();
    kc_lock_release(lock);

    char took[32];
    progress_fmt_time(kc_now() - t0, took, sizeof took);
    kc_info("wrote %s/index.html: %d tables, %d galleries of %d images, %d DAVIS results, %d figures; %ld pictures "
            "drawn, %ld up to date, in %s",
            R.out, R.n_tables, R.n_g, R.n_img, R.n_davis, figs.n, R.drawn, R.kept, took);

    free(js);
    free(css);
    free(opts);
    free(opts_path);
    for (int i = 0; i < figs.n; i++) free(figs.base[i]);
    free(figs.base);
    free(figs.svg);
    for (int k = 0; k < R.n_davis; k++) davis_net_free(&dn[k]);
    free(dn);
    for (int t = 0; t < R.n_tables; t++) {
        csv_free(&tables[t]);
        free(R.tables[t].name);
        free(R.tables[t].path);
    }
    free(tables);
    for (int g = 0; g < R.n_g; g++) {
        gallery *G = &R.g[g];
        csv_free(&G->table);
        free(G->e);
        free(G->setting);
        free(G->csv_path);
        free(G->scores_dir);
        free(G->page);
        free(G->pic_dir);
        free(G->summary);
    }
    free(R.g);
    for (int i = 0; i < R.n_img; i++) {
        free(R.img[i].id);
        free(R.img[i].safe);
        free(R.img[i].in_gallery);
        free(R.img[i].in_entry);
    }
    free(R.img);
    for (int k = 0; k < R.n_masks; k++) cache_close(&R.mr[k]);
    free(R.mr);
    named *lists[3] = {R.scores, R.masks, R.davis};
    int counts[3] = {R.n_scores, R.n_masks, R.n_davis};
    for (int l = 0; l < 3; l++) {
        for (int k = 0; k < counts[l]; k++) {
            free(lists[l][k].name);
            free(lists[l][k].path);
        }
        free(lists[l]);
    }
    free(R.tables);
    if (R.have_ds) dataset_free(&R.ds);
    return 0;
}
