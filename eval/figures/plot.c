/* eval/figures/plot.c — see plot.h. */
#include "eval/figures/plot.h"

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <fontconfig/fontconfig.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "pipeline/kc.h"

const char *const plot_palette_hex[PLOT_N_COLORS] = {"0072B2", "D55E00", "009E73", "CC79A7",
                                                     "E69F00", "56B4E9", "000000", "F0E442"};

void plot_palette_rgb(int i, double rgb[3])
{
    unsigned v = (unsigned)strtoul(plot_palette_hex[((i % PLOT_N_COLORS) + PLOT_N_COLORS) % PLOT_N_COLORS], NULL, 16);
    rgb[0] = ((v >> 16) & 255) / 255.0;
    rgb[1] = ((v >> 8) & 255) / 255.0;
    rgb[2] = (v & 255) / 255.0;
}

const char *plot_marker_pgf(int marker)
{
    static const char *const m[] = {"*", "square*", "triangle*", "diamond*", "triangle*, mark options={rotate=180}",
                                    "x", "+", "star", "none"};
    return m[marker < 0 || marker > PLOT_NO_MARKER ? PLOT_NO_MARKER : marker];
}

const char *plot_dash_pgf(int dash)
{
    static const char *const d[] = {"solid", "dashed", "densely dotted", "dashdotted"};
    return d[dash < 0 || dash > PLOT_DASHDOT ? 0 : dash];
}

void plot_style_of(int i, plot_style *s)
{
    s->color = i % PLOT_N_COLORS;
    plot_palette_rgb(s->color, s->rgb);
    static const int markers[] = {PLOT_CIRCLE, PLOT_SQUARE, PLOT_TRIANGLE, PLOT_DIAMOND, PLOT_DOWN, PLOT_CROSS, PLOT_PLUS};
    s->marker = markers[i % 7];
    s->dash = i % 4;
}

double plot_px(const plot_axes *ax, double x) { return ax->x + (x - ax->xmin) / (ax->xmax - ax->xmin) * ax->w; }
double plot_py(const plot_axes *ax, double y) { return ax->y + ax->h - (y - ax->ymin) / (ax->ymax - ax->ymin) * ax->h; }

void plot_nice_ticks(double lo, double hi, int want, double *start, double *step, int *n)
{
    if (!(hi > lo)) {
        lo -= 0.5;
        hi += 0.5;
    }
    if (want < 1) want = 1;
    double raw = (hi - lo) / want, p = pow(10, floor(log10(raw))), f = raw / p;
    double st = (f < 1.5 ? 1 : f < 2.25 ? 2 : f < 3.5 ? 2.5 : f < 7.5 ? 5 : 10) * p;
    double s0 = ceil(lo / st - 1e-9) * st;
    int k = (int)floor((hi - s0) / st + 1e-9) + 1;
    if (k > 32) k = 32;
    if (k < 1) k = 1;
    *start = s0;
    *step = st;
    *n = k;
}

void plot_set_dash(cairo_t *cr, int dash, double lw)
{
    double d[4];
    int n = 0;
    switch (dash) {
    case PLOT_DASHED: d[0] = 4 * lw; d[1] = 2.5 * lw; n = 2; break;
    case PLOT_DOTTED: d[0] = 1 * lw; d[1] = 1.8 * lw; n = 2; break;
    case PLOT_DASHDOT: d[0] = 4 * lw; d[1] = 1.8 * lw; d[2] = 1 * lw; d[3] = 1.8 * lw; n = 4; break;
    default: n = 0;
    }
    cairo_set_dash(cr, d, n, 0);
}

void plot_text(cairo_t *cr, double x, double y, double size, double ax, double ay, double angle, int bold,
               const char *text)
{
    cairo_save(cr);
    cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, size);
    cairo_text_extents_t te;
    cairo_text_extents(cr, text, &te);
    double cap = 0.73 * size;
    cairo_translate(cr, x, y);
    cairo_rotate(cr, angle);
    cairo_move_to(cr, -ax * te.x_advance, cap * (1 - ay));
    cairo_show_text(cr, text);
    cairo_new_path(cr);
    cairo_restore(cr);
}

void plot_frame(cairo_t *cr, const plot_axes *ax, const double *xticks, int n_xt, const char *xfmt,
                const char *yfmt, int xlabels, int ylabels)
{
    char buf[64];
    double s0, st;
    int n;
    cairo_save(cr);
    cairo_set_dash(cr, NULL, 0, 0);
    /* grid lines */
    cairo_set_line_width(cr, 0.4);
    cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
    plot_nice_ticks(ax->ymin, ax->ymax, 4, &s0, &st, &n);
    for (int i = 0; i < n; i++) {
        double py = plot_py(ax, s0 + i * st);
        cairo_move_to(cr, ax->x, py);
        cairo_line_to(cr, ax->x + ax->w, py);
    }
    cairo_stroke(cr);
    /* box */
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_set_line_width(cr, 0.6);
    cairo_rectangle(cr, ax->x, ax->y, ax->w, ax->h);
    cairo_stroke(cr);
    /* y ticks */
    for (int i = 0; i < n; i++) {
        double v = s0 + i * st, py = plot_py(ax, v);
        cairo_move_to(cr, ax->x, py);
        cairo_line_to(cr, ax->x + 2.5, py);
        cairo_stroke(cr);
        if (ylabels) {
            snprintf(buf, sizeof buf, yfmt, fabs(v) < 1e-12 * st ? 0.0 : v);
            plot_text(cr, ax->x - 2.5, py, 6.5, 1, 0.5, 0, 0, buf);
        }
    }
    /* x ticks */
    double auto_ticks[32];
    if (n_xt == 0) {
        plot_nice_ticks(ax->xmin, ax->xmax, 5, &s0, &st, &n_xt);
        for (int i = 0; i < n_xt; i++) auto_ticks[i] = s0 + i * st;
        xticks = auto_ticks;
    }
    for (int i = 0; i < n_xt; i++) {
        double px = plot_px(ax, xticks[i]);
        if (px < ax->x - 0.01 || px > ax->x + ax->w + 0.01) continue;
        cairo_move_to(cr, px, ax->y + ax->h);
        cairo_line_to(cr, px, ax->y + ax->h - 2.5);
        cairo_stroke(cr);
        if (xlabels) {
            snprintf(buf, sizeof buf, xfmt, xticks[i]);
            plot_text(cr, px, ax->y + ax->h + 3, 6.5, 0.5, 0, 0, 0, buf);
        }
    }
    cairo_restore(cr);
}

void plot_marker(cairo_t *cr, double px, double py, int marker, double r, const double rgb[3], int filled)
{
    cairo_save(cr);
    cairo_set_dash(cr, NULL, 0, 0);
    cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
    cairo_new_path(cr);
    int line_only = 0;
    switch (marker) {
    case PLOT_CIRCLE: cairo_arc(cr, px, py, r, 0, 2 * M_PI); break;
    case PLOT_SQUARE: cairo_rectangle(cr, px - 0.85 * r, py - 0.85 * r, 1.7 * r, 1.7 * r); break;
    case PLOT_TRIANGLE:
    case PLOT_DOWN: {
        double s = marker == PLOT_TRIANGLE ? 1 : -1;
        cairo_move_to(cr, px, py - s * 1.1 * r);
        cairo_line_to(cr, px + r, py + s * 0.75 * r);
        cairo_line_to(cr, px - r, py + s * 0.75 * r);
        cairo_close_path(cr);
        break;
    }
    case PLOT_DIAMOND:
        cairo_move_to(cr, px, py - 1.2 * r);
        cairo_line_to(cr, px + 0.9 * r, py);
        cairo_line_to(cr, px, py + 1.2 * r);
        cairo_line_to(cr, px - 0.9 * r, py);
        cairo_close_path(cr);
        break;
    case PLOT_STAR:
        for (int k = 0; k < 10; k++) {
            double a = -M_PI / 2 + k * M_PI / 5, rr = k % 2 ? 0.45 * r : 1.25 * r;
            if (k == 0) cairo_move_to(cr, px + rr * cos(a), py + rr * sin(a));
            else cairo_line_to(cr, px + rr * cos(a), py + rr * sin(a));
        }
        cairo_close_path(cr);
        break;
    case PLOT_CROSS:
        cairo_move_to(cr, px - r, py - r);
        cairo_line_to(cr, px + r, py + r);
        cairo_move_to(cr, px - r, py + r);
        cairo_line_to(cr, px + r, py - r);
        line_only = 1;
        break;
    case PLOT_PLUS:
        cairo_move_to(cr, px - r, py);
        cairo_line_to(cr, px + r, py);
        cairo_move_to(cr, px, py - r);
        cairo_line_to(cr, px, py + r);
        line_only = 1;
        break;
    default: cairo_restore(cr); return;
    }
    if (filled && !line_only) {
        cairo_fill_preserve(cr);
    }
    cairo_set_line_width(cr, line_only ? 1.0 : 0.8);
    cairo_stroke(cr);
    cairo_restore(cr);
}

void plot_polyline(cairo_t *cr, const plot_axes *ax, const double *x, const double *y, int n, const plot_style *s)
{
    cairo_save(cr);
    cairo_rectangle(cr, ax->x - 6, ax->y - 6, ax->w + 12, ax->h + 12);
    cairo_clip(cr);
    cairo_set_source_rgb(cr, s->rgb[0], s->rgb[1], s->rgb[2]);
    cairo_set_line_width(cr, 1.1);
    plot_set_dash(cr, s->dash, 1.1);
    cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
    int open = 0;
    for (int i = 0; i < n; i++) {
        if (isnan(y[i]) || isnan(x[i])) {
            open = 0;
            continue;
        }
        if (!open) cairo_move_to(cr, plot_px(ax, x[i]), plot_py(ax, y[i]));
        else cairo_line_to(cr, plot_px(ax, x[i]), plot_py(ax, y[i]));
        open = 1;
    }
    cairo_stroke(cr);
    for (int i = 0; i < n; i++)
        if (!isnan(y[i]) && !isnan(x[i])) plot_marker(cr, plot_px(ax, x[i]), plot_py(ax, y[i]), s->marker, 2.0, s->rgb, 1);
    cairo_restore(cr);
}

void plot_hline(cairo_t *cr, const plot_axes *ax, double y, const double rgb[3], int dash, const char *label,
                double label_py)
{
    if (y < ax->ymin || y > ax->ymax) return;
    double py = plot_py(ax, y);
    cairo_save(cr);
    cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
    cairo_set_line_width(cr, 0.9);
    plot_set_dash(cr, dash, 0.9);
    cairo_move_to(cr, ax->x, py);
    cairo_line_to(cr, ax->x + ax->w, py);
    cairo_stroke(cr);
    if (label) {
        double ly = isnan(label_py) ? py - 1.2 : label_py;
        cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
        cairo_set_font_size(cr, 5.5);
        cairo_text_extents_t te;
        cairo_text_extents(cr, label, &te);
        cairo_set_source_rgb(cr, 1, 1, 1); /* a white box keeps the text readable over the lines */
        cairo_rectangle(cr, ax->x + ax->w - 3 - te.x_advance, ly - 0.73 * 5.5 - 0.8, te.x_advance + 2, 0.73 * 5.5 + 2.2);
        cairo_fill(cr);
        cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
        plot_text(cr, ax->x + ax->w - 2, ly, 5.5, 1, 1, 0, 0, label);
    }
    cairo_restore(cr);
}

void plot_release(void)
{
    cairo_debug_reset_static_data();
    FcFini();
}

/* Paints one page on a fresh context: white background, then the drawing. */
static int paint(cairo_surface_t *s, double scale, plot_draw_fn draw, void *ctx, double w, double h)
{
    cairo_t *cr = cairo_create(s);
    cairo_scale(cr, scale, scale);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_rectangle(cr, 0, 0, w, h);
    cairo_fill(cr);
    cairo_set_source_rgb(cr, 0, 0, 0);
    draw(cr, ctx);
    cairo_status_t st = cairo_status(cr);
    cairo_destroy(cr);
    return st == CAIRO_STATUS_SUCCESS ? 0 : kc_fail("cairo: %s", cairo_status_to_string(st));
}

/* cairo numbers the SVG ids of surfaces and images with process-wide counters, so a figure's SVG
 * would depend on what else the process drew before it.  Renumbers `surface<N>` and `image<N>`
 * (after '"' or '#') 1, 2, ... in order of first appearance, per prefix. */
static void svg_renumber(kc_buf *svg)
{
    const uint8_t *d = (const uint8_t *)svg->s;
    size_t n = svg->n;
    kc_buf out = {0};
    const char *pre[2] = {"surface", "image"};
    long *seen[2] = {NULL, NULL};
    int n_seen[2] = {0, 0};
    size_t i = 0;
    while (i < n) {
        int hit = -1;
        if (i > 0 && (d[i - 1] == '"' || d[i - 1] == '#'))
            for (int k = 0; k < 2; k++) {
                size_t pl = strlen(pre[k]);
                if (i + pl < n && !memcmp(d + i, pre[k], pl) && d[i + pl] >= '0' && d[i + pl] <= '9') hit = k;
            }
        if (hit < 0) {
            size_t j = i;
            while (j < n && d[j] != '"' && d[j] != '#') j++;
            if (j < n) j++; /* copy through the next delimiter */
            kc_buf_printf(&out, "%.*s", (int)(j - i), (const char *)d + i);
            i = j;
            continue;
        }
        size_t j = i + strlen(pre[hit]);
        long v = 0;
        while (j < n && d[j] >= '0' && d[j] <= '9') v = v * 10 + (d[j++] - '0');
        int k = 0;
        while (k < n_seen[hit] && seen[hit][k] != v) k++;
        if (k == n_seen[hit]) {
            seen[hit] = kc_realloc(seen[hit], sizeof(long) * (size_t)(k + 1));
            seen[hit][n_seen[hit]++] = v;
        }
        kc_buf_printf(&out, "%s%d", pre[hit], k + 1);
        i = j;
    }
    free(seen[0]);
    free(seen[1]);
    free(svg->s);
    *svg = out;
}

/* cairo writes into memory (its stream functions); the file is then written as every output is
 * (kc_write_file_atomic: a temporary name, fsync, rename or a deferred rename), so a full disk is
 * reported with its cause and never leaves a torn figure. */
static cairo_status_t to_buf(void *closure, const unsigned char *data, unsigned int length)
{
    kc_buf *b = closure;
    if (b->n + length + 1 > b->cap) {
        b->cap = (b->n + length + 1) * 2;
        b->s = kc_realloc(b->s, b->cap);
    }
    memcpy(b->s + b->n, data, length);
    b->n += length;
    b->s[b->n] = 0;
    return CAIRO_STATUS_SUCCESS;
}

static int finish(cairo_surface_t *s, kc_buf *b, const char *path)
{
    cairo_surface_finish(s);
    cairo_status_t st = cairo_surface_status(s);
    cairo_surface_destroy(s);
    if (st != CAIRO_STATUS_SUCCESS) return kc_fail("%s: cairo could not draw it: %s", path, cairo_status_to_string(st));
    size_t k = strlen(path);
    if (k > 4 && !strcmp(path + k - 4, ".svg")) svg_renumber(b);
    return kc_write_file_atomic(path, b->s ? b->s : "", b->n);
}

int plot_write(const char *base, double w, double h, double png_dpi, plot_draw_fn draw, void *ctx)
{
    int rc = 0;
    kc_buf b = {0};
    char *path = kc_strfmt("%s.pdf", base);
    cairo_surface_t *s = cairo_pdf_surface_create_for_stream(to_buf, &b, w, h);
    cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_CREATOR, "keycut kc-plot");
    cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_CREATE_DATE, ""); /* no timestamp */
    if (paint(s, 1, draw, ctx, w, h) < 0) rc = kc_fail_prefix("%s", path);
    if (finish(s, &b, path) < 0) rc = -1;
    free(path);
    free(b.s);
    b = (kc_buf){0};
    if (rc < 0) return rc;

    path = kc_strfmt("%s.svg", base);
    s = cairo_svg_surface_create_for_stream(to_buf, &b, w, h);
    cairo_svg_surface_set_document_unit(s, CAIRO_SVG_UNIT_PT);
    if (paint(s, 1, draw, ctx, w, h) < 0) rc = kc_fail_prefix("%s", path);
    if (finish(s, &b, path) < 0) rc = -1;
    free(path);
    free(b.s);
    b = (kc_buf){0};
    if (rc < 0) return rc;

    double sc = png_dpi / 72.0;
    int pw = (int)ceil(w * sc), ph = (int)ceil(h * sc);
    path = kc_strfmt("%s.png", base);
    s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, pw, ph);
    if (paint(s, sc, draw, ctx, w, h) < 0) rc = kc_fail_prefix("%s", path);
    else if (cairo_surface_write_to_png_stream(s, to_buf, &b) != CAIRO_STATUS_SUCCESS) rc = kc_fail("%s: cairo could not encode it", path);
    cairo_surface_destroy(s);
    if (rc == 0) rc = kc_write_file_atomic(path, b.s ? b.s : "", b.n);
    free(path);
    free(b.s);
    return rc;
}
