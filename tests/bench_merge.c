/* tests/bench_merge.c — synthetic shard caches for tests/bench_merge.sh, and a copy baseline.
 *
 *   bench_merge make DIR N PER [TOK DIM]   writes DIR/s<k>.h5, k = 1..N: the shards k/N of one
 *                                          features cache of N*PER images (ids b000001...), each
 *                                          /features/keys/<id> float32 (TOK, DIM), written with the
 *                                          cache library as kc-extract --shard k/N writes them
 *                                          (same root and shard attributes, pieces of 64 images)
 *   bench_merge copy OUT SHARD.h5...       the floor kc-merge is compared with: reads every dataset
 *                                          of every shard and writes it into one plain HDF5 file
 *                                          (no checks, no pieces, no index, no hashing)
 * Both print the seconds they took on stdout.
 */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/cache/cache.h"
#include "pipeline/kc.h"
#include "pipeline/cache/shard.h"

#define BATCH 64

static int make_shards(const char *dir, int n_shards, int per, int tok, int dim)
{
    int total = n_shards * per;
    char **ids = kc_malloc((size_t)total * sizeof *ids);
    for (int i = 0; i < total; i++) ids[i] = kc_strfmt("b%06d", i + 1);
    char ids_hash[65];
    shard_ids_hash((const char *const *)ids, total, ids_hash);
    int *keep = kc_malloc((size_t)total * sizeof *keep);
    float *data = kc_malloc((size_t)tok * dim * sizeof *data);
    if (kc_mkdirs(dir) < 0) return -1;
    for (int k = 1; k <= n_shards; k++) {
        kc_shard sh = {k, n_shards};
        int n = shard_select(&sh, (const char *const *)ids, total, keep);
        cache_index ix = {n, kc_malloc((size_t)(n ? n : 1) * sizeof(char *)),
                          kc_malloc((size_t)(n ? n : 1) * 2 * sizeof(int32_t)),
                          kc_malloc((size_t)(n ? n : 1) * 2 * sizeof(int32_t)), NULL, NULL};
        for (int i = 0, m = 0; i < total; i++) {
            if (!keep[i]) continue;
            ix.ids[m] = ids[i];
            ix.grid[2 * m] = 4, ix.grid[2 * m + 1] = (tok - 1) / 4;
            ix.size[2 * m] = 64, ix.size[2 * m + 1] = 16 * ((tok - 1) / 4);
            m++;
        }
        char *out = kc_strfmt("%s/s%d.h5", dir, k);
        char shard_s[32], fp[65];
        const char *parts[] = {"bench_merge", ids_hash, shard_str(&sh, shard_s)};
        cache_fingerprint(fp, 3, parts);
        int n_batches = (n + BATCH - 1) / BATCH;
        cache_writer w;
        if (cache_writer_open(&w, out, CACHE_FORMAT_FEATURES, fp, n_batches) < 0) return -1;
        for (int b = 0; b < n_batches; b++) {
            cache_piece *pc = cache_piece_new(&w, b);
            for (int m = b * BATCH; m < n && m < (b + 1) * BATCH; m++) {
                for (int j = 0; j < tok * dim; j++) data[j] = (float)((m * 131 + j * 7 + k) % 1000) * 1e-3f;
                char *dset = kc_strfmt("/features/keys/%s", ix.ids[m]);
                int64_t dims[2] = {tok, dim};
                int rc = cache_piece_put_f32(pc, dset, data, 2, dims);
                free(dset);
                if (rc < 0) {
                    cache_piece_abort(pc);
                    return -1;
                }
            }
            if (cache_piece_commit(pc) < 0) return -1;
        }
        cache_prov prov = {0, NULL, NULL};
        prov_set(&prov, "command", "bench_merge make");
        prov_setf(&prov, "arch", "synthetic tok=%d dim=%d", tok, dim);
        prov_set(&prov, "feature_kinds", "keys");
        prov_setf(&prov, "dim", "%d", dim);
        prov_set(&prov, "dataset", "synthetic");
        shard_prov(&sh, &prov, ids_hash, total, BATCH, out);
        int rc = cache_writer_finish(&w, &ix, &prov);
        prov_free(&prov);
        cache_writer_free(&w);
        free(out);
        free(ix.ids); /* the strings belong to ids */
        free(ix.grid);
        free(ix.size);
        if (rc < 0) return -1;
    }
    for (int i = 0; i < total; i++) free(ids[i]);
    free(ids);
    free(keep);
    free(data);
    return 0;
}

static int copy_baseline(const char *out, int n_files, char **files)
{
    hid_t fo = H5Fcreate(out, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (fo < 0) return kc_fail("%s: cannot create", out);
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    int rc = 0;
    for (int f = 0; f < n_files && !rc; f++) {
        cache_reader r;
        if (cache_open(&r, files[f], NULL) < 0) {
            rc = -1;
            break;
        }
        for (int m = 0; m < r.index.n && !rc; m++) {
            char *dset = kc_strfmt("/features/keys/%s", r.index.ids[m]);
            float *data = NULL;
            int rows = 0, cols = 0;
            if (cache_read_f32(&r, dset, &data, &rows, &cols) < 0) {
                rc = -1;
            } else {
                hsize_t dims[2] = {(hsize_t)rows, (hsize_t)cols};
                hid_t sp = H5Screate_simple(2, dims, NULL);
                hid_t d = H5Dcreate2(fo, dset, H5T_NATIVE_FLOAT, sp, lcpl, H5P_DEFAULT, H5P_DEFAULT);
                if (d < 0 || H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
                    rc = kc_fail("%s: cannot write %s", out, dset);
                if (d >= 0) H5Dclose(d);
                H5Sclose(sp);
            }
            free(data);
            free(dset);
        }
        cache_close(&r);
    }
    H5Pclose(lcpl);
    if (H5Fclose(fo) < 0 && !rc) rc = kc_fail("%s: cannot close", out);
    return rc;
}

int main(int argc, char **argv)
{
    kc_set_prog("bench_merge");
    double t0 = kc_now();
    if (argc >= 5 && !strcmp(argv[1], "make")) {
        int n = atoi(argv[3]), per = atoi(argv[4]);
        int tok = argc > 5 ? atoi(argv[5]) : 17, dim = argc > 6 ? atoi(argv[6]) : 64;
        if (n < 1 || per < 1 || tok < 2 || dim < 1) kc_die_msg("make: bad N, PER, TOK or DIM");
        if (make_shards(argv[2], n, per, tok, dim) < 0) kc_die();
    } else if (argc >= 4 && !strcmp(argv[1], "copy")) {
        if (copy_baseline(argv[2], argc - 3, argv + 3) < 0) kc_die();
    } else {
        fprintf(stderr, "usage: bench_merge make DIR N PER [TOK DIM] | bench_merge copy OUT SHARD.h5...\n");
        return 2;
    }
    printf("%.2f\n", kc_now() - t0);
    return 0;
}
