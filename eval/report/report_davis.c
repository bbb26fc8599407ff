/* eval/report/report_davis.c — the report's DAVIS results: reading them, drawing their frames, davis.html
 * and their provenance.  See report_davis.h. */
#include "eval/report/report_davis.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/davis_gt.h"
#include "eval/davis/davis_results.h"
#include "eval/report/html.h"
#include "eval/report/report_files.h"
#include "eval/report/report_pages.h"
#include "eval/report/report_pictures.h"
#include "pipeline/images/image_jpeg.h"
#include "pipeline/json.h"

void report_davis_free(report_davis *d)
{
    for (int s = 0; s < d->n_seq; s++) {
        free(d->seq[s].name);
        for (int k = 0; k < d->seq[s].n_frames; k++) free(d->seq[s].frames[k]);
        free(d->seq[s].frames);
        free(d->seq[s].j);
    }
    free(d->seq);
    free(d->split);
    free(d->features);
    free(d->prop_text);
    csv_free(&d->global);
    csv_free(&d->per_seq);
}

/* The sequence of an object (<seq>_<object id>), added when new. */
static int seq_of(report_davis *d, const char *object)
{
    const char *us = strrchr(object, '_');
    int len = us ? (int)(us - object) : (int)strlen(object);
    for (int s = 0; s < d->n_seq; s++)
        if ((int)strlen(d->seq[s].name) == len && !strncmp(d->seq[s].name, object, (size_t)len)) return s;
    d->seq = kc_realloc(d->seq, sizeof *d->seq * (size_t)(d->n_seq + 1));
    report_davis_seq *q = &d->seq[d->n_seq];
    memset(q, 0, sizeof *q);
    q->name = kc_strfmt("%.*s", len, object);
    return d->n_seq++;
}

/* q's frames of the three largest falls J(t-1) - J(t), J before the first listed frame taken as 1. */
static void find_drops(report_davis_seq *q)
{
    int used[4] = {-1, -1, -1, -1};
    for (int r = 0; r < 3 && r < q->n_frames; r++) {
        int best = -1;
        double bd = -INFINITY;
        for (int k = 0; k < q->n_frames; k++) {
            int taken = 0;
            for (int u = 0; u < r; u++) taken |= used[u] == k;
            double fall = (k ? q->j[k - 1] : 1.0) - q->j[k];
            if (!taken && fall > bd) {
                bd = fall;
                best = k;
            }
        }
        used[r] = best;
        q->drops[q->n_drops++] = best;
    }
}

/* The per-frame J of every object (global_results-<split>.json, path): each sequence's mean J per
 * frame, and its falls. */
static int read_per_frame(report_davis *d, const char *path)
{
    json_value root;
    uint8_t *text;
    size_t len;
    if (kc_read_file(path, &text, &len) < 0 || json_parse(&root, (char *)text, len, path) < 0) return -1;
    free(text);
    const json_value *pf = json_get(&root, "per_frame");
    for (int o = 0; o < json_count(pf); o++) {
        const json_value *ob = json_item(pf, o), *fr = json_get(ob, "frames"), *jv = json_get(ob, "J");
        int s = seq_of(d, json_key(pf, o));
        report_davis_seq *q = &d->seq[s];
        int n = json_count(fr);
        if (json_count(jv) != n) {
            kc_fail("%s: per_frame %s has %d frames but %d J values", path, json_key(pf, o), n, json_count(jv));
            json_free(&root);
            return -1;
        }
        if (!q->frames) {
            q->n_frames = n;
            q->frames = kc_calloc((size_t)n + 1, sizeof(char *));
            q->j = kc_calloc((size_t)n + 1, sizeof(double));
            for (int k = 0; k < n; k++) {
                const char *name = json_string(json_item(fr, k));
                q->frames[k] = kc_strdup(name ? name : "");
            }
        }
        for (int k = 0; k < n && k < q->n_frames; k++) {
            double v = 0;
            json_get_number(json_item(jv, k), &v);
            q->j[k] += v;
        }
    }
    json_free(&root);
    for (int s = 0; s < d->n_seq; s++) {
        report_davis_seq *q = &d->seq[s];
        for (int k = 0; k < q->n_frames; k++) q->j[k] /= q->n_obj ? q->n_obj : 1;
        find_drops(q);
    }
    return 0;
}

int report_davis_load(const report_named *in, const char *split, report_davis *d)
{
    memset(d, 0, sizeof *d);
    d->in = in;
    DIR *dir = opendir(in->path);
    if (!dir) return kc_fail("%s: cannot open the DAVIS results of %s (%s)", in->path, in->name, strerror(errno));
    closedir(dir);
    int failed;
    char *p = davis_results_find(in->path, split, 1, &failed);
    if (!p) return -1;
    d->split = davis_results_split(p);
    int rc = csv_read(p, &d->global);
    free(p);
    KC_TRY(rc);
    p = kc_strfmt("%s/per-sequence_results-%s.csv", in->path, d->split);
    rc = csv_read(p, &d->per_seq);
    free(p);
    KC_TRY(rc);
    int cj = csv_col(&d->per_seq, "J-Mean"), cf = csv_col(&d->per_seq, "F-Mean");
    if (cj < 0 || cf < 0) return kc_fail("%s: no J-Mean or F-Mean column", d->per_seq.path);
    for (int r = 0; r < d->per_seq.n_rows; r++) {
        int s = seq_of(d, d->per_seq.rows[r][0]);
        report_davis_seq *q = &d->seq[s];
        q->j_mean += csv_num(d->per_seq.rows[r][cj]);
        q->f_mean += csv_num(d->per_seq.rows[r][cf]);
        q->n_obj++;
    }
    for (int s = 0; s < d->n_seq; s++) {
        d->seq[s].j_mean /= d->seq[s].n_obj;
        d->seq[s].f_mean /= d->seq[s].n_obj;
    }
    p = kc_strfmt("%s/global_results-%s.json", in->path, d->split);
    rc = kc_exists(p) ? read_per_frame(d, p) : 0;
    free(p);
    KC_TRY(rc);
    p = kc_strfmt("%s/propagate.json", in->path);
    uint8_t *text;
    size_t len;
    if (kc_exists(p) && kc_read_file(p, &text, &len) == 0) {
        d->prop_text = (char *)text;
        json_value root;
        if (json_parse(&root, (char *)text, len, p) == 0) {
            const char *f = json_string(json_get(&root, "features"));
            if (f) d->features = kc_strdup(f);
            json_free(&root);
        }
    }
    free(p);
    return 0;
}

/* ---- frames -------------------------------------------------------------------------------- */

/* One DAVIS frame with labels as rel: at thumbnail height from the results PNG, or when full at
 * half size with the annotation (when there is one) beside it. */
static int draw_frame(report *R, const report_davis *d, const char *seq, const char *frame, int full, const char *rel)
{
    char *jpg = kc_strfmt("%s/JPEGImages/480p/%s/%s.jpg", R->davis_root, seq, frame);
    char *res = kc_strfmt("%s/%s/%s.png", d->in->path, seq, frame);
    char *ann = kc_strfmt("%s/Annotations/480p/%s/%s.png", R->davis_root, seq, frame);
    char *out = kc_strfmt("%s/%s", R->out, rel);
    const char *in[3] = {jpg, res, full ? ann : NULL};
    int rc = 0;
    if (!report_stale(R, out, in, 3)) {
        R->kept++;
        report_files_keep(R, rel);
        goto done;
    }
    kc_image im = {0, 0, NULL}, a = {0, 0, NULL}, sa = {0, 0, NULL}, b = {0, 0, NULL}, sb = {0, 0, NULL},
             both = {0, 0, NULL};
    uint8_t *lab = NULL, *gt = NULL;
    if ((rc = image_load_rgb(jpg, &im)) < 0) goto pics;
    if ((rc = report_read_labels(res, im.w, im.h, "frame", jpg, &lab)) < 0) goto pics;
    report_with_labels(&im, lab, &b);
    if (!full) {
        rc = report_thumb(R, &b, &sb);
        if (rc == 0) rc = report_write_jpeg(R, rel, &sb, report_frame_quality(R));
        goto pics;
    }
    if (kc_exists(ann)) {
        if ((rc = report_read_labels(ann, im.w, im.h, "frame", jpg, &gt)) < 0) goto pics;
        report_with_labels(&im, gt, &a);
    }
    const int hw = im.w / 2 > 0 ? im.w / 2 : 1, hh = im.h / 2 > 0 ? im.h / 2 : 1;
    if ((rc = image_shrink_area(&b, hw, hh, &sb)) < 0) goto pics;
    if (a.rgb && (rc = image_shrink_area(&a, hw, hh, &sa)) < 0) goto pics;
    if (sa.rgb) report_side_by_side(&sa, &sb, &both);
    rc = report_write_jpeg(R, rel, both.rgb ? &both : &sb, report_frame_quality(R));
pics:
    image_free(&im);
    image_free(&a);
    image_free(&sa);
    image_free(&b);
    image_free(&sb);
    image_free(&both);
    free(lab);
    free(gt);
done:
    free(jpg);
    free(res);
    free(ann);
    free(out);
    return rc;
}

/* ---- davis.html ---------------------------------------------------------------------------- */

/* The sequences' table: objects, J, F, J&F and the largest fall of J. */
static void sequences_table(kc_buf *b, const report_davis *d, const char *sn)
{
    kc_buf_printf(b, "<table class=\"sortable\">\n<thead><tr><th>sequence</th><th>objects</th><th>J-Mean</th>"
                     "<th>F-Mean</th><th>J&amp;F</th><th>largest fall of J</th></tr></thead>\n<tbody>\n");
    for (int s = 0; s < d->n_seq; s++) {
        const report_davis_seq *q = &d->seq[s];
        char *ss = html_safe_name(q->name);
        kc_buf_printf(b, "<tr><td data-v=\"");
        html_escape(b, q->name);
        kc_buf_printf(b, "\" class=\"text\"><a href=\"#seq-%s-%s\">", sn, ss);
        html_escape(b, q->name);
        kc_buf_printf(b, "</a></td><td data-v=\"%d\">%d</td><td data-v=\"%.9g\">%.1f</td><td data-v=\"%.9g\">%.1f"
                         "</td><td data-v=\"%.9g\">%.1f</td>",
                      q->n_obj, q->n_obj, q->j_mean, 100 * q->j_mean, q->f_mean, 100 * q->f_mean,
                      (q->j_mean + q->f_mean) / 2, 50 * (q->j_mean + q->f_mean));
        if (q->n_drops) {
            int t = q->drops[0];
            double fall = (t ? q->j[t - 1] : 1.0) - q->j[t];
            kc_buf_printf(b, "<td data-v=\"%.9g\">%.1f (frame ", fall, 100 * fall);
            html_escape(b, q->frames[t]);
            kc_buf_printf(b, ")</td>");
        } else {
            kc_buf_printf(b, "<td data-v=\"\"></td>");
        }
        kc_buf_printf(b, "</tr>\n");
        free(ss);
    }
    kc_buf_printf(b, "</tbody>\n</table>\n");
}

/* Draws frame of sequence q (when stale) as davis/<sn>/<ss>/<prefix><frame>.jpg; a new string,
 * that name, or NULL with a message. */
static char *frame_picture(report *R, const report_davis *d, const report_davis_seq *q, const char *sn,
                           const char *ss, const char *frame, const char *prefix, int full)
{
    char *sf = html_safe_name(frame);
    char *rel = kc_strfmt("davis/%s/%s/%s%s.jpg", sn, ss, prefix, sf);
    free(sf);
    if (draw_frame(R, d, q->name, frame, full, rel) == 0) return rel;
    free(rel);
    return NULL;
}

/* One sequence's strip (R->strip frames evenly spaced over its results) and its falls of J. */
static int sequence_strips(kc_buf *b, report *R, const report_davis *d, const report_davis_seq *q, const char *sn)
{
    char *ss = html_safe_name(q->name);
    char *rd = kc_strfmt("%s/%s", d->in->path, q->name);
    char **frames = NULL;
    int nf = 0;
    kc_buf_printf(b, "<h3 id=\"seq-%s-%s\">", sn, ss);
    html_escape(b, q->name);
    kc_buf_printf(b, "</h3>\n<div class=\"strip\">\n");
    int rc = davis_list_frames(rd, ".png", &frames, &nf);
    free(rd);
    int shown = nf < R->strip ? nf : R->strip;
    for (int f = 0; f < shown && rc == 0; f++) {
        int t = shown > 1 ? (int)((long)f * (nf - 1) / (shown - 1)) : 0;
        char *rel = frame_picture(R, d, q, sn, ss, frames[t], "", 0);
        if (!rel) {
            rc = -1;
            break;
        }
        kc_buf_printf(b, "<figure><img src=\"%s\" loading=\"lazy\" alt=\"", rel);
        html_escape(b, frames[t]);
        kc_buf_printf(b, "\"><figcaption>");
        html_escape(b, frames[t]);
        for (int k = 0; k < q->n_frames; k++)
            if (!strcmp(q->frames[k], frames[t])) kc_buf_printf(b, " J %.1f", 100 * q->j[k]);
        kc_buf_printf(b, "</figcaption></figure>\n");
        free(rel);
    }
    if (rc == 0) kc_buf_printf(b, "</div>\n");
    if (rc == 0 && q->n_drops) kc_buf_printf(b, "<p>Where J falls most:</p>\n<div class=\"strip\">\n");
    for (int r = 0; r < q->n_drops && rc == 0; r++) {
        int t = q->drops[r];
        char *rel = frame_picture(R, d, q, sn, ss, q->frames[t], "drop-", 1);
        if (!rel) {
            rc = -1;
            break;
        }
        double before = t ? q->j[t - 1] : 1.0;
        kc_buf_printf(b, "<figure><a href=\"%s\"><img src=\"%s\" loading=\"lazy\" width=\"427\" alt=\"", rel, rel);
        html_escape(b, q->frames[t]);
        kc_buf_printf(b, "\"></a><figcaption>frame ");
        html_escape(b, q->frames[t]);
        kc_buf_printf(b, ": J %.1f after %.1f</figcaption></figure>\n", 100 * q->j[t], 100 * before);
        free(rel);
    }
    if (rc == 0 && q->n_drops) kc_buf_printf(b, "</div>\n");
    davis_free_names(frames, nf);
    free(ss);
    return rc;
}

int report_davis_page(report *R, const report_davis *dn, kc_buf *b)
{
    report_page_begin(b, "", "DAVIS: label propagation per sequence", R);
    kc_buf_printf(b, "<p>J and F per sequence (the mean over its objects, from kc-davis's per-sequence CSV), a strip "
                     "of frames with the propagated labels, and the frames where the sequence's mean J falls most "
                     "from the frame before (ground truth left, propagated labels right).</p>\n");
    for (int k = 0; k < R->n_davis; k++) {
        const report_davis *d = &dn[k];
        char *sn = html_safe_name(d->in->name);
        kc_buf_printf(b, "<h2 id=\"davis-%s\">", sn);
        html_escape(b, d->in->name);
        kc_buf_printf(b, "</h2>\n");
        report_table(b, R, &d->global);
        sequences_table(b, d, sn);
        if (d->features) {
            kc_buf_printf(b, "<p class=\"muted\">features: ");
            html_escape(b, d->features);
            kc_buf_printf(b, " (kc-propagate, its propagate.json)</p>\n");
        }
        int rc = 0;
        for (int s = 0; s < d->n_seq && R->davis_root && rc == 0; s++) rc = sequence_strips(b, R, d, &d->seq[s], sn);
        free(sn);
        KC_TRY(rc);
    }
    report_page_end(b);
    return 0;
}

void report_davis_prov(kc_buf *b, const report_davis *d)
{
    kc_buf_printf(b, "<h3>");
    html_escape(b, d->in->name);
    kc_buf_printf(b, " (DAVIS)</h3>\n<dl class=\"prov\">\n<dt>results</dt><dd>");
    html_escape(b, d->in->path);
    kc_buf_printf(b, "</dd>\n<dt>J&amp;F</dt><dd>");
    html_escape(b, d->global.path);
    kc_buf_printf(b, " (kc-davis)</dd>\n");
    if (d->prop_text) {
        kc_buf_printf(b, "<dt>propagate.json</dt><dd>");
        html_escape(b, d->prop_text);
        kc_buf_printf(b, "</dd>\n");
    }
    kc_buf_printf(b, "</dl>\n");
    if (d->features && kc_exists(d->features)) {
        cache_reader r;
        if (cache_open(&r, d->features, NULL) == 0) {
            report_cache_prov(b, &r);
            cache_close(&r);
        }
    }
}
