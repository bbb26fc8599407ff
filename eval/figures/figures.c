/* eval/figures/figures.c — see figures.h. */
#include "eval/figures/figures.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/figures/plot.h"
#include "pipeline/kc.h"

const char *const fig_edges_id[FIG_EDGES] = {"bin", "wtd"};
const char *const fig_splits_id[FIG_SPLITS] = {"mean", "zero"};
const char *const fig_rules_id[FIG_RULES] = {"seed", "corners", "minority"};
static const char *const edges_name[FIG_EDGES] = {"binary", "weighted"};
static const char *const rules_name[FIG_RULES] = {"seed (TokenCut)", "corners (MaskCut)", "minority"};
const char *const fig_metric_key[FIG_N_METRICS] = {"voc_jaccard", "voc_corloc", "davis_jf", "probe_miou"};
const char *const fig_metric_label[FIG_N_METRICS] = {"VOC Jaccard (%)", "VOC CorLoc (%)", "DAVIS J&F (%)",
                                                     "Probe mIoU (%)"};

#define TOKENCUT_SETTING "t0.20-bin-mean-seed-n1"
#define MASKCUT_SETTING "t0.15-bin-mean-corners-n3"

static int find_word(const char *s, size_t len, const char *const *words, int n)
{
    for (int i = 0; i < n; i++)
        if (strlen(words[i]) == len && !strncmp(s, words[i], len)) return i;
    return -1;
}

int fig_parse_setting(const char *id, char tau_text[16], int *edges, int *split, int *rule, int *n)
{
    if (id[0] != 't') return -1;
    const char *p = id + 1, *d = strchr(p, '-');
    if (!d || d == p || d - p >= 16) return -1;
    char *end;
    double t = strtod(p, &end);
    if (end != d || !isfinite(t)) return -1;
    memcpy(tau_text, p, (size_t)(d - p));
    tau_text[d - p] = 0;
    const char *parts[3];
    size_t lens[3];
    p = d + 1;
    for (int k = 0; k < 3; k++) {
        d = strchr(p, '-');
        if (!d) return -1;
        parts[k] = p;
        lens[k] = (size_t)(d - p);
        p = d + 1;
    }
    *edges = find_word(parts[0], lens[0], fig_edges_id, FIG_EDGES);
    *split = find_word(parts[1], lens[1], fig_splits_id, FIG_SPLITS);
    *rule = find_word(parts[2], lens[2], fig_rules_id, FIG_RULES);
    if (*edges < 0 || *split < 0 || *rule < 0) return -1;
    if (p[0] != 'n' || p[1] < '1' || p[1] > '0' + FIG_NS || p[2]) return -1;
    *n = p[1] - '1';
    return 0;
}

int fig_sweep_at(int tau, int edges, int split, int rule, int n)
{
    return (((tau * FIG_EDGES + edges) * FIG_SPLITS + split) * FIG_RULES + rule) * FIG_NS + n;
}

/* ---- shared helpers ---------------------------------------------------------------------- */

static int write_text(const char *dir, const char *base, const char *ext, const kc_buf *b)
{
    char *p = kc_strfmt("%s/%s.%s", dir, base, ext);
    int rc = kc_write_file_atomic(p, b->s ? b->s : "", b->n);
    free(p);
    return rc;
}

/* Range of finite values (already in percent), padded and rounded outward to a multiple of 5. */
static void value_range(const double *v, int n, double *lo, double *hi)
{
    double a = INFINITY, b = -INFINITY;
    for (int i = 0; i < n; i++)
        if (isfinite(v[i])) {
            if (v[i] < a) a = v[i];
            if (v[i] > b) b = v[i];
        }
    if (!isfinite(a)) {
        a = 0;
        b = 100;
    }
    a = floor((a - 1) / 5) * 5;
    b = ceil((b + 1) / 5) * 5;
    if (a < 0) a = 0;
    if (b > 100) b = 100;
    if (b <= a) b = a + 5;
    *lo = a;
    *hi = b;
}

static void pgf_colors(kc_buf *t)
{
    for (int i = 0; i < PLOT_N_COLORS; i++)
        kc_buf_printf(t, "\\providecolor{kcOI%c}{HTML}{%s}\n", 'A' + i, plot_palette_hex[i]);
}

/* A value of a data CSV: %.9g, or nan when missing (pgfplots reads nan as a gap). */
static void csv_num(kc_buf *b, double v)
{
    if (isfinite(v)) kc_buf_printf(b, "%.9g", v);
    else kc_buf_printf(b, "nan");
}

/* LaTeX-safe copy of a label: escapes & % $ # _ { } ~ ^ \ . */
static void tex_escape(kc_buf *b, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': case '%': case '$': case '#': case '_': case '{': case '}': kc_buf_printf(b, "\\%c", *s); break;
        case '~': kc_buf_printf(b, "\\textasciitilde{}"); break;
        case '^': kc_buf_printf(b, "\\textasciicircum{}"); break;
        case '\\': kc_buf_printf(b, "\\textbackslash{}"); break;
        default: kc_buf_printf(b, "%c", *s);
        }
    }
}

/* The head every pgfplots file shares after its comments: the figure folder macro, the palette and
 * the data table DIR/base.csv as \kcdata. */
static void pgf_preamble(kc_buf *t, const char *base)
{
    kc_buf_printf(t, "\\providecommand{\\kcfigdir}{figures}\n");
    pgf_colors(t);
    kc_buf_printf(t, "\\pgfplotstableread[col sep=comma]{\\kcfigdir/%s.csv}\\kcdata\n", base);
}

/* A legend sample at (lx, ly): an 18 pt line in the style's colour and dash, its marker in the middle. */
static void legend_sample(cairo_t *cr, double lx, double ly, const plot_style *s)
{
    cairo_save(cr);
    cairo_set_source_rgb(cr, s->rgb[0], s->rgb[1], s->rgb[2]);
    cairo_set_line_width(cr, 1.1);
    plot_set_dash(cr, s->dash, 1.1);
    cairo_move_to(cr, lx, ly);
    cairo_line_to(cr, lx + 18, ly);
    cairo_stroke(cr);
    cairo_restore(cr);
    plot_marker(cr, lx + 9, ly, s->marker, 2.0, s->rgb, 1);
}

/* Writes a figure's three products: DIR/base.csv, DIR/base.tex, then the pictures (plot_write:
 * PDF, SVG, PNG of w x h points drawn by draw(ctx)); frees both buffers. */
static int write_figure(const char *dir, const char *base, kc_buf *csv, kc_buf *tex, double w, double h,
                        plot_draw_fn draw, void *ctx)
{
    int rc = 0;
    if (write_text(dir, base, "csv", csv) < 0 || write_text(dir, base, "tex", tex) < 0) rc = -1;
    char *pbase = kc_strfmt("%s/%s", dir, base);
    if (rc == 0) rc = plot_write(pbase, w, h, 150, draw, ctx);
    free(pbase);
    free(csv->s);
    free(tex->s);
    return rc;
}

/* ---- the sweep ------------------------------------------------------------------------------ */

typedef struct sweep_ctx {
    const fig_sweep *f;
    double ylo, yhi;
    int mark_tau[3], mark_e[3], mark_s[3], mark_r[3], mark_n[3]; /* chosen, TokenCut, MaskCut; tau -1 = none */
} sweep_ctx;

enum { SW_W = 460, SW_H = 390 };
static const double SW_LEFT = 40, SW_TOP = 58, SW_RIGHT = 16, SW_BOTTOM = 30, SW_GAP = 8;

static void sweep_panel_axes(const sweep_ctx *c, int row, int col, plot_axes *ax)
{
    double pw = (SW_W - SW_LEFT - SW_RIGHT - 3 * SW_GAP) / 4, ph = (SW_H - SW_TOP - SW_BOTTOM - 2 * SW_GAP) / 3;
    double t0 = atof(c->f->tau[0]), t1 = atof(c->f->tau[c->f->n_tau - 1]);
    double pad = c->f->n_tau > 1 ? 0.08 * (t1 - t0) : 0.05;
    ax->x = SW_LEFT + col * (pw + SW_GAP);
    ax->y = SW_TOP + row * (ph + SW_GAP);
    ax->w = pw;
    ax->h = ph;
    ax->xmin = t0 - pad;
    ax->xmax = t1 + pad;
    ax->ymin = c->ylo;
    ax->ymax = c->yhi;
}

static const int MARK_SHAPE[3] = {PLOT_STAR, PLOT_CIRCLE, PLOT_SQUARE};
static const char *const MARK_LABEL[3] = {"chosen", "TokenCut", "MaskCut"};

/* "chosen: ID, the best mean Jaccard of dino, selfpatch (the report's setting)" (malloc'd). */
static char *sweep_chosen_text(const fig_sweep *f)
{
    if (!f->chosen_by) return kc_strfmt("chosen: %s (given)", f->chosen);
    return kc_strfmt("chosen: %s, the best mean Jaccard of %s (the report's setting)", f->chosen, f->chosen_by);
}

static void draw_sweep(cairo_t *cr, void *vctx)
{
    const sweep_ctx *c = vctx;
    const fig_sweep *f = c->f;
    char title[256];
    snprintf(title, sizeof title, "%s: %s of every decoder setting on the selection split", f->title, f->metric);
    plot_text(cr, SW_LEFT, 8, 9, 0, 0, 0, 1, title);
    /* legend: N lines, then the marks */
    double lx = SW_LEFT, ly = 26;
    for (int n = 0; n < FIG_NS; n++) {
        plot_style s;
        plot_style_of(n, &s);
        legend_sample(cr, lx, ly, &s);
        char lab[32];
        snprintf(lab, sizeof lab, "N = %d mask%s", n + 1, n ? "s" : "");
        plot_text(cr, lx + 22, ly, 7, 0, 0.5, 0, 0, lab);
        lx += 74;
    }
    static const double black[3] = {0, 0, 0};
    for (int m = 0; m < 3; m++) {
        plot_marker(cr, lx + 4, ly, MARK_SHAPE[m], m ? 4.2 : 4.5, black, 0);
        plot_text(cr, lx + 11, ly, 7, 0, 0.5, 0, 0, MARK_LABEL[m]);
        lx += 46;
    }
    if (f->chosen) { /* which setting the star is, and who chose it */
        char *said = sweep_chosen_text(f);
        plot_marker(cr, SW_LEFT + 4, 40, PLOT_STAR, 4.5, black, 0);
        plot_text(cr, SW_LEFT + 11, 40, 7, 0, 0.5, 0, 0, said);
        free(said);
    }
    /* panels */
    double xt[FIG_MAX_TAU];
    for (int t = 0; t < f->n_tau; t++) xt[t] = atof(f->tau[t]);
    for (int r = 0; r < FIG_RULES; r++)
        for (int col = 0; col < 4; col++) {
            int e = col / 2, sp = col % 2;
            plot_axes ax;
            sweep_panel_axes(c, r, col, &ax);
            plot_frame(cr, &ax, xt, f->n_tau, "%.2f", "%g", r == FIG_RULES - 1, col == 0);
            if (r == 0) {
                char h[64];
                snprintf(h, sizeof h, "%s, %s", edges_name[e], fig_splits_id[sp]);
                plot_text(cr, ax.x + ax.w / 2, ax.y - 3, 7, 0.5, 1, 0, 1, h);
            }
            if (col == 3) plot_text(cr, ax.x + ax.w + 3, ax.y + ax.h / 2, 6.5, 0.5, 1, M_PI / 2, 1, rules_name[r]);
            for (int n = 0; n < FIG_NS; n++) {
                double y[FIG_MAX_TAU];
                for (int t = 0; t < f->n_tau; t++) y[t] = 100 * f->v[fig_sweep_at(t, e, sp, r, n)];
                plot_style s;
                plot_style_of(n, &s);
                plot_polyline(cr, &ax, xt, y, f->n_tau, &s);
            }
            for (int m = 0; m < 3; m++)
                if (c->mark_tau[m] >= 0 && c->mark_e[m] == e && c->mark_s[m] == sp && c->mark_r[m] == r) {
                    double v = 100 * f->v[fig_sweep_at(c->mark_tau[m], e, sp, r, c->mark_n[m])];
                    if (isfinite(v))
                        plot_marker(cr, plot_px(&ax, xt[c->mark_tau[m]]), plot_py(&ax, v), MARK_SHAPE[m],
                                    m ? 4.2 : 4.5, black, 0);
                }
        }
    plot_text(cr, SW_LEFT + (SW_W - SW_LEFT - SW_RIGHT) / 2, SW_H - 9, 8, 0.5, 1, 0, 0,
              "tau (edge threshold on the cosine similarity)");
    char yl[64];
    snprintf(yl, sizeof yl, "%s (%%)", f->metric);
    plot_text(cr, 10, SW_TOP + (SW_H - SW_TOP - SW_BOTTOM) / 2, 8, 0.5, 0.5, -M_PI / 2, 0, yl);
}

static void locate_mark(const fig_sweep *f, const char *id, int m, sweep_ctx *c)
{
    c->mark_tau[m] = -1;
    char tt[16];
    if (!id || fig_parse_setting(id, tt, &c->mark_e[m], &c->mark_s[m], &c->mark_r[m], &c->mark_n[m]) < 0) return;
    for (int t = 0; t < f->n_tau; t++)
        if (atof(f->tau[t]) == atof(tt)) c->mark_tau[m] = t;
}

int fig_sweep_write(const char *dir, const char *base, const fig_sweep *f)
{
    if (f->n_tau < 1) return kc_fail("%s/%s: no grid settings to draw", dir, base);
    sweep_ctx c = {.f = f};
    int nv = f->n_tau * FIG_EDGES * FIG_SPLITS * FIG_RULES * FIG_NS;
    double *pct = kc_malloc(sizeof(double) * (size_t)nv);
    for (int i = 0; i < nv; i++) pct[i] = 100 * f->v[i];
    value_range(pct, nv, &c.ylo, &c.yhi);
    free(pct);
    locate_mark(f, f->chosen, 0, &c);
    locate_mark(f, TOKENCUT_SETTING, 1, &c);
    locate_mark(f, MASKCUT_SETTING, 2, &c);

    /* CSV */
    kc_buf csv = {0};
    kc_buf_printf(&csv, "tau");
    for (int e = 0; e < FIG_EDGES; e++)
        for (int s = 0; s < FIG_SPLITS; s++)
            for (int r = 0; r < FIG_RULES; r++)
                for (int n = 0; n < FIG_NS; n++)
                    kc_buf_printf(&csv, ",%s_%s_%s_n%d", fig_edges_id[e], fig_splits_id[s], fig_rules_id[r], n + 1);
    kc_buf_printf(&csv, "\n");
    for (int t = 0; t < f->n_tau; t++) {
        kc_buf_printf(&csv, "%s", f->tau[t]);
        for (int e = 0; e < FIG_EDGES; e++)
            for (int s = 0; s < FIG_SPLITS; s++)
                for (int r = 0; r < FIG_RULES; r++)
                    for (int n = 0; n < FIG_NS; n++) {
                        kc_buf_printf(&csv, ",");
                        csv_num(&csv, f->v[fig_sweep_at(t, e, s, r, n)]);
                    }
        kc_buf_printf(&csv, "\n");
    }

    /* pgfplots */
    kc_buf t = {0};
    kc_buf_printf(&t, "%% generated by keycut kc-plot: ");
    kc_buf_printf(&t, "%s of the decoder settings on the selection split (%s)\n", f->metric, f->title);
    kc_buf_printf(&t, "%% data: %s.csv; needs \\usepackage{pgfplots}, \\usepgfplotslibrary{groupplots}\n", base);
    kc_buf_printf(&t, "%% rows: foreground rule; columns: edges, split; x: tau; one line per N; y in %%\n");
    pgf_preamble(&t, base);
    kc_buf_printf(&t, "\\begin{tikzpicture}\n\\begin{groupplot}[group style={group size=4 by 3, horizontal sep=4pt,\n"
                      "  vertical sep=4pt, xticklabels at=edge bottom, yticklabels at=edge left},\n"
                      "  scale only axis, width=0.19\\linewidth, height=0.13\\linewidth, ymin=%g, ymax=%g,\n"
                      "  xmin=%g, xmax=%g, xtick={",
                   c.ylo, c.yhi, atof(f->tau[0]) - 0.04, atof(f->tau[f->n_tau - 1]) + 0.04);
    for (int i = 0; i < f->n_tau; i++) kc_buf_printf(&t, "%s%s", i ? "," : "", f->tau[i]);
    kc_buf_printf(&t, "}, xticklabel style={/pgf/number format/fixed, /pgf/number format/precision=2,\n"
                      "  /pgf/number format/fixed zerofill}, tick label style={font=\\tiny}, title style={font=\\scriptsize},\n"
                      "  label style={font=\\scriptsize}, legend style={font=\\tiny}, every axis plot/.append style={mark size=1.2pt},\n"
                      "  unbounded coords=jump]\n");
    for (int r = 0; r < FIG_RULES; r++)
        for (int col = 0; col < 4; col++) {
            int e = col / 2, sp = col % 2;
            kc_buf_printf(&t, "\\nextgroupplot[");
            if (r == 0) kc_buf_printf(&t, "title={%s, %s}, ", edges_name[e], fig_splits_id[sp]);
            if (col == 0) {
                kc_buf_printf(&t, "ylabel={%s}, ", fig_rules_id[r]);
            }
            if (r == FIG_RULES - 1 && col == 0) kc_buf_printf(&t, "xlabel={$\\tau$}, ");
            if (r == 0 && col == 0)
                kc_buf_printf(&t, "legend to name=kclegend%s, legend columns=-1, ", "");
            kc_buf_printf(&t, "]\n");
            for (int n = 0; n < FIG_NS; n++) {
                plot_style s;
                plot_style_of(n, &s);
                kc_buf_printf(&t, "\\addplot[color=kcOI%c, mark=%s, %s, y filter/.expression={100*y}] "
                                  "table[x=tau, y=%s_%s_%s_n%d] {\\kcdata};\n",
                              'A' + s.color, plot_marker_pgf(s.marker), plot_dash_pgf(s.dash), fig_edges_id[e],
                              fig_splits_id[sp], fig_rules_id[r], n + 1);
                if (r == 0 && col == 0) kc_buf_printf(&t, "\\addlegendentry{$N=%d$}\n", n + 1);
            }
            static const char *const pgf_mark[3] = {"star, mark size=3pt", "o, mark size=3pt", "square, mark size=2.6pt"};
            for (int m = 0; m < 3; m++) {
                int show = c.mark_tau[m] >= 0 && c.mark_e[m] == e && c.mark_s[m] == sp && c.mark_r[m] == r;
                double v = show ? 100 * f->v[fig_sweep_at(c.mark_tau[m], e, sp, r, c.mark_n[m])] : NAN;
                if (isfinite(v)) {
                    kc_buf_printf(&t, "\\addplot[only marks, black, mark=%s, forget plot] coordinates {(%s, %.4f)};\n",
                                  pgf_mark[m], f->tau[c.mark_tau[m]], v);
                }
            }
        }
    kc_buf_printf(&t, "\\end{groupplot}\n");
    kc_buf_printf(&t, "\\node[anchor=south west, yshift=14pt] at (group c1r1.north west) {\\pgfplotslegendfromname{kclegend}\n"
                      "  \\tiny\\quad\\tikz\\pgfuseplotmark{star}; chosen\\quad\\tikz\\pgfuseplotmark{o}; TokenCut"
                      "\\quad\\tikz\\pgfuseplotmark{square}; MaskCut};\n");
    if (f->chosen) {
        char *said = sweep_chosen_text(f);
        kc_buf_printf(&t, "\\node[anchor=south west, yshift=27pt, font=\\tiny] at (group c1r1.north west) "
                          "{\\tikz\\pgfuseplotmark{star}; ");
        tex_escape(&t, said);
        kc_buf_printf(&t, "};\n");
        free(said);
    }
    kc_buf_printf(&t, "\\end{tikzpicture}\n");

    return write_figure(dir, base, &csv, &t, SW_W, SW_H, draw_sweep, &c);
}

/* ---- the checkpoint curves ------------------------------------------------------------------ */

typedef struct curves_ctx {
    const fig_curves *f;
    int *order; /* (n) indices into f->points: runs (grouped, by epoch), then baselines */
    int n_runs;
    const char **runs;
    int *run_start, *run_len;
    int n_metrics;              /* panels */
    int metric[FIG_N_METRICS];  /* the metric of each panel */
    double xlo, xhi, ylo[FIG_N_METRICS], yhi[FIG_N_METRICS];
} curves_ctx;

enum { CV_W = 460, CV_H = 200 };
static const double CV_LEFT = 30, CV_TOP = 44, CV_RIGHT = 8, CV_BOTTOM = 28, CV_GAP = 26;

static void curves_axes(const curves_ctx *c, int panel, plot_axes *ax)
{
    const int m = c->metric[panel];
    double pw = (CV_W - CV_LEFT - CV_RIGHT - (c->n_metrics - 1) * CV_GAP) / c->n_metrics;
    ax->x = CV_LEFT + panel * (pw + CV_GAP);
    ax->y = CV_TOP;
    ax->w = pw;
    ax->h = CV_H - CV_TOP - CV_BOTTOM;
    ax->xmin = c->xlo;
    ax->xmax = c->xhi;
    ax->ymin = c->ylo[m];
    ax->ymax = c->yhi[m];
}

static void draw_curves(cairo_t *cr, void *vctx)
{
    const curves_ctx *c = vctx;
    const fig_curves *f = c->f;
    plot_text(cr, CV_LEFT, 8, 9, 0, 0, 0, 1, "Checkpoints: the scores of each training run against the epoch");
    if (f->subtitle) plot_text(cr, CV_W - CV_RIGHT, 26, 7, 1, 0.5, 0, 0, f->subtitle);
    double lx = CV_LEFT, ly = 26;
    for (int r = 0; r < c->n_runs; r++) {
        plot_style s;
        plot_style_of(r, &s);
        legend_sample(cr, lx, ly, &s);
        plot_text(cr, lx + 22, ly, 7, 0, 0.5, 0, 0, c->runs[r]);
        cairo_text_extents_t te;
        cairo_set_font_size(cr, 7);
        cairo_text_extents(cr, c->runs[r], &te);
        lx += 34 + te.x_advance;
    }
    static const double base_rgb[3] = {0.25, 0.25, 0.25}, ref_rgb[3] = {0.45, 0.45, 0.45};
    for (int panel = 0; panel < c->n_metrics; panel++) {
        const int m = c->metric[panel];
        plot_axes ax;
        curves_axes(c, panel, &ax);
        plot_frame(cr, &ax, NULL, 0, "%g", "%g", 1, 1);
        plot_text(cr, ax.x + ax.w / 2, ax.y - 3, 7.5, 0.5, 1, 0, 1, fig_metric_label[m]);
        plot_text(cr, ax.x + ax.w / 2, ax.y + ax.h + 14, 7.5, 0.5, 0, 0, 0, "epoch");
        /* baselines and published numbers; labels stacked top-down at least 6.2 pt apart */
        int n_h = 0;
        double hv[256];
        int hk[256];
        for (int k = 0; k < f->n + f->n_refs && n_h < 256; k++) {
            double v = k < f->n ? (f->points[c->order[k]].run ? NAN : 100 * f->points[c->order[k]].v[m])
                                : (f->refs[k - f->n].metric == m ? f->refs[k - f->n].value : NAN);
            if (!isfinite(v) || v < ax.ymin || v > ax.ymax) continue;
            int at = n_h++;
            while (at > 0 && hv[at - 1] < v) {
                hv[at] = hv[at - 1];
                hk[at] = hk[at - 1];
                at--;
            }
            hv[at] = v;
            hk[at] = k;
        }
        double prev = -INFINITY;
        for (int i = 0; i < n_h; i++) {
            int k = hk[i];
            double ly = plot_py(&ax, hv[i]) - 1.2;
            if (ly < prev + 6.2) ly = prev + 6.2;
            prev = ly;
            char lab[192];
            if (k < f->n) {
                snprintf(lab, sizeof lab, "%s %.1f", f->points[c->order[k]].network, hv[i]);
                plot_hline(cr, &ax, hv[i], base_rgb, PLOT_DASHED, lab, ly);
            } else {
                snprintf(lab, sizeof lab, "%s %.1f", f->refs[k - f->n].label, hv[i]);
                plot_hline(cr, &ax, hv[i], ref_rgb, PLOT_DOTTED, lab, ly);
            }
        }
        for (int r = 0; r < c->n_runs; r++) {
            int n = c->run_len[r];
            double *x = kc_malloc(sizeof(double) * (size_t)n), *y = kc_malloc(sizeof(double) * (size_t)n);
            for (int i = 0; i < n; i++) {
                const fig_point *p = &f->points[c->order[c->run_start[r] + i]];
                x[i] = p->epoch;
                y[i] = 100 * p->v[m];
            }
            plot_style s;
            plot_style_of(r, &s);
            plot_polyline(cr, &ax, x, y, n, &s);
            free(x);
            free(y);
        }
    }
}

static const fig_point *curves_sort_points;
static int cmp_point(const void *a, const void *b)
{
    const fig_point *p = &curves_sort_points[*(const int *)a], *q = &curves_sort_points[*(const int *)b];
    return (p->epoch > q->epoch) - (p->epoch < q->epoch);
}

int fig_curves_write(const char *dir, const char *base, const fig_curves *f)
{
    curves_ctx c = {.f = f};
    c.order = kc_malloc(sizeof(int) * (size_t)(f->n + 1));
    c.runs = kc_malloc(sizeof(char *) * (size_t)(f->n + 1));
    c.run_start = kc_malloc(sizeof(int) * (size_t)(f->n + 1));
    c.run_len = kc_malloc(sizeof(int) * (size_t)(f->n + 1));
    int k = 0;
    for (int i = 0; i < f->n; i++) {
        const char *run = f->points[i].run;
        if (!run) continue;
        int seen = 0;
        for (int r = 0; r < c.n_runs; r++) seen |= !strcmp(c.runs[r], run);
        if (seen) continue;
        c.runs[c.n_runs] = run;
        c.run_start[c.n_runs] = k;
        for (int j = i; j < f->n; j++)
            if (f->points[j].run && !strcmp(f->points[j].run, run)) c.order[k++] = j;
        c.run_len[c.n_runs] = k - c.run_start[c.n_runs];
        curves_sort_points = f->points;
        qsort(c.order + c.run_start[c.n_runs], (size_t)c.run_len[c.n_runs], sizeof(int), cmp_point);
        c.n_runs++;
    }
    for (int i = 0; i < f->n; i++)
        if (!f->points[i].run) c.order[k++] = i;
    int any_davis = 0, any_probe = 0;
    for (int i = 0; i < f->n; i++) any_davis |= isfinite(f->points[i].v[FIG_DAVIS_JF]);
    for (int i = 0; i < f->n_refs; i++) any_davis |= f->refs[i].metric == FIG_DAVIS_JF;
    for (int i = 0; i < f->n; i++) any_probe |= isfinite(f->points[i].v[FIG_PROBE_MIOU]);
    for (int i = 0; i < f->n_refs; i++) any_probe |= f->refs[i].metric == FIG_PROBE_MIOU;
    c.metric[c.n_metrics++] = FIG_VOC_JACCARD;
    c.metric[c.n_metrics++] = FIG_VOC_CORLOC;
    if (any_davis) c.metric[c.n_metrics++] = FIG_DAVIS_JF;
    if (any_probe) c.metric[c.n_metrics++] = FIG_PROBE_MIOU;
    /* ranges */
    double xlo = INFINITY, xhi = -INFINITY;
    for (int i = 0; i < f->n; i++)
        if (f->points[i].run) {
            if (f->points[i].epoch < xlo) xlo = f->points[i].epoch;
            if (f->points[i].epoch > xhi) xhi = f->points[i].epoch;
        }
    if (!isfinite(xlo)) {
        xlo = 0;
        xhi = 1;
    }
    double pad = xhi > xlo ? 0.06 * (xhi - xlo) : 1;
    c.xlo = xlo - pad;
    c.xhi = xhi + pad;
    double *vals = kc_malloc(sizeof(double) * (size_t)(f->n + f->n_refs + 1));
    for (int m = 0; m < FIG_N_METRICS; m++) {
        int n = 0;
        for (int i = 0; i < f->n; i++) vals[n++] = 100 * f->points[i].v[m];
        for (int i = 0; i < f->n_refs; i++)
            if (f->refs[i].metric == m) vals[n++] = f->refs[i].value;
        value_range(vals, n, &c.ylo[m], &c.yhi[m]);
    }
    free(vals);

    kc_buf csv = {0};
    kc_buf_printf(&csv, "network,run,epoch,voc_jaccard,voc_corloc,davis_jf%s\n", any_probe ? ",probe_miou" : "");
    for (int i = 0; i < f->n; i++) {
        const fig_point *p = &f->points[c.order[i]];
        kc_buf_printf(&csv, "%s,%s,", p->network, p->run ? p->run : "");
        if (p->run) kc_buf_printf(&csv, "%.9g", p->epoch);
        for (int m = 0; m < (any_probe ? FIG_N_METRICS : FIG_PROBE_MIOU); m++) {
            kc_buf_printf(&csv, ",");
            csv_num(&csv, p->v[m]);
        }
        kc_buf_printf(&csv, "\n");
    }

    kc_buf t = {0};
    kc_buf_printf(&t, "%% generated by keycut kc-plot: each training run's scores against the epoch\n");
    kc_buf_printf(&t, "%% data: %s.csv; needs \\usepackage{pgfplots}, \\usepgfplotslibrary{groupplots}\n", base);
    kc_buf_printf(&t, "%% runs are rows %s of the CSV; baselines (no run) and published numbers are horizontal lines\n",
                  "grouped by run");
    pgf_preamble(&t, base);
    kc_buf_printf(&t, "\\begin{tikzpicture}\n\\begin{groupplot}[group style={group size=%d by 1, horizontal sep=30pt},\n"
                      "  scale only axis, width=%.2f\\linewidth, height=0.22\\linewidth, xmin=%g, xmax=%g,\n"
                      "  tick label style={font=\\tiny}, title style={font=\\scriptsize}, label style={font=\\scriptsize},\n"
                      "  legend style={font=\\tiny}, every axis plot/.append style={mark size=1.2pt}, xlabel={epoch},\n"
                      "  unbounded coords=jump, every node near coord/.style={font=\\tiny}]\n",
                  c.n_metrics, c.n_metrics == 4 ? 0.17 : c.n_metrics == 3 ? 0.24 : 0.38, c.xlo, c.xhi);
    for (int panel = 0; panel < c.n_metrics; panel++) {
        const int m = c.metric[panel];
        kc_buf title = {0};
        tex_escape(&title, fig_metric_label[m]);
        kc_buf_printf(&t, "\\nextgroupplot[title={%s}, ymin=%g, ymax=%g%s]\n", title.s, c.ylo[m], c.yhi[m],
                      panel == 0 && c.n_runs ? ", legend to name=kccurveslegend, legend columns=-1" : "");
        free(title.s);
        for (int r = 0; r < c.n_runs; r++) {
            plot_style s;
            plot_style_of(r, &s);
            kc_buf_printf(&t, "\\addplot[color=kcOI%c, mark=%s, %s, y filter/.expression={100*y}] table[x=epoch, y=%s",
                          'A' + s.color, plot_marker_pgf(s.marker), plot_dash_pgf(s.dash), fig_metric_key[m]);
            if (c.run_start[r] > 0) kc_buf_printf(&t, ", skip coords between index={0}{%d}", c.run_start[r]);
            if (c.run_start[r] + c.run_len[r] < f->n)
                kc_buf_printf(&t, ", skip coords between index={%d}{%d}", c.run_start[r] + c.run_len[r], f->n);
            kc_buf_printf(&t, "] {\\kcdata};\n");
            if (m == 0) {
                kc_buf_printf(&t, "\\addlegendentry{");
                tex_escape(&t, c.runs[r]);
                kc_buf_printf(&t, "}\n");
            }
        }
        for (int i = 0; i < f->n; i++) {
            const fig_point *p = &f->points[c.order[i]];
            if (p->run || !isfinite(p->v[m])) continue;
            kc_buf_printf(&t, "\\addplot[black!75, dashed, domain=%g:%g, samples=2, forget plot] {%.4f} "
                              "node[pos=1, anchor=south east, font=\\tiny] {",
                          c.xlo, c.xhi, 100 * p->v[m]);
            tex_escape(&t, p->network);
            kc_buf_printf(&t, "};\n");
        }
        for (int i = 0; i < f->n_refs; i++) {
            if (f->refs[i].metric != m) continue;
            kc_buf_printf(&t, "\\addplot[black!55, densely dotted, domain=%g:%g, samples=2, forget plot] {%.4f} "
                              "node[pos=1, anchor=south east, font=\\tiny] {",
                          c.xlo, c.xhi, f->refs[i].value);
            tex_escape(&t, f->refs[i].label);
            kc_buf_printf(&t, "};\n");
        }
    }
    kc_buf_printf(&t, "\\end{groupplot}\n");
    if (c.n_runs)
        kc_buf_printf(&t, "\\node[anchor=south west, yshift=14pt] at (group c1r1.north west) "
                          "{\\pgfplotslegendfromname{kccurveslegend}};\n");
    kc_buf_printf(&t, "\\end{tikzpicture}\n");

    int rc = write_figure(dir, base, &csv, &t, CV_W, CV_H, draw_curves, &c);
    free(c.order);
    free(c.runs);
    free(c.run_start);
    free(c.run_len);
    return rc;
}

/* ---- the picture grid ---------------------------------------------------------------------- */

typedef struct grid_ctx {
    const fig_grid *g;
    cairo_surface_t **cells; /* (n_rows, n_cols), pre-scaled to the cell at 200 dpi; NULL = empty */
    double *row_h;
    double cell_w, height;
} grid_ctx;

enum { GR_W = 460 };
static const double GR_LEFT = 16, GR_TOP = 16, GR_GAP = 2, GR_DPI = 150;

static void draw_grid(cairo_t *cr, void *vctx)
{
    const grid_ctx *c = vctx;
    const fig_grid *g = c->g;
    for (int j = 0; j < g->n_cols; j++)
        plot_text(cr, GR_LEFT + j * (c->cell_w + GR_GAP) + c->cell_w / 2, GR_TOP - 4, 7, 0.5, 1, 0, 1, g->col_titles[j]);
    double y = GR_TOP;
    for (int i = 0; i < g->n_rows; i++) {
        plot_text(cr, GR_LEFT - 4, y + c->row_h[i] / 2, 6.5, 0.5, 1, -M_PI / 2, 0, g->row_titles[i]);
        for (int j = 0; j < g->n_cols; j++) {
            cairo_surface_t *s = c->cells[i * g->n_cols + j];
            if (!s) continue;
            double x = GR_LEFT + j * (c->cell_w + GR_GAP);
            int sw = cairo_image_surface_get_width(s), sh = cairo_image_surface_get_height(s);
            double scale = c->cell_w / sw, dh = sh * scale;
            cairo_save(cr);
            cairo_translate(cr, x, y + (c->row_h[i] - dh) / 2);
            cairo_scale(cr, scale, scale);
            cairo_set_source_surface(cr, s, 0, 0);
            cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_GOOD);
            cairo_rectangle(cr, 0, 0, sw, sh);
            cairo_fill(cr);
            cairo_restore(cr);
        }
        y += c->row_h[i] + GR_GAP;
    }
}

/* An RGB picture as a cairo surface of w x h pixels (scaled with a good filter). */
static cairo_surface_t *to_surface(const kc_image *im, int w, int h)
{
    cairo_surface_t *src = cairo_image_surface_create(CAIRO_FORMAT_RGB24, im->w, im->h);
    cairo_surface_flush(src);
    unsigned char *d = cairo_image_surface_get_data(src);
    int stride = cairo_image_surface_get_stride(src);
    for (int y = 0; y < im->h; y++) {
        uint32_t *row = (uint32_t *)(d + (size_t)y * stride);
        const uint8_t *p = im->rgb + (size_t)y * im->w * 3;
        for (int x = 0; x < im->w; x++) row[x] = (uint32_t)p[3 * x] << 16 | (uint32_t)p[3 * x + 1] << 8 | p[3 * x + 2];
    }
    cairo_surface_mark_dirty(src);
    if (w >= im->w) return src;
    cairo_surface_t *dst = cairo_image_surface_create(CAIRO_FORMAT_RGB24, w, h);
    cairo_t *cr = cairo_create(dst);
    cairo_scale(cr, (double)w / im->w, (double)h / im->h);
    cairo_set_source_surface(cr, src, 0, 0);
    cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_GOOD);
    cairo_paint(cr);
    cairo_destroy(cr);
    cairo_surface_destroy(src);
    return dst;
}

int fig_grid_write(const char *dir, const char *base, const fig_grid *g)
{
    if (g->n_rows < 1 || g->n_cols < 1) return kc_fail("%s/%s: an empty picture grid", dir, base);
    grid_ctx c = {.g = g};
    c.cell_w = (GR_W - GR_LEFT - 2 - (g->n_cols - 1) * GR_GAP) / g->n_cols;
    c.cells = kc_calloc((size_t)g->n_rows * g->n_cols, sizeof *c.cells);
    c.row_h = kc_calloc((size_t)g->n_rows, sizeof(double));
    c.height = GR_TOP + 2;
    int px_w = (int)ceil(c.cell_w * GR_DPI / 72);
    for (int i = 0; i < g->n_rows; i++) {
        double aspect = 0;
        for (int j = 0; j < g->n_cols; j++) {
            const kc_image *im = &g->cells[i * g->n_cols + j];
            if (im->w > 0 && (double)im->h / im->w > aspect) aspect = (double)im->h / im->w;
        }
        if (aspect == 0) aspect = 0.75;
        c.row_h[i] = c.cell_w * aspect;
        c.height += c.row_h[i] + (i ? GR_GAP : 0);
        for (int j = 0; j < g->n_cols; j++) {
            const kc_image *im = &g->cells[i * g->n_cols + j];
            if (im->w <= 0) continue;
            int h = (int)lround((double)px_w * im->h / im->w);
            c.cells[i * g->n_cols + j] = to_surface(im, px_w, h < 1 ? 1 : h);
        }
    }
    c.height = ceil(c.height);
    kc_buf csv = {0}, t = {0};
    kc_buf_printf(&csv, "%s", g->csv ? g->csv : "");
    kc_buf_printf(&t, "%% generated by keycut kc-plot: %s\n", g->caption ? g->caption : "a picture grid");
    kc_buf_printf(&t, "%% cells: %s.csv; needs \\usepackage{graphicx}\n", base);
    kc_buf_printf(&t, "\\providecommand{\\kcfigdir}{figures}\n");
    kc_buf_printf(&t, "\\includegraphics[width=\\linewidth]{\\kcfigdir/%s.pdf}\n", base);
    int rc = write_figure(dir, base, &csv, &t, GR_W, c.height, draw_grid, &c);
    for (int i = 0; i < g->n_rows * g->n_cols; i++)
        if (c.cells[i]) cairo_surface_destroy(c.cells[i]);
    free(c.cells);
    free(c.row_h);
    return rc;
}
