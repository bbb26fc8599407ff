/* tests/test_gemm.c — pipeline/model/gemm against a naive C triple loop (double accumulation), on every
 * path: KC_ISA=avx512 (when the CPU has it), avx2, generic and reference, each in a child process
 * (the path is chosen once per process).  Odd shapes, row strides with padding, alpha / beta, both
 * layouts, calls from inside an OpenMP parallel region (each thread its own rows, as vit.c does),
 * and run-to-run identity.  Tolerance: |diff| <= 1e-5 * K * max|ref entry| (float accumulation). */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pipeline/model/gemm.h"
#include "tests/test.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static float frand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (float)((rng >> 40) / 16777216.0) - 0.5f;
}

/* One product on one shape; returns the worst |diff| / (K * max|ref|). */
static double one(int tb, int M, int N, int K, int pad, float alpha, float beta, int in_parallel)
{
    const int lda = K + pad, ldb = (tb ? K : N) + pad, ldc = N + pad, brows = tb ? N : K;
    float *A = malloc(((size_t)M * lda + 1) * sizeof *A), *B = malloc(((size_t)brows * ldb + 1) * sizeof *B);
    float *C = malloc(((size_t)M * ldc + 1) * sizeof *C), *R = malloc(((size_t)M * ldc + 1) * sizeof *R);
    for (size_t i = 0; i < (size_t)M * lda; i++) A[i] = frand();
    for (size_t i = 0; i < (size_t)brows * ldb; i++) B[i] = frand();
    for (size_t i = 0; i < (size_t)M * ldc; i++) C[i] = R[i] = beta == 0.0f ? NAN : frand(); /* beta 0 never reads C */
    if (in_parallel) {
#pragma omp parallel
        {
            int nt = omp_get_num_threads(), t = omp_get_thread_num();
            int r0 = M * t / nt, r1 = M * (t + 1) / nt;
            if (tb) kc_gemm_nt(r1 - r0, N, K, alpha, A + (size_t)r0 * lda, lda, B, ldb, beta, C + (size_t)r0 * ldc, ldc);
            else kc_gemm_nn(r1 - r0, N, K, alpha, A + (size_t)r0 * lda, lda, B, ldb, beta, C + (size_t)r0 * ldc, ldc);
        }
    } else if (tb) {
        kc_gemm_nt(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    } else {
        kc_gemm_nn(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    }
    kc_gemm_naive(tb, M, N, K, alpha, A, lda, B, ldb, beta, R, ldc);
    double mx = 1e-30, worst = 0;
    int pad_ok = 1;
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N; j++) {
            double r = R[(size_t)i * ldc + j], d = fabs((double)C[(size_t)i * ldc + j] - r);
            if (fabs(r) > mx) mx = fabs(r);
            if (!(d <= worst)) worst = isnan(d) ? INFINITY : d;
        }
        for (int j = N; j < ldc; j++) /* padding never written */
            if (memcmp(&C[(size_t)i * ldc + j], &R[(size_t)i * ldc + j], sizeof(float)) != 0)
                pad_ok = 0;
    }
    CHECK(pad_ok, "tb=%d %dx%dx%d pad=%d: a padding entry of C was written", tb, M, N, K, pad);
    free(A), free(B), free(C), free(R);
    return worst / ((K > 0 ? K : 1) * mx);
}

/* kc_linear (matmul with packed weights and fused bias / GELU / residual) against the double
 * loop; the same bytes whatever the row split (one call, uneven chunks) and when two threads run
 * the same layer at once (one image per core). */
static void linear_checks(const char *isa)
{
    const int avail = kc_linear_available();
    if (strcmp(isa, "avx512") != 0) {
        CHECK(!avail, "KC_ISA=%s: the matmul path is on (it is for avx512 only)", isa);
        float w = 1, b = 0;
        CHECK(kc_linear_new(1, 1, &w, 1, &b, KC_LINEAR_BIAS, 1, 1) == NULL, "KC_ISA=%s: kc_linear_new gave a layer", isa);
        return;
    }
    CHECK(avail, "KC_ISA=avx512: the matmul path is off (%s)", kc_gemm_describe());
    if (!avail) return;
    static const int shapes[][3] = {{301, 384, 96}, {97, 130, 70}, {45, 64, 1536}};
    double worst = 0;
    for (size_t c = 0; c < sizeof shapes / sizeof *shapes; c++)
        for (int op = 0; op < 3; op++) {
            const int M = shapes[c][0], N = shapes[c][1], K = shapes[c][2], ldw = K + 5;
            float *A = malloc((size_t)M * K * sizeof *A), *W = malloc((size_t)N * ldw * sizeof *W), *b = malloc((size_t)N * sizeof *b);
            float *C0 = malloc((size_t)M * N * sizeof *C0), *C[3];
            for (int k = 0; k < 3; k++) C[k] = malloc((size_t)M * N * sizeof *C[k]);
            for (size_t i = 0; i < (size_t)M * K; i++) A[i] = 2 * frand();
            for (size_t i = 0; i < (size_t)N * ldw; i++) W[i] = frand() / 4;
            for (int i = 0; i < N; i++) b[i] = frand();
            for (size_t i = 0; i < (size_t)M * N; i++) C0[i] = C[0][i] = C[1][i] = C[2][i] = frand();
            kc_linear *L = kc_linear_new(N, K, W, ldw, b, op, K, N);
            CHECK(L != NULL, "kc_linear_new %dx%d op %d failed", N, K, op);
            if (!L) continue;
            CHECK(kc_linear_run(L, M, A, C[0]) == 0, "kc_linear_run %dx%dx%d op %d", M, N, K, op);
            static const int cuts[] = {1, 8, 150};
            for (int r0 = 0, q = 0; r0 < M; q++) { /* uneven chunks: 1, 8, 150, the rest */
                int rows = q < 3 ? cuts[q] : M - r0;
                if (rows > M - r0) rows = M - r0;
                kc_linear_run(L, rows, A + (size_t)r0 * K, C[1] + (size_t)r0 * N);
                r0 += rows;
            }
            CHECK(memcmp(C[0], C[1], (size_t)M * N * sizeof(float)) == 0, "op %d %dx%dx%d: rows in chunks differ from one call", op, M, N, K);
            int same = 1;
            for (int rep = 0; rep < 3; rep++) {
#pragma omp parallel num_threads(2)
                { /* both threads the same product at once, each into its own C */
                    float *mine = omp_get_thread_num() == 0 ? C[2] : C[1];
                    memcpy(mine, C0, (size_t)M * N * sizeof(float));
                    kc_linear_run(L, M, A, mine);
                }
                same &= !memcmp(C[0], C[1], (size_t)M * N * sizeof(float)) && !memcmp(C[0], C[2], (size_t)M * N * sizeof(float));
            }
            CHECK(same, "op %d %dx%dx%d: two threads running the same layer at once differ from one", op, M, N, K);
            double mx = 0, e = 0;
            for (int i = 0; i < M; i++)
                for (int j = 0; j < N; j++) {
                    double acc = b[j];
                    for (int k = 0; k < K; k++) acc += (double)A[(size_t)i * K + k] * W[(size_t)j * ldw + k];
                    double r = op == KC_LINEAR_GELU ? 0.5 * acc * (1 + erf(acc / sqrt(2.0)))
                             : op == KC_LINEAR_RESIDUAL ? C0[(size_t)i * N + j] + acc : acc;
                    double d = fabs(C[0][(size_t)i * N + j] - r);
                    if (fabs(r) > mx) mx = fabs(r);
                    if (!(d <= e)) e = isnan(d) ? INFINITY : d;
                }
            e /= K * mx;
            CHECK(e <= 1e-5, "op %d %dx%dx%d: error %.3g of K max|ref|", op, M, N, K, e);
            if (e > worst) worst = e;
            kc_linear_free(L);
            free(A), free(W), free(b), free(C0);
            for (int k = 0; k < 3; k++) free(C[k]);
        }
    printf("KC_ISA=%s: linear layers (bias, GELU, residual) worst |diff| / (K max|ref|) = %.3g; split and concurrent runs bit-identical\n", isa, worst);
}

static int run_checks(const char *isa)
{
    const char *d = kc_gemm_describe();
    printf("KC_ISA=%s: %s (row kernels level %d)\n", isa, d, kc_simd_level());
    const char *want = !strcmp(isa, "avx512") ? "avx512_core" : !strcmp(isa, "avx2") ? "avx2"
                     : !strcmp(isa, "generic") ? "sse41" : "plain C loop";
    CHECK(strstr(d, want) != NULL, "KC_ISA=%s: path '%s' does not name %s", isa, d, want);
    CHECK(kc_simd_level() == (!strcmp(isa, "avx512") ? 2 : 1), "KC_ISA=%s: row kernel level %d", isa, kc_simd_level());
    static const int shapes[][4] = {/* M, N, K, pad */
                                    {1, 1, 1, 0},    {1, 17, 3, 1},    {5, 1, 9, 2},     {7, 13, 1, 0},
                                    {31, 33, 35, 3}, {64, 64, 64, 0},  {97, 65, 129, 7}, {128, 384, 96, 0},
                                    {2, 1537, 5, 1}, {301, 64, 901, 3}, {45, 901, 64, 11}};
    static const float ab[][2] = {{1.0f, 0.0f}, {1.0f, 1.0f}, {0.125f, 0.5f}, {-0.7f, 1.0f}};
    double worst = 0;
    int n = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (int tb = 0; tb < 2; tb++)
            for (size_t k = 0; k < sizeof ab / sizeof *ab; k++) {
                int par = (int)((s + k + tb) % 2);
                double e = one(tb, shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3], ab[k][0], ab[k][1], par);
                CHECK(e <= 1e-5, "KC_ISA=%s tb=%d %dx%dx%d pad=%d alpha=%g beta=%g%s: error %.3g of K max|ref|",
                      isa, tb, shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3], ab[k][0], ab[k][1],
                      par ? " (inside a parallel region)" : "", e);
                if (e > worst) worst = e;
                n++;
            }
    printf("KC_ISA=%s: %d products, worst |diff| / (K max|ref|) = %.3g (tolerance 1e-5)\n", isa, n, worst);

    /* run to run: the same bits */
    const int M = 150, N = 200, K = 333;
    float *A = malloc((size_t)M * K * sizeof *A), *B = malloc((size_t)N * K * sizeof *B);
    float *C1 = malloc((size_t)M * N * sizeof *C1), *C2 = malloc((size_t)M * N * sizeof *C2);
    for (int i = 0; i < M * K; i++) A[i] = frand();
    for (int i = 0; i < N * K; i++) B[i] = frand();
    kc_gemm_nt(M, N, K, 1.0f, A, K, B, K, 0.0f, C1, N);
    kc_gemm_nt(M, N, K, 1.0f, A, K, B, K, 0.0f, C2, N);
    CHECK(memcmp(C1, C2, (size_t)M * N * sizeof *C1) == 0, "KC_ISA=%s: two identical products differ", isa);
    free(A), free(B), free(C1), free(C2);
    linear_checks(isa);
    return test_failed;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--child")) {
        setenv("KC_ISA", argv[2], 1);
        run_checks(argv[2]);
        printf("CHILD %d %d %d\n", test_passed, test_failed, test_skipped);
        fflush(stdout);
        _exit(test_failed ? 1 : 0);
    }
    __builtin_cpu_init();
    const char *paths[] = {"avx512", "avx2", "generic", "reference"};
    for (size_t p = 0; p < sizeof paths / sizeof *paths; p++) {
        if (!strcmp(paths[p], "avx512") && !__builtin_cpu_supports("avx512f")) {
            SKIP("KC_ISA=avx512: this CPU has no AVX-512");
            continue;
        }
        char cmd[4200];
        snprintf(cmd, sizeof cmd, "'%s' --child %s", argv[0], paths[p]);
        FILE *f = popen(cmd, "r");
        CHECK(f != NULL, "cannot run %s", cmd);
        if (!f) continue;
        char line[512];
        int got = 0;
        while (fgets(line, sizeof line, f)) {
            int cp, cf, cs;
            if (sscanf(line, "CHILD %d %d %d", &cp, &cf, &cs) == 3) {
                test_passed += cp, test_failed += cf, test_skipped += cs;
                got = 1;
            } else {
                fputs(line, stdout);
            }
        }
        int rc = pclose(f);
        CHECK(got, "KC_ISA=%s: the child printed no result (exit status %d)", paths[p], rc);
    }
    return test_done();
}
