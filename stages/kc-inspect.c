/* stages/kc-inspect.c — prints a keycut cache's provenance, counts and a few values. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/cache/cache.h"
#include "pipeline/kc.h"
#include "pipeline/opts.h"

static const char usage[] =
    "usage: kc-inspect [--values N] [--id ID] CACHE.h5\n"
    "\n"
    "Prints the provenance (root attributes), the number of images, the feature kinds or\n"
    "settings it holds, and the first values of one image (the first, or --id).\n"
    "\n"
    "example:\n"
    "  kc-inspect cache/dino/voc12-val/keys.h5\n";

int main(int argc, char **argv)
{
    kc_set_prog("kc-inspect");
    int n_values = 6;
    const char *want_id = NULL;
    const char *path = NULL;
    const opts_option options[] = {
        {"--values", .read = opts_read_atoi, .target = &n_values}, {"--id", .value = &want_id}, {0}};
    const opts_cli cli = {.usage = usage, .options = options, .syntax = OPTS_GETOPT, .args = &path, .min_args = 1,
                          .max_args = 1};
    int rc = opts_parse(&cli, argc, argv);
    if (rc < 0) kc_die();
    if (rc != OPTS_OK) exit(opts_usage(&cli, rc));
    cache_reader r;
    if (cache_open(&r, path, NULL) < 0) kc_die();
    printf("%s\n", path);
    for (int i = 0; i < r.prov.n; i++) printf("  %-16s %s\n", r.prov.key[i], r.prov.value[i]);
    printf("images: %d (first %s, grid %dx%d, size %dx%d)\n", r.index.n, r.index.ids[0], r.index.grid[0],
           r.index.grid[1], r.index.size[0], r.index.size[1]);
    int idx = 0;
    if (want_id) {
        idx = cache_index_find(&r.index, want_id);
        if (idx < 0) kc_die_msg("%s: no image with id '%s'", path, want_id);
    }
    const char *fmt = cache_attr(&r, "format");
    int is_masks = fmt && !strcmp(fmt, CACHE_FORMAT_MASKS);
    const char *top = is_masks ? "/masks" : "/features";
    char **groups;
    int ng;
    if (cache_list(&r, top, &groups, &ng) < 0) kc_die();
    printf("%s: %d %s\n", top, ng, is_masks ? "settings" : "kinds");
    for (int g = 0; g < ng; g++) {
        if (g < 8 || g == ng - 1) printf("  %s\n", groups[g]);
        else if (g == 8) printf("  ...\n");
    }
    if (ng > 0) {
        char *dset = kc_strfmt("%s/%s/%s", top, groups[0], r.index.ids[idx]);
        if (is_masks) {
            uint8_t *m;
            int rows, cols;
            if (cache_read_u8(&r, dset, &m, &rows, &cols) < 0) kc_die();
            long fg = 0;
            int maxl = 0;
            for (int i = 0; i < rows * cols; i++) {
                fg += m[i] > 0;
                if (m[i] > maxl) maxl = m[i];
            }
            float l2[8], gap[8];
            int nl = cache_read_attr_f32(&r, dset, "lambda2", l2, 8);
            int ngap = cache_read_attr_f32(&r, dset, "eigengap", gap, 8);
            int32_t deg = 0;
            cache_read_attr_i32(&r, dset, "degenerate", &deg);
            printf("%s: %dx%d, %ld foreground cells, labels up to %d, degenerate %d\n", dset, rows, cols, fg, maxl,
                   (int)deg);
            for (int i = 0; i < nl && i < ngap; i++) printf("  round %d: lambda2 %.6g eigengap %.6g\n", i + 1, l2[i], gap[i]);
            free(m);
        } else {
            float *v;
            int rows, cols;
            if (cache_read_f32(&r, dset, &v, &rows, &cols) < 0) kc_die();
            printf("%s: (%d, %d), first values:", dset, rows, cols);
            for (int i = 0; i < n_values && i < rows * cols; i++) printf(" %.6g", v[i]);
            printf("\n");
            free(v);
        }
        free(dset);
    }
    for (int g = 0; g < ng; g++) free(groups[g]);
    free(groups);
    cache_close(&r);
    return 0;
}
