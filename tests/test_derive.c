/* tests/test_derive.c — pipeline/cache/derive.h, the frame kc-center and kc-decode share: opening an
 * input cache (a shard cache refused under --shard), the shard slice and the full input's id hash
 * (against a sha256 of the ids written out here), the inherited provenance (reserved and shard
 * attributes dropped, command last), the batches still to write on a resumed run, and
 * the shard attributes of the finished cache. */
#include <stdint.h>

#include "pipeline/cache/cache.h"
#include "pipeline/cache/derive.h"
#include "pipeline/kc.h"
#include "pipeline/sha256.h"
#include "tests/test.h"

enum { N_IMG = 6 };

static const char *const IDS[N_IMG] = {"seqA/00000", "seqA/00001", "seqB/00000", "seqB/00001", "seqC/00000", "seqC/00001"};

/* A features cache of the six images (one piece each), with the given root attributes. */
static void write_source(const char *path, const char *const *prov_kv, int n_kv)
{
    cache_writer w;
    CHECK(cache_writer_open(&w, path, CACHE_FORMAT_FEATURES, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
                            N_IMG) == 0,
          "open %s: %s", path, kc_error());
    for (int i = 0; i < N_IMG; i++) {
        cache_piece *p = cache_piece_new(&w, i);
        float v[2] = {(float)i, 0.5f};
        int64_t dims[2] = {1, 2};
        char *d = kc_strfmt("/features/keys/%s", IDS[i]);
        CHECK(cache_piece_put_f32(p, d, v, 2, dims) == 0, "put: %s", kc_error());
        CHECK(cache_piece_commit(p) == 0, "commit: %s", kc_error());
        free(d);
    }
    cache_index ix = {N_IMG, kc_malloc(N_IMG * sizeof(char *)), kc_malloc(2 * N_IMG * sizeof(int32_t)),
                      kc_malloc(2 * N_IMG * sizeof(int32_t)), NULL, NULL};
    for (int i = 0; i < N_IMG; i++) {
        ix.ids[i] = kc_strdup(IDS[i]);
        ix.grid[2 * i] = 1;
        ix.grid[2 * i + 1] = 1;
        ix.size[2 * i] = ix.size[2 * i + 1] = 16;
    }
    cache_prov prov = {0, NULL, NULL};
    for (int k = 0; k < n_kv; k++) prov_set(&prov, prov_kv[2 * k], prov_kv[2 * k + 1]);
    CHECK(cache_writer_finish(&w, &ix, &prov) == 0, "finish %s: %s", path, kc_error());
    cache_writer_free(&w);
    prov_free(&prov);
    cache_index_free(&ix);
}

int main(int argc, char **argv)
{
    kc_set_prog("test_derive");
    kc_set_cmdline(argc, argv);
    setenv("KC_QUIET", "1", 1);
    const char *dir = test_tmpdir("derive");

    /* an input with attributes of every sort: stage ones, reserved ones the writer adds (format,
     * created, content_hash, ...), a command, and stale shard attributes (not "shard" itself) */
    char *src = kc_strfmt("%s/src.h5", dir);
    const char *kv[] = {"policy", "short480", "shard_out", "elsewhere.h5", "network", "dino",
                        "shard_images", "99", "command", "kc-extract --old"};
    write_source(src, kv, 5);
    /* a shard cache: refused as the input of a sharded run, read by an unsharded one */
    char *shard_src = kc_strfmt("%s/shard.h5", dir);
    const char *kv_shard[] = {"policy", "short480", "shard", "1/2"};
    write_source(shard_src, kv_shard, 2);

    kc_shard none = KC_SHARD_NONE, two_of_three;
    CHECK(shard_parse("2/3", &two_of_three) == 0, "parse 2/3");
    derive_input in;
    CHECK(derive_open(&in, shard_src, CACHE_FORMAT_FEATURES, &two_of_three) < 0 && strstr(kc_error(), "shard.h5") &&
              strstr(kc_error(), "is shard 1/2"),
          "a shard cache under --shard: %s", kc_error());
    cache_close(&in.r);
    CHECK(derive_open(&in, shard_src, CACHE_FORMAT_FEATURES, &none) == 0, "a shard cache, unsharded: %s", kc_error());
    cache_close(&in.r);
    CHECK(derive_open(&in, src, CACHE_FORMAT_MASKS, &none) < 0 && strstr(kc_error(), "src.h5"),
          "wrong format refused: %s", kc_error());

    CHECK(derive_open(&in, src, CACHE_FORMAT_FEATURES, &two_of_three) == 0, "open: %s", kc_error());
    CHECK(strlen(in.hash) == 64 && !strcmp(in.hash, cache_attr(&in.r, "content_hash")), "hash '%s'", in.hash);

    /* the slice: units seqA, seqB, seqC; shard 2 of 3 is seqB */
    derive_slice(&in);
    kc_buf ids = {0};
    for (int i = 0; i < N_IMG; i++) {
        kc_buf_printf(&ids, "%s", IDS[i]);
        kc_buf_printf(&ids, "%c", 0);
    }
    char want_ids[65];
    kc_sha256_buf_hex(ids.s, ids.n, want_ids);
    free(ids.s);
    CHECK(in.full_n == N_IMG, "full_n %d", in.full_n);
    CHECK(!strcmp(in.full_ids, want_ids), "full ids hash %s, expected %s", in.full_ids, want_ids);
    CHECK(in.r.index.n == 2 && !strcmp(in.r.index.ids[0], "seqB/00000") && !strcmp(in.r.index.ids[1], "seqB/00001"),
          "slice: %d images from %s", in.r.index.n, in.r.index.n ? in.r.index.ids[0] : "-");

    /* the inherited provenance: stage attributes in their order, then this run's command */
    cache_prov prov = {0, NULL, NULL};
    derive_prov(&prov, &in);
    CHECK(prov.n == 3 && prov_get(&prov, "policy") && !strcmp(prov.key[2], "command"),
          "%d attributes (expected policy, network, then command), last '%s'", prov.n, prov.n ? prov.key[prov.n - 1] : "-");
    CHECK(prov_get(&prov, "command") && !strcmp(prov_get(&prov, "command"), kc_cmdline()), "command is this run's: %s",
          prov_get(&prov, "command") ? prov_get(&prov, "command") : "(none)");
    CHECK(prov_get(&prov, "network") && !strcmp(prov_get(&prov, "network"), "dino"), "network kept");
    prov_set(&prov, "centered", "keys");

    /* batches of 2 over 5 images: [0, 2), [2, 4) held already, [4, 5) */
    char *out = kc_strfmt("%s/out.h5", dir);
    cache_writer w;
    const char *fp = "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210";
    CHECK(cache_writer_open(&w, out, CACHE_FORMAT_FEATURES, fp, 3) == 0, "open out: %s", kc_error());
    cache_piece *p = cache_piece_new(&w, 1);
    CHECK(cache_piece_commit(p) == 0, "commit: %s", kc_error());
    progress pg;
    progress_init(&pg, "test", 5, "images");
    int todo[3], i0[3], i1[3];
    for (int b = 0; b < 3; b++) todo[b] = derive_batch_todo(&w, &pg, b, 2, 5, &i0[b], &i1[b]);
    CHECK(todo[0] == 1 && i0[0] == 0 && i1[0] == 2, "batch 0: todo %d [%d, %d)", todo[0], i0[0], i1[0]);
    CHECK(todo[1] == 0 && i0[1] == 2 && i1[1] == 4, "batch 1 (held): todo %d [%d, %d)", todo[1], i0[1], i1[1]);
    CHECK(todo[2] == 1 && i0[2] == 4 && i1[2] == 5, "batch 2 (short): todo %d [%d, %d)", todo[2], i0[2], i1[2]);
    CHECK(pg.done == 2 && pg.start_done == 2, "progress: %ld done, %ld resumed (expected 2, 2)", pg.done, pg.start_done);
    progress_end(&pg);
    for (int b = 0; b < 3; b += 2) CHECK(cache_piece_commit(cache_piece_new(&w, b)) == 0, "commit %d: %s", b, kc_error());

    /* finish: this run's shard attributes, after what the stage added */
    CHECK(derive_finish(&in, &w, &prov, 2, out) == 0, "finish: %s", kc_error());
    cache_reader r;
    CHECK(cache_open(&r, out, CACHE_FORMAT_FEATURES) == 0, "reopen: %s", kc_error());
    const char *want[][2] = {{"policy", "short480"}, {"network", "dino"}, {"centered", "keys"}, {"shard", "2/3"},
                             {"shard_images", "6"},  {"shard_ids", want_ids}, {"shard_batch", "2"}, {"shard_out", out}};
    for (int k = 0; k < 8; k++) {
        const char *got = cache_attr(&r, want[k][0]);
        CHECK(got && !strcmp(got, want[k][1]), "%s = '%s', expected '%s'", want[k][0], got ? got : "(none)", want[k][1]);
    }
    CHECK(!strcmp(cache_attr(&r, "command"), kc_cmdline()), "command written: %s", cache_attr(&r, "command"));
    CHECK(r.index.n == 2 && !strcmp(r.index.ids[1], "seqB/00001"), "index is the slice");
    cache_close(&r);

    free(src);
    free(shard_src);
    free(out);
    return test_done();
}
