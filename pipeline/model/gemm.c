/* pipeline/model/gemm.c — see gemm.h.  oneDNN's dnnl_sgemm behind one selection made once per process,
 * checked against a plain C loop; OpenBLAS and a plain C loop as fallbacks. */
#include "pipeline/model/gemm.h"

#include <cblas.h>
#include <math.h>
#include <oneapi/dnnl/dnnl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PATH_DNNL, PATH_OPENBLAS, PATH_PLAIN };

static int g_path = PATH_DNNL;
static int g_linear;                /* 1: kc_linear layers run on oneDNN's matmul primitive */
static dnnl_engine_t g_engine;
static char g_linear_impl[64];
static int g_simd = 1;
static char g_describe[256];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

void kc_gemm_naive(int trans_b, int M, int N, int K, float alpha, const float *A, int lda,
                   const float *B, int ldb, float beta, float *C, int ldc)
{
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double acc = 0;
            for (int k = 0; k < K; k++)
                acc += (double)A[(size_t)i * lda + k] *
                       (trans_b ? B[(size_t)j * ldb + k] : B[(size_t)k * ldb + j]);
            float *c = &C[(size_t)i * ldc + j];
            *c = (float)(alpha * acc + (beta == 0.0f ? 0.0 : (double)beta * *c));
        }
}

/* The last-resort path: float loops the compiler vectorises (dot products for NT, row updates for
 * NN).  Slow (a few GFLOP/s) but independent of every library. */
static void plain_gemm(int trans_b, int M, int N, int K, float alpha, const float *A, int lda,
                       const float *B, int ldb, float beta, float *C, int ldc)
{
    for (int i = 0; i < M; i++) {
        float *c = C + (size_t)i * ldc;
        const float *a = A + (size_t)i * lda;
        if (trans_b) {
            for (int j = 0; j < N; j++) {
                const float *b = B + (size_t)j * ldb;
                float acc = 0;
#pragma omp simd reduction(+ : acc)
                for (int k = 0; k < K; k++) acc += a[k] * b[k];
                c[j] = alpha * acc + (beta == 0.0f ? 0.0f : beta * c[j]);
            }
        } else {
            if (beta == 0.0f) memset(c, 0, (size_t)N * sizeof *c);
            else if (beta != 1.0f)
                for (int j = 0; j < N; j++) c[j] *= beta;
            for (int k = 0; k < K; k++) {
                const float *b = B + (size_t)k * ldb;
                float s = alpha * a[k];
#pragma omp simd
                for (int j = 0; j < N; j++) c[j] += s * b[j];
            }
        }
    }
}

static void run(int path, int trans_b, int M, int N, int K, float alpha, const float *A, int lda,
                const float *B, int ldb, float beta, float *C, int ldc)
{
    if (M <= 0 || N <= 0) return;
    if (K <= 0) { /* C = beta C, as BLAS does */
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                float *c = &C[(size_t)i * ldc + j];
                *c = beta == 0.0f ? 0.0f : beta * *c;
            }
        return;
    }
    switch (path) {
    case PATH_DNNL:
        if (dnnl_sgemm('N', trans_b ? 'T' : 'N', M, N, K, alpha, A, lda, B, ldb, beta, C, ldc) ==
            dnnl_success)
            return;
        /* argument errors cannot happen with valid shapes; compute it anyway */
        plain_gemm(trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    case PATH_OPENBLAS:
        cblas_sgemm(CblasRowMajor, CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, M, N, K,
                    alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    default:
        plain_gemm(trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    }
}

/* A few small products, odd shapes and strides, against the double loop.  1 = agrees. */
static int self_check(int path)
{
    static const int cases[][5] = {
        /* trans_b, M, N, K, pad */
        {1, 37, 29, 67, 3}, {0, 13, 70, 33, 5}, {1, 64, 96, 128, 0}, {0, 96, 64, 130, 1}, {1, 1, 7, 5, 2},
    };
    int ok = 1;
    uint32_t seed = 12345u;
    for (size_t c = 0; c < sizeof cases / sizeof *cases && ok; c++) {
        const int tb = cases[c][0], M = cases[c][1], N = cases[c][2], K = cases[c][3], pad = cases[c][4];
        const int lda = K + pad, ldb = (tb ? K : N) + pad, ldc = N + pad, brows = tb ? N : K;
        float *A = malloc((size_t)M * lda * sizeof *A), *B = malloc((size_t)brows * ldb * sizeof *B);
        float *C = malloc((size_t)M * ldc * sizeof *C), *R = malloc((size_t)M * ldc * sizeof *R);
        if (!A || !B || !C || !R) {
            free(A), free(B), free(C), free(R);
            return 1; /* no memory for a check: nothing learned */
        }
#define RND() ((float)((seed = seed * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f)
        for (int i = 0; i < M * lda; i++) A[i] = RND();
        for (int i = 0; i < brows * ldb; i++) B[i] = RND();
        for (int i = 0; i < M * ldc; i++) C[i] = R[i] = RND();
#undef RND
        float alpha = c % 2 ? 1.0f : 0.7f, beta = c == 1 ? 0.0f : c == 2 ? 1.0f : 0.3f;
        run(path, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        kc_gemm_naive(tb, M, N, K, alpha, A, lda, B, ldb, beta, R, ldc);
        double mx = 0, worst = 0;
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double r = R[(size_t)i * ldc + j], d = fabs(C[(size_t)i * ldc + j] - r);
                if (fabs(r) > mx) mx = fabs(r);
                if (!(d <= worst)) worst = d; /* NaN counts as the worst */
            }
        for (int i = 0; i < M && ok; i++) /* padding untouched */
            for (int j = N; j < ldc; j++)
                if (C[(size_t)i * ldc + j] != R[(size_t)i * ldc + j]) ok = 0;
        if (!(worst <= 1e-4 * (mx > 0 ? mx : 1))) ok = 0;
        free(A), free(B), free(C), free(R);
    }
    return ok;
}

static const char *isa_name(dnnl_cpu_isa_t isa)
{
    switch ((int)isa) {
    case dnnl_cpu_isa_sse41: return "sse41";
    case dnnl_cpu_isa_avx: return "avx";
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
    case dnnl_cpu_isa_all: return "all";
    default: return "other";
    }
}

/* ---- linear layers: oneDNN matmul with packed weights and fused post-ops ------------------- */

#define LIN_SLOTS 16

typedef struct lin_slot {
    int M, busy;                 /* busy: runs in flight (a busy slot is never replaced) */
    dnnl_primitive_t prim;
    dnnl_memory_desc_t scratch;  /* its scratchpad (the calling thread's buffer) */
} lin_slot;

struct kc_linear {
    int N, K, op, lda, ldc;
    float *packed, *bias;
    dnnl_memory_desc_t wmd;      /* the packed layout */
    pthread_mutex_t lock;
    lin_slot slot[LIN_SLOTS];
    int next;                    /* round-robin replacement */
};

/* Per thread: a oneDNN stream and a scratch buffer, freed when the thread ends (pthread key). */
typedef struct thread_ctx {
    dnnl_stream_t stream;
    void *scratch;
    size_t scratch_size;
} thread_ctx;

static pthread_key_t g_ctx_key;
static pthread_once_t g_ctx_once = PTHREAD_ONCE_INIT;
static _Thread_local thread_ctx *t_ctx;

static void ctx_free(void *p)
{
    thread_ctx *c = p;
    if (!c) return;
    if (c->stream) dnnl_stream_destroy(c->stream);
    free(c->scratch);
    free(c);
}

static void ctx_key(void) { pthread_key_create(&g_ctx_key, ctx_free); }

static thread_ctx *thread_ctx_get(void)
{
    if (t_ctx) return t_ctx;
    pthread_once(&g_ctx_once, ctx_key);
    thread_ctx *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    if (dnnl_stream_create(&c->stream, g_engine, dnnl_stream_default_flags) != dnnl_success) {
        free(c);
        return NULL;
    }
    pthread_setspecific(g_ctx_key, c);
    return t_ctx = c;
}

static dnnl_stream_t thread_stream(void)
{
    thread_ctx *c = thread_ctx_get();
    return c ? c->stream : NULL;
}

/* The calling thread's scratch buffer of at least n bytes (NULL: out of memory). */
static void *thread_scratch(size_t n)
{
    thread_ctx *c = thread_ctx_get();
    if (!c) return NULL;
    if (n > c->scratch_size) {
        free(c->scratch);
        c->scratch_size = 0;
        c->scratch = aligned_alloc(64, (n + 63) / 64 * 64);
        if (c->scratch) c->scratch_size = n;
    }
    return c->scratch;
}

/* The primitive descriptor for M rows; wmd NULL: weights layout "any" (the primitive picks). */
static dnnl_primitive_desc_t lin_pd(int M, int N, int K, int op, int lda, int ldc,
                                    const dnnl_memory_desc_t *wmd)
{
    dnnl_memory_desc_t smd, wany, bmd, dmd;
    dnnl_dims_t sd = {M, K}, ss = {lda, 1}, wd = {K, N}, bd = {1, N}, dd = {M, N}, ds = {ldc, 1};
    if (dnnl_memory_desc_init_by_strides(&smd, 2, sd, dnnl_f32, ss) != dnnl_success ||
        dnnl_memory_desc_init_by_tag(&wany, 2, wd, dnnl_f32, dnnl_format_tag_any) != dnnl_success ||
        dnnl_memory_desc_init_by_tag(&bmd, 2, bd, dnnl_f32, dnnl_ab) != dnnl_success ||
        dnnl_memory_desc_init_by_strides(&dmd, 2, dd, dnnl_f32, ds) != dnnl_success)
        return NULL;
    dnnl_matmul_desc_t desc;
    if (dnnl_matmul_desc_init(&desc, &smd, wmd ? wmd : &wany, &bmd, &dmd) != dnnl_success) return NULL;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_post_ops_t po = NULL;
    dnnl_primitive_desc_t pd = NULL;
    int ok = dnnl_primitive_attr_create(&attr) == dnnl_success && dnnl_post_ops_create(&po) == dnnl_success;
    if (ok && op == KC_LINEAR_GELU)
        ok = dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_gelu_erf, 0.0f, 0.0f) == dnnl_success;
    if (ok && op == KC_LINEAR_RESIDUAL) ok = dnnl_post_ops_append_sum(po, 1.0f) == dnnl_success;
    if (ok) ok = dnnl_primitive_attr_set_post_ops(attr, po) == dnnl_success;
    /* our own scratch memory per thread: two threads may run the same primitive at once (one
     * image per core), and oneDNN's own scratchpad would then be shared between them */
    if (ok) ok = dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user) == dnnl_success;
    if (ok && dnnl_primitive_desc_create(&pd, &desc, attr, g_engine, NULL) != dnnl_success) pd = NULL;
    if (po) dnnl_post_ops_destroy(po);
    if (attr) dnnl_primitive_attr_destroy(attr);
    return pd;
}

static const char *pd_impl(const_dnnl_primitive_desc_t pd)
{
    const char *impl = NULL;
    if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) != dnnl_success || !impl) return "?";
    return impl;
}

/* Builds a layer whatever g_linear says (the start-up check uses it before g_linear is set). */
static kc_linear *linear_build(int N, int K, const float *W, int ldw, const float *bias, int op, int lda, int ldc)
{
    if (N < 1 || K < 1 || lda < K || ldc < N || ldw < K) return NULL;
    dnnl_primitive_desc_t pd = lin_pd(64, N, K, op, lda, ldc, NULL);
    if (!pd) return NULL;
    if (strncmp(pd_impl(pd), "brg", 3) != 0) { /* not oneDNN's blocked kernels (e.g. strided C) */
        dnnl_primitive_desc_destroy(pd);
        return NULL;
    }
    kc_linear *L = calloc(1, sizeof *L);
    dnnl_memory_desc_t wsrc;
    dnnl_dims_t wd = {K, N}, ws = {1, ldw}; /* W (N, K) row-major is the (K, N) matrix with strides (1, ldw) */
    const dnnl_memory_desc_t *wq = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    size_t bytes = wq ? dnnl_memory_desc_get_size(wq) : 0;
    int ok = L && wq && bytes > 0 && dnnl_memory_desc_init_by_strides(&wsrc, 2, wd, dnnl_f32, ws) == dnnl_success;
    if (ok) {
        L->wmd = *wq;
        L->packed = aligned_alloc(64, (bytes + 63) / 64 * 64);
        L->bias = malloc((size_t)N * sizeof *L->bias);
        ok = L->packed && L->bias;
    }
    dnnl_primitive_desc_destroy(pd);
    if (ok) { /* the one reorder into the packed layout */
        dnnl_memory_t from = NULL, to = NULL;
        dnnl_primitive_desc_t rpd = NULL;
        dnnl_primitive_t rp = NULL;
        dnnl_stream_t st = thread_stream();
        ok = st && dnnl_memory_create(&from, &wsrc, g_engine, (void *)W) == dnnl_success &&
             dnnl_memory_create(&to, &L->wmd, g_engine, L->packed) == dnnl_success &&
             dnnl_reorder_primitive_desc_create(&rpd, &wsrc, g_engine, &L->wmd, g_engine, NULL) == dnnl_success &&
             dnnl_primitive_create(&rp, rpd) == dnnl_success;
        if (ok) {
            dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
            ok = dnnl_primitive_execute(rp, st, 2, args) == dnnl_success && dnnl_stream_wait(st) == dnnl_success;
        }
        if (rp) dnnl_primitive_destroy(rp);
        if (rpd) dnnl_primitive_desc_destroy(rpd);
        if (from) dnnl_memory_destroy(from);
        if (to) dnnl_memory_destroy(to);
    }
    if (!ok) {
        if (L) free(L->packed), free(L->bias);
        free(L);
        return NULL;
    }
    memcpy(L->bias, bias, (size_t)N * sizeof *L->bias);
    L->N = N, L->K = K, L->op = op, L->lda = lda, L->ldc = ldc;
    pthread_mutex_init(&L->lock, NULL);
    return L;
}

static int linear_check(char *impl, size_t impl_size);

/* Linear layers on the matmul primitive where it runs oneDNN's blocked (brgemm) kernels; checked
 * on first use of kc_linear only (the stages without a ViT do not pay its JIT). */
static pthread_once_t g_linear_once = PTHREAD_ONCE_INIT;
static void select_linear(void)
{
    kc_gemm_init();
    if (g_path != PATH_DNNL || dnnl_engine_create(&g_engine, dnnl_cpu, 0) != dnnl_success) return;
    int ok = linear_check(g_linear_impl, sizeof g_linear_impl);
    if (ok) {
        g_linear = 1;
        size_t n = strlen(g_describe);
        snprintf(g_describe + n, sizeof g_describe - n, "; linear layers matmul %s", g_linear_impl);
    } else if (!strncmp(g_linear_impl, "brg", 3)) {
        fprintf(stderr, "keycut: warning: oneDNN's matmul (%s) failed its small check; linear "
                        "layers use the products above\n", g_linear_impl);
    }
}

kc_linear *kc_linear_new(int N, int K, const float *W, int ldw, const float *bias, int op, int lda, int ldc)
{
    pthread_once(&g_linear_once, select_linear);
    return g_linear ? linear_build(N, K, W, ldw, bias, op, lda, ldc) : NULL;
}

/* The primitive for M rows, marked busy; NULL when none can be made. */
static lin_slot *linear_acquire(kc_linear *L, int M)
{
    pthread_mutex_lock(&L->lock);
    lin_slot *hit = NULL;
    for (int i = 0; i < LIN_SLOTS && !hit; i++)
        if (L->slot[i].prim && L->slot[i].M == M) hit = &L->slot[i];
    if (!hit) {
        dnnl_primitive_desc_t pd = lin_pd(M, L->N, L->K, L->op, L->lda, L->ldc, &L->wmd);
        dnnl_primitive_t prim = NULL;
        const dnnl_memory_desc_t *sm = pd ? dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0) : NULL;
        dnnl_memory_desc_t scratch;
        if (sm) scratch = *sm;
        if (pd && (!sm || dnnl_primitive_create(&prim, pd) != dnnl_success)) prim = NULL;
        if (pd) dnnl_primitive_desc_destroy(pd);
        for (int k = 0; k < LIN_SLOTS && prim && !hit; k++) { /* a free slot, else the next idle one */
            lin_slot *s = &L->slot[(L->next + k) % LIN_SLOTS];
            if (s->busy) continue;
            if (s->prim) dnnl_primitive_destroy(s->prim);
            s->prim = prim, s->M = M, s->scratch = scratch, hit = s;
            L->next = (int)(s - L->slot + 1) % LIN_SLOTS;
        }
        if (!hit && prim) dnnl_primitive_destroy(prim);
    }
    if (hit) hit->busy++;
    pthread_mutex_unlock(&L->lock);
    return hit;
}

int kc_linear_run(kc_linear *L, int M, const float *A, float *C)
{
    if (M <= 0) return 0;
    dnnl_stream_t st = thread_stream();
    lin_slot *s = st ? linear_acquire(L, M) : NULL;
    if (!s) return -1;
    dnnl_memory_desc_t smd, bmd, dmd;
    dnnl_dims_t sd = {M, L->K}, ss = {L->lda, 1}, bd = {1, L->N}, dd = {M, L->N}, ds = {L->ldc, 1};
    dnnl_memory_t ms = NULL, mw = NULL, mb = NULL, md = NULL, mx = NULL;
    const size_t scratch_bytes = dnnl_memory_desc_get_size(&s->scratch);
    void *scratch = thread_scratch(scratch_bytes > 0 ? scratch_bytes : 64);
    int ok = scratch && dnnl_memory_create(&mx, &s->scratch, g_engine, scratch) == dnnl_success &&
             dnnl_memory_desc_init_by_strides(&smd, 2, sd, dnnl_f32, ss) == dnnl_success &&
             dnnl_memory_desc_init_by_tag(&bmd, 2, bd, dnnl_f32, dnnl_ab) == dnnl_success &&
             dnnl_memory_desc_init_by_strides(&dmd, 2, dd, dnnl_f32, ds) == dnnl_success &&
             dnnl_memory_create(&ms, &smd, g_engine, (void *)A) == dnnl_success &&
             dnnl_memory_create(&mw, &L->wmd, g_engine, L->packed) == dnnl_success &&
             dnnl_memory_create(&mb, &bmd, g_engine, L->bias) == dnnl_success &&
             dnnl_memory_create(&md, &dmd, g_engine, C) == dnnl_success;
    if (ok) {
        dnnl_exec_arg_t args[5] = {{DNNL_ARG_SRC, ms}, {DNNL_ARG_WEIGHTS, mw}, {DNNL_ARG_BIAS, mb}, {DNNL_ARG_DST, md},
                                   {DNNL_ARG_SCRATCHPAD, mx}};
        ok = dnnl_primitive_execute(s->prim, st, 5, args) == dnnl_success;
    }
    if (ms) dnnl_memory_destroy(ms);
    if (mw) dnnl_memory_destroy(mw);
    if (mb) dnnl_memory_destroy(mb);
    if (md) dnnl_memory_destroy(md);
    if (mx) dnnl_memory_destroy(mx);
    pthread_mutex_lock(&L->lock);
    s->busy--;
    pthread_mutex_unlock(&L->lock);
    return ok ? 0 : -1;
}

void kc_linear_free(kc_linear *L)
{
    if (!L) return;
    for (int i = 0; i < LIN_SLOTS; i++)
        if (L->slot[i].prim) dnnl_primitive_destroy(L->slot[i].prim);
    pthread_mutex_destroy(&L->lock);
    free(L->packed);
    free(L->bias);
    free(L);
}

int kc_linear_available(void)
{
    pthread_once(&g_linear_once, select_linear);
    return g_linear;
}

/* The matmul against the double loop (bias, GELU, residual; odd shapes, strides), and rows split
 * in two calls against one call, bit for bit.  1 = agrees; impl: what oneDNN chose. */
static int linear_check(char *impl, size_t impl_size)
{
    static const int cases[][4] = {{37, 29, 67, KC_LINEAR_BIAS}, {23, 70, 33, KC_LINEAR_GELU}, {41, 48, 130, KC_LINEAR_RESIDUAL}};
    uint32_t seed = 777u;
    int ok = 1;
    snprintf(impl, impl_size, "?");
    for (size_t c = 0; c < sizeof cases / sizeof *cases && ok; c++) {
        const int M = cases[c][0], N = cases[c][1], K = cases[c][2], op = cases[c][3];
        const int lda = K, ldc = N, ldw = K + 1; /* dense A and C: what brgemm takes */
        float *A = malloc((size_t)M * lda * sizeof *A), *W = malloc((size_t)N * ldw * sizeof *W);
        float *b = malloc((size_t)N * sizeof *b), *C = malloc((size_t)M * ldc * sizeof *C);
        float *C2 = malloc((size_t)M * ldc * sizeof *C2), *R = malloc((size_t)M * ldc * sizeof *R);
        kc_linear *L = NULL;
        if (A && W && b && C && C2 && R) {
#define RND() ((float)((seed = seed * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f)
            for (int i = 0; i < M * lda; i++) A[i] = 4 * RND();
            for (int i = 0; i < N * ldw; i++) W[i] = RND();
            for (int i = 0; i < N; i++) b[i] = RND();
            for (int i = 0; i < M * ldc; i++) C[i] = C2[i] = R[i] = RND();
#undef RND
            L = linear_build(N, K, W, ldw, b, op, lda, ldc);
            if (!L) { /* say what oneDNN chose instead */
                dnnl_primitive_desc_t pd = lin_pd(M, N, K, op, lda, ldc, NULL);
                snprintf(impl, impl_size, "%s", pd ? pd_impl(pd) : "no matmul");
                if (pd) dnnl_primitive_desc_destroy(pd);
            }
        }
        if (!L) {
            ok = 0;
        } else {
            if (c == 0) {
                dnnl_primitive_desc_t pd = lin_pd(M, N, K, op, lda, ldc, &L->wmd);
                snprintf(impl, impl_size, "%s", pd ? pd_impl(pd) : "?");
                if (pd) dnnl_primitive_desc_destroy(pd);
            }
            const int h = M / 2 + 1;
            ok = kc_linear_run(L, M, A, C) == 0 && kc_linear_run(L, h, A, C2) == 0 &&
                 kc_linear_run(L, M - h, A + (size_t)h * lda, C2 + (size_t)h * ldc) == 0 &&
                 memcmp(C, C2, (size_t)M * ldc * sizeof *C) == 0;
            double mx = 0, worst = 0;
            for (int i = 0; i < M && ok; i++)
                for (int j = 0; j < ldc; j++) {
                    double r = R[(size_t)i * ldc + j];
                    if (j < N) {
                        double acc = b[j];
                        for (int k = 0; k < K; k++) acc += (double)A[(size_t)i * lda + k] * W[(size_t)j * ldw + k];
                        r = op == KC_LINEAR_GELU ? 0.5 * acc * (1 + erf(acc / sqrt(2.0)))
                          : op == KC_LINEAR_RESIDUAL ? r + acc : acc;
                    }
                    double d = fabs(C[(size_t)i * ldc + j] - r);
                    if (fabs(r) > mx) mx = fabs(r);
                    if (!(d <= worst)) worst = d;
                }
            if (!(worst <= 1e-4 * (mx > 0 ? mx : 1))) ok = 0;
        }
        kc_linear_free(L);
        free(A), free(W), free(b), free(C), free(C2), free(R);
    }
    return ok;
}

/* KC_ISA as a level: -1 default, else a dnnl_cpu_isa_t or -2 for the reference loop (the warning
 * for a value it does not know is printed once, by whichever of the two selections reads it first). */
static int forced_isa(void)
{
    static int warned;
    const char *want = getenv("KC_ISA");
    if (!want || !*want) return -1;
    if (!strcmp(want, "avx512")) return dnnl_cpu_isa_avx512_core;
    if (!strcmp(want, "avx2")) return dnnl_cpu_isa_avx2;
    if (!strcmp(want, "generic")) return dnnl_cpu_isa_sse41;
    if (!strcmp(want, "reference")) return -2;
    if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
        fprintf(stderr, "keycut: warning: KC_ISA=%s is not one of avx512, avx2, generic, "
                        "reference; using the best path of this CPU\n", want);
    return -1;
}

/* The row kernels' level: the CPU's feature bits and KC_ISA only.  Apart from the products' path
 * (select_path), so that a stage that never multiplies matrices (kc-decode's cosine kernels) does
 * not pay for oneDNN's start-up check. */
static pthread_once_t g_simd_once = PTHREAD_ONCE_INIT;
static void select_simd(void)
{
    int forced = forced_isa();
    __builtin_cpu_init();
    int cpu512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                 __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
    g_simd = cpu512 && (forced == -1 || forced == dnnl_cpu_isa_avx512_core) ? 2 : 1;
}

static void select_path(void)
{
    int forced = forced_isa();
    pthread_once(&g_simd_once, select_simd);
    if (forced == -2) {
        g_path = PATH_PLAIN;
        snprintf(g_describe, sizeof g_describe, "plain C loop (KC_ISA=reference)");
        return;
    }
    if (forced >= 0) dnnl_set_max_cpu_isa((dnnl_cpu_isa_t)forced);
    const dnnl_version_t *v = dnnl_version();
    if (self_check(PATH_DNNL)) {
        g_path = PATH_DNNL;
        snprintf(g_describe, sizeof g_describe, "oneDNN %d.%d.%d %s", v->major, v->minor, v->patch,
                 isa_name(dnnl_get_effective_cpu_isa()));
        return;
    }
    fprintf(stderr, "keycut: warning: oneDNN %d.%d.%d (%s) failed the small-product check; "
                    "falling back to OpenBLAS\n", v->major, v->minor, v->patch,
            isa_name(dnnl_get_effective_cpu_isa()));
    if (self_check(PATH_OPENBLAS)) {
        g_path = PATH_OPENBLAS;
        snprintf(g_describe, sizeof g_describe, "OpenBLAS %s (fallback: oneDNN failed its check)",
                 openblas_get_corename());
        return;
    }
    fprintf(stderr, "keycut: warning: OpenBLAS (%s) failed the small-product check; falling back "
                    "to the plain C loop (slow)\n", openblas_get_corename());
    g_path = PATH_PLAIN;
    snprintf(g_describe, sizeof g_describe, "plain C loop (fallback: oneDNN and OpenBLAS failed their checks)");
}

int kc_gemm_init(void)
{
    pthread_once(&g_once, select_path);
    return 0;
}

const char *kc_gemm_describe(void)
{
    kc_gemm_init();
    return g_describe;
}

int kc_simd_level(void)
{
    pthread_once(&g_simd_once, select_simd);
    return g_simd;
}

void kc_gemm_nt(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
                float beta, float *C, int ldc)
{
    kc_gemm_init();
    run(g_path, 1, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void kc_gemm_nn(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
                float beta, float *C, int ldc)
{
    kc_gemm_init();
    run(g_path, 0, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}
