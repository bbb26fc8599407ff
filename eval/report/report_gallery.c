/* eval/report/report_gallery.c — the report's galleries: reading kc-score's per-image CSVs, the gallery
 * pages and the image pages.  See report_gallery.h. */
#include "eval/report/report_gallery.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/report/html.h"
#include "eval/report/report_data.h"
#include "eval/report/report_pages.h"
#include "eval/report/report_pictures.h"

/* The columns (report_types.h's COL_*) in the CSV, and as the gallery's data- attributes. */
static const char *const col_name[N_COLS] = {"jaccard", "corloc", "area", "lambda2", "eigengap", "degenerate",
                                             "knife_edge"};
static const char *const col_attr[N_COLS] = {"jaccard", "corloc", "area", "lambda2", "eigengap", "degenerate",
                                             "knife"};

static int cmp_entry(const void *pa, const void *pb)
{
    const gallery_entry *a = pa, *b = pb;
    int an = isnan(a->jaccard), bn = isnan(b->jaccard);
    if (an != bn) return an - bn;
    if (!an && a->jaccard != b->jaccard) return a->jaccard < b->jaccard ? -1 : 1;
    return a->pos - b->pos;
}

/* The index of image id in R's image table, added when new. */
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

/* The gallery of the per-image CSV s->path/name into G. */
static int read_gallery(report *R, const report_named *s, const char *name, gallery *G)
{
    memset(G, 0, sizeof *G);
    G->net = s->name;
    G->csv_path = kc_strfmt("%s/%s", s->path, name);
    G->scores_dir = kc_strdup(s->path);
    G->setting = kc_strfmt("%.*s", (int)strlen(name) - 4, name);
    G->masks = -1;
    KC_TRY(csv_read(G->csv_path, &G->table));
    int cid = csv_col(&G->table, "id"), cj = csv_col(&G->table, "jaccard"), cs = csv_col(&G->table, "setting");
    if (cid != 0 || cj < 0 || cs < 0)
        return kc_fail("%s: not a kc-score per-image CSV (its header must start with id and have setting and "
                       "jaccard)", G->csv_path);
    int cols[N_COLS];
    for (int c = 0; c < N_COLS; c++) cols[c] = csv_col(&G->table, col_name[c]);
    G->n = G->table.n_rows;
    G->e = kc_calloc((size_t)(G->n ? G->n : 1), sizeof *G->e);
    for (int r = 0; r < G->n; r++) {
        char **row = G->table.rows[r];
        if (strcmp(row[cs], G->setting))
            return kc_fail("%s: line %d is of setting '%s', the file's name says '%s'", G->csv_path, r + 2, row[cs],
                           G->setting);
        gallery_entry *e = &G->e[r];
        for (int c = 0; c < N_COLS; c++) e->v[c] = cols[c] >= 0 ? row[cols[c]] : "";
        e->jaccard = csv_num(e->v[COL_JACCARD]);
        e->pos = r;
        e->image = find_image(R, row[cid]);
    }
    qsort(G->e, (size_t)G->n, sizeof *G->e, cmp_entry);
    char *sn = html_safe_name(s->name), *ss = html_safe_name(G->setting);
    G->page = kc_strfmt("gallery-%s-%s.html", sn, ss);
    G->pic_dir = kc_strfmt("%s/%s", sn, ss);
    free(sn);
    free(ss);
    char *sp = kc_strfmt("%s/summary.csv", s->path);
    uint8_t *text;
    size_t len;
    if (kc_exists(sp) && kc_read_file(sp, &text, &len) == 0) G->summary = (char *)text;
    free(sp);
    for (int i = 0; i < R->n_g; i++)
        if (!strcmp(R->g[i].page, G->page))
            return kc_fail("%s: network %s and setting %s are given twice (also %s)", G->csv_path, G->net,
                           G->setting, R->g[i].csv_path);
    return 0;
}

int gallery_load(report *R, const report_named *s)
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
        KC_TRY(read_gallery(R, s, names[k], &G));
        R->g = kc_realloc(R->g, sizeof *R->g * (size_t)(R->n_g + 1));
        R->g[R->n_g++] = G;
        free(names[k]);
    }
    free(names);
    return 0;
}

void gallery_link(report *R)
{
    for (int g = 0; g < R->n_g; g++) {
        gallery *G = &R->g[g];
        for (int k = 0; k < R->n_masks && G->masks < 0; k++) {
            char *grp = kc_strfmt("/masks/%s", G->setting);
            if (!strcmp(R->masks[k].name, G->net) && cache_has(&R->mr[k], grp)) G->masks = k;
            free(grp);
        }
        for (int i = 0; i < G->n; i++) {
            image_ref *m = &R->img[G->e[i].image];
            m->in_gallery = kc_realloc(m->in_gallery, sizeof(int) * (size_t)(m->n_in + 1));
            m->in_entry = kc_realloc(m->in_entry, sizeof(int) * (size_t)(m->n_in + 1));
            m->in_gallery[m->n_in] = g;
            m->in_entry[m->n_in++] = i;
        }
    }
}

void gallery_free(gallery *G)
{
    csv_free(&G->table);
    free(G->e);
    free(G->setting);
    free(G->csv_path);
    free(G->scores_dir);
    free(G->page);
    free(G->pic_dir);
    free(G->summary);
}

double gallery_mean(const gallery *G, int col, int *n)
{
    double s = 0;
    *n = 0;
    for (int i = 0; i < G->n; i++) {
        double v = csv_num(G->e[i].v[col]);
        if (!isnan(v)) {
            s += v;
            (*n)++;
        }
    }
    return *n ? s / *n : NAN;
}

/* ---- pages --------------------------------------------------------------------------------- */

/* A photo that report.js draws a layer over: <span class="ov" attrs><img photo></span>; root is
 * the page's way back to the report folder ("": a gallery, whose photos load lazily; "../": an
 * image page, whose figures all show the one photo); attrs (may be "") say which layer
 * (report.js). */
static void stack(kc_buf *b, const char *root, const char *safe, const char *photo_ext, const char *attrs,
                  const char *alt)
{
    kc_buf_printf(b, "<span class=\"ov\"%s><img src=\"%sphoto/%s%s\"%s alt=\"", attrs, root, safe, photo_ext,
                  *root ? "" : " loading=\"lazy\"");
    html_escape(b, alt);
    kc_buf_printf(b, "\"></span>");
}

/* The attribute that names image i's ground truth layer (chunk.slot of data/gt/) in a buffer
 * that lives until the next call. */
static const char *gt_attr(int i)
{
    static char buf[64];
    snprintf(buf, sizeof buf, " data-gt=\"%d.%d\"", i / REPORT_CHUNK, i % REPORT_CHUNK);
    return buf;
}

/* data-src="<root>data/<dir>/" (and data-gt-src likewise) when the folder was written: where
 * report.js finds the layers of a page. */
static void data_dirs(kc_buf *b, const report *R, const char *root, const gallery *G)
{
    const char *name[2] = {"gt-src", "src"};
    for (int k = 0; k < (G ? 2 : 1); k++) {
        char *rel = report_data_rel(k ? G : NULL, 0), *dir;
        rel[strlen(rel) - 4] = 0;
        dir = kc_strfmt("%s/%s", R->out, rel);
        if (kc_exists(dir)) kc_buf_printf(b, " data-%s=\"%s%s\"", name[k], root, rel);
        free(dir);
        free(rel);
    }
}

/* The gallery's controls (report.js reads them): filter, Jaccard bound, knife edge, sort, pages. */
static const char gallery_controls[] =
    "<div class=\"controls\">\n"
    "<label>id contains <input id=\"filter\" type=\"search\" size=\"14\"></label>\n"
    "<label>Jaccard at most <input id=\"jmax\" type=\"number\" min=\"0\" max=\"100\" step=\"1\" "
    "size=\"4\"> %</label>\n"
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
    "</button>\n<span id=\"status\" class=\"muted\"></span>\n</div>\n";

/* A caption's scores, each value after its label: Jaccard as a percentage (report_value), CorLoc
 * as the CSV has it; and the mask's confidence, lambda2 and eigengap, to 4 significant digits. */
static void caption_scores(kc_buf *b, const gallery_entry *e, const char *jaccard_label, const char *corloc_label)
{
    kc_buf_printf(b, "%s", jaccard_label);
    report_value(b, e->v[COL_JACCARD]);
    kc_buf_printf(b, "%s", corloc_label);
    html_escape(b, e->v[COL_CORLOC]);
}

static void caption_confidence(kc_buf *b, const gallery_entry *e, const char *lambda2_label, const char *gap_label)
{
    kc_buf_printf(b, "%s", lambda2_label);
    report_short(b, e->v[COL_LAMBDA2]);
    kc_buf_printf(b, "%s", gap_label);
    report_short(b, e->v[COL_EIGENGAP]);
}

/* One entry of the gallery: its thumbnails (the ground truth, the mask) and its values. */
static void gallery_item(kc_buf *b, const report *R, const gallery *G, int gi, int i)
{
    const gallery_entry *e = &G->e[i];
    const image_ref *m = &R->img[e->image];
    kc_buf_printf(b, "<li class=\"item\" data-id=\"");
    html_escape(b, m->id);
    kc_buf_printf(b, "\"");
    for (int c = 0; c < N_COLS; c++) {
        kc_buf_printf(b, " data-%s=\"", col_attr[c]);
        html_escape(b, e->v[c]);
        kc_buf_printf(b, "\"");
    }
    kc_buf_printf(b, "%s><a href=\"images/%s.html#g%d\">", i >= 100 ? " hidden" : "", m->safe, gi);
    if (G->masks >= 0 && m->photo) {
        if (R->voc_root) stack(b, "", m->safe, ".t.jpg", gt_attr(e->image), "ground truth");
        stack(b, "", m->safe, ".t.jpg", " data-m", m->id);
    }
    kc_buf_printf(b, "</a>\n<div class=\"cap\"><span class=\"id\">");
    html_escape(b, m->id);
    kc_buf_printf(b, "</span>");
    caption_scores(b, e, " J ", " &middot; CorLoc ");
    if (*e->v[COL_LAMBDA2]) caption_confidence(b, e, " &middot; &lambda;2 ", " &middot; gap ");
    if (!strcmp(e->v[COL_KNIFE], "1")) kc_buf_printf(b, " &middot; <span class=\"knife\">knife edge</span>");
    if (!strcmp(e->v[COL_DEGENERATE], "1")) kc_buf_printf(b, " &middot; degenerate");
    kc_buf_printf(b, "</div></li>\n");
}

void gallery_page(kc_buf *b, const report *R, int gi)
{
    const gallery *G = &R->g[gi];
    char *title = kc_strfmt("%s at %s: %d images", G->net, G->setting, G->n);
    report_page_begin(b, "", title, R);
    free(title);
    int nj, nc;
    double mj = gallery_mean(G, COL_JACCARD, &nj), mc = gallery_mean(G, COL_CORLOC, &nc);
    kc_buf_printf(b, "<p>Mean Jaccard %.1f over %d images, CorLoc %.1f over %d; worst Jaccard first.  "
                     "Click a picture for the full-size masks of every network and setting.</p>\n",
                  100 * mj, nj, 100 * mc, nc);
    kc_buf_printf(b, "<details><summary>provenance</summary>\n");
    report_gallery_prov(b, R, G);
    kc_buf_printf(b, "</details>\n");
    kc_buf_printf(b, "%s", gallery_controls);
    kc_buf_printf(b, "<ol id=\"items\" class=\"gallery\"");
    data_dirs(b, R, "", G);
    kc_buf_printf(b, ">\n");
    for (int i = 0; i < G->n; i++) gallery_item(b, R, G, gi, i);
    kc_buf_printf(b, "</ol>\n");
    report_page_end(b);
}

/* "yes", "no" or "-" (empty) for a 0/1 flag of the CSV; yes as given. */
static const char *flag(const char *v, const char *yes) { return !strcmp(v, "1") ? yes : *v ? "no" : "-"; }

void report_image_page(kc_buf *b, const report *R, int i)
{
    const image_ref *m = &R->img[i];
    char *title = kc_strfmt("image %s", m->id);
    report_page_begin(b, "../", title, R);
    free(title);
    kc_buf_printf(b, "<p class=\"muted\">photo: ");
    html_escape(b, m->photo ? m->photo : "(not in --images)");
    kc_buf_printf(b, "</p>\n<div class=\"side\"");
    data_dirs(b, R, "../", NULL);
    kc_buf_printf(b, ">\n");
    char *gt = m->photo ? report_gt_path(R, m->id) : NULL;
    if (gt) {
        kc_buf_printf(b, "<figure>");
        stack(b, "../", m->safe, ".jpg", gt_attr(i), "ground truth");
        kc_buf_printf(b, "<figcaption>ground truth</figcaption></figure>\n");
    }
    free(gt);
    for (int k = 0; k < m->n_in; k++) {
        const gallery *G = &R->g[m->in_gallery[k]];
        const gallery_entry *e = &G->e[m->in_entry[k]];
        kc_buf_printf(b, "<figure id=\"g%d\">", m->in_gallery[k]);
        if (G->masks >= 0 && m->photo) {
            char k_attr[64];
            snprintf(k_attr, sizeof k_attr, " data-k=\"%d.%d\"", m->in_entry[k] / REPORT_CHUNK, m->in_entry[k] % REPORT_CHUNK);
            stack(b, "../", m->safe, ".jpg", k_attr, ""); /* the caption names it */
        }
        kc_buf_printf(b, "<figcaption><a href=\"../%s\">", G->page);
        html_escape(b, G->net);
        kc_buf_printf(b, " at ");
        html_escape(b, G->setting);
        kc_buf_printf(b, "</a>");
        caption_scores(b, e, "<br>Jaccard ", ", CorLoc ");
        caption_confidence(b, e, "<br>lambda2 ", ", eigengap ");
        kc_buf_printf(b, "<br>knife edge %s, degenerate %s</figcaption></figure>\n",
                      flag(e->v[COL_KNIFE], "<span class=\"knife\">yes</span>"), flag(e->v[COL_DEGENERATE], "yes"));
    }
    kc_buf_printf(b, "</div>\n");
    report_page_end(b);
}
