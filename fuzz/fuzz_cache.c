/* fuzz/fuzz_cache.c — the HDF5 cache reader's validation, structure-aware.
 *
 * Raw HDF5 bytes mostly exercise libhdf5's own parser, which (Debian 1.10.8, not instrumented)
 * overruns, hangs and segfaults on damaged files within seconds (see fuzz/regressions/README.md);
 * keycut cannot validate below the HDF5 API.  So this harness lets the input *describe* a cache —
 * root attributes (format, format_version, others; string or not), /index/ids, /index/grid and
 * /index/size (present or not, any shape and type, any values), feature datasets and mask datasets
 * with their attributes (any shape, type and values, NaN included) — writes it with the HDF5 API,
 * and runs what a stage runs: cache_open with each expected format, then reads every dataset the
 * index names.  With KC_FUZZ_RAW_HDF5=1, inputs starting with "\x89HDF" are passed through as raw
 * bytes instead (to reproduce the libhdf5 findings in fuzz/regressions/). */
#include <hdf5.h>
#include <math.h>

#include "fuzz/fuzz_util.h"
#include "pipeline/cache/cache.h"
#include "pipeline/kc.h"

typedef struct src {
    const uint8_t *p;
    size_t n;
} src;

static unsigned take(src *s, unsigned range) /* 0 .. range-1 */
{
    if (!s->n || range <= 1) return 0;
    unsigned v = s->p[0];
    s->p++, s->n--;
    return v % range;
}

static void take_str(src *s, char *out, size_t cap)
{
    size_t len = take(s, 12);
    size_t i = 0;
    for (; i < len && i + 1 < cap && s->n; i++) {
        char c = (char)s->p[0];
        s->p++, s->n--;
        out[i] = c ? c : 'x';
    }
    out[i] = 0;
}

static void attr_str(hid_t obj, const char *name, const char *value)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
    if (a >= 0) {
        H5Awrite(a, t, &value);
        H5Aclose(a);
    }
    H5Sclose(sp);
    H5Tclose(t);
}

static void attr_num(hid_t obj, const char *name, hid_t type, int n, src *s)
{
    double v[8];
    for (int i = 0; i < n; i++) {
        unsigned k = take(s, 6);
        v[i] = k == 0 ? NAN : k == 1 ? INFINITY : k == 2 ? -1.0 : k == 3 ? 1e30 : (double)take(s, 256) / 7.0;
    }
    hsize_t dims[1] = {(hsize_t)n};
    hid_t sp = H5Screate_simple(1, dims, NULL);
    hid_t a = H5Acreate2(obj, name, type, sp, H5P_DEFAULT, H5P_DEFAULT);
    if (a >= 0) {
        H5Awrite(a, H5T_NATIVE_DOUBLE, v);
        H5Aclose(a);
    }
    H5Sclose(sp);
}

/* A dataset of rank 0..3 with small dims, of one of a few types, filled from the input. */
static void dataset(hid_t file, const char *path, src *s, hid_t prefer)
{
    static const hid_t *types[] = {&H5T_NATIVE_FLOAT_g, &H5T_NATIVE_UINT8_g, &H5T_NATIVE_INT32_g,
                                   &H5T_NATIVE_DOUBLE_g, &H5T_NATIVE_INT64_g};
    H5open();
    unsigned k = take(s, 8);
    hid_t type = k < 5 ? *types[k] : prefer;
    int rank = (int)take(s, 5) ? 2 : (int)take(s, 4);
    hsize_t dims[3] = {1, 1, 1}, total = 1;
    for (int i = 0; i < rank; i++) {
        dims[i] = take(s, 7);
        total *= dims[i];
    }
    double *v = calloc(total ? total : 1, sizeof *v);
    for (hsize_t i = 0; i < total; i++) {
        unsigned c = take(s, 16);
        v[i] = c == 0 ? NAN : c == 1 ? -INFINITY : (double)c - 3.0;
    }
    hid_t sp = rank ? H5Screate_simple(rank, dims, NULL) : H5Screate(H5S_SCALAR);
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    hid_t d = H5Dcreate2(file, path, type, sp, lcpl, H5P_DEFAULT, H5P_DEFAULT);
    if (d >= 0) {
        H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
        if (take(s, 2)) attr_num(d, "lambda2", H5T_NATIVE_FLOAT, 1 + (int)take(s, 8), s);
        if (take(s, 2)) attr_num(d, "eigengap", H5T_NATIVE_FLOAT, 1 + (int)take(s, 8), s);
        if (take(s, 2)) attr_num(d, "degenerate", take(s, 2) ? H5T_NATIVE_INT32 : H5T_NATIVE_FLOAT, 1 + (int)take(s, 2), s);
        H5Dclose(d);
    }
    H5Pclose(lcpl);
    H5Sclose(sp);
    free(v);
}

static void ids_dataset(hid_t file, int n, char ids[][16])
{
    const char *p[8];
    for (int i = 0; i < n; i++) p[i] = ids[i];
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    hsize_t dims[1] = {(hsize_t)n};
    hid_t sp = H5Screate_simple(1, dims, NULL);
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    hid_t d = H5Dcreate2(file, "/index/ids", t, sp, lcpl, H5P_DEFAULT, H5P_DEFAULT);
    if (d >= 0) {
        if (n) H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, p);
        H5Dclose(d);
    }
    H5Pclose(lcpl);
    H5Sclose(sp);
    H5Tclose(t);
}

static const char *build(src *s)
{
    const char *path = fuzz_scratch(NULL, 0, ".h5");
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0) abort();
    static const char *formats[] = {CACHE_FORMAT_FEATURES, CACHE_FORMAT_MASKS, "keycut-other", "hdf5"};
    static const char *versions[] = {CACHE_FORMAT_VERSION, CACHE_FORMAT_VERSION_OLD, "0", "3"};
    if (take(s, 8)) attr_str(f, "format", formats[take(s, 4)]);
    else attr_num(f, "format", H5T_NATIVE_INT32, 1, s);
    if (take(s, 8)) attr_str(f, "format_version", versions[take(s, 4)]);
    char key[16], val[16];
    for (int i = (int)take(s, 3); i > 0; i--) {
        take_str(s, key, sizeof key);
        take_str(s, val, sizeof val);
        if (key[0] && strcmp(key, "format") && strcmp(key, "format_version")) attr_str(f, key, val);
    }
    int n = (int)take(s, 5);
    char ids[8][16];
    static const char *odd[] = {"a", "a", "", ".", "x/y", "b"};
    for (int i = 0; i < n; i++) {
        if (take(s, 2)) snprintf(ids[i], sizeof ids[i], "%s", odd[take(s, 6)]);
        else take_str(s, ids[i], sizeof ids[i]);
    }
    if (take(s, 8)) ids_dataset(f, n, ids);
    if (take(s, 8)) dataset(f, "/index/grid", s, H5T_NATIVE_INT32);
    if (take(s, 8)) dataset(f, "/index/size", s, H5T_NATIVE_INT32);
    for (int i = 0; i < n; i++) {
        char p[64];
        if (!ids[i][0] || ids[i][0] == '/') continue;
        snprintf(p, sizeof p, "/features/%s/%s", take(s, 4) ? "keys" : "tokens", ids[i]);
        if (take(s, 4)) dataset(f, p, s, H5T_NATIVE_FLOAT);
        snprintf(p, sizeof p, "/masks/%s/%s", take(s, 2) ? "t0.20-bin-mean-seed-n1" : "s", ids[i]);
        if (take(s, 4)) dataset(f, p, s, H5T_NATIVE_UINT8);
    }
    H5Fclose(f);
    return path;
}

static void read_all(const char *path, const char *format)
{
    cache_reader r;
    if (cache_open(&r, path, format) < 0) {
        if (!kc_error()[0]) abort();
        return;
    }
    (void)cache_content_hash(&r);
    for (int i = 0; i < r.index.n && i < 8; i++) {
        if (r.index.grid[2 * i] <= 0 || r.index.size[2 * i] <= 0) abort(); /* validated */
        if (cache_index_find(&r.index, r.index.ids[i]) < 0) abort();
        static const char *kinds[] = {"keys", "tokens"};
        for (int k = 0; k < 2; k++) {
            char dset[1024];
            float *x = NULL;
            int rows = 0, cols = 0;
            snprintf(dset, sizeof dset, "/features/%s/%s", kinds[k], r.index.ids[i]);
            if (cache_has(&r, dset) && cache_read_f32(&r, dset, &x, &rows, &cols) == 0) {
                for (int j = 0; j < rows * cols; j++)
                    if (!isfinite(x[j])) abort(); /* cache_read_f32 promises finite values */
                free(x);
            }
        }
    }
    char **settings = NULL;
    int n_set = 0;
    if (cache_list(&r, "/masks", &settings, &n_set) == 0) {
        for (int s = 0; s < n_set; s++) {
            for (int i = 0; i < r.index.n && i < 8 && s < 4; i++) {
                char dset[1024];
                uint8_t *m = NULL;
                int rows = 0, cols = 0;
                float vals[16];
                int32_t deg;
                snprintf(dset, sizeof dset, "/masks/%s/%s", settings[s], r.index.ids[i]);
                if (cache_read_u8(&r, dset, &m, &rows, &cols) == 0) free(m);
                (void)cache_read_attr_f32(&r, dset, "lambda2", vals, 16);
                (void)cache_read_attr_f32(&r, dset, "eigengap", vals, 3);
                (void)cache_read_attr_i32(&r, dset, "degenerate", &deg);
            }
            free(settings[s]);
        }
        free(settings);
    }
    cache_close(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_init();
    const char *path;
    static int raw = -1;
    if (raw < 0) raw = getenv("KC_FUZZ_RAW_HDF5") && atoi(getenv("KC_FUZZ_RAW_HDF5"));
    if (raw && size >= 4 && memcmp(data, "\x89HDF", 4) == 0) {
        path = fuzz_scratch(data, size, ".h5");
    } else {
        src s = {data, size};
        path = build(&s);
    }
    read_all(path, NULL);
    read_all(path, CACHE_FORMAT_FEATURES);
    read_all(path, CACHE_FORMAT_MASKS);
    return 0;
}
