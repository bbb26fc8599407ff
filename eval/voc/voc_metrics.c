/* eval/voc/voc_metrics.c — VOC Jaccard and CorLoc from patch-grid label maps.  See voc_metrics.h. */
#include "eval/voc/voc_metrics.h"

#include <stdlib.h>
#include <string.h>

#include "pipeline/kc.h"

static const char *const policy_names[] = {"square480", "short480", "native16"};

int voc_policy_parse(const char *name, kc_policy *p)
{
    for (int i = 0; i < 3; i++)
        if (name && !strcmp(name, policy_names[i])) {
            *p = (kc_policy)i;
            return 0;
        }
    return kc_fail("unknown policy '%s' (expected square480, short480 or native16)", name ? name : "(none)");
}

const char *voc_policy_name(kc_policy p)
{
    return (unsigned)p < 3 ? policy_names[p] : "?";
}

/* A copy of the ground-truth boxes with xmin and ymin shifted by -1 (the CorLoc rule). */
static voc_box *shifted_boxes(const voc_box *boxes, int n_boxes)
{
    voc_box *shifted = kc_malloc((size_t)(n_boxes > 0 ? n_boxes : 1) * sizeof *shifted);
    for (int i = 0; i < n_boxes; i++) {
        shifted[i] = boxes[i];
        shifted[i].xmin -= 1;
        shifted[i].ymin -= 1;
    }
    return shifted;
}

int voc_cells_init(voc_cells *c, const uint8_t *object, int h, int w, const voc_box *boxes, int n_boxes,
                   kc_policy p, int patch, int grid_h, int grid_w)
{
    memset(c, 0, sizeof *c);
    KC_TRY(grid_check("label map", p, patch, w, h, grid_h, grid_w));
    c->policy = p;
    c->patch = patch;
    c->grid_h = grid_h;
    c->grid_w = grid_w;
    c->h = h;
    c->w = w;
    size_t nc = (size_t)grid_h * grid_w;
    c->fg = kc_calloc(nc, sizeof *c->fg);
    c->bg = kc_calloc(nc, sizeof *c->bg);
    c->all = kc_calloc(nc, sizeof *c->all);
    int32_t *cx = kc_malloc((size_t)w * sizeof *cx), *cy = kc_malloc((size_t)h * sizeof *cy);
    grid_axis_cells(p, patch, w, grid_w, cx);
    grid_axis_cells(p, patch, h, grid_h, cy);
    int64_t total_fg = 0;
    for (int y = 0; y < h; y++) {
        const uint8_t *row = object + (size_t)y * w;
        int32_t *fg = c->fg + (size_t)cy[y] * grid_w, *bg = c->bg + (size_t)cy[y] * grid_w;
        int32_t *all = c->all + (size_t)cy[y] * grid_w;
        for (int x = 0; x < w; x++) {
            uint8_t v = row[x];
            int k = cx[x];
            all[k]++;
            if (v == 255) continue;
            if (v) {
                fg[k]++;
                total_fg++;
            } else {
                bg[k]++;
            }
        }
    }
    free(cx);
    free(cy);
    c->total_fg = total_fg;
    c->n_boxes = n_boxes;
    c->boxes = shifted_boxes(boxes, n_boxes);
    return 0;
}

void voc_cells_free(voc_cells *c)
{
    free(c->fg);
    free(c->bg);
    free(c->all);
    free(c->boxes);
    memset(c, 0, sizeof *c);
}

int voc_mask_box(kc_policy p, int patch, int w, int h, const uint8_t *labels, int grid_h, int grid_w,
                 double box[4])
{
    int x0 = grid_w, x1 = -1, y0 = grid_h, y1 = -1;
    for (int y = 0; y < grid_h; y++)
        for (int x = 0; x < grid_w; x++)
            if (labels[(size_t)y * grid_w + x] == 1) {
                if (x < x0) x0 = x;
                if (x > x1) x1 = x;
                if (y < y0) y0 = y;
                if (y > y1) y1 = y;
            }
    if (x1 < 0) return 0;
    if (p == POLICY_NATIVE16) {
        box[0] = (double)x0 * patch;
        box[1] = (double)y0 * patch;
        box[2] = (double)(x1 + 1) * patch;
        box[3] = (double)(y1 + 1) * patch;
        if (box[2] > w) box[2] = w;
        if (box[3] > h) box[3] = h;
    } else {
        box[0] = (double)x0 * w / grid_w;
        box[1] = (double)y0 * h / grid_h;
        box[2] = (double)(x1 + 1) * w / grid_w;
        box[3] = (double)(y1 + 1) * h / grid_h;
    }
    return 1;
}

double voc_mask_area(kc_policy p, int patch, int w, int h, const uint8_t *labels, int grid_h, int grid_w)
{
    int64_t px = 0;
    if (p == POLICY_NATIVE16) {
        for (int y = 0; y < grid_h; y++)
            for (int x = 0; x < grid_w; x++)
                if (labels[(size_t)y * grid_w + x]) {
                    int64_t cw = (int64_t)((x + 1) * patch < w ? (x + 1) * patch : w) - (int64_t)x * patch;
                    int64_t ch = (int64_t)((y + 1) * patch < h ? (y + 1) * patch : h) - (int64_t)y * patch;
                    if (cw > 0 && ch > 0) px += cw * ch;
                }
    } else {
        for (int y = 0; y < h; y++) {
            int cy = grid_pixel_cell(p, patch, y, h, grid_h);
            for (int x = 0; x < w; x++)
                if (labels[(size_t)cy * grid_w + (size_t)grid_pixel_cell(p, patch, x, w, grid_w)]) px++;
        }
    }
    return (double)px / ((double)w * h);
}

double voc_box_iou(const double a[4], const double b[4])
{
    double iw = (a[2] < b[2] ? a[2] : b[2]) - (a[0] > b[0] ? a[0] : b[0]);
    double ih = (a[3] < b[3] ? a[3] : b[3]) - (a[1] > b[1] ? a[1] : b[1]);
    if (iw < 0) iw = 0;
    if (ih < 0) ih = 0;
    double inter = iw * ih;
    double uni = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
    return uni > 0 ? inter / uni : 0.0;
}

static int corloc_hit(kc_policy p, int patch, int w, int h, const uint8_t *labels, int grid_h, int grid_w,
                      const voc_box *shifted, int n_boxes)
{
    double box[4];
    if (!voc_mask_box(p, patch, w, h, labels, grid_h, grid_w, box)) return 0;
    for (int i = 0; i < n_boxes; i++) {
        double g[4] = {shifted[i].xmin, shifted[i].ymin, shifted[i].xmax, shifted[i].ymax};
        if (voc_box_iou(box, g) >= 0.5) return 1;
    }
    return 0;
}

void voc_score_mask(const voc_cells *c, const uint8_t *labels, voc_score *out)
{
    size_t nc = (size_t)c->grid_h * c->grid_w;
    int64_t inter = 0, extra = 0, area = 0;
    for (size_t k = 0; k < nc; k++) {
        if (!labels[k]) continue;
        inter += c->fg[k];
        extra += c->bg[k];
        area += c->all[k];
    }
    int64_t uni = c->total_fg + extra;
    out->jaccard = uni > 0 ? (double)inter / (double)uni : 1.0;
    out->area = (double)area / ((double)c->w * (double)c->h);
    out->corloc = corloc_hit(c->policy, c->patch, c->w, c->h, labels, c->grid_h, c->grid_w, c->boxes, c->n_boxes);
}

int voc_score_naive(const uint8_t *object, int h, int w, const voc_box *boxes, int n_boxes, kc_policy p,
                    int patch, const uint8_t *labels, int grid_h, int grid_w, voc_score *out)
{
    KC_TRY(grid_check("label map", p, patch, w, h, grid_h, grid_w));
    int64_t inter = 0, uni = 0, area = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int gx = grid_pixel_cell(p, patch, x, w, grid_w), gy = grid_pixel_cell(p, patch, y, h, grid_h);
            int pred = labels[(size_t)gy * grid_w + gx] > 0;
            uint8_t v = object[(size_t)y * w + x];
            area += pred;
            if (v == 255) continue;
            int gt = v > 0;
            inter += pred && gt;
            uni += pred || gt;
        }
    out->jaccard = uni > 0 ? (double)inter / (double)uni : 1.0;
    out->area = (double)area / ((double)w * (double)h);
    voc_box *shifted = shifted_boxes(boxes, n_boxes);
    out->corloc = corloc_hit(p, patch, w, h, labels, grid_h, grid_w, shifted, n_boxes);
    free(shifted);
    return 0;
}
