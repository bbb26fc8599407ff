/* tests/test_weights.c — weights readers: .pth (zip + pickle), safetensors, JSON, name mapping.
 *
 * Good files in tests/data/weights (written by tests/ref/make_checkpoints.py with torch) must load
 * with exactly torch's values: every tensor's float32 bytes hash to the sha256 torch computed
 * (tolerance 0: bit-identical), names and order as expected, skip lists and config values too.
 * Bad files must fail with one message naming the file and the problem.  Mutated and truncated
 * files must never crash (run under ASan in the SANITIZE build).  With Debian's torch available,
 * a real-size ViT-S/16 checkpoint is written under $BUILD/test-tmp and loaded against torch's
 * digests, and the load time is printed.
 */
#include <stdint.h>
#include <time.h>

#include "pipeline/json.h"
#include "pipeline/kc.h"
#include "pipeline/weights/pth.h"
#include "pipeline/weights/safetensors.h"
#include "pipeline/sha256.h"
#include "pipeline/weights/weights.h"
#include "tests/test.h"

#define DIR "tests/data/weights/"

/* Compares a loaded file with its .expect lines.  Returns the number of mismatches. */
static int check_expect(const kc_weights *w, const char *expect_path)
{
    FILE *f = fopen(expect_path, "r");
    CHECK(f != NULL, "cannot open %s", expect_path);
    if (!f) return 1;
    char line[4096];
    int ti = 0, si = 0, bad = 0;
    while (fgets(line, sizeof line, f)) {
        char name[512], hash[65];
        if (!strncmp(line, "tensor ", 7)) {
            int ndim, pos;
            if (sscanf(line + 7, "%511s %d%n", name, &ndim, &pos) != 2) continue;
            int64_t shape[8] = {0};
            char *p = line + 7 + pos;
            for (int d = 0; d < ndim && d < 8; d++) shape[d] = strtoll(p, &p, 10);
            double sum, first, last;
            if (sscanf(p, " %64s %lf %lf %lf", hash, &sum, &first, &last) != 4) continue;
            const kc_tensor *t = ti < w->n ? &w->t[ti] : NULL;
            ti++;
            if (!t) {
                CHECK(0, "%s: tensor %s missing (only %d loaded)", w->path, name, w->n);
                bad++;
                continue;
            }
            int ok_shape = t->ndim == ndim && !memcmp(t->shape, shape, (size_t)ndim * sizeof *shape);
            CHECK(!strcmp(t->name, name), "%s: tensor %d is %s, expected %s", w->path, ti - 1, t->name, name);
            CHECK(ok_shape, "%s: %s shape differs (ndim %d vs %d)", w->path, name, t->ndim, ndim);
            if (strcmp(t->name, name) || !ok_shape) {
                bad++;
                continue;
            }
            int64_t n = 1;
            for (int d = 0; d < ndim; d++) n *= shape[d];
            char got[65];
            kc_sha256_buf_hex(t->data, (size_t)n * sizeof(float), got);
            double s = 0;
            for (int64_t k = 0; k < n; k++) s += t->data[k];
            /* tolerance 0: the bytes must be torch's; on a mismatch show sum / first / last */
            CHECK(!strcmp(got, hash), "%s: %s values differ from torch's: sum %.9g vs %.9g, first %.9g vs %.9g, last %.9g vs %.9g",
                  w->path, name, s, sum, n ? t->data[0] : 0.0, first, n ? t->data[n - 1] : 0.0, last);
            bad += strcmp(got, hash) != 0;
        } else if (!strncmp(line, "skip ", 5)) {
            sscanf(line + 5, "%511s", name);
            CHECK(si < w->n_skipped && !strcmp(w->skipped[si], name), "%s: skipped[%d] is %s, expected %s", w->path, si,
                  si < w->n_skipped ? w->skipped[si] : "(none)", name);
            si++;
        } else if (!strncmp(line, "family ", 7)) {
            sscanf(line + 7, "%511s", name);
            CHECK(!strcmp(w->family, name), "%s: family \"%s\", expected \"%s\"", w->path, w->family, name);
        } else {
            double v;
            if (sscanf(line, "hf %lf", &v) == 1) CHECK(w->hf_names == (int)v, "%s: hf_names %d", w->path, w->hf_names);
            if (sscanf(line, "theta %lf", &v) == 1) CHECK(w->config_rope_theta == v, "%s: config_rope_theta %g, expected %g (tol 0)", w->path, w->config_rope_theta, v);
            if (sscanf(line, "registers %lf", &v) == 1) CHECK(w->config_registers == (int)v, "%s: config_registers %d, expected %g", w->path, w->config_registers, v);
            if (sscanf(line, "pconf %lf", &v) == 1) CHECK(w->periods_from_config == (int)v, "%s: periods_from_config %d, expected %g", w->path, w->periods_from_config, v);
            if (sscanf(line, "heads %lf", &v) == 1) CHECK(w->config_heads == (int)v, "%s: config_heads %d, expected %g", w->path, w->config_heads, v);
            if (sscanf(line, "eps %lf", &v) == 1) CHECK_CLOSE(w->config_ln_eps, v, 1e-6 * v, "config_ln_eps");
        }
    }
    fclose(f);
    CHECK(ti == w->n, "%s: %d tensors loaded, %d expected", w->path, w->n, ti);
    CHECK(si == w->n_skipped, "%s: %d skipped, %d expected", w->path, w->n_skipped, si);
    return bad;
}

/* family: checked here for the files whose .expect predates the family line (else NULL). */
static void good(const char *file, const char *key, const char *expect, const char *family)
{
    kc_weights w;
    char path[512], ex[512];
    snprintf(path, sizeof path, DIR "%s", file);
    snprintf(ex, sizeof ex, DIR "%s.expect", expect ? expect : file);
    int rc = weights_load(&w, path, key);
    CHECK(rc == 0, "%s should load: %s", path, kc_error());
    if (rc < 0) return;
    char hex[65];
    kc_sha256_file(path, hex);
    CHECK(!strcmp(hex, w.sha256), "%s: sha256 %s vs %s", path, w.sha256, hex);
    CHECK(!strcmp(w.format, strstr(file, ".pth") ? "pth" : "safetensors"), "%s: format %s", path, w.format);
    if (family) CHECK(!strcmp(w.family, family), "%s: family \"%s\", expected \"%s\"", path, w.family, family);
    int bad = check_expect(&w, ex);
    printf("%-40s %-13s %3d tensors, %2d skipped, %d differing from torch\n", file, w.family, w.n, w.n_skipped, bad);
    weights_free(&w);
}

static void bad(const char *file, const char *key, const char *what)
{
    kc_weights w;
    char path[512];
    snprintf(path, sizeof path, DIR "%s", file);
    int rc = weights_load(&w, path, key);
    CHECK(rc < 0, "%s should fail", path);
    if (rc == 0) {
        weights_free(&w);
        return;
    }
    const char *msg = kc_error();
    CHECK(strstr(msg, path) && strstr(msg, what) && !strchr(msg, '\n'), "%s: message \"%s\" should name the file and say \"%s\"", path, msg, what);
    printf("bad %-24s -> %s\n", file, msg);
}

/* Two loads must hold identical tensors (worst |difference| printed on failure). */
static void same_tensors(const char *a_path, const char *b_path)
{
    kc_weights a, b;
    if (weights_load(&a, a_path, NULL) < 0 || weights_load(&b, b_path, NULL) < 0) {
        CHECK(0, "load for comparison: %s", kc_error());
        return;
    }
    CHECK(a.n == b.n, "%s has %d tensors, %s %d", a_path, a.n, b_path, b.n);
    for (int i = 0; i < a.n; i++) {
        const kc_tensor *x = &a.t[i], *y = weights_find(&b, x->name);
        CHECK(y != NULL, "%s lacks %s", b_path, x->name);
        if (!y) continue;
        int64_t n = 1;
        for (int d = 0; d < x->ndim; d++) n *= x->shape[d];
        int64_t m = 1;
        for (int d = 0; d < y->ndim; d++) m *= y->shape[d];
        CHECK(n == m && x->ndim == y->ndim, "%s: shapes differ", x->name);
        if (n != m) continue;
        double worst = 0;
        for (int64_t k = 0; k < n; k++) worst = fmax(worst, fabs((double)x->data[k] - y->data[k]));
        CHECK(worst == 0, "%s: %s vs %s worst |diff| %.9g (tol 0)", x->name, a_path, b_path, worst);
    }
    weights_free(&a);
    weights_free(&b);
}

static float naive_half(uint16_t h)
{
    int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
    return (float)(s ? -v : v);
}

static void test_half(void)
{
    int worst = 0;
    for (unsigned h = 0; h < 65536; h++) {
        float a = kc_half_to_float((uint16_t)h), b = naive_half((uint16_t)h);
        if (!(a == b || (isnan(a) && isnan(b))) || signbit(a) != signbit(b)) worst++;
    }
    CHECK(worst == 0, "float16 -> float32: %d of 65536 values differ from ldexp", worst);
    CHECK(kc_bf16_to_float(0x3F80) == 1.0f && kc_bf16_to_float(0xC049) == -3.140625f, "bfloat16 conversion");
}

static void test_json(void)
{
    json_value r;
    const char *doc = " {\"a\": [1, -2.5e3, true, false, null, \"x\\u00e9\\ud83d\\ude00\\n\"], \"big\": 9007199254740993,"
                      " \"o\": {}, \"e\": []} ";
    int rc = json_parse(&r, doc, strlen(doc), "doc");
    CHECK(rc == 0, "json parse: %s", kc_error());
    if (rc == 0) {
        const json_value *a = json_get(&r, "a");
        double x;
        int64_t i;
        CHECK(json_count(a) == 6, "array count %d", json_count(a));
        CHECK(json_get_number(json_item(a, 1), &x) == 0 && x == -2500.0, "number -2.5e3");
        CHECK(json_get_int(json_item(a, 1), &i) < 0, "-2.5e3 is not an integer literal");
        CHECK(json_item(a, 2)->type == JSON_BOOL && json_item(a, 2)->boolean == 1, "true");
        CHECK(json_item(a, 4)->type == JSON_NULL, "null");
        CHECK(json_string(json_item(a, 5)) && !strcmp(json_string(json_item(a, 5)), "x\xc3\xa9\xf0\x9f\x98\x80\n"), "escapes");
        CHECK(json_get_int(json_get(&r, "big"), &i) == 0 && i == 9007199254740993LL, "exact int64 beyond 2^53");
        CHECK(json_count(json_get(&r, "o")) == 0 && json_get(&r, "o")->type == JSON_OBJECT, "empty object");
        CHECK(json_get(&r, "missing") == NULL && json_key(&r, 1) && !strcmp(json_key(&r, 1), "big"), "get / key");
        json_free(&r);
    }
    static const char *bad_docs[] = {"", "{", "[1,]", "{\"a\" 1}", "{\"a\":1,}", "\"\\x\"", "01", "1.",
                                     "-", "tru", "[1] 2", "\"abc", "\"a\\\"", "{\"a\":1}}", "\"\x01\"", "1e", NULL};
    for (int k = 0; bad_docs[k]; k++) {
        rc = json_parse(&r, bad_docs[k], strlen(bad_docs[k]), "bad.json");
        CHECK(rc < 0 && strstr(kc_error(), "bad.json: bad JSON"), "json \"%s\" should fail (%s)", bad_docs[k], kc_error());
        if (rc == 0) json_free(&r);
    }
    /* yajl decodes an unpaired surrogate escape to '?' (pipeline/json.c says so) */
    rc = json_parse(&r, "\"a\\ud800\"", 9, "lone.json");
    CHECK(rc == 0 && json_string(&r) && !strcmp(json_string(&r), "a?"), "lone surrogate -> '?' (%s)", rc ? kc_error() : json_string(&r));
    if (rc == 0) json_free(&r);
    /* nesting beyond the limit fails instead of overflowing the stack */
    size_t n = 100000;
    char *deep = kc_malloc(n);
    memset(deep, '[', n);
    rc = json_parse(&r, deep, n, "deep.json");
    CHECK(rc < 0 && strstr(kc_error(), "too deep"), "deep nesting: %s", kc_error());
    free(deep);
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

/* Truncations and byte mutations must fail cleanly or succeed; never read outside the buffer
 * (ASan) or crash.  The buffer is copied to an exact-size allocation so overreads are caught. */
static void fuzz_file(const char *file, int mutations)
{
    uint8_t *data;
    size_t size;
    char path[512];
    snprintf(path, sizeof path, DIR "%s", file);
    if (kc_read_file(path, &data, &size) < 0) {
        CHECK(0, "%s", kc_error());
        return;
    }
    int is_pth = size >= 2 && data[0] == 'P' && data[1] == 'K';
    int ok = 0, failed = 0, unnamed = 0;
    size_t step = size / 400 + 1;
    for (size_t cut = 0; cut <= size; cut += (cut < 4096 ? 1 : step)) {
        uint8_t *copy = kc_malloc(cut ? cut : 1);
        memcpy(copy, data, cut);
        int rc;
        if (is_pth) {
            pth_file f;
            rc = pth_open(&f, path, copy, cut);
            if (rc == 0) pth_close(&f);
        } else {
            st_file f;
            rc = st_open(&f, path, copy, cut);
            if (rc == 0) {
                for (int i = 0; i < f.n; i++) {
                    float *x;
                    if (st_tensor_f32(&f, &f.t[i], &x) == 0) free(x);
                }
                st_close(&f);
            }
        }
        rc == 0 ? ok++ : failed++;
        if (rc < 0 && !strstr(kc_error(), path)) unnamed++;
        free(copy);
    }
    for (int k = 0; k < mutations; k++) {
        uint8_t *copy = kc_malloc(size);
        memcpy(copy, data, size);
        int flips = 1 + (int)(next_rand() % 4);
        for (int j = 0; j < flips; j++) {
            /* mostly in the pickle / header (the first KB) where structure lives */
            size_t pos = (next_rand() % 4) ? next_rand() % (size < 3000 ? size : 3000) : next_rand() % size;
            copy[pos] = (uint8_t)next_rand();
        }
        int rc;
        if (is_pth) {
            pth_file f;
            rc = pth_open(&f, path, copy, size);
            if (rc == 0) {
                for (size_t i = 0; i < f.n_all; i++)
                    if (f.all[i]->type == PK_TENSOR) {
                        float *x;
                        if (pth_tensor_f32(&f, f.all[i], "t", &x) == 0) free(x);
                    }
                pth_close(&f);
            }
        } else {
            st_file f;
            rc = st_open(&f, path, copy, size);
            if (rc == 0) {
                for (int i = 0; i < f.n; i++) {
                    float *x;
                    if (st_tensor_f32(&f, &f.t[i], &x) == 0) free(x);
                }
                st_close(&f);
            }
        }
        rc == 0 ? ok++ : failed++;
        if (rc < 0 && !strstr(kc_error(), path)) unnamed++;
        free(copy);
    }
    CHECK(unnamed == 0, "%s fuzz: %d failure messages do not name the file (last: %s)", file, unnamed, kc_error());
    CHECK(failed > 0, "%s fuzz: nothing failed", file);
    printf("fuzz %-24s %d loaded, %d refused, no crash\n", file, ok, failed);
    free(data);
}


/* ---- hand-made archives: a stored zip (optionally with zip64 records) and protocol-2 pickles ---- */
typedef struct buf {
    uint8_t *p;
    size_t n, cap;
} buf;
static void put(buf *b, const void *d, size_t n)
{
    if (b->n + n > b->cap) b->p = kc_realloc(b->p, b->cap = 2 * (b->n + n) + 64);
    memcpy(b->p + b->n, d, n);
    b->n += n;
}
static void put16(buf *b, unsigned v) { uint8_t x[2] = {(uint8_t)v, (uint8_t)(v >> 8)}; put(b, x, 2); }
static void put32(buf *b, uint32_t v) { put16(b, v & 0xFFFF); put16(b, v >> 16); }
static void put64(buf *b, uint64_t v) { put32(b, (uint32_t)v); put32(b, (uint32_t)(v >> 32)); }
static void puts_(buf *b, const char *s) { put(b, s, strlen(s)); }

/* Stored zip of n entries.  zip64: sizes/offsets 0xFFFFFFFF in the central directory with a zip64
 * extra field, and zip64 end records (as writers do for files over 4 GB). */
static void make_zip(buf *z, int n, const char **names, buf *data, int zip64)
{
    uint64_t *off = kc_malloc((size_t)n * sizeof *off);
    for (int i = 0; i < n; i++) {
        off[i] = z->n;
        put32(z, 0x04034b50); put16(z, 20); put16(z, 0); put16(z, 0); put32(z, 0); put32(z, 0);
        put32(z, (uint32_t)data[i].n); put32(z, (uint32_t)data[i].n);
        put16(z, (unsigned)strlen(names[i])); put16(z, 0); puts_(z, names[i]);
        put(z, data[i].p, data[i].n);
    }
    uint64_t cd = z->n;
    for (int i = 0; i < n; i++) {
        put32(z, 0x02014b50); put16(z, 45); put16(z, 45); put16(z, 0); put16(z, 0); put32(z, 0); put32(z, 0);
        put32(z, zip64 ? 0xFFFFFFFFu : (uint32_t)data[i].n); put32(z, zip64 ? 0xFFFFFFFFu : (uint32_t)data[i].n);
        put16(z, (unsigned)strlen(names[i])); put16(z, zip64 ? 28 : 0); put16(z, 0); put16(z, 0); put16(z, 0); put32(z, 0);
        put32(z, zip64 ? 0xFFFFFFFFu : (uint32_t)off[i]);
        puts_(z, names[i]);
        if (zip64) { put16(z, 1); put16(z, 24); put64(z, data[i].n); put64(z, data[i].n); put64(z, off[i]); }
    }
    uint64_t cd_size = z->n - cd;
    if (zip64) {
        uint64_t e64 = z->n;
        put32(z, 0x06064b50); put64(z, 44); put16(z, 45); put16(z, 45); put32(z, 0); put32(z, 0);
        put64(z, (uint64_t)n); put64(z, (uint64_t)n); put64(z, cd_size); put64(z, cd);
        put32(z, 0x07064b50); put32(z, 0); put64(z, e64); put32(z, 1);
    }
    put32(z, 0x06054b50); put16(z, 0); put16(z, 0); put16(z, zip64 ? 0xFFFF : (unsigned)n); put16(z, zip64 ? 0xFFFF : (unsigned)n);
    put32(z, zip64 ? 0xFFFFFFFFu : (uint32_t)cd_size); put32(z, zip64 ? 0xFFFFFFFFu : (uint32_t)cd); put16(z, 0);
    free(off);
}

static void pk_int(buf *b, int64_t v) { uint8_t op = 'J'; put(b, &op, 1); put32(b, (uint32_t)(int32_t)v); }
static void pk_ustr(buf *b, const char *s) { puts_(b, "X"); put32(b, (uint32_t)strlen(s)); puts_(b, s); }
/* name -> _rebuild_tensor_v2(storage key "0" of numel floats, offset, (shape), (stride), False, OrderedDict()) */
static void pk_tensor(buf *b, const char *name, int64_t numel, int64_t offset, int ndim, const int64_t *shape, const int64_t *stride)
{
    pk_ustr(b, name);
    puts_(b, "ctorch._utils\n_rebuild_tensor_v2\n((");
    pk_ustr(b, "storage");
    puts_(b, "ctorch\nFloatStorage\n");
    pk_ustr(b, "0");
    pk_ustr(b, "cpu");
    pk_int(b, numel);
    puts_(b, "tQ");
    pk_int(b, offset);
    puts_(b, "(");
    for (int d = 0; d < ndim; d++) pk_int(b, shape[d]);
    puts_(b, "t(");
    for (int d = 0; d < ndim; d++) pk_int(b, stride[d]);
    puts_(b, "t\x89" "ccollections\nOrderedDict\n)RtR");
}

static int load_zip(const char *dir, const char *file, buf *pkl, buf *storage, int zip64, kc_weights *w)
{
    const char *names[3] = {"archive/data.pkl", "archive/data/0", "archive/version"};
    buf data[3] = {*pkl, *storage, {(uint8_t *)"3\n", 2, 2}};
    buf z = {0};
    make_zip(&z, 3, names, data, zip64);
    char path[4300];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "wb");
    fwrite(z.p, 1, z.n, f);
    fclose(f);
    free(z.p);
    return weights_load(w, path, NULL);
}

static void handmade(void)
{
    const char *tmp = test_tmpdir("weights");
    float vals[64];
    for (int i = 0; i < 64; i++) vals[i] = (float)i * 0.5f - 3.0f;
    buf storage = {0};
    put(&storage, vals, sizeof vals);
    /* a transposed (8, 8) view at offset 0 and a (4,) slice at offset 10, in a zip64 archive */
    buf pkl = {0};
    puts_(&pkl, "\x80\x02}(");
    int64_t sh[2] = {8, 8}, st[2] = {1, 8}, sh1[1] = {4}, st1[1] = {2};
    pk_tensor(&pkl, "blocks.0.attn.proj.weight", 64, 0, 2, sh, st);
    pk_tensor(&pkl, "norm.bias", 64, 10, 1, sh1, st1);
    puts_(&pkl, "u.");
    kc_weights w;
    for (int zip64 = 0; zip64 < 2; zip64++) {
        int rc = load_zip(tmp, zip64 ? "z64.pth" : "z32.pth", &pkl, &storage, zip64, &w);
        CHECK(rc == 0, "hand-made zip%s: %s", zip64 ? "64" : "", kc_error());
        if (rc) continue;
        const kc_tensor *a = weights_find(&w, "blocks.0.attn.proj.weight"), *b = weights_find(&w, "norm.bias");
        int wrong = 0;
        for (int i = 0; i < 8; i++)
            for (int j = 0; j < 8; j++) wrong += a->data[i * 8 + j] != vals[j * 8 + i];
        for (int i = 0; i < 4; i++) wrong += b->data[i] != vals[10 + 2 * i];
        CHECK(wrong == 0, "strided views: %d values wrong (tol 0)", wrong);
        weights_free(&w);
    }
    free(pkl.p);

    /* a strided view that ends exactly at the storage's last element is legal */
    pkl = (buf){0};
    puts_(&pkl, "\x80\x02}(");
    int64_t sh2[1] = {8}, st2[1] = {9};
    pk_tensor(&pkl, "norm.bias", 64, 0, 1, sh2, st2);
    puts_(&pkl, "u.");
    if (load_zip(tmp, "edge.pth", &pkl, &storage, 0, &w) == 0) {
        int wrong = 0;
        for (int i = 0; i < 8; i++) wrong += w.t[0].data[i] != vals[9 * i];
        CHECK(wrong == 0, "stride-9 view: %d values wrong (tol 0)", wrong);
        weights_free(&w);
    } else {
        CHECK(0, "stride-9 view: %s", kc_error());
    }
    free(pkl.p);
    /* a view reaching past its storage */
    pkl = (buf){0};
    puts_(&pkl, "\x80\x02}(");
    int64_t st3[1] = {10};
    pk_tensor(&pkl, "norm.bias", 64, 0, 1, sh2, st3);
    puts_(&pkl, "u.");
    CHECK(load_zip(tmp, "past2.pth", &pkl, &storage, 0, &w) < 0 && strstr(kc_error(), "view reaches element 70 of a storage of 64"),
          "view past the storage: %s", kc_error());
    free(pkl.p);

    /* a broadcast (stride 0) view with more elements than its storage: refused, so converted
     * tensors never hold more values than the file's storages */
    pkl = (buf){0};
    puts_(&pkl, "\x80\x02}(");
    int64_t sh4[1] = {100000}, st4[1] = {0};
    pk_tensor(&pkl, "norm.weight", 64, 0, 1, sh4, st4);
    puts_(&pkl, "u.");
    CHECK(load_zip(tmp, "bcast.pth", &pkl, &storage, 0, &w) < 0 && strstr(kc_error(), "overlapping view"), "broadcast view: %s", kc_error());
    free(pkl.p);

    /* a pickle of 400k Nones in a list: the interpreter's memory is bounded by the file's size */
    pkl = (buf){0};
    puts_(&pkl, "\x80\x02](");
    for (int i = 0; i < 400000; i++) puts_(&pkl, "N");
    puts_(&pkl, "e.");
    CHECK(load_zip(tmp, "nones.pth", &pkl, &storage, 0, &w) < 0 && strstr(kc_error(), "more memory than its file justifies"),
          "pickle bomb: %s", kc_error());
    free(pkl.p);
    /* a huge count in a tiny file: BINUNICODE claiming 4 GB */
    pkl = (buf){0};
    puts_(&pkl, "\x80\x02X\xff\xff\xff\xf0" "abc");
    CHECK(load_zip(tmp, "bigstr.pth", &pkl, &storage, 0, &w) < 0 && strstr(kc_error(), "truncated pickle"), "huge string length: %s", kc_error());
    free(pkl.p);
    free(storage.p);
}

/* ---- DINOv2 / DINOv2 with registers / DINOv3 in every form (tests/ref/dino23_weights_ref.py) ---- */
#define D23 "dino23/"

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

static int64_t numel(const kc_tensor *t)
{
    int64_t n = 1;
    for (int d = 0; d < t->ndim; d++) n *= t->shape[d];
    return n;
}

/* Worst |a - b| over two equal-sized tensors (-1 when a size differs). */
static double worst_diff(const float *a, const float *b, int64_t n)
{
    double worst = 0;
    for (int64_t k = 0; k < n; k++) worst = fmax(worst, fabs((double)a[k] - b[k]));
    return worst;
}

/* DINOv3ViTModel's file against the hub file it was converted from: every tensor the same (tol 0)
 * except qkv.bias, whose k rows are 0 (no k_proj.bias) while the q and v rows are the hub's; no
 * bias_mask; periods computed, not the hub's. */
static void hf_v3_against_hub(const char *hf_file, int n_periods)
{
    kc_weights hf, hub;
    if (weights_load(&hf, DIR D23 "v3_hub.pth", NULL) < 0) {
        CHECK(0, "%s", kc_error());
        return;
    }
    hub = hf;
    if (weights_load(&hf, hf_file, NULL) < 0) {
        CHECK(0, "%s", kc_error());
        weights_free(&hub);
        return;
    }
    int compared = 0;
    double worst = 0, worst_k = 0;
    for (int i = 0; i < hub.n; i++) {
        const kc_tensor *a = &hub.t[i], *b = weights_find(&hf, a->name);
        if (strstr(a->name, "bias_mask") || !strcmp(a->name, "rope_embed.periods")) {
            CHECK(b == NULL || !strcmp(a->name, "rope_embed.periods"), "%s: %s should not be there", hf_file, a->name);
            continue;
        }
        CHECK(b && numel(b) == numel(a), "%s: %s missing or of another size", hf_file, a->name);
        if (!b || numel(b) != numel(a)) continue;
        compared++;
        if (ends_with(a->name, "attn.qkv.bias")) {
            const int64_t d = numel(a) / 3;
            worst = fmax(worst, worst_diff(a->data, b->data, d));
            worst = fmax(worst, worst_diff(a->data + 2 * d, b->data + 2 * d, d));
            for (int64_t k = d; k < 2 * d; k++) worst_k = fmax(worst_k, fabs(b->data[k]));
        } else {
            worst = fmax(worst, worst_diff(a->data, b->data, numel(a)));
        }
    }
    CHECK(worst == 0 && worst_k == 0 && compared == hf.n - 1,
          "%s vs v3_hub.pth: worst |diff| %.9g (tol 0), worst |k bias| %.9g (must be 0), %d compared of %d", hf_file, worst,
          worst_k, compared, hf.n - 1);
    const kc_tensor *p = weights_find(&hf, "rope_embed.periods");
    CHECK(p && p->ndim == 1 && p->shape[0] == n_periods && hf.periods_from_config && !hub.periods_from_config,
          "%s: %d computed periods expected", hf_file, n_periods);
    if (p) printf("%-40s periods %g .. %g (%lld), k rows of qkv.bias zero, rest = hub's\n", hf_file + strlen(DIR), p->data[0],
                  p->data[p->shape[0] - 1], (long long)p->shape[0]);
    weights_free(&hf);
    weights_free(&hub);
}

static void test_dino23(void)
{
    good(D23 "v2_hub.pth", NULL, NULL, NULL);
    good(D23 "v2reg_hub.pth", NULL, NULL, NULL);
    good(D23 "v3_hub.pth", NULL, NULL, NULL);
    good(D23 "v2_nomask.pth", NULL, NULL, NULL);
    good(D23 "v2reg_train.pth", NULL, NULL, NULL);
    good(D23 "v3_train.pth", NULL, NULL, NULL);
    good(D23 "v3_train.pth", "teacher", NULL, NULL);
    good(D23 "hf_v2/model.safetensors", NULL, NULL, NULL);
    good(D23 "hf_v2reg/model.safetensors", NULL, NULL, NULL);
    good(D23 "hf_v2reg_cls/model.safetensors", NULL, NULL, NULL);
    good(D23 "hf_v3/model.safetensors", NULL, NULL, NULL);
    good(D23 "hf_v3_noconfig/model.safetensors", NULL, NULL, NULL);
    /* the Hugging Face files hold the hub files' tensors (Dinov2: all of them, tol 0) */
    same_tensors(DIR D23 "hf_v2/model.safetensors", DIR D23 "v2_hub.pth");
    same_tensors(DIR D23 "hf_v2reg/model.safetensors", DIR D23 "v2reg_hub.pth");
    same_tensors(DIR D23 "hf_v2reg_cls/model.safetensors", DIR D23 "v2reg_hub.pth");
    hf_v3_against_hub(DIR D23 "hf_v3/model.safetensors", 4);
    hf_v3_against_hub(DIR D23 "hf_v3_noconfig/model.safetensors", 16);

    bad(D23 "bad_unrelated.pth", NULL, "no backbone tensors");
    bad(D23 "bad_chunk_dup.pth", NULL, "block 1 appears in chunk 0 (backbone.blocks.0.1.norm1.weight) and in chunk 1 (backbone.blocks.1.1.norm1.weight)");
    bad(D23 "bad_chunk_order.pth", NULL, "chunk numbers decrease: block 2 is in chunk 0 (backbone.blocks.0.2.norm1.weight) after block 1 in chunk 1");
    bad(D23 "bad_chunk_mixed.pth", NULL, "mix DINOv2's chunked form (backbone.blocks.0.0.norm1.weight) and the plain one (backbone.blocks.2.norm1.weight)");
    bad(D23 "bad_timm_reg.pth", NULL, "tensor reg_token belongs to timm's DINOv2-with-registers layout");
    bad(D23 "bad_gate/model.safetensors", NULL, "tensor layer.0.mlp.gate_proj.bias belongs to a gated (SwiGLU) MLP");
    bad(D23 "bad_nov/model.safetensors", NULL, "blocks.1.attn.qkv.bias has no attention.v_proj part");
    bad(D23 "bad_mix/model.safetensors", NULL, "mixes Hugging Face DINOv3ViTModel names (embeddings.cls_token) with names of another scheme (blocks.0.ls1.gamma)");
    bad(D23 "bad_vitmix/model.safetensors", NULL, "mixes ViTModel names (encoder.layer.1.layernorm_before.");
    bad(D23 "bad_regcount/model.safetensors", NULL, "config.json beside it says num_register_tokens 2, the file holds 4 register tokens");
}

static void big_checkpoint(void)
{
    const char *m = test_missing("py:torch");
    if (m) {
        SKIP("real-size ViT-S/16 check: %s not installed", m);
        return;
    }
    const char *tmp = test_tmpdir("weights_big");
    char cmd[8400], path[4200], ex[4300];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 tests/ref/make_checkpoints.py --big '%s' >/dev/null", tmp);
    int rc = system(cmd);
    CHECK(rc == 0, "make_checkpoints.py --big failed (%d)", rc);
    if (rc != 0) return;
    snprintf(path, sizeof path, "%s/vits16.pth", tmp);
    snprintf(ex, sizeof ex, "%s/vits16.pth.expect", tmp);
    kc_weights w;
    double t0 = kc_now();
    rc = weights_load(&w, path, NULL);
    double dt = kc_now() - t0;
    CHECK(rc == 0, "ViT-S/16 load: %s", kc_error());
    if (rc < 0) return;
    int64_t params = 0;
    for (int i = 0; i < w.n; i++) {
        int64_t n = 1;
        for (int d = 0; d < w.t[i].ndim; d++) n *= w.t[i].shape[d];
        params += n;
    }
    CHECK(params == 21665664, "ViT-S/16 parameter count %lld (expected 21665664)", (long long)params);
    int differing = check_expect(&w, ex);
    printf("ViT-S/16 .pth (%lld params, 86.7 MB): loaded in %.3f s (sha256 + parse + copy), %d tensors differ\n",
           (long long)params, dt, differing);
    CHECK(dt < 10.0, "ViT-S/16 load took %.2f s (limit 10 s)", dt);
    weights_free(&w);
}

int main(void)
{
    test_half();
    test_json();

    good("released.pth", NULL, NULL, "dino");
    good("released.pth", "", NULL, "dino");
    good("released_f16.pth", NULL, NULL, "dino");
    good("released_bf16.pth", NULL, NULL, "dino");
    good("released_proto4.pth", NULL, NULL, "dino");
    good("train_ckpt.pth", NULL, NULL, "dino");
    good("train_ckpt.pth", "teacher", NULL, "dino");
    good("train_ckpt.pth", "student", "train_ckpt.pth.student", "dino");
    good("noncontig.pth", NULL, NULL, "dino");
    good("selfpatch.pth", NULL, NULL, "dino");
    good("dino.safetensors", NULL, NULL, "dino");
    good("hf/model.safetensors", NULL, NULL, "hf-vit");
    good("hf_cls/model.safetensors", NULL, NULL, "hf-vit");
    /* HF mapping: qkv rows q, k, v in order, every tensor equal to the DINO-named original */
    same_tensors(DIR "hf/model.safetensors", DIR "released_f16.pth");
    same_tensors(DIR "hf_cls/model.safetensors", DIR "released_bf16.pth");
    same_tensors(DIR "train_ckpt.pth", DIR "released.pth");

    /* details the expect files do not state */
    kc_weights w;
    if (weights_load(&w, DIR "train_ckpt.pth", NULL) == 0) {
        CHECK(weights_find(&w, "blocks.1.attn.qkv.weight") && weights_find(&w, "blocks.1.attn.qkv.weight")->shape[0] == 96,
              "prefix stripping: blocks.1.attn.qkv.weight (96, 32)");
        CHECK(!weights_find(&w, "backbone.cls_token") && !weights_find(&w, "head.mlp.0.weight"), "no prefixed or head names");
        CHECK(w.config_heads == 0 && w.config_ln_eps == 0 && !w.hf_names, "no config.json beside a .pth");
        weights_free(&w);
    }

    bad("bad_os_system.pth", NULL, "refusing global os.system");
    bad("bad_eval.pth", NULL, "refusing global builtins.eval");
    bad("bad_compressed.pth", NULL, "compressed");
    bad("bad_short_storage.pth", NULL, "do not fit");
    bad("bad_truncated.pth", NULL, "truncated");
    bad("bad_unknown.pth", NULL, "unknown tensor blocks.3.attn.foo");
    bad("bad_legacy.pth", NULL, "legacy");
    bad("bad_header.safetensors", NULL, "header length 4096 overruns the file");
    bad("bad_offsets.safetensors", NULL, "overrun");
    bad("bad_hf_nokey.safetensors", NULL, "blocks.0.attn.qkv.bias has no attention.attention.key part");
    bad("train_ckpt.pth", "nope", "no state dict under checkpoint key \"nope\" (top-level keys: student, teacher, optimizer");
    bad("train_ckpt.pth", "optimizer", "no backbone tensors");
    bad("missing.pth", NULL, "cannot open");
    bad("hf/config.json", NULL, "neither a PyTorch .pth (zip) nor a safetensors file");

    test_dino23();
    handmade();
    fuzz_file("noncontig.pth", 3000);
    fuzz_file("bad_unknown.pth", 3000);
    fuzz_file("dino.safetensors", 1500);
    fuzz_file("train_ckpt.pth", 1500);
    fuzz_file(D23 "v2reg_train.pth", 1500);
    fuzz_file(D23 "hf_v3/model.safetensors", 1500);

    big_checkpoint();
    return test_done();
}
