/* tests/test_cache.c — the HDF5 cache: pieces, resume, merge, index, provenance, refusals;
 * and the dataset readers on generated folders and on ../shared/data. */
#include <unistd.h>

#include "datasets/dataset.h"
#include "pipeline/cache/cache.h"
#include "pipeline/kc.h"
#include "tests/test.h"

static void write_piece(cache_writer *w, int b, int base)
{
    cache_piece *p = cache_piece_new(w, b);
    for (int k = 0; k < 2; k++) {
        float v[6];
        for (int i = 0; i < 6; i++) v[i] = (float)(base + k) + 0.25f * (float)i;
        int64_t dims[2] = {3, 2};
        char name[64];
        snprintf(name, sizeof name, "/features/keys/seq%d/%05d", b, k);
        CHECK(cache_piece_put_f32(p, name, v, 2, dims) == 0, "put %s: %s", name, kc_error());
        float l2[3] = {0.5f, NAN, 1.5f};
        CHECK(cache_piece_attr_f32(p, name, "lambda2", l2, 3) == 0, "attr: %s", kc_error());
        CHECK(cache_piece_attr_i32(p, name, "degenerate", b) == 0, "attr i32: %s", kc_error());
    }
    CHECK(cache_piece_commit(p) == 0, "commit: %s", kc_error());
}

static void fill_index(cache_index *ix)
{
    ix->n = 6;
    ix->ids = kc_malloc(6 * sizeof(char *));
    ix->grid = kc_malloc(12 * sizeof(int32_t));
    ix->size = kc_malloc(12 * sizeof(int32_t));
    for (int b = 0; b < 3; b++)
        for (int k = 0; k < 2; k++) {
            int i = 2 * b + k;
            ix->ids[i] = kc_strfmt("seq%d/%05d", b, k);
            ix->grid[2 * i] = 3;
            ix->grid[2 * i + 1] = 1;
            ix->size[2 * i] = 48;
            ix->size[2 * i + 1] = 16;
        }
}

static void test_cache(const char *dir)
{
    char *out = kc_strfmt("%s/sub/keys.h5", dir);
    cache_writer w;
    CHECK(cache_writer_open(&w, out, CACHE_FORMAT_FEATURES, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 3) == 0,
          "open: %s", kc_error());
    write_piece(&w, 0, 0);
    write_piece(&w, 2, 20);
    CHECK(cache_writer_have(&w, 0) && !cache_writer_have(&w, 1) && cache_writer_have(&w, 2), "have");
    /* a stray .tmp from a killed run */
    char *stray = kc_strfmt("%s.partial/piece-000001.h5.tmp", out);
    FILE *f = fopen(stray, "w");
    fputs("half", f);
    fclose(f);
    cache_writer_free(&w);
    /* another command's fingerprint is refused */
    CHECK(cache_writer_open(&w, out, CACHE_FORMAT_FEATURES, "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", 3) < 0 &&
              strstr(kc_error(), "different run"),
          "foreign partial refused: %s", kc_error());
    cache_writer_free(&w);
    /* resume with the same fingerprint: the stray tmp goes, pieces stay */
    CHECK(cache_writer_open(&w, out, CACHE_FORMAT_FEATURES, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 3) == 0,
          "reopen: %s", kc_error());
    CHECK(!kc_exists(stray), "stray tmp removed");
    CHECK(!kc_exists(out), "no final file before finish");
    write_piece(&w, 1, 10);
    cache_index ix = {0};
    fill_index(&ix);
    cache_prov prov = {0};
    prov_set(&prov, "policy", "square480");
    prov_set(&prov, "patch", "16");
    prov_set(&prov, "policy", "short480"); /* replaces */
    CHECK(cache_writer_finish(&w, &ix, &prov) == 0, "finish: %s", kc_error());
    char *partial = kc_strfmt("%s.partial", out);
    CHECK(!kc_exists(partial), "partial folder removed");
    cache_writer_free(&w);

    cache_reader r;
    CHECK(cache_open(&r, out, CACHE_FORMAT_FEATURES) == 0, "read open: %s", kc_error());
    CHECK(r.index.n == 6 && !strcmp(r.index.ids[3], "seq1/00001"), "index ids");
    CHECK(r.index.grid[6] == 3 && r.index.size[7] == 16, "index grid/size");
    CHECK(!strcmp(cache_attr(&r, "policy"), "short480"), "prov replaced");
    CHECK(cache_content_hash(&r) && strlen(cache_content_hash(&r)) == 64, "content hash");
    CHECK(cache_attr(&r, "created") != NULL, "created");
    float *v;
    int rows, cols;
    CHECK(cache_read_f32(&r, "/features/keys/seq2/00001", &v, &rows, &cols) == 0 && rows == 3 && cols == 2 &&
              v[0] == 21.0f && v[5] == 22.25f,
          "values back");
    free(v);
    float l2[4];
    int n = cache_read_attr_f32(&r, "/features/keys/seq1/00000", "lambda2", l2, 4);
    CHECK(n == 3 && l2[0] == 0.5f && isnan(l2[1]), "f32 attr back (n=%d)", n);
    int32_t deg = -1;
    CHECK(cache_read_attr_i32(&r, "/features/keys/seq2/00000", "degenerate", &deg) == 0 && deg == 2, "i32 attr");
    CHECK(cache_has(&r, "/features/keys/seq0/00001") && !cache_has(&r, "/features/keys/nope/00001"), "has");
    char **names;
    int nn;
    CHECK(cache_list(&r, "/features/keys", &names, &nn) == 0 && nn == 3 && !strcmp(names[2], "seq2"), "list");
    for (int i = 0; i < nn; i++) free(names[i]);
    free(names);
    char hash1[65];
    snprintf(hash1, sizeof hash1, "%s", cache_content_hash(&r));
    cache_close(&r);
    CHECK(cache_open(&r, out, CACHE_FORMAT_MASKS) < 0 && strstr(kc_error(), "expected a keycut-masks"),
          "format refusal: %s", kc_error());

    /* the same content written in one go gives the same content hash */
    char *out2 = kc_strfmt("%s/keys2.h5", dir);
    CHECK(cache_writer_open(&w, out2, CACHE_FORMAT_FEATURES, "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc", 3) == 0, "open2");
    write_piece(&w, 0, 0);
    write_piece(&w, 1, 10);
    write_piece(&w, 2, 20);
    CHECK(cache_writer_finish(&w, &ix, &prov) == 0, "finish2: %s", kc_error());
    cache_writer_free(&w);
    CHECK(cache_open(&r, out2, NULL) == 0, "open2 read");
    CHECK(!strcmp(hash1, cache_content_hash(&r)), "content hash independent of resume");
    cache_close(&r);

    /* non-finite values are refused on read */
    char *out3 = kc_strfmt("%s/nan.h5", dir);
    CHECK(cache_writer_open(&w, out3, CACHE_FORMAT_FEATURES, "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd", 1) == 0, "open3");
    cache_piece *p = cache_piece_new(&w, 0);
    float bad[2] = {1.0f, NAN};
    int64_t d2[2] = {1, 2};
    cache_piece_put_f32(p, "/features/keys/x", bad, 2, d2);
    cache_piece_commit(p);
    cache_index one = {1, (char *[]){"x"}, (int32_t[]){1, 1}, (int32_t[]){16, 16}, NULL, NULL};
    CHECK(cache_writer_finish(&w, &one, &prov) == 0, "finish3");
    cache_writer_free(&w);
    CHECK(cache_open(&r, out3, NULL) == 0, "open3 read");
    CHECK(cache_read_f32(&r, "/features/keys/x", &v, &rows, &cols) < 0 && strstr(kc_error(), "non-finite"),
          "nan refused: %s", kc_error());
    cache_close(&r);
    /* not an HDF5 file, truncated file */
    char *junk = kc_strfmt("%s/junk.h5", dir);
    f = fopen(junk, "w");
    fputs("not hdf5", f);
    fclose(f);
    CHECK(cache_open(&r, junk, NULL) < 0 && strstr(kc_error(), "junk.h5") && strstr(kc_error(), "HDF5"),
          "junk refused: %s", kc_error());
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "head -c 3000 '%s' > '%s/trunc.h5'", out2, dir);
    CHECK(system(cmd) == 0, "truncate");
    char *trunc = kc_strfmt("%s/trunc.h5", dir);
    CHECK(cache_open(&r, trunc, NULL) < 0 && strstr(kc_error(), "trunc.h5"), "truncated refused: %s", kc_error());
    cache_index_free(&ix);
    prov_free(&prov);
    free(out), free(out2), free(out3), free(junk), free(trunc), free(partial), free(stray);
}

static void touch(const char *path)
{
    FILE *f = fopen(path, "w");
    if (f) fclose(f);
}

static void test_datasets(const char *dir)
{
    kc_dataset d;
    char *imgs = kc_strfmt("%s/imgs", dir);
    kc_mkdirs(imgs);
    char *p;
    p = kc_strfmt("%s/b.png", imgs), touch(p), free(p);
    p = kc_strfmt("%s/a.jpg", imgs), touch(p), free(p);
    p = kc_strfmt("%s/notes.txt", imgs), touch(p), free(p);
    char *spec = kc_strfmt("dir:%s", imgs);
    CHECK(dataset_open(&d, spec) == 0 && d.n == 2 && !strcmp(d.ids[0], "a") && !strcmp(d.ids[1], "b"),
          "dir dataset: %s", kc_error());
    dataset_free(&d);
    p = kc_strfmt("%s/a.png", imgs), touch(p), free(p);
    CHECK(dataset_open(&d, spec) < 0 && strstr(kc_error(), "'a'") && strstr(kc_error(), "a.jpg") &&
              strstr(kc_error(), "a.png"),
          "duplicate id names both: %s", kc_error());
    dataset_free(&d);
    char *list = kc_strfmt("%s/list.txt", dir);
    FILE *f = fopen(list, "w");
    char absdir[4096];
    CHECK(realpath(dir, absdir) != NULL, "realpath");
    fprintf(f, "imgs/b.png\n\n%s/imgs/a.jpg\n", absdir);
    fclose(f);
    free(spec);
    spec = kc_strfmt("list:%s", list);
    CHECK(dataset_open(&d, spec) == 0 && d.n == 2 && !strcmp(d.ids[0], "b") && !strcmp(d.ids[1], "a"),
          "list dataset: %s", kc_error());
    dataset_free(&d);
    f = fopen(list, "a");
    fprintf(f, "imgs/missing.jpg\n");
    fclose(f);
    CHECK(dataset_open(&d, spec) < 0 && strstr(kc_error(), "line 3") && strstr(kc_error(), "missing.jpg"),
          "missing file named: %s", kc_error());
    dataset_free(&d);
    char *empty = kc_strfmt("%s/empty", dir);
    kc_mkdirs(empty);
    free(spec);
    spec = kc_strfmt("dir:%s", empty);
    CHECK(dataset_open(&d, spec) < 0 && strstr(kc_error(), "no images"), "empty: %s", kc_error());
    dataset_free(&d);
    CHECK(dataset_open(&d, "kitti:/x:val") < 0 && strstr(kc_error(), "unknown kind"), "kind: %s", kc_error());
    dataset_free(&d);
    free(spec), free(empty), free(list), free(imgs);

    const char *sh = test_shared_data();
    if (!sh) {
        SKIP("shared data absent: DAVIS and VOC readers not checked on real layouts");
        return;
    }
    spec = kc_strfmt("davis:%s/davis:val", sh);
    CHECK(dataset_open(&d, spec) == 0 && d.n == 139, "davis val has 139 frames (got %d): %s", d.n, kc_error());
    if (d.n == 139) {
        CHECK(!strcmp(d.ids[0], "blackswan/00000") && !strcmp(d.ids[50], "car-shadow/00000") &&
                  !strcmp(d.ids[138], "libby/00048"),
              "davis ids in order: %s %s %s", d.ids[0], d.ids[50], d.ids[138]);
    }
    dataset_free(&d);
    free(spec);
    spec = kc_strfmt("voc:%s/voc_official:train", sh);
    CHECK(dataset_open(&d, spec) == 0 && d.n >= 1, "voc_official train: %s", kc_error());
    int found = 0;
    for (int i = 0; i < d.n; i++) found |= !strcmp(d.ids[i], "2007_000063");
    CHECK(found, "2007_000063 listed");
    dataset_free(&d);
    free(spec);
}

/* A partial folder that holds no finished piece never blocks: whatever command left it (its
 * fingerprint, a stage's note, a piece being written), the next run takes it over. */
static void test_partial_takeover(const char *dir)
{
    char *out = kc_strfmt("%s/taken/keys.h5", dir);
    cache_writer w;
    const char *fp_a = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    const char *fp_e = "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee";
    CHECK(cache_writer_open(&w, out, CACHE_FORMAT_FEATURES, fp_a, 2) == 0, "open: %s", kc_error());
    cache_writer_free(&w); /* a run that stopped before its first piece */
    char *note = kc_strfmt("%s.partial/products", out), *tmp = kc_strfmt("%s.partial/piece-000000.h5.tmp", out);
    CHECK(kc_write_file_atomic(note, "another path", 12) == 0 && kc_write_file_atomic(tmp, "half", 4) == 0, "notes");
    CHECK(cache_writer_open(&w, out, CACHE_FORMAT_FEATURES, fp_e, 2) == 0, "taken over: %s", kc_error());
    uint8_t *fp = NULL;
    size_t n = 0;
    char *fp_path = kc_strfmt("%s.partial/fingerprint", out);
    CHECK(kc_read_file(fp_path, &fp, &n) == 0 && n == 64 && !memcmp(fp, fp_e, 64),
          "the new run's fingerprint recorded");
    free(fp);
    free(fp_path);
    CHECK(!kc_exists(note) && !kc_exists(tmp), "the other run's note and temporary piece removed");
    write_piece(&w, 0, 0);
    cache_writer_free(&w);
    /* now it holds a finished piece: another command is refused, the folder left as it was */
    CHECK(cache_writer_open(&w, out, CACHE_FORMAT_FEATURES, fp_a, 2) < 0 && strstr(kc_error(), "different run"),
          "a finished piece of another run refused: %s", kc_error());
    cache_writer_free(&w);
    CHECK(cache_writer_open(&w, out, CACHE_FORMAT_FEATURES, fp_e, 2) == 0 && cache_writer_have(&w, 0),
          "resumed: %s", kc_error());
    cache_writer_free(&w);
    free(note);
    free(tmp);
    free(out);
}

/* Format versions: a committed version-1 masks cache (tests/data/corloc/masks_coco.h5) and its
 * copy written by this keycut (version 2, as kc-merge copies datasets: cache_piece_copy) read
 * through the same reader give the same index, provenance, masks and attributes, and the same
 * recomputed content hash; a version-2 cache adds /index/resized and /index/box when the writer
 * gives them, and an image hash written in version 2 reads back as it was written. */
static int same_f32(const float *a, const float *b, int n)
{
    for (int i = 0; i < n; i++)
        if (memcmp(&a[i], &b[i], sizeof *a) != 0) return 0; /* NaN of a round not run included */
    return 1;
}

/* Finishes w with ix and prov (freed), then opens the result as r: 0, or -1 after a failed check. */
static int finish_reopen(cache_writer *w, const cache_index *ix, cache_prov *prov, const char *path,
                         const char *format, cache_reader *r)
{
    CHECK(cache_writer_finish(w, ix, prov) == 0, "finish %s: %s", path, kc_error());
    cache_writer_free(w);
    prov_free(prov);
    if (cache_open(r, path, format) == 0) return 0;
    CHECK(0, "reopen %s: %s", path, kc_error());
    return -1;
}

static void test_versions(const char *dir)
{
    const char *old_path = "tests/data/corloc/masks_coco.h5";
    char *new_path = kc_strfmt("%s/versions/masks_v2.h5", dir);
    cache_reader old;
    if (cache_open(&old, old_path, CACHE_FORMAT_MASKS) < 0) {
        CHECK(0, "version 1 fixture: %s", kc_error());
        free(new_path);
        return;
    }
    CHECK(old.version == 1 && !strcmp(cache_attr(&old, "format_version"), "1") && !old.index.resized && !old.index.box,
          "the fixture reads as version 1 without the mapping datasets");
    char **settings = NULL;
    int n_set = 0;
    CHECK(cache_list(&old, "/masks", &settings, &n_set) == 0 && n_set > 0, "settings: %s", kc_error());
    /* the copy: one piece per image, every setting's mask of it */
    const int n = old.index.n;
    cache_writer w;
    char fp[65];
    const char *parts[] = {"test_versions", old_path};
    cache_fingerprint(fp, 2, parts);
    CHECK(cache_writer_open(&w, new_path, CACHE_FORMAT_MASKS, fp, n) == 0, "open v2: %s", kc_error());
    for (int i = 0; i < n; i++) {
        cache_piece *p = cache_piece_new(&w, i);
        for (int k = 0; k < n_set; k++) {
            char *d = kc_strfmt("/masks/%s/%s", settings[k], old.index.ids[i]);
            CHECK(cache_piece_copy(p, &old, d) == 0, "copy %s: %s", d, kc_error());
            free(d);
        }
        CHECK(cache_piece_commit(p) == 0, "commit: %s", kc_error());
    }
    cache_prov prov = {0};
    for (int k = 0; k < old.prov.n; k++)
        if (!prov_is_reserved(old.prov.key[k])) prov_set(&prov, old.prov.key[k], old.prov.value[k]);
    cache_reader nw;
    if (finish_reopen(&w, &old.index, &prov, new_path, CACHE_FORMAT_MASKS, &nw) == 0) {
        CHECK(nw.version == 2 && !strcmp(cache_attr(&nw, "format_version"), CACHE_FORMAT_VERSION), "version 2: %s",
              cache_attr(&nw, "format_version"));
        int same_index = nw.index.n == n;
        for (int i = 0; same_index && i < n; i++)
            same_index = !strcmp(nw.index.ids[i], old.index.ids[i]) && !memcmp(nw.index.grid + 2 * i, old.index.grid + 2 * i, 8) &&
                         !memcmp(nw.index.size + 2 * i, old.index.size + 2 * i, 8);
        CHECK(same_index, "the index (ids, grid, size) reads the same from both versions");
        int same_prov = 1;
        for (int k = 0; k < old.prov.n; k++) {
            const char *key = old.prov.key[k], *v = cache_attr(&nw, key);
            if (prov_is_reserved(key)) continue;
            if (!v || strcmp(v, old.prov.value[k])) {
                same_prov = 0;
                fprintf(stderr, "  %s: version 1 '%s', version 2 '%s'\n", key, old.prov.value[k], v ? v : "(none)");
            }
        }
        CHECK(same_prov, "every provenance key reads as the same text (patch: string '16' in 1, int64 16 in 2)");
        int masks = 0, differ = 0;
        for (int k = 0; k < n_set; k++)
            for (int i = 0; i < n; i++) {
                char *d = kc_strfmt("/masks/%s/%s", settings[k], old.index.ids[i]);
                uint8_t *a = NULL, *b = NULL;
                int ra, ca, rb, cb;
                float la[16], lb[16], ea[16], eb[16];
                int32_t da = -1, db = -2;
                int na = cache_read_attr_f32(&old, d, "lambda2", la, 16), nb = cache_read_attr_f32(&nw, d, "lambda2", lb, 16);
                int ma = cache_read_attr_f32(&old, d, "eigengap", ea, 16), mb = cache_read_attr_f32(&nw, d, "eigengap", eb, 16);
                if (cache_read_u8(&old, d, &a, &ra, &ca) < 0 || cache_read_u8(&nw, d, &b, &rb, &cb) < 0 || ra != rb ||
                    ca != cb || memcmp(a, b, (size_t)ra * ca) || na < 1 || na != nb || !same_f32(la, lb, na) || ma != mb ||
                    ma < 1 || !same_f32(ea, eb, ma) || cache_read_attr_i32(&old, d, "degenerate", &da) < 0 ||
                    cache_read_attr_i32(&nw, d, "degenerate", &db) < 0 || da != db) {
                    if (!differ++) fprintf(stderr, "  %s differs between the versions (%s)\n", d, kc_error());
                }
                masks++;
                free(a);
                free(b);
                free(d);
            }
        CHECK(masks > 0 && differ == 0, "%d masks with their lambda2, eigengap, degenerate: %d differ", masks, differ);
        char ha[65], hb[65];
        CHECK(cache_hash_images(&old, 0, n, 1, ha) == 0 && cache_hash_images(&nw, 0, n, 1, hb) == 0 && !strcmp(ha, hb) &&
                  !strcmp(hb, cache_content_hash(&nw)),
              "content hash: version 1 recomputed %.12s, version 2 %.12s, stored %.12s", ha, hb,
              cache_content_hash(&nw) ? cache_content_hash(&nw) : "(none)");
        cache_close(&nw);
    }
    for (int k = 0; k < n_set; k++) free(settings[k]);
    free(settings);
    cache_close(&old);

    /* version 2 only: the mapping datasets and the image hash, written and read back */
    char *out = kc_strfmt("%s/versions/keys_v2.h5", dir);
    const char *parts2[] = {"test_versions", "sha"};
    cache_fingerprint(fp, 2, parts2);
    CHECK(cache_writer_open(&w, out, CACHE_FORMAT_FEATURES, fp, 1) == 0, "open: %s", kc_error());
    cache_piece *p = cache_piece_new(&w, 0);
    float v[6] = {1, 2, 3, 4, 5, 6};
    int64_t dims[2] = {2, 3};
    uint8_t sha[32], back[32] = {0};
    for (int i = 0; i < 32; i++) sha[i] = (uint8_t)(7 * i + 200);
    CHECK(cache_piece_put_f32(p, "/features/keys/x", v, 2, dims) == 0 && cache_piece_attr_sha(p, "/features/keys/x", sha) == 0,
          "put with hash: %s", kc_error());
    CHECK(cache_piece_commit(p) == 0, "commit: %s", kc_error());
    cache_index one = {1, (char *[]){"x"}, (int32_t[]){1, 2}, (int32_t[]){20, 30}, (int32_t[]){16, 32},
                       (int32_t[]){0, 0, 16, 32}};
    cache_prov pr = {0};
    prov_set(&pr, "patch", "16");
    prov_set(&pr, "ln_eps", "9.99999997e-07");
    prov_set(&pr, "dim", "3");
    prov_set(&pr, "policy", "square480");
    cache_reader r;
    if (finish_reopen(&w, &one, &pr, out, CACHE_FORMAT_FEATURES, &r) == 0) {
        CHECK(r.index.resized && r.index.box && r.index.resized[0] == 16 && r.index.resized[1] == 32 && r.index.box[2] == 16 &&
                  r.index.box[3] == 32,
              "/index/resized and /index/box read back");
        CHECK(cache_read_image_sha(&r, "/features/keys/x", back) == 1 && !memcmp(back, sha, 32), "image hash reads back");
        CHECK(!strcmp(cache_attr(&r, "patch"), "16") && !strcmp(cache_attr(&r, "ln_eps"), "9.99999997e-07") &&
                  !strcmp(cache_attr(&r, "dim"), "3") && !strcmp(cache_attr(&r, "policy"), "square480"),
              "numeric attributes read back as the text they were given: patch %s ln_eps %s dim %s",
              cache_attr(&r, "patch"), cache_attr(&r, "ln_eps"), cache_attr(&r, "dim"));
        cache_close(&r);
    }
    free(out);
    free(new_path);
}

int main(void)
{
    const char *dir = test_tmpdir("cache");
    test_cache(dir);
    test_versions(dir);
    test_partial_takeover(dir);
    test_datasets(dir);
    return test_done();
}
