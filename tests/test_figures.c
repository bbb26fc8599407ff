/* tests/test_figures.c — eval/figures/plot + eval/figures/figures: the files a figure is made of.
 *
 * Draws a sweep, a curves figure and a picture grid from data made up here, then checks, per
 * figure: the PDF starts with %PDF-, has one page of the expected size (its MediaBox) and no
 * /CreationDate; the SVG parses as XML (libxml2) with an <svg> root of the expected width; the PNG
 * decodes (pipeline/images/image.c, libpng) at the expected pixel size, is not blank, and shows the
 * curves' Okabe-Ito colours exactly (filled markers give pure-colour pixels); a second drawing of
 * the same data gives byte-identical files.  Also the setting-id parser and the CSV layout.
 */
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <math.h>

#include "eval/figures/figures.h"
#include "eval/figures/plot.h"
#include "pipeline/images/image.h"
#include "pipeline/kc.h"
#include "tests/test.h"

static char *slurp(const char *path, size_t *n)
{
    uint8_t *d = NULL;
    if (kc_read_file(path, &d, n) < 0) return NULL;
    return (char *)d;
}

static int same_file(const char *a, const char *b)
{
    size_t na, nb;
    char *x = slurp(a, &na), *y = slurp(b, &nb);
    int same = x && y && na == nb && !memcmp(x, y, na);
    free(x);
    free(y);
    return same;
}

/* Count of PNG pixels exactly equal to the palette colour. */
static long count_color(const kc_image *im, const char *hex)
{
    unsigned v = (unsigned)strtoul(hex, NULL, 16);
    long n = 0;
    for (long i = 0; i < (long)im->w * im->h; i++) {
        const uint8_t *p = im->rgb + 3 * i;
        n += p[0] == ((v >> 16) & 255) && p[1] == ((v >> 8) & 255) && p[2] == (v & 255);
    }
    return n;
}

/* Checks DIR/BASE.{pdf,svg,png}: page w x h points; colors[n_colors] must appear in the PNG. */
static void check_files(const char *dir, const char *base, double w, double h, const int *colors, int n_colors)
{
    char *pdf = kc_strfmt("%s/%s.pdf", dir, base), *svg = kc_strfmt("%s/%s.svg", dir, base),
         *png = kc_strfmt("%s/%s.png", dir, base);
    size_t n;
    char *d = slurp(pdf, &n);
    CHECK(d && n > 5 && !memcmp(d, "%PDF-", 5), "%s: not a PDF", pdf);
    if (d) {
        char want[64];
        snprintf(want, sizeof want, "/MediaBox [ 0 0 %g %g ]", w, h);
        CHECK(memmem(d, n, want, strlen(want)) != NULL, "%s: no '%s'", pdf, want);
        int pages = 0;
        for (char *p = d; (p = memmem(p, n - (size_t)(p - d), "/Type /Page", 11)); p++) pages += p[11] != 's';
        CHECK(pages == 1, "%s: %d pages, expected 1", pdf, pages);
        CHECK(!memmem(d, n, "CreationDate", 12) && !memmem(d, n, "ModDate", 7), "%s: carries a date", pdf);
    }
    free(d);

    xmlDocPtr doc = xmlReadFile(svg, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    CHECK(doc != NULL, "%s: does not parse as XML", svg);
    if (doc) {
        xmlNodePtr root = xmlDocGetRootElement(doc);
        CHECK(root && !strcmp((const char *)root->name, "svg"), "%s: root is not <svg>", svg);
        xmlChar *wa = root ? xmlGetProp(root, (const xmlChar *)"width") : NULL;
        char want[32];
        snprintf(want, sizeof want, "%gpt", w);
        CHECK(wa && !strcmp((const char *)wa, want), "%s: width %s, expected %s", svg, wa ? (char *)wa : "none", want);
        xmlFree(wa);
        xmlFreeDoc(doc);
    }

    kc_image im = {0};
    CHECK(image_load_rgb(png, &im) == 0, "%s: does not decode: %s", png, kc_error());
    if (im.rgb) {
        int ew = (int)ceil(w * 150 / 72), eh = (int)ceil(h * 150 / 72);
        CHECK(im.w == ew && im.h == eh, "%s: %dx%d pixels, expected %dx%d", png, im.w, im.h, ew, eh);
        long ink = 0;
        for (long i = 0; i < (long)im.w * im.h; i++) ink += im.rgb[3 * i] < 200 || im.rgb[3 * i + 1] < 200 || im.rgb[3 * i + 2] < 200;
        CHECK(ink > (long)im.w * im.h / 100, "%s: blank (%ld dark pixels of %d)", png, ink, im.w * im.h);
        for (int k = 0; k < n_colors; k++) {
            long c = count_color(&im, plot_palette_hex[colors[k]]);
            CHECK(c >= 20, "%s: colour #%s appears in %ld pixels (expected the curves' markers)", png,
                  plot_palette_hex[colors[k]], c);
        }
        image_free(&im);
    }
    free(pdf);
    free(svg);
    free(png);
}

static void check_same(const char *d1, const char *d2, const char *base)
{
    const char *ext[5] = {"pdf", "svg", "png", "csv", "tex"};
    for (int e = 0; e < 5; e++) {
        char *a = kc_strfmt("%s/%s.%s", d1, base, ext[e]), *b = kc_strfmt("%s/%s.%s", d2, base, ext[e]);
        CHECK(same_file(a, b), "%s and %s differ (figures must be deterministic)", a, b);
        free(a);
        free(b);
    }
}

static void draw_all(const char *dir)
{
    /* the sweep: 4 tau, every cell a distinct value */
    fig_sweep f = {0};
    f.title = "net";
    f.metric = "Jaccard";
    f.n_tau = 4;
    const char *taus[4] = {"0.10", "0.15", "0.20", "0.25"};
    for (int t = 0; t < 4; t++) snprintf(f.tau[t], 16, "%s", taus[t]);
    f.v = kc_malloc(sizeof(double) * 144);
    for (int i = 0; i < 144; i++) f.v[i] = 0.3 + 0.4 * ((i * 37) % 144) / 144.0;
    f.v[fig_sweep_at(2, 1, 1, 2, 2)] = NAN; /* a missing setting */
    f.chosen = "t0.15-wtd-zero-minority-n2";
    CHECK(fig_sweep_write(dir, "sweep", &f) == 0, "fig_sweep_write: %s", kc_error());
    free(f.v);

    fig_point pts[5] = {
        {"r-e10", "r", 10, {0.40, 0.50, 0.60, NAN}}, {"r-e5", "r", 5, {0.35, 0.45, 0.55, NAN}},
        {"s-e5", "s", 5, {0.30, 0.42, NAN, NAN}},    {"dino", NULL, 0, {0.38, 0.47, 0.618, NAN}},
        {"r-e15", "r", 15, {0.41, 0.52, 0.61, NAN}},
    };
    fig_reference refs[1] = {{"DINO (published)", FIG_DAVIS_JF, 61.8}};
    fig_curves c = {5, pts, 1, refs, "VOC val at t0.15-bin-mean-corners-n3"};
    CHECK(fig_curves_write(dir, "curves", &c) == 0, "fig_curves_write: %s", kc_error());
    /* with the linear probe's mIoU: a fourth panel and a probe_miou column */
    fig_point ppts[2] = {{"r-e5", "r", 5, {0.35, 0.45, NAN, 0.61}}, {"dino", NULL, 0, {0.38, 0.47, NAN, 0.7}}};
    fig_curves cp = {2, ppts, 0, NULL, NULL};
    CHECK(fig_curves_write(dir, "curves-probe", &cp) == 0, "fig_curves_write with probe: %s", kc_error());
    {
        size_t pl;
        char *pp = kc_strfmt("%s/curves-probe.csv", dir), *pc = slurp(pp, &pl);
        CHECK(pc && !strcmp(pc, "network,run,epoch,voc_jaccard,voc_corloc,davis_jf,probe_miou\n"
                                "r-e5,r,5,0.35,0.45,nan,0.61\ndino,,,0.38,0.47,nan,0.7\n"),
              "curves-probe.csv:\n%s", pc ? pc : "(none)");
        free(pc);
        free(pp);
        pp = kc_strfmt("%s/curves-probe.tex", dir);
        pc = slurp(pp, &pl);
        CHECK(pc && strstr(pc, "group size=3 by 1") && strstr(pc, "Probe mIoU"), "curves-probe.tex: 3 panels with Probe mIoU");
        free(pc);
        free(pp);
    }

    kc_image cells[4];
    for (int k = 0; k < 4; k++) {
        cells[k].w = 40 + 10 * k;
        cells[k].h = 30;
        cells[k].rgb = kc_malloc((size_t)cells[k].w * 30 * 3);
        for (int i = 0; i < cells[k].w * 30 * 3; i++) cells[k].rgb[i] = (uint8_t)(i * 7 + k * 50);
    }
    const char *rows[2] = {"img1", "img2"}, *cols[2] = {"ground truth", "net"};
    fig_grid g = {2, 2, rows, cols, cells, "row,id,column,source\n", "test grid"};
    CHECK(fig_grid_write(dir, "grid", &g) == 0, "fig_grid_write: %s", kc_error());
    for (int k = 0; k < 4; k++) free(cells[k].rgb);
}

int main(void)
{
    char tau[16];
    int e, s, r, n;
    CHECK(fig_parse_setting("t0.15-wtd-zero-minority-n3", tau, &e, &s, &r, &n) == 0 && !strcmp(tau, "0.15") && e == 1 &&
              s == 1 && r == 2 && n == 2,
          "parse a grid id");
    CHECK(fig_parse_setting("attn-mass60", tau, &e, &s, &r, &n) < 0, "attn-mass60 is not a grid id");
    CHECK(fig_parse_setting("t0.15-bin-mean-seed-n4", tau, &e, &s, &r, &n) < 0, "n4 is not of the grid");
    CHECK(fig_parse_setting("tx-bin-mean-seed-n1", tau, &e, &s, &r, &n) < 0, "tau must be a number");

    double s0, st;
    int nt;
    plot_nice_ticks(31.2, 78.9, 4, &s0, &st, &nt);
    CHECK(st == 10 && s0 == 40 && nt == 4, "ticks of [31.2, 78.9]: start %g step %g n %d", s0, st, nt);

    const char *d1 = test_tmpdir("figures1");
    char *d1c = kc_strdup(d1);
    const char *d2 = test_tmpdir("figures2");
    draw_all(d1c);
    draw_all(d2);
    int sweep_colors[3] = {0, 1, 2}, curve_colors[2] = {0, 1};
    check_files(d1c, "sweep", 460, 390, sweep_colors, 3);
    check_files(d1c, "curves", 460, 200, curve_colors, 2);
    /* the grid: 16 + 2 + 2 rows; cell width (460 - 16 - 2 - 2) / 2 = 220; rows 220 * 30 / 40 and 220 * 30 / 50 */
    double gh = ceil(16 + 2 + 220 * 30.0 / 40 + 2 + 220 * 30.0 / 60);
    check_files(d1c, "grid", 460, gh, NULL, 0);
    check_same(d1c, d2, "sweep");
    check_same(d1c, d2, "curves");
    check_same(d1c, d2, "grid");

    /* CSV layouts */
    size_t len;
    char *p = kc_strfmt("%s/curves.csv", d1c), *csv = slurp(p, &len);
    CHECK(csv && !strcmp(csv, "network,run,epoch,voc_jaccard,voc_corloc,davis_jf\n"
                              "r-e5,r,5,0.35,0.45,0.55\nr-e10,r,10,0.4,0.5,0.6\nr-e15,r,15,0.41,0.52,0.61\n"
                              "s-e5,s,5,0.3,0.42,nan\ndino,,,0.38,0.47,0.618\n"),
          "curves.csv:\n%s", csv ? csv : "(none)");
    free(csv);
    free(p);
    p = kc_strfmt("%s/sweep.csv", d1c);
    csv = slurp(p, &len);
    CHECK(csv && !strncmp(csv, "tau,bin_mean_seed_n1,bin_mean_seed_n2,bin_mean_seed_n3,bin_mean_corners_n1,", 75),
          "sweep.csv header:\n%.200s", csv ? csv : "(none)");
    int lines = 0;
    for (char *q = csv; q && *q; q++) lines += *q == '\n';
    CHECK(lines == 5, "sweep.csv: %d lines, expected a header and 4 tau rows", lines);
    CHECK(csv && strstr(csv, ",nan\n0.25,") != NULL, "sweep.csv: the missing setting (the last column at tau 0.20) is nan");
    free(csv);
    free(p);
    p = kc_strfmt("%s/sweep.tex", d1c);
    csv = slurp(p, &len);
    CHECK(csv && strstr(csv, "\\providecolor{kcOIA}{HTML}{0072B2}") && strstr(csv, "\\pgfplotstableread[col sep=comma]{\\kcfigdir/sweep.csv}") &&
              strstr(csv, "mark=star"),
          "sweep.tex: palette, CSV path or the chosen mark missing");
    free(csv);
    free(p);
    free(d1c);
    xmlCleanupParser();
    plot_release();
    return test_done();
}
