/* tests/test_sal_metrics.c — eval/saliency/sal_metrics.c against torch 1.13, through the blobs of
 * tests/ref/saliency_metrics_ref.py (tests/data/saliency; Python is not needed to run this).
 *
 *   test_sal_metrics                  the committed blobs: the synthetic 7x5 cases, the real DAVIS
 *                                     cases (read in place from the shared data; SKIP when absent),
 *                                     torch.sum(x, dim=0) for the shapes of cascade.bin
 *   test_sal_metrics --cascade FILE   only the cascade sums of FILE (saliency_metrics_ref.py sweep)
 *
 * Tolerance: 1e-9 on every value (IoU, accuracy, precision, recall, the dataset's means, Fbar_k,
 * max F-beta), and the best bin and the pixel counts equal.  The arithmetic is meant to be torch's
 * exactly, so each comparison also counts the values whose bits differ and prints the worst
 * mismatch; the cascade sums must be equal bit for bit (tolerance 0).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/saliency/sal_metrics.h"
#include "pipeline/images/image.h"
#include "pipeline/kc.h"
#include "tests/test.h"

#define DIR "tests/data/saliency"
#define TOL 1e-9

/* ---- reading the blobs ---------------------------------------------------------------------- */
typedef struct blob {
    uint8_t *data;
    size_t size, at;
    const char *path;
} blob;

static int blob_open(blob *b, const char *path, const char *magic)
{
    b->path = path;
    b->at = 0;
    if (kc_read_file(path, &b->data, &b->size) < 0) return -1;
    if (b->size < 8 || memcmp(b->data, magic, 8) != 0) {
        free(b->data);
        return kc_fail("%s: not a %s file", path, magic);
    }
    b->at = 8;
    return 0;
}

static void take(blob *b, void *dst, size_t n)
{
    if (b->at + n > b->size) {
        fprintf(stderr, "%s: truncated at byte %zu\n", b->path, b->at);
        exit(2);
    }
    memcpy(dst, b->data + b->at, n);
    b->at += n;
}

static int32_t take_i32(blob *b) { int32_t v; take(b, &v, 4); return v; }
static int64_t take_i64(blob *b) { int64_t v; take(b, &v, 8); return v; }
static double take_f64(blob *b) { double v; take(b, &v, 8); return v; }

/* ---- comparisons: worst mismatch and bit differences ---------------------------------------- */
typedef struct worst {
    const char *what;
    double diff;       /* worst |a - b| (NaN against a number: infinity) */
    char where[128];
    long compared, bits;
} worst;

static void compare(worst *w, double got, double want, const char *fmt, long i, long k)
{
    double d = isnan(got) || isnan(want) ? (isnan(got) && isnan(want) ? 0 : INFINITY) : fabs(got - want);
    w->compared++;
    w->bits += !(got == want || (isnan(got) && isnan(want)));
    if (d > w->diff || (w->diff == 0 && d == 0 && !w->where[0])) {
        w->diff = d;
        snprintf(w->where, sizeof w->where, fmt, i, k);
        size_t l = strlen(w->where);
        snprintf(w->where + l, sizeof w->where - l, ": %.17g vs %.17g", got, want);
    }
}

static void report(const char *set, worst *w)
{
    printf("%s %s: %ld values, worst |diff| %.3g (%s), %ld differ in any bit (tol %.0e)\n", set, w->what,
           w->compared, w->diff, w->where, w->bits, TOL);
    CHECK(w->diff <= TOL, "%s %s: worst |diff| %.3g at %s (tol %.0e)", set, w->what, w->diff, w->where, TOL);
}

/* Checks imgs[0..n) and their summary against a SET blob (saliency_metrics_ref.py). */
static void check_set(const char *set, const char *path, const sal_image *imgs, int n)
{
    blob b;
    if (blob_open(&b, path, "KCSALSET") < 0) {
        CHECK(0, "%s", kc_error());
        return;
    }
    int version = take_i32(&b), images = take_i32(&b);
    CHECK(version == 1 && images == n, "%s: version %d, %d images (expected 1, %d)", path, version, images, n);
    if (images != n) {
        free(b.data);
        return;
    }
    worst iou = {"IoU", 0, "", 0, 0}, acc = {"accuracy", 0, "", 0, 0}, pr = {"precision", 0, "", 0, 0},
          rc = {"recall", 0, "", 0, 0}, fb = {"Fbar_k", 0, "", 0, 0}, ds = {"dataset IoU/accuracy/maxFb", 0, "", 0, 0};
    long count_bad = 0;
    for (int i = 0; i < n; i++) {
        compare(&iou, imgs[i].iou, take_f64(&b), "image %ld", i, 0);
        compare(&acc, imgs[i].accuracy, take_f64(&b), "image %ld", i, 0);
        int64_t fg = take_i64(&b), pred_fg = take_i64(&b), pixels = take_i64(&b);
        if (fg != imgs[i].fg || pred_fg != imgs[i].pred_fg || pixels != imgs[i].pixels) {
            count_bad++;
            fprintf(stderr, "%s image %d: fg %ld pred_fg %ld pixels %ld, reference %ld %ld %ld\n", set, i, imgs[i].fg,
                    imgs[i].pred_fg, imgs[i].pixels, (long)fg, (long)pred_fg, (long)pixels);
        }
        float p[SAL_BINS], r[SAL_BINS];
        take(&b, p, sizeof p);
        take(&b, r, sizeof r);
        for (int k = 0; k < SAL_BINS; k++) {
            compare(&pr, imgs[i].precision[k], p[k], "image %ld bin %ld", i, k);
            compare(&rc, imgs[i].recall[k], r[k], "image %ld bin %ld", i, k);
        }
    }
    CHECK(count_bad == 0, "%s: %ld images' pixel counts differ", set, count_bad);
    sal_summary s;
    CHECK(sal_summarise(imgs, n, &s) == 0, "%s: %s", set, kc_error());
    double want_iou = take_f64(&b), want_acc = take_f64(&b), want_max = take_f64(&b);
    int best = take_i32(&b);
    take_i32(&b);
    float fbar[SAL_BINS];
    take(&b, fbar, sizeof fbar);
    CHECK(b.at == b.size, "%s: %zu bytes left over", path, b.size - b.at);
    free(b.data);
    compare(&ds, s.iou, want_iou, "mean IoU", 0, 0);
    compare(&ds, s.accuracy, want_acc, "mean accuracy", 0, 0);
    compare(&ds, s.max_fbeta, want_max, "max F-beta", 0, 0);
    for (int k = 0; k < SAL_BINS; k++) compare(&fb, s.fbar[k], fbar[k], "bin %ld", k, 0);
    report(set, &iou), report(set, &acc), report(set, &pr), report(set, &rc), report(set, &fb), report(set, &ds);
    printf("%s: %d images: IoU %.17g accuracy %.17g maxFb %.9g at bin %d (reference %.9g at %d)\n", set, n, s.iou,
           s.accuracy, s.max_fbeta, s.best_bin, want_max, best);
    CHECK(s.best_bin == best, "%s: best bin %d, reference %d", set, s.best_bin, best);
    /* the per-image helper: each image's F at the best bin averages to max F-beta (cascade aside) */
    double mean_f = 0;
    for (int i = 0; i < n; i++) mean_f += sal_image_fbeta(&imgs[i], s.best_bin);
    mean_f /= n;
    CHECK(fabs(mean_f - s.max_fbeta) <= 1e-5, "%s: per-image F at the best bin average %.9g, not %.9g", set, mean_f,
          s.max_fbeta);
}

/* ---- the synthetic cases ---------------------------------------------------------------------- */
static void synthetic(void)
{
    blob b;
    if (blob_open(&b, DIR "/synth_in.bin", "KCSALIN1") < 0) {
        CHECK(0, "%s", kc_error());
        return;
    }
    int n = take_i32(&b);
    sal_image *imgs = kc_calloc((size_t)n, sizeof *imgs);
    for (int i = 0; i < n; i++) {
        int h = take_i32(&b), w = take_i32(&b);
        size_t px = (size_t)h * w;
        uint8_t *gt = kc_malloc(px);
        double *pred = kc_malloc(px * sizeof *pred);
        take(&b, gt, px);
        take(&b, pred, px * sizeof *pred);
        CHECK(sal_image_score(gt, pred, (long)px, &imgs[i]) == 0, "synthetic %d: %s", i, kc_error());
        free(gt), free(pred);
    }
    free(b.data);
    check_set("synthetic", DIR "/synth.bin", imgs, n);
    free(imgs);
}

/* ---- the real DAVIS cases --------------------------------------------------------------------- */
static uint8_t *read_l(const char *path, int *w, int *h)
{
    kc_image im;
    if (image_load_rgb(path, &im) < 0) return NULL;
    size_t px = (size_t)im.w * im.h;
    uint8_t *l = kc_malloc(px);
    for (size_t i = 0; i < px; i++) {
        const uint8_t *c = im.rgb + 3 * i;
        l[i] = (uint8_t)((c[0] * 19595 + c[1] * 38470 + c[2] * 7471 + 0x8000) >> 16); /* Pillow's RGB -> L */
    }
    *w = im.w, *h = im.h;
    image_free(&im);
    return l;
}

static int real_case(const char *data, char *line, sal_image *out)
{
    char gt_rel[1024] = "", kind[64] = "", src_rel[1024] = "", ann_rel[1024] = "", path[8192];
    int fields = sscanf(line, "gt=%1023s pred=%63s src=%1023s ann=%1023s", gt_rel, kind, src_rel, ann_rel);
    if (fields < 3 || (!strcmp(kind, "mix")) != (fields == 4))
        return kc_fail(DIR "/real.txt: bad line '%s'", line);
    int w, h;
    double *pred = NULL;
    snprintf(path, sizeof path, "%s/%s", data, src_rel);
    if (!strcmp(kind, "binary")) {
        uint8_t *l = read_l(path, &w, &h);
        if (!l) return -1;
        pred = kc_malloc((size_t)w * h * sizeof *pred);
        for (size_t i = 0; i < (size_t)w * h; i++) pred[i] = l[i] != 0 ? 1.0 : 0.0;
        free(l);
    } else {
        kc_image im;
        if (image_load_rgb(path, &im) < 0) return -1;
        w = im.w, h = im.h;
        uint8_t *ann = NULL;
        if (fields == 4) {
            int aw, ah;
            snprintf(path, sizeof path, "%s/%s", data, ann_rel);
            if (!(ann = read_l(path, &aw, &ah)) || aw != w || ah != h) {
                image_free(&im), free(ann);
                return ann ? kc_fail("%s: %dx%d, the image %dx%d", path, aw, ah, w, h) : -1;
            }
        }
        pred = kc_malloc((size_t)w * h * sizeof *pred);
        for (size_t i = 0; i < (size_t)w * h; i++) {
            int s = im.rgb[3 * i] + 2 * im.rgb[3 * i + 1] + im.rgb[3 * i + 2]; /* R + 2G + B */
            if (!strcmp(kind, "soft1020")) pred[i] = s / 1020.0;
            else if (!strcmp(kind, "exact")) pred[i] = (s / 4) * (1.0 / 255);
            else if (ann) pred[i] = (ann[i] != 0 ? 0.5 : 0.0) + s / 2040.0;
            else pred[i] = 0.0;
        }
        image_free(&im), free(ann);
    }
    uint8_t *gt;
    if (!strcmp(gt_rel, "zero")) {
        gt = kc_calloc((size_t)w * h, 1);
    } else {
        int gw, gh;
        snprintf(path, sizeof path, "%s/%s", data, gt_rel);
        gt = read_l(path, &gw, &gh);
        if (gt && (gw != w || gh != h)) {
            free(gt), gt = NULL;
            kc_fail("%s: %dx%d, the prediction %dx%d", path, gw, gh, w, h);
        }
    }
    int rc = gt ? sal_image_score(gt, pred, (long)w * h, out) : -1;
    free(gt), free(pred);
    return rc;
}

static void real(void)
{
    const char *data = test_shared_data();
    if (!data) {
        SKIP("the shared data (../shared/data or KC_SHARED_DATA) is absent: the real DAVIS cases are not run");
        return;
    }
    FILE *f = fopen(DIR "/real.txt", "r");
    if (!f) {
        CHECK(0, "cannot open " DIR "/real.txt");
        return;
    }
    char line[4096];
    int n = 0, cap = 128;
    sal_image *imgs = kc_malloc((size_t)cap * sizeof *imgs);
    int ok = 1;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        if (!line[0]) continue;
        if (n == cap) imgs = kc_realloc(imgs, (size_t)(cap *= 2) * sizeof *imgs);
        if (real_case(data, line, &imgs[n]) < 0) {
            CHECK(0, "real case %d: %s", n, kc_error());
            ok = 0;
            break;
        }
        n++;
    }
    fclose(f);
    if (ok) check_set("real", DIR "/real.bin", imgs, n);
    free(imgs);
}

/* ---- torch's sum over dim 0 ----------------------------------------------------------------- */
static float formula(long i, long k)
{
    uint64_t m = ((uint64_t)i * 2654435761u + (uint64_t)k * 40503u) % 1000003u;
    return (float)m / 1000003.0f;
}

static void cascade(const char *path)
{
    blob b;
    if (blob_open(&b, path, "KCSALSUM") < 0) {
        CHECK(0, "%s", kc_error());
        return;
    }
    int version = take_i32(&b), cases = take_i32(&b);
    CHECK(version == 1, "%s: version %d", path, version);
    long sums = 0, sum_bits = 0, means = 0, mean_bits = 0, seq_bits = 0;
    char worst_at[256] = "";
    double worst = 0;
    for (int c = 0; c < cases; c++) {
        long rows = take_i32(&b), cols = take_i32(&b);
        int has_mean = take_i32(&b);
        float *x = kc_malloc((size_t)rows * cols * sizeof *x + 1), *want = kc_malloc((size_t)cols * sizeof *want);
        float *got = kc_malloc((size_t)cols * sizeof *got);
        for (long i = 0; i < rows; i++)
            for (long k = 0; k < cols; k++) x[i * cols + k] = formula(i, k);
        sal_torch_colsum_f32(x, rows, cols, got);
        take(&b, want, (size_t)cols * sizeof *want);
        for (int pass = 0; pass < 1 + has_mean; pass++) {
            if (pass) {
                take(&b, want, (size_t)cols * sizeof *want);
                for (long k = 0; k < cols; k++) got[k] = got[k] / (float)rows;
            }
            for (long k = 0; k < cols; k++) {
                int differ = memcmp(&got[k], &want[k], sizeof *got) != 0;
                double d = fabs((double)got[k] - want[k]);
                if (pass) means++, mean_bits += differ;
                else sums++, sum_bits += differ;
                if (differ && d >= worst) {
                    worst = d;
                    snprintf(worst_at, sizeof worst_at, "%s of (%ld, %ld) column %ld: %.9g vs %.9g",
                             pass ? "mean" : "sum", rows, cols, k, got[k], want[k]);
                }
                if (!pass) { /* how much the cascade matters: a plain sequential sum */
                    float s = 0;
                    for (long i = 0; i < rows; i++) s += x[i * cols + k];
                    seq_bits += memcmp(&s, &want[k], sizeof s) != 0;
                }
            }
        }
        free(x), free(want), free(got);
    }
    CHECK(b.at == b.size, "%s: %zu bytes left over", path, b.size - b.at);
    free(b.data);
    printf("cascade %s: %d shapes, %ld sums and %ld means; %ld sums and %ld means differ in any bit (tol 0)%s%s\n",
           path, cases, sums, means, sum_bits, mean_bits, worst_at[0] ? "; worst " : "", worst_at);
    printf("cascade %s: a plain sequential float32 sum would differ from torch in %ld of %ld sums\n", path, seq_bits,
           sums);
    CHECK(sum_bits == 0 && mean_bits == 0, "%s: %ld sums and %ld means differ from torch (worst %s)", path, sum_bits,
          mean_bits, worst_at);
}

/* ---- hand-made checks ----------------------------------------------------------------------- */
static void units(void)
{
    /* numpy's arange(0, 1, 1/255) endpoints, and a pixel on a threshold does not pass it */
    CHECK(sal_threshold(0) == 0.0 && sal_threshold(254) == 254 * (1.0 / 255), "thresholds are k * (1.0 / 255)");
    uint8_t gt[4] = {0, 255, 1, 0};
    double pred[4] = {7 * (1.0 / 255), 1.0, 0.5, 0.0};
    sal_image im;
    CHECK(sal_image_score(gt, pred, 4, &im) == 0, "4 pixels: %s", kc_error());
    /* p = {0, 1, 0, 0}, g = {0, 1, 1, 0}: IoU 1/2, accuracy 3/4 */
    CHECK(im.iou == 0.5 && im.accuracy == 0.75 && im.fg == 2 && im.pred_fg == 1, "4 pixels: IoU %g acc %g", im.iou,
          im.accuracy);
    /* bin 6: pixels 0, 1, 2 pass (area 3, TP 2); bin 7: pixel 0 sits on t_7 and no longer passes */
    CHECK(im.precision[6] == 2.0f / 3.0f && im.precision[7] == 1.0f && im.recall[7] == 1.0f,
          "4 pixels: P_6 %.9g P_7 %.9g R_7 %.9g", im.precision[6], im.precision[7], im.recall[7]);
    /* bin 254: pixel 1 (1.0) passes only; bin 127 (t = 0.498...): pixels 1, 2 */
    CHECK(im.recall[254] == 0.5f && im.precision[254] == 1.0f && im.recall[127] == 1.0f, "4 pixels: top bins");
    sal_image none;
    CHECK(sal_image_score(gt, pred, 0, &none) < 0 && strstr(kc_error(), "0 pixels"), "an empty image is refused");
    sal_summary s;
    CHECK(sal_summarise(&im, 0, &s) < 0, "no images is refused");
    /* the cascade against a sequential sum on 16 values: one step, the same order */
    float v[40];
    for (int i = 0; i < 40; i++) v[i] = formula(i, 3);
    float seq = 0;
    for (int i = 0; i < 16; i++) seq += v[i];
    CHECK(sal_torch_cascade_f32(v, 16, 1) == 0.0f + seq, "16 rows: the cascade is one sequential step");
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--cascade")) {
        cascade(argv[2]);
        return test_done();
    }
    if (argc != 1) {
        fprintf(stderr, "usage: test_sal_metrics [--cascade FILE]\n");
        return 2;
    }
    units();
    synthetic();
    real();
    cascade(DIR "/cascade.bin");
    return test_done();
}
