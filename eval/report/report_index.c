/* eval/report/report_index.c — the report's index.html: what the results are of, the tables, the
 * galleries, the figures, the provenance.  See report_index.h. */
#include "eval/report/report_index.h"

#include <stdlib.h>
#include <string.h>

#include "eval/report/html.h"
#include "eval/report/report_gallery.h"
#include "eval/report/report_pages.h"
#include "eval/report/report_saliency.h"
#include "eval/tables/table_about.h"

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
    for (int k = 0; k < R->n_saliency; k++) add_net(&names, &base, &n, R->saliency[k].name, 0);
    /* the DAVIS splits read, each once (one, but for folders of different splits) */
    kc_buf splits = {0};
    for (int k = 0; k < R->n_davis; k++) {
        int seen = 0;
        for (int q = 0; q < k; q++) seen |= !strcmp(dn[q].split, dn[k].split);
        if (!seen) kc_buf_printf(&splits, "%s%s", splits.s ? "\", \"" : "", dn[k].split);
    }
    const char *val_split = R->val_split;
    if (!val_split && R->have_ds && !strcmp(R->ds.kind, "voc")) val_split = R->ds.split;
    kc_buf sal = {0}; /* the saliency galleries' datasets */
    for (int g = 0; g < R->n_sg; g++) kc_buf_printf(&sal, "%s%s", g ? ", " : "", R->sg[g].name);
    int voc_tables = 0;
    for (int t = 0; t < R->n_tables; t++) voc_tables |= tables[t].n_cols >= 1 && !strcmp(tables[t].head[0], "network");
    table_about a = {.setting = R->setting, .refine = R->refine, .val_split = val_split, .voc_root = R->voc_root,
                     .has_davis = R->n_davis > 0, .davis_split = splits.s, .davis_root = R->davis_root,
                     .nets = names, .baseline = base, .n_nets = n, .saliency = sal.s,
                     .no_voc = !R->n_scores && !voc_tables && !R->voc_root && !val_split};
    char *line = table_about_line(&a);
    kc_buf_printf(b, "<p class=\"about\">");
    html_escape(b, line);
    kc_buf_printf(b, "</p>\n");
    free(line);
    free(sal.s);
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
    if (R->n_sg) report_saliency_index(b, R);
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
    for (int k = 0; k < R->n_saliency; k++) {
        const sal_run *S = &R->sal[k];
        kc_buf_printf(b, "<h3 id=\"prov-saliency-%d\">", k);
        html_escape(b, S->in->name);
        kc_buf_printf(b, " on ");
        html_escape(b, S->dataset_name);
        kc_buf_printf(b, " (saliency)</h3>\n");
        report_saliency_prov(b, R, k);
    }
    report_page_end(b);
}
