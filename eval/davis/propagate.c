/* eval/davis/propagate.c — windowed DINO label propagation (see propagate.h). */
#include "eval/davis/propagate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/images/resize.h"
#include "pipeline/kc.h"

#define PROP_MAX_TOPK 64

void prop_config_default(prop_config *c)
{
    c->window = 12;
    c->topk = 5;
    c->temperature = 0.1;
    c->context = 7;
    c->patch = 16;
}

int prop_config_check(const prop_config *c)
{
    if (c->window < 0 || c->window > 1000) return kc_fail("--window %d: must be in 0..1000", c->window);
    if (c->topk < 1 || c->topk > PROP_MAX_TOPK) return kc_fail("--topk %d: must be in 1..%d", c->topk, PROP_MAX_TOPK);
    if (!(c->temperature > 0) || !isfinite(c->temperature))
        return kc_fail("--temperature %g: must be a positive number", c->temperature);
    if (c->context < 0 || c->context > 100) return kc_fail("--context %d: must be in 0..100", c->context);
    if (c->patch < 1 || c->patch > 64) return kc_fail("--patch %d: must be in 1..64", c->patch);
    return 0;
}

/* F.normalize(x, dim=1) divides by max(|x|, 1e-12): the raw rows are kept and their norms stored,
 * cos(i, j) = x_i . x_j / (norm_i norm_j) in double. */
static void row_norms(const float *src, int n, int dim, double *norm)
{
    for (int i = 0; i < n; i++) {
        const float *s = src + (size_t)i * dim;
        double ss = 0;
        for (int k = 0; k < dim; k++) ss += (double)s[k] * s[k];
        norm[i] = sqrt(ss) < 1e-12 ? 1e-12 : sqrt(ss);
    }
}

int prop_init(prop_video *v, const prop_config *cfg, int gh, int gw, int dim, const float *feat0,
              const uint8_t *small0)
{
    memset(v, 0, sizeof *v);
    KC_TRY(prop_config_check(cfg));
    if (gh < 1 || gw < 1 || dim < 1) return kc_fail("propagation: bad grid %dx%d or feature size %d", gh, gw, dim);
    v->cfg = *cfg;
    v->gh = gh;
    v->gw = gw;
    v->n = gh * gw;
    v->dim = dim;
    int maxl = 0;
    for (int i = 0; i < v->n; i++)
        if (small0[i] > maxl) maxl = small0[i];
    v->n_labels = maxl + 1;
    int slots = 1 + cfg->context;
    v->feat = kc_malloc(sizeof *v->feat * (size_t)slots * v->n * dim);
    v->soft = kc_calloc((size_t)slots * v->n * v->n_labels, sizeof *v->soft);
    v->norm = kc_malloc(sizeof *v->norm * (size_t)slots * v->n);
    memcpy(v->feat, feat0, sizeof *v->feat * (size_t)v->n * dim);
    row_norms(feat0, v->n, dim, v->norm);
    for (int i = 0; i < v->n; i++) v->soft[(size_t)i * v->n_labels + small0[i]] = 1.0f;
    v->n_recent = 0;
    v->next = 1;
    return 0;
}

void prop_free(prop_video *v)
{
    free(v->feat);
    free(v->soft);
    free(v->norm);
    memset(v, 0, sizeof *v);
}

/* Accumulated in double: the affinity exp(cos / 0.1) turns a relative error e of the cosine into
 * 10 e, and the top-k selection and the soft labels carried from frame to frame would let float
 * rounding flip labels far from any real tie. */
static inline double dot(const float *a, const float *b, int dim)
{
    double s = 0;
#pragma omp simd reduction(+ : s)
    for (int k = 0; k < dim; k++) s += (double)a[k] * (double)b[k];
    return s;
}

int prop_step(prop_video *v, const float *feat, float *soft)
{
    const int n = v->n, dim = v->dim, C = v->n_labels, gw = v->gw, gh = v->gh, win = v->cfg.window;
    const int topk = v->cfg.topk, slots = 1 + v->cfg.context;
    const double temp = v->cfg.temperature;
    double *tnorm = kc_malloc(sizeof *tnorm * (size_t)n);
    double *newsoft = kc_malloc(sizeof *newsoft * (size_t)n * C);
    row_norms(feat, n, dim, tnorm);
    /* context slots in use: 0 and the recent ones */
    int used[128], n_used = 0;
    used[n_used++] = 0;
    for (int s = 1; s < slots && n_used <= v->n_recent; s++) used[n_used++] = s;
    int wside = 2 * win + 1;
    long per_target = (long)n_used * (wside < gh ? wside : gh) * (wside < gw ? wside : gw);
#pragma omp parallel
    {
        double *aff = kc_malloc(sizeof *aff * (size_t)per_target);
        int *src = kc_malloc(sizeof *src * (size_t)per_target);
        double *acc = kc_malloc(sizeof *acc * (size_t)C);
#pragma omp for schedule(dynamic, 8)
        for (int i = 0; i < n; i++) {
            int yi = i / gw, xi = i % gw;
            int y0 = yi - win < 0 ? 0 : yi - win, y1 = yi + win >= gh ? gh - 1 : yi + win;
            int x0 = xi - win < 0 ? 0 : xi - win, x1 = xi + win >= gw ? gw - 1 : xi + win;
            const float *t = feat + (size_t)i * dim;
            long m = 0;
            double top[PROP_MAX_TOPK]; /* the topk largest, descending */
            int n_top = 0;
            for (int u = 0; u < n_used; u++) {
                int s = used[u];
                const float *f = v->feat + (size_t)s * n * dim;
                const double *fn = v->norm + (size_t)s * n;
                for (int y = y0; y <= y1; y++)
                    for (int x = x0; x <= x1; x++) {
                        int j = y * gw + x;
                        double a = exp(dot(t, f + (size_t)j * dim, dim) / (tnorm[i] * fn[j]) / temp);
                        aff[m] = a;
                        src[m] = s * n + j;
                        m++;
                        if (n_top < topk || a > top[n_top - 1]) {
                            int p = n_top < topk ? n_top++ : topk - 1;
                            while (p > 0 && top[p - 1] < a) {
                                top[p] = top[p - 1];
                                p--;
                            }
                            top[p] = a;
                        }
                    }
            }
            /* the topk-th largest over all sources; the masked (zero) ones count when the window
             * holds fewer than topk, which then keeps every windowed source */
            double thr = n_top < topk ? 0.0 : top[topk - 1];
            double sum = 0;
            for (int c = 0; c < C; c++) acc[c] = 0;
            for (long q = 0; q < m; q++) {
                if (aff[q] < thr) continue;
                sum += aff[q];
                const double *sl = v->soft + (size_t)src[q] * C;
                for (int c = 0; c < C; c++) acc[c] += aff[q] * sl[c];
            }
            for (int c = 0; c < C; c++) {
                newsoft[(size_t)i * C + c] = acc[c] / sum;
                soft[(size_t)i * C + c] = (float)(acc[c] / sum);
            }
        }
        free(aff);
        free(src);
        free(acc);
    }
    /* the frame joins the context */
    if (v->cfg.context > 0) {
        int s = v->next;
        memcpy(v->feat + (size_t)s * n * dim, feat, sizeof *feat * (size_t)n * dim);
        memcpy(v->norm + (size_t)s * n, tnorm, sizeof *tnorm * (size_t)n);
        memcpy(v->soft + (size_t)s * n * C, newsoft, sizeof *newsoft * (size_t)n * C);
        v->next = s + 1 > v->cfg.context ? 1 : s + 1;
        if (v->n_recent < v->cfg.context) v->n_recent++;
    }
    free(tnorm);
    free(newsoft);
    return 0;
}

/* PyTorch bilinear, align_corners=False, scale_factor given (recompute_scale_factor=False). */
static void bilinear_taps(int out, int in, int factor, int *i0, int *i1, float *l0, float *l1)
{
    float scale = 1.0f / (float)factor;
    for (int d = 0; d < out; d++) {
        float s = scale * ((float)d + 0.5f) - 0.5f;
        if (s < 0) s = 0;
        int a = (int)s;
        i0[d] = a;
        i1[d] = a < in - 1 ? a + 1 : a;
        l1[d] = s - (float)a;
        l0[d] = 1.0f - l1[d];
    }
}

void prop_soft_to_labels(const float *soft, int gh, int gw, int C, int patch, int w, int h, uint8_t *labels)
{
    int H = gh * patch, W = gw * patch;
    size_t HW = (size_t)H * W;
    float *up = kc_malloc(sizeof *up * HW * C);
    int *y0 = kc_malloc(sizeof(int) * H), *y1 = kc_malloc(sizeof(int) * H);
    int *x0 = kc_malloc(sizeof(int) * W), *x1 = kc_malloc(sizeof(int) * W);
    float *ly0 = kc_malloc(sizeof(float) * H), *ly1 = kc_malloc(sizeof(float) * H);
    float *lx0 = kc_malloc(sizeof(float) * W), *lx1 = kc_malloc(sizeof(float) * W);
    bilinear_taps(H, gh, patch, y0, y1, ly0, ly1);
    bilinear_taps(W, gw, patch, x0, x1, lx0, lx1);
    int *nan_channel = kc_calloc(C, sizeof(int));
#pragma omp parallel for schedule(static)
    for (int c = 0; c < C; c++) {
        float *u = up + (size_t)c * HW;
        for (int y = 0; y < H; y++) {
            const float *r0 = soft + (size_t)y0[y] * gw * C, *r1 = soft + (size_t)y1[y] * gw * C;
            for (int x = 0; x < W; x++) {
                float a = lx0[x] * r0[(size_t)x0[x] * C + c] + lx1[x] * r0[(size_t)x1[x] * C + c];
                float b = lx0[x] * r1[(size_t)x0[x] * C + c] + lx1[x] * r1[(size_t)x1[x] * C + c];
                u[(size_t)y * W + x] = ly0[y] * a + ly1[y] * b;
            }
        }
        float mn = u[0], mx = u[0];
        for (size_t i = 1; i < HW; i++) {
            if (u[i] < mn) mn = u[i];
            if (u[i] > mx) mx = u[i];
        }
        if (mx > 0) {
            float range = mx - mn;
            if (range == 0) {
                nan_channel[c] = 1; /* 0 / 0 in PyTorch: NaN, which torch.max picks */
            } else {
                for (size_t i = 0; i < HW; i++) u[i] = (u[i] - mn) / range;
            }
        }
    }
    int first_nan = -1;
    for (int c = 0; c < C; c++)
        if (nan_channel[c]) {
            first_nan = c;
            break;
        }
    uint8_t *arg = kc_malloc(HW);
    if (first_nan >= 0) {
        memset(arg, first_nan, HW);
    } else {
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < HW; i++) {
            int best = 0;
            float bv = up[i];
            for (int c = 1; c < C; c++)
                if (up[(size_t)c * HW + i] > bv) {
                    bv = up[(size_t)c * HW + i];
                    best = c;
                }
            arg[i] = (uint8_t)best;
        }
    }
    resize_nearest_pillow(arg, W, H, labels, w, h);
    free(arg);
    free(nan_channel);
    free(up);
    free(y0);
    free(y1);
    free(x0);
    free(x1);
    free(ly0);
    free(ly1);
    free(lx0);
    free(lx1);
}
