/* eval/figures/plot.h — drawing primitives for the thesis figures, on cairo (PDF, SVG and PNG).
 *
 * One drawing function paints a page of w x h points (1/72 inch); plot_write runs it three
 * times, onto a PDF, an SVG and a PNG surface (the PNG at png_dpi, white background), and writes
 * BASE.pdf, BASE.svg and BASE.png atomically (BASE.x.tmp, then rename).  Text is real text in
 * DejaVu Sans (cairo's toy font API through fontconfig): selectable in the PDF, glyph outlines in
 * the SVG.  The output is deterministic: cairo 1.16 stamps a /CreationDate into every PDF, so
 * plot_write sets CAIRO_PDF_METADATA_CREATE_DATE to "" (cairo then writes no date at all); SVG
 * and PNG carry no time; the same inputs give the same bytes (tests/test_plot.sh checks it).
 *
 * Colours: the Okabe-Ito palette (Okabe & Ito 2008, "Color Universal Design"), eight colours
 * that stay distinct for deuteranopes, protanopes and tritanopes.  Because hues alone do not
 * survive grey-scale printing, series i also gets its own marker shape and dash pattern
 * (plot_style_of), so every line can be told apart in black and white.  The order puts the most
 * separable colours first and yellow (weak on white paper) last:
 *     0 blue #0072B2, 1 vermillion #D55E00, 2 bluish green #009E73, 3 reddish purple #CC79A7,
 *     4 orange #E69F00, 5 sky blue #56B4E9, 6 black #000000, 7 yellow #F0E442
 *
 * Axes map data to the page: px = ax.x + (x - xmin) / (xmax - xmin) * ax.w, py likewise with the
 * y axis pointing up.  Ticks come from plot_nice_ticks (steps 1, 2, 2.5 or 5 times a power of 10).
 *
 *     static void draw(cairo_t *cr, void *ctx) {
 *         plot_axes ax = {60, 20, 300, 200, 0, 1, 0, 100};
 *         plot_frame(cr, &ax, "title", "tau", "Jaccard (%)", NULL, 0, 0);
 *         plot_style s; plot_style_of(0, &s);
 *         plot_polyline(cr, &ax, x, y, n, &s);
 *     }
 *     plot_write("figures/sweep", 460, 380, 150, draw, NULL);
 */
#ifndef KC_PLOT_H
#define KC_PLOT_H
#include <cairo.h>

enum { PLOT_CIRCLE, PLOT_SQUARE, PLOT_TRIANGLE, PLOT_DIAMOND, PLOT_DOWN, PLOT_CROSS, PLOT_PLUS, PLOT_STAR,
       PLOT_NO_MARKER };
enum { PLOT_SOLID, PLOT_DASHED, PLOT_DOTTED, PLOT_DASHDOT };

#define PLOT_N_COLORS 8
/* The palette as hex (for pgfplots \definecolor) and the pgfplots names of markers and dashes. */
extern const char *const plot_palette_hex[PLOT_N_COLORS];
const char *plot_marker_pgf(int marker);
const char *plot_dash_pgf(int dash);

typedef struct plot_style {
    double rgb[3];
    int color; /* index into the palette */
    int marker, dash;
} plot_style;
/* Style of series i: colour i, marker i, dash i (each cycling). */
void plot_style_of(int i, plot_style *s);
void plot_palette_rgb(int i, double rgb[3]);

typedef struct plot_axes {
    double x, y, w, h;             /* the plotting area on the page (points, y down) */
    double xmin, xmax, ymin, ymax; /* data range */
} plot_axes;
double plot_px(const plot_axes *ax, double x);
double plot_py(const plot_axes *ax, double y);

/* Ticks covering [lo, hi] with about `want` steps: first tick *start, step *step, count *n
 * (at most 32).  lo == hi is widened. */
void plot_nice_ticks(double lo, double hi, int want, double *start, double *step, int *n);

/* The frame of one panel: box, ticks and tick labels on the left (when ylabels) and bottom
 * (when xlabels), light grid lines, an optional title above and axis labels.  xticks: explicit
 * positions (n_xt > 0) or automatic (n_xt == 0); xfmt / yfmt printf formats of tick labels. */
void plot_frame(cairo_t *cr, const plot_axes *ax, const double *xticks, int n_xt, const char *xfmt,
                const char *yfmt, int xlabels, int ylabels);

/* A line through (x[i], y[i]) with markers; NaN points break the line and get no marker. */
void plot_polyline(cairo_t *cr, const plot_axes *ax, const double *x, const double *y, int n, const plot_style *s);
/* One marker centred on page point (px, py); size = half-width in points. */
void plot_marker(cairo_t *cr, double px, double py, int marker, double size, const double rgb[3], int filled);
/* A horizontal reference line across the panel at data y, and its label at the right end with its
 * baseline at page height label_py (NaN: just above the line). */
void plot_hline(cairo_t *cr, const plot_axes *ax, double y, const double rgb[3], int dash, const char *label,
                double label_py);
/* Text anchored at (x, y): ax = 0 / 0.5 / 1 puts the left end / middle / right end of the text
 * there; ay = 0 / 0.5 / 1 its capital-letter top / middle / baseline.  angle in radians, applied
 * around the anchor (-pi/2 for a label read bottom to top). */
void plot_text(cairo_t *cr, double x, double y, double size, double ax, double ay, double angle, int bold,
               const char *text);
void plot_set_dash(cairo_t *cr, int dash, double lw);

/* Frees cairo's and fontconfig's process-wide caches (call once at the end of main, so leak
 * checkers see only real leaks). */
void plot_release(void);

typedef void (*plot_draw_fn)(cairo_t *cr, void *ctx);
/* Draws onto BASE.pdf, BASE.svg and BASE.png (w_pt x h_pt points; the PNG at png_dpi). */
int plot_write(const char *base, double w_pt, double h_pt, double png_dpi, plot_draw_fn draw, void *ctx);
#endif
