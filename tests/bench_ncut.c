/* tests/bench_ncut.c — speed of the normalized-cut decoder (run by tests/bench_ncut.sh).
 *
 *   bench_ncut eigen FEATS.f32 N DIM TAU REPS   time the Krylov and dense solvers on one graph
 *                                               (binary and weighted edges)
 *   bench_ncut grid  FEATS.f32 GH GW DIM REPS   time the 144-setting grid (configs/sweep.ini)
 *   bench_ncut cosine N DIM REPS                the cosine matrix S (docs/ties.md): the fixed-order
 *                                               double kernels (AVX2, AVX-512, serial) beside the
 *                                               float32 oneDNN product S used to be (the baseline)
 *   bench_ncut synth                            both, on built-in structured random features
 * The eigen line also times the decisions of one solve (sign, then the 6 split x rule masks) with the
 * tie rules (decoders/ties.h, structural tie detection included) beside the plain rules.
 * FEATS.f32 is raw float32 (N, DIM).  Prints one line per measurement.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "decoders/eigen.h"
#include "decoders/grid.h"
#include "decoders/ties.h"
#include "pipeline/model/gemm.h"
#include "pipeline/kc.h"

static float *synth(int n, int dim, unsigned seed)
{
    /* a few blobs of patches with distinct directions plus noise and a common offset */
    float *f = kc_malloc((size_t)n * dim * sizeof *f);
    unsigned s = seed;
    int side = (int)sqrt((double)n);
    for (int i = 0; i < n; i++) {
        int r = i / side, c = i % side;
        int blob = (r - side / 2) * (r - side / 2) + (c - side / 3) * (c - side / 3) < side * side / 12 ? 1
                   : r < side / 4 ? 2 : 0;
        for (int k = 0; k < dim; k++) {
            s = s * 1664525u + 1013904223u;
            float noise = ((float)(s >> 8) / 16777216.0f - 0.5f) * 1.5f;
            f[(size_t)i * dim + k] = noise + (k % 3 == blob ? 1.0f : 0.0f) + (k == 0 ? 0.3f : 0.0f);
        }
    }
    return f;
}

static int bench_eigen(const float *feats, int n, int dim, double tau, int weighted, int reps)
{
    float *S = kc_malloc((size_t)n * n * sizeof *S);
    if (ncut_cosine(feats, n, dim, S, "bench") < 0) kc_die();
    ncut_graph g;
    double t_init = kc_now();
    ncut_graph_init(&g, S, n, tau, weighted);
    t_init = kc_now() - t_init;
    double *x = kc_malloc((size_t)n * sizeof *x), *xd = kc_malloc((size_t)n * sizeof *xd);
    ncut_eig e, ed;
    double t0 = kc_now();
    for (int r = 0; r < reps; r++)
        if (ncut_eigen(&g, x, &e) < 0) kc_die();
    double tk = (kc_now() - t0) / reps;
    t0 = kc_now();
    int dreps = reps < 5 ? reps : 5;
    for (int r = 0; r < dreps; r++)
        if (ncut_eigen_dense(&g, xd, &ed) < 0) kc_die();
    double td = (kc_now() - t0) / dreps;
    double dx = 0;
    for (int i = 0; i < n; i++) dx = fmax(dx, fabs(x[i] - xd[i]));
    /* the decisions of one solve: tie rules against the plain ones (a 30 x 30 grid when n = 900) */
    int gh = 1, gw = n;
    for (int h = (int)sqrt((double)n); h > 1; h--)
        if (n % h == 0) {
            gh = h;
            gw = n / h;
            break;
        }
    uint8_t *side = kc_malloc((size_t)n), *mask = kc_malloc((size_t)n);
    int *queue = kc_malloc((size_t)n * sizeof *queue), dreps2 = 200;
    double *xc = kc_malloc((size_t)n * sizeof *xc), sink = 0;
    ncut_rows rows = {S, NULL, n, tau, weighted};
    double t_tie = kc_now();
    for (int r = 0; r < dreps2; r++) {
        memcpy(xc, x, (size_t)n * sizeof *xc);
        double margin = INFINITY;
        ncut_sign_tied(xc, n, &rows, &margin);
        for (int c = 0; c < 6; c++) sink += ncut_seed_mask_tied(xc, gh, gw, c / 3, c % 3, &rows, side, queue, mask, &margin, NULL);
    }
    t_tie = (kc_now() - t_tie) / dreps2;
    double t_plain = kc_now();
    for (int r = 0; r < dreps2; r++) {
        memcpy(xc, x, (size_t)n * sizeof *xc);
        ncut_canonical_sign(xc, n);
        for (int c = 0; c < 6; c++) sink += ncut_seed_mask(xc, gh, gw, c / 3, c % 3, side, queue, mask);
    }
    t_plain = (kc_now() - t_plain) / dreps2;
    free(side);
    free(mask);
    free(queue);
    free(xc);
    printf("eigen n=%d tau=%.2f %s: krylov %.3f ms (%s, %d products, residual %.1e; graph lists %.3f ms, %.0f%% of "
           "W listed, %d dense rows)  dense LAPACKE %.3f ms  lambda2 %.9g vs %.9g, gap %.3g, max|dx| %.2e\n",
           n, tau, weighted ? "wtd" : "bin", 1e3 * tk, e.method == NCUT_EIG_KRYLOV ? "converged" : "fell back", e.matvecs, e.residual,
           1e3 * t_init, 100.0 * g.listed / ((double)n * n), g.dense_rows, 1e3 * td, e.lambda2, ed.lambda2, e.eigengap, dx);
    printf("  decisions of one solve (sign + 6 split x rule masks): tie rules %.1f us, plain rules %.1f us (%.0f)\n",
           1e6 * t_tie, 1e6 * t_plain, sink * 0);
    ncut_graph_free(&g);
    free(x);
    free(xd);
    free(S);
    return 0;
}

static int bench_grid(const float *feats, int gh, int gw, int dim, int reps)
{
    ncut_grid g;
    if (ncut_grid_load(&g, "configs/sweep.ini") < 0) kc_die();
    ncut_result *res = kc_calloc((size_t)g.n, sizeof *res);
    ncut_stats st = {0, 0, 0, 0};
    double t0 = kc_now();
    for (int r = 0; r < reps; r++) {
        if (ncut_grid_run(&g, feats, gh, gw, dim, "bench", res, &st) < 0) kc_die();
        ncut_results_free(res, g.n);
    }
    double t = (kc_now() - t0) / reps;
    printf("grid %dx%d dim %d, %d settings: %.3f s per image (%ld solves, %ld reused, %ld dense, %.0f products "
           "per solve)\n",
           gh, gw, dim, g.n, t, st.solves / reps, st.reused / reps, st.dense / reps,
           st.solves ? (double)st.matvecs / st.solves : 0.0);
    free(res);
    ncut_grid_free(&g);
    return 0;
}

static double cpu_now(void) /* process CPU time: the shared machine's load stretches wall time */
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static int bench_cosine(int n, int dim, int reps)
{
    float *f = synth(n, dim, 7), *S = kc_malloc((size_t)n * n * sizeof *S), *U = kc_malloc((size_t)n * dim * sizeof *U);
    for (int i = 0; i < n; i++) { /* the baseline: unit rows, then oneDNN's float32 U U^T */
        double ss = 0;
        for (int k = 0; k < dim; k++) ss += (double)f[(size_t)i * dim + k] * f[(size_t)i * dim + k];
        for (int k = 0; k < dim; k++) U[(size_t)i * dim + k] = f[(size_t)i * dim + k] * (float)(1.0 / sqrt(ss));
    }
    kc_gemm_nt(n, n, dim, 1.0f, U, dim, U, dim, 0.0f, S, n);
    double t0 = kc_now(), c0 = cpu_now();
    for (int r = 0; r < reps; r++) kc_gemm_nt(n, n, dim, 1.0f, U, dim, U, dim, 0.0f, S, n);
    double tb = (kc_now() - t0) / reps, cb = (cpu_now() - c0) / reps;
    printf("cosine n=%d dim=%d, ms wall/cpu: baseline float32 %s U U^T %.2f/%.2f;", n, dim, kc_gemm_describe(),
           1e3 * tb, 1e3 * cb);
    static const char *names[] = {"auto", "avx2", "avx512", "serial"};
    for (int path = NCUT_COS_AUTO; path <= NCUT_COS_SERIAL; path++) {
        if (path == NCUT_COS_AVX512 && !__builtin_cpu_supports("avx512f")) continue;
        int rp = path == NCUT_COS_SERIAL ? 1 : reps;
        t0 = kc_now(), c0 = cpu_now();
        for (int r = 0; r < rp; r++)
            if (ncut_cosine_path(f, n, dim, S, "bench", path) < 0) kc_die();
        printf(" %s %.2f/%.2f;", names[path], 1e3 * (kc_now() - t0) / rp, 1e3 * (cpu_now() - c0) / rp);
    }
    printf(" (fixed-order double sums, upper triangle)\n");
    free(f);
    free(S);
    free(U);
    return 0;
}

int main(int argc, char **argv)
{
    kc_set_prog("bench_ncut");
    if (argc >= 2 && !strcmp(argv[1], "synth")) {
        float *f = synth(900, 64, 1);
        for (int t = 10; t <= 25; t += 5)
            for (int w = 0; w < 2; w++) bench_eigen(f, 900, 64, t / 100.0, w, 20);
        bench_grid(f, 30, 30, 64, 3);
        free(f);
        return 0;
    }
    if (argc == 5 && !strcmp(argv[1], "cosine")) return bench_cosine(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
    if (argc == 7 && (!strcmp(argv[1], "eigen") || !strcmp(argv[1], "grid"))) {
        uint8_t *data;
        size_t size;
        if (kc_read_file(argv[2], &data, &size) < 0) kc_die();
        int a = atoi(argv[3]), b = atoi(argv[4]), c = atoi(argv[5]), reps = atoi(argv[6]);
        if (!strcmp(argv[1], "eigen")) {
            if (size != (size_t)a * b * 4) kc_die_msg("%s: expected %d x %d float32", argv[2], a, b);
            for (int w = 0; w < 2; w++) bench_eigen((const float *)data, a, b, atof(argv[5]), w, reps);
        } else {
            if (size != (size_t)a * b * c * 4) kc_die_msg("%s: expected %d x %d x %d float32", argv[2], a, b, c);
            bench_grid((const float *)data, a, b, c, reps);
        }
        free(data);
        return 0;
    }
    fprintf(stderr, "usage: bench_ncut synth | cosine N DIM REPS | eigen FEATS N DIM TAU REPS | grid FEATS GH GW DIM REPS\n");
    return 2;
}
