/* eval/crf.c — dense CRF mean field on the permutohedral lattice (see crf.h). */
#include "eval/crf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/kc.h"

enum { MAX_D = 16 };

/* ---- a hash table of lattice keys (d int16 coordinates), open addressing ---------------------- */
typedef struct key_table {
    int d;
    size_t cap, filled;  /* cap: a power of two */
    int32_t *slot;       /* (cap): vertex id or -1 */
    int16_t *keys;       /* (filled, d) */
    size_t keys_cap;
} key_table;

static uint64_t key_hash(const int16_t *k, int d)
{
    uint64_t h = 1469598103934665603ULL;
    for (int i = 0; i < d; i++) {
        h ^= (uint16_t)k[i];
        h *= 1099511628211ULL;
    }
    return h ^ (h >> 29);
}

static void table_init(key_table *t, int d, size_t expect)
{
    t->d = d;
    t->cap = 1024;
    while (t->cap < 2 * expect) t->cap *= 2;
    t->slot = kc_malloc(t->cap * sizeof *t->slot);
    memset(t->slot, 0xff, t->cap * sizeof *t->slot);
    t->filled = 0;
    t->keys_cap = expect > 16 ? expect : 16;
    t->keys = kc_malloc(t->keys_cap * (size_t)d * sizeof *t->keys);
}

static void table_grow(key_table *t)
{
    free(t->slot);
    t->cap *= 2;
    t->slot = kc_malloc(t->cap * sizeof *t->slot);
    memset(t->slot, 0xff, t->cap * sizeof *t->slot);
    for (size_t e = 0; e < t->filled; e++) {
        size_t h = key_hash(t->keys + e * t->d, t->d) & (t->cap - 1);
        while (t->slot[h] >= 0) h = (h + 1) & (t->cap - 1);
        t->slot[h] = (int32_t)e;
    }
}

/* The id of key k; a new id when create is set and k is absent, else -1. */
static int32_t table_find(key_table *t, const int16_t *k, int create)
{
    if (create && 2 * (t->filled + 1) > t->cap) table_grow(t);
    size_t h = key_hash(k, t->d) & (t->cap - 1);
    for (;;) {
        int32_t e = t->slot[h];
        if (e < 0) {
            if (!create) return -1;
            if (t->filled == t->keys_cap) {
                t->keys_cap *= 2;
                t->keys = kc_realloc(t->keys, t->keys_cap * (size_t)t->d * sizeof *t->keys);
            }
            memcpy(t->keys + t->filled * t->d, k, (size_t)t->d * sizeof *k);
            return t->slot[h] = (int32_t)t->filled++;
        }
        if (!memcmp(t->keys + (size_t)e * t->d, k, (size_t)t->d * sizeof *k)) return e;
        h = (h + 1) & (t->cap - 1);
    }
}

/* ---- the lattice ------------------------------------------------------------------------------ */
int permutohedral_init(permutohedral *lat, const float *features, int n, int d)
{
    memset(lat, 0, sizeof *lat);
    if (d < 1 || d > MAX_D || n < 1) return kc_fail("permutohedral lattice: %d features of dimension %d", n, d);
    const int d1 = d + 1;
    lat->d = d;
    lat->n = n;
    lat->offset = kc_malloc((size_t)n * d1 * sizeof *lat->offset);
    lat->bary = kc_malloc((size_t)n * d1 * sizeof *lat->bary);
    key_table t;
    table_init(&t, d, (size_t)n * 2);
    /* canonical simplex: canonical[r][j] = r for j <= d - r, r - (d + 1) after */
    int16_t canonical[MAX_D + 1][MAX_D + 1];
    for (int r = 0; r <= d; r++)
        for (int j = 0; j <= d; j++) canonical[r][j] = (int16_t)(j <= d - r ? r : r - d1);
    const float inv_std_dev = (float)(sqrt(2.0 / 3.0) * d1);
    float scale[MAX_D];
    for (int i = 0; i < d; i++) scale[i] = (float)(1.0 / sqrt((double)((i + 2) * (i + 1))) * inv_std_dev);
    const float down = 1.0f / (float)d1, up = (float)d1;
    for (int k = 0; k < n; k++) {
        const float *f = features + (size_t)k * d;
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
        /* the d + 1 vertices */
        for (int r = 0; r <= d; r++) {
            int16_t key[MAX_D];
            for (int i = 0; i < d; i++) key[i] = (int16_t)((int)rem0[i] + canonical[r][(int)rank[i]]);
            lat->offset[(size_t)k * d1 + r] = table_find(&t, key, 1);
            lat->bary[(size_t)k * d1 + r] = bary[r];
        }
    }
    const int m = lat->m = (int)t.filled;
    lat->nbr = kc_malloc((size_t)d1 * m * 2 * sizeof *lat->nbr);
    for (int j = 0; j <= d; j++)
        for (int i = 0; i < m; i++) {
            const int16_t *key = t.keys + (size_t)i * d;
            int16_t n1[MAX_D + 1], n2[MAX_D + 1];
            for (int c = 0; c < d; c++) {
                n1[c] = (int16_t)(key[c] - 1);
                n2[c] = (int16_t)(key[c] + 1);
            }
            if (j < d) {
                n1[j] = (int16_t)(key[j] + d);
                n2[j] = (int16_t)(key[j] - d);
            }
            lat->nbr[((size_t)j * m + i) * 2 + 0] = table_find(&t, n1, 0);
            lat->nbr[((size_t)j * m + i) * 2 + 1] = table_find(&t, n2, 0);
        }
    free(t.slot);
    free(t.keys);
    return 0;
}

void permutohedral_compute(const permutohedral *lat, const float *in, float *out, int vs)
{
    const int d1 = lat->d + 1, m = lat->m, n = lat->n;
    /* row 0 is the "no neighbour" vertex, always zero; vertex v lives in row v + 1 */
    float *values = kc_calloc((size_t)(m + 2) * vs, sizeof *values);
    float *next = kc_calloc((size_t)(m + 2) * vs, sizeof *next);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < d1; j++) {
            size_t o = (size_t)(lat->offset[(size_t)i * d1 + j] + 1) * vs;
            float w = lat->bary[(size_t)i * d1 + j];
            for (int k = 0; k < vs; k++) values[o + k] += w * in[(size_t)i * vs + k];
        }
    for (int j = 0; j < d1; j++) {
        const int32_t *nb = lat->nbr + (size_t)j * m * 2;
        for (int i = 0; i < m; i++) {
            const float *old = values + (size_t)(i + 1) * vs;
            const float *v1 = values + (size_t)(nb[2 * i] + 1) * vs, *v2 = values + (size_t)(nb[2 * i + 1] + 1) * vs;
            float *nv = next + (size_t)(i + 1) * vs;
            for (int k = 0; k < vs; k++) nv[k] = (float)((double)old[k] + 0.5 * (double)(v1[k] + v2[k]));
        }
        float *sw = values;
        values = next;
        next = sw;
    }
    const float alpha = 1.0f / (1 + powf(2, (float)-lat->d));
    for (int i = 0; i < n; i++) {
        float acc[16];
        float *o = vs <= 16 ? acc : out + (size_t)i * vs;
        for (int k = 0; k < vs; k++) o[k] = 0;
        for (int j = 0; j < d1; j++) {
            const float *v = values + (size_t)(lat->offset[(size_t)i * d1 + j] + 1) * vs;
            float w = lat->bary[(size_t)i * d1 + j];
            for (int k = 0; k < vs; k++) o[k] += w * v[k] * alpha;
        }
        if (o == acc) memcpy(out + (size_t)i * vs, acc, (size_t)vs * sizeof *acc);
    }
    free(values);
    free(next);
}

void permutohedral_free(permutohedral *lat)
{
    free(lat->offset);
    free(lat->bary);
    free(lat->nbr);
    memset(lat, 0, sizeof *lat);
}

/* ---- mean field ------------------------------------------------------------------------------- */
/* q (n, labels) = softmax over labels of in, per pixel, as densecrf's expAndNormalize. */
static void exp_normalize(const float *in, float *q, int n, int labels)
{
    for (int i = 0; i < n; i++) {
        const float *a = in + (size_t)i * labels;
        float *b = q + (size_t)i * labels, mx = a[0], s = 0;
        for (int l = 1; l < labels; l++)
            if (a[l] > mx) mx = a[l];
        for (int l = 0; l < labels; l++) s += b[l] = expf(a[l] - mx);
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

static void kernel_filter(const kernel *k, int n, const float *in, float *out, int vs)
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
    for (size_t i = 0; i < nl; i++) energy[i] = -unary[i];
    exp_normalize(energy, q, n, labels);
    for (int it = 0; it < p->iters; it++) {
        for (size_t i = 0; i < nl; i++) energy[i] = -unary[i];
        for (int m = 0; m < 2; m++) {
            const kernel *k = &ks[m];
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
