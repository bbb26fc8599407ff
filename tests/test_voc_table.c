/* tests/test_voc_table.c — eval/tables/table: CSV / Markdown / LaTeX writers, bold best, the note line,
 * macro words. */
#include <math.h>

#include "eval/tables/table.h"
#include "pipeline/kc.h"
#include "tests/test.h"

int main(void)
{
    kc_table t;
    table_init(&t, "network", "Network", 2, 3);
    table_col(&t, 0, "voc_jaccard", "VOC Jaccard", 1);
    table_col(&t, 1, "davis_jf", "DAVIS J&F", 0);
    table_row(&t, 0, "dino");
    table_row(&t, 1, "self_patch|x");
    table_row(&t, 2, "run2");
    double v[6] = {0.4591, 0.618, 0.5, NAN, 0.5, 0.7};
    for (int k = 0; k < 6; k++) t.vals[k] = v[k];
    char *csv = table_csv(&t), *md = table_markdown(&t), *tex = table_latex(&t);
    CHECK(!strcmp(csv, "network,voc_jaccard,davis_jf\ndino,0.4591,0.618\nself_patch|x,0.5,\nrun2,0.5,0.7\n"), "csv:\n%s",
          csv);
    CHECK(strstr(md, "| Network | VOC Jaccard | DAVIS J&F |\n|---|---:|---:|\n") != NULL, "md header:\n%s", md);
    CHECK(strstr(md, "| self_patch\\|x | **50.0** | – |\n") && strstr(md, "| run2 | **50.0** | 70.0 |\n") &&
              strstr(md, "| dino | 45.9 | 61.8 |\n"),
          "md rows (ties both bold, no bold when not asked):\n%s", md);
    CHECK(strstr(tex, "self\\_patch|x & \\textbf{50.0} & -- \\\\\n") && strstr(tex, "DAVIS J\\&F") &&
              strstr(tex, "\\toprule") && strstr(tex, "\\bottomrule\n\\end{tabular}\n"),
          "tex:\n%s", tex);
    free(csv);
    free(md);
    free(tex);
    table_free(&t);

    /* baselines: after the networks, labelled, under a rule, never bold while a network has a value */
    table_init(&t, "network", "Network", 2, 4);
    table_col(&t, 0, "voc_jaccard", "VOC Jaccard", 1);
    table_col(&t, 1, "davis_jf", "DAVIS J&F", 1);
    table_row(&t, 0, "color");
    table_row(&t, 1, "dino");
    table_row(&t, 2, "random");
    table_row(&t, 3, "selfpatch");
    t.baseline[0] = t.baseline[2] = 1;
    double w[8] = {0.7, 0.9, 0.459, NAN, 0.22, 0.3, 0.5, NAN};
    for (int k = 0; k < 8; k++) t.vals[k] = w[k];
    csv = table_csv(&t);
    md = table_markdown(&t);
    tex = table_latex(&t);
    CHECK(!strcmp(csv, "network,voc_jaccard,davis_jf,kind\ndino,0.459,,network\nselfpatch,0.5,,network\n"
                       "color,0.7,0.9,baseline\nrandom,0.22,0.3,baseline\n"),
          "csv with baselines:\n%s", csv);
    CHECK(strstr(md, "| dino | 45.9 | – |\n| selfpatch | **50.0** | – |\n| color (baseline) | 70.0 | **90.0** |\n"
                     "| random (baseline) | 22.0 | 30.0 |\n") != NULL,
          "md with baselines (a baseline is bold only where no network has a value):\n%s", md);
    CHECK(strstr(tex, "selfpatch & \\textbf{50.0} & -- \\\\\n\\midrule\n\\multicolumn{3}{l}{\\textit{Baselines}} \\\\\n"
                      "color & 70.0 & \\textbf{90.0} \\\\\nrandom & 22.0 & 30.0 \\\\\n\\bottomrule") != NULL,
          "tex with baselines:\n%s", tex);
    free(csv);
    free(md);
    free(tex);
    table_free(&t);
    /* only baselines: no extra rule, the label line stays */
    table_init(&t, "network", "Network", 1, 1);
    table_col(&t, 0, "voc_jaccard", "VOC Jaccard", 1);
    table_row(&t, 0, "color");
    t.baseline[0] = 1;
    t.vals[0] = 0.5;
    tex = table_latex(&t);
    CHECK(strstr(tex, "\\midrule\n\\multicolumn{2}{l}{\\textit{Baselines}} \\\\\ncolor & \\textbf{50.0}") &&
              !strstr(tex, "\\midrule\n\\midrule"),
          "tex, baselines only:\n%s", tex);
    free(tex);
    table_free(&t);

    /* the CSV is data: every double at full precision (the shortest text that reads back the same),
     * the Markdown rounds */
    table_init(&t, "setting", "Setting", 2, 1);
    table_col(&t, 0, "knife_edge", "Knife edge", 0);
    table_col(&t, 1, "jaccard", "Jaccard", 1);
    table_row(&t, 0, "s1");
    t.vals[0] = 1.0 / 3;
    t.vals[1] = 0.1 + 0.2;
    csv = table_csv(&t);
    md = table_markdown(&t);
    CHECK(!strcmp(csv, "setting,knife_edge,jaccard\ns1,0.3333333333333333,0.30000000000000004\n"), "csv, full precision:\n%s", csv);
    CHECK(strstr(md, "| s1 | 33.3 | **30.0** |\n") != NULL, "md, rounded:\n%s", md);
    free(csv);
    free(md);
    table_free(&t);

    /* the note: one plain line above the Markdown table, the LaTeX fragment's first (comment)
     * line, never in the CSV; a line break in it becomes a space */
    table_init(&t, "network", "Network", 1, 2);
    table_col(&t, 0, "voc_jaccard", "VOC Jaccard", 1);
    table_row(&t, 0, "dino");
    table_row(&t, 1, "color");
    t.baseline[1] = 1;
    t.vals[0] = 0.5;
    t.vals[1] = 0.25;
    table_note(&t, "VOC val split \"val\" of /data/VOC_2012\nat setting s1; networks: dino, color (baseline)");
    csv = table_csv(&t);
    md = table_markdown(&t);
    tex = table_latex(&t);
    const char *note = "VOC val split \"val\" of /data/VOC_2012 at setting s1; networks: dino, color (baseline)";
    char *want_md = kc_strfmt("%s\n\n| Network | VOC Jaccard |\n", note), *want_tex = kc_strfmt("%% %s\n%%", note);
    CHECK(!strncmp(md, want_md, strlen(want_md)), "md with a note:\n%s", md);
    CHECK(!strncmp(tex, want_tex, strlen(want_tex)) && strstr(tex, "\\begin{tabular}{lr}\n"), "tex with a note:\n%s", tex);
    CHECK(!strcmp(csv, "network,voc_jaccard,kind\ndino,0.5,network\ncolor,0.25,baseline\n"), "csv with a note:\n%s", csv);
    free(want_md);
    free(want_tex);
    free(csv);
    free(md);
    free(tex);
    table_free(&t);

    kc_buf b = {0};
    table_macro_word(&b, "run-2");
    table_macro_word(&b, "t0.15_x");
    table_macro_word(&b, "a b");
    CHECK(b.s && !strcmp(b.s, "RunDashTwoTZeroDotOneFiveUnderscoreXAXB"), "macro word %s", b.s ? b.s : "");
    free(b.s);
    b = (kc_buf){0};
    table_latex_escape(&b, "a_b&c%d$e#f{g}h~i^j\\k");
    CHECK(!strcmp(b.s, "a\\_b\\&c\\%d\\$e\\#f\\{g\\}h\\textasciitilde{}i\\textasciicircum{}j\\textbackslash{}k"),
          "latex escape %s", b.s);
    free(b.s);
    return test_done();
}
