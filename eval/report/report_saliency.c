/* eval/report/report_saliency.c — the report's saliency galleries: reading kc-saliency's folders, their
 * photos and layers, the gallery pages and the index's section.  See report_saliency.h. */
#include "eval/report/report_saliency.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "eval/report/html.h"
#include "eval/report/report_data.h"
#include "eval/report/report_files.h"
#include "eval/report/report_pages.h"
#include "eval/report/report_pictures.h"
#include "eval/saliency/saliency.h"
#include "pipeline/images/image.h"

/* The label each layer is drawn with (its colour, eval/figures/overlay.h): ground truth, decoder, solver. */
enum { LABEL_GT = 1, LABEL_NONE = 2, LABEL_BS = 3 };
static const char *const refine_name[2] = {"none", "bs"};
static const char *const refine_text[2] = {"decoder", "solver"};
static const char *const summary_col[SAL_N_SUMMARY] = {"images", "max_fbeta", "iou", "accuracy", "threshold"};

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The first line of the text file path, a new string. */
static int first_line(const char *path, char **line)
{
    uint8_t *text;
    size_t len;
    KC_TRY(kc_read_text(path, &text, &len));
    *line = kc_strfmt("%.*s", (int)strcspn((char *)text, "\r\n"), (char *)text);
    free(text);
    return 0;
}

/* summary.csv of run S: its setting, dataset and the values of refine none and bs. */
static int read_summary(sal_run *S)
{
    KC_TRY(csv_read(S->summary_path, &S->summary));
    const csv_file *c = &S->summary;
    int cs = csv_col(c, "setting"), cr = csv_col(c, "refine"), cd = csv_col(c, "dataset"), cv[SAL_N_SUMMARY];
    int ok = cs >= 0 && cr >= 0 && cd >= 0;
    for (int k = 0; k < SAL_N_SUMMARY; k++) ok &= (cv[k] = csv_col(c, summary_col[k])) >= 0;
    if (!ok)
        return kc_fail("%s: not a kc-saliency summary (its header must have setting, refine, dataset, images, "
                       "max_fbeta, iou, accuracy, threshold)", S->summary_path);
    const char *setting = NULL, *dataset = NULL;
    for (int r = 0; r < c->n_rows; r++) {
        char **row = c->rows[r];
        int k = !strcmp(row[cr], "none") ? 0 : !strcmp(row[cr], "bs") ? 1 : -1;
        if (k < 0 || S->sum[k][0])
            return kc_fail("%s: line %d: refine '%s' (expected one line of none and one of bs)", S->summary_path, r + 2,
                           row[cr]);
        if (setting && (strcmp(setting, row[cs]) || strcmp(dataset, row[cd])))
            return kc_fail("%s: its two lines are of different settings or datasets", S->summary_path);
        setting = row[cs];
        dataset = row[cd];
        for (int v = 0; v < SAL_N_SUMMARY; v++) S->sum[k][v] = row[cv[v]];
    }
    if (!S->sum[0][0] || !S->sum[1][0])
        return kc_fail("%s: expected one line of refine none and one of bs", S->summary_path);
    if (!*dataset) return kc_fail("%s: no dataset named", S->summary_path);
    S->setting = kc_strdup(setting);
    S->dataset_name = kc_strdup(dataset);
    return 0;
}

/* One --saliency NET=DIR into S: its files checked, summary.csv, the per-image CSV, the dataset opened. */
static int read_run(const report_named *in, sal_run *S)
{
    memset(S, 0, sizeof *S);
    S->in = in;
    S->gallery = -1;
    if (!is_dir(in->path))
        return kc_fail("%s: cannot open the saliency scores folder of %s (%s)", in->path, in->name,
                       kc_exists(in->path) ? "not a folder" : "no such folder");
    S->summary_path = kc_strfmt("%s/summary.csv", in->path);
    S->png_dir = kc_strfmt("%s/png", in->path);
    char *spec_path = kc_strfmt("%s/dataset", in->path), *net_path = kc_strfmt("%s/network", in->path);
    int rc = 0;
    if (!kc_exists(S->summary_path))
        rc = kc_fail("%s: no such file (the saliency scores of %s: a kc-saliency folder?)", S->summary_path, in->name);
    else if (!kc_exists(spec_path))
        rc = kc_fail("%s: no such file (the dataset of the saliency scores of %s)", spec_path, in->name);
    else if (!is_dir(S->png_dir))
        rc = kc_fail("%s: no such folder (the masks of %s: kc-saliency --png)", S->png_dir, in->name);
    if (rc == 0) rc = read_summary(S);
    if (rc == 0) rc = first_line(spec_path, &S->spec);
    if (rc == 0 && strncmp(S->spec, "saliency:", 9))
        rc = kc_fail("%s: '%s' is not a saliency:ROOT dataset", spec_path, S->spec);
    if (rc == 0 && !is_dir(S->spec + 9))
        rc = kc_fail("%s: the dataset root %s is gone (no such folder)", spec_path, S->spec + 9);
    if (rc == 0 && dataset_open(&S->ds, S->spec) < 0) rc = kc_fail_prefix("%s", spec_path);
    if (rc == 0) S->have_ds = 1;
    if (rc == 0 && kc_exists(net_path)) rc = first_line(net_path, &S->network_file);
    if (rc == 0) {
        S->csv_path = kc_strfmt("%s/%s.csv", in->path, S->setting);
        if (!kc_exists(S->csv_path))
            rc = kc_fail("%s: no such file (the per-image scores of %s's summary.csv)", S->csv_path, in->path);
    }
    if (rc == 0) rc = csv_read(S->csv_path, &S->table);
    if (rc == 0) {
        const csv_file *c = &S->table;
        if (csv_col(c, "id") != 0 || csv_col(c, "setting") < 0 || csv_col(c, "refine") < 0 || csv_col(c, "iou") < 0 ||
            csv_col(c, "fbeta") < 0)
            rc = kc_fail("%s: not a kc-saliency per-image CSV (its header must start with id and have setting, "
                         "refine, iou and fbeta)", S->csv_path);
    }
    free(spec_path);
    free(net_path);
    return rc;
}

/* 0, 1, 2 for ECSSD, DUTS-TE, DUT-OMRON, 3 for the others. */
static int dataset_rank(const char *name)
{
    static const char *const known[] = {"ECSSD", "DUTS-TE", "DUT-OMRON"};
    for (int k = 0; k < 3; k++)
        if (!strcmp(name, known[k])) return k;
    return 3;
}

static int cmp_gallery(const void *pa, const void *pb)
{
    const sal_gallery *a = pa, *b = pb;
    int ra = dataset_rank(a->name), rb = dataset_rank(b->name);
    return ra != rb ? ra - rb : strcmp(a->name, b->name);
}

/* An image id and where it was first seen, for the lookups. */
typedef struct id_pos {
    const char *id;
    int pos;
} id_pos;

static int cmp_id(const void *pa, const void *pb) { return strcmp(((const id_pos *)pa)->id, ((const id_pos *)pb)->id); }

static int cmp_image(const void *pa, const void *pb)
{
    const sal_image *a = pa, *b = pb;
    int an = isnan(a->key), bn = isnan(b->key);
    if (an != bn) return an - bn;
    if (!an && a->key != b->key) return a->key < b->key ? -1 : 1;
    return a->pos - b->pos;
}

/* The index of id in the sorted (n) list, -1 when absent. */
static int find_id(const id_pos *sorted, int n, const char *id)
{
    id_pos key = {id, 0};
    const id_pos *hit = n ? bsearch(&key, sorted, (size_t)n, sizeof *sorted, cmp_id) : NULL;
    return hit ? hit->pos : -1;
}

/* The images of gallery G: every id of its runs' CSVs, in the page's order, with their photos,
 * ground truths and PNGs checked; each run's values per image. */
static int build_gallery(report *R, sal_gallery *G)
{
    /* every id once, first seen first; the key: the first run's solver IoU */
    int n_rows = 0;
    for (int r = 0; r < G->n_run; r++) n_rows += R->sal[G->run[r]].table.n_rows;
    id_pos *all = kc_calloc((size_t)n_rows + 1, sizeof *all);
    int n = 0;
    for (int r = 0; r < G->n_run; r++) {
        const csv_file *c = &R->sal[G->run[r]].table;
        for (int i = 0; i < c->n_rows; i++, n++) all[n] = (id_pos){c->rows[i][0], n};
    }
    qsort(all, (size_t)n, sizeof *all, cmp_id);
    int u = 0;
    for (int i = 0; i < n; i++) /* equal ids: the first seen (smallest pos) first, as qsort leaves them unordered */
        if (u && !strcmp(all[u - 1].id, all[i].id)) {
            if (all[i].pos < all[u - 1].pos) all[u - 1].pos = all[i].pos;
        } else all[u++] = all[i];
    G->n_img = u;
    G->img = kc_calloc((size_t)u + 1, sizeof *G->img);
    for (int i = 0; i < u; i++) {
        sal_image *m = &G->img[i];
        m->id = kc_strdup(all[i].id);
        m->safe = html_safe_name(m->id);
        m->pos = all[i].pos;
        m->key = NAN;
    }
    const sal_run *first = &R->sal[G->run[0]];
    int cr = csv_col(&first->table, "refine"), ci = csv_col(&first->table, "iou");
    for (int i = 0; i < first->table.n_rows; i++) {
        char **row = first->table.rows[i];
        if (strcmp(row[cr], "bs")) continue;
        id_pos key = {row[0], 0};
        const id_pos *hit = bsearch(&key, all, (size_t)u, sizeof *all, cmp_id);
        G->img[hit - all].key = csv_num(row[ci]);
    }
    qsort(G->img, (size_t)u, sizeof *G->img, cmp_image);
    /* the lookup: id -> index in the page's order */
    for (int i = 0; i < u; i++) all[i] = (id_pos){G->img[i].id, i};
    qsort(all, (size_t)u, sizeof *all, cmp_id);
    int rc = 0;
    for (int r = 0; r < G->n_run && rc == 0; r++) {
        sal_run *S = &R->sal[G->run[r]];
        const csv_file *c = &S->table;
        int cs = csv_col(c, "setting"), crf = csv_col(c, "refine"), col[2] = {csv_col(c, "iou"), csv_col(c, "fbeta")};
        S->v = kc_calloc((size_t)u * SAL_N_VALUES + 1, sizeof *S->v);
        S->png = kc_calloc((size_t)u + 1, sizeof *S->png);
        for (int k = 0; k < u * SAL_N_VALUES; k++) S->v[k] = "";
        /* the dataset's ids, for the photos */
        id_pos *ds = kc_calloc((size_t)S->ds.n + 1, sizeof *ds);
        for (int j = 0; j < S->ds.n; j++) ds[j] = (id_pos){S->ds.ids[j], j};
        qsort(ds, (size_t)S->ds.n, sizeof *ds, cmp_id);
        for (int row = 0; row < c->n_rows && rc == 0; row++) {
            char **f = c->rows[row];
            int i = find_id(all, u, f[0]), k = !strcmp(f[crf], "none") ? 0 : !strcmp(f[crf], "bs") ? 1 : -1;
            if (strcmp(f[cs], S->setting)) {
                rc = kc_fail("%s: line %d is of setting '%s', summary.csv says '%s'", S->csv_path, row + 2, f[cs],
                             S->setting);
                break;
            }
            if (k < 0) {
                rc = kc_fail("%s: line %d: refine '%s', expected none or bs", S->csv_path, row + 2, f[crf]);
                break;
            }
            S->v[i * SAL_N_VALUES + 2 * k] = f[col[0]];
            S->v[i * SAL_N_VALUES + 2 * k + 1] = f[col[1]];
            if (S->png[i]) continue;
            sal_image *m = &G->img[i];
            int j = find_id(ds, S->ds.n, m->id), w, h;
            if (j < 0) {
                rc = kc_fail("%s: image %s is not in the dataset %s (%s/dataset)", S->csv_path, m->id, S->spec,
                             S->in->path);
                break;
            }
            if (!m->photo) {
                m->photo = S->ds.paths[j];
                m->gt = dataset_saliency_gt(&S->ds, j);
                rc = image_size(m->photo, &m->w, &m->h);
                if (rc == 0 && !kc_exists(m->gt)) rc = kc_fail("%s: no such file (the ground truth of %s)", m->gt, m->id);
                if (rc == 0) rc = image_size(m->gt, &w, &h);
                if (rc == 0 && (w != m->w || h != m->h))
                    rc = kc_fail("%s: %dx%d, but its image %s is %dx%d", m->gt, w, h, m->photo, m->w, m->h);
                if (rc < 0) break;
            }
            S->png[i] = kc_strfmt("%s/%s.png", S->png_dir, m->id);
            if (!kc_exists(S->png[i])) rc = kc_fail("%s: no such file (the masks of image %s)", S->png[i], m->id);
            else if ((rc = image_size(S->png[i], &w, &h)) == 0 && (w != m->w || h != m->h))
                rc = kc_fail("%s: %dx%d, but its image %s is %dx%d", S->png[i], w, h, m->photo, m->w, m->h);
        }
        free(ds);
    }
    free(all);
    return rc;
}

int report_saliency_load(report *R)
{
    R->sal = kc_calloc((size_t)R->n_saliency + 1, sizeof *R->sal);
    for (int k = 0; k < R->n_saliency; k++) {
        KC_TRY(read_run(&R->saliency[k], &R->sal[k]));
        sal_run *S = &R->sal[k];
        int g = 0;
        while (g < R->n_sg && strcmp(R->sg[g].name, S->dataset_name)) g++;
        if (g == R->n_sg) {
            R->sg = kc_realloc(R->sg, sizeof *R->sg * (size_t)(R->n_sg + 1));
            memset(&R->sg[g], 0, sizeof *R->sg);
            R->sg[g].name = kc_strdup(S->dataset_name);
            R->n_sg++;
        }
        sal_gallery *G = &R->sg[g];
        for (int r = 0; r < G->n_run; r++)
            if (!strcmp(R->sal[G->run[r]].in->name, S->in->name))
                return kc_fail("%s: network %s is given twice on %s (also %s)", S->in->path, S->in->name, G->name,
                               R->sal[G->run[r]].in->path);
        G->run = kc_realloc(G->run, sizeof(int) * (size_t)(G->n_run + 1));
        G->run[G->n_run++] = k;
    }
    if (R->n_sg) qsort(R->sg, (size_t)R->n_sg, sizeof *R->sg, cmp_gallery);
    for (int g = 0; g < R->n_sg; g++) {
        sal_gallery *G = &R->sg[g];
        G->safe = html_safe_name(G->name);
        G->page = kc_strfmt("saliency-%s.html", G->safe);
        for (int r = 0; r < G->n_run; r++) R->sal[G->run[r]].gallery = g;
        KC_TRY(build_gallery(R, G));
    }
    return 0;
}

/* ---- the layers ---------------------------------------------------------------------------- */

/* Entry k's labels of the set S (ctx_index -1: the ground truth; 2 run + r: run's mask r). */
static int sal_labels(report *R, const report_layer_set *S, int k, int *W, int *H, uint8_t **labels)
{
    const sal_gallery *G = S->ctx;
    const sal_image *m = &G->img[k];
    const size_t n = (size_t)m->w * m->h;
    *W = m->w;
    *H = m->h;
    *labels = NULL;
    if (S->ctx_index < 0) {
        kc_image gt = {0, 0, NULL};
        KC_TRY(image_load_rgb(m->gt, &gt));
        if (gt.w != m->w || gt.h != m->h) {
            image_free(&gt);
            return kc_fail("%s: %dx%d, but its image %s is %dx%d", m->gt, gt.w, gt.h, m->photo, m->w, m->h);
        }
        *labels = kc_malloc(n);
        saliency_luma(gt.rgb, (long)n, *labels);
        for (size_t p = 0; p < n; p++) (*labels)[p] = (*labels)[p] ? LABEL_GT : 0;
        image_free(&gt);
        return 0;
    }
    const sal_run *run = &R->sal[S->ctx_index / 2];
    const int bit = S->ctx_index % 2 ? 2 : 1, label = S->ctx_index % 2 ? LABEL_BS : LABEL_NONE;
    int w, h;
    KC_TRY(image_read_png_index(run->png[k], &w, &h, labels));
    if (w != m->w || h != m->h) {
        free(*labels);
        *labels = NULL;
        return kc_fail("%s: %dx%d, but its image %s is %dx%d", run->png[k], w, h, m->photo, m->w, m->h);
    }
    for (size_t p = 0; p < n; p++) (*labels)[p] = (*labels)[p] & bit ? label : 0;
    return 0;
}

/* The folder of gallery G's data: "data/saliency-<dataset>/<what>/", a new string. */
static char *data_dir(const sal_gallery *G, const char *what) { return kc_strfmt("data/saliency-%s/%s/", G->safe, what); }

/* The folder name of run k's mask r within its gallery's data: "<net>-none", "<net>-bs". */
static char *run_dir_name(const report *R, int k, int r)
{
    char *sn = html_safe_name(R->sal[k].in->name), *name = kc_strfmt("%s-%s", sn, refine_name[r]);
    free(sn);
    return name;
}

/* The layer set of gallery G: which -1 the ground truth, else 2 k + r (run k, mask r). */
static void sal_set(const report *R, const sal_gallery *G, int which, report_layer_set *S)
{
    char *name = which < 0 ? kc_strdup("gt") : run_dir_name(R, which / 2, which % 2);
    char *what = kc_strfmt("saliency %s: %s", G->safe, which < 0 ? "the ground truth" : name);
    report_layer_set_init(S, data_dir(G, name), what, G->n_img);
    free(name);
    S->labels = sal_labels;
    S->ctx = G;
    S->ctx_index = which;
    S->common = kc_calloc((size_t)G->n_run + 1, sizeof *S->common);
    for (int r = 0; r < G->n_run; r++) S->common[S->n_common++] = R->sal[G->run[r]].csv_path; /* the order */
    for (int i = 0; i < G->n_img; i++) {
        const sal_image *m = &G->img[i];
        const char *labels = which < 0 ? m->gt : R->sal[which / 2].png[i];
        if (!labels) continue; /* not in this run's CSV */
        S->id[i] = m->id;
        S->in[2 * i] = kc_strdup(m->photo);
        S->in[2 * i + 1] = kc_strdup(labels);
    }
}

/* f over every layer set of every gallery. */
static int each_set(report *R, int (*f)(report *R, const report_layer_set *S, kc_buf *b), kc_buf *b)
{
    int rc = 0;
    for (int g = 0; g < R->n_sg && rc == 0; g++) {
        const sal_gallery *G = &R->sg[g];
        for (int w = -1; w < 2 * G->n_run && rc == 0; w++) {
            report_layer_set S;
            sal_set(R, G, w < 0 ? -1 : 2 * G->run[w / 2] + w % 2, &S);
            rc = f(R, &S, b);
            report_layer_set_free(&S);
        }
    }
    return rc;
}

static int write_set(report *R, const report_layer_set *S, kc_buf *b)
{
    (void)b;
    return report_write_layer_set(R, S);
}

int report_saliency_draw(report *R)
{
    for (int g = 0; g < R->n_sg; g++) {
        const sal_gallery *G = &R->sg[g];
        for (int i = 0; i < G->n_img; i++) {
            char *rel = kc_strfmt("photo/saliency-%s/%s", G->safe, G->img[i].safe);
            int rc = report_draw_photo(R, G->img[i].photo, rel);
            free(rel);
            KC_TRY(rc);
        }
    }
    return each_set(R, write_set, NULL);
}

int report_saliency_hashes(report *R, kc_buf *b) { return each_set(R, report_layer_set_hashes, b); }

/* ---- pages --------------------------------------------------------------------------------- */

/* <td> of a fraction (in percent, the exact text in data-v) */
static void value_cell(kc_buf *b, const char *v)
{
    kc_buf_printf(b, "<td data-v=\"");
    html_escape(b, v);
    kc_buf_printf(b, "\">");
    report_value(b, v);
    kc_buf_printf(b, "</td>");
}

static void text_cell(kc_buf *b, const char *v, const char *href)
{
    kc_buf_printf(b, "<td data-v=\"");
    html_escape(b, v);
    kc_buf_printf(b, "\" class=\"text\">");
    if (href) kc_buf_printf(b, "<a href=\"%s\">", href);
    html_escape(b, v);
    if (href) kc_buf_printf(b, "</a>");
    kc_buf_printf(b, "</td>");
}

/* The summary of gallery G: per network and refinement, summary.csv's values. */
static void summary_table(kc_buf *b, const report *R, const sal_gallery *G)
{
    kc_buf_printf(b, "<table class=\"sortable\">\n<thead><tr><th>network</th><th>mask</th><th>images</th>"
                     "<th>max F-beta</th><th>IoU</th><th>accuracy</th><th>threshold</th></tr></thead>\n<tbody>\n");
    for (int r = 0; r < G->n_run; r++) {
        const sal_run *S = &R->sal[G->run[r]];
        for (int k = 0; k < 2; k++) {
            kc_buf_printf(b, "<tr>");
            text_cell(b, S->in->name, NULL);
            text_cell(b, k ? "solver (bs)" : "decoder (none)", NULL);
            kc_buf_printf(b, "<td data-v=\"");
            html_escape(b, S->sum[k][SAL_IMAGES]);
            kc_buf_printf(b, "\">");
            html_escape(b, S->sum[k][SAL_IMAGES]);
            kc_buf_printf(b, "</td>");
            for (int v = SAL_MAX_FBETA; v <= SAL_ACCURACY; v++) value_cell(b, S->sum[k][v]);
            kc_buf_printf(b, "<td data-v=\"");
            html_escape(b, S->sum[k][SAL_THRESHOLD]);
            kc_buf_printf(b, "\">");
            report_short(b, S->sum[k][SAL_THRESHOLD]);
            kc_buf_printf(b, "</td></tr>\n");
        }
    }
    kc_buf_printf(b, "</tbody>\n</table>\n");
}

/* The controls (report.js): filter by id, a bound on the sort key, sort by each network's IoU
 * or F-beta (decoder, solver) or id, pages.  The values' attributes are data-r<j>-<none|bs>-<iou|fbeta>. */
static void controls(kc_buf *b, const report *R, const sal_gallery *G)
{
    kc_buf_printf(b, "<div class=\"controls\">\n<label>id contains <input id=\"filter\" type=\"search\" size=\"14\"></label>\n"
                     "<label>sort key at most <input id=\"jmax\" data-col=\"sortkey\" type=\"number\" min=\"0\" "
                     "max=\"100\" step=\"1\" size=\"4\"> %%</label>\n<label>sort by <select id=\"sortkey\">");
    for (int r = 0; r < G->n_run; r++)
        for (int k = 1; k >= 0; k--)
            for (int q = 0; q < 2; q++) {
                kc_buf_printf(b, "<option value=\"r%d-%s-%s\">", r, refine_name[k], q ? "fbeta" : "iou");
                html_escape(b, R->sal[G->run[r]].in->name);
                kc_buf_printf(b, " %s %s</option>", q ? "F-beta" : "IoU", refine_text[k]);
            }
    kc_buf_printf(b, "<option value=\"id\">id</option></select></label>\n"
                     "<select id=\"order\"><option value=\"asc\">ascending (worst first)</option>"
                     "<option value=\"desc\">descending</option></select>\n"
                     "<label>per page <select id=\"pagesize\"><option>50</option><option selected>100</option>"
                     "<option>500</option><option value=\"all\">all</option></select></label>\n"
                     "<button id=\"prev\" type=\"button\">previous</button><button id=\"next\" type=\"button\">next"
                     "</button>\n<span id=\"status\" class=\"muted\"></span>\n</div>\n");
}

/* One thumbnail: the photo, its layer from data folder dir, slot "chunk.slot"; title says which. */
static void thumb(kc_buf *b, const sal_gallery *G, int i, const char *dir, const char *title)
{
    const sal_image *m = &G->img[i];
    kc_buf_printf(b, "<span class=\"ov\" data-src=\"%s\" data-k=\"%d.%d\" title=\"", dir, i / REPORT_CHUNK,
                  i % REPORT_CHUNK);
    html_escape(b, title);
    kc_buf_printf(b, "\"><img src=\"photo/saliency-%s/%s.t.jpg\" loading=\"lazy\" alt=\"", G->safe, m->safe);
    html_escape(b, title);
    kc_buf_printf(b, "\"></span>");
}

static void item(kc_buf *b, const report *R, const sal_gallery *G, int i)
{
    const sal_image *m = &G->img[i];
    kc_buf_printf(b, "<li class=\"item wide\" data-id=\"");
    html_escape(b, m->id);
    kc_buf_printf(b, "\"");
    for (int r = 0; r < G->n_run; r++) {
        const sal_run *S = &R->sal[G->run[r]];
        for (int v = 0; v < SAL_N_VALUES; v++) {
            kc_buf_printf(b, " data-r%d-%s-%s=\"", r, refine_name[v / 2], v % 2 ? "fbeta" : "iou");
            html_escape(b, S->v[i * SAL_N_VALUES + v]);
            kc_buf_printf(b, "\"");
        }
    }
    kc_buf_printf(b, "%s><a href=\"photo/saliency-%s/%s.jpg\">", i >= 100 ? " hidden" : "", G->safe, m->safe);
    char *dir = data_dir(G, "gt");
    thumb(b, G, i, dir, "ground truth");
    free(dir);
    for (int r = 0; r < G->n_run; r++) {
        const sal_run *S = &R->sal[G->run[r]];
        if (!S->png[i]) continue;
        for (int k = 0; k < 2; k++) {
            char *name = run_dir_name(R, G->run[r], k), *title = kc_strfmt("%s: %s", S->in->name, refine_text[k]);
            dir = data_dir(G, name);
            thumb(b, G, i, dir, title);
            free(dir);
            free(name);
            free(title);
        }
    }
    kc_buf_printf(b, "</a>\n<div class=\"cap\"><span class=\"id\">");
    html_escape(b, m->id);
    kc_buf_printf(b, "</span>");
    for (int r = 0; r < G->n_run; r++) {
        const sal_run *S = &R->sal[G->run[r]];
        const char *const *v = S->v + i * SAL_N_VALUES;
        kc_buf_printf(b, "<br>");
        html_escape(b, S->in->name);
        kc_buf_printf(b, ": IoU ");
        report_value(b, v[SAL_NONE_IOU]);
        kc_buf_printf(b, " / ");
        report_value(b, v[SAL_BS_IOU]);
        kc_buf_printf(b, " &middot; F ");
        report_value(b, v[SAL_NONE_FBETA]);
        kc_buf_printf(b, " / ");
        report_value(b, v[SAL_BS_FBETA]);
    }
    kc_buf_printf(b, "</div></li>\n");
}

void report_saliency_page(kc_buf *b, const report *R, int s)
{
    const sal_gallery *G = &R->sg[s];
    char *title = kc_strfmt("saliency on %s: %d images, %d network%s", G->name, G->n_img, G->n_run, kc_s(G->n_run));
    report_page_begin(b, "", title, R);
    free(title);
    kc_buf_printf(b, "<p>kc-saliency's scores (TokenCut's protocol): max F-beta over thresholds, mean IoU and "
                     "accuracy at 0.5, of the decoder's mask (none) and the bilateral solver's output (bs).</p>\n");
    summary_table(b, R, G);
    kc_buf_printf(b, "<p>Each image: the ground truth, then per network the decoder's mask and the solver's "
                     "(&gt; 0.5); below, each network's IoU and F-beta (at the dataset's best threshold), decoder / "
                     "solver, in percent.  Worst solver IoU of ");
    html_escape(b, R->sal[G->run[0]].in->name);
    kc_buf_printf(b, " first; click a picture for the full-size photo.</p>\n<details><summary>provenance</summary>\n");
    for (int r = 0; r < G->n_run; r++) report_saliency_prov(b, R, G->run[r]);
    kc_buf_printf(b, "</details>\n");
    controls(b, R, G);
    kc_buf_printf(b, "<ol id=\"items\" class=\"gallery\">\n");
    for (int i = 0; i < G->n_img; i++) item(b, R, G, i);
    kc_buf_printf(b, "</ol>\n");
    report_page_end(b);
}

void report_saliency_index(kc_buf *b, const report *R)
{
    kc_buf_printf(b, "<h2 id=\"saliency\">Saliency</h2>\n<p class=\"muted\">kc-saliency's scores per dataset "
                     "(decoder / solver); click a dataset for its gallery</p>\n<table class=\"sortable\">\n"
                     "<thead><tr><th>dataset</th><th>network</th><th>images</th><th>max F-beta</th><th>max F-beta bs</th>"
                     "<th>IoU</th><th>IoU bs</th><th>accuracy</th><th>accuracy bs</th></tr></thead>\n<tbody>\n");
    for (int g = 0; g < R->n_sg; g++) {
        const sal_gallery *G = &R->sg[g];
        for (int r = 0; r < G->n_run; r++) {
            const sal_run *S = &R->sal[G->run[r]];
            kc_buf_printf(b, "<tr>");
            text_cell(b, G->name, G->page);
            text_cell(b, S->in->name, NULL);
            kc_buf_printf(b, "<td data-v=\"");
            html_escape(b, S->sum[0][SAL_IMAGES]);
            kc_buf_printf(b, "\">");
            html_escape(b, S->sum[0][SAL_IMAGES]);
            kc_buf_printf(b, "</td>");
            for (int v = SAL_MAX_FBETA; v <= SAL_ACCURACY; v++)
                for (int k = 0; k < 2; k++) value_cell(b, S->sum[k][v]);
            kc_buf_printf(b, "</tr>\n");
        }
    }
    kc_buf_printf(b, "</tbody>\n</table>\n");
}

void report_saliency_prov(kc_buf *b, const report *R, int k)
{
    const sal_run *S = &R->sal[k];
    const char *key[] = {"network", "dataset", "setting", "scores", "summary.csv", "masks", "network file"};
    const char *val[] = {S->in->name, S->spec, S->setting, S->csv_path, S->summary_path, S->png_dir,
                         S->network_file ? S->network_file : "(none)"};
    kc_buf_printf(b, "<dl class=\"prov\">\n");
    for (size_t i = 0; i < sizeof key / sizeof *key; i++) {
        kc_buf_printf(b, "<dt>%s</dt><dd>", key[i]);
        html_escape(b, val[i]);
        kc_buf_printf(b, "</dd>\n");
    }
    kc_buf_printf(b, "</dl>\n");
}

void report_saliency_free(report *R)
{
    for (int k = 0; k < R->n_saliency && R->sal; k++) {
        sal_run *S = &R->sal[k];
        int n = S->gallery >= 0 ? R->sg[S->gallery].n_img : 0;
        for (int i = 0; i < n && S->png; i++) free(S->png[i]);
        free(S->png);
        free(S->v);
        free(S->setting);
        free(S->dataset_name);
        free(S->spec);
        free(S->network_file);
        free(S->summary_path);
        free(S->csv_path);
        free(S->png_dir);
        csv_free(&S->summary);
        csv_free(&S->table);
        if (S->have_ds) dataset_free(&S->ds);
    }
    free(R->sal);
    for (int g = 0; g < R->n_sg; g++) {
        sal_gallery *G = &R->sg[g];
        for (int i = 0; i < G->n_img; i++) {
            free(G->img[i].id);
            free(G->img[i].safe);
            free(G->img[i].gt);
        }
        free(G->img);
        free(G->run);
        free(G->name);
        free(G->safe);
        free(G->page);
    }
    free(R->sg);
    R->sal = NULL;
    R->sg = NULL;
}
