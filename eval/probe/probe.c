/* eval/probe/probe.c — see probe.h. */
#include "eval/probe/probe.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/images/resize.h"
#include "pipeline/model/fastmath.h"
#include "pipeline/model/gemm.h"
#include "pipeline/kc.h"
#include "pipeline/model/vit_init.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* ---- the bilinear map ------------------------------------------------------------------------ */

/* PyTorch's area_pixel_compute_source_index and compute_source_index_and_lambda (align_corners
 * False, float arithmetic), for one axis. */
static void axis(int in, int out, int *i0, int *i1, float *w0, float *w1)
{
    const float scale = (float)in / (float)out;
    for (int d = 0; d < out; d++) {
        float src = scale * ((float)d + 0.5f) - 0.5f;
        if (src < 0.0f) src = 0.0f;
        int a = (int)src;
        int off = a < in - 1 ? 1 : 0;
        float l1 = src - (float)a;
        if (l1 < 0.0f) l1 = 0.0f;
        if (l1 > 1.0f) l1 = 1.0f;
        i0[d] = a;
        i1[d] = a + off;
        w1[d] = l1;
        w0[d] = 1.0f - l1;
    }
}

void probe_geom_init(probe_geom *g, int gh, int gw, int mh, int mw)
{
    g->gh = gh, g->gw = gw, g->mh = mh, g->mw = mw;
    g->y0 = kc_malloc(sizeof(int) * (size_t)mh);
    g->y1 = kc_malloc(sizeof(int) * (size_t)mh);
    g->x0 = kc_malloc(sizeof(int) * (size_t)mw);
    g->x1 = kc_malloc(sizeof(int) * (size_t)mw);
    g->wy0 = kc_malloc(sizeof(float) * (size_t)mh);
    g->wy1 = kc_malloc(sizeof(float) * (size_t)mh);
    g->wx0 = kc_malloc(sizeof(float) * (size_t)mw);
    g->wx1 = kc_malloc(sizeof(float) * (size_t)mw);
    axis(gh, mh, g->y0, g->y1, g->wy0, g->wy1);
    axis(gw, mw, g->x0, g->x1, g->wx0, g->wx1);
}

void probe_geom_free(probe_geom *g)
{
    free(g->y0), free(g->y1), free(g->x0), free(g->x1);
    free(g->wy0), free(g->wy1), free(g->wx0), free(g->wx1);
    memset(g, 0, sizeof *g);
}

/* Along x, then along y: out = wy0 (wx0 z00 + wx1 z01) + wy1 (wx0 z10 + wx1 z11), PyTorch's order
 * of the operations for a 2-D bilinear output. */
void probe_upsample(const probe_geom *g, int C, const float *z, float *tmp, float *u)
{
    const int gh = g->gh, gw = g->gw, mh = g->mh, mw = g->mw;
    for (int c = 0; c < C; c++) {
        const float *zc = z + (size_t)c * gh * gw;
        float *tc = tmp + (size_t)c * gh * mw;
        for (int y = 0; y < gh; y++) {
            const float *zr = zc + (size_t)y * gw;
            float *tr = tc + (size_t)y * mw;
            for (int x = 0; x < mw; x++) tr[x] = g->wx0[x] * zr[g->x0[x]] + g->wx1[x] * zr[g->x1[x]];
        }
        float *uc = u + (size_t)c * mh * mw;
        for (int y = 0; y < mh; y++) {
            const float *r0 = tc + (size_t)g->y0[y] * mw, *r1 = tc + (size_t)g->y1[y] * mw;
            const float a = g->wy0[y], b = g->wy1[y];
            float *ur = uc + (size_t)y * mw;
#pragma omp simd
            for (int x = 0; x < mw; x++) ur[x] = a * r0[x] + b * r1[x];
        }
    }
}

void probe_upsample_t(const probe_geom *g, int C, const float *gu, float *tmp, float *gz)
{
    const int gh = g->gh, gw = g->gw, mh = g->mh, mw = g->mw;
    for (int c = 0; c < C; c++) {
        float *tc = tmp + (size_t)c * gh * mw;
        memset(tc, 0, sizeof(float) * (size_t)gh * mw);
        const float *uc = gu + (size_t)c * mh * mw;
        for (int y = 0; y < mh; y++) {
            float *r0 = tc + (size_t)g->y0[y] * mw, *r1 = tc + (size_t)g->y1[y] * mw;
            const float a = g->wy0[y], b = g->wy1[y];
            const float *ur = uc + (size_t)y * mw;
#pragma omp simd
            for (int x = 0; x < mw; x++) r0[x] += a * ur[x];
#pragma omp simd
            for (int x = 0; x < mw; x++) r1[x] += b * ur[x];
        }
        float *zc = gz + (size_t)c * gh * gw;
        memset(zc, 0, sizeof(float) * (size_t)gh * gw);
        for (int y = 0; y < gh; y++) {
            const float *tr = tc + (size_t)y * mw;
            float *zr = zc + (size_t)y * gw;
            for (int x = 0; x < mw; x++) {
                zr[g->x0[x]] += g->wx0[x] * tr[x];
                zr[g->x1[x]] += g->wx1[x] * tr[x];
            }
        }
    }
}

/* ---- one image --------------------------------------------------------------------------------- */

struct probe_scratch {
    float *z, *tmp, *u, *mx, *sum, *gz;
};

probe_scratch *probe_scratch_new(const probe_geom *g, int classes)
{
    probe_scratch *s = kc_calloc(1, sizeof *s);
    size_t G = (size_t)g->gh * g->gw, P = (size_t)g->mh * g->mw;
    s->z = kc_malloc(sizeof(float) * (size_t)classes * G);
    s->gz = kc_malloc(sizeof(float) * (size_t)classes * G);
    s->tmp = kc_malloc(sizeof(float) * (size_t)classes * g->gh * g->mw);
    s->u = kc_malloc(sizeof(float) * (size_t)classes * P);
    s->mx = kc_malloc(sizeof(float) * P);
    s->sum = kc_malloc(sizeof(float) * P);
    return s;
}

void probe_scratch_free(probe_scratch *s)
{
    if (!s) return;
    free(s->z), free(s->gz), free(s->tmp), free(s->u), free(s->mx), free(s->sum);
    free(s);
}

/* z (C, G) = W T^T + b */
static void logits(const probe_head *h, const probe_geom *g, const float *tokens, float *z)
{
    const int C = h->classes, G = g->gh * g->gw;
    kc_gemm_nt(C, G, h->dim, 1.0f, h->w, h->dim, tokens, h->dim, 0.0f, z, G);
    for (int c = 0; c < C; c++) {
        float *zc = z + (size_t)c * G;
        const float bc = h->b[c];
        for (int i = 0; i < G; i++) zc[i] += bc;
    }
}

/* ln x for x in [1, classes] (a sum of exponentials whose largest is 1): x = m 2^e with m in
 * [sqrt(1/2), sqrt 2), t = (m - 1) / (m + 1), ln x = e ln 2 + 2 (t + t^3/3 + ... + t^11/11),
 * |t| < 0.172 so the series is below 1e-9 of the result; branch-free, so it vectorises. */
static inline float probe_logf(float x)
{
    int32_t bits = kc__float_to_bits(x);
    int32_t e = ((bits >> 23) & 0xff) - 127;
    float m = kc__bits_to_float((bits & 0x007fffff) | 0x3f800000); /* [1, 2) */
    int big = m > 1.41421356f;
    m = big ? m * 0.5f : m;
    e += big;
    float t = (m - 1.0f) / (m + 1.0f), t2 = t * t;
    float p = 1.0f / 11.0f;
    p = p * t2 + 1.0f / 9.0f;
    p = p * t2 + 1.0f / 7.0f;
    p = p * t2 + 1.0f / 5.0f;
    p = p * t2 + 1.0f / 3.0f;
    p = p * t2 + 1.0f;
    return (float)e * 0.693147180559945f + 2.0f * t * p;
}

double probe_image_grad(const probe_head *h, const probe_geom *g, const float *tokens, const uint8_t *labels,
                        float inv_n, probe_scratch *s, float *dW, float *db)
{
    const int C = h->classes, G = g->gh * g->gw, P = g->mh * g->mw;
    logits(h, g, tokens, s->z);
    probe_upsample(g, C, s->z, s->tmp, s->u);
    float *mx = s->mx, *sum = s->sum;
    for (int p = 0; p < P; p++) mx[p] = s->u[p];
    for (int c = 1; c < C; c++) {
        const float *uc = s->u + (size_t)c * P;
#pragma omp simd
        for (int p = 0; p < P; p++) mx[p] = uc[p] > mx[p] ? uc[p] : mx[p];
    }
    /* the loss needs the label's logit before u becomes the softmax */
    double loss = 0;
    for (int p = 0; p < P; p++)
        if (labels[p] != PROBE_IGNORE) loss -= (double)(s->u[(size_t)labels[p] * P + p] - mx[p]);
    memset(sum, 0, sizeof(float) * (size_t)P);
    for (int c = 0; c < C; c++) {
        float *uc = s->u + (size_t)c * P;
#pragma omp simd
        for (int p = 0; p < P; p++) {
            float e = kc_expf(uc[p] - mx[p]);
            uc[p] = e;
            sum[p] += e;
        }
    }
    /* loss: log of the sum; gradient: (softmax - onehot) / N on valid pixels */
    float lsum = 0;
    double lacc = 0;
    for (int p0 = 0; p0 < P; p0 += 1024) { /* float partial sums of 1024 pixels, added in double */
        int p1 = p0 + 1024 < P ? p0 + 1024 : P;
        lsum = 0;
#pragma omp simd reduction(+ : lsum)
        for (int p = p0; p < p1; p++) {
            float l = probe_logf(sum[p]);
            lsum += labels[p] != PROBE_IGNORE ? l : 0.0f;
            sum[p] = labels[p] != PROBE_IGNORE ? inv_n / sum[p] : 0.0f; /* now the scale of each pixel */
        }
        lacc += lsum;
    }
    loss += lacc;
    for (int c = 0; c < C; c++) {
        float *uc = s->u + (size_t)c * P;
#pragma omp simd
        for (int p = 0; p < P; p++) uc[p] *= sum[p];
    }
    for (int p = 0; p < P; p++)
        if (labels[p] != PROBE_IGNORE) s->u[(size_t)labels[p] * P + p] -= inv_n;
    probe_upsample_t(g, C, s->u, s->tmp, s->gz);
    /* dW (C, D) = gz (C, G) T (G, D); db = row sums of gz */
    kc_gemm_nn(C, h->dim, G, 1.0f, s->gz, G, tokens, h->dim, 0.0f, dW, h->dim);
    for (int c = 0; c < C; c++) {
        double acc = 0;
        const float *gc = s->gz + (size_t)c * G;
        for (int i = 0; i < G; i++) acc += gc[i];
        db[c] = (float)acc;
    }
    return loss;
}

void probe_predict(const probe_head *h, const probe_geom *g, const float *tokens, probe_scratch *s, uint8_t *pred)
{
    const int C = h->classes, P = g->mh * g->mw;
    logits(h, g, tokens, s->z);
    probe_upsample(g, C, s->z, s->tmp, s->u);
    float *mx = s->mx;
    for (int p = 0; p < P; p++) {
        mx[p] = s->u[p];
        pred[p] = 0;
    }
    for (int c = 1; c < C; c++) {
        const float *uc = s->u + (size_t)c * P;
        for (int p = 0; p < P; p++)
            if (uc[p] > mx[p]) { /* strictly: the lowest class wins a tie */
                mx[p] = uc[p];
                pred[p] = (uint8_t)c;
            }
    }
}

long probe_count_valid(const uint8_t *labels, long n, int classes, const char *what)
{
    long v = 0;
    for (long i = 0; i < n; i++) {
        if (labels[i] == PROBE_IGNORE) continue;
        if (labels[i] >= classes)
            return kc_fail("%s: class id %d is above %d (and not %d, the ignore label)", what, labels[i], classes - 1,
                           PROBE_IGNORE);
        v++;
    }
    return v;
}

void probe_sgd(float *p, float *buf, const float *grad, int n, float lr, float momentum, float weight_decay, int first)
{
    for (int i = 0; i < n; i++) {
        float d = grad[i] + weight_decay * p[i];
        buf[i] = first ? d : momentum * buf[i] + d;
        p[i] -= lr * buf[i];
    }
}

/* ---- labels -------------------------------------------------------------------------------------- */

void probe_labels_resize(const uint8_t *lab, int w, int h, int S, int m, uint8_t *out)
{
    uint8_t *big = kc_malloc((size_t)S * S);
    resize_nearest_pillow(lab, w, h, big, S, S);
    if (m == S) {
        memcpy(out, big, (size_t)S * S);
    } else {
        /* ATen's nearest_idx: floorf(dst * (float)in / out), at most in - 1 (m == 2 S: dst >> 1,
         * the same value) */
        const float scale = (float)S / (float)m;
        int *src = kc_malloc(sizeof(int) * (size_t)m);
        for (int d = 0; d < m; d++) {
            int v = (int)floorf((float)d * scale);
            src[d] = v < S - 1 ? v : S - 1;
        }
        for (int y = 0; y < m; y++)
            for (int x = 0; x < m; x++) out[(size_t)y * m + x] = big[(size_t)src[y] * S + src[x]];
        free(src);
    }
    free(big);
}

/* ---- evaluation ---------------------------------------------------------------------------------- */

void probe_confusion_add(int64_t *conf, int classes, const uint8_t *truth, const uint8_t *pred, long n)
{
    for (long i = 0; i < n; i++)
        if (truth[i] != PROBE_IGNORE && truth[i] < classes) conf[(size_t)truth[i] * classes + pred[i]]++;
}

double probe_iou(const int64_t *conf, int classes, double *iou, int64_t *tp, int64_t *fp, int64_t *fn, int *n_classes)
{
    double sum = 0;
    int n = 0;
    for (int c = 0; c < classes; c++) {
        int64_t t = conf[(size_t)c * classes + c], row = 0, col = 0;
        for (int k = 0; k < classes; k++) {
            row += conf[(size_t)c * classes + k];
            col += conf[(size_t)k * classes + c];
        }
        tp[c] = t;
        fn[c] = row - t;
        fp[c] = col - t;
        int64_t den = t + fp[c] + fn[c];
        iou[c] = den ? (double)t / (double)den : NAN;
        if (den) {
            sum += iou[c];
            n++;
        }
    }
    *n_classes = n;
    return n ? sum / n : NAN;
}

int probe_read_summary(const char *dir, double *miou)
{
    char *path = kc_strfmt("%s/summary.csv", dir);
    uint8_t *data = NULL;
    size_t size;
    int rc = kc_read_file(path, &data, &size);
    if (rc == 0) {
        const char *l2 = strchr((const char *)data, '\n');
        char *end;
        if (strncmp((const char *)data, "miou,classes,pixels", 19) || !l2) {
            rc = kc_fail("%s: not a kc-probe summary (header miou,classes,pixels)", path);
        } else {
            *miou = strtod(l2 + 1, &end);
            if (end == l2 + 1 || *end != ',' || !(*miou >= 0 && *miou <= 1))
                rc = kc_fail("%s: miou is not a number in [0, 1]", path);
        }
    }
    free(data);
    free(path);
    return rc;
}

/* ---- initialisation and order ------------------------------------------------------------------ */

void probe_head_init(probe_head *h, int classes, int dim, uint64_t seed)
{
    h->classes = classes;
    h->dim = dim;
    h->w = kc_malloc(sizeof(float) * (size_t)classes * dim);
    h->b = kc_malloc(sizeof(float) * (size_t)classes);
    const double bound = 1.0 / sqrt((double)dim);
    const uint64_t hw = init_name_hash("probe.weight"), hb = init_name_hash("probe.bias");
    for (int i = 0; i < classes * dim; i++) h->w[i] = (float)(bound * init_uniform(seed, hw, (uint32_t)i));
    for (int i = 0; i < classes; i++) h->b[i] = (float)(bound * init_uniform(seed, hb, (uint32_t)i));
}

void probe_head_free(probe_head *h)
{
    free(h->w);
    free(h->b);
    h->w = h->b = NULL;
}

void probe_epoch_order(uint64_t seed, int epoch, int n, int *order)
{
    const uint64_t hh = init_name_hash("probe.order") + (uint64_t)epoch;
    for (int i = 0; i < n; i++) order[i] = i;
    for (int k = n - 1; k > 0; k--) {
        double u = (init_uniform(seed, hh, (uint32_t)k) + 1.0) * 0.5; /* (0, 1) */
        int j = (int)(u * (double)(k + 1));
        if (j > k) j = k;
        int t = order[k];
        order[k] = order[j];
        order[j] = t;
    }
}

/* ---- training ------------------------------------------------------------------------------------ */

void probe_trainer_init(probe_trainer *t, probe_head *h, int gh, int gw, int mask, int batch)
{
    memset(t, 0, sizeof *t);
    t->h = h;
    t->batch = batch;
#ifdef _OPENMP
    t->n_threads = omp_get_max_threads() > 0 ? omp_get_max_threads() : 1;
#else
    t->n_threads = 1;
#endif
    const size_t CD = (size_t)h->classes * h->dim;
    t->bw = kc_calloc(CD, sizeof(float));
    t->bb = kc_calloc((size_t)h->classes, sizeof(float));
    probe_geom_init(&t->g, gh, gw, mask, mask);
    t->sc = kc_malloc(sizeof *t->sc * (size_t)t->n_threads);
    for (int i = 0; i < t->n_threads; i++) t->sc[i] = probe_scratch_new(&t->g, h->classes);
    t->dW = kc_malloc(sizeof(float) * (size_t)batch * CD);
    t->db = kc_malloc(sizeof(float) * (size_t)batch * h->classes);
    t->gw = kc_malloc(sizeof(float) * CD);
    t->gb = kc_malloc(sizeof(float) * (size_t)h->classes);
    t->img_loss = kc_malloc(sizeof(double) * (size_t)batch);
}

double probe_trainer_step(probe_trainer *t, const float *tokens, const uint8_t *const *labels, const long *valid,
                          float lr, float momentum, float weight_decay)
{
    const probe_head *h = t->h;
    const int B = t->batch, C = h->classes, D = h->dim, G = t->g.gh * t->g.gw;
    long nv = 0;
    for (int k = 0; k < B; k++) nv += valid[k];
    if (nv == 0) return NAN; /* (PyTorch's mean would divide by zero) */
    const float inv_n = (float)(1.0 / (double)nv);
#pragma omp parallel for schedule(dynamic, 1)
    for (int k = 0; k < B; k++) {
#ifdef _OPENMP
        const int th = omp_get_thread_num();
#else
        const int th = 0;
#endif
        t->img_loss[k] = probe_image_grad(h, &t->g, tokens + (size_t)k * G * D, labels[k], inv_n, t->sc[th],
                                          t->dW + (size_t)k * C * D, t->db + (size_t)k * C);
    }
    double loss = 0;
    for (int k = 0; k < B; k++) loss += t->img_loss[k];
#pragma omp parallel for schedule(static)
    for (int j = 0; j < C * D; j++) {
        float s = 0;
        for (int k = 0; k < B; k++) s += t->dW[(size_t)k * C * D + j];
        t->gw[j] = s;
    }
    for (int c = 0; c < C; c++) {
        float s = 0;
        for (int k = 0; k < B; k++) s += t->db[(size_t)k * C + c];
        t->gb[c] = s;
    }
    probe_sgd(h->w, t->bw, t->gw, C * D, lr, momentum, weight_decay, t->steps == 0);
    probe_sgd(h->b, t->bb, t->gb, C, lr, momentum, weight_decay, t->steps == 0);
    t->steps++;
    return loss / (double)nv;
}

void probe_trainer_free(probe_trainer *t)
{
    for (int i = 0; t->sc && i < t->n_threads; i++) probe_scratch_free(t->sc[i]);
    free(t->sc);
    probe_geom_free(&t->g);
    free(t->bw), free(t->bb), free(t->dW), free(t->db), free(t->gw), free(t->gb), free(t->img_loss);
    memset(t, 0, sizeof *t);
}
