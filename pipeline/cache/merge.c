/* pipeline/cache/merge.c — see merge.h.
 *
 * The steps, in order (each refuses with the offending file): open and place the shards
 * (open_shards), check their provenance agrees (check_provenance); then either verify OUT
 * (verify_merged), or rebuild the full index (merged_index), find the groups every shard holds
 * (common_groups), copy the datasets into the single run's pieces (write_pieces), write OUT with
 * the merged provenance (merged_prov), and with MERGE_REMOVE verify it and delete the shards
 * (remove_shards).
 */
#include "pipeline/cache/merge.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/cache/cache.h"
#include "pipeline/cache/derive.h"
#include "pipeline/cache/shard.h"
#include "pipeline/kc.h"
#include "pipeline/progress.h"

/* The shards given, placed by their index, and what they record about the full input. */
typedef struct shard_set {
    const char *const *paths; /* (n_files) as given */
    int n_files;
    cache_reader *files;      /* (n_files) opened from paths */
    int n;                    /* the split's shard count */
    cache_reader **by_index;  /* (n) shard i/n at [i-1] */
    const char *format;       /* the shards' format */
    int full_n, batch;        /* shard_images, shard_batch */
    const char *ids_hash;     /* shard_ids */
} shard_set;

/* What the merged cache holds, and where each image comes from. */
typedef struct merge_plan {
    cache_index ix;   /* the full index: the shards' in shard order */
    int *owner;       /* (ix.n) the shard (0-based) of each image */
    const char *top;  /* "/features" or "/masks" */
    char **groups;    /* (n_groups) the kinds or settings under top */
    int n_groups;
} merge_plan;

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

/* Opens every shard and places it by its 'shard' attribute: one split, each shard once, none
 * missing. */
static int open_shards(shard_set *s, const char *out)
{
    s->files = kc_calloc((size_t)s->n_files, sizeof *s->files);
    for (int f = 0; f < s->n_files; f++) {
        const char *path = s->paths[f];
        if (cache_open_shard(&s->files[f], path, NULL) < 0) return -1;
        const char *a = cache_attr(&s->files[f], "shard");
        kc_shard sh;
        if (!a) return kc_fail("%s: not a shard cache (no 'shard' attribute; it was written without --shard)", path);
        if (shard_parse(a, &sh) < 0) return kc_fail("%s: bad 'shard' attribute '%s'", path, a);
        if (f == 0) {
            s->n = sh.count;
            s->by_index = kc_calloc((size_t)s->n, sizeof *s->by_index);
        } else if (sh.count != s->n) {
            return kc_fail("%s: is shard %s but %s is shard %s: shards of different splits", path, a, s->paths[0],
                           cache_attr(&s->files[0], "shard"));
        }
        if (s->by_index[sh.index - 1])
            return kc_fail("%s: shard %s given twice (also %s)", path, a, s->by_index[sh.index - 1]->path);
        s->by_index[sh.index - 1] = &s->files[f];
    }
    int missing = 0;
    char list[512] = "";
    for (int i = 0; i < s->n; i++)
        if (!s->by_index[i]) {
            if (missing++ < 8)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%d/%d", missing > 1 ? ", " : "", i + 1, s->n);
        }
    if (missing)
        return kc_fail("incomplete set of shards: %d of %d missing (%s%s); nothing written to %s", missing, s->n, list,
                       missing > 8 ? ", ..." : "", out);
    return 0;
}

/* The same provenance everywhere but the attributes that describe one shard; then the shard
 * attributes of the full input (format, full_n, batch, ids_hash). */
static int check_provenance(shard_set *s)
{
    const cache_reader *ref = s->by_index[0];
    for (int i = 1; i < s->n; i++) {
        const cache_reader *r = s->by_index[i];
        for (int pass = 0; pass < 2; pass++) {
            const cache_reader *a = pass ? r : ref, *b = pass ? ref : r;
            for (int k = 0; k < a->prov.n; k++) {
                const char *key = a->prov.key[k];
                if (varies(key)) continue;
                const char *va = a->prov.value[k], *vb = prov_get(&b->prov, key);
                if (!vb)
                    return kc_fail("%s: has no attribute '%s' but %s has: shards of different stages or code versions",
                                   b->path, key, a->path);
                if (strcmp(va, vb))
                    return kc_fail("%s: attribute '%s' is '%s' but %s has '%s': shards of different inputs, settings "
                                   "or code versions",
                                   r->path, key, prov_get(&r->prov, key), ref->path, prov_get(&ref->prov, key));
            }
        }
    }
    s->format = cache_attr(ref, "format");
    s->full_n = atoi(cache_attr(ref, "shard_images") ? cache_attr(ref, "shard_images") : "-1");
    s->batch = atoi(cache_attr(ref, "shard_batch") ? cache_attr(ref, "shard_batch") : "0");
    s->ids_hash = cache_attr(ref, "shard_ids");
    if (s->full_n < 1 || s->batch < 1 || !s->ids_hash)
        return kc_fail("%s: shard attributes shard_images, shard_batch or shard_ids missing or invalid", ref->path);
    return 0;
}

/* NULL when out holds exactly the shards of s (see merge.h), else what differs. */
static char *verify_merged(const char *out, const shard_set *s)
{
    cache_reader *const *by_index = s->by_index;
    const int n = s->n;
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
    else if (m.index.n != total || total != s->full_n)
        why = kc_strfmt("%s: holds %d images, the %d shards %d (their input %d)", out, m.index.n, n, total, s->full_n);
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
        if (cache_hash_images(&m, 0, m.index.n, s->batch, hex) < 0)
            why = kc_strdup(kc_error());
        else if (!stored || strcmp(stored, hex))
            why = kc_strfmt("%s: content_hash recomputed from its data is %.12s, stored %.12s (damaged file)", out, hex,
                            stored ? stored : "(none)");
    }
    for (int i = 0, off = 0; !why && i < n; off += by_index[i]->index.n, i++) {
        const char *stored = cache_content_hash(by_index[i]);
        if (cache_hash_images(&m, off, by_index[i]->index.n, s->batch, hex) < 0)
            why = kc_strdup(kc_error());
        else if (!stored || strcmp(stored, hex))
            why = kc_strfmt("%s: its images in %s hash to %.12s, the shard's content_hash is %.12s", by_index[i]->path,
                            out, hex, stored ? stored : "(none)");
    }
    cache_close(&m);
    return why;
}

/* The plan's index and owners, checked against the full input's count and ids hash, and every
 * shard against the slice the shard rule gives it.  On failure the plan is still to be freed. */
static int merged_index(const shard_set *s, merge_plan *p)
{
    cache_index *ix = &p->ix;
    const int n = s->n;
    int total = 0;
    for (int i = 0; i < n; i++) total += s->by_index[i]->index.n;
    if (total != s->full_n)
        return kc_fail("the %d shards hold %d images, their input had %d (shards of different runs?)", n, total,
                       s->full_n);
    ix->n = total;
    ix->ids = kc_calloc((size_t)total, sizeof *ix->ids);
    ix->grid = kc_malloc((size_t)total * 2 * sizeof *ix->grid);
    ix->size = kc_malloc((size_t)total * 2 * sizeof *ix->size);
    p->owner = kc_malloc((size_t)total * sizeof *p->owner);
    int mapped = 1; /* /index/resized and /index/box (format version 2) when every shard has them */
    for (int i = 0; i < n; i++)
        if (s->by_index[i]->index.n && !s->by_index[i]->index.resized) mapped = 0;
    if (mapped) {
        ix->resized = kc_malloc((size_t)(total ? total : 1) * 2 * sizeof *ix->resized);
        ix->box = kc_malloc((size_t)(total ? total : 1) * 4 * sizeof *ix->box);
    }
    for (int i = 0, m = 0; i < n; i++) {
        const cache_index *si = &s->by_index[i]->index;
        for (int k = 0; k < si->n; k++, m++) {
            ix->ids[m] = kc_strdup(si->ids[k]);
            memcpy(ix->grid + 2 * m, si->grid + 2 * k, 2 * sizeof *ix->grid);
            memcpy(ix->size + 2 * m, si->size + 2 * k, 2 * sizeof *ix->size);
            if (mapped) {
                memcpy(ix->resized + 2 * m, si->resized + 2 * k, 2 * sizeof *ix->resized);
                memcpy(ix->box + 4 * m, si->box + 4 * k, 4 * sizeof *ix->box);
            }
            p->owner[m] = i;
        }
    }
    char got_hash[65];
    shard_ids_hash((const char *const *)ix->ids, ix->n, got_hash);
    if (strcmp(got_hash, s->ids_hash))
        return kc_fail("the images of the %d shards, in shard order, are not the list their stage was given "
                       "(shards of different runs?)", n);
    /* every shard holds exactly its slice under the shard rule */
    int *keep = kc_malloc((size_t)total * sizeof *keep), rc = 0;
    for (int i = 0; rc == 0 && i < n; i++) {
        kc_shard sh = {i + 1, n};
        shard_select(&sh, (const char *const *)ix->ids, ix->n, keep);
        for (int m = 0; rc == 0 && m < total; m++)
            if (keep[m] != (p->owner[m] == i))
                rc = kc_fail("%s: does not hold the images shard %d/%d selects (%s)", s->by_index[i]->path, i + 1, n,
                             ix->ids[m]);
    }
    free(keep);
    return rc;
}

/* The plan's groups under its top (/features: kinds, /masks: settings), the same in every
 * non-empty shard; none when every shard is empty. */
static int common_groups(const shard_set *s, merge_plan *p)
{
    const cache_reader *groups_from = NULL; /* the first non-empty shard */
    int rc = 0;
    for (int i = 0; rc == 0 && i < s->n; i++) {
        if (s->by_index[i]->index.n == 0) continue;
        char **g;
        int ng;
        if (cache_list(s->by_index[i], p->top, &g, &ng) < 0) return -1;
        if (!groups_from) {
            p->groups = g;
            p->n_groups = ng;
            groups_from = s->by_index[i];
            continue;
        }
        int same = ng == p->n_groups;
        for (int k = 0; same && k < ng; k++) same = !strcmp(g[k], p->groups[k]);
        if (!same)
            rc = kc_fail("%s: holds other groups under %s than %s (different feature kinds or settings)",
                         s->by_index[i]->path, p->top, groups_from->path);
        for (int k = 0; k < ng; k++) free(g[k]);
        free(g);
    }
    return rc;
}

/* Copies every image's datasets (the plan's groups) from its shard into the single run's pieces
 * of OUT.partial/ (w), the pieces already there kept; pr counts the images.  The writer's
 * fingerprint: the shards' contents. */
static int write_pieces(const shard_set *s, const merge_plan *p, const char *out, cache_writer *w, progress *pr)
{
    const char **parts = kc_malloc((size_t)(s->n + 3) * sizeof *parts);
    parts[0] = "kc-merge";
    parts[1] = KC_VERSION;
    parts[2] = s->format;
    for (int i = 0; i < s->n; i++) {
        const char *h = cache_content_hash(s->by_index[i]);
        parts[3 + i] = h ? h : "";
    }
    char fp[65];
    cache_fingerprint(fp, s->n + 3, parts);
    free(parts);

    const int total = p->ix.n, n_batches = (total + s->batch - 1) / s->batch;
    if (cache_writer_open(w, out, s->format, fp, n_batches) < 0) return -1;
    progress_init(pr, "merge", total, "images");
    for (int b = 0; b < n_batches; b++) {
        int i0, i1;
        if (!derive_batch_todo(w, pr, b, s->batch, total, &i0, &i1)) continue;
        cache_piece *pc = cache_piece_new(w, b);
        for (int m = i0; m < i1; m++) {
            const cache_reader *r = s->by_index[p->owner[m]];
            for (int g = 0; g < p->n_groups; g++) {
                char *dset = kc_strfmt("%s/%s/%s", p->top, p->groups[g], p->ix.ids[m]);
                int rc = cache_has(r, dset) ? cache_piece_copy(pc, r, dset) : 0;
                free(dset);
                if (rc < 0) {
                    cache_piece_abort(pc);
                    return -1;
                }
            }
            progress_add(pr, 1);
        }
        if (cache_piece_commit(pc) < 0) return -1;
    }
    return 0;
}

/* OUT's root attributes (see merge.h), in the shards' order. */
static void merged_prov(const shard_set *s, const char *out, cache_prov *prov)
{
    const cache_reader *ref = s->by_index[0];
    for (int k = 0; k < ref->prov.n; k++) {
        const char *key = ref->prov.key[k];
        if (writer_sets(key) || shard_prov_key(key)) continue;
        if (!strcmp(key, "command")) {
            char *cmd = single_run_command(ref->prov.value[k], cache_attr(ref, "shard_out"), out);
            prov_set(prov, key, cmd);
            free(cmd);
        } else if (!strcmp(key, "products")) {
            char joined[1024] = "";
            for (int i = 0; i < s->n; i++) {
                const char *v = cache_attr(s->by_index[i], "products");
                if (!v || strstr(joined, v)) continue;
                size_t len = strlen(joined);
                snprintf(joined + len, sizeof joined - len, "%s%s", len ? " | " : "", v);
            }
            prov_set(prov, key, joined);
        } else {
            prov_set(prov, key, ref->prov.value[k]);
        }
    }
}

/* After writing: verifies OUT against the shards, then deletes the shard files (closing them)
 * and their folder when it is empty.  A failed check deletes OUT and keeps the shards. */
static int remove_shards(shard_set *s, const char *out)
{
    char *why = verify_merged(out, s);
    if (why) {
        unlink(out);
        kc_fail("%s; removed %s, the shards are kept", why, out);
        free(why);
        return -1;
    }
    char *dir = kc_strdup(s->by_index[0]->path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    int rc = 0;
    for (int f = 0; rc == 0 && f < s->n_files; f++) {
        cache_close(&s->files[f]);
        if (unlink(s->paths[f]) < 0) rc = kc_fail("%s: cannot remove (%s)", s->paths[f], strerror(errno));
    }
    if (rc == 0) {
        if (slash && rmdir(dir) < 0 && errno != ENOTEMPTY && errno != EEXIST)
            kc_warn("%s: cannot remove the folder (%s)", dir, strerror(errno));
        kc_info("verified %s against its %d shard%s (count, index, content_hash); removed the shards", out, s->n, kc_s(s->n));
    }
    free(dir);
    return rc;
}

/* MERGE_WRITE and MERGE_REMOVE, once the shards agree; t0: when the merge began. */
static int write_merged(shard_set *s, const char *out, int remove, double t0)
{
    merge_plan p;
    memset(&p, 0, sizeof p);
    p.top = !strcmp(s->format, CACHE_FORMAT_MASKS) ? "/masks" : "/features";
    cache_writer w;
    memset(&w, 0, sizeof w);
    progress pr;
    cache_prov prov = {0, NULL, NULL};
    int rc = -1;
    if (merged_index(s, &p) < 0 || common_groups(s, &p) < 0 || write_pieces(s, &p, out, &w, &pr) < 0) goto done;
    merged_prov(s, out, &prov);
    if (cache_writer_finish(&w, &p.ix, &prov) < 0) goto done;
    progress_end(&pr);
    char took[32];
    progress_fmt_time(kc_now() - t0, took, sizeof took);
    kc_info("wrote %s (%d image%s from %d shard%s) in %s", out, p.ix.n, kc_s(p.ix.n), s->n, kc_s(s->n), took);
    if (remove && remove_shards(s, out) < 0) goto done;
    rc = 0;
done:
    prov_free(&prov);
    cache_writer_free(&w);
    for (int g = 0; g < p.n_groups; g++) free(p.groups[g]);
    free(p.groups);
    free(p.owner);
    cache_index_free(&p.ix);
    return rc;
}

int merge_shards(const char *out, const char *const *shards, int n_shards, merge_mode mode)
{
    double t0 = kc_now();
    for (int i = 0; i < n_shards; i++)
        if (!strcmp(shards[i], out)) return kc_fail("%s: is both the output and a shard", out);
    shard_set s;
    memset(&s, 0, sizeof s);
    s.paths = shards;
    s.n_files = n_shards;
    int rc = open_shards(&s, out) < 0 || check_provenance(&s) < 0 ? -1 : 0;
    if (rc == 0 && mode == MERGE_VERIFY) {
        char *why = verify_merged(out, &s);
        if (why) rc = kc_fail("%s", why);
        else kc_info("verified %s: %d image%s, the same data as its %d shard%s", out, s.full_n, kc_s(s.full_n), s.n, kc_s(s.n));
        free(why);
    } else if (rc == 0) {
        rc = write_merged(&s, out, mode == MERGE_REMOVE, t0);
    }
    for (int f = 0; f < s.n_files; f++) cache_close(&s.files[f]);
    free(s.files);
    free(s.by_index);
    return rc;
}
