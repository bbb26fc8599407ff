/* eval/report/report_pictures.c — the report's photos and copied figures, each drawn or copied only when
 * stale.  See report_pictures.h. */
#include "eval/report/report_pictures.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "eval/report/html.h"
#include "eval/figures/overlay.h"
#include "eval/report/report_files.h"
#include "pipeline/images/image_jpeg.h"
#include "pipeline/kc.h"

double report_mtime(const char *path)
{
    struct stat st;
    if (!path || stat(path, &st) != 0) return -1;
    return (double)st.st_mtim.tv_sec + st.st_mtim.tv_nsec * 1e-9;
}

int report_stale(const report *R, const char *out, const char *const *inputs, int n)
{
    if (R->force) return 1;
    double t = report_mtime(out);
    if (t < 0 || t < R->exe_mtime) return 1;
    for (int i = 0; i < n; i++)
        if (inputs[i] && report_mtime(inputs[i]) > t) return 1;
    return 0;
}

int report_frame_quality(const report *R) { return R->quality < 50 ? 50 : R->quality; }

int report_write_jpeg(report *R, const char *rel, const kc_image *im, int quality)
{
    char *path = report_out_path(R, rel);
    int rc = path ? image_write_jpeg(path, im, quality) : -1;
    free(path);
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

int report_thumb(const report *R, const kc_image *im, kc_image *out)
{
    if (im->h <= R->thumb_h) {
        copy_image(im, out);
        return 0;
    }
    int w = (int)lround((double)im->w * R->thumb_h / im->h);
    return image_shrink_area(im, w < 1 ? 1 : w, R->thumb_h, out);
}

void report_side_by_side(const kc_image *a, const kc_image *b, kc_image *out)
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

void report_with_labels(const kc_image *im, const uint8_t *labels, kc_image *out)
{
    copy_image(im, out);
    if (labels) overlay_draw_masks(out, labels, 0.45f);
}

int report_read_labels(const char *path, int W, int H, const char *kind, const char *of_path, uint8_t **labels)
{
    int w, h;
    KC_TRY(image_read_png_index(path, &w, &h, labels));
    if (w != W || h != H) return kc_fail("%s: %dx%d, but the %s %s is %dx%d", path, w, h, kind, of_path, W, H);
    for (size_t p = 0; p < (size_t)W * H; p++)
        if ((*labels)[p] == 255) (*labels)[p] = 0;
    return 0;
}

/* The two pictures of one photo, full size and thumbnail: rel, their names in the report
 * folder; out, their paths. */
typedef struct picture_pair {
    char *rel[2], *out[2];
} picture_pair;

/* Takes the new strings rel_full and rel_thumb. */
static void pair_names(picture_pair *p, const report *R, char *rel_full, char *rel_thumb)
{
    p->rel[0] = rel_full;
    p->rel[1] = rel_thumb;
    for (int k = 0; k < 2; k++) p->out[k] = kc_strfmt("%s/%s", R->out, p->rel[k]);
}

static void pair_free(picture_pair *p)
{
    for (int k = 0; k < 2; k++) {
        free(p->rel[k]);
        free(p->out[k]);
    }
}

/* 1 when either picture of the pair is stale; counts and records both kept when neither is. */
static int pair_stale(report *R, const picture_pair *p, const char *const *inputs, int n)
{
    if (report_stale(R, p->out[0], inputs, n) || report_stale(R, p->out[1], inputs, n)) return 1;
    R->kept += 2;
    for (int k = 0; k < 2; k++) report_files_keep(R, p->rel[k]);
    return 0;
}

/* The photo, full size and thumbnail. */
static int draw_photo(report *R, const char *photo, const picture_pair *p)
{
    kc_image im = {0, 0, NULL}, small = {0, 0, NULL};
    int rc = image_load_rgb(photo, &im);
    if (rc == 0) rc = report_write_jpeg(R, p->rel[0], &im, R->quality);
    if (rc == 0) rc = report_thumb(R, &im, &small);
    if (rc == 0) rc = report_write_jpeg(R, p->rel[1], &small, R->quality);
    image_free(&im);
    image_free(&small);
    return rc;
}

int report_draw_photo(report *R, const char *photo, const char *rel)
{
    picture_pair p;
    pair_names(&p, R, kc_strfmt("%s.jpg", rel), kc_strfmt("%s.t.jpg", rel));
    const char *in[1] = {photo};
    int rc = pair_stale(R, &p, in, 1) ? draw_photo(R, photo, &p) : 0;
    pair_free(&p);
    return rc;
}

char *report_gt_path(const report *R, const char *id)
{
    char *gt = R->voc_root ? kc_strfmt("%s/SegmentationObject/%s.png", R->voc_root, id) : NULL;
    if (gt && !kc_exists(gt)) {
        free(gt);
        gt = NULL;
    }
    return gt;
}

int report_draw_image(report *R, int i)
{
    image_ref *m = &R->img[i];
    if (!m->photo) return 0;
    char *rel = kc_strfmt("photo/%s", m->safe);
    int rc = report_draw_photo(R, m->photo, rel);
    free(rel);
    return rc;
}

/* ---- figures ------------------------------------------------------------------------------- */

static int copy_file(report *R, const char *src, const char *rel)
{
    char *dst = kc_strfmt("%s/%s", R->out, rel);
    int rc = 0;
    if (report_stale(R, dst, &src, 1)) {
        uint8_t *data;
        size_t size;
        char *out = report_out_path(R, rel);
        rc = out ? kc_read_file(src, &data, &size) : -1;
        if (rc == 0) {
            rc = kc_write_file_atomic(out, data, size);
            free(data);
        }
        free(out);
    } else
        report_files_keep(R, rel);
    free(dst);
    return rc;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int report_copy_figures(report *R, report_figures *f)
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
    int rc = 0;
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

void report_figures_free(report_figures *f)
{
    for (int i = 0; i < f->n; i++) free(f->base[i]);
    free(f->base);
    free(f->svg);
    memset(f, 0, sizeof *f);
}
