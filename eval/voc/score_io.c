/* eval/voc/score_io.c — the masks cache as the scorers read it, and the end of a run (see score_io.h). */
#include "eval/voc/score_io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/voc/ledger.h"
#include "eval/voc/voc_metrics.h"
#include "pipeline/sha256.h"

int score_check_cache(const cache_reader *r, char **ids, int n, kc_policy *policy, int *patch)
{
    const char *kind = cache_attr(r, "dataset_kind");
    if (kind && !strcmp(kind, "davis"))
        return kc_fail("%s: decoded from a DAVIS dataset (%s), not from VOC images", r->path,
                       cache_attr(r, "dataset") ? cache_attr(r, "dataset") : "davis");
    const char *pol = cache_attr(r, "policy");
    if (!pol) return kc_fail("%s: no 'policy' attribute (not a masks cache keycut can score)", r->path);
    if (voc_policy_parse(pol, policy) < 0) return kc_fail_prefix("%s", r->path);
    const char *ps = cache_attr(r, "patch");
    *patch = 0;
    if (ps) {
        char *end;
        long v = strtol(ps, &end, 10);
        if (end == ps || *end || v <= 0 || v > 1024) return kc_fail("%s: bad 'patch' attribute '%s'", r->path, ps);
        *patch = (int)v;
    } else if (*policy == POLICY_NATIVE16) {
        return kc_fail("%s: native16 masks without a 'patch' attribute", r->path);
    }
    if (r->index.n != n) {
        /* name one id that differs */
        for (int i = 0; i < n; i++)
            if (cache_index_find(&r->index, ids[i]) < 0)
                return kc_fail("%s: decoded from other images than the split (%d images vs %d; split id '%s' "
                               "is not in the cache)", r->path, r->index.n, n, ids[i]);
        return kc_fail("%s: decoded from other images than the split (%d images vs %d in the split)", r->path,
                       r->index.n, n);
    }
    for (int i = 0; i < n; i++)
        if (cache_index_find(&r->index, ids[i]) < 0)
            return kc_fail("%s: decoded from other images than the split (split id '%s' is not in the cache)",
                           r->path, ids[i]);
    if (*patch > 0)
        for (int i = 0; i < n; i++) {
            int gh, gw, h = r->index.size[2 * i], w = r->index.size[2 * i + 1];
            grid_expected(*policy, *patch, w, h, &gh, &gw);
            if (gh != r->index.grid[2 * i] || gw != r->index.grid[2 * i + 1])
                return kc_fail("%s: image %s has a %dx%d grid; %s with patch %d gives %dx%d for %dx%d pixels",
                               r->path, r->index.ids[i], r->index.grid[2 * i + 1], r->index.grid[2 * i], pol,
                               *patch, gw, gh, w, h);
        }
    return 0;
}

int score_pixel_masks(const cache_reader *r)
{
    const char *v = cache_attr(r, "refine");
    return v && strcmp(v, "none");
}

int score_mask_read(const cache_reader *r, const char *setting, const char *id, int k, score_mask *m)
{
    char *d = kc_strfmt("/masks/%s/%s", setting, id);
    float v[64];
    m->labels = NULL;
    m->lambda2 = m->eigengap = NAN;
    m->degenerate = 0;
    m->knife = -1;
    int rc = cache_read_u8(r, d, &m->labels, &m->rows, &m->cols);
    const int32_t *shape = score_pixel_masks(r) ? r->index.size : r->index.grid;
    if (rc == 0 && (m->rows != shape[2 * k] || m->cols != shape[2 * k + 1]))
        rc = kc_fail("%s: %s is %dx%d, /index/%s says %dx%d", r->path, d, m->cols, m->rows,
                     score_pixel_masks(r) ? "size (refined pixel masks)" : "grid", shape[2 * k + 1], shape[2 * k]);
    if (rc == 0) rc = cache_read_attr_f32(r, d, "lambda2", v, 64);
    if (rc > 0) m->lambda2 = v[0];
    if (rc >= 0) rc = cache_read_attr_f32(r, d, "eigengap", v, 64);
    if (rc > 0) m->eigengap = v[0];
    if (rc >= 0) rc = cache_read_attr_i32(r, d, "degenerate", &m->degenerate);
    if (rc >= 0 && cache_has_attr(r, d, "knife_edge")) rc = cache_read_attr_i32(r, d, "knife_edge", &m->knife);
    free(d);
    return rc < 0 ? -1 : 0;
}

int score_write_summary(const char *sp, const kc_buf *summary, const char *out, const char *network, const char *split,
                        const char split_hash[65], int n_settings, const char *ledger)
{
    if (kc_write_file_atomic(sp, summary->s, summary->n) < 0) return -1;
    if (network) {
        char *np = kc_strfmt("%s/network", out), *nl = kc_strfmt("%s\n", network);
        if (kc_write_file_atomic(np, nl, strlen(nl)) < 0) return -1;
        free(np);
        free(nl);
    }
    /* every file of the run was left under its temporary name: now all are renamed, then the
     * ledger line follows */
    if (kc_outputs_commit() < 0) return -1;
    ledger_entry le;
    memset(&le, 0, sizeof le);
    le.split = (char *)split;
    memcpy(le.split_sha256, split_hash, 65);
    le.networks = (char *)(network ? network : "-");
    le.n_settings = n_settings;
    kc_sha256_buf_hex(summary->s, summary->n, le.summary_sha256);
    return ledger_append(ledger, &le);
}

void score_first_error_init(score_first_error *e, int n)
{
    e->i = e->n = n;
    e->msg[0] = 0;
}

void score_first_error_note(score_first_error *e, int i)
{
#pragma omp critical(score_err)
    if (i < e->i) {
        e->i = i;
        snprintf(e->msg, sizeof e->msg, "%s", kc_error());
    }
}

int score_first_error_raise(const score_first_error *e)
{
    if (e->i >= e->n) return 0;
    kc_set_error(e->msg);
    return -1;
}
