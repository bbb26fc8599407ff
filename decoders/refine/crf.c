/* decoders/refine/crf.c — dense CRF mean field on the permutohedral lattice (see crf.h). */
#include "decoders/refine/crf.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <immintrin.h>

#include "pipeline/kc.h"

enum { MAX_D = 16, MAX_VS = 16 };

/* ---- a hash table of lattice keys, open addressing ---------------------------------------------
 * A key is d int16 coordinates packed four to a uint64 word (kw words, zero padded), so that two keys
 * compare as kw word compares.  A slot is kw + 1 words: the vertex id (-1 empty) and 32 bits of the
 * hash, then the key, so that a probe touches one cache line; the keys are also kept in id order for
 * the neighbour pass.  Vertex ids are given in order of first appearance (as densecrf's table gives
 * them; the filter does not depend on the numbering anyway).  The lattice's cost is these look-ups
 * (about 1.4 million for the 5-d bilateral kernel of a 480x480 image, into 120,000 vertices): they
 * are made in batches whose slots are prefetched first. */
typedef struct key_table {
    int kw;
    size_t cap, filled; /* cap: a power of two */
    uint64_t *slot;     /* (cap, kw + 1) */
    uint64_t *keys;     /* (filled, kw) */
    size_t keys_cap;
} key_table;

enum { KW_MAX = (MAX_D + 3) / 4, BATCH = 16 };

static uint64_t key_hash(const uint64_t *k, int kw)
{
    uint64_t h = 0x9E3779B97F4A7C15ULL;
    for (int i = 0; i < kw; i++) {
        h ^= k[i];
        h *= 0xBF58476D1CE4E5B9ULL;
        h ^= h >> 31;
    }
    return h;
}

static void slots_alloc(key_table *t)
{
    t->slot = kc_malloc(t->cap * (t->kw + 1) * sizeof *t->slot);
    for (size_t h = 0; h < t->cap; h++) t->slot[h * (t->kw + 1)] = UINT64_MAX;
}

static void table_init(key_table *t, int kw, size_t expect)
{
    t->kw = kw;
    t->cap = 1024;
    while (t->cap < 2 * expect) t->cap *= 2;
    slots_alloc(t);
    t->filled = 0;
    t->keys_cap = expect > 16 ? expect : 16;
    t->keys = kc_malloc(t->keys_cap * (size_t)kw * sizeof *t->keys);
}

static int key_equal(const uint64_t *a, const uint64_t *b, int kw)
{
    for (int i = 0; i < kw; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

static void table_put(key_table *t, const uint64_t *k, uint64_t hv, int32_t id)
{
    const int sw = t->kw + 1;
    size_t h = (size_t)hv & (t->cap - 1);
    while (t->slot[h * sw] != UINT64_MAX) h = (h + 1) & (t->cap - 1);
    t->slot[h * sw] = (uint64_t)(uint32_t)id | (hv >> 32 << 32);
    memcpy(t->slot + h * sw + 1, k, (size_t)t->kw * sizeof *k);
}

static void table_grow(key_table *t)
{
    free(t->slot);
    t->cap *= 2;
    slots_alloc(t);
    for (size_t e = 0; e < t->filled; e++) {
        const uint64_t *k = t->keys + e * t->kw;
        table_put(t, k, key_hash(k, t->kw), (int32_t)e);
    }
}

static void table_prefetch(const key_table *t, uint64_t hv)
{
    __builtin_prefetch(t->slot + ((size_t)hv & (t->cap - 1)) * (t->kw + 1));
}

/* The id of key k (hash hv, kw = t->kw words); a new id when create is set and k is absent, else -1. */
static inline __attribute__((always_inline)) int32_t table_find(key_table *t, const uint64_t *k, uint64_t hv,
                                                                const int create, const int kw)
{
    const int sw = kw + 1;
    const uint64_t tag = hv >> 32 << 32;
    size_t h = (size_t)hv & (t->cap - 1);
    for (;;) {
        const uint64_t *s = t->slot + h * sw;
        if (s[0] == UINT64_MAX) break;
        if ((s[0] & 0xFFFFFFFF00000000ULL) == tag && key_equal(s + 1, k, kw)) return (int32_t)(uint32_t)s[0];
        h = (h + 1) & (t->cap - 1);
    }
    if (!create) return -1;
    if (t->filled == t->keys_cap) {
        t->keys_cap *= 2;
        t->keys = kc_realloc(t->keys, t->keys_cap * (size_t)kw * sizeof *t->keys);
    }
    memcpy(t->keys + t->filled * kw, k, (size_t)kw * sizeof *k);
    int32_t id = (int32_t)t->filled++;
    if (2 * t->filled > t->cap) table_grow(t); /* (re-inserts every key, this one too) */
    else {
        uint64_t *s = t->slot + h * sw;
        s[0] = (uint64_t)(uint32_t)id | tag;
        memcpy(s + 1, k, (size_t)kw * sizeof *k);
    }
    return id;
}

/* d int16 coordinates into kw words */
static inline __attribute__((always_inline)) void key_pack(const int *c, int d, int kw, uint64_t *k)
{
    for (int i = 0; i < kw; i++) k[i] = 0;
    for (int i = 0; i < d; i++) k[i >> 2] |= (uint64_t)(uint16_t)c[i] << (16 * (i & 3));
}

static inline int key_coord(const uint64_t *k, int i)
{
    return (int16_t)(uint16_t)(k[i >> 2] >> (16 * (i & 3)));
}

/* ---- the lattice ------------------------------------------------------------------------------ */
int permutohedral_simd(int use);

/* Pixel k's enclosing simplex: its d + 1 vertex keys and barycentric weights (densecrf's steps). */
static inline __attribute__((always_inline)) void simplex(const float *f, const int d, const float *scale, uint64_t (*key)[KW_MAX], float *bary_out)
{
    const int d1 = d + 1, kw = (d + 3) / 4;
    const float down = 1.0f / (float)d1, up = (float)d1;
    float elevated[MAX_D + 1], rem0[MAX_D + 1], rank[MAX_D + 1], bary[MAX_D + 2];
    /* elevate onto the plane (E p) */
    float sm = 0;
    for (int j = d; j > 0; j--) {
        float cf = f[j - 1] * scale[j - 1];
        elevated[j] = sm - (float)j * cf;
        sm += cf;
    }
    elevated[0] = sm;
    /* the nearest remainder-0 point, coordinate by coordinate (round half to even) */
    float sum = 0;
    for (int i = 0; i <= d; i++) {
        float v = rintf(down * elevated[i]);
        rem0[i] = v * up;
        sum += v;
    }
    /* rank of each coordinate's difference */
    for (int i = 0; i <= d; i++) rank[i] = 0;
    for (int i = 0; i < d; i++) {
        float di = elevated[i] - rem0[i];
        for (int j = i + 1; j <= d; j++) {
            float dj = elevated[j] - rem0[j];
            if (di < dj) rank[i] += 1;
            else rank[j] += 1;
        }
    }
    /* back onto the plane when the rounded point is off it */
    for (int i = 0; i <= d; i++) {
        rank[i] += sum;
        if (rank[i] < 0) {
            rank[i] += up;
            rem0[i] += up;
        } else if (rank[i] >= up) {
            rank[i] -= up;
            rem0[i] -= up;
        }
    }
    /* barycentric weights */
    for (int i = 0; i <= d + 1; i++) bary[i] = 0;
    for (int i = 0; i <= d; i++) {
        float v = (elevated[i] - rem0[i]) * down;
        int p = d - (int)rank[i];
        bary[p] += v;
        bary[p + 1] -= v;
    }
    bary[0] += 1 + bary[d + 1];
    /* the d + 1 vertices: remainder-0 point plus the canonical simplex's r-th vertex, whose
     * coordinate j is r when j's rank is <= d - r, else r - (d + 1) */
    for (int r = 0; r <= d; r++) {
        int c[MAX_D];
        for (int i = 0; i < d; i++) {
            int rk = (int)rank[i];
            c[i] = (int16_t)((int)rem0[i] + (rk <= d - r ? r : r - d1));
        }
        key_pack(c, d, kw, key[r]);
        bary_out[r] = bary[r];
    }
}

#define T256 __attribute__((target("avx2"))) /* (run only when the CPU has AVX2) */

/* simplex() for eight pixels at once, lane by lane the same float operations (compares and blends
 * where the scalar code branches), so the keys and weights are the same bits. */
typedef void (*simplex8_fn)(const float *f, const float *scale, uint64_t (*key)[KW_MAX], float *bary_out);

T256 static inline __attribute__((always_inline)) void simplex8(const float *f, const int d, const float *scale,
                                                                uint64_t (*key)[KW_MAX], float *bary_out)
{
    const int d1 = d + 1, kw = (d + 3) / 4;
    const __m256 down = _mm256_set1_ps(1.0f / (float)d1), up = _mm256_set1_ps((float)d1), one = _mm256_set1_ps(1);
    const __m256i idx = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(d));
    __m256 el[MAX_D + 1], rem0[MAX_D + 1], rank[MAX_D + 1], bary[MAX_D + 2];
    __m256 sm = _mm256_setzero_ps();
    for (int j = d; j > 0; j--) {
        __m256 cf = _mm256_mul_ps(_mm256_i32gather_ps(f + j - 1, idx, 4), _mm256_set1_ps(scale[j - 1]));
        el[j] = _mm256_sub_ps(sm, _mm256_mul_ps(_mm256_set1_ps((float)j), cf));
        sm = _mm256_add_ps(sm, cf);
    }
    el[0] = sm;
    __m256 sum = _mm256_setzero_ps();
    for (int i = 0; i <= d; i++) {
        __m256 v = _mm256_round_ps(_mm256_mul_ps(down, el[i]), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        rem0[i] = _mm256_mul_ps(v, up);
        sum = _mm256_add_ps(sum, v);
        rank[i] = _mm256_setzero_ps();
    }
    for (int i = 0; i < d; i++) {
        __m256 di = _mm256_sub_ps(el[i], rem0[i]);
        for (int j = i + 1; j <= d; j++) {
            __m256 lt = _mm256_cmp_ps(di, _mm256_sub_ps(el[j], rem0[j]), _CMP_LT_OQ);
            rank[i] = _mm256_add_ps(rank[i], _mm256_and_ps(lt, one));
            rank[j] = _mm256_add_ps(rank[j], _mm256_andnot_ps(lt, one));
        }
    }
    for (int i = 0; i <= d; i++) {
        __m256 r = _mm256_add_ps(rank[i], sum);
        __m256 lo = _mm256_cmp_ps(r, _mm256_setzero_ps(), _CMP_LT_OQ), hi = _mm256_cmp_ps(r, up, _CMP_GE_OQ);
        rank[i] = _mm256_blendv_ps(_mm256_blendv_ps(r, _mm256_sub_ps(r, up), hi), _mm256_add_ps(r, up), lo);
        rem0[i] = _mm256_blendv_ps(_mm256_blendv_ps(rem0[i], _mm256_sub_ps(rem0[i], up), hi), _mm256_add_ps(rem0[i], up), lo);
    }
    for (int i = 0; i <= d + 1; i++) bary[i] = _mm256_setzero_ps();
    for (int i = 0; i <= d; i++) {
        __m256 v = _mm256_mul_ps(_mm256_sub_ps(el[i], rem0[i]), down);
        __m256 p = _mm256_sub_ps(_mm256_set1_ps((float)d), rank[i]);
        for (int q = 0; q <= d; q++) {
            __m256 at = _mm256_cmp_ps(p, _mm256_set1_ps((float)q), _CMP_EQ_OQ);
            bary[q] = _mm256_blendv_ps(bary[q], _mm256_add_ps(bary[q], v), at);
            bary[q + 1] = _mm256_blendv_ps(bary[q + 1], _mm256_sub_ps(bary[q + 1], v), at);
        }
    }
    bary[0] = _mm256_add_ps(bary[0], _mm256_add_ps(one, bary[d + 1]));
    float bo[MAX_D + 1][8];
    int32_t base[MAX_D][8], rk[MAX_D][8];
    for (int r = 0; r <= d; r++) _mm256_storeu_ps(bo[r], bary[r]);
    for (int i = 0; i < d; i++) {
        _mm256_storeu_si256((__m256i *)base[i], _mm256_cvttps_epi32(rem0[i]));
        _mm256_storeu_si256((__m256i *)rk[i], _mm256_cvttps_epi32(rank[i]));
    }
    for (int b = 0; b < 8; b++)
        for (int r = 0; r <= d; r++) {
            int c[MAX_D];
            for (int i = 0; i < d; i++) c[i] = (int16_t)(base[i][b] + (rk[i][b] <= d - r ? r : r - d1));
            key_pack(c, d, kw, key[b * d1 + r]);
            bary_out[b * d1 + r] = bo[r][b];
        }
}

T256 static void simplex8_d2(const float *f, const float *scale, uint64_t (*key)[KW_MAX], float *bary_out)
{
    simplex8(f, 2, scale, key, bary_out);
}

T256 static void simplex8_d5(const float *f, const float *scale, uint64_t (*key)[KW_MAX], float *bary_out)
{
    simplex8(f, 5, scale, key, bary_out);
}

/* The body of permutohedral_init, inlined for the common dimensions so that its loops unroll. */
static inline __attribute__((always_inline)) void lattice_build(permutohedral *lat, const float *features, int n,
                                                                const int d, simplex8_fn simplex_simd)
{
    const int d1 = d + 1, kw = (d + 3) / 4;
    lat->d = d;
    lat->n = n;
    lat->offset = kc_malloc((size_t)n * d1 * sizeof *lat->offset);
    lat->bary = kc_malloc((size_t)n * d1 * sizeof *lat->bary);
    key_table t;
    table_init(&t, kw, (size_t)n / 2);
    const float inv_std_dev = (float)(sqrt(2.0 / 3.0) * d1);
    float scale[MAX_D];
    for (int i = 0; i < d; i++) scale[i] = (float)(1.0 / sqrt((double)((i + 2) * (i + 1))) * inv_std_dev);
    /* the vertices of BATCH pixels, their slots prefetched, then looked up in pixel order (value
     * rows: vertex id + 1) */
    static_assert(BATCH * (MAX_D + 1) <= 1024, "batch buffers");
    uint64_t key[BATCH * (MAX_D + 1)][KW_MAX], hv[BATCH * (MAX_D + 1)];
    for (int k0 = 0; k0 < n; k0 += BATCH) {
        const int nb = n - k0 < BATCH ? n - k0 : BATCH;
        int b = 0;
        if (simplex_simd)
            for (; b + 8 <= nb; b += 8)
                simplex_simd(features + (size_t)(k0 + b) * d, scale, key + b * d1, lat->bary + (size_t)(k0 + b) * d1);
        for (; b < nb; b++)
            simplex(features + (size_t)(k0 + b) * d, d, scale, key + b * d1, lat->bary + (size_t)(k0 + b) * d1);
        for (int e = 0; e < nb * d1; e++) {
            hv[e] = key_hash(key[e], kw);
            table_prefetch(&t, hv[e]);
        }
        for (int e = 0; e < nb * d1; e++) lat->offset[(size_t)k0 * d1 + e] = table_find(&t, key[e], hv[e], 1, kw) + 1;
    }
    const int m = lat->m = (int)t.filled;
    /* neighbours along direction j: key - 1 on every coordinate but j, key[j] + d (the previous
     * vertex); the next one is its mirror: b is a's previous exactly when a is b's next.  Rows as
     * above, 0 = none. */
    lat->nbr = kc_calloc((size_t)d1 * 2 * m, sizeof *lat->nbr);
    for (int j = 0; j <= d; j++) {
        int32_t *prev = lat->nbr + (size_t)j * 2 * m, *next = prev + m;
        for (int i0 = 0; i0 < m; i0 += BATCH) {
            const int nb = m - i0 < BATCH ? m - i0 : BATCH;
            for (int b = 0; b < nb; b++) {
                const uint64_t *k = t.keys + (size_t)(i0 + b) * kw;
                int c[MAX_D];
                for (int i = 0; i < d; i++) c[i] = (int16_t)(key_coord(k, i) - 1);
                if (j < d) c[j] = (int16_t)(key_coord(k, j) + d);
                key_pack(c, d, kw, key[b]);
                hv[b] = key_hash(key[b], kw);
                table_prefetch(&t, hv[b]);
            }
            for (int b = 0; b < nb; b++) {
                int32_t u = table_find(&t, key[b], hv[b], 0, kw);
                prev[i0 + b] = u + 1;
                if (u >= 0) next[u] = i0 + b + 1;
            }
        }
    }
    free(t.slot);
    free(t.keys);
    lat->values = kc_malloc((size_t)(m + 1) * 2 * LATTICE_VS * sizeof *lat->values);
    lat->next = lat->values + (size_t)(m + 1) * LATTICE_VS;
}

static void build_d2(permutohedral *lat, const float *f, int n, simplex8_fn s8) { lattice_build(lat, f, n, 2, s8); }
static void build_d3(permutohedral *lat, const float *f, int n) { lattice_build(lat, f, n, 3, NULL); }
static void build_d5(permutohedral *lat, const float *f, int n, simplex8_fn s8) { lattice_build(lat, f, n, 5, s8); }
static void build_any(permutohedral *lat, const float *f, int n, int d) { lattice_build(lat, f, n, d, NULL); }

int permutohedral_init(permutohedral *lat, const float *features, int n, int d)
{
    memset(lat, 0, sizeof *lat);
    if (d < 1 || d > MAX_D || n < 1) return kc_fail("permutohedral lattice: %d features of dimension %d", n, d);
    const int simd = permutohedral_simd(-1);
    if (d == 2) build_d2(lat, features, n, simd ? simplex8_d2 : NULL);
    else if (d == 3) build_d3(lat, features, n);
    else if (d == 5) build_d5(lat, features, n, simd ? simplex8_d5 : NULL);
    else build_any(lat, features, n, d);
    return 0;
}

/* ---- filtering ----------------------------------------------------------------------------
 * Splat, blur, slice with value rows of vs floats (row 0: the absent vertex, kept zero), each in
 * densecrf's order: the splat sums w * value per vertex in pixel order, the blur's
 * v + 0.5 (prev + next) is its float + double expression (prev + next in float, then old + 0.5 sum
 * in double, rounded to float), the slice sums (w * v) * alpha over the corners in order.  These
 * loops are bound by memory (the 5-d lattice of a 480x480 image has 120,000 vertices): an AVX2
 * blur and slice (gathering four rows at a time) measured no faster, so they stay scalar, with vs
 * a constant in the common cases so that the row loops unroll. */
static int lattice_simd = -1; /* -1: not chosen yet; 0: scalar; 1: AVX2 */

int permutohedral_simd(int use)
{
    if (lattice_simd < 0) {
        const char *isa = getenv("KC_ISA");
        lattice_simd = __builtin_cpu_supports("avx2") && !(isa && (!strcmp(isa, "generic") || !strcmp(isa, "reference")));
    }
    int was = lattice_simd;
    if (use >= 0) lattice_simd = use && __builtin_cpu_supports("avx2");
    return was;
}

static inline __attribute__((always_inline)) void lattice_filter(const permutohedral *lat, const float *in, float *out,
                                                                 const int vs, float *values, float *next)
{
    const int d1 = lat->d + 1, n = lat->n, m = lat->m;
    /* splat */
    memset(values, 0, (size_t)(m + 1) * vs * sizeof *values);
    for (int k = 0; k < vs; k++) next[k] = 0;
    const int32_t *off = lat->offset;
    const float *bary = lat->bary;
    for (int i = 0; i < n; i++, off += d1, bary += d1) {
        float v[MAX_VS];
        for (int k = 0; k < vs; k++) v[k] = in[(size_t)i * vs + k];
        for (int j = 0; j < d1; j++) {
            float *o = values + (size_t)off[j] * vs, w = bary[j];
            for (int k = 0; k < vs; k++) o[k] += w * v[k];
        }
    }
    /* blur along each lattice direction */
    for (int j = 0; j < d1; j++) {
        const int32_t *prev = lat->nbr + (size_t)j * 2 * m, *nx = prev + m;
        for (int i = 0; i < m; i++) {
            const float *old = values + (size_t)(i + 1) * vs, *v1 = values + (size_t)prev[i] * vs,
                        *v2 = values + (size_t)nx[i] * vs;
            float *o = next + (size_t)(i + 1) * vs;
            for (int k = 0; k < vs; k++) o[k] = (float)((double)old[k] + 0.5 * (double)(v1[k] + v2[k]));
        }
        float *sw = values;
        values = next;
        next = sw;
    }
    /* slice */
    const float alpha = 1.0f / (1 + powf(2, (float)-lat->d));
    off = lat->offset;
    bary = lat->bary;
    for (int i = 0; i < n; i++, off += d1, bary += d1) {
        float acc[MAX_VS];
        for (int k = 0; k < vs; k++) acc[k] = 0;
        for (int j = 0; j < d1; j++) {
            const float *v = values + (size_t)off[j] * vs;
            float w = bary[j];
            for (int k = 0; k < vs; k++) acc[k] += w * v[k] * alpha;
        }
        for (int k = 0; k < vs; k++) out[(size_t)i * vs + k] = acc[k];
    }
}

static void filter_vs1(const permutohedral *lat, const float *in, float *out) { lattice_filter(lat, in, out, 1, lat->values, lat->next); }
static void filter_vs2(const permutohedral *lat, const float *in, float *out) { lattice_filter(lat, in, out, 2, lat->values, lat->next); }
static void filter_vs3(const permutohedral *lat, const float *in, float *out) { lattice_filter(lat, in, out, 3, lat->values, lat->next); }

void permutohedral_compute(permutohedral *lat, const float *in, float *out, int vs)
{
    if (vs == 1) filter_vs1(lat, in, out);
    else if (vs == 2) filter_vs2(lat, in, out);
    else if (vs == 3) filter_vs3(lat, in, out);
    else if (vs <= LATTICE_VS) lattice_filter(lat, in, out, vs, lat->values, lat->next);
    else {
        float *values = kc_malloc((size_t)(lat->m + 1) * vs * sizeof *values), *next = kc_malloc((size_t)(lat->m + 1) * vs * sizeof *next);
        lattice_filter(lat, in, out, vs, values, next);
        free(values);
        free(next);
    }
}

void permutohedral_free(permutohedral *lat)
{
    free(lat->offset);
    free(lat->bary);
    free(lat->nbr);
    free(lat->values);
    memset(lat, 0, sizeof *lat);
}

/* ---- mean field ------------------------------------------------------------------------------- */
/* q (n, labels) = softmax over labels of in, per pixel, as densecrf's expAndNormalize. */
static inline __attribute__((always_inline)) void exp_normalize(const float *in, float *q, int n, const int labels)
{
    for (int i = 0; i < n; i++) {
        const float *a = in + (size_t)i * labels;
        float *b = q + (size_t)i * labels, mx = a[0], s = 0;
        for (int l = 1; l < labels; l++)
            if (a[l] > mx) mx = a[l];
        for (int l = 0; l < labels; l++) s += b[l] = a[l] == mx ? 1.0f : expf(a[l] - mx); /* expf(0) = 1 */
        for (int l = 0; l < labels; l++) b[l] /= s;
    }
}

/* A kernel: either a lattice or (exact) the features themselves. */
typedef struct kernel {
    permutohedral lat;
    float *feat; /* (n, d), exact mode only */
    int d, exact;
    float *norm; /* (n) */
    float weight;
} kernel;

/* out (n, vs) = sum_j exp(-|f_i - f_j|^2 / 2) in_j, in double, O(n^2 d). */
static void exact_filter(const kernel *k, int n, const float *in, float *out, int vs)
{
    double *acc = kc_malloc((size_t)vs * sizeof *acc);
    for (int i = 0; i < n; i++) {
        for (int c = 0; c < vs; c++) acc[c] = 0;
        const float *fi = k->feat + (size_t)i * k->d;
        for (int j = 0; j < n; j++) {
            const float *fj = k->feat + (size_t)j * k->d;
            double s = 0;
            for (int c = 0; c < k->d; c++) {
                double t = (double)fi[c] - fj[c];
                s += t * t;
            }
            double w = exp(-0.5 * s);
            for (int c = 0; c < vs; c++) acc[c] += w * in[(size_t)j * vs + c];
        }
        for (int c = 0; c < vs; c++) out[(size_t)i * vs + c] = (float)acc[c];
    }
    free(acc);
}

static void kernel_filter(kernel *k, int n, const float *in, float *out, int vs)
{
    if (k->exact) {
        float *copy = kc_malloc((size_t)n * vs * sizeof *copy);
        memcpy(copy, in, (size_t)n * vs * sizeof *copy);
        exact_filter(k, n, copy, out, vs);
        free(copy);
    } else permutohedral_compute(&k->lat, in, out, vs);
}

static int kernel_init(kernel *k, float *feat, int n, int d, float weight, int exact)
{
    memset(k, 0, sizeof *k);
    k->d = d;
    k->exact = exact;
    k->weight = weight;
    if (exact) k->feat = feat;
    else {
        KC_TRY(permutohedral_init(&k->lat, feat, n, d));
        free(feat);
    }
    float *ones = kc_malloc((size_t)n * sizeof *ones);
    for (int i = 0; i < n; i++) ones[i] = 1;
    k->norm = kc_malloc((size_t)n * sizeof *k->norm);
    kernel_filter(k, n, ones, k->norm, 1);
    for (int i = 0; i < n; i++) k->norm[i] = (float)(1.0 / sqrt((double)k->norm[i] + 1e-20));
    free(ones);
    return 0;
}

static void kernel_free(kernel *k)
{
    permutohedral_free(&k->lat);
    free(k->feat);
    free(k->norm);
}

/* T mean-field iterations from Q0 = softmax(-U).  energy, tmp: (n, labels) scratch. */
static inline __attribute__((always_inline)) void mean_field(kernel *ks, const float *unary, float *q, float *energy,
                                                             float *tmp, int n, const int labels, int iters)
{
    const size_t nl = (size_t)n * labels;
    for (size_t i = 0; i < nl; i++) energy[i] = -unary[i];
    exp_normalize(energy, q, n, labels);
    for (int it = 0; it < iters; it++) {
        for (size_t i = 0; i < nl; i++) energy[i] = -unary[i];
        for (int m = 0; m < 2; m++) {
            kernel *k = &ks[m];
            for (int i = 0; i < n; i++)
                for (int l = 0; l < labels; l++) tmp[(size_t)i * labels + l] = q[(size_t)i * labels + l] * k->norm[i];
            kernel_filter(k, n, tmp, tmp, labels);
            for (int i = 0; i < n; i++)
                for (int l = 0; l < labels; l++) {
                    size_t e = (size_t)i * labels + l;
                    float filtered = tmp[e] * k->norm[i];
                    energy[e] -= -k->weight * filtered; /* Potts: -w K Q, subtracted */
                }
        }
        exp_normalize(energy, q, n, labels);
    }
}

/* two labels (MaskCut's case): the label loops unrolled */
static void mean_field_2(kernel *ks, const float *unary, float *q, float *energy, float *tmp, int n, int iters)
{
    mean_field(ks, unary, q, energy, tmp, n, 2, iters);
}

static int crf_run_any(const crf_params *p, const uint8_t *rgb, int w, int h, const float *unary, int labels,
                       float *q, int exact)
{
    if (labels < 2 || labels > 16) return kc_fail("dense CRF: %d labels (2..16 supported)", labels);
    if (!(p->gauss_sxy > 0) || !(p->bi_sxy > 0) || !(p->bi_srgb > 0) || p->iters < 0)
        return kc_fail("dense CRF: standard deviations must be > 0 and iterations >= 0");
    const int n = w * h;
    /* features as densecrf's DenseCRF2D: x / sx, y / sy (and r, g, b / srgb) */
    float *fg = kc_malloc((size_t)n * 2 * sizeof *fg), *fb = kc_malloc((size_t)n * 5 * sizeof *fb);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            size_t i = (size_t)y * w + x;
            fg[2 * i] = (float)x / p->gauss_sxy;
            fg[2 * i + 1] = (float)y / p->gauss_sxy;
            fb[5 * i] = (float)x / p->bi_sxy;
            fb[5 * i + 1] = (float)y / p->bi_sxy;
            for (int c = 0; c < 3; c++) fb[5 * i + 2 + c] = (float)rgb[3 * i + c] / p->bi_srgb;
        }
    kernel ks[2];
    if (kernel_init(&ks[0], fg, n, 2, p->gauss_w, exact) < 0) return -1;
    if (kernel_init(&ks[1], fb, n, 5, p->bi_w, exact) < 0) {
        kernel_free(&ks[0]);
        return -1;
    }
    size_t nl = (size_t)n * labels;
    float *energy = kc_malloc(nl * sizeof *energy), *tmp = kc_malloc(nl * sizeof *tmp);
    if (labels == 2) mean_field_2(ks, unary, q, energy, tmp, n, p->iters);
    else mean_field(ks, unary, q, energy, tmp, n, labels, p->iters);
    free(energy);
    free(tmp);
    kernel_free(&ks[0]);
    kernel_free(&ks[1]);
    return 0;
}

int crf_run(const crf_params *p, const uint8_t *rgb, int w, int h, const float *unary, int labels, float *q)
{
    return crf_run_any(p, rgb, w, h, unary, labels, q, 0);
}

int crf_run_exact(const crf_params *p, const uint8_t *rgb, int w, int h, const float *unary, int labels, float *q)
{
    return crf_run_any(p, rgb, w, h, unary, labels, q, 1);
}
