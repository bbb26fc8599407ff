/* eval/voc/attn_metrics.c — DINO's best-head Jaccard of attention masks.  See attn_metrics.h. */
#include "eval/voc/attn_metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/kc.h"

int attn_cells_init(attn_cells *c, const uint8_t *object, int h, int w, kc_policy p, int patch, int grid_h,
                    int grid_w)
{
    memset(c, 0, sizeof *c);
    KC_TRY(grid_check("attention masks", p, patch, w, h, grid_h, grid_w));
    c->grid_h = grid_h;
    c->grid_w = grid_w;
    c->h = h;
    c->w = w;
    const size_t G = (size_t)grid_h * grid_w;
    int slot[256];
    for (int v = 0; v < 256; v++) slot[v] = -1;
    for (size_t k = 0; k < (size_t)h * w; k++) slot[object[k]] = 0;
    for (int v = 1; v < 255; v++)
        if (slot[v] == 0) {
            slot[v] = c->n_obj;
            c->obj_id[c->n_obj++] = (uint8_t)v;
        } else {
            slot[v] = -1;
        }
    slot[0] = slot[255] = -1;
    c->obj = kc_calloc((size_t)(c->n_obj ? c->n_obj : 1) * G, sizeof *c->obj);
    c->obj_total = kc_calloc((size_t)(c->n_obj ? c->n_obj : 1), sizeof *c->obj_total);
    c->nonvoid = kc_calloc(G, sizeof *c->nonvoid);
    c->fg = kc_calloc(G, sizeof *c->fg);
    int32_t *cx = kc_malloc((size_t)w * sizeof *cx);
    grid_axis_cells(p, patch, w, grid_w, cx);
    for (int y = 0; y < h; y++) {
        const size_t row = (size_t)grid_pixel_cell(p, patch, y, h, grid_h) * grid_w;
        for (int x = 0; x < w; x++) {
            uint8_t v = object[(size_t)y * w + x];
            if (v == 255) continue;
            size_t k = row + (size_t)cx[x];
            c->nonvoid[k]++;
            if (v == 0) continue;
            c->obj[(size_t)slot[v] * G + k]++;
            c->obj_total[slot[v]]++;
            c->fg[k]++;
            c->fg_total++;
        }
    }
    free(cx);
    return 0;
}

void attn_cells_free(attn_cells *c)
{
    free(c->obj);
    free(c->obj_total);
    free(c->nonvoid);
    free(c->fg);
    memset(c, 0, sizeof *c);
}

void attn_score_stack(const attn_cells *c, const uint8_t *masks, int heads, attn_score *out, double *fg,
                      double *objmean)
{
    const size_t G = (size_t)c->grid_h * c->grid_w;
    double sum_best = 0;
    for (int h = 0; h < heads; h++) {
        const uint8_t *m = masks + (size_t)h * G;
        int64_t inter = 0, extra = 0;
        for (size_t k = 0; k < G; k++)
            if (m[k]) {
                inter += c->fg[k];
                extra += c->nonvoid[k] - c->fg[k];
            }
        int64_t uni = c->fg_total + extra;
        if (fg) fg[h] = uni > 0 ? (double)inter / (double)uni : 1.0;
        if (objmean) objmean[h] = 0;
    }
    for (int o = 0; o < c->n_obj; o++) {
        const int32_t *oc = c->obj + (size_t)o * G;
        double best = -1;
        for (int h = 0; h < heads; h++) {
            const uint8_t *m = masks + (size_t)h * G;
            int64_t inter = 0, extra = 0;
            for (size_t k = 0; k < G; k++)
                if (m[k]) {
                    inter += oc[k];
                    extra += c->nonvoid[k] - oc[k];
                }
            double j = (double)inter / (double)(c->obj_total[o] + extra);
            if (j > best) best = j;
            if (objmean) objmean[h] += j;
        }
        sum_best += best;
    }
    out->n_objects = c->n_obj;
    out->best = c->n_obj ? sum_best / c->n_obj : NAN;
    if (objmean)
        for (int h = 0; h < heads; h++) objmean[h] = c->n_obj ? objmean[h] / c->n_obj : NAN;
}

int attn_score_naive(const uint8_t *object, int h, int w, kc_policy p, int patch, const uint8_t *masks, int heads,
                     int grid_h, int grid_w, attn_score *out, double *fg, double *objmean)
{
    KC_TRY(grid_check("attention masks", p, patch, w, h, grid_h, grid_w));
    const size_t G = (size_t)grid_h * grid_w;
    int present[256] = {0};
    for (size_t k = 0; k < (size_t)h * w; k++) present[object[k]] = 1;
    int n_obj = 0;
    double sum_best = 0;
    for (int hd = 0; hd < heads; hd++) objmean[hd] = 0;
    for (int v = 0; v < 255; v++) { /* v = 0: the foreground of all objects */
        if (v > 0 && !present[v]) continue;
        double best = -1;
        for (int hd = 0; hd < heads; hd++) {
            int64_t inter = 0, uni = 0;
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++) {
                    uint8_t o = object[(size_t)y * w + x];
                    if (o == 255) continue;
                    int in_m = masks[hd * G + (size_t)grid_pixel_cell(p, patch, y, h, grid_h) * grid_w +
                                     (size_t)grid_pixel_cell(p, patch, x, w, grid_w)] != 0;
                    int in_o = v ? o == v : o != 0;
                    inter += in_m && in_o;
                    uni += in_m || in_o;
                }
            double j = uni > 0 ? (double)inter / (double)uni : 1.0;
            if (v == 0) {
                fg[hd] = j;
            } else {
                objmean[hd] += j;
                if (j > best) best = j;
            }
        }
        if (v > 0) {
            sum_best += best;
            n_obj++;
        }
    }
    out->n_objects = n_obj;
    out->best = n_obj ? sum_best / n_obj : NAN;
    for (int hd = 0; hd < heads; hd++) objmean[hd] = n_obj ? objmean[hd] / n_obj : NAN;
    return 0;
}
