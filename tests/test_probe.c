/* tests/test_probe.c — the linear probe's numerics (eval/probe/probe.h), against independent references:
 *   - the bilinear upsampling and its transpose against a plain double loop of PyTorch's formula
 *     (tolerance 1e-6 relative), and the transpose against the adjoint identity <Au, v> = <u, A'v>;
 *   - one image's loss and gradients against a plain double implementation (softmax, cross-entropy,
 *     the chain rule written out per pixel and corner; 2e-5 of the largest value), itself checked
 *     against central finite differences of its loss (1e-5);
 *   - label resizing against PyTorch (tests/data/probe/labels_small, tests/ref/probe_refs.py): exact;
 *   - the confusion matrix and IoU against a hand-worked case;
 *   - PyTorch's SGD step against two steps worked by hand;
 *   - a whole training run against PyTorch (tests/data/probe/tiny: 6 epochs, an image without a
 *     valid pixel, weight decay, momentum, the learning-rate drop): head within 1e-5 of max|W|,
 *     every epoch's loss within 1e-6 relative;
 *   - the trainer gives the same bytes on 1 and 2 threads;
 *   - the seeded initialisation is PyTorch's Conv2d bound, the epoch orders are permutations;
 *   - a checkpoint (eval/probe/probe_file.h) restores head, momentum and losses bit for bit, and is refused
 *     for another run's fingerprint or as a head.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/probe/probe.h"
#include "eval/probe/probe_file.h"
#include "pipeline/kc.h"
#include "tests/test.h"

#ifdef _OPENMP
#include <omp.h>
#endif

static uint64_t rng = 88172645463325252ull;
static double rnd(void) /* xorshift64*, uniform in [0, 1) */
{
    rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
    return (double)((rng * 2685821657736338717ull) >> 11) * 0x1p-53;
}

/* PyTorch's source index for align_corners = False: its coordinate is a float (scale = in / out
 * as float, src = scale (d + 0.5) - 0.5); the interpolation itself is done in double here */
static void ref_axis(int in, int out, int d, int *i0, int *i1, double *l1)
{
    float scale = (float)in / (float)out;
    double src = (double)(scale * ((float)d + 0.5f) - 0.5f);
    if (src < 0) src = 0;
    *i0 = (int)src;
    *i1 = *i0 + (*i0 < in - 1);
    *l1 = src - *i0;
}

static void ref_upsample(int C, int gh, int gw, int mh, int mw, const float *z, double *u)
{
    for (int c = 0; c < C; c++)
        for (int y = 0; y < mh; y++)
            for (int x = 0; x < mw; x++) {
                int y0, y1, x0, x1;
                double ly, lx;
                ref_axis(gh, mh, y, &y0, &y1, &ly);
                ref_axis(gw, mw, x, &x0, &x1, &lx);
                const float *zc = z + (size_t)c * gh * gw;
                u[((size_t)c * mh + y) * mw + x] = (1 - ly) * ((1 - lx) * zc[y0 * gw + x0] + lx * zc[y0 * gw + x1]) +
                                                   ly * ((1 - lx) * zc[y1 * gw + x0] + lx * zc[y1 * gw + x1]);
            }
}

static void test_upsample(void)
{
    const int shapes[][4] = {{14, 14, 100, 100}, {4, 3, 10, 10}, {3, 7, 5, 19}, {28, 28, 100, 100}, {1, 1, 4, 4},
                             {14, 14, 14, 14}, {7, 5, 3, 2}, {30, 30, 480, 480}};
    double worst = 0, worst_adj = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        const int gh = shapes[s][0], gw = shapes[s][1], mh = shapes[s][2], mw = shapes[s][3], C = 3;
        probe_geom g;
        probe_geom_init(&g, gh, gw, mh, mw);
        float *z = kc_malloc(sizeof(float) * C * gh * gw), *u = kc_malloc(sizeof(float) * C * mh * mw);
        float *tmp = kc_malloc(sizeof(float) * C * gh * mw), *v = kc_malloc(sizeof(float) * C * mh * mw);
        float *gz = kc_malloc(sizeof(float) * C * gh * gw);
        double *ref = kc_malloc(sizeof(double) * C * mh * mw);
        for (int i = 0; i < C * gh * gw; i++) z[i] = (float)(2 * rnd() - 1);
        for (int i = 0; i < C * mh * mw; i++) v[i] = (float)(2 * rnd() - 1);
        probe_upsample(&g, C, z, tmp, u);
        ref_upsample(C, gh, gw, mh, mw, z, ref);
        double w = 0;
        for (int i = 0; i < C * mh * mw; i++) w = fmax(w, fabs(u[i] - ref[i]));
        CHECK(w <= 1e-6, "upsample %dx%d -> %dx%d: max |diff| %.3g vs the double loop (tol 1e-6)", gh, gw, mh, mw, w);
        worst = fmax(worst, w);
        /* the transpose: <A z, v> = <z, A' v> */
        probe_upsample_t(&g, C, v, tmp, gz);
        double lhs = 0, rhs = 0, mag = 0;
        for (int i = 0; i < C * mh * mw; i++) lhs += (double)u[i] * v[i], mag += fabs((double)u[i] * v[i]);
        for (int i = 0; i < C * gh * gw; i++) rhs += (double)z[i] * gz[i];
        double rel = fabs(lhs - rhs) / (mag > 0 ? mag : 1);
        CHECK(rel <= 1e-6, "upsample %dx%d -> %dx%d: <Az, v> %.9g, <z, A'v> %.9g", gh, gw, mh, mw, lhs, rhs);
        worst_adj = fmax(worst_adj, rel);
        free(z), free(u), free(tmp), free(v), free(gz), free(ref);
        probe_geom_free(&g);
    }
    printf("upsampling: worst |diff| %.3g against PyTorch's formula in double, adjoint identity %.3g\n", worst, worst_adj);
}

/* Loss (summed over valid pixels) and gradients of one image, in double, written from the formula:
 * u = bilinear(W t + b); loss_p = logsumexp(u_p) - u_{label p}; d loss / d W = sum_p sum_c
 * (softmax_cp - [c = label]) * d u_cp / d W, with d u_cp / d z_cg the bilinear weight of grid cell g. */
static double ref_image(int C, int D, int gh, int gw, int M, const double *W, const double *b, const float *tok,
                        const uint8_t *lab, double *dW, double *db)
{
    const int G = gh * gw;
    double *z = kc_calloc((size_t)C * G, sizeof(double));
    for (int c = 0; c < C; c++)
        for (int g = 0; g < G; g++) {
            double s = b[c];
            for (int d = 0; d < D; d++) s += W[c * D + d] * tok[(size_t)g * D + d];
            z[c * G + g] = s;
        }
    double loss = 0;
    double *gz = kc_calloc((size_t)C * G, sizeof(double));
    double *uc = kc_malloc(sizeof(double) * C);
    for (int y = 0; y < M; y++)
        for (int x = 0; x < M; x++) {
            int p = y * M + x;
            if (lab[p] == PROBE_IGNORE) continue;
            int y0, y1, x0, x1;
            double ly, lx;
            ref_axis(gh, M, y, &y0, &y1, &ly);
            ref_axis(gw, M, x, &x0, &x1, &lx);
            const int cell[4] = {y0 * gw + x0, y0 * gw + x1, y1 * gw + x0, y1 * gw + x1};
            const double wt[4] = {(1 - ly) * (1 - lx), (1 - ly) * lx, ly * (1 - lx), ly * lx};
            double mx = -INFINITY;
            for (int c = 0; c < C; c++) {
                uc[c] = 0;
                for (int k = 0; k < 4; k++) uc[c] += wt[k] * z[c * G + cell[k]];
                mx = fmax(mx, uc[c]);
            }
            double s = 0;
            for (int c = 0; c < C; c++) s += exp(uc[c] - mx);
            loss += mx + log(s) - uc[lab[p]];
            for (int c = 0; c < C; c++) {
                double gcp = exp(uc[c] - mx) / s - (c == lab[p]);
                for (int k = 0; k < 4; k++) gz[c * G + cell[k]] += gcp * wt[k];
            }
        }
    if (dW)
        for (int c = 0; c < C; c++) {
            db[c] = 0;
            for (int g = 0; g < G; g++) db[c] += gz[c * G + g];
            for (int d = 0; d < D; d++) {
                double s = 0;
                for (int g = 0; g < G; g++) s += gz[c * G + g] * tok[(size_t)g * D + d];
                dW[c * D + d] = s;
            }
        }
    free(z), free(gz), free(uc);
    return loss;
}

static void test_gradient(void)
{
    const int cases[][5] = {{3, 8, 4, 3, 10}, {21, 32, 14, 14, 100}, {2, 16, 5, 7, 11}, {5, 12, 2, 2, 64}};
    double worst_l = 0, worst_g = 0, worst_fd = 0;
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const int C = cases[k][0], D = cases[k][1], gh = cases[k][2], gw = cases[k][3], M = cases[k][4], G = gh * gw;
        probe_head h = {C, D, kc_malloc(sizeof(float) * C * D), kc_malloc(sizeof(float) * C)};
        double *Wd = kc_malloc(sizeof(double) * C * D), *bd = kc_malloc(sizeof(double) * C);
        for (int i = 0; i < C * D; i++) Wd[i] = h.w[i] = (float)(0.6 * rnd() - 0.3);
        for (int i = 0; i < C; i++) bd[i] = h.b[i] = (float)(0.6 * rnd() - 0.3);
        float *tok = kc_malloc(sizeof(float) * G * D);
        for (int i = 0; i < G * D; i++) tok[i] = (float)(4 * rnd() - 2);
        uint8_t *lab = kc_malloc((size_t)M * M);
        for (int i = 0; i < M * M; i++) lab[i] = rnd() < 0.1 ? PROBE_IGNORE : (uint8_t)(rnd() * C);
        long nv = probe_count_valid(lab, (long)M * M, C, "test");
        probe_geom g;
        probe_geom_init(&g, gh, gw, M, M);
        probe_scratch *s = probe_scratch_new(&g, C);
        float *dW = kc_malloc(sizeof(float) * C * D), *db = kc_malloc(sizeof(float) * C);
        const float inv = (float)(1.0 / nv);
        double loss = probe_image_grad(&h, &g, tok, lab, inv, s, dW, db);
        double *rW = kc_malloc(sizeof(double) * C * D), *rb = kc_malloc(sizeof(double) * C);
        double rl = ref_image(C, D, gh, gw, M, Wd, bd, tok, lab, rW, rb);
        double el = fabs(loss - rl) / rl, mg = 0, eg = 0;
        for (int i = 0; i < C * D; i++) mg = fmax(mg, fabs(rW[i] / nv));
        for (int i = 0; i < C; i++) mg = fmax(mg, fabs(rb[i] / nv));
        for (int i = 0; i < C * D; i++) eg = fmax(eg, fabs(dW[i] - rW[i] / nv));
        for (int i = 0; i < C; i++) eg = fmax(eg, fabs(db[i] - rb[i] / nv));
        CHECK(el <= 2e-6, "C %d D %d grid %dx%d M %d: loss %.9g, reference %.9g (rel %.3g, tol 2e-6)", C, D, gh, gw, M, loss, rl, el);
        CHECK(eg <= 2e-5 * mg, "C %d D %d grid %dx%d M %d: gradient max |diff| %.3g of max %.3g (tol 2e-5 of it)", C, D, gh, gw, M,
              eg, mg);
        worst_l = fmax(worst_l, el);
        worst_g = fmax(worst_g, eg / mg);
        /* the reference itself against finite differences of its loss, on a few coordinates */
        for (int t = 0; t < 6; t++) {
            int i = (int)(rnd() * C * D), isb = t == 5;
            if (isb) i = (int)(rnd() * C);
            double *p = isb ? &bd[i] : &Wd[i], p0 = *p, hstep = 1e-5;
            *p = p0 + hstep;
            double lp = ref_image(C, D, gh, gw, M, Wd, bd, tok, lab, NULL, NULL);
            *p = p0 - hstep;
            double lm = ref_image(C, D, gh, gw, M, Wd, bd, tok, lab, NULL, NULL);
            *p = p0;
            double fd = (lp - lm) / (2 * hstep), an = isb ? rb[i] : rW[i];
            double e = fabs(fd - an) / fmax(1.0, fabs(an));
            CHECK(e <= 1e-5, "finite differences: %s[%d] %.9g vs %.9g", isb ? "b" : "W", i, fd, an);
            worst_fd = fmax(worst_fd, e);
        }
        free(h.w), free(h.b), free(Wd), free(bd), free(tok), free(lab), free(dW), free(db), free(rW), free(rb);
        probe_scratch_free(s);
        probe_geom_free(&g);
    }
    printf("one image: loss rel %.3g, gradient %.3g of its max, against the double reference; reference vs finite "
           "differences %.3g\n", worst_l, worst_g, worst_fd);
}

static void test_labels(void)
{
    uint8_t *bin;
    size_t n;
    FILE *f = fopen("tests/data/probe/labels_small.tsv", "r");
    if (!f || kc_read_file("tests/data/probe/labels_small.bin", &bin, &n) < 0) {
        CHECK(0, "tests/data/probe/labels_small.*: missing (run tests/ref/probe_refs.py)");
        if (f) fclose(f);
        return;
    }
    int h, w, S, M, cases = 0;
    size_t off = 0;
    while (fscanf(f, "%d %d %d %d", &h, &w, &S, &M) == 4) {
        const uint8_t *lab = bin + off, *want = lab + (size_t)w * h;
        off += (size_t)w * h + (size_t)M * M;
        if (off > n) {
            CHECK(0, "labels_small.bin too short");
            break;
        }
        uint8_t *got = kc_malloc((size_t)M * M);
        probe_labels_resize(lab, w, h, S, M, got);
        long bad = 0;
        for (int i = 0; i < M * M; i++) bad += got[i] != want[i];
        CHECK(bad == 0, "labels %dx%d -> %d -> %d: %ld of %d values differ from PyTorch's", w, h, S, M, bad, M * M);
        cases++;
        free(got);
    }
    fclose(f);
    free(bin);
    CHECK(cases >= 6, "%d label cases", cases);
    printf("label resizing: %d cases exact against Pillow NEAREST + F.interpolate(nearest)\n", cases);
}

static void test_iou(void)
{
    /* 3 classes; truth and prediction over 10 pixels, two ignored:
     * truth 0 0 0 1 1 2 2 255 1 255, pred 0 1 0 1 2 2 0 2 1 0
     * class 0: tp 2, fp 1 (pixel 6), fn 1 (pixel 1)    IoU 2/4
     * class 1: tp 2, fp 1 (pixel 1), fn 1 (pixel 4)    IoU 2/4
     * class 2: tp 1, fp 1 (pixel 4), fn 1 (pixel 6)    IoU 1/3       mIoU (1/2 + 1/2 + 1/3) / 3 */
    const uint8_t truth[10] = {0, 0, 0, 1, 1, 2, 2, 255, 1, 255}, pred[10] = {0, 1, 0, 1, 2, 2, 0, 2, 1, 0};
    int64_t conf[9] = {0}, tp[3], fp[3], fn[3];
    double iou[3];
    int nc;
    probe_confusion_add(conf, 3, truth, pred, 10);
    double m = probe_iou(conf, 3, iou, tp, fp, fn, &nc);
    CHECK(tp[0] == 2 && fp[0] == 1 && fn[0] == 1 && tp[1] == 2 && fp[1] == 1 && fn[1] == 1 && tp[2] == 1 && fp[2] == 1 &&
              fn[2] == 1,
          "confusion counts");
    CHECK_CLOSE(iou[2], 1.0 / 3, 1e-15, "IoU of class 2");
    CHECK_CLOSE(m, (0.5 + 0.5 + 1.0 / 3) / 3, 1e-15, "mIoU");
    CHECK(nc == 3, "classes counted %d", nc);
    /* a class never seen nor predicted does not count */
    int64_t conf4[16] = {0}, tp4[4], fp4[4], fn4[4];
    double iou4[4];
    const uint8_t t4[3] = {0, 1, 1}, p4[3] = {0, 1, 0};
    probe_confusion_add(conf4, 4, t4, p4, 3);
    m = probe_iou(conf4, 4, iou4, tp4, fp4, fn4, &nc);
    CHECK(nc == 2 && isnan(iou4[2]) && isnan(iou4[3]), "absent classes: %d counted", nc);
    CHECK_CLOSE(m, (0.5 + 0.5) / 2, 1e-15, "mIoU without absent classes");
    /* labels above the class count are refused */
    const uint8_t badlab[3] = {0, 21, 255};
    CHECK(probe_count_valid(badlab, 3, 21, "x.png") < 0 && strstr(kc_error(), "class id 21"), "class 21 refused: %s", kc_error());
}

static void test_sgd(void)
{
    /* PyTorch SGD(lr 0.1, momentum 0.9, weight_decay 0.01), p = 1, gradients 0.5 then -0.2:
     * step 1: d = 0.5 + 0.01 = 0.51, buf = 0.51, p = 1 - 0.051 = 0.949
     * step 2: d = -0.2 + 0.00949 = -0.19051, buf = 0.9 * 0.51 - 0.19051 = 0.26849, p = 0.949 - 0.026849 */
    float p = 1, buf = 0, g1 = 0.5f, g2 = -0.2f;
    probe_sgd(&p, &buf, &g1, 1, 0.1f, 0.9f, 0.01f, 1);
    CHECK_CLOSE(p, 0.949, 1e-6, "SGD step 1");
    probe_sgd(&p, &buf, &g2, 1, 0.1f, 0.9f, 0.01f, 0);
    CHECK_CLOSE(buf, 0.26849, 1e-6, "SGD momentum buffer");
    CHECK_CLOSE(p, 0.949 - 0.026849, 1e-6, "SGD step 2");
}

typedef struct tiny {
    int n, gh, gw, D, C, M, B, E, drop;
    double lr, mom, wd;
    float *tok, *w0, *b0, *wf, *bf;
    uint8_t *lab;
    int32_t *orders;
    double *losses;
    uint8_t *bin;
} tiny;

static int tiny_load(tiny *t)
{
    FILE *f = fopen("tests/data/probe/tiny.tsv", "r");
    size_t n;
    if (!f) return -1;
    int ok = fscanf(f, "%d %d %d %d %d %d %d %d %lf %lf %lf %d", &t->n, &t->gh, &t->gw, &t->D, &t->C, &t->M, &t->B, &t->E,
                    &t->lr, &t->mom, &t->wd, &t->drop) == 12;
    fclose(f);
    if (!ok || kc_read_file("tests/data/probe/tiny.bin", &t->bin, &n) < 0) return -1;
    const int G = t->gh * t->gw;
    uint8_t *p = t->bin;
    t->tok = (float *)p, p += sizeof(float) * (size_t)t->n * G * t->D;
    t->lab = p, p += (size_t)t->n * t->M * t->M;
    t->w0 = (float *)p, p += sizeof(float) * (size_t)t->C * t->D;
    t->b0 = (float *)p, p += sizeof(float) * (size_t)t->C;
    t->orders = (int32_t *)p, p += sizeof(int32_t) * (size_t)t->E * t->n;
    t->wf = (float *)p, p += sizeof(float) * (size_t)t->C * t->D;
    t->bf = (float *)p, p += sizeof(float) * (size_t)t->C;
    t->losses = (double *)p, p += sizeof(double) * (size_t)t->E;
    return (size_t)(p - t->bin) == n ? 0 : -1;
}

/* Replays the tiny run with the trainer; head and losses out. */
static void tiny_run(const tiny *t, float *w, float *b, double *losses)
{
    probe_head h = {t->C, t->D, w, b};
    memcpy(w, t->w0, sizeof(float) * (size_t)t->C * t->D);
    memcpy(b, t->b0, sizeof(float) * (size_t)t->C);
    probe_trainer tr;
    probe_trainer_init(&tr, &h, t->gh, t->gw, t->M, t->B);
    const int G = t->gh * t->gw;
    float *tok = kc_malloc(sizeof(float) * (size_t)t->B * G * t->D);
    const uint8_t **labs = kc_malloc(sizeof *labs * (size_t)t->B);
    long *valid = kc_malloc(sizeof(long) * (size_t)t->B);
    for (int e = 0; e < t->E; e++) {
        const float lr = (float)(e >= t->drop ? t->lr * 0.1 : t->lr);
        double sum = 0;
        int steps = 0;
        for (int bi = 0; bi < t->n / t->B; bi++) {
            for (int k = 0; k < t->B; k++) {
                int i = t->orders[(size_t)e * t->n + (size_t)bi * t->B + k];
                memcpy(tok + (size_t)k * G * t->D, t->tok + (size_t)i * G * t->D, sizeof(float) * (size_t)G * t->D);
                labs[k] = t->lab + (size_t)i * t->M * t->M;
                valid[k] = probe_count_valid(labs[k], (long)t->M * t->M, t->C, "tiny");
            }
            double l = probe_trainer_step(&tr, tok, labs, valid, lr, (float)t->mom, (float)t->wd);
            if (!isnan(l)) sum += l, steps++;
        }
        losses[e] = sum / steps;
    }
    probe_trainer_free(&tr);
    free(tok), free(labs), free(valid);
}

static void test_training(void)
{
    tiny t;
    memset(&t, 0, sizeof t);
    if (tiny_load(&t) < 0) {
        CHECK(0, "tests/data/probe/tiny.*: missing or of the wrong size (run tests/ref/probe_refs.py)");
        return;
    }
    const int CD = t.C * t.D;
    float *w = kc_malloc(sizeof(float) * CD), *b = kc_malloc(sizeof(float) * t.C);
    double *losses = kc_malloc(sizeof(double) * t.E);
    tiny_run(&t, w, b, losses);
    double mw = 0, dw = 0, dl = 0;
    for (int i = 0; i < CD; i++) mw = fmax(mw, fabs(t.wf[i])), dw = fmax(dw, fabs(w[i] - t.wf[i]));
    for (int i = 0; i < t.C; i++) dw = fmax(dw, fabs(b[i] - t.bf[i]));
    for (int e = 0; e < t.E; e++) dl = fmax(dl, fabs(losses[e] - t.losses[e]) / t.losses[e]);
    CHECK(dw <= 1e-5 * mw, "tiny run: head max |diff| %.3g vs PyTorch's (max|W| %.3g, tol 1e-5 of it)", dw, mw);
    CHECK(dl <= 1e-6, "tiny run: losses worst relative difference %.3g vs PyTorch's (tol 1e-6)", dl);
    printf("training against PyTorch (%d epochs, %d steps): head %.3g of max|W|, losses %.3g relative\n", t.E,
           t.E * (t.n / t.B), dw / mw, dl);
#ifdef _OPENMP
    /* one thread and two: the same bytes */
    float *w1 = kc_malloc(sizeof(float) * CD), *b1 = kc_malloc(sizeof(float) * t.C);
    double *l1 = kc_malloc(sizeof(double) * t.E);
    int nt = omp_get_max_threads();
    omp_set_num_threads(1);
    tiny_run(&t, w1, b1, l1);
    omp_set_num_threads(2);
    tiny_run(&t, w, b, losses);
    omp_set_num_threads(nt);
    CHECK(!memcmp(w, w1, sizeof(float) * CD) && !memcmp(b, b1, sizeof(float) * t.C) && !memcmp(losses, l1, sizeof(double) * t.E),
          "1 and 2 threads give different heads");
    free(w1), free(b1), free(l1);
#endif
    free(w), free(b), free(losses), free(t.bin);
}

static void test_init_order(void)
{
    probe_head h;
    probe_head_init(&h, 21, 384, 0);
    double bound = 1 / sqrt(384.0), mx = 0, mean = 0;
    for (int i = 0; i < 21 * 384; i++) mx = fmax(mx, fabs(h.w[i])), mean += h.w[i];
    mean /= 21 * 384;
    CHECK(mx <= bound && mx > 0.99 * bound, "init: max |W| %.6g, bound %.6g", mx, bound);
    CHECK(fabs(mean) < 0.05 * bound, "init: mean %.3g", mean);
    probe_head h2;
    probe_head_init(&h2, 21, 384, 0);
    CHECK(!memcmp(h.w, h2.w, sizeof(float) * 21 * 384) && !memcmp(h.b, h2.b, sizeof(float) * 21), "init not reproducible");
    probe_head_free(&h2);
    probe_head_init(&h2, 21, 384, 1);
    CHECK(memcmp(h.w, h2.w, sizeof(float) * 21 * 384) != 0, "seeds 0 and 1 give the same head");
    probe_head_free(&h2);
    probe_head_free(&h);
    int n = 1000, *o = kc_malloc(sizeof(int) * n), *o2 = kc_malloc(sizeof(int) * n), *seen = kc_calloc(n, sizeof(int));
    probe_epoch_order(0, 3, n, o);
    probe_epoch_order(0, 4, n, o2);
    int perm = 1, same = 0;
    for (int i = 0; i < n; i++) perm &= o[i] >= 0 && o[i] < n && !seen[o[i]]++, same += o[i] == o2[i];
    CHECK(perm, "epoch order is not a permutation");
    CHECK(same < 20, "epochs 3 and 4 share %d positions", same);
    free(o), free(o2), free(seen);
}

/* The checkpoint and head files (eval/probe/probe_file.h): what is saved is restored bit for bit, a
 * checkpoint of another run is refused, a saved head reads back as a head. */
static void test_files(void)
{
    const char *dir = test_tmpdir("probe_file");
    probe_head h, back = {0};
    probe_head_init(&h, 3, 5, 7);
    float bw[15], bb[3], rw[15], rb[3];
    for (int i = 0; i < 15; i++) bw[i] = 0.25f * (float)i - 1.0f;
    for (int i = 0; i < 3; i++) bb[i] = -0.5f * (float)i;
    const double losses[2] = {2.5, 0.1 + 0.2};
    char *path = kc_strfmt("%s/checkpoint.safetensors", dir);
    CHECK(probe_ckpt_save(path, &h, bw, bb, 2, losses, "fp-a") == 0, "checkpoint saved: %s", kc_error());
    probe_head_init(&back, 3, 5, 99); /* other values, to be overwritten */
    probe_ckpt c = {0, NULL};
    CHECK(probe_ckpt_load(path, &back, rw, rb, "fp-b", &c) < 0 && strstr(kc_error(), "a checkpoint of another run"),
          "another run's checkpoint refused (%s)", kc_error());
    int rc = probe_ckpt_load(path, &back, rw, rb, "fp-a", &c);
    CHECK(rc == 0, "checkpoint loaded: %s", kc_error());
    if (rc == 0) {
        CHECK(!memcmp(back.w, h.w, sizeof(float) * 15) && !memcmp(back.b, h.b, sizeof(float) * 3), "head restored");
        CHECK(!memcmp(rw, bw, sizeof bw) && !memcmp(rb, bb, sizeof bb), "momentum restored");
        CHECK(c.epochs_done == 2 && c.losses[0] == losses[0] && c.losses[1] == losses[1], "epochs %d, losses %.17g %.17g",
              c.epochs_done, c.losses[0], c.losses[1]);
    }
    free(c.losses);
    /* a checkpoint holds weight and bias: it reads as a head only without its momentum tensors */
    probe_head read = {0};
    char *ws = NULL;
    CHECK(probe_head_read(path, &read, &ws) < 0 && strstr(kc_error(), "unknown tensor 'momentum.bias'"),
          "a checkpoint is not a head (%s)", kc_error());
    probe_head_free(&read);
    free(ws);
    probe_head_free(&back);
    probe_head_free(&h);
    free(path);
}

int main(void)
{
    test_upsample();
    test_gradient();
    test_labels();
    test_iou();
    test_sgd();
    test_training();
    test_init_order();
    test_files();
    return test_done();
}
