/* eval/report/report_data.c — the report's masks as label data for report.js, and the C reference of the
 * layers it draws.  See report_data.h. */
#include "eval/report/report_data.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/report/html.h"
#include "eval/figures/overlay.h"
#include "eval/report/report_files.h"
#include "eval/report/report_pictures.h"
#include "pipeline/images/image_jpeg.h"

/* ---- the row code -------------------------------------------------------------------------- */

static const char code_digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static void put_number(kc_buf *b, unsigned long v)
{
    char s[16];
    int n = 0;
    for (; v >= 32; v >>= 5) s[n++] = code_digits[32 + (v & 31)];
    s[n++] = code_digits[v];
    kc_buf_printf(b, "%.*s", n, s);
}

/* The runs of one row: labels lab[r], ending (exclusive) at end[r]; their number. */
static int row_runs(const uint8_t *row, int W, uint8_t *lab, int *end)
{
    int n = 0;
    for (int x = 0; x < W;) {
        int x2 = x + 1;
        while (x2 < W && row[x2] == row[x]) x2++;
        lab[n] = row[x];
        end[n++] = x2;
        x = x2;
    }
    return n;
}

void report_row_code(kc_buf *b, const uint8_t *labels, int W, int H)
{
    kc_buf_printf(b, "%s", "");
    uint8_t *lab = kc_malloc((size_t)W * 2);
    int *end = kc_malloc(sizeof(int) * (size_t)W * 2), n_prev = 0;
    uint8_t *plab = lab + W;
    int *pend = end + W;
    for (int y = 0; y < H;) {
        const uint8_t *row = labels + (size_t)y * W;
        if (y > 0 && !memcmp(row, row - W, (size_t)W)) {
            int rep = 1;
            while (y + rep < H && !memcmp(row + (size_t)rep * W, row - W, (size_t)W)) rep++;
            put_number(b, 3ul * (unsigned long)rep);
            y += rep;
            continue;
        }
        int n = row_runs(row, W, lab, end);
        if (y > 0 && n == n_prev && !memcmp(lab, plab, (size_t)n)) {
            put_number(b, 2);
            for (int r = 0; r + 1 < n; r++) {
                long d = end[r] - pend[r];
                put_number(b, d >= 0 ? (unsigned long)(2 * d) : (unsigned long)(-2 * d - 1));
            }
        } else {
            put_number(b, 3ul * (unsigned long)n + 1);
            for (int r = 0; r < n; r++) {
                put_number(b, lab[r]);
                put_number(b, (unsigned long)(end[r] - (r ? end[r - 1] : 0)));
            }
        }
        memcpy(plab, lab, (size_t)n);
        memcpy(pend, end, sizeof(int) * (size_t)n);
        n_prev = n;
        y++;
    }
    free(lab);
    free(end);
}

/* ---- the C reference of the layers --------------------------------------------------------- */

void report_thumb_size(const report *R, int W, int H, int *tw, int *th)
{
    *tw = W;
    *th = H;
    if (H <= R->thumb_h) return;
    int w = (int)lround((double)W * R->thumb_h / H);
    *tw = w < 1 ? 1 : w;
    *th = R->thumb_h;
}

int report_layer(const report *R, const uint8_t *labels, int W, int H, report_layers *L)
{
    memset(L, 0, sizeof *L);
    const size_t n = (size_t)W * H;
    kc_image black = {W, H, kc_calloc(n * 3, 1)}, white = {W, H, kc_malloc(n * 3)}, sb = {0, 0, NULL},
             sw = {0, 0, NULL};
    memset(white.rgb, 255, n * 3);
    overlay_draw_masks(&black, labels, 0.45f);
    overlay_draw_masks(&white, labels, 0.45f);
    L->w = W;
    L->h = H;
    L->full = kc_malloc(n * 4);
    image_layer_from_pair(&black, &white, L->full);
    int rc = report_thumb(R, &black, &sb);
    if (rc == 0) rc = report_thumb(R, &white, &sw);
    if (rc == 0) {
        L->tw = sb.w;
        L->th = sb.h;
        L->thumb = kc_malloc((size_t)sb.w * sb.h * 4);
        image_layer_from_pair(&sb, &sw, L->thumb);
    }
    image_free(&black);
    image_free(&white);
    image_free(&sb);
    image_free(&sw);
    if (rc < 0) report_layers_free(L);
    return rc;
}

void report_layers_free(report_layers *L)
{
    free(L->full);
    free(L->thumb);
    memset(L, 0, sizeof *L);
}

uint32_t report_fnv1a(const uint8_t *p, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 16777619u;
    return h;
}

/* ---- the data files ------------------------------------------------------------------------ */

char *report_data_rel(const gallery *G, int k)
{
    if (!G) return kc_strfmt("data/gt/%d.js", k);
    return kc_strfmt("data/%.*s/%d.js", (int)strlen(G->page) - 5, G->page, k);
}

/* The labels of image i (G: its mask in that gallery; NULL: its ground truth) and its size; 0 and
 * *labels NULL when it has none (no photo, no masks cache, no ground truth file). */
static int image_labels(report *R, int i, const gallery *G, int *W, int *H, uint8_t **labels)
{
    const image_ref *m = &R->img[i];
    *labels = NULL;
    if (!m->photo || (G && G->masks < 0)) return 0;
    char *gt = G ? NULL : report_gt_path(R, m->id);
    if (!G && !gt) return 0;
    int rc = image_size(m->photo, W, H);
    if (rc == 0 && G) rc = overlay_cache_labels(&R->mr[G->masks], G->setting, m->id, *W, *H, labels);
    else if (rc == 0) rc = report_read_labels(gt, *W, *H, "photo", m->photo, labels);
    free(gt);
    return rc;
}

void report_layer_set_init(report_layer_set *S, char *dir, char *what, int n)
{
    memset(S, 0, sizeof *S);
    S->dir = dir;
    S->what = what;
    S->n = n;
    S->id = kc_calloc((size_t)n + 1, sizeof *S->id);
    S->in = kc_calloc(2 * (size_t)n + 1, sizeof *S->in);
}

void report_layer_set_free(report_layer_set *S)
{
    for (int k = 0; k < 2 * S->n; k++) free(S->in[k]);
    free(S->in);
    free(S->id);
    free(S->dir);
    free(S->what);
    free(S->common);
    memset(S, 0, sizeof *S);
}

/* One chunk: the entries first .. first + n of S as the data file rel. */
static int write_chunk(report *R, const report_layer_set *S, int first, int n, const char *rel)
{
    kc_buf b = {0};
    kc_buf_printf(&b, "/* keycut report data (kc-report; eval/report/report_data.h): ");
    html_js_string(&b, S->what);
    kc_buf_printf(&b, " */\nkcData(1, ");
    html_js_string(&b, rel);
    kc_buf_printf(&b, ", [\n");
    int rc = 0;
    for (int k = first; k < first + n && rc == 0; k++) {
        int W = 0, H = 0, tw, th;
        uint8_t *lab = NULL;
        const char *sep = k + 1 < first + n ? "," : "";
        if (S->id[k]) rc = S->labels(R, S, k, &W, &H, &lab);
        if (rc == 0 && lab) {
            report_thumb_size(R, W, H, &tw, &th);
            kc_buf_printf(&b, "[");
            html_js_string(&b, S->id[k]);
            kc_buf_printf(&b, ",%d,%d,%d,%d,\"", W, H, tw, th);
            report_row_code(&b, lab, W, H);
            kc_buf_printf(&b, "\"]%s\n", sep);
        } else if (rc == 0) kc_buf_printf(&b, "null%s\n", sep);
        free(lab);
    }
    kc_buf_printf(&b, "]);\n");
    char *path = rc == 0 ? report_out_path(R, rel) : NULL;
    if (rc == 0) rc = path ? kc_write_file_atomic(path, b.s, b.n) : -1;
    if (rc == 0) R->drawn++;
    free(path);
    free(b.s);
    return rc;
}

/* 1 when the data file out holds the entries first .. first + n of S in that order: each line of
 * an entry begins with its id (or is null for an entry without one).  The order of a set comes
 * from the request (the galleries given, the first network's scores), which no file's time says. */
static int chunk_matches(const report_layer_set *S, int first, int n, const char *out)
{
    uint8_t *data;
    size_t size;
    if (kc_read_file(out, &data, &size) < 0) return 0;
    char *text = (char *)data, *end = text + size, *p = strstr(text, "\nkcData(");
    int ok = p != NULL;
    kc_buf want = {0};
    p = ok ? memchr(p + 1, '\n', (size_t)(end - p - 1)) : NULL;
    for (int k = first; k < first + n + 1 && ok; k++) {
        want.n = 0;
        if (k == first + n) kc_buf_printf(&want, "]);\n");
        else if (S->id[k]) {
            kc_buf_printf(&want, "[");
            html_js_string(&want, S->id[k]);
            kc_buf_printf(&want, ",");
        } else kc_buf_printf(&want, "null");
        ok = p && (size_t)(end - p - 1) >= want.n && !memcmp(p + 1, want.s, want.n);
        p = ok ? memchr(p + 1, '\n', (size_t)(end - p - 1)) : NULL;
    }
    ok = ok && p == end - 1;
    free(want.s);
    free(data);
    return ok;
}

/* 1 when chunk rel (entries first .. first + n of S) is stale (report_data.h); counts it kept when not. */
static int chunk_stale(report *R, const report_layer_set *S, int first, int n, const char *rel)
{
    char *out = kc_strfmt("%s/%s", R->out, rel);
    const char **in = kc_malloc(sizeof(char *) * (size_t)(2 * n + S->n_common + 1));
    int n_in = 0;
    for (int c = 0; c < S->n_common; c++) in[n_in++] = S->common[c];
    for (int k = first; k < first + n; k++)
        if (S->id[k]) {
            in[n_in++] = S->in[2 * k];
            in[n_in++] = S->in[2 * k + 1];
        }
    int stale = report_stale(R, out, in, n_in) || !chunk_matches(S, first, n, out);
    if (!stale) {
        R->kept++;
        report_files_keep(R, rel);
    }
    free(in);
    free(out);
    return stale;
}

int report_write_layer_set(report *R, const report_layer_set *S)
{
    int any = 0, rc = 0;
    for (int k = 0; k < S->n && !any; k++) any = S->id[k] != NULL;
    int n_chunks = any ? (S->n + REPORT_CHUNK - 1) / REPORT_CHUNK : 0;
    for (int c = 0; c < n_chunks && rc == 0; c++) {
        int first = c * REPORT_CHUNK, n = S->n - first < REPORT_CHUNK ? S->n - first : REPORT_CHUNK;
        char *rel = kc_strfmt("%s%d.js", S->dir, c);
        if (chunk_stale(R, S, first, n, rel)) rc = write_chunk(R, S, first, n, rel);
        free(rel);
    }
    return rc;
}

/* ---- the VOC galleries' sets --------------------------------------------------------------- */

static int voc_labels(report *R, const report_layer_set *S, int k, int *W, int *H, uint8_t **labels)
{
    const gallery *G = S->ctx;
    return image_labels(R, G ? G->e[k].image : k, G, W, H, labels);
}

/* The set of gallery g (-1: the ground truth, over the image table); 0 when it has none (a
 * gallery without masks cache, no ground truth without --voc). */
static int voc_set(report *R, int g, report_layer_set *S)
{
    const gallery *G = g >= 0 ? &R->g[g] : NULL;
    if (G ? G->masks < 0 : !R->voc_root) return 0;
    char *dir = report_data_rel(G, 0);
    dir[strlen(dir) - 4] = 0; /* "data/.../" */
    int total = G ? G->n : R->n_img;
    report_layer_set_init(S, dir, G ? kc_strfmt("the masks of gallery %s", G->page) : kc_strdup("the ground truth"),
                          total);
    S->labels = voc_labels;
    S->ctx = G;
    S->common = kc_calloc((size_t)R->n_g + 2, sizeof *S->common);
    if (G) {
        S->common[S->n_common++] = R->mr[G->masks].path;
        S->common[S->n_common++] = G->csv_path;
    } else
        for (int k = 0; k < R->n_g; k++) S->common[S->n_common++] = R->g[k].csv_path; /* the image table's order */
    for (int k = 0; k < total; k++) {
        const image_ref *m = &R->img[G ? G->e[k].image : k];
        if (!m->photo) continue;
        if (!G && !(S->in[2 * k + 1] = report_gt_path(R, m->id))) continue; /* no ground truth: a null entry */
        S->id[k] = m->id;
        S->in[2 * k] = kc_strdup(m->photo);
    }
    return 1;
}

int report_write_data(report *R)
{
    int rc = 0;
    /* g = -1: the ground truth, over the image table; then each gallery, in its order */
    for (int g = -1; g < R->n_g && rc == 0; g++) {
        report_layer_set S;
        if (!voc_set(R, g, &S)) continue;
        rc = report_write_layer_set(R, &S);
        report_layer_set_free(&S);
    }
    return rc;
}

/* The lines of one label map's layers (report_data.h) into b. */
static int hash_lines(report *R, kc_buf *b, const char *dir, const char *id, const uint8_t *labels, int W, int H)
{
    report_layers L;
    KC_TRY(report_layer(R, labels, W, H, &L));
    kc_buf_printf(b, "%s\t%s\tfull\t%dx%d\t%08x\n", dir, id, L.w, L.h,
                  report_fnv1a(L.full, (size_t)L.w * L.h * 4));
    kc_buf_printf(b, "%s\t%s\tthumb\t%dx%d\t%08x\n", dir, id, L.tw, L.th,
                  report_fnv1a(L.thumb, (size_t)L.tw * L.th * 4));
    report_layers_free(&L);
    return 0;
}

int report_layer_set_hashes(report *R, const report_layer_set *S, kc_buf *b)
{
    int rc = 0;
    for (int k = 0; k < S->n && rc == 0; k++) {
        int W, H;
        uint8_t *lab = NULL;
        if (S->id[k]) rc = S->labels(R, S, k, &W, &H, &lab);
        if (rc == 0 && lab) rc = hash_lines(R, b, S->dir, S->id[k], lab, W, H);
        free(lab);
    }
    return rc;
}

int report_layer_hashes(report *R, kc_buf *b)
{
    int rc = 0;
    for (int g = -1; g < R->n_g && rc == 0; g++) {
        report_layer_set S;
        if (!voc_set(R, g, &S)) continue;
        rc = report_layer_set_hashes(R, &S, b);
        report_layer_set_free(&S);
    }
    return rc;
}
