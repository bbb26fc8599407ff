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

/* One chunk: the images img[0..n) (-1: none) of gallery G (NULL: the ground truth) as the data
 * file rel. */
static int write_chunk(report *R, const gallery *G, const int *img, int n, const char *rel)
{
    kc_buf b = {0};
    kc_buf_printf(&b, "/* keycut report data (kc-report; eval/report/report_data.h): ");
    if (G) {
        kc_buf_printf(&b, "the masks of gallery ");
        html_js_string(&b, G->page);
    } else kc_buf_printf(&b, "the ground truth");
    kc_buf_printf(&b, " */\nkcData(1, ");
    html_js_string(&b, rel);
    kc_buf_printf(&b, ", [\n");
    int rc = 0;
    for (int k = 0; k < n && rc == 0; k++) {
        int W = 0, H = 0, tw, th;
        uint8_t *lab = NULL;
        if (img[k] >= 0) rc = image_labels(R, img[k], G, &W, &H, &lab);
        if (rc == 0 && lab) {
            report_thumb_size(R, W, H, &tw, &th);
            kc_buf_printf(&b, "[");
            html_js_string(&b, R->img[img[k]].id);
            kc_buf_printf(&b, ",%d,%d,%d,%d,\"", W, H, tw, th);
            report_row_code(&b, lab, W, H);
            kc_buf_printf(&b, "\"]%s\n", k + 1 < n ? "," : "");
        } else if (rc == 0) kc_buf_printf(&b, "null%s\n", k + 1 < n ? "," : "");
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

/* 1 when chunk rel of the images img[0..n) is stale (report_data.h); counts it kept when not. */
static int chunk_stale(report *R, const gallery *G, const int *img, int n, const char *rel)
{
    char *out = kc_strfmt("%s/%s", R->out, rel);
    const char **in = kc_malloc(sizeof(char *) * (size_t)(2 * n + R->n_g + 2));
    char **gt = kc_calloc((size_t)n + 1, sizeof(char *));
    int n_in = 0;
    if (G) {
        in[n_in++] = G->masks >= 0 ? R->mr[G->masks].path : NULL;
        in[n_in++] = G->csv_path;
    } else
        for (int g = 0; g < R->n_g; g++) in[n_in++] = R->g[g].csv_path; /* the image table's order */
    for (int k = 0; k < n; k++) {
        if (img[k] < 0) continue;
        in[n_in++] = R->img[img[k]].photo;
        if (!G) in[n_in++] = gt[k] = report_gt_path(R, R->img[img[k]].id);
    }
    int stale = report_stale(R, out, in, n_in);
    if (!stale) {
        R->kept++;
        report_files_keep(R, rel);
    }
    for (int k = 0; k < n; k++) free(gt[k]);
    free(gt);
    free(in);
    free(out);
    return stale;
}

int report_write_data(report *R)
{
    int *img = kc_malloc(sizeof(int) * REPORT_CHUNK), rc = 0;
    /* g = -1: the ground truth, over the image table; then each gallery, in its order */
    for (int g = -1; g < R->n_g && rc == 0; g++) {
        const gallery *G = g >= 0 ? &R->g[g] : NULL;
        int total = G ? G->n : R->n_img, any = 0;
        if (G ? G->masks < 0 : !R->voc_root) continue;
        for (int i = 0; i < total && !any; i++) any = R->img[G ? G->e[i].image : i].photo != NULL;
        int n_chunks = any ? (total + REPORT_CHUNK - 1) / REPORT_CHUNK : 0;
        for (int c = 0; c < n_chunks && rc == 0; c++) {
            int n = total - c * REPORT_CHUNK < REPORT_CHUNK ? total - c * REPORT_CHUNK : REPORT_CHUNK;
            for (int k = 0; k < n; k++) {
                int i = G ? G->e[c * REPORT_CHUNK + k].image : c * REPORT_CHUNK + k;
                img[k] = R->img[i].photo ? i : -1;
            }
            char *rel = report_data_rel(G, c);
            if (chunk_stale(R, G, img, n, rel)) rc = write_chunk(R, G, img, n, rel);
            free(rel);
        }
    }
    free(img);
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

int report_write_layer_hashes(report *R, const char *path)
{
    kc_buf b = {0};
    int rc = 0;
    for (int g = -1; g < R->n_g && rc == 0; g++) {
        const gallery *G = g >= 0 ? &R->g[g] : NULL;
        char *dir = report_data_rel(G, 0);
        dir[strlen(dir) - 4] = 0; /* "data/.../" */
        int total = G ? G->n : R->n_img;
        for (int k = 0; k < total && rc == 0; k++) {
            int i = G ? G->e[k].image : k, W, H;
            uint8_t *lab = NULL;
            rc = image_labels(R, i, G, &W, &H, &lab);
            if (rc == 0 && lab) rc = hash_lines(R, &b, dir, R->img[i].id, lab, W, H);
            free(lab);
        }
        free(dir);
    }
    if (rc == 0) rc = kc_write_file_atomic(path, b.s ? b.s : "", b.n);
    free(b.s);
    return rc;
}
