/* tests/test_voc_table.c — eval/table: CSV / Markdown / LaTeX writers, bold best, macro words. */
#include <math.h>

#include "eval/table.h"
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
