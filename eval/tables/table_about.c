/* eval/tables/table_about.c — the line that says what a table is of.  See table_about.h. */
#include "eval/tables/table_about.h"

#include <string.h>

#include "pipeline/kc.h"

const char *table_refine_label(const char *refine)
{
    if (!refine) return NULL;
    if (!strcmp(refine, "crf")) return "MaskCut CRF";
    if (!strcmp(refine, "bs")) return "TokenCut BS";
    return NULL;
}

int table_read_refine(const opts_option *opt, const char *value)
{
    if (strcmp(value, "none") && strcmp(value, "crf") && strcmp(value, "bs"))
        return kc_fail("--refine: none, crf or bs, not '%s'", value);
    *(const char **)opt->target = value;
    return 0;
}

int table_read_davis_split(const opts_option *opt, const char *value)
{
    if (!*value || strpbrk(value, "/ \t")) return kc_fail("--davis-split: bad split name '%s'", value);
    *(const char **)opt->target = value;
    return 0;
}

char *table_about_line(const table_about *a)
{
    kc_buf b = {0};
    const int sal_first = a->no_voc && a->saliency && !a->sweep; /* saliency alone, no VOC to name */
    if (sal_first) {
        kc_buf_printf(&b, "saliency detection on %s", a->saliency);
        if (a->setting) kc_buf_printf(&b, " at setting %s", a->setting);
    } else if (a->sweep) {
        kc_buf_printf(&b, "VOC");
        if (a->select_list) kc_buf_printf(&b, " selection split list %s", a->select_list);
        if (a->voc_root) kc_buf_printf(&b, " of %s", a->voc_root);
        kc_buf_printf(&b, ", %d setting%s", a->n_settings, a->n_settings == 1 ? "" : "s");
    } else {
        kc_buf_printf(&b, "VOC");
        if (a->val_split) kc_buf_printf(&b, " val split \"%s\"", a->val_split);
        if (a->voc_root) kc_buf_printf(&b, " of %s", a->voc_root);
        if (a->setting) kc_buf_printf(&b, " at setting %s", a->setting);
        const char *what = table_refine_label(a->refine);
        if (what) kc_buf_printf(&b, ", refinement %s (%s)", a->refine, what);
    }
    if (!a->sweep && a->has_davis) {
        kc_buf_printf(&b, "; DAVIS-2017");
        if (a->davis_split) kc_buf_printf(&b, " split \"%s\"", a->davis_split);
        if (a->davis_root) kc_buf_printf(&b, " of %s", a->davis_root);
    }
    if (!a->sweep && !sal_first && a->saliency) kc_buf_printf(&b, "; saliency detection on %s", a->saliency);
    kc_buf_printf(&b, "; networks:");
    for (int i = 0; i < a->n_nets; i++) {
        kc_buf_printf(&b, "%s %s", i ? "," : "", a->nets[i]);
        const char *own = a->own_setting ? a->own_setting[i] : NULL;
        int base = a->baseline && a->baseline[i];
        if (base && own) kc_buf_printf(&b, " (baseline at %s)", own);
        else if (base) kc_buf_printf(&b, " (baseline)");
        else if (own) kc_buf_printf(&b, " (at %s)", own);
    }
    if (!a->n_nets) kc_buf_printf(&b, " none");
    return b.s;
}
