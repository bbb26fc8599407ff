/* stages/kc-merge.c — join the shard caches of one stage into the cache its single run writes.
 *
 *   kc-merge [--remove-shards] OUT.h5 SHARD.h5...
 *   kc-merge --verify OUT.h5 SHARD.h5...
 *
 * The shards (kc-extract / kc-center / kc-decode --shard i/n, any order on the command line) must
 * be exactly 1/n .. n/n, each once, with the same provenance apart from `command`, `created`,
 * `content_hash` and the shard attributes (pipeline/cache/shard.h): the same format, code version,
 * inputs, weights and settings.  Anything else is refused with the offending file and attribute.
 *
 * Identity with the single run.  The merged index is the shards' indexes concatenated (shards are
 * contiguous slices, in input order), checked against the full list's count and hash that every
 * shard records.  The datasets are regrouped into the single run's pieces (shard_batch images per
 * piece) and written through the cache's own crash-safe writer (OUT.partial/, then OUT), so
 * datasets, values, dataset attributes, /index and `content_hash` equal the single run's.  Root
 * attributes: those of the shards without the shard ones; `command` is the single-run-equivalent
 * command: shard 1's command without `--shard i/n`, with its output path replaced by OUT — equal
 * to the single run's command when both were given the same way.  Only `created` differs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/cache/cache.h"
#include "pipeline/cache/derive.h"
#include "pipeline/kc.h"
#include "pipeline/progress.h"
#include "pipeline/cache/shard.h"

static void usage(int status)
{
    fprintf(status ? stderr : stdout,
            "usage: kc-merge [--remove-shards] OUT.h5 SHARD.h5...\n"
            "       kc-merge --verify OUT.h5 SHARD.h5...\n"
            "\n"
            "Joins the n shard caches of one stage run with --shard i/n (1/n .. n/n, each exactly once,\n"
            "in any order) into OUT, the cache the stage writes without --shard: the same datasets,\n"
            "values, attributes and content_hash; only the creation time differs, and `command` is the\n"
            "single-run-equivalent command (--shard dropped, the shard's path replaced by OUT).  Shards of\n"
            "different inputs, settings or code versions, or an incomplete or duplicated set, are refused.\n"
            "Written atomically; an interrupted merge resumes from OUT.partial/.\n"
            "\n"
            "  --verify          only check an existing OUT against the shards: image count, index, OUT's\n"
            "                    content_hash recomputed from its data, and each shard's content_hash\n"
            "                    recomputed from OUT's slice of its images\n"
            "  --remove-shards   merge, run that check, then delete the shard files (and their folder when\n"
            "                    empty); if the check fails, OUT is deleted and the shards are kept\n"
            "\n"
            "example:\n"
            "  for i in 1 2 3 4; do kc-extract --model color --dataset voc:/data/VOC2012:val --shard $i/4 \\\n"
            "      --out keys.h5.shards/$i-of-4.h5; done\n"
            "  kc-merge keys.h5 keys.h5.shards/*-of-4.h5\n");
    exit(status);
}

/* Root attributes that may differ between shards. */
static int varies(const char *key)
{
    return !strcmp(key, "command") || !strcmp(key, "created") || !strcmp(key, "content_hash") ||
           !strcmp(key, "shard") || !strcmp(key, "shard_out") ||
           !strcmp(key, "products"); /* shards may run on different CPUs: the distinct values, joined */
}

/* Root attributes the writer adds itself. */
static int writer_sets(const char *key)
{
    return !strcmp(key, "format") || !strcmp(key, "format_version") || !strcmp(key, "code_version") ||
           !strcmp(key, "created") || !strcmp(key, "content_hash");
}

/* shard 1's command without "--shard i/n" (or --shard=i/n), its output path replaced by out. */
static char *single_run_command(const char *cmd, const char *shard_out, const char *out)
{
    char *copy = kc_strdup(cmd ? cmd : "");
    size_t cap = strlen(copy) + strlen(out) * 4 + 16;
    char *res = kc_calloc(cap, 1);
    int skip_next = 0, first = 1;
    for (char *tok = strtok(copy, " "); tok; tok = strtok(NULL, " ")) {
        if (skip_next) {
            skip_next = 0;
            continue;
        }
        if (!strcmp(tok, "--shard")) {
            skip_next = 1;
            continue;
        }
        if (!strncmp(tok, "--shard=", 8)) continue;
        const char *t = shard_out && !strcmp(tok, shard_out) ? out : tok;
        if (shard_out && !strncmp(tok, "--out=", 6) && !strcmp(tok + 6, shard_out)) {
            if (!first) strcat(res, " ");
            strcat(res, "--out=");
            strcat(res, out);
            first = 0;
            continue;
        }
        if (strlen(res) + strlen(t) + 2 > cap) {
            cap = 2 * (cap + strlen(t));
            res = kc_realloc(res, cap);
        }
        if (!first) strcat(res, " ");
        strcat(res, t);
        first = 0;
    }
    free(copy);
    return res;
}

/* NULL when out holds exactly the shards by_index[0..n-1] (see the header), else what differs. */
static char *verify_merged(const char *out, cache_reader *const *by_index, int n, int full_n, int batch)
{
    cache_reader m;
    if (cache_open_shard(&m, out, NULL) < 0) return kc_strdup(kc_error());
    char *why = NULL;
    int total = 0;
    for (int i = 0; i < n; i++) total += by_index[i]->index.n;
    const char *fm = cache_attr(&m, "format"), *fs = cache_attr(by_index[0], "format");
    if (cache_attr(&m, "shard"))
        why = kc_strfmt("%s: is itself a shard (%s), not a merged cache", out, cache_attr(&m, "shard"));
    else if (!fm || !fs || strcmp(fm, fs))
        why = kc_strfmt("%s: format '%s', the shards' is '%s'", out, fm ? fm : "?", fs ? fs : "?");
    else if (m.index.n != total || total != full_n)
        why = kc_strfmt("%s: holds %d images, the %d shards %d (their input %d)", out, m.index.n, n, total, full_n);
    for (int i = 0, off = 0; !why && i < n; off += by_index[i]->index.n, i++) {
        const cache_index *si = &by_index[i]->index;
        for (int k = 0; !why && k < si->n; k++)
            if (strcmp(m.index.ids[off + k], si->ids[k]) || memcmp(m.index.grid + 2 * (off + k), si->grid + 2 * k, 8) ||
                memcmp(m.index.size + 2 * (off + k), si->size + 2 * k, 8))
                why = kc_strfmt("%s: image %d (%s) differs from image %d of %s", out, off + k + 1, m.index.ids[off + k],
                                k + 1, by_index[i]->path);
    }
    char hex[65];
    if (!why) {
        const char *stored = cache_content_hash(&m);
        if (cache_hash_images(&m, 0, m.index.n, batch, hex) < 0)
            why = kc_strdup(kc_error());
        else if (!stored || strcmp(stored, hex))
            why = kc_strfmt("%s: content_hash recomputed from its data is %.12s, stored %.12s (damaged file)", out, hex,
                            stored ? stored : "(none)");
    }
    for (int i = 0, off = 0; !why && i < n; off += by_index[i]->index.n, i++) {
        const char *stored = cache_content_hash(by_index[i]);
        if (cache_hash_images(&m, off, by_index[i]->index.n, batch, hex) < 0)
            why = kc_strdup(kc_error());
        else if (!stored || strcmp(stored, hex))
            why = kc_strfmt("%s: its images in %s hash to %.12s, the shard's content_hash is %.12s", by_index[i]->path,
                            out, hex, stored ? stored : "(none)");
    }
    cache_close(&m);
    return why;
}

int main(int argc, char **argv)
{
    kc_set_prog("kc-merge");
    kc_set_cmdline(argc, argv);
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) usage(0);
    int verify_only = 0, remove_shards = 0;
    while (argc > 1 && (!strcmp(argv[1], "--verify") || !strcmp(argv[1], "--remove-shards"))) {
        if (!strcmp(argv[1], "--verify")) verify_only = 1;
        else remove_shards = 1;
        argv++;
        argc--;
    }
    if (verify_only && remove_shards) kc_die_msg("--verify and --remove-shards exclude each other");
    if (argc < 3) usage(2);
    for (int i = 1; i < argc; i++)
        if (argv[i][0] == '-') kc_die_msg("unknown option %s (see --help)", argv[i]);
    const char *out = argv[1];
    int n_files = argc - 2;
    double t0 = kc_now();
    for (int i = 0; i < n_files; i++)
        if (!strcmp(argv[2 + i], out)) kc_die_msg("%s: is both the output and a shard", out);

    /* open and place every shard */
    cache_reader *files = kc_calloc((size_t)n_files, sizeof *files);
    int n = 0;
    cache_reader **by_index = NULL; /* (n) shard i/n at [i-1] */
    for (int f = 0; f < n_files; f++) {
        const char *path = argv[2 + f];
        if (cache_open_shard(&files[f], path, NULL) < 0) kc_die();
        const char *s = cache_attr(&files[f], "shard");
        kc_shard sh;
        if (!s) kc_die_msg("%s: not a shard cache (no 'shard' attribute; it was written without --shard)", path);
        if (shard_parse(s, &sh) < 0) kc_die_msg("%s: bad 'shard' attribute '%s'", path, s);
        if (f == 0) {
            n = sh.count;
            by_index = kc_calloc((size_t)n, sizeof *by_index);
        } else if (sh.count != n) {
            kc_die_msg("%s: is shard %s but %s is shard %s: shards of different splits", path, s, argv[2],
                       cache_attr(&files[0], "shard"));
        }
        if (by_index[sh.index - 1])
            kc_die_msg("%s: shard %s given twice (also %s)", path, s, by_index[sh.index - 1]->path);
        by_index[sh.index - 1] = &files[f];
    }
    {
        int missing = 0;
        char list[512] = "";
        for (int i = 0; i < n; i++)
            if (!by_index[i]) {
                if (missing++ < 8) snprintf(list + strlen(list), sizeof list - strlen(list), "%s%d/%d", missing > 1 ? ", " : "", i + 1, n);
            }
        if (missing)
            kc_die_msg("incomplete set of shards: %d of %d missing (%s%s); nothing written to %s", missing, n, list,
                       missing > 8 ? ", ..." : "", out);
    }

    /* the same provenance everywhere but the attributes that describe one shard */
    const cache_reader *ref = by_index[0];
    for (int i = 1; i < n; i++) {
        const cache_reader *r = by_index[i];
        for (int pass = 0; pass < 2; pass++) {
            const cache_reader *a = pass ? r : ref, *b = pass ? ref : r;
            for (int k = 0; k < a->prov.n; k++) {
                const char *key = a->prov.key[k];
                if (varies(key)) continue;
                const char *va = a->prov.value[k], *vb = prov_get(&b->prov, key);
                if (!vb)
                    kc_die_msg("%s: has no attribute '%s' but %s has: shards of different stages or code versions",
                               b->path, key, a->path);
                if (strcmp(va, vb))
                    kc_die_msg("%s: attribute '%s' is '%s' but %s has '%s': shards of different inputs, settings or "
                               "code versions",
                               r->path, key, prov_get(&r->prov, key), ref->path, prov_get(&ref->prov, key));
            }
        }
    }
    const char *format = cache_attr(ref, "format");
    int full_n = atoi(cache_attr(ref, "shard_images") ? cache_attr(ref, "shard_images") : "-1");
    int batch = atoi(cache_attr(ref, "shard_batch") ? cache_attr(ref, "shard_batch") : "0");
    const char *ids_hash = cache_attr(ref, "shard_ids");
    if (full_n < 1 || batch < 1 || !ids_hash)
        kc_die_msg("%s: shard attributes shard_images, shard_batch or shard_ids missing or invalid", ref->path);

    if (verify_only) {
        char *why = verify_merged(out, by_index, n, full_n, batch);
        if (why) kc_die_msg("%s", why);
        kc_info("verified %s: %d images, the same data as its %d shards", out, full_n, n);
        for (int f = 0; f < n_files; f++) cache_close(&files[f]);
        free(files);
        free(by_index);
        return 0;
    }

    /* the full index: the shards' indexes in shard order */
    cache_index ix = {0, NULL, NULL, NULL};
    int total = 0;
    for (int i = 0; i < n; i++) total += by_index[i]->index.n;
    if (total != full_n)
        kc_die_msg("the %d shards hold %d images, their input had %d (shards of different runs?)", n, total, full_n);
    ix.n = total;
    ix.ids = kc_malloc((size_t)total * sizeof *ix.ids);
    ix.grid = kc_malloc((size_t)total * 2 * sizeof *ix.grid);
    ix.size = kc_malloc((size_t)total * 2 * sizeof *ix.size);
    int *owner = kc_malloc((size_t)total * sizeof *owner); /* shard (0-based) of each image */
    for (int i = 0, m = 0; i < n; i++) {
        const cache_index *si = &by_index[i]->index;
        for (int k = 0; k < si->n; k++, m++) {
            ix.ids[m] = kc_strdup(si->ids[k]);
            memcpy(ix.grid + 2 * m, si->grid + 2 * k, 2 * sizeof *ix.grid);
            memcpy(ix.size + 2 * m, si->size + 2 * k, 2 * sizeof *ix.size);
            owner[m] = i;
        }
    }
    char got_hash[65];
    shard_ids_hash((const char *const *)ix.ids, ix.n, got_hash);
    if (strcmp(got_hash, ids_hash))
        kc_die_msg("the images of the %d shards, in shard order, are not the list their stage was given "
                   "(shards of different runs?)", n);
    /* every shard holds exactly its slice under the shard rule */
    int *keep = kc_malloc((size_t)total * sizeof *keep);
    for (int i = 0; i < n; i++) {
        kc_shard sh = {i + 1, n};
        shard_select(&sh, (const char *const *)ix.ids, ix.n, keep);
        for (int m = 0; m < total; m++)
            if (keep[m] != (owner[m] == i))
                kc_die_msg("%s: does not hold the images shard %d/%d selects (%s)", by_index[i]->path, i + 1, n, ix.ids[m]);
    }
    free(keep);

    /* the groups under /features (kinds) or /masks (settings): the same in every non-empty shard */
    int is_masks = !strcmp(format, CACHE_FORMAT_MASKS);
    const char *top = is_masks ? "/masks" : "/features";
    char **groups = NULL;
    int n_groups = -1;
    const cache_reader *groups_from = NULL;
    for (int i = 0; i < n; i++) {
        if (by_index[i]->index.n == 0) continue;
        char **g;
        int ng;
        if (cache_list(by_index[i], top, &g, &ng) < 0) kc_die();
        if (n_groups < 0) {
            groups = g;
            n_groups = ng;
            groups_from = by_index[i];
            continue;
        }
        int same = ng == n_groups;
        for (int k = 0; same && k < ng; k++) same = !strcmp(g[k], groups[k]);
        if (!same)
            kc_die_msg("%s: holds other groups under %s than %s (different feature kinds or settings)", by_index[i]->path,
                       top, groups_from->path);
        for (int k = 0; k < ng; k++) free(g[k]);
        free(g);
    }
    if (n_groups < 0) n_groups = 0;

    /* fingerprint of the merge: the shards' contents */
    const char **parts = kc_malloc((size_t)(n + 3) * sizeof *parts);
    parts[0] = "kc-merge";
    parts[1] = KC_VERSION;
    parts[2] = format;
    for (int i = 0; i < n; i++) {
        const char *h = cache_content_hash(by_index[i]);
        parts[3 + i] = h ? h : "";
    }
    char fp[65];
    cache_fingerprint(fp, n + 3, parts);
    free(parts);

    int n_batches = (total + batch - 1) / batch;
    cache_writer w;
    if (cache_writer_open(&w, out, format, fp, n_batches) < 0) kc_die();
    progress pr;
    progress_init(&pr, "merge", total, "images");
    for (int b = 0; b < n_batches; b++) {
        int i0, i1;
        if (!derive_batch_todo(&w, &pr, b, batch, total, &i0, &i1)) continue;
        cache_piece *pc = cache_piece_new(&w, b);
        for (int m = i0; m < i1; m++) {
            const cache_reader *r = by_index[owner[m]];
            for (int g = 0; g < n_groups; g++) {
                char *dset = kc_strfmt("%s/%s/%s", top, groups[g], ix.ids[m]);
                if (cache_has(r, dset) && cache_piece_copy(pc, r, dset) < 0) {
                    cache_piece_abort(pc);
                    kc_die();
                }
                free(dset);
            }
            progress_add(&pr, 1);
        }
        if (cache_piece_commit(pc) < 0) kc_die();
    }

    cache_prov prov = {0, NULL, NULL};
    for (int k = 0; k < ref->prov.n; k++) {
        const char *key = ref->prov.key[k];
        if (writer_sets(key) || shard_prov_key(key)) continue;
        if (!strcmp(key, "command")) {
            char *cmd = single_run_command(ref->prov.value[k], cache_attr(ref, "shard_out"), out);
            prov_set(&prov, key, cmd);
            free(cmd);
        } else if (!strcmp(key, "products")) {
            char joined[1024] = "";
            for (int i = 0; i < n; i++) {
                const char *v = cache_attr(by_index[i], "products");
                if (!v || strstr(joined, v)) continue;
                size_t len = strlen(joined);
                snprintf(joined + len, sizeof joined - len, "%s%s", len ? " | " : "", v);
            }
            prov_set(&prov, key, joined);
        } else {
            prov_set(&prov, key, ref->prov.value[k]);
        }
    }
    if (cache_writer_finish(&w, &ix, &prov) < 0) kc_die();
    progress_end(&pr);
    char took[32];
    progress_fmt_time(kc_now() - t0, took, sizeof took);
    kc_info("wrote %s (%d images from %d shards) in %s", out, total, n, took);
    if (remove_shards) {
        char *why = verify_merged(out, by_index, n, full_n, batch);
        if (why) {
            unlink(out);
            kc_die_msg("%s; removed %s, the shards are kept", why, out);
        }
        char *dir = kc_strdup(by_index[0]->path);
        char *slash = strrchr(dir, '/');
        if (slash) *slash = 0;
        for (int f = 0; f < n_files; f++) {
            cache_close(&files[f]);
            if (unlink(argv[2 + f]) < 0) kc_die_msg("%s: cannot remove (%s)", argv[2 + f], strerror(errno));
        }
        n_files = 0;
        if (slash && rmdir(dir) < 0 && errno != ENOTEMPTY && errno != EEXIST)
            kc_warn("%s: cannot remove the folder (%s)", dir, strerror(errno));
        kc_info("verified %s against its %d shards (count, index, content_hash); removed the shards", out, n);
        free(dir);
    }

    prov_free(&prov);
    cache_writer_free(&w);
    for (int g = 0; g < n_groups; g++) free(groups[g]);
    free(groups);
    free(owner);
    cache_index_free(&ix);
    for (int f = 0; f < n_files; f++) cache_close(&files[f]);
    free(files);
    free(by_index);
    return 0;
}
