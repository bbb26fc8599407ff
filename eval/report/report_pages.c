/* eval/report/report_pages.c — the report's page frame, tables and provenance, and index.html.  See
 * report_pages.h. */
#include "eval/report/report_pages.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/report/html.h"
#include "eval/report/report_gallery.h"
#include "eval/tables/table_about.h"

void report_page_begin(kc_buf *b, const char *root, const char *title, const report *R)
{
    kc_buf_printf(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>");
    html_escape(b, title);
    kc_buf_printf(b, "</title>\n<link rel=\"stylesheet\" href=\"%sreport.css\">\n"
                     "<script src=\"%sreport.js\" defer></script>\n</head>\n<body>\n"
                     "<nav><a href=\"%sindex.html\">tables and galleries</a>",
                  root, root, root);
    if (R->n_davis) kc_buf_printf(b, "<a href=\"%sdavis.html\">DAVIS</a>", root);
    kc_buf_printf(b, "</nav>\n<h1>");
    html_escape(b, title);
    kc_buf_printf(b, "</h1>\n");
}

void report_page_end(kc_buf *b) { kc_buf_printf(b, "</body>\n</html>\n"); }

int report_page_write(report *R, const char *rel, kc_buf *b)
{
    char *path = report_out_path(R, rel);
    int rc = path ? kc_write_file_atomic(path, b->s, b->n) : -1;
    free(path);
    free(b->s);
    memset(b, 0, sizeof *b);
    return rc;
}

void report_value(kc_buf *b, const char *v)
{
    double x = csv_num(v);
    if (isnan(x)) html_escape(b, v);
    else kc_buf_printf(b, "%.1f", 100 * x);
}

void report_short(kc_buf *b, const char *v)
{
    double x = csv_num(v);
    if (!*v) kc_buf_printf(b, "-");
    else if (isnan(x)) html_escape(b, v);
    else kc_buf_printf(b, "%.4g", x);
}

/* <dt>key</dt><dd>value, escaped</dd> */
static void prov_item(kc_buf *b, const char *key, const char *value)
{
    kc_buf_printf(b, "<dt>");
    html_escape(b, key);
    kc_buf_printf(b, "</dt><dd>");
    html_escape(b, value);
    kc_buf_printf(b, "</dd>\n");
}

void report_cache_prov(kc_buf *b, const cache_reader *r)
{
    static const char *const first[] = {"command", "created", "content_hash", "weights", "weights_sha256", "model",
                                        "dataset", "policy", "features", "features_content_hash", "code_version"};
    kc_buf_printf(b, "<dl class=\"prov\">\n");
    for (size_t k = 0; k < sizeof first / sizeof first[0]; k++) {
        const char *v = cache_attr(r, first[k]);
        if (v) prov_item(b, first[k], v);
    }
    kc_buf_printf(b, "</dl>\n<details><summary>all root attributes of ");
    html_escape(b, r->path);
    kc_buf_printf(b, "</summary>\n<dl class=\"prov\">\n");
    for (int k = 0; k < r->prov.n; k++) prov_item(b, r->prov.key[k], r->prov.value[k]);
    kc_buf_printf(b, "</dl></details>\n");
}

void report_gallery_prov(kc_buf *b, const report *R, const gallery *G)
{
    kc_buf_printf(b, "<dl class=\"prov\">\n<dt>network</dt><dd>");
    html_escape(b, G->net);
    kc_buf_printf(b, "</dd>\n<dt>setting</dt><dd>");
    html_escape(b, G->setting);
    kc_buf_printf(b, "</dd>\n<dt>scores</dt><dd>");
    html_escape(b, G->csv_path);
    kc_buf_printf(b, " (kc-score)</dd>\n");
    if (G->summary) prov_item(b, "summary.csv", G->summary);
    kc_buf_printf(b, "<dt>masks</dt><dd>");
    html_escape(b, G->masks >= 0 ? R->mr[G->masks].path : "(no masks cache given: no pictures)");
    kc_buf_printf(b, "</dd>\n</dl>\n");
    if (G->masks >= 0) report_cache_prov(b, &R->mr[G->masks]);
}

void report_table(kc_buf *b, const report *R, const csv_file *c)
{
    kc_buf_printf(b, "<table class=\"sortable\" data-source=\"");
    html_escape(b, c->path);
    kc_buf_printf(b, "\">\n<thead><tr>");
    for (int i = 0; i < c->n_cols; i++) {
        kc_buf_printf(b, "<th>");
        html_escape(b, c->head[i]);
        kc_buf_printf(b, "</th>");
    }
    kc_buf_printf(b, "</tr></thead>\n<tbody>\n");
    for (int r = 0; r < c->n_rows; r++) {
        kc_buf_printf(b, "<tr>");
        for (int i = 0; i < c->n_cols; i++) {
            const char *v = c->rows[r][i];
            kc_buf_printf(b, "<td data-v=\"");
            html_escape(b, v);
            kc_buf_printf(b, "\"%s>", isnan(csv_num(v)) ? " class=\"text\"" : "");
            const gallery *link = NULL;
            if (i == 0)
                for (int k = 0; k < R->n_g && !link; k++)
                    if (!strcmp(R->g[k].net, v)) link = &R->g[k];
            if (link) {
                kc_buf_printf(b, "<a href=\"%s\">", link->page);
                html_escape(b, v);
                kc_buf_printf(b, "</a>");
            } else {
                report_value(b, v);
            }
            kc_buf_printf(b, "</td>");
        }
        kc_buf_printf(b, "</tr>\n");
    }
    kc_buf_printf(b, "</tbody>\n</table>\n");
}

/* ---- index --------------------------------------------------------------------------------- */

/* The galleries' table: network, setting, images, mean Jaccard, CorLoc and knife edge. */
static void galleries_table(kc_buf *b, const report *R)
{
    kc_buf_printf(b, "<h2>Galleries</h2>\n<table class=\"sortable\">\n<thead><tr><th>network</th><th>setting</th>"
                     "<th>images</th><th>Jaccard</th><th>CorLoc</th><th>knife edge</th></tr></thead>\n<tbody>\n");
    for (int k = 0; k < R->n_g; k++) {
        const gallery *G = &R->g[k];
        int nj, nc, nk;
        double mj = gallery_mean(G, COL_JACCARD, &nj), mc = gallery_mean(G, COL_CORLOC, &nc),
               mk = gallery_mean(G, COL_KNIFE, &nk);
        kc_buf_printf(b, "<tr><td data-v=\"");
        html_escape(b, G->net);
        kc_buf_printf(b, "\" class=\"text\"><a href=\"%s\">", G->page);
        html_escape(b, G->net);
        kc_buf_printf(b, "</a></td><td data-v=\"");
        html_escape(b, G->setting);
        kc_buf_printf(b, "\" class=\"text\">");
        html_escape(b, G->setting);
        kc_buf_printf(b, "</td><td data-v=\"%d\">%d</td><td data-v=\"%.9g\">%.1f</td><td data-v=\"%.9g\">%.1f</td>"
                         "<td data-v=\"%.9g\">%.1f</td></tr>\n",
                      G->n, G->n, mj, 100 * mj, mc, 100 * mc, mk, 100 * mk);
    }
    kc_buf_printf(b, "</tbody>\n</table>\n");
}

/* Adds name to the list (names, baseline flags) unless it is there. */
static void add_net(const char ***names, int **base, int *n, const char *name, int baseline)
{
    for (int i = 0; i < *n; i++)
        if (!strcmp((*names)[i], name)) return;
    *names = kc_realloc(*names, sizeof **names * (size_t)(*n + 1));
    *base = kc_realloc(*base, sizeof **base * (size_t)(*n + 1));
    (*names)[*n] = name;
    (*base)[(*n)++] = baseline;
}

/* What the results are of, one line (eval/tables/table_about.h): the setting and refinement, the VOC val
 * split (--val-split, else that of --images voc:ROOT:SPLIT) and root, the DAVIS split of the results
 * read and its root, the networks: the rows of the first kc-table report table (first column
 * `network`, baselines from its `kind`), then those of --scores and --davis not in it. */
static void about_line(kc_buf *b, const report *R, const csv_file *tables, const report_davis *dn)
{
    const char **names = NULL;
    int *base = NULL, n = 0;
    for (int t = 0; t < R->n_tables; t++) {
        const csv_file *c = &tables[t];
        if (c->n_cols < 1 || strcmp(c->head[0], "network")) continue;
        int kind = csv_col(c, "kind");
        for (int r = 0; r < c->n_rows; r++)
            add_net(&names, &base, &n, c->rows[r][0], kind >= 0 && !strcmp(c->rows[r][kind], "baseline"));
        break;
    }
    for (int k = 0; k < R->n_scores; k++) add_net(&names, &base, &n, R->scores[k].name, 0);
    for (int k = 0; k < R->n_davis; k++) add_net(&names, &base, &n, R->davis[k].name, 0);
    /* the DAVIS splits read, each once (one, but for folders of different splits) */
    kc_buf splits = {0};
    for (int k = 0; k < R->n_davis; k++) {
        int seen = 0;
        for (int q = 0; q < k; q++) seen |= !strcmp(dn[q].split, dn[k].split);
        if (!seen) kc_buf_printf(&splits, "%s%s", splits.s ? "\", \"" : "", dn[k].split);
    }
    const char *val_split = R->val_split;
    if (!val_split && R->have_ds && !strcmp(R->ds.kind, "voc")) val_split = R->ds.split;
    table_about a = {.setting = R->setting, .refine = R->refine, .val_split = val_split, .voc_root = R->voc_root,
                     .has_davis = R->n_davis > 0, .davis_split = splits.s, .davis_root = R->davis_root,
                     .nets = names, .baseline = base, .n_nets = n};
    char *line = table_about_line(&a);
    kc_buf_printf(b, "<p class=\"about\">");
    html_escape(b, line);
    kc_buf_printf(b, "</p>\n");
    free(line);
    free(splits.s);
    free(names);
    free(base);
}

void report_index(kc_buf *b, const report *R, const csv_file *tables, const report_figures *figs,
                  const report_davis *dn)
{
    report_page_begin(b, "", R->title, R);
    about_line(b, R, tables, dn);
    char when[32];
    kc_utc_created(when);
    kc_buf_printf(b, "<p class=\"muted\">written %s by keycut %s: ", when, KC_VERSION);
    html_escape(b, kc_cmdline());
    kc_buf_printf(b, "</p>\n");
    for (int t = 0; t < R->n_tables; t++) {
        kc_buf_printf(b, "<h2>");
        html_escape(b, R->tables[t].name);
        kc_buf_printf(b, "</h2>\n<p class=\"muted\">from ");
        html_escape(b, tables[t].path);
        kc_buf_printf(b, " (kc-table; fractions shown in percent, the exact value in each cell's data; click a "
                         "column to sort)</p>\n");
        report_table(b, R, &tables[t]);
    }
    if (R->n_g) galleries_table(b, R);
    if (R->n_davis) kc_buf_printf(b, "<p><a href=\"davis.html\">DAVIS per sequence</a></p>\n");
    if (figs->n) {
        kc_buf_printf(b, "<h2>Figures</h2>\n<p class=\"muted\">from ");
        html_escape(b, R->figures);
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
        html_escape(b, G->net);
        kc_buf_printf(b, " at ");
        html_escape(b, G->setting);
        kc_buf_printf(b, " (VOC)</h3>\n");
        report_gallery_prov(b, R, G);
        free(sn);
    }
    for (int k = 0; k < R->n_davis; k++) report_davis_prov(b, &dn[k]);
    report_page_end(b);
}
