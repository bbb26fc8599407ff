/* decoders/attn_mass.c — DINO's attention-mass masks.  See attn_mass.h. */
#include "decoders/attn_mass.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/kc.h"

int attn_mass_is_setting(const char *id) { return id && strncmp(id, "attn-mass", 9) == 0; }

int attn_mass_parse(const char *id, double *m, char id_out[32])
{
    if (!attn_mass_is_setting(id)) return kc_fail("setting '%s' is not an attention-mass setting (attn-mass<m>)", id);
    const char *v = id + 9;
    char *end;
    double x = strtod(v, &end);
    if (end == v || *end || !isfinite(x) || v[0] == '+' || v[0] == '-' || v[0] == ' ')
        return kc_fail("setting '%s': the mass after attn-mass must be a number in (0, 1], e.g. attn-mass0.60", id);
    if (!(x > 0 && x <= 1))
        return kc_fail("setting '%s': the mass %g is outside (0, 1] (a share of the attention, e.g. attn-mass0.60)", id, x);
    double c = x * 100;
    if (fabs(c - floor(c + 0.5)) < 1e-9)
        snprintf(id_out, 32, "attn-mass%.2f", x);
    else
        snprintf(id_out, 32, "attn-mass%.6g", x);
    *m = x;
    return 0;
}

typedef struct wi {
    float w;
    int i;
} wi;

static int cmp_wi(const void *a, const void *b)
{
    const wi *x = a, *y = b;
    if (x->w != y->w) return x->w < y->w ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

int attn_mass_masks(const float *attn, int heads, int G, double m, uint8_t *masks)
{
    wi *order = kc_malloc((size_t)G * sizeof *order);
    int knife = 0;
    const double thr = 1.0 - m;
    for (int h = 0; h < heads; h++) {
        const float *a = attn + (size_t)h * G;
        uint8_t *out = masks + (size_t)h * G;
        double sum = 0;
        for (int g = 0; g < G; g++) {
            order[g].w = a[g];
            order[g].i = g;
            sum += a[g];
        }
        if (!(sum > 0)) {
            free(order);
            return kc_fail("head %d: the attention weights sum to %g (not a softmax)", h, sum);
        }
        qsort(order, (size_t)G, sizeof *order, cmp_wi);
        double c = 0;
        int edge = 0;
        for (int k = 0; k < G; k++) {
            c += order[k].w / sum;
            out[order[k].i] = c > thr;
            if (fabs(c - thr) <= ATTN_KNIFE) edge = 1;
        }
        knife += edge;
    }
    free(order);
    return knife;
}
