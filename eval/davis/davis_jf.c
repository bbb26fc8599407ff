/* eval/davis/davis_jf.c — official DAVIS-2017 J and F (see davis_jf.h for the definitions). */
#include "eval/davis/davis_jf.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/davis_gt.h"
#include "pipeline/kc.h"

const char *const davis_global_names[DAVIS_N_GLOBAL] = {
    "J&F-Mean", "J-Mean", "J-Recall", "J-Decay", "F-Mean", "F-Recall", "F-Decay"};

int davis_bound_radius(int w, int h, double bound_th)
{
    if (bound_th >= 1) return (int)bound_th;
    return (int)ceil(bound_th * sqrt((double)h * h + (double)w * w));
}

/* seg2bmap at one pixel, (y, x) in the image; m(y, x) = labels == id. */
static inline int bmap_at(const uint8_t *lab, int w, int h, int id, int y, int x)
{
    const uint8_t *p = lab + (size_t)y * w + x;
    int s = p[0] == id;
    if (y < h - 1 && x < w - 1)
        return (s != (p[1] == id)) | (s != (p[w] == id)) | (s != (p[w + 1] == id));
    if (y == h - 1 && x < w - 1) return s != (p[1] == id);
    if (x == w - 1 && y < h - 1) return s != (p[w] == id);
    return 0;
}

void davis_seg2bmap(const uint8_t *labels, int w, int h, int id, uint8_t *bmap)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) bmap[(size_t)y * w + x] = (uint8_t)bmap_at(labels, w, h, id, y, x);
}

double davis_jaccard(const uint8_t *gt, const uint8_t *res, int w, int h, int id)
{
    size_t inter = 0, uni = 0, n = (size_t)w * h;
    for (size_t i = 0; i < n; i++) {
        int a = gt[i] == id, b = res[i] == id;
        inter += a & b;
        uni += a | b;
    }
    return uni == 0 ? 1.0 : (double)inter / (double)uni;
}

static double f_from_counts(size_t n_fg, size_t n_gt, size_t fg_match, size_t gt_match)
{
    double precision, recall;
    if (n_fg == 0 && n_gt > 0) {
        precision = 1;
        recall = 0;
    } else if (n_fg > 0 && n_gt == 0) {
        precision = 0;
        recall = 1;
    } else if (n_fg == 0 && n_gt == 0) {
        precision = 1;
        recall = 1;
    } else {
        precision = (double)fg_match / (double)n_fg;
        recall = (double)gt_match / (double)n_gt;
    }
    if (precision + recall == 0) return 0;
    return 2 * precision * recall / (precision + recall);
}

double davis_f_measure_naive(const uint8_t *gt, const uint8_t *res, int w, int h, int id, int radius)
{
    size_t n = (size_t)w * h;
    uint8_t *bg = kc_malloc(n), *bf = kc_malloc(n), *dg = kc_calloc(n, 1), *df = kc_calloc(n, 1);
    davis_seg2bmap(gt, w, h, id, bg);
    davis_seg2bmap(res, w, h, id, bf);
    /* cv2.dilate with skimage.morphology.disk(radius): dx^2 + dy^2 <= radius^2, border ignored. */
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            size_t i = (size_t)y * w + x;
            if (!bg[i] && !bf[i]) continue;
            for (int dy = -radius; dy <= radius; dy++)
                for (int dx = -radius; dx <= radius; dx++) {
                    int yy = y + dy, xx = x + dx;
                    if (dx * dx + dy * dy > radius * radius || yy < 0 || yy >= h || xx < 0 || xx >= w) continue;
                    if (bg[i]) dg[(size_t)yy * w + xx] = 1;
                    if (bf[i]) df[(size_t)yy * w + xx] = 1;
                }
        }
    size_t n_fg = 0, n_gt = 0, fg_match = 0, gt_match = 0;
    for (size_t i = 0; i < n; i++) {
        n_fg += bf[i];
        n_gt += bg[i];
        fg_match += bf[i] & dg[i];
        gt_match += bg[i] & df[i];
    }
    free(bg);
    free(bf);
    free(dg);
    free(df);
    return f_from_counts(n_fg, n_gt, fg_match, gt_match);
}

/* Bounding box, inclusive; empty when x0 > x1. */
typedef struct bbox {
    int x0, y0, x1, y1;
} bbox;

static void box_empty(bbox *b)
{
    b->x0 = b->y0 = 1 << 30;
    b->x1 = b->y1 = -1;
}

static void box_union(bbox *a, const bbox *b)
{
    if (b->x0 < a->x0) a->x0 = b->x0;
    if (b->y0 < a->y0) a->y0 = b->y0;
    if (b->x1 > a->x1) a->x1 = b->x1;
    if (b->y1 > a->y1) a->y1 = b->y1;
}

/* Per row of a boundary map, prefix counts: pre[x] = set pixels in columns 0..x-1 (ww + 1 values). */
static void row_prefix(const uint8_t *row, int n, int *pre)
{
    int c = 0;
    pre[0] = 0;
    for (int x = 0; x < n; x++) {
        c += row[x];
        pre[x + 1] = c;
    }
}

/* Boundary pixels of a (in the window) that have a boundary pixel of b within the disk: in row
 * y + dy the columns x - half(dy) .. x + half(dy), half(dy) = the largest d with d^2 + dy^2 <= r^2. */
static size_t count_matches(const uint8_t *a, const int *pre_b, int ww, int wh, int radius, const int *half,
                            size_t *n_a)
{
    size_t match = 0, count = 0;
    for (int y = 0; y < wh; y++)
        for (int x = 0; x < ww; x++) {
            if (!a[(size_t)y * ww + x]) continue;
            count++;
            int lo = y - radius < 0 ? 0 : y - radius, hi = y + radius >= wh ? wh - 1 : y + radius;
            for (int yy = lo; yy <= hi; yy++) {
                int hd = half[abs(yy - y)];
                int x0 = x - hd < 0 ? 0 : x - hd, x1 = x + hd >= ww ? ww - 1 : x + hd;
                const int *p = pre_b + (size_t)yy * (ww + 1);
                if (p[x1 + 1] - p[x0] > 0) {
                    match++;
                    break;
                }
            }
        }
    *n_a = count;
    return match;
}

/* seg2bmap of rows wy0.. and columns wx0.. of the image into a ww x wh window. */
static void bmap_window(const uint8_t *lab, int w, int h, int id, int wx0, int wy0, int ww, int wh, uint8_t *out)
{
    for (int y = 0; y < wh; y++) {
        int gy = wy0 + y;
        uint8_t *o = out + (size_t)y * ww;
        const uint8_t *r = lab + (size_t)gy * w, *rn = gy < h - 1 ? r + w : NULL;
        int xe = wx0 + ww < w ? ww : ww - 1; /* columns with a right neighbour */
        if (rn) {
            for (int x = 0; x < xe; x++) {
                int gx = wx0 + x;
                int s = r[gx] == id;
                o[x] = (uint8_t)((s != (r[gx + 1] == id)) | (s != (rn[gx] == id)) | (s != (rn[gx + 1] == id)));
            }
        } else {
            for (int x = 0; x < xe; x++) o[x] = (uint8_t)((r[wx0 + x] == id) != (r[wx0 + x + 1] == id));
        }
        if (xe < ww) o[ww - 1] = (uint8_t)bmap_at(lab, w, h, id, gy, w - 1);
    }
}

/* F within the union box of both masks. */
static double f_measure_box(const uint8_t *gt, const uint8_t *res, int w, int h, int id, int radius,
                            const bbox *box)
{
    if (box->x0 > box->x1) return 1.0; /* both masks empty: both boundaries empty */
    int wx0 = box->x0 > 0 ? box->x0 - 1 : 0, wy0 = box->y0 > 0 ? box->y0 - 1 : 0;
    int ww = box->x1 - wx0 + 1, wh = box->y1 - wy0 + 1;
    size_t n = (size_t)ww * wh, np = (size_t)(ww + 1) * wh;
    uint8_t *bg = kc_malloc(2 * n), *bf = bg + n;
    int *pre = kc_malloc(sizeof *pre * 2 * np), *pg = pre, *pf = pre + np;
    int *half = kc_malloc(sizeof *half * (radius + 1));
    for (int dy = 0; dy <= radius; dy++) {
        int d = 0;
        while ((d + 1) * (d + 1) + dy * dy <= radius * radius) d++;
        half[dy] = d;
    }
    bmap_window(gt, w, h, id, wx0, wy0, ww, wh, bg);
    bmap_window(res, w, h, id, wx0, wy0, ww, wh, bf);
    for (int y = 0; y < wh; y++) {
        row_prefix(bg + (size_t)y * ww, ww, pg + (size_t)y * (ww + 1));
        row_prefix(bf + (size_t)y * ww, ww, pf + (size_t)y * (ww + 1));
    }
    size_t n_fg, n_gt;
    size_t fg_match = count_matches(bf, pg, ww, wh, radius, half, &n_fg);
    size_t gt_match = count_matches(bg, pf, ww, wh, radius, half, &n_gt);
    free(bg);
    free(pre);
    free(half);
    return f_from_counts(n_fg, n_gt, fg_match, gt_match);
}

static void mask_box(const uint8_t *lab, int w, int h, int id, bbox *b)
{
    box_empty(b);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            if (lab[(size_t)y * w + x] == id) {
                if (x < b->x0) b->x0 = x;
                if (x > b->x1) b->x1 = x;
                if (y < b->y0) b->y0 = y;
                if (y > b->y1) b->y1 = y;
            }
}

double davis_f_measure(const uint8_t *gt, const uint8_t *res, int w, int h, int id, int radius)
{
    bbox a, b;
    mask_box(gt, w, h, id, &a);
    mask_box(res, w, h, id, &b);
    box_union(&a, &b);
    return f_measure_box(gt, res, w, h, id, radius, &a);
}

void davis_statistics(const double *v, int n, double *mean, double *recall, double *decay)
{
    double s = 0, r = 0;
    for (int i = 0; i < n; i++) {
        s += v[i];
        r += v[i] > 0.5;
    }
    *mean = s / n;
    *recall = r / n;
    /* edges round(linspace(1, n, 5) + 1e-10) - 1; the +1e-10 makes halves round up */
    int e[5];
    for (int i = 0; i < 5; i++) e[i] = (int)floor(1.0 + i * (n - 1) / 4.0 + 1e-10 + 0.5) - 1;
    double m[2];
    for (int k = 0; k < 2; k++) {
        int bin = k == 0 ? 0 : 3;
        double t = 0;
        for (int i = e[bin]; i <= e[bin + 1]; i++) t += v[i];
        m[k] = t / (e[bin + 1] - e[bin] + 1);
    }
    *decay = m[0] - m[1];
}

/* ---- a whole results folder ------------------------------------------------------------------ */

typedef struct frame_work {
    char *error;     /* message of a failure, NULL when fine */
    int gt_above_k;  /* the ground truth holds ids above K (ignored) */
} frame_work;

/* Scores frame t of a sequence for objects 1..K: J[k-1], F[k-1]. */
static int score_frame(const char *gt_path, const char *res_path, int w0, int h0, int K, int radius,
                       double *J, double *F, int *gt_above_k)
{
    uint8_t *gt = NULL, *res = NULL;
    int w, h, rw, rh;
    if (davis_read_labels(gt_path, &w, &h, &gt) < 0) return -1;
    if (w != w0 || h != h0) {
        free(gt);
        return kc_fail("%s: frame is %dx%d but the sequence's first frame is %dx%d (frames of different sizes)",
                       gt_path, w, h, w0, h0);
    }
    if (davis_read_labels(res_path, &rw, &rh, &res) < 0) {
        free(gt);
        return -1;
    }
    if (rw != w || rh != h) {
        free(gt);
        free(res);
        return kc_fail("%s: result is %dx%d but its ground truth is %dx%d", res_path, rw, rh, w, h);
    }
    /* One pass: ids above K in the ground truth become background; 255 too (official). */
    bbox gbox[256], rbox[256];
    size_t cg[256] = {0}, cr[256] = {0}, ci[256] = {0};
    for (int k = 0; k <= K; k++) {
        box_empty(&gbox[k]);
        box_empty(&rbox[k]);
    }
    int res_max = 0;
    *gt_above_k = 0;
    for (int y = 0; y < h; y++) {
        uint8_t *grow = gt + (size_t)y * w;
        const uint8_t *rrow = res + (size_t)y * w;
        for (int x = 0; x < w; x++) {
            int g = grow[x], r = rrow[x];
            if (g > K) {
                if (g != 255) *gt_above_k = 1;
                grow[x] = 0;
                g = 0;
            }
            if (r > res_max) res_max = r;
            if (r > K) continue;
            cg[g]++;
            cr[r]++;
            if (g == r) ci[g]++;
            bbox *b = &gbox[g];
            if (x < b->x0) b->x0 = x;
            if (x > b->x1) b->x1 = x;
            if (y < b->y0) b->y0 = y;
            if (y > b->y1) b->y1 = y;
            b = &rbox[r];
            if (x < b->x0) b->x0 = x;
            if (x > b->x1) b->x1 = x;
            if (y < b->y0) b->y0 = y;
            if (y > b->y1) b->y1 = y;
        }
    }
    if (res_max > K) {
        free(gt);
        free(res);
        return kc_fail("%s: object id %d, but the first ground-truth frame has only %d object%s "
                       "(ids above the ground truth's are an error, as in the official tool)",
                       res_path, res_max, K, K == 1 ? "" : "s");
    }
    for (int k = 1; k <= K; k++) {
        size_t uni = cg[k] + cr[k] - ci[k];
        J[k - 1] = uni == 0 ? 1.0 : (double)ci[k] / (double)uni;
        bbox b = gbox[k];
        box_union(&b, &rbox[k]);
        F[k - 1] = f_measure_box(gt, res, w, h, k, radius, &b);
    }
    free(gt);
    free(res);
    return 0;
}

static int evaluate_sequence(const char *results, const char *root, const char *seq, davis_eval *ev)
{
    char *adir = davis_annotation_dir(root, seq);
    char **frames = NULL;
    int n = 0, rc = -1;
    uint8_t *first = NULL;
    char **gt_paths = NULL, **res_paths = NULL;
    double *J = NULL, *F = NULL;
    frame_work *work = NULL;
    if (davis_list_frames(adir, ".png", &frames, &n) < 0) goto out;
    if (n < 3) {
        kc_fail("%s: %d annotated frame%s; the semi-supervised score needs at least 3 (the first and "
                "last are not scored)", adir, n, n == 1 ? "" : "s");
        goto out;
    }
    int w, h;
    char *p0 = kc_strfmt("%s/%s.png", adir, frames[0]);
    int r0 = davis_read_labels(p0, &w, &h, &first);
    free(p0);
    if (r0 < 0) goto out;
    int K = 0;
    for (size_t i = 0; i < (size_t)w * h; i++)
        if (first[i] != 255 && first[i] > K) K = first[i];
    if (K == 0) kc_warn("%s: the first ground-truth frame holds no object; the sequence adds nothing", adir);
    int radius = davis_bound_radius(w, h, DAVIS_BOUND_TH);

    int m = n - 2; /* scored frames 1..n-2 */
    gt_paths = kc_calloc(m, sizeof *gt_paths);
    res_paths = kc_calloc(m, sizeof *res_paths);
    int n_missing = 0;
    char missing[512] = "";
    for (int t = 0; t < m; t++) {
        gt_paths[t] = kc_strfmt("%s/%s.png", adir, frames[t + 1]);
        res_paths[t] = kc_strfmt("%s/%s/%s.png", results, seq, frames[t + 1]);
        if (!kc_exists(res_paths[t])) {
            if (n_missing < 8) {
                size_t l = strlen(missing);
                snprintf(missing + l, sizeof missing - l, "%s%s", n_missing ? " " : "", frames[t + 1]);
            }
            n_missing++;
        }
    }
    if (n_missing) {
        kc_fail("%s/%s: %d result frame%s missing: %s%s", results, seq, n_missing, n_missing == 1 ? "" : "s",
                missing, n_missing > 8 ? " ..." : "");
        goto out;
    }
    J = kc_calloc((size_t)m * (K ? K : 1), sizeof *J);
    F = kc_calloc((size_t)m * (K ? K : 1), sizeof *F);
    work = kc_calloc(m, sizeof *work);
#pragma omp parallel for schedule(dynamic, 1)
    for (int t = 0; t < m; t++) {
        double jt[256], ft[256];
        if (score_frame(gt_paths[t], res_paths[t], w, h, K, radius, jt, ft, &work[t].gt_above_k) < 0) {
            work[t].error = kc_strdup(kc_error());
            continue;
        }
        for (int k = 0; k < K; k++) {
            J[(size_t)k * m + t] = jt[k];
            F[(size_t)k * m + t] = ft[k];
        }
    }
    int n_above = 0;
    for (int t = 0; t < m; t++) {
        if (work[t].error) {
            kc_set_error(work[t].error);
            goto out;
        }
        n_above += work[t].gt_above_k;
    }
    if (n_above)
        kc_warn("%s: ids above %d (the first frame's largest) in %d ground-truth frame%s are ignored, as the "
                "official tool does", adir, K, n_above, n_above == 1 ? "" : "s");
    ev->obj = kc_realloc(ev->obj, sizeof *ev->obj * (ev->n_obj + K));
    for (int k = 0; k < K; k++) {
        davis_object *o = &ev->obj[ev->n_obj++];
        o->name = kc_strfmt("%s_%d", seq, k + 1);
        o->n = m;
        o->frames = kc_malloc(sizeof *o->frames * m);
        for (int t = 0; t < m; t++) o->frames[t] = kc_strdup(frames[t + 1]);
        o->J = kc_malloc(sizeof *o->J * m);
        o->F = kc_malloc(sizeof *o->F * m);
        memcpy(o->J, J + (size_t)k * m, sizeof *o->J * m);
        memcpy(o->F, F + (size_t)k * m, sizeof *o->F * m);
        davis_statistics(o->J, m, &o->j_stats[0], &o->j_stats[1], &o->j_stats[2]);
        davis_statistics(o->F, m, &o->f_stats[0], &o->f_stats[1], &o->f_stats[2]);
    }
    ev->n_seq++;
    ev->n_frames += m;
    rc = 0;
out:
    if (work)
        for (int t = 0; t < n - 2; t++) free(work[t].error);
    free(work);
    if (gt_paths)
        for (int t = 0; t < n - 2; t++) {
            free(gt_paths[t]);
            free(res_paths[t]);
        }
    free(gt_paths);
    free(res_paths);
    free(J);
    free(F);
    free(first);
    davis_free_names(frames, n);
    free(adir);
    return rc;
}

int davis_evaluate(const char *results, const char *root, const char *split, davis_eval *ev)
{
    memset(ev, 0, sizeof *ev);
    char **seqs;
    int n_seq;
    KC_TRY(davis_read_split(root, split, &seqs, &n_seq));
    for (int s = 0; s < n_seq; s++) {
        if (evaluate_sequence(results, root, seqs[s], ev) < 0) {
            davis_free_names(seqs, n_seq);
            davis_eval_free(ev);
            return -1;
        }
    }
    davis_free_names(seqs, n_seq);
    if (ev->n_obj == 0) {
        davis_eval_free(ev);
        return kc_fail("%s: no object to score in split %s", root, split);
    }
    double sum[6] = {0};
    for (int i = 0; i < ev->n_obj; i++)
        for (int k = 0; k < 3; k++) {
            sum[k] += ev->obj[i].j_stats[k];
            sum[3 + k] += ev->obj[i].f_stats[k];
        }
    for (int k = 0; k < 3; k++) {
        ev->global[DAVIS_J_MEAN + k] = sum[k] / ev->n_obj;
        ev->global[DAVIS_F_MEAN + k] = sum[3 + k] / ev->n_obj;
    }
    ev->global[DAVIS_JF_MEAN] = (ev->global[DAVIS_J_MEAN] + ev->global[DAVIS_F_MEAN]) / 2;
    return 0;
}

void davis_eval_free(davis_eval *ev)
{
    for (int i = 0; i < ev->n_obj; i++) {
        davis_object *o = &ev->obj[i];
        free(o->name);
        davis_free_names(o->frames, o->n);
        free(o->J);
        free(o->F);
    }
    free(ev->obj);
    memset(ev, 0, sizeof *ev);
}

/* ---- outputs ----------------------------------------------------------------------------------- */


static void sb_json_string(kc_buf *b, const char *s)
{
    kc_buf_printf(b, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            kc_buf_printf(b, "\\%c", c);
        else if (c < 0x20)
            kc_buf_printf(b, "\\u%04x", c);
        else
            kc_buf_printf(b, "%c", c);
    }
    kc_buf_printf(b, "\"");
}

static void sb_json_array(kc_buf *b, const double *v, int n)
{
    kc_buf_printf(b, "[");
    for (int i = 0; i < n; i++) kc_buf_printf(b, "%s%.17g", i ? ", " : "", v[i]);
    kc_buf_printf(b, "]");
}

int davis_write_outputs(const davis_eval *ev, const char *results, const char *split, int force)
{
    char *paths[3] = {kc_strfmt("%s/global_results-%s.csv", results, split),
                      kc_strfmt("%s/per-sequence_results-%s.csv", results, split),
                      kc_strfmt("%s/global_results-%s.json", results, split)};
    int rc = -1;
    kc_buf out[3] = {{0}};
    if (!force)
        for (int i = 0; i < 3; i++)
            if (kc_exists(paths[i])) {
                kc_fail("%s: exists; not overwritten (use --force to recompute and replace it)", paths[i]);
                goto done;
            }
    /* global CSV: the official header and %.3f */
    for (int k = 0; k < DAVIS_N_GLOBAL; k++) kc_buf_printf(&out[0], "%s%s", k ? "," : "", davis_global_names[k]);
    kc_buf_printf(&out[0], "\n");
    for (int k = 0; k < DAVIS_N_GLOBAL; k++) kc_buf_printf(&out[0], "%s%.3f", k ? "," : "", ev->global[k]);
    kc_buf_printf(&out[0], "\n");
    /* per-object CSV */
    kc_buf_printf(&out[1], "Sequence,J-Mean,F-Mean\n");
    for (int i = 0; i < ev->n_obj; i++)
        kc_buf_printf(&out[1], "%s,%.3f,%.3f\n", ev->obj[i].name, ev->obj[i].j_stats[0], ev->obj[i].f_stats[0]);
    /* JSON at full precision */
    kc_buf *j = &out[2];
    kc_buf_printf(j, "{\n \"global\": {\n");
    for (int k = 0; k < DAVIS_N_GLOBAL; k++)
        kc_buf_printf(j, "  \"%s\": %.17g%s\n", davis_global_names[k], ev->global[k], k + 1 < DAVIS_N_GLOBAL ? "," : "");
    kc_buf_printf(j, " },\n \"per_object\": {\n");
    for (int i = 0; i < ev->n_obj; i++) {
        const davis_object *o = &ev->obj[i];
        kc_buf_printf(j, "  ");
        sb_json_string(j, o->name);
        kc_buf_printf(j, ": {\"J-Mean\": %.17g, \"J-Recall\": %.17g, \"J-Decay\": %.17g, "
                     "\"F-Mean\": %.17g, \"F-Recall\": %.17g, \"F-Decay\": %.17g}%s\n",
                  o->j_stats[0], o->j_stats[1], o->j_stats[2], o->f_stats[0], o->f_stats[1], o->f_stats[2],
                  i + 1 < ev->n_obj ? "," : "");
    }
    kc_buf_printf(j, " },\n \"per_frame\": {\n");
    for (int i = 0; i < ev->n_obj; i++) {
        const davis_object *o = &ev->obj[i];
        kc_buf_printf(j, "  ");
        sb_json_string(j, o->name);
        kc_buf_printf(j, ": {\n   \"frames\": [");
        for (int t = 0; t < o->n; t++) {
            kc_buf_printf(j, "%s", t ? ", " : "");
            sb_json_string(j, o->frames[t]);
        }
        kc_buf_printf(j, "],\n   \"J\": ");
        sb_json_array(j, o->J, o->n);
        kc_buf_printf(j, ",\n   \"F\": ");
        sb_json_array(j, o->F, o->n);
        kc_buf_printf(j, ",\n   \"J-stats(M,R,D)\": ");
        sb_json_array(j, o->j_stats, 3);
        kc_buf_printf(j, ",\n   \"F-stats(M,R,D)\": ");
        sb_json_array(j, o->f_stats, 3);
        kc_buf_printf(j, "\n  }%s\n", i + 1 < ev->n_obj ? "," : "");
    }
    kc_buf_printf(j, " }\n}\n");
    for (int i = 0; i < 3; i++)
        if (kc_write_file_atomic(paths[i], out[i].s, out[i].n) < 0) goto done;
    rc = 0;
done:
    for (int i = 0; i < 3; i++) {
        free(paths[i]);
        free(out[i].s);
    }
    return rc;
}
