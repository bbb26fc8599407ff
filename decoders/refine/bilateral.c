/* decoders/refine/bilateral.c — TokenCut's fast bilateral solver (see bilateral.h). */
#include "decoders/refine/bilateral.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/kc.h"

enum { DIM = 5 };

/* ---- int64 -> vertex id, open addressing ---------------------------------------------------- */
typedef struct id_table {
    size_t cap;
    int64_t *key;
    int32_t *val; /* -1 empty */
} id_table;

static size_t mix(int64_t k, size_t cap)
{
    uint64_t h = (uint64_t)k * 0x9E3779B97F4A7C15ULL;
    return (size_t)(h ^ (h >> 31)) & (cap - 1);
}

static void ids_init(id_table *t, size_t expect)
{
    t->cap = 1024;
    while (t->cap < 2 * expect) t->cap *= 2;
    t->key = kc_malloc(t->cap * sizeof *t->key);
    t->val = kc_malloc(t->cap * sizeof *t->val);
    memset(t->val, 0xff, t->cap * sizeof *t->val);
}

static int32_t *ids_slot(const id_table *t, int64_t k)
{
    size_t h = mix(k, t->cap);
    while (t->val[h] >= 0 && t->key[h] != k) h = (h + 1) & (t->cap - 1);
    return &t->val[h];
}

static void ids_put(id_table *t, int64_t k, int32_t v)
{
    int32_t *s = ids_slot(t, k);
    t->key[s - t->val] = k;
    *s = v;
}

typedef struct hash_id {
    int64_t hash;
    int32_t id;
} hash_id;

static int cmp_hash_id(const void *a, const void *b)
{
    int64_t x = ((const hash_id *)a)->hash, y = ((const hash_id *)b)->hash;
    return (x > y) - (x < y);
}

/* ---- the grid ---------------------------------------------------------------------------- */
typedef struct bs_grid {
    int n_pix, n_vert;
    int32_t *vert;   /* (n_pix): the vertex of each pixel */
    int32_t *nbr;    /* (n_vert, DIM, 2): vertex at -1 and +1 along each axis, n_vert none */
} bs_grid;

static void grid_free(bs_grid *g)
{
    free(g->vert);
    free(g->nbr);
}

static int grid_build(bs_grid *g, const bs_params *p, const uint8_t *rgb, int w, int h)
{
    static const double M[3][3] = {{0.299, 0.587, 0.114}, {-0.168736, -0.331264, 0.5}, {0.5, -0.418688, -0.081312}};
    static const double offset[3] = {0, 128.0, 128.0};
    const double step[DIM] = {1, 255, 255.0 * 255, 255.0 * 255 * 255, 255.0 * 255 * 255 * 255};
    const size_t n = (size_t)w * h;
    g->n_pix = (int)n;
    /* each pixel's first-appearance id (a run of pixels in one cell skips the table), then the ids
     * renumbered in hash order */
    g->vert = kc_malloc(n * sizeof *g->vert);
    id_table t;
    ids_init(&t, 4096);
    int64_t *uniq = NULL, prev_hv = 0;
    size_t n_uniq = 0, cap_uniq = 0;
    int32_t prev_id = -1;
    int64_t *cell_x = kc_malloc((size_t)w * sizeof *cell_x); /* the spatial cell of each column */
    for (int x = 0; x < w; x++) cell_x[x] = (int64_t)((double)x / p->sigma_spatial);
    for (int y = 0; y < h; y++) {
        const int64_t cell_y = (int64_t)((double)y / p->sigma_spatial); /* (once a row) */
        for (int x = 0; x < w; x++) {
            size_t i = (size_t)y * w + x;
            const uint8_t *c = rgb + 3 * i;
            double yuv[3];
            for (int k = 0; k < 3; k++) {
                double a = (double)c[0] * M[k][0];
                a = fma((double)c[1], M[k][1], a);
                a = fma((double)c[2], M[k][2], a);
                yuv[k] = a + offset[k];
            }
            int64_t co[DIM] = {cell_x[x], cell_y,
                               (int64_t)(yuv[0] / p->sigma_luma), (int64_t)(yuv[1] / p->sigma_chroma),
                               (int64_t)(yuv[2] / p->sigma_chroma)};
            int64_t hv = 0;
            for (int k = 0; k < DIM; k++) hv += co[k] * (int64_t)step[k];
            if (prev_id >= 0 && hv == prev_hv) {
                g->vert[i] = prev_id;
                continue;
            }
            int32_t *s = ids_slot(&t, hv);
            if (*s < 0) {
                if (2 * (n_uniq + 1) > t.cap) {
                    /* grow: rebuild with the keys seen so far */
                    id_table bigger;
                    ids_init(&bigger, 2 * t.cap);
                    for (size_t u = 0; u < n_uniq; u++) ids_put(&bigger, uniq[u], (int32_t)u);
                    free(t.key);
                    free(t.val);
                    t = bigger;
                    s = ids_slot(&t, hv);
                }
                if (n_uniq == cap_uniq) {
                    cap_uniq = cap_uniq ? 2 * cap_uniq : 4096;
                    uniq = kc_realloc(uniq, cap_uniq * sizeof *uniq);
                }
                t.key[s - t.val] = hv;
                *s = (int32_t)n_uniq;
                uniq[n_uniq++] = hv;
            }
            g->vert[i] = prev_id = *s;
            prev_hv = hv;
        }
    }
    free(cell_x);
    /* vertices in hash order, as np.unique gives them */
    hash_id *order = kc_malloc((n_uniq ? n_uniq : 1) * sizeof *order);
    int32_t *renum = kc_malloc((n_uniq ? n_uniq : 1) * sizeof *renum);
    for (size_t u = 0; u < n_uniq; u++) order[u] = (hash_id){uniq[u], (int32_t)u};
    qsort(order, n_uniq, sizeof *order, cmp_hash_id);
    for (size_t u = 0; u < n_uniq; u++) {
        uniq[u] = order[u].hash;
        renum[order[u].id] = (int32_t)u;
    }
    for (size_t i = 0; i < n; i++) g->vert[i] = renum[g->vert[i]];
    free(order);
    free(renum);
    g->n_vert = (int)n_uniq;
    /* neighbours: uniq is sorted, so uniq[u] -+ step[k] over u is sorted too, and each axis's
     * look-ups are one merge of the two sequences */
    g->nbr = kc_malloc(n_uniq * DIM * 2 * sizeof *g->nbr);
    for (int k = 0; k < DIM; k++)
        for (int sd = 0; sd < 2; sd++) {
            const int64_t delta = sd ? (int64_t)step[k] : -(int64_t)step[k];
            size_t j = 0;
            for (size_t u = 0; u < n_uniq; u++) {
                const int64_t want = uniq[u] + delta;
                while (j < n_uniq && uniq[j] < want) j++;
                g->nbr[(u * DIM + k) * 2 + sd] = j < n_uniq && uniq[j] == want ? (int32_t)j : (int32_t)n_uniq;
            }
        }
    free(uniq);
    free(t.key);
    free(t.val);
    return 0;
}

/* out = B x: 2 DIM x, then each axis's neighbour sum x[a] + x[b] (the row of the sparse [1 0 1]
 * matrix) added in axis order.  x has n_vert + 1 entries, x[n_vert] = 0 standing for an absent
 * neighbour: o + (x[a] + 0) and o + (0 + 0) are the sums SciPy forms without the absent terms. */
static void grid_blur(const bs_grid *g, const double *x, double *out)
{
    const int32_t *nb = g->nbr;
    for (int v = 0; v < g->n_vert; v++, nb += 2 * DIM) {
        double o = 2.0 * DIM * x[v];
        for (int k = 0; k < DIM; k++) o = o + (x[nb[2 * k]] + x[nb[2 * k + 1]]);
        out[v] = o;
    }
}

/* ---- A as a sparse matrix, rows with ascending columns (SciPy's CSR matvec order) ---------- */
typedef struct sparse_rows {
    int n;
    int32_t *start; /* (n + 1) */
    int32_t *col;
    double *val;
} sparse_rows;

typedef struct col_val {
    int32_t col;
    double val;
} col_val;

static void matvec(const sparse_rows *A, const double *x, double *y)
{
    for (int i = 0; i < A->n; i++) {
        double s = 0;
        for (int32_t e = A->start[i]; e < A->start[i + 1]; e++) s += A->val[e] * x[A->col[e]];
        y[i] = s;
    }
}

/* y = A x, and the dot product <x, y> summed in row order (what dot(x, y) afterwards would give) */
static double matvec_dot(const sparse_rows *A, const double *x, double *y)
{
    double d = 0;
    for (int i = 0; i < A->n; i++) {
        double s = 0;
        for (int32_t e = A->start[i]; e < A->start[i + 1]; e++) s += A->val[e] * x[A->col[e]];
        y[i] = s;
        d += x[i] * s;
    }
    return d;
}

static double norm2(const double *x, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++) s += x[i] * x[i];
    return sqrt(s);
}

struct bs_solver {
    bs_params p;
    bs_grid g;
    sparse_rows A;
    double *ws, *minv; /* (n_vert) */
    double *work;      /* (7, n_vert): bs_run's vectors, allocated once */
};

int bs_init(bs_solver **out, const bs_params *p, const uint8_t *rgb, int w, int h)
{
    *out = NULL;
    if (!(p->sigma_spatial > 0) || !(p->sigma_luma > 0) || !(p->sigma_chroma > 0))
        return kc_fail("bilateral solver: sigmas must be > 0");
    if (!(p->lambda >= 0) || !(p->confidence > 0) || !(p->cg_tol > 0) || p->cg_maxiter < 0 || p->bistoch_iters < 0)
        return kc_fail("bilateral solver: lambda >= 0, confidence > 0, tolerance > 0, iterations >= 0 required");
    bs_solver *s = kc_calloc(1, sizeof *s);
    s->p = *p;
    bs_grid *g = &s->g;
    KC_TRY(grid_build(g, p, rgb, w, h));
    const int nv = g->n_vert;
    const size_t npx = (size_t)w * h;
    /* bistochastisation */
    double *m = kc_calloc((size_t)nv, sizeof *m), *nn = kc_malloc(((size_t)nv + 1) * sizeof *nn);
    double *tmp = kc_malloc((size_t)nv * sizeof *tmp);
    nn[nv] = 0; /* the absent neighbour */
    for (size_t i = 0; i < npx; i++) m[g->vert[i]] += 1.0;
    for (int v = 0; v < nv; v++) nn[v] = 1.0;
    for (int it = 0; it < p->bistoch_iters; it++) {
        grid_blur(g, nn, tmp);
        for (int v = 0; v < nv; v++) nn[v] = sqrt(nn[v] * m[v] / tmp[v]);
    }
    grid_blur(g, nn, tmp);
    for (int v = 0; v < nv; v++) m[v] = nn[v] * tmp[v];
    /* the confidence's splat, in pixel order */
    s->ws = kc_calloc((size_t)nv, sizeof *s->ws);
    for (size_t i = 0; i < npx; i++) s->ws[g->vert[i]] += p->confidence;
    /* A = lambda (Dm - Dn B Dn) + diag(S c): it does not depend on the target */
    sparse_rows *A = &s->A;
    A->n = nv;
    A->start = kc_malloc(((size_t)nv + 1) * sizeof *A->start);
    A->col = kc_malloc((size_t)nv * (2 * DIM + 1) * sizeof *A->col);
    A->val = kc_malloc((size_t)nv * (2 * DIM + 1) * sizeof *A->val);
    s->minv = kc_malloc((size_t)nv * sizeof *s->minv);
    int32_t e = 0;
    for (int v = 0; v < nv; v++) {
        col_val row[2 * DIM + 1];
        int k = 0;
        double diag = p->lambda * (m[v] - nn[v] * (2.0 * DIM * nn[v])) + s->ws[v];
        s->minv[v] = 1.0 / (diag > p->diag_min ? diag : p->diag_min);
        row[k++] = (col_val){v, diag};
        for (int a = 0; a < DIM; a++)
            for (int sd = 0; sd < 2; sd++) {
                int32_t u = g->nbr[((size_t)v * DIM + a) * 2 + sd];
                if (u < nv) row[k++] = (col_val){u, p->lambda * (0.0 - nn[v] * nn[u])};
            }
        for (int i = 1; i < k; i++) /* columns ascending (they are distinct) */
            for (int j = i; j > 0 && row[j - 1].col > row[j].col; j--) {
                col_val sw = row[j];
                row[j] = row[j - 1];
                row[j - 1] = sw;
            }
        A->start[v] = e;
        for (int j = 0; j < k; j++) {
            A->col[e] = row[j].col;
            A->val[e++] = row[j].val;
        }
    }
    A->start[nv] = e;
    s->work = kc_malloc((size_t)7 * (nv ? nv : 1) * sizeof *s->work);
    free(m);
    free(nn);
    free(tmp);
    *out = s;
    return 0;
}

int bs_vertices(const bs_solver *s)
{
    return s->g.n_vert;
}

void bs_run(bs_solver *s, const double *target, double *out, bs_stats *st)
{
    const bs_params *p = &s->p;
    const bs_grid *g = &s->g;
    const int nv = g->n_vert;
    const size_t npx = (size_t)g->n_pix;
    memset(st, 0, sizeof *st);
    st->vertices = nv;
    double *b = s->work, *tmp = b + nv, *y = tmp + nv, *r = y + nv, *z = r + nv, *pp = z + nv, *q = pp + nv;
    memset(b, 0, (size_t)nv * sizeof *b);
    for (size_t i = 0; i < npx; i++) b[g->vert[i]] += target[i] * p->confidence;
    /* conjugate gradients, SciPy 1.10's cg with atol = "legacy" */
    for (int v = 0; v < nv; v++) y[v] = b[v] / s->ws[v];
    matvec(&s->A, y, tmp);
    for (int v = 0; v < nv; v++) r[v] = tmp[v] - b[v];
    double res0 = norm2(r, nv), bnorm = norm2(b, nv);
    if (res0 <= p->cg_tol) {
        st->kept_start = 1;
    } else {
        const double atol = bnorm == 0 ? p->cg_tol : p->cg_tol * bnorm;
        for (int v = 0; v < nv; v++) r[v] = b[v] - tmp[v];
        double rho_prev = 0, resid = norm2(r, nv);
        st->residual = resid;
        if (!(resid < atol))
            for (int it = 1; it <= p->cg_maxiter; it++) {
                /* the same operations in the same order as z = M r, rho = <r, z>, p = z + beta p,
                 * q = A p, alpha = rho / <p, q>, y += alpha p, r -= alpha q, |r|, in fewer passes */
                double rho = 0;
                for (int v = 0; v < nv; v++) {
                    z[v] = s->minv[v] * r[v];
                    rho += r[v] * z[v];
                }
                if (it > 1) {
                    double beta = rho / rho_prev;
                    for (int v = 0; v < nv; v++) pp[v] = z[v] + beta * pp[v];
                } else {
                    memcpy(pp, z, (size_t)nv * sizeof *pp);
                }
                double alpha = rho / matvec_dot(&s->A, pp, q);
                double rr = 0;
                for (int v = 0; v < nv; v++) {
                    y[v] += alpha * pp[v];
                    r[v] += -alpha * q[v];
                    rr += r[v] * r[v];
                }
                st->cg_iters = it;
                resid = sqrt(rr);
                int done = resid <= atol;
                if (done && it > 1) { /* SciPy rechecks with the true residual */
                    matvec(&s->A, y, tmp);
                    for (int v = 0; v < nv; v++) r[v] = b[v] - tmp[v];
                    resid = norm2(r, nv);
                    done = resid <= atol;
                }
                st->residual = resid;
                if (done) break;
                rho_prev = rho;
            }
    }
    for (size_t i = 0; i < npx; i++) out[i] = y[g->vert[i]];
}

void bs_free(bs_solver *s)
{
    if (!s) return;
    grid_free(&s->g);
    free(s->A.start);
    free(s->A.col);
    free(s->A.val);
    free(s->ws);
    free(s->minv);
    free(s->work);
    free(s);
}

int bs_solve(const bs_params *p, const uint8_t *rgb, int w, int h, const double *target, double *out, bs_stats *st)
{
    bs_solver *s;
    KC_TRY(bs_init(&s, p, rgb, w, h));
    bs_run(s, target, out, st);
    bs_free(s);
    return 0;
}
