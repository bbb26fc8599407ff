/* tests/test_attn_fused.c — the fused attention kernel (pipeline/model/attn.h) against a double-precision
 * loop written here (scores, softmax and the product P V in double), on qkv rows laid out as in
 * vit.c (q, k, v of one head inside rows of stride 3 x 384): token counts with every tail of the
 * score tile (1..8, 13, 901 = 480x480 + class, 1561 = 480x832 + class), every block size 1..48,
 * scores from small to |s| ~ 200 (the max subtraction), and rows of a block split over two calls
 * against one call, bit for bit (a row's result must not depend on the other rows).
 * Tolerance: max |v| (2e-6 + 16 u max_it sum_d |scale q_id k_td|), u = 2^-24: the float sums over
 * up to 1,561 tokens, plus a score's rounding (an FMA chain of 64 terms, taken as 8 u of the sum
 * of |terms|), which moves p by that much relative and the output by twice it; worst printed.
 * Both kernels: AVX2 everywhere, AVX-512 where the CPU has it; and where it does, the two must
 * give the same bytes on every case.  The start-up check (kc_attn_check_level) must pass with
 * room to spare on each. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/model/attn.h"
#include "pipeline/kc.h"
#include "tests/test.h"

#define HD 64
#define LD (3 * 384)

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double urand(void) /* uniform in [-1, 1) */
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0 * 2 - 1;
}

/* out (rows, HD) in double: softmax(scale q k^T) v. */
static void naive(int rows, int T, float scale, const float *q, const float *k, const float *v,
                  double *out)
{
    double *s = malloc(sizeof(double) * (size_t)T);
    for (int i = 0; i < rows; i++) {
        double mx = -INFINITY, sum = 0;
        for (int t = 0; t < T; t++) {
            double dot = 0;
            for (int d = 0; d < HD; d++) dot += (double)q[(size_t)i * LD + d] * k[(size_t)t * LD + d];
            s[t] = dot * scale;
            if (s[t] > mx) mx = s[t];
        }
        for (int t = 0; t < T; t++) sum += s[t] = exp(s[t] - mx);
        for (int d = 0; d < HD; d++) {
            double acc = 0;
            for (int t = 0; t < T; t++) acc += s[t] * v[(size_t)t * LD + d];
            out[(size_t)i * HD + d] = acc / sum;
        }
    }
    free(s);
}

static int g_level;     /* the kernel under test: 1 AVX2, 2 AVX-512 */
static int g_have_512;  /* the CPU runs the AVX-512 kernel too: compare the bytes */
static int g_cross_same = 1, g_cross_n;

#define kc_attn_rows(...) kc_attn_rows_level(g_level, __VA_ARGS__)

/* One case: T tokens, a block of `rows` query rows taken from row q0, scores of size ~amp. */
static void one_case(int T, int rows, int q0, double amp, double *worst)
{
    float *qkv = malloc(sizeof(float) * (size_t)T * LD);
    for (size_t i = 0; i < (size_t)T * LD; i++) qkv[i] = (float)(amp * urand());
    const float scale = 0.125f; /* 1 / sqrt(64) */
    const float *q = qkv + (size_t)q0 * LD + 64, *k = qkv + 384 + 64, *v = qkv + 768 + 64;
    const int ldo = 384;
    float *out = malloc(sizeof(float) * (size_t)rows * ldo), *out2 = malloc(sizeof(float) * (size_t)rows * ldo);
    float *work = malloc(sizeof(float) * kc_attn_work_floats(T));
    double *ref = malloc(sizeof(double) * (size_t)rows * HD);
    for (size_t i = 0; i < (size_t)rows * ldo; i++) out[i] = out2[i] = NAN;
    kc_attn_rows(rows, T, scale, q, k, v, LD, out, ldo, work);
    naive(rows, T, scale, q, k, v, ref);
    double vmax = 0, md = 0, smax = 0;
    for (int t = 0; t < T; t++)
        for (int d = 0; d < HD; d++) vmax = fmax(vmax, fabs(v[(size_t)t * LD + d]));
    for (int i = 0; i < rows; i++)
        for (int t = 0; t < T; t++) {
            double sa = 0;
            for (int d = 0; d < HD; d++) sa += fabs(scale * q[(size_t)i * LD + d] * k[(size_t)t * LD + d]);
            smax = fmax(smax, sa);
        }
    const double tol = vmax * (2e-6 + 16 * 0x1p-24 * smax);
    int finite = 1, untouched = 1;
    for (int i = 0; i < rows; i++) {
        for (int d = 0; d < HD; d++) {
            double g = out[(size_t)i * ldo + d];
            if (!isfinite(g)) finite = 0;
            md = fmax(md, fabs(g - ref[(size_t)i * HD + d]));
        }
        for (int d = HD; d < ldo; d++) /* the other heads' columns stay as they were */
            if (!isnan(out[(size_t)i * ldo + d])) untouched = 0;
    }
    if (g_have_512 && g_level == 1) { /* the AVX-512 kernel on the same case: the same bytes */
        float *o512 = malloc(sizeof(float) * (size_t)rows * ldo);
        memcpy(o512, out, sizeof(float) * (size_t)rows * ldo);
        kc_attn_rows_level(2, rows, T, scale, q, k, v, LD, o512, ldo, work);
        g_cross_same &= memcmp(o512, out, sizeof(float) * (size_t)rows * ldo) == 0;
        g_cross_n++;
        free(o512);
    }
    CHECK(finite, "T %d rows %d amp %g: non-finite output", T, rows, amp);
    CHECK(untouched, "T %d rows %d: wrote outside the head's 64 columns", T, rows);
    CHECK(md <= tol, "T %d rows %d amp %g: max |out - ref| %.3g > tolerance %.3g", T, rows, amp, md, tol);
    if (md / tol > *worst) *worst = md / tol;
    /* the same rows in two calls (split at a point that is not a tile boundary) */
    if (rows > 1) {
        const int a = rows / 2 + 1 < rows ? rows / 2 + 1 : rows - 1;
        kc_attn_rows(a, T, scale, q, k, v, LD, out2, ldo, work);
        kc_attn_rows(rows - a, T, scale, q + (size_t)a * LD, k, v, LD, out2 + (size_t)a * ldo, ldo, work);
        int same = 1;
        for (int i = 0; i < rows; i++)
            if (memcmp(out + (size_t)i * ldo, out2 + (size_t)i * ldo, HD * sizeof(float)) != 0) same = 0;
        CHECK(same, "T %d rows %d: rows split %d + %d differ from one call", T, rows, a, rows - a);
    }
    free(qkv);
    free(out);
    free(out2);
    free(work);
    free(ref);
}

static void all_cases(void)
{
    double worst = 0;
    for (int T = 1; T <= 17; T++) one_case(T, T < KC_ATTN_ROWS ? T : KC_ATTN_ROWS, 0, 1.0, &worst);
    for (int rows = 1; rows <= KC_ATTN_ROWS; rows++) one_case(61, rows, 61 - rows, 2.0, &worst);
    one_case(901, KC_ATTN_ROWS, 853, 1.0, &worst);
    one_case(901, 37, 864, 4.0, &worst);    /* the last block of a 480x480 image */
    one_case(1561, KC_ATTN_ROWS, 0, 3.0, &worst);
    one_case(300, 29, 100, 20.0, &worst);   /* |scores| up to ~200: one token takes all */
    one_case(8, 8, 0, 40.0, &worst);
    printf("fused attention (%s): worst |out - ref| = %.3g of its tolerance\n",
           g_level == 2 ? "AVX-512" : "AVX2", worst);
}

int main(void)
{
    CHECK(!kc_attn_available(32) && !kc_attn_available(128), "only head_dim 64 is claimed");
    CHECK(kc_attn_available(64), "head_dim 64: the fused kernel is off (%s)", kc_attn_describe());
    printf("kernel chosen here: %s\n", kc_attn_describe());
    g_have_512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                 __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
    for (g_level = 1; g_level <= 2; g_level++) {
        if (g_level == 2 && !g_have_512) {
            SKIP("no AVX-512 here: the AVX-512 kernel is not run");
            continue;
        }
        double check_err = -1;
        CHECK(kc_attn_check_level(g_level, &check_err) == 0 && check_err >= 0 && check_err < 1e-5,
              "level %d: the start-up check: error %.3g of max |v|", g_level, check_err);
        all_cases();
    }
    if (g_have_512) {
        CHECK(g_cross_same && g_cross_n > 60, "AVX2 and AVX-512 kernels differ (%d cases compared)", g_cross_n);
        printf("AVX2 against AVX-512: %d cases, %s\n", g_cross_n, g_cross_same ? "the same bytes" : "DIFFERENT");
    }
    return test_done();
}
