/* decoders/refine/refine.c — MaskCut's CRF and TokenCut's bilateral-solver protocols (see refine.h). */
#include "decoders/refine/refine.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/images/grid_map.h"
#include "pipeline/kc.h"

int refine_method_parse(const char *s, refine_method *m)
{
    if (!strcmp(s, "none")) *m = REFINE_NONE;
    else if (!strcmp(s, "crf")) *m = REFINE_CRF;
    else if (!strcmp(s, "bs")) *m = REFINE_BS;
    else return kc_fail("refinement '%s' is not none, crf or bs", s);
    return 0;
}

const char *refine_method_name(refine_method m)
{
    return m == REFINE_CRF ? "crf" : m == REFINE_BS ? "bs" : "none";
}

int refine_check(const refine_opts *o)
{
    const crf_params *c = &o->crf;
    const bs_params *b = &o->bs;
    if (!(c->gauss_sxy > 0 && c->gauss_sxy < 1e6)) return kc_fail("--crf-gauss-sxy must be in (0, 1e6) (got %g)", c->gauss_sxy);
    if (!(c->bi_sxy > 0 && c->bi_sxy < 1e6)) return kc_fail("--crf-bi-sxy must be in (0, 1e6) (got %g)", c->bi_sxy);
    if (!(c->bi_srgb > 0 && c->bi_srgb < 1e6)) return kc_fail("--crf-bi-srgb must be in (0, 1e6) (got %g)", c->bi_srgb);
    if (!(c->gauss_w >= 0 && c->gauss_w < 1e6)) return kc_fail("--crf-gauss-w must be in [0, 1e6) (got %g)", c->gauss_w);
    if (!(c->bi_w >= 0 && c->bi_w < 1e6)) return kc_fail("--crf-bi-w must be in [0, 1e6) (got %g)", c->bi_w);
    if (c->iters < 0 || c->iters > 1000) return kc_fail("--crf-iters must be in 0..1000 (got %d)", c->iters);
    if (!(o->crf_clip > 0 && o->crf_clip < 0.5)) return kc_fail("--crf-clip must be in (0, 0.5) (got %g)", o->crf_clip);
    if (!(o->crf_min_iou >= 0 && o->crf_min_iou <= 1)) return kc_fail("--crf-min-iou must be in [0, 1] (got %g)", o->crf_min_iou);
    if (!(b->sigma_spatial >= 1 && b->sigma_spatial < 1e4)) return kc_fail("--bs-sigma-spatial must be in [1, 1e4) (got %g)", b->sigma_spatial);
    if (!(b->sigma_luma >= 1 && b->sigma_luma < 1e4)) return kc_fail("--bs-sigma-luma must be in [1, 1e4) (got %g)", b->sigma_luma);
    if (!(b->sigma_chroma >= 1 && b->sigma_chroma < 1e4)) return kc_fail("--bs-sigma-chroma must be in [1, 1e4) (got %g)", b->sigma_chroma);
    if (!(b->lambda >= 0 && b->lambda < 1e12)) return kc_fail("--bs-lambda must be in [0, 1e12) (got %g)", b->lambda);
    if (!(b->confidence > 0 && b->confidence <= 1)) return kc_fail("--bs-confidence must be in (0, 1] (got %g)", b->confidence);
    if (!(b->diag_min > 0)) return kc_fail("--bs-diag-min must be > 0 (got %g)", b->diag_min);
    if (!(b->cg_tol > 0 && b->cg_tol < 1)) return kc_fail("--bs-cg-tol must be in (0, 1) (got %g)", b->cg_tol);
    if (b->cg_maxiter < 0 || b->cg_maxiter > 100000) return kc_fail("--bs-cg-maxiter must be in 0..100000 (got %d)", b->cg_maxiter);
    if (b->bistoch_iters < 0 || b->bistoch_iters > 1000) return kc_fail("--bs-bistoch-iters must be in 0..1000 (got %d)", b->bistoch_iters);
    if (!(o->bs_threshold >= 0 && o->bs_threshold <= 1)) return kc_fail("--bs-threshold must be in [0, 1] (got %g)", o->bs_threshold);
    return 0;
}

/* ---- binary morphology ------------------------------------------------------------------------ */
void refine_fill_holes(uint8_t *mask, int w, int h)
{
    const size_t n = (size_t)w * h;
    uint8_t *outside = kc_calloc(n, 1);
    int32_t *stack = kc_malloc(n * sizeof *stack);
    size_t top = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            if ((y == 0 || y == h - 1 || x == 0 || x == w - 1) && !mask[(size_t)y * w + x] && !outside[(size_t)y * w + x]) {
                outside[(size_t)y * w + x] = 1;
                stack[top++] = (int32_t)((size_t)y * w + x);
            }
    while (top) {
        int32_t i = stack[--top];
        int x = i % w, y = i / w;
        const int nx[4] = {x - 1, x + 1, x, x}, ny[4] = {y, y, y - 1, y + 1};
        for (int k = 0; k < 4; k++) {
            if (nx[k] < 0 || nx[k] >= w || ny[k] < 0 || ny[k] >= h) continue;
            size_t j = (size_t)ny[k] * w + nx[k];
            if (!mask[j] && !outside[j]) {
                outside[j] = 1;
                stack[top++] = (int32_t)j;
            }
        }
    }
    for (size_t i = 0; i < n; i++) mask[i] = !outside[i];
    free(outside);
    free(stack);
}

void refine_tokencut_components(uint8_t *mask, int w, int h)
{
    const size_t n = (size_t)w * h;
    int32_t *lab = kc_calloc(n, sizeof *lab), *stack = kc_malloc(n * sizeof *stack);
    int64_t *count = kc_malloc(sizeof *count);
    int k = 0;
    count[0] = 0;
    for (size_t s = 0; s < n; s++) {
        if (!mask[s]) {
            count[0]++;
            continue;
        }
        if (lab[s]) continue;
        /* a new region, numbered in raster order of its first pixel (scipy.ndimage.label) */
        k++;
        count = kc_realloc(count, (size_t)(k + 1) * sizeof *count);
        count[k] = 0;
        size_t top = 0;
        lab[s] = k;
        stack[top++] = (int32_t)s;
        while (top) {
            int32_t i = stack[--top];
            count[k]++;
            int x = i % w, y = i / w;
            const int nx[4] = {x - 1, x + 1, x, x}, ny[4] = {y, y, y - 1, y + 1};
            for (int d = 0; d < 4; d++) {
                if (nx[d] < 0 || nx[d] >= w || ny[d] < 0 || ny[d] >= h) continue;
                size_t j = (size_t)ny[d] * w + nx[d];
                if (mask[j] && !lab[j]) {
                    lab[j] = k;
                    stack[top++] = (int32_t)j;
                }
            }
        }
    }
    if (k == 0) {
        memset(mask, 1, n); /* TokenCut: pixel_order[-2] fails, the except branch keeps everything */
    } else {
        /* stable ascending sort of the counts (labels 0..k); the second from the end */
        int *order = kc_malloc((size_t)(k + 1) * sizeof *order);
        for (int i = 0; i <= k; i++) {
            int j = i;
            while (j > 0 && count[order[j - 1]] > count[i]) {
                order[j] = order[j - 1];
                j--;
            }
            order[j] = i;
        }
        int pick = order[k - 1];
        for (size_t i = 0; i < n; i++) mask[i] = lab[i] == pick;
        free(order);
    }
    free(lab);
    free(stack);
    free(count);
}

double refine_iou(const uint8_t *a, const uint8_t *b, size_t n)
{
    size_t inter = 0, uni = 0;
    for (size_t i = 0; i < n; i++) {
        inter += a[i] && b[i];
        uni += a[i] || b[i];
    }
    return uni ? (double)inter / (double)uni : NAN;
}

/* ---- Pillow 9.4's resample (bicubic, mode L) -------------------------------------------------- */
enum { PRECISION_BITS = 32 - 8 - 2 };

static double bicubic(double x)
{
    const double a = -0.5;
    if (x < 0.0) x = -x;
    if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
    if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * a;
    return 0.0;
}

/* Pillow's precompute_coeffs + normalize_coeffs_8bpc for in_size -> out_size over the whole axis. */
static int bicubic_coeffs(int in_size, int out_size, int32_t **kk_out, int **bounds_out)
{
    double scale = (double)in_size / out_size, filterscale = scale < 1.0 ? 1.0 : scale;
    double support = 2.0 * filterscale;
    int ksize = (int)ceil(support) * 2 + 1;
    double *pre = kc_malloc((size_t)out_size * ksize * sizeof *pre);
    int32_t *kk = kc_malloc((size_t)out_size * ksize * sizeof *kk);
    int *bounds = kc_malloc((size_t)out_size * 2 * sizeof *bounds);
    for (int xx = 0; xx < out_size; xx++) {
        double center = (xx + 0.5) * scale, ww = 0.0, ss = 1.0 / filterscale;
        int xmin = (int)(center - support + 0.5), xmax = (int)(center + support + 0.5);
        if (xmin < 0) xmin = 0;
        if (xmax > in_size) xmax = in_size;
        xmax -= xmin;
        double *k = pre + (size_t)xx * ksize;
        int x;
        for (x = 0; x < xmax; x++) {
            double wt = bicubic((x + xmin - center + 0.5) * ss);
            k[x] = wt;
            ww += wt;
        }
        for (x = 0; x < xmax; x++)
            if (ww != 0.0) k[x] /= ww;
        for (; x < ksize; x++) k[x] = 0;
        bounds[2 * xx] = xmin;
        bounds[2 * xx + 1] = xmax;
    }
    for (size_t i = 0; i < (size_t)out_size * ksize; i++)
        kk[i] = pre[i] < 0 ? (int32_t)(-0.5 + pre[i] * (1 << PRECISION_BITS)) : (int32_t)(0.5 + pre[i] * (1 << PRECISION_BITS));
    free(pre);
    *kk_out = kk;
    *bounds_out = bounds;
    return ksize;
}

static uint8_t clip8(int64_t v)
{
    if (v >= ((int64_t)1 << PRECISION_BITS << 8)) return 255;
    if (v <= 0) return 0;
    return (uint8_t)(v >> PRECISION_BITS);
}

void refine_resize_bicubic_l(const uint8_t *src, int sw, int sh, uint8_t *dst, int dw, int dh)
{
    const uint8_t *cur = src;
    uint8_t *tmp = NULL;
    int cw = sw;
    if (dw != sw) {
        int32_t *kk;
        int *b;
        int ks = bicubic_coeffs(sw, dw, &kk, &b);
        tmp = kc_malloc((size_t)dw * sh);
        for (int y = 0; y < sh; y++)
            for (int xx = 0; xx < dw; xx++) {
                int64_t s = 1 << (PRECISION_BITS - 1);
                const int32_t *k = kk + (size_t)xx * ks;
                for (int x = 0; x < b[2 * xx + 1]; x++) s += (int64_t)src[(size_t)y * sw + x + b[2 * xx]] * k[x];
                tmp[(size_t)y * dw + xx] = clip8((int32_t)s);
            }
        free(kk);
        free(b);
        cur = tmp;
        cw = dw;
    }
    if (dh != sh) {
        int32_t *kk;
        int *b;
        int ks = bicubic_coeffs(sh, dh, &kk, &b);
        for (int yy = 0; yy < dh; yy++) {
            const int32_t *k = kk + (size_t)yy * ks;
            for (int x = 0; x < cw; x++) {
                int64_t s = 1 << (PRECISION_BITS - 1);
                for (int y = 0; y < b[2 * yy + 1]; y++) s += (int64_t)cur[(size_t)(y + b[2 * yy]) * cw + x] * k[y];
                dst[(size_t)yy * cw + x] = clip8((int32_t)s);
            }
        }
        free(kk);
        free(b);
    } else {
        memcpy(dst, cur, (size_t)cw * sh);
    }
    free(tmp);
}

/* ---- MaskCut ------------------------------------------------------------------------------- */
int refine_crf_mask(const refine_opts *o, const uint8_t *rgb, int w, int h, const uint8_t *mask, uint8_t *out,
                    float *q, double *iou)
{
    const size_t n = (size_t)w * h;
    /* softmax of the logits (1 - m, m) in double, as torch does it on crf.py's float64 tensor */
    float un[2][2];
    for (int m = 0; m < 2; m++) {
        double l0 = 1.0 - m, l1 = m, mx = l0 > l1 ? l0 : l1;
        double e0 = exp(l0 - mx), e1 = exp(l1 - mx), s = e0 + e1;
        double p0 = e0 / s, p1 = e1 / s;
        un[m][0] = (float)-log(p0 < o->crf_clip ? o->crf_clip : p0 > 1.0 ? 1.0 : p0);
        un[m][1] = (float)-log(p1 < o->crf_clip ? o->crf_clip : p1 > 1.0 ? 1.0 : p1);
    }
    float *unary = kc_malloc(n * 2 * sizeof *unary), *qq = q ? q : kc_malloc(n * 2 * sizeof *qq);
    for (size_t i = 0; i < n; i++) {
        unary[2 * i] = un[mask[i] != 0][0];
        unary[2 * i + 1] = un[mask[i] != 0][1];
    }
    int rc = crf_run(&o->crf, rgb, w, h, unary, 2, qq);
    if (rc == 0) {
        for (size_t i = 0; i < n; i++) out[i] = qq[2 * i + 1] > qq[2 * i];
        refine_fill_holes(out, w, h);
        *iou = refine_iou(mask, out, n);
        if (*iou < o->crf_min_iou) memset(out, 0, n);
    }
    free(unary);
    if (!q) free(qq);
    return rc;
}

void refine_crf_to_original(const uint8_t *mask, int w, int h, uint8_t *out, int W, int H)
{
    const size_t n = (size_t)w * h, N = (size_t)W * H;
    if (w == W && h == H) {
        memcpy(out, mask, n);
        return;
    }
    uint8_t *m255 = kc_malloc(n), *res = kc_malloc(N);
    for (size_t i = 0; i < n; i++) m255[i] = mask[i] ? 255 : 0;
    refine_resize_bicubic_l(m255, w, h, res, W, H);
    int mx = 0;
    for (size_t i = 0; i < N; i++)
        if (res[i] > mx) mx = res[i];
    double thresh = mx / 2.0;
    for (size_t i = 0; i < N; i++) out[i] = mx > 0 && res[i] > thresh;
    free(m255);
    free(res);
}

/* ---- one image ------------------------------------------------------------------------------ */
int refine_image(const refine_opts *o, const kc_image *img, kc_policy policy, int patch, const uint8_t *labels,
                 int grid_h, int grid_w, int n_rounds, uint8_t *out, refine_info *info)
{
    const int W = img->w, H = img->h;
    const size_t N = (size_t)W * H;
    memset(info, 0, sizeof *info);
    if (n_rounds < 1 || n_rounds > 16) return kc_fail("%d rounds (1..16 supported)", n_rounds);
    info->rounds = n_rounds;
    for (int r = 0; r < 16; r++) info->iou[r] = NAN;
    memset(out, 0, N);
    uint8_t *round_px = kc_malloc(N);
    if (o->method == REFINE_CRF) {
        int pw, ph, rc0 = 0;
        policy_size(policy, patch, W, H, &pw, &ph); /* the resized image the grid covers */
        if (policy == POLICY_NATIVE16) pw = W, ph = H;
        if (policy != POLICY_NATIVE16 && (pw != grid_w * patch || ph != grid_h * patch))
            rc0 = kc_fail("a %dx%d grid of %d-pixel patches does not cover the %s image (%dx%d)", grid_w, grid_h, patch,
                          policy_name(policy), pw, ph);
        else if (policy == POLICY_NATIVE16 && (grid_w != (W + patch - 1) / patch || grid_h != (H + patch - 1) / patch))
            rc0 = kc_fail("a %dx%d grid does not fit native16 with patch %d on %dx%d", grid_w, grid_h, patch, W, H);
        if (rc0 < 0) {
            free(round_px);
            return -1;
        }
        const size_t n = (size_t)pw * ph;
        uint8_t *rgb = img->rgb, *resized = NULL;
        if (policy != POLICY_NATIVE16) { /* the image the features saw, by the policy's resampler */
            resized = kc_malloc(n * 3);
            if (policy == POLICY_SQUARE480 || policy == POLICY_ROUND) resize_lanczos_pillow(img->rgb, W, H, resized, pw, ph);
            else if (policy == POLICY_SHORT480) resize_bilinear_cv(img->rgb, W, H, resized, pw, ph);
            else resize_bilinear_pillow(img->rgb, W, H, resized, pw, ph);
            rgb = resized;
        }
        uint8_t *m = kc_malloc(n), *ref = kc_malloc(n);
        int rc = 0;
        for (int r = 1; r <= n_rounds && rc == 0; r++) {
            size_t any = 0;
            for (int y = 0; y < ph; y++)
                for (int x = 0; x < pw; x++) any += m[(size_t)y * pw + x] = labels[(size_t)(y / patch) * grid_w + x / patch] == r;
            if (!any) continue; /* an empty round stays empty */
            double iou;
            rc = refine_crf_mask(o, rgb, pw, ph, m, ref, NULL, &iou);
            if (rc < 0) break;
            info->iou[r - 1] = (float)iou;
            info->dropped[r - 1] = iou < o->crf_min_iou;
            refine_crf_to_original(ref, pw, ph, round_px, W, H);
            for (size_t i = 0; i < N; i++)
                if (round_px[i] && !out[i]) out[i] = (uint8_t)r;
        }
        free(m);
        free(ref);
        free(resized);
        free(round_px);
        return rc;
    }
    if (o->method != REFINE_BS) {
        free(round_px);
        return kc_fail("refine_image: no refinement method");
    }
    if (grid_check("label map", policy, patch, W, H, grid_h, grid_w) < 0) {
        free(round_px);
        return -1;
    }
    int32_t *cx = kc_malloc((size_t)W * sizeof *cx), *cy = kc_malloc((size_t)H * sizeof *cy);
    grid_axis_cells(policy, patch, W, grid_w, cx);
    grid_axis_cells(policy, patch, H, grid_h, cy);
    double *target = kc_malloc(N * sizeof *target), *solved = kc_malloc(N * sizeof *solved);
    bs_solver *s = NULL;
    int rc = 0;
    for (int r = 1; r <= n_rounds; r++) {
        size_t any = 0;
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                int on = labels[(size_t)cy[y] * grid_w + cx[x]] == r;
                target[(size_t)y * W + x] = on;
                any += on;
            }
        if (!any && !o->bs_components) continue; /* the solver maps a zero target to zero */
        if (any) {
            if (!s && (rc = bs_init(&s, &o->bs, img->rgb, W, H)) < 0) break;
            bs_stats st;
            bs_run(s, target, solved, &st);
            info->cg_iters[r - 1] = st.cg_iters;
            info->vertices = st.vertices;
            for (size_t i = 0; i < N; i++) round_px[i] = solved[i] > o->bs_threshold;
        } else {
            memset(round_px, 0, N);
        }
        refine_fill_holes(round_px, W, H);
        if (o->bs_components) refine_tokencut_components(round_px, W, H);
        for (size_t i = 0; i < N; i++)
            if (round_px[i] && !out[i]) out[i] = (uint8_t)r;
    }
    bs_free(s);
    free(cx);
    free(cy);
    free(target);
    free(solved);
    free(round_px);
    return rc;
}
