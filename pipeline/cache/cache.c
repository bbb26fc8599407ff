/* pipeline/cache/cache.c — see cache.h.
 *
 * All HDF5 calls go through one OpenMP critical section (Debian's libhdf5 is not built
 * thread-safe), so stages may call cache_* from worker threads.  Object timestamps are turned
 * off on every group and dataset so the same run gives the same bytes.
 */
#include "pipeline/cache/cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pipeline/kc.h"
#include "pipeline/lock.h"
#include "pipeline/sha256.h"

/* Every HDF5 call runs under HDF5_LOCK, which first turns HDF5's automatic error printing off
 * for the calling thread: Debian's HDF5 is built thread-safe, so each thread has its own error
 * stack and its own printing switch, and a piece-writer thread would otherwise print HDF5's
 * whole stack on a full disk.  (HDF5_LOCK is used as a statement, before the locked block.) */
#define HDF5_LOCK                                                                                   \
    h5_quiet();                                                                                     \
    _Pragma("omp critical(kc_hdf5)")

static void close_impl(cache_reader *r);
static void remove_partial(cache_writer *w);
static int piece_copy_impl(cache_piece *p, const cache_reader *r, const char *dset);

static void h5_quiet(void)
{
    static _Thread_local int done;
    if (!done) {
        H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
        done = 1;
    }
}

/* ---- why an HDF5 call failed --------------------------------------------------------------- */

/* What the calling thread's HDF5 error stack says about the last failure, read right after it
 * (the next HDF5 call clears the stack): the system's word for the errno that HDF5's file driver
 * reports ("No space left on device", "Read-only file system", "Disk quota exceeded"), or HDF5's
 * own innermost description.  *lock_failed is set when the failure was HDF5 locking the file. */
typedef struct h5_why {
    int sys_errno;
    int lock_failed;
    char text[256];
} h5_why;

static herr_t why_walk(unsigned n, const H5E_error2_t *e, void *data)
{
    h5_why *w = data;
    (void)n;
    if (e->min_num == H5E_CANTLOCKFILE || (e->desc && strstr(e->desc, "unable to lock file"))) w->lock_failed = 1;
    const char *en = e->desc ? strstr(e->desc, "errno = ") : NULL;
    if (en && !w->sys_errno) w->sys_errno = atoi(en + 8);
    if (e->desc && e->desc[0]) { /* walking downward: the innermost record comes last */
        snprintf(w->text, sizeof w->text, "%s", e->desc);
        char *cut = strstr(w->text, ", errno = ");
        if (!cut) cut = strstr(w->text, ": time = ");
        if (cut) *cut = 0;
    }
    return 0;
}

static h5_why h5_last_why(void)
{
    h5_why w;
    memset(&w, 0, sizeof w);
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, why_walk, &w);
    return w;
}

/* The cause as it goes into a message: "No space left on device", or "HDF5: <its description>". */
static const char *h5_cause(void)
{
    static _Thread_local char buf[300];
    h5_why w = h5_last_why();
    if (w.sys_errno > 0) snprintf(buf, sizeof buf, "%s", strerror(w.sys_errno));
    else if (w.text[0]) snprintf(buf, sizeof buf, "HDF5: %s", w.text);
    else snprintf(buf, sizeof buf, "%s", errno ? strerror(errno) : "HDF5 error");
    return buf;
}

/* ---- filesystems without file locks -------------------------------------------------------- */
/* HDF5 1.10 locks (flock) every file it opens, and fails where the filesystem has no locks (NFS
 * without lockd, Lustre without -o flock: errno 37 or 38).  keycut never opens a file that is
 * being written (pieces and outputs appear whole, by rename, and its own output lock keeps one
 * writer per output), so it then opens files without HDF5's lock, with one warning.  A user who
 * set HDF5_USE_FILE_LOCKING=TRUE asked for the lock: that is refused with what to set instead. */
static int h5_no_file_locks;

static hid_t h5_fapl(void)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (h5_no_file_locks || kc_lock_fs_has_no_locks()) H5Pset_file_locking(fapl, 0, 1);
    return fapl;
}

/* After a failed open or create of path: 1 if it failed on HDF5's lock and may be retried without
 * it (warning once), 0 if not, -1 with the message when the environment insists on locking. */
static int h5_retry_without_lock(const char *path, const h5_why *w)
{
    if (!w->lock_failed || h5_no_file_locks) return 0;
    const char *env = getenv("HDF5_USE_FILE_LOCKING");
    if (env && (!strcmp(env, "TRUE") || !strcmp(env, "1")))
        return kc_fail("%s: this filesystem has no file locks (%s) and HDF5_USE_FILE_LOCKING=%s asks HDF5 for them; "
                       "set HDF5_USE_FILE_LOCKING=FALSE (keycut's own lock still keeps one writer per output)",
                       path, w->sys_errno > 0 ? strerror(w->sys_errno) : "HDF5 could not lock the file", env);
    h5_no_file_locks = 1;
    kc_lock_note_no_locks(path, w->sys_errno > 0 ? w->sys_errno : ENOLCK);
    return 1;
}

/* H5Fopen read-only, retried without HDF5's lock where the filesystem has none.  On failure
 * *why holds the cause. */
static hid_t h5_open_ro(const char *path, h5_why *why)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        hid_t fapl = h5_fapl();
        hid_t f = H5Fopen(path, H5F_ACC_RDONLY, fapl);
        h5_why w = h5_last_why();
        H5Pclose(fapl);
        if (f >= 0) return f;
        *why = w;
        int r = h5_retry_without_lock(path, &w);
        if (r < 0) why->lock_failed = 2; /* refused: the message is set */
        if (r <= 0) return -1;
    }
    return -1;
}

/* ---- index and provenance ------------------------------------------------------------------ */

void cache_index_free(cache_index *ix)
{
    for (int i = 0; i < ix->n; i++) free(ix->ids[i]);
    free(ix->ids);
    free(ix->grid);
    free(ix->size);
    free(ix->resized);
    free(ix->box);
    memset(ix, 0, sizeof *ix);
}

int cache_index_find(const cache_index *ix, const char *id)
{
    for (int i = 0; i < ix->n; i++)
        if (!strcmp(ix->ids[i], id)) return i;
    return -1;
}

void prov_set(cache_prov *p, const char *key, const char *value)
{
    for (int i = 0; i < p->n; i++)
        if (!strcmp(p->key[i], key)) {
            free(p->value[i]);
            p->value[i] = kc_strdup(value);
            return;
        }
    p->key = kc_realloc(p->key, (size_t)(p->n + 1) * sizeof *p->key);
    p->value = kc_realloc(p->value, (size_t)(p->n + 1) * sizeof *p->value);
    p->key[p->n] = kc_strdup(key);
    p->value[p->n] = kc_strdup(value);
    p->n++;
}

void prov_setf(cache_prov *p, const char *key, const char *fmt, ...)
{
    va_list ap;
    char buf[4096];
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    prov_set(p, key, buf);
}

const char *prov_get(const cache_prov *p, const char *key)
{
    for (int i = 0; i < p->n; i++)
        if (!strcmp(p->key[i], key)) return p->value[i];
    return NULL;
}

int prov_is_reserved(const char *key)
{
    static const char *const r[] = {"format", "format_version", "code_version", "created", "content_hash", "command"};
    for (size_t i = 0; i < sizeof r / sizeof *r; i++)
        if (!strcmp(key, r[i])) return 1;
    return 0;
}

void prov_free(cache_prov *p)
{
    for (int i = 0; i < p->n; i++) {
        free(p->key[i]);
        free(p->value[i]);
    }
    free(p->key);
    free(p->value);
    memset(p, 0, sizeof *p);
}

void cache_fingerprint(char hex[65], int n, const char *const *parts)
{
    kc_sha256 c;
    kc_sha256_init(&c);
    for (int i = 0; i < n; i++) {
        const char *s = parts[i] ? parts[i] : "(null)";
        kc_sha256_update(&c, s, strlen(s) + 1);
    }
    kc_sha256_hex(&c, hex);
}

/* ---- small HDF5 helpers --------------------------------------------------------------------- */

static hid_t vlen_str_type(void)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    return t;
}

static hid_t no_times_gcpl(void)
{
    hid_t g = H5Pcreate(H5P_GROUP_CREATE);
    H5Pset_obj_track_times(g, 0);
    return g;
}

/* Creates every missing group on the way to the parent of dset ("/a/b/c" -> /a, /a/b). */
static int ensure_parents(hid_t file, const char *dset)
{
    char *p = kc_strdup(dset);
    int rc = 0;
    for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
        *s = 0;
        htri_t ex = H5Lexists(file, p, H5P_DEFAULT);
        if (ex < 0) {
            rc = -1;
        } else if (ex == 0) {
            hid_t gcpl = no_times_gcpl();
            hid_t g = H5Gcreate2(file, p, H5P_DEFAULT, gcpl, H5P_DEFAULT);
            H5Pclose(gcpl);
            if (g < 0) rc = -1;
            else H5Gclose(g);
        }
        *s = '/';
        if (rc < 0) {
            free(p);
            return kc_fail("cannot create group for %s (%s)", dset, h5_cause());
        }
    }
    free(p);
    return 0;
}

static int write_dataset(hid_t file, const char *path, hid_t type, const void *data, int rank,
                         const int64_t *dims)
{
    hsize_t hd[8];
    if (rank < 1 || rank > 8) return kc_fail("%s: bad rank %d", path, rank);
    for (int i = 0; i < rank; i++) hd[i] = (hsize_t)dims[i];
    if (ensure_parents(file, path) < 0) return -1;
    hid_t space = H5Screate_simple(rank, hd, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_obj_track_times(dcpl, 0);
    /* pixel masks (kc-refine: uint8 at the image's size; patch grids and attention stacks stay
     * far below 64 Ki values): one deflate chunk, HDF5's built-in filter */
    hsize_t count = 1;
    for (int i = 0; i < rank; i++) count *= hd[i];
    if (H5Tequal(type, H5T_NATIVE_UINT8) > 0 && count > 65536 && count < ((hsize_t)1 << 31)) {
        H5Pset_chunk(dcpl, rank, hd);
        H5Pset_deflate(dcpl, 4);
    }
    hid_t d = H5Dcreate2(file, path, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Pclose(dcpl);
    int rc = 0;
    if (d < 0) {
        h5_why w = h5_last_why();
        rc = w.sys_errno > 0 ? kc_fail("cannot write dataset %s (%s)", path, strerror(w.sys_errno))
                             : kc_fail("cannot create dataset %s (%s)", path, w.text[0] ? w.text : "already there?");
    } else if (H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0) {
        rc = kc_fail("cannot write dataset %s (%s)", path, h5_cause());
    }
    if (d >= 0) H5Dclose(d);
    H5Sclose(space);
    return rc;
}

static int write_attr(hid_t obj, const char *name, hid_t type, const void *data, int n)
{
    hsize_t d = (hsize_t)n;
    hid_t space = n < 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &d, NULL);
    if (H5Aexists(obj, name) > 0) H5Adelete(obj, name);
    hid_t a = H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    int rc = 0;
    if (a < 0 || H5Awrite(a, type, data) < 0) rc = kc_fail("cannot write attribute %s (%s)", name, h5_cause());
    if (a >= 0) H5Aclose(a);
    H5Sclose(space);
    return rc;
}

static int write_str_attr(hid_t obj, const char *name, const char *value)
{
    hid_t t = vlen_str_type();
    int rc = write_attr(obj, name, t, &value, -1);
    H5Tclose(t);
    return rc;
}

static int key_listed(const char *key, const char *const *list)
{
    for (int i = 0; list[i]; i++)
        if (!strcmp(key, list[i])) return 1;
    return 0;
}

/* A root attribute as version 2 stores it: the keys of CACHE_NUMERIC_KEYS as a scalar int64 (or
 * float32, CACHE_REAL_KEYS) when the whole value parses as one, every other value as a string. */
static int write_root_attr(hid_t root, const char *key, const char *value)
{
    static const char *const numeric[] = CACHE_NUMERIC_KEYS, *const real[] = CACHE_REAL_KEYS;
    if (key_listed(key, numeric) && *value) {
        char *end;
        errno = 0;
        if (key_listed(key, real)) {
            float v = strtof(value, &end);
            if (!*end && errno == 0 && isfinite(v)) return write_attr(root, key, H5T_NATIVE_FLOAT, &v, -1);
        } else {
            long long v = strtoll(value, &end, 10);
            if (!*end && errno == 0) {
                int64_t v64 = v;
                return write_attr(root, key, H5T_STD_I64LE, &v64, -1);
            }
        }
    }
    return write_str_attr(root, key, value);
}

/* A string attribute's value (variable or fixed length) in a new buffer, or NULL. */
static char *read_str_attr(hid_t a, hid_t ft)
{
    char *out = NULL;
    if (H5Tis_variable_str(ft) > 0) {
        hid_t mt = vlen_str_type();
        char *s = NULL;
        if (H5Aread(a, mt, &s) >= 0 && s) {
            out = kc_strdup(s);
            H5free_memory(s);
        }
        H5Tclose(mt);
    } else {
        size_t n = H5Tget_size(ft);
        char *s = kc_calloc(n + 1, 1);
        hid_t mt = H5Tcopy(H5T_C_S1);
        H5Tset_size(mt, n + 1);
        if (H5Aread(a, mt, s) >= 0) out = s;
        else free(s);
        H5Tclose(mt);
    }
    return out;
}

/* ---- reading -------------------------------------------------------------------------------- */

static herr_t collect_attr(hid_t loc, const char *name, const H5A_info_t *info, void *op)
{
    (void)info;
    cache_reader *r = op;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    if (a < 0) return 0;
    hid_t ft = H5Aget_type(a);
    hid_t sp = H5Aget_space(a);
    H5T_class_t cls = H5Tget_class(ft);
    if (cls == H5T_STRING && H5Sget_simple_extent_npoints(sp) == 1) {
        char *s = read_str_attr(a, ft);
        if (s) prov_set(&r->prov, name, s);
        free(s);
    } else if (cls == H5T_INTEGER && H5Sget_simple_extent_type(sp) == H5S_SCALAR) { /* version 2 */
        long long v;
        if (H5Aread(a, H5T_NATIVE_LLONG, &v) >= 0) prov_setf(&r->prov, name, "%lld", v);
    } else if (cls == H5T_FLOAT && H5Sget_simple_extent_type(sp) == H5S_SCALAR) {
        /* float32 as %.9g: the text version 1 stored (kc-extract's ln_eps) */
        if (H5Tget_size(ft) <= 4) {
            float v;
            if (H5Aread(a, H5T_NATIVE_FLOAT, &v) >= 0) prov_setf(&r->prov, name, "%.9g", (double)v);
        } else {
            double v;
            if (H5Aread(a, H5T_NATIVE_DOUBLE, &v) >= 0) prov_setf(&r->prov, name, "%.17g", v);
        }
    }
    H5Sclose(sp);
    H5Tclose(ft);
    H5Aclose(a);
    return 0;
}

static int read_i32_cols(hid_t file, const char *path, const char *fname, int n, int cols, int32_t **out)
{
    hid_t d = H5Dopen2(file, path, H5P_DEFAULT);
    if (d < 0) return kc_fail("%s: missing %s", fname, path);
    hid_t sp = H5Dget_space(d);
    hsize_t dims[2] = {0, 0};
    int rank = H5Sget_simple_extent_ndims(sp);
    H5Sget_simple_extent_dims(sp, dims, NULL);
    H5Sclose(sp);
    if (rank != 2 || dims[0] != (hsize_t)n || dims[1] != (hsize_t)cols) {
        H5Dclose(d);
        return kc_fail("%s: %s has shape other than (%d, %d)", fname, path, n, cols);
    }
    int32_t *v = kc_malloc((size_t)n * (size_t)cols * sizeof *v);
    if (H5Dread(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0) {
        free(v);
        H5Dclose(d);
        return kc_fail("%s: cannot read %s", fname, path);
    }
    H5Dclose(d);
    *out = v;
    return 0;
}

static int open_impl(cache_reader *r, const char *path, const char *format, int allow_empty)
{
    memset(r, 0, sizeof *r);
    r->file = -1;
    if (!kc_exists(path)) return kc_fail("%s: no such file", path);
    if (H5Fis_hdf5(path) <= 0) return kc_fail("%s: not an HDF5 file (or damaged)", path);
    h5_why why;
    hid_t f = h5_open_ro(path, &why);
    if (f < 0 && why.lock_failed == 2) return -1;
    if (f < 0 && why.sys_errno > 0) return kc_fail("%s: cannot open (%s)", path, strerror(why.sys_errno));
    if (f < 0) return kc_fail("%s: cannot open as HDF5 (damaged or truncated?)", path);
    r->file = f;
    r->path = kc_strdup(path);
    H5Aiterate2(f, H5_INDEX_NAME, H5_ITER_INC, NULL, collect_attr, r);
    const char *fmt = prov_get(&r->prov, "format");
    if (!fmt || strncmp(fmt, "keycut-", 7) != 0)
        return kc_fail("%s: not a keycut cache (no 'format' attribute)", path);
    if (format && strcmp(fmt, format) != 0)
        return kc_fail("%s: is a %s cache, expected a %s cache", path, fmt, format);
    const char *ver = prov_get(&r->prov, "format_version");
    if (!ver || (strcmp(ver, CACHE_FORMAT_VERSION) != 0 && strcmp(ver, CACHE_FORMAT_VERSION_OLD) != 0))
        return kc_fail("%s: cache format version %s, this keycut reads versions %s and %s (rerun the stage that made it)",
                       path, ver ? ver : "(none)", CACHE_FORMAT_VERSION_OLD, CACHE_FORMAT_VERSION);
    r->version = atoi(ver);
    /* index */
    hid_t d = H5Dopen2(f, "/index/ids", H5P_DEFAULT);
    if (d < 0) return kc_fail("%s: missing /index/ids", path);
    hid_t sp = H5Dget_space(d);
    hssize_t n = H5Sget_simple_extent_npoints(sp);
    H5Sclose(sp);
    if (n < 0 || n > 100000000 || (n == 0 && !allow_empty)) {
        H5Dclose(d);
        return kc_fail("%s: /index/ids is empty", path);
    }
    if (n == 0) { /* an empty shard (cache_open_shard only) */
        H5Dclose(d);
        r->index.ids = kc_calloc(1, sizeof(char *));
        r->index.grid = kc_calloc(2, sizeof(int32_t));
        r->index.size = kc_calloc(2, sizeof(int32_t));
        return 0;
    }
    char **ids = kc_calloc((size_t)n, sizeof *ids);
    hid_t mt = vlen_str_type();
    herr_t e = H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, ids);
    H5Dclose(d);
    H5Tclose(mt);
    if (e < 0) {
        free(ids);
        return kc_fail("%s: cannot read /index/ids", path);
    }
    r->index.n = (int)n;
    r->index.ids = kc_malloc((size_t)n * sizeof(char *));
    for (hssize_t i = 0; i < n; i++) {
        r->index.ids[i] = kc_strdup(ids[i] ? ids[i] : "");
        H5free_memory(ids[i]);
    }
    free(ids);
    KC_TRY(read_i32_cols(f, "/index/grid", path, (int)n, 2, &r->index.grid));
    KC_TRY(read_i32_cols(f, "/index/size", path, (int)n, 2, &r->index.size));
    /* version 2, optional: both or neither */
    int has_resized = H5Lexists(f, "/index/resized", H5P_DEFAULT) > 0, has_box = H5Lexists(f, "/index/box", H5P_DEFAULT) > 0;
    if (has_resized != has_box) return kc_fail("%s: /index/resized and /index/box come together; one is missing", path);
    if (has_resized) {
        KC_TRY(read_i32_cols(f, "/index/resized", path, (int)n, 2, &r->index.resized));
        KC_TRY(read_i32_cols(f, "/index/box", path, (int)n, 4, &r->index.box));
        for (int i = 0; i < (int)n; i++) {
            const int32_t *rs = r->index.resized + 2 * i, *b = r->index.box + 4 * i;
            if (rs[0] <= 0 || rs[1] <= 0 || b[0] < 0 || b[1] < 0 || b[2] <= 0 || b[3] <= 0 || b[0] + b[2] > rs[0] ||
                b[1] + b[3] > rs[1])
                return kc_fail("%s: /index/box of %s does not lie inside its /index/resized", path, r->index.ids[i]);
        }
    }
    for (int i = 0; i < (int)n; i++)
        if (r->index.grid[2 * i] <= 0 || r->index.grid[2 * i + 1] <= 0 || r->index.size[2 * i] <= 0 ||
            r->index.size[2 * i + 1] <= 0)
            return kc_fail("%s: /index/grid or /index/size of %s is not positive", path, r->index.ids[i]);
    return 0;
}

static int open_checked(cache_reader *r, const char *path, const char *format, int allow_empty)
{
    int rc;
    HDF5_LOCK
    {
        rc = open_impl(r, path, format, allow_empty);
        if (rc < 0) {
            char msg[2048];
            snprintf(msg, sizeof msg, "%s", kc_error());
            close_impl(r);
            kc_set_error(msg);
        }
    }
    return rc;
}

int cache_open(cache_reader *r, const char *path, const char *format) { return open_checked(r, path, format, 0); }

int cache_open_shard(cache_reader *r, const char *path, const char *format)
{
    return open_checked(r, path, format, 1);
}

const char *cache_attr(const cache_reader *r, const char *key) { return prov_get(&r->prov, key); }

const char *cache_content_hash(const cache_reader *r) { return prov_get(&r->prov, "content_hash"); }

int cache_has(const cache_reader *r, const char *dset)
{
    int rc = 0;
    HDF5_LOCK
    {
        /* H5Lexists fails on a missing intermediate group: check each level */
        char *p = kc_strdup(dset);
        rc = 1;
        for (char *s = strchr(p + 1, '/');; s = strchr(s + 1, '/')) {
            if (s) *s = 0;
            if (H5Lexists((hid_t)r->file, p, H5P_DEFAULT) <= 0) {
                rc = 0;
                break;
            }
            if (!s) break;
            *s = '/';
        }
        free(p);
    }
    return rc;
}

int cache_masks_are_stacks(const cache_reader *r)
{
    const char *kind = cache_attr(r, "feature_kind");
    return kind && !strcmp(kind, "attn");
}

/* Opens dataset dset; *rank is its rank and, when that is want_rank, dims its shape (else dims are
 * left as they are).  The dataset, or -1 with the error set when it is missing. */
static hid_t open_shaped(const cache_reader *r, const char *dset, int want_rank, hsize_t *dims, int *rank)
{
    hid_t d = H5Dopen2((hid_t)r->file, dset, H5P_DEFAULT);
    if (d < 0) return kc_fail("%s: missing dataset %s", r->path, dset);
    hid_t sp = H5Dget_space(d);
    *rank = H5Sget_simple_extent_ndims(sp);
    if (*rank == want_rank) H5Sget_simple_extent_dims(sp, dims, NULL);
    H5Sclose(sp);
    return d;
}

/* All of the open dataset d (n_bytes in memtype) in a new buffer; closes d.  NULL with the error
 * set when the read fails. */
static void *read_all(const cache_reader *r, hid_t d, const char *dset, hid_t memtype, size_t n_bytes)
{
    void *buf = kc_malloc(n_bytes);
    if (H5Dread(d, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
        free(buf);
        H5Dclose(d);
        kc_fail("%s: cannot read dataset %s (damaged file?)", r->path, dset);
        return NULL;
    }
    H5Dclose(d);
    return buf;
}

static int read_2d(const cache_reader *r, const char *dset, hid_t memtype, size_t elsize, void **data,
                   int *rows, int *cols)
{
    hsize_t dims[2] = {0, 0};
    int rank;
    hid_t d = open_shaped(r, dset, 2, dims, &rank);
    if (d < 0) return -1;
    if (rank != 2 || dims[0] == 0 || dims[1] == 0 || dims[0] * dims[1] > (1ull << 31)) {
        H5Dclose(d);
        return kc_fail("%s: dataset %s is not a non-empty 2-D array", r->path, dset);
    }
    void *buf = read_all(r, d, dset, memtype, dims[0] * dims[1] * elsize);
    if (!buf) return -1;
    *data = buf;
    *rows = (int)dims[0];
    *cols = (int)dims[1];
    return 0;
}

int cache_read_f32(const cache_reader *r, const char *dset, float **data, int *rows, int *cols)
{
    int rc;
    HDF5_LOCK
    rc = read_2d(r, dset, H5T_NATIVE_FLOAT, sizeof(float), (void **)data, rows, cols);
    if (rc < 0) return rc;
    size_t n = (size_t)*rows * (size_t)*cols;
    for (size_t i = 0; i < n; i++)
        if (!isfinite((*data)[i])) {
            free(*data);
            *data = NULL;
            return kc_fail("%s: dataset %s holds a non-finite value at row %zu", r->path, dset,
                           i / (size_t)*cols);
        }
    return 0;
}

int cache_read_u8(const cache_reader *r, const char *dset, uint8_t **data, int *rows, int *cols)
{
    int rc;
    HDF5_LOCK
    rc = read_2d(r, dset, H5T_NATIVE_UINT8, 1, (void **)data, rows, cols);
    return rc;
}

static int read_u8_stack(const cache_reader *r, const char *dset, uint8_t **data, int *n, int *rows, int *cols)
{
    hsize_t dims[3] = {0, 0, 0};
    int rank;
    hid_t d = open_shaped(r, dset, 3, dims, &rank);
    if (d < 0) return -1;
    if (rank != 3 || !dims[0] || !dims[1] || !dims[2] || dims[0] > 4096 || dims[1] * dims[2] > (1ull << 24)) {
        H5Dclose(d);
        return kc_fail("%s: dataset %s is not a (heads, grid_h, grid_w) stack of masks (rank %d)", r->path, dset, rank);
    }
    uint8_t *buf = read_all(r, d, dset, H5T_NATIVE_UINT8, dims[0] * dims[1] * dims[2]);
    if (!buf) return -1;
    *data = buf;
    *n = (int)dims[0];
    *rows = (int)dims[1];
    *cols = (int)dims[2];
    return 0;
}

int cache_read_u8_stack(const cache_reader *r, const char *dset, uint8_t **data, int *n, int *rows, int *cols)
{
    int rc;
    HDF5_LOCK
    rc = read_u8_stack(r, dset, data, n, rows, cols);
    return rc;
}

static int read_attr(const cache_reader *r, const char *dset, const char *name, hid_t memtype, void *vals,
                     int max)
{
    hid_t d = H5Oopen((hid_t)r->file, dset, H5P_DEFAULT);
    if (d < 0) return kc_fail("%s: missing dataset %s", r->path, dset);
    hid_t a = H5Aopen(d, name, H5P_DEFAULT);
    if (a < 0) {
        H5Oclose(d);
        return kc_fail("%s: dataset %s has no attribute %s", r->path, dset, name);
    }
    hid_t sp = H5Aget_space(a);
    hssize_t n = H5Sget_simple_extent_npoints(sp);
    H5Sclose(sp);
    int rc = (int)n;
    if (n < 1 || n > max) {
        rc = kc_fail("%s: attribute %s of %s has %lld values (at most %d expected)", r->path, name, dset,
                     (long long)n, max);
    } else if (H5Aread(a, memtype, vals) < 0) {
        rc = kc_fail("%s: cannot read attribute %s of %s", r->path, name, dset);
    }
    H5Aclose(a);
    H5Oclose(d);
    return rc;
}

int cache_read_attr_f32(const cache_reader *r, const char *dset, const char *name, float *vals, int max)
{
    int rc;
    HDF5_LOCK
    rc = read_attr(r, dset, name, H5T_NATIVE_FLOAT, vals, max);
    return rc;
}

int cache_read_attr_i32(const cache_reader *r, const char *dset, const char *name, int32_t *val)
{
    int rc;
    HDF5_LOCK
    rc = read_attr(r, dset, name, H5T_NATIVE_INT32, val, 1);
    return rc < 0 ? rc : 0;
}

int cache_has_attr(const cache_reader *r, const char *dset, const char *name)
{
    int rc = 0;
    HDF5_LOCK
    {
        hid_t d = H5Oopen((hid_t)r->file, dset, H5P_DEFAULT);
        if (d >= 0) {
            rc = H5Aexists(d, name) > 0;
            H5Oclose(d);
        }
    }
    return rc;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

typedef struct name_list {
    char **names;
    int n;
} name_list;

static herr_t collect_name(hid_t g, const char *name, const H5L_info_t *info, void *op)
{
    (void)g;
    (void)info;
    name_list *l = op;
    l->names = kc_realloc(l->names, (size_t)(l->n + 1) * sizeof *l->names);
    l->names[l->n++] = kc_strdup(name);
    return 0;
}

int cache_list(const cache_reader *r, const char *group, char ***names, int *n)
{
    int rc = 0;
    name_list l = {NULL, 0};
    HDF5_LOCK
    {
        hid_t g = H5Gopen2((hid_t)r->file, group, H5P_DEFAULT);
        if (g < 0) {
            rc = kc_fail("%s: missing group %s", r->path, group);
        } else {
            H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, NULL, collect_name, &l);
            H5Gclose(g);
        }
    }
    if (rc < 0) return rc;
    qsort(l.names, (size_t)l.n, sizeof *l.names, cmp_str);
    *names = l.names;
    *n = l.n;
    return 0;
}

static void close_impl(cache_reader *r)
{
    if (r->file > 0) H5Fclose((hid_t)r->file);
    r->file = -1;
    free(r->path);
    r->path = NULL;
    cache_index_free(&r->index);
    prov_free(&r->prov);
}

void cache_close(cache_reader *r)
{
    HDF5_LOCK
    {
        if (r->file > 0) H5Fclose((hid_t)r->file);
    }
    r->file = -1;
    free(r->path);
    r->path = NULL;
    cache_index_free(&r->index);
    prov_free(&r->prov);
}

/* ---- writing -------------------------------------------------------------------------------- */

struct cache_piece {
    cache_writer *w;
    int batch;
    char *tmp, *final;
    hid_t file;
    int failed;
    int slot; /* the cleanup slot of tmp (removed if the run ends early) */
};

static char *piece_path(const cache_writer *w, int batch)
{
    return kc_strfmt("%s/piece-%06d.h5", w->partial, batch);
}

/* Creates path (truncating), object timestamps off; retried without HDF5's lock where the
 * filesystem has none.  On failure the message names path and the cause. */
static hid_t create_file(const char *path)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
        H5Pset_obj_track_times(fcpl, 0);
        hid_t fapl = h5_fapl();
        hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, fcpl, fapl);
        h5_why w = h5_last_why();
        H5Pclose(fapl);
        H5Pclose(fcpl);
        if (f >= 0) return f;
        int r = h5_retry_without_lock(path, &w);
        if (r < 0) return -1;
        if (r == 0) {
            kc_fail("%s: cannot create (%s)", path, w.sys_errno > 0 ? strerror(w.sys_errno) : w.text[0] ? w.text : "HDF5 error");
            return -1;
        }
    }
    return -1;
}

static int fsync_path(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) return kc_fail("%s: cannot reopen to sync (%s)", path, strerror(errno));
    int rc = fsync(fd);
    close(fd);
    if (rc != 0) return kc_fail("%s: fsync failed (%s)", path, strerror(errno));
    return 0;
}

/* The names in OUT.partial/: "lock", "fingerprint", "products" (kc-extract's note), pieces
 * "piece-NNNNNN.h5", and temporary files ending in ".tmp". */
static int is_tmp_name(const char *name)
{
    size_t l = strlen(name);
    return l > 4 && !strcmp(name + l - 4, ".tmp");
}

/* Under the lock: removes files of the partial folder, never the lock: every one (CLEAR_ALL), the
 * temporary ones only (CLEAR_TMP; returns the finished pieces kept), or all but the fingerprint. */
enum { CLEAR_ALL, CLEAR_TMP, CLEAR_ALL_BUT_FINGERPRINT };

static int clear_partial(const cache_writer *w, int mode)
{
    DIR *d = opendir(w->partial);
    int have = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        const char *n = e->d_name;
        if (!strcmp(n, ".") || !strcmp(n, "..") || !strcmp(n, "lock") || !strncmp(n, "lock.", 5)) continue;
        if (mode == CLEAR_ALL_BUT_FINGERPRINT && !strcmp(n, "fingerprint")) continue;
        if (mode == CLEAR_TMP && !is_tmp_name(n)) {
            if (!strncmp(n, "piece-", 6)) have++;
            continue;
        }
        char *p = kc_strfmt("%s/%s", w->partial, n);
        unlink(p);
        free(p);
    }
    if (d) closedir(d);
    return have;
}

/* The finished pieces in the partial folder (piece-NNNNNN.h5, not a temporary one). */
static int count_pieces(const cache_writer *w)
{
    DIR *d = opendir(w->partial);
    int pieces = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (!strncmp(e->d_name, "piece-", 6) && !is_tmp_name(e->d_name)) pieces++;
    if (d) closedir(d);
    return pieces;
}

int cache_writer_open(cache_writer *w, const char *path, const char *format, const char *fingerprint,
                      int n_batches)
{
    return cache_writer_open_check(w, path, format, fingerprint, n_batches, NULL, NULL);
}

int cache_writer_open_check(cache_writer *w, const char *path, const char *format, const char *fingerprint,
                            int n_batches, int (*check)(void *ctx), void *ctx)
{
    memset(w, 0, sizeof *w);
    w->path = kc_strdup(path);
    w->partial = kc_strfmt("%s.partial", path);
    w->format = kc_strdup(format);
    snprintf(w->fingerprint, sizeof w->fingerprint, "%s", fingerprint);
    w->n_batches = n_batches;
    /* the output's folder must exist (created if needed) */
    char *dir = kc_strdup(path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = 0;
        if (kc_mkdirs(dir) < 0) {
            free(dir);
            return -1;
        }
    }
    free(dir);
    /* OUT.partial/ (an earlier run's, or made now), then its lock, before anything in it is read
     * or changed: a second run on the same output stops here, naming the first */
    int made = 0, rc = -1;
    char *lock_path = kc_strfmt("%s/lock", w->partial);
    for (int attempt = 0; attempt < 10 && rc < 0; attempt++) {
        made = mkdir(w->partial, 0755) == 0;
        if (!made && errno != EEXIST) {
            kc_fail("%s: cannot create folder (%s)", w->partial, strerror(errno));
            break;
        }
        rc = kc_lock_take(&w->lock, lock_path, path);
        /* a run that just finished removes the folder: make it again */
        if (rc < 0 && !kc_exists(w->partial)) continue;
        if (rc < 0) break;
    }
    free(lock_path);
    if (rc < 0) {
        if (made) rmdir(w->partial);
        return -1;
    }
    /* A folder that holds no finished piece has nothing to resume or to protect: whatever an
     * earlier run left in it (its fingerprint, a stage's note, temporary files), whichever command
     * that was, goes, and this run takes the folder over.  Only finished pieces of another run
     * are refused. */
    char *fp_path = kc_strfmt("%s/fingerprint", w->partial);
    int pieces = count_pieces(w);
    if (pieces == 0 && !made) {
        uint8_t *old = NULL;
        size_t n = 0;
        int other = kc_exists(fp_path) &&
                    (kc_read_file(fp_path, &old, &n) < 0 || n < 64 || memcmp(old, fingerprint, 64) != 0);
        free(old);
        clear_partial(w, CLEAR_ALL);
        if (other)
            kc_info("%s held no finished piece of the run that left it (other inputs, options or code version); "
                    "this run takes it over", w->partial);
    }
    if (check && check(ctx) < 0) {
        char msg[2048];
        snprintf(msg, sizeof msg, "%s", kc_error());
        kc_lock_release(w->lock);
        w->lock = NULL;
        if (made) rmdir(w->partial);
        free(fp_path);
        kc_set_error(msg);
        return -1;
    }
    if (pieces == 0) {
        rc = kc_write_file_atomic(fp_path, fingerprint, strlen(fingerprint));
    } else if (!kc_exists(fp_path)) {
        /* (a kill before the fingerprint was in place leaves no finished piece): a folder that
         * holds pieces but no fingerprint is not ours to guess about */
        rc = kc_fail("%s holds pieces but no fingerprint (not a folder keycut left); remove it to start over",
                     w->partial);
    } else {
        uint8_t *old = NULL;
        size_t n = 0;
        if (kc_read_file(fp_path, &old, &n) < 0 || n < 64 || memcmp(old, fingerprint, 64) != 0) {
            rc = kc_fail("%s holds pieces of a different run (other inputs, options or code version); "
                         "remove that folder to start over, or rerun the original command to finish it",
                         w->partial);
        }
        free(old);
        if (rc == 0) {
            /* drop pieces that were being written when the last run died */
            int have = clear_partial(w, CLEAR_TMP);
            if (have) kc_info("resuming: %d of %d batch%s already done in %s", have, n_batches, n_batches == 1 ? "" : "es", w->partial);
        }
    }
    free(fp_path);
    if (rc < 0) {
        char msg[2048];
        snprintf(msg, sizeof msg, "%s", kc_error());
        if (made) clear_partial(w, CLEAR_ALL);
        kc_lock_release(w->lock);
        w->lock = NULL;
        if (made) rmdir(w->partial);
        kc_set_error(msg);
        return -1;
    }
    char *hint = kc_strfmt("finished batches are kept in %s; rerun the same command to resume", w->partial);
    kc_on_interrupt(hint);
    free(hint);
    return 0;
}

int cache_writer_have(const cache_writer *w, int batch)
{
    char *p = piece_path(w, batch);
    int ex = kc_exists(p);
    free(p);
    return ex;
}

cache_piece *cache_piece_new(cache_writer *w, int batch)
{
    cache_piece *p = kc_calloc(1, sizeof *p);
    p->slot = -1;
    p->w = w;
    p->batch = batch;
    p->final = piece_path(w, batch);
    p->tmp = kc_strfmt("%s.tmp", p->final);
    HDF5_LOCK
    p->slot = kc_create_begin(p->tmp);
    if (p->slot == -2) {
        kc_fail("%s: not created (the run is being stopped)", p->tmp);
        p->file = -1;
        p->slot = -1;
    } else {
        p->file = create_file(p->tmp);
        kc_create_end();
    }
    if (p->file < 0) p->failed = 1;
    return p;
}

static int piece_put(cache_piece *p, const char *dset, hid_t type, const void *data, int rank, const int64_t *dims)
{
    if (p->failed) return -1;
    int rc;
    HDF5_LOCK
    rc = write_dataset(p->file, dset, type, data, rank, dims);
    if (rc < 0) {
        p->failed = 1;
        kc_fail_prefix("%s", p->tmp);
    }
    return rc;
}

int cache_piece_put_f32(cache_piece *p, const char *dset, const float *data, int rank, const int64_t *dims)
{
    return piece_put(p, dset, H5T_NATIVE_FLOAT, data, rank, dims);
}

int cache_piece_put_u8(cache_piece *p, const char *dset, const uint8_t *data, int rank, const int64_t *dims)
{
    return piece_put(p, dset, H5T_NATIVE_UINT8, data, rank, dims);
}

static int piece_attr(cache_piece *p, const char *dset, const char *name, hid_t type, const void *vals, int n)
{
    if (p->failed) return -1;
    int rc = 0;
    HDF5_LOCK
    {
        hid_t o = H5Oopen(p->file, dset, H5P_DEFAULT);
        if (o < 0) {
            rc = kc_fail("%s: no dataset %s to attach %s to", p->tmp, dset, name);
        } else {
            rc = write_attr(o, name, type, vals, n);
            H5Oclose(o);
            if (rc < 0) kc_fail_prefix("%s", p->tmp);
        }
    }
    if (rc < 0) p->failed = 1;
    return rc;
}

int cache_piece_attr_f32(cache_piece *p, const char *dset, const char *name, const float *vals, int n)
{
    return piece_attr(p, dset, name, H5T_NATIVE_FLOAT, vals, n);
}

int cache_piece_attr_i32(cache_piece *p, const char *dset, const char *name, int32_t val)
{
    return piece_attr(p, dset, name, H5T_NATIVE_INT32, &val, -1);
}

int cache_piece_attr_sha(cache_piece *p, const char *dset, const uint8_t sha[32])
{
    int32_t v[8];
    memcpy(v, sha, 32);
    if (piece_attr(p, dset, CACHE_IMAGE_SHA, H5T_NATIVE_INT32, v, 8) < 0) return -1;
    char hex[65];
    for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", sha[i]);
    const char *value = hex;
    hid_t t = vlen_str_type();
    int rc = piece_attr(p, dset, CACHE_IMAGE_SHA_HEX, t, &value, -1);
    H5Tclose(t);
    return rc;
}

int cache_read_image_sha(const cache_reader *r, const char *src_dset, uint8_t sha[32])
{
    if (!cache_has_attr(r, src_dset, CACHE_IMAGE_SHA)) return 0;
    int32_t v[8];
    int rc;
    HDF5_LOCK
    rc = read_attr(r, src_dset, CACHE_IMAGE_SHA, H5T_NATIVE_INT32, v, 8);
    if (rc < 0) return -1;
    if (rc != 8) return kc_fail("%s: attribute %s of %s has %d values, not 8", r->path, CACHE_IMAGE_SHA, src_dset, rc);
    memcpy(sha, v, 32);
    return 1;
}

int cache_piece_copy_image_sha(cache_piece *p, const char *dset, const cache_reader *r, const char *src_dset)
{
    uint8_t sha[32];
    int h = cache_read_image_sha(r, src_dset, sha);
    if (h <= 0) return h;
    return cache_piece_attr_sha(p, dset, sha);
}

int cache_piece_put_mask(cache_piece *p, const char *dset, const cache_mask *m)
{
    const int64_t dims[2] = {m->rows, m->cols};
    KC_TRY(cache_piece_put_u8(p, dset, m->labels, 2, dims));
    KC_TRY(cache_piece_attr_f32(p, dset, "lambda2", m->lambda2, m->n_rounds));
    KC_TRY(cache_piece_attr_f32(p, dset, "eigengap", m->eigengap, m->n_rounds));
    KC_TRY(cache_piece_attr_i32(p, dset, "degenerate", m->degenerate));
    if (!m->has_knife) return 0;
    KC_TRY(cache_piece_attr_i32(p, dset, "knife_edge", m->knife_edge));
    return cache_piece_attr_f32(p, dset, "knife_margin", &m->knife_margin, 1);
}

static void piece_free(cache_piece *p)
{
    kc_cleanup_drop(p->slot);
    free(p->tmp);
    free(p->final);
    free(p);
}

void cache_piece_abort(cache_piece *p)
{
    HDF5_LOCK
    {
        if (p->file >= 0) H5Fclose(p->file);
    }
    unlink(p->tmp);
    piece_free(p);
}

int cache_piece_commit(cache_piece *p)
{
    int rc = p->failed ? -1 : 0;
    HDF5_LOCK
    {
        if (p->file >= 0) {
            if (rc == 0 && H5Fflush(p->file, H5F_SCOPE_GLOBAL) < 0) rc = kc_fail("%s: cannot write (%s)", p->tmp, h5_cause());
            if (H5Fclose(p->file) < 0 && rc == 0) rc = kc_fail("%s: cannot write (%s)", p->tmp, h5_cause());
            p->file = -1;
        }
    }
    if (rc == 0) rc = fsync_path(p->tmp);
    if (rc == 0 && rename(p->tmp, p->final) != 0)
        rc = kc_fail("%s: cannot rename into place (%s)", p->final, strerror(errno));
    if (rc < 0) unlink(p->tmp);
    piece_free(p);
    return rc;
}

/* Forward: copies every float/int attribute of one object to another (used by the merge below). */
typedef struct attr_copy attr_copy;
static herr_t copy_one_attr(hid_t loc, const char *name, const H5A_info_t *info, void *op);

int cache_piece_copy(cache_piece *p, const cache_reader *r, const char *dset)
{
    if (p->failed) return -1;
    int rc = 0;
    HDF5_LOCK
    rc = piece_copy_impl(p, r, dset);
    if (rc < 0) p->failed = 1;
    return rc;
}

/* Merge ---------------------------------------------------------------------------------------- */

typedef struct merge_ctx {
    hid_t out;
    const char *out_path;
    const char *piece;
    kc_sha256 *hash;
    int rc;
} merge_ctx;

struct attr_copy {
    hid_t dst;
    kc_sha256 *hash;
    int rc;
};

static herr_t copy_one_attr(hid_t loc, const char *name, const H5A_info_t *info, void *op)
{
    (void)info;
    attr_copy *ac = op;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    hid_t ft = H5Aget_type(a), sp = H5Aget_space(a);
    hssize_t n = H5Sget_simple_extent_npoints(sp);
    int scalar = H5Sget_simple_extent_type(sp) == H5S_SCALAR;
    H5T_class_t cls = H5Tget_class(ft);
    hid_t mt = cls == H5T_FLOAT ? H5T_NATIVE_FLOAT : H5T_NATIVE_INT32;
    if (cls == H5T_STRING && scalar) { /* image_sha256_hex: copied, not hashed (it repeats image_sha256) */
        char *s = read_str_attr(a, ft);
        if (!s) ac->rc = kc_fail("cannot read attribute %s", name);
        else if (write_str_attr(ac->dst, name, s) < 0) ac->rc = -1;
        free(s);
    } else if ((cls != H5T_FLOAT && cls != H5T_INTEGER) || n < 1 || n > 1024) {
        ac->rc = kc_fail("unsupported attribute %s in a piece", name);
    } else {
        int32_t buf[1024];
        if (H5Aread(a, mt, buf) < 0) {
            ac->rc = kc_fail("cannot read attribute %s", name);
        } else if (write_attr(ac->dst, name, mt, buf, scalar ? -1 : (int)n) < 0) {
            ac->rc = -1; /* write_attr says why */
        } else {
            kc_sha256_update(ac->hash, name, strlen(name) + 1);
            kc_sha256_update(ac->hash, buf, (size_t)n * 4);
        }
    }
    H5Sclose(sp);
    H5Tclose(ft);
    H5Aclose(a);
    return ac->rc < 0 ? -1 : 0;
}

static herr_t copy_object(hid_t src, const char *name, const H5O_info_t *info, void *op)
{
    merge_ctx *m = op;
    if (info->type != H5O_TYPE_DATASET) return 0;
    char *path = kc_strfmt("/%s", name);
    hid_t d = H5Dopen2(src, name, H5P_DEFAULT);
    hid_t ft = H5Dget_type(d), sp = H5Dget_space(d);
    int rank = H5Sget_simple_extent_ndims(sp);
    hsize_t dims[8];
    int64_t dd[8];
    H5Sget_simple_extent_dims(sp, dims, NULL);
    size_t count = 1;
    for (int i = 0; i < rank; i++) {
        count *= dims[i];
        dd[i] = (int64_t)dims[i];
    }
    hid_t mt = H5Tget_class(ft) == H5T_FLOAT ? H5T_NATIVE_FLOAT : H5T_NATIVE_UINT8;
    size_t el = mt == H5T_NATIVE_FLOAT ? 4 : 1;
    void *buf = kc_malloc(count * el);
    int rc = 0;
    if (H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
        rc = kc_fail("%s: cannot read %s", m->piece, path);
    else if (write_dataset(m->out, path, mt, buf, rank, dd) < 0)
        rc = kc_fail_prefix("%s", m->out_path);
    if (rc == 0) {
        kc_sha256_update(m->hash, path, strlen(path) + 1);
        kc_sha256_update(m->hash, dd, (size_t)rank * sizeof(int64_t));
        kc_sha256_update(m->hash, buf, count * el);
        hid_t od = H5Dopen2(m->out, path, H5P_DEFAULT);
        attr_copy ac = {od, m->hash, 0};
        hsize_t idx = 0;
        H5Aiterate2(d, H5_INDEX_NAME, H5_ITER_INC, &idx, copy_one_attr, &ac);
        H5Dclose(od);
        if (ac.rc < 0) rc = kc_fail_prefix("%s", m->out_path);
    }
    free(buf);
    free(path);
    H5Sclose(sp);
    H5Tclose(ft);
    H5Dclose(d);
    if (rc < 0) m->rc = -1;
    return rc < 0 ? -1 : 0;
}

static int finish_impl(cache_writer *w, const cache_index *ix, const cache_prov *prov)
{
    char *tmp = kc_strfmt("%s.tmp", w->path);
    int tmp_slot = kc_create_begin(tmp);
    hid_t out = tmp_slot == -2 ? kc_fail("%s: not created (the run is being stopped)", tmp) : create_file(tmp);
    if (tmp_slot != -2) kc_create_end();
    if (out < 0) {
        kc_cleanup_drop(tmp_slot);
        free(tmp);
        return -1;
    }
    kc_sha256 hash;
    kc_sha256_init(&hash);
    int rc = 0;
    for (int b = 0; b < w->n_batches && rc == 0; b++) {
        char *pp = piece_path(w, b);
        h5_why why;
        hid_t pf = h5_open_ro(pp, &why);
        if (pf < 0 && why.lock_failed == 2) {
            rc = -1;
        } else if (pf < 0 && why.sys_errno > 0 && why.sys_errno != ENOENT) {
            rc = kc_fail("%s: cannot open (%s)", pp, strerror(why.sys_errno));
        } else if (pf < 0) {
            rc = kc_fail("%s: missing or damaged piece (remove it and rerun)", pp);
        } else {
            merge_ctx m = {out, tmp, pp, &hash, 0};
            if (H5Ovisit(pf, H5_INDEX_NAME, H5_ITER_INC, copy_object, &m) < 0 || m.rc < 0) {
                if (m.rc == 0) kc_fail("%s: cannot read piece", pp);
                rc = -1;
            }
            H5Fclose(pf);
        }
        free(pp);
    }
    if (rc == 0) {
        /* index */
        hid_t st = vlen_str_type();
        int64_t n1[1] = {ix->n}, n2[2] = {ix->n, 2};
        rc = write_dataset(out, "/index/ids", st, ix->ids, 1, n1);
        H5Tclose(st);
        if (rc == 0) rc = write_dataset(out, "/index/grid", H5T_NATIVE_INT32, ix->grid, 2, n2);
        if (rc == 0) rc = write_dataset(out, "/index/size", H5T_NATIVE_INT32, ix->size, 2, n2);
        int64_t n4[2] = {ix->n, 4};
        if (rc == 0 && ix->resized && ix->box) { /* not hashed: they follow from size, policy and patch */
            rc = write_dataset(out, "/index/resized", H5T_NATIVE_INT32, ix->resized, 2, n2);
            if (rc == 0) rc = write_dataset(out, "/index/box", H5T_NATIVE_INT32, ix->box, 2, n4);
        }
        if (rc < 0) kc_fail_prefix("%s", tmp);
        for (int i = 0; i < ix->n; i++) kc_sha256_update(&hash, ix->ids[i], strlen(ix->ids[i]) + 1);
        kc_sha256_update(&hash, ix->grid, (size_t)ix->n * 8);
        kc_sha256_update(&hash, ix->size, (size_t)ix->n * 8);
    }
    if (rc == 0) {
        char content[65], created[32];
        kc_sha256_hex(&hash, content);
        kc_utc_created(created);
        hid_t root = H5Gopen2(out, "/", H5P_DEFAULT);
        rc = write_str_attr(root, "format", w->format);
        if (rc == 0) rc = write_root_attr(root, "format_version", CACHE_FORMAT_VERSION);
        if (rc == 0) rc = write_str_attr(root, "code_version", KC_VERSION);
        for (int i = 0; i < prov->n && rc == 0; i++) {
            const char *k = prov->key[i];
            if (!strcmp(k, "format") || !strcmp(k, "format_version") || !strcmp(k, "code_version") ||
                !strcmp(k, "created") || !strcmp(k, "content_hash"))
                continue;
            rc = write_root_attr(root, k, prov->value[i]);
        }
        if (rc == 0) rc = write_str_attr(root, "content_hash", content);
        if (rc == 0) rc = write_str_attr(root, "created", created);
        if (rc < 0) kc_fail_prefix("%s", tmp);
        H5Gclose(root);
    }
    if (H5Fclose(out) < 0 && rc == 0) rc = kc_fail("%s: cannot write (%s)", tmp, h5_cause());
    if (rc == 0) rc = fsync_path(tmp);
    if (rc == 0 && rename(tmp, w->path) != 0) rc = kc_fail("%s: cannot rename into place (%s)", w->path, strerror(errno));
    if (rc < 0) {
        char msg[2048];
        snprintf(msg, sizeof msg, "%s", kc_error());
        unlink(tmp);
        kc_set_error(msg);
    }
    kc_cleanup_drop(tmp_slot);
    free(tmp);
    return rc;
}

/* After the output is in place: the pieces and notes go, then the fingerprint (so that a kill in
 * between never leaves pieces without it), then the lock, then the folder. */
static void remove_partial(cache_writer *w)
{
    clear_partial(w, CLEAR_ALL_BUT_FINGERPRINT);
    char *fp = kc_strfmt("%s/fingerprint", w->partial);
    unlink(fp);
    free(fp);
    kc_lock_release(w->lock);
    w->lock = NULL;
    rmdir(w->partial);
}

int cache_writer_finish(cache_writer *w, const cache_index *ix, const cache_prov *prov)
{
    int rc;
    HDF5_LOCK
    rc = finish_impl(w, ix, prov);
    if (rc == 0) {
        kc_fsync_dir_of(w->path); /* the rename durable before the pieces go */
        remove_partial(w);
    }
    return rc;
}

void cache_writer_free(cache_writer *w)
{
    kc_lock_release(w->lock); /* (a writer given up before finish) */
    free(w->path);
    free(w->partial);
    free(w->format);
    memset(w, 0, sizeof *w);
}

/* cache_piece_copy: the dataset's values (float32 or uint8, as the merge reads them) and its
 * attributes, into the piece.  Called under the HDF5 lock. */
static int piece_copy_impl(cache_piece *p, const cache_reader *r, const char *dset)
{
    hid_t d = H5Dopen2((hid_t)r->file, dset, H5P_DEFAULT);
    if (d < 0) return kc_fail("%s: missing dataset %s", r->path, dset);
    hid_t ft = H5Dget_type(d), sp = H5Dget_space(d);
    int rank = H5Sget_simple_extent_ndims(sp);
    hsize_t dims[8];
    int64_t dd[8];
    int rc = 0;
    size_t count = 1;
    if (rank < 1 || rank > 8) {
        rc = kc_fail("%s: dataset %s has rank %d", r->path, dset, rank);
    } else {
        H5Sget_simple_extent_dims(sp, dims, NULL);
        for (int i = 0; i < rank; i++) {
            count *= dims[i];
            dd[i] = (int64_t)dims[i];
        }
    }
    H5T_class_t cls = H5Tget_class(ft);
    if (rc == 0 && cls != H5T_FLOAT && cls != H5T_INTEGER)
        rc = kc_fail("%s: dataset %s is neither float nor integer", r->path, dset);
    if (rc == 0) {
        hid_t mt = cls == H5T_FLOAT ? H5T_NATIVE_FLOAT : H5T_NATIVE_UINT8;
        void *buf = kc_malloc(count * (cls == H5T_FLOAT ? 4 : 1));
        if (H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
            rc = kc_fail("%s: cannot read dataset %s (damaged file?)", r->path, dset);
        else if (write_dataset(p->file, dset, mt, buf, rank, dd) < 0)
            rc = kc_fail_prefix("%s", p->tmp);
        free(buf);
    }
    if (rc == 0) {
        kc_sha256 dummy;
        kc_sha256_init(&dummy);
        hid_t od = H5Dopen2(p->file, dset, H5P_DEFAULT);
        attr_copy ac = {od, &dummy, 0};
        hsize_t idx = 0;
        if (H5Aiterate2(d, H5_INDEX_NAME, H5_ITER_INC, &idx, copy_one_attr, &ac) < 0 || ac.rc < 0)
            rc = kc_fail_prefix("%s: %s", p->tmp, dset);
        H5Dclose(od);
    }
    H5Sclose(sp);
    H5Tclose(ft);
    H5Dclose(d);
    return rc;
}

/* Content hash recomputed from a cache ---------------------------------------------------------- */

typedef struct hash_item {
    char *name; /* as H5Ovisit gives it: "features/keys/<id>" */
    int pos;    /* the image's position in the index */
    int seq;    /* visit order */
} hash_item;

typedef struct hash_scan {
    const cache_reader *r;
    char **sorted_ids; /* the index ids, sorted, for bsearch */
    int *sorted_pos;
    hash_item *items;
    int n, cap, rc;
} hash_scan;

static int cmp_str_ptr(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static herr_t collect_dataset(hid_t loc, const char *name, const H5O_info_t *info, void *op)
{
    (void)loc;
    hash_scan *s = op;
    if (info->type != H5O_TYPE_DATASET || !strncmp(name, "index/", 6)) return 0;
    /* /<top>/<group>/<id>: the id is what follows the second '/' (DAVIS ids contain '/') */
    const char *id = strchr(name, '/');
    if (id) id = strchr(id + 1, '/');
    char **hit = id ? bsearch(&(const char *){id + 1}, s->sorted_ids, (size_t)s->r->index.n, sizeof *s->sorted_ids,
                              cmp_str_ptr)
                    : NULL;
    if (!hit) {
        s->rc = kc_fail("%s: dataset /%s belongs to no image of the index", s->r->path, name);
        return -1;
    }
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 256;
        s->items = kc_realloc(s->items, (size_t)s->cap * sizeof *s->items);
    }
    s->items[s->n] = (hash_item){kc_strdup(name), s->sorted_pos[hit - s->sorted_ids], s->n};
    s->n++;
    return 0;
}

static int g_hash_batch, g_hash_first; /* for cmp_hash_item (qsort has no context argument) */
static int cmp_hash_item(const void *a, const void *b)
{
    const hash_item *x = a, *y = b;
    int bx = (x->pos - g_hash_first) / g_hash_batch, by = (y->pos - g_hash_first) / g_hash_batch;
    if (bx != by) return bx < by ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

typedef struct hash_attr {
    const cache_reader *r;
    const char *dset;
    kc_sha256 *hash;
    int rc;
} hash_attr;

static herr_t hash_one_attr(hid_t loc, const char *name, const H5A_info_t *info, void *op)
{
    (void)info;
    hash_attr *ha = op;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    hid_t at = H5Aget_type(a), as = H5Aget_space(a);
    hssize_t n = H5Sget_simple_extent_npoints(as);
    H5T_class_t cls = H5Tget_class(at);
    int32_t vals[1024];
    if (cls == H5T_STRING) {
        /* not hashed (see copy_one_attr) */
    } else if ((cls != H5T_FLOAT && cls != H5T_INTEGER) || n < 1 || n > 1024 ||
        H5Aread(a, cls == H5T_FLOAT ? H5T_NATIVE_FLOAT : H5T_NATIVE_INT32, vals) < 0) {
        ha->rc = kc_fail("%s: cannot read attribute %s of /%s", ha->r->path, name, ha->dset);
    } else {
        kc_sha256_update(ha->hash, name, strlen(name) + 1);
        kc_sha256_update(ha->hash, vals, (size_t)n * 4);
    }
    H5Sclose(as);
    H5Tclose(at);
    H5Aclose(a);
    return ha->rc < 0 ? -1 : 0;
}

/* Hashes one dataset as finish_impl does: "/name" and its NUL, the shape (int64), the values, then
 * each attribute (name order) as its name, NUL and values. */
static int hash_dataset(const cache_reader *r, const char *name, kc_sha256 *hash)
{
    hid_t d = H5Dopen2((hid_t)r->file, name, H5P_DEFAULT);
    if (d < 0) return kc_fail("%s: cannot open dataset /%s", r->path, name);
    hid_t ft = H5Dget_type(d), sp = H5Dget_space(d);
    int rank = H5Sget_simple_extent_ndims(sp), rc = 0;
    hsize_t dims[8];
    int64_t dd[8];
    size_t count = 1;
    if (rank < 0 || rank > 8) {
        rc = kc_fail("%s: dataset /%s has an unsupported shape", r->path, name);
    } else {
        H5Sget_simple_extent_dims(sp, dims, NULL);
        for (int i = 0; i < rank; i++) {
            count *= dims[i];
            dd[i] = (int64_t)dims[i];
        }
    }
    if (rc == 0) {
        hid_t mt = H5Tget_class(ft) == H5T_FLOAT ? H5T_NATIVE_FLOAT : H5T_NATIVE_UINT8;
        size_t el = mt == H5T_NATIVE_FLOAT ? 4 : 1;
        void *buf = kc_malloc(count * el + 1);
        if (H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
            rc = kc_fail("%s: cannot read dataset /%s", r->path, name);
        } else {
            char *path = kc_strfmt("/%s", name);
            kc_sha256_update(hash, path, strlen(path) + 1);
            kc_sha256_update(hash, dd, (size_t)rank * sizeof(int64_t));
            kc_sha256_update(hash, buf, count * el);
            free(path);
            hash_attr ha = {r, name, hash, 0};
            hsize_t idx = 0;
            if (H5Aiterate2(d, H5_INDEX_NAME, H5_ITER_INC, &idx, hash_one_attr, &ha) < 0 || ha.rc < 0)
                rc = ha.rc < 0 ? -1 : kc_fail("%s: cannot read the attributes of /%s", r->path, name);
        }
        free(buf);
    }
    H5Sclose(sp);
    H5Tclose(ft);
    H5Dclose(d);
    return rc;
}

static int hash_images_impl(const cache_reader *r, int first, int count, int batch, char hex[65])
{
    const cache_index *ix = &r->index;
    if (first < 0 || count < 0 || first + count > ix->n || batch < 1)
        return kc_fail("%s: images %d..%d in pieces of %d: not a range of its %d images", r->path, first + 1,
                       first + count, batch, ix->n);
    hash_scan s = {r, NULL, NULL, NULL, 0, 0, 0};
    int n = ix->n > 0 ? ix->n : 1;
    s.sorted_ids = kc_malloc((size_t)n * sizeof *s.sorted_ids);
    s.sorted_pos = kc_malloc((size_t)n * sizeof *s.sorted_pos);
    memcpy(s.sorted_ids, ix->ids, (size_t)ix->n * sizeof *s.sorted_ids);
    qsort(s.sorted_ids, (size_t)ix->n, sizeof *s.sorted_ids, cmp_str_ptr);
    for (int i = 0; i < ix->n; i++) {
        /* ids are unique in an index (cache_open checks it), so the position is that id's */
        char **hit = bsearch(&ix->ids[i], s.sorted_ids, (size_t)ix->n, sizeof *s.sorted_ids, cmp_str_ptr);
        s.sorted_pos[hit - s.sorted_ids] = i;
    }
    int rc = 0;
    if (H5Ovisit((hid_t)r->file, H5_INDEX_NAME, H5_ITER_INC, collect_dataset, &s) < 0 || s.rc < 0)
        rc = s.rc < 0 ? -1 : kc_fail("%s: cannot list its datasets", r->path);
    kc_sha256 hash;
    kc_sha256_init(&hash);
    if (rc == 0) {
        int m = 0;
        for (int i = 0; i < s.n; i++)
            if (s.items[i].pos >= first && s.items[i].pos < first + count) s.items[m++] = s.items[i];
            else free(s.items[i].name);
        s.n = m;
        g_hash_batch = batch;
        g_hash_first = first;
        qsort(s.items, (size_t)s.n, sizeof *s.items, cmp_hash_item);
        for (int i = 0; i < s.n && rc == 0; i++) rc = hash_dataset(r, s.items[i].name, &hash);
    }
    if (rc == 0) {
        for (int i = first; i < first + count; i++) kc_sha256_update(&hash, ix->ids[i], strlen(ix->ids[i]) + 1);
        kc_sha256_update(&hash, ix->grid + 2 * first, (size_t)count * 8);
        kc_sha256_update(&hash, ix->size + 2 * first, (size_t)count * 8);
        kc_sha256_hex(&hash, hex);
    }
    for (int i = 0; i < s.n; i++) free(s.items[i].name);
    free(s.items);
    free(s.sorted_ids);
    free(s.sorted_pos);
    return rc;
}

int cache_hash_images(const cache_reader *r, int first, int count, int batch, char hex[65])
{
    int rc;
    HDF5_LOCK
    rc = hash_images_impl(r, first, count, batch, hex);
    return rc;
}
