/* eval/report/report_pages.c — the report's page frame, tables and provenance.  See report_pages.h. */
#include "eval/report/report_pages.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/report/html.h"
#include "eval/report/report_files.h"

void report_page_begin(kc_buf *b, const char *root, const char *title, const report *R)
{
    kc_buf_printf(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>");
    html_escape(b, title);
    kc_buf_printf(b, "</title>\n<link rel=\"stylesheet\" href=\"%sreport.css\">\n"
                     "<script src=\"%sreport.js\" defer></script>\n</head>\n<body>\n"
                     "<nav><a href=\"%sindex.html\">tables and galleries</a>",
                  root, root, root);
    if (R->n_davis) kc_buf_printf(b, "<a href=\"%sdavis.html\">DAVIS</a>", root);
    for (int s = 0; s < R->n_sg; s++) {
        kc_buf_printf(b, "<a href=\"%s%s\">saliency: ", root, R->sg[s].page);
        html_escape(b, R->sg[s].name);
        kc_buf_printf(b, "</a>");
    }
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
