/* tests/bench_coco.c — the streaming COCO reader on a large generated file (tests/bench_coco.sh).
 *
 *   bench_coco gen JSON LIST MB     writes a COCO-style instances JSON of about MB megabytes (82,783
 *                                   images, polygons sized to reach MB, 1 % crowd RLE) and a
 *                                   20,000-line list in coco_20k_filenames.txt format
 *   bench_coco read JSON LIST       coco_read_json on it (no cache); prints images, boxes, seconds
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/coco.h"
#include "pipeline/kc.h"

static unsigned long long rng = 88172645463325252ull;
static unsigned next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng >> 20);
}

static int gen(const char *json, const char *list, double mb)
{
    const int n_img = 82783, n_list = 20000;
    const long n_ann = 604907;
    /* bytes per annotation without its polygon are about 190; a polygon number about 6.6 */
    long per_poly = (long)(((mb * 1e6 - 82783 * 260.0) / n_ann - 190) / 6.6);
    if (per_poly < 8) per_poly = 8;
    FILE *f = fopen(json, "w"), *l = fopen(list, "w");
    if (!f || !l) return kc_fail("%s: cannot write", json);
    fprintf(f, "{\"info\": {\"description\": \"keycut bench\", \"year\": 2014}, \"images\": [");
    for (int i = 0; i < n_img; i++) {
        int w = 320 + (int)(next() % 321), h = 240 + (int)(next() % 241);
        fprintf(f, "%s{\"license\": 3, \"file_name\": \"COCO_train2014_%012d.jpg\", \"coco_url\": "
                   "\"http://images.cocodataset.org/train2014/COCO_train2014_%012d.jpg\", \"height\": %d, \"width\": %d, "
                   "\"date_captured\": \"2013-11-14 11:18:45\", \"id\": %d}",
                i ? ", " : "", i + 1, i + 1, h, w, i + 1);
        if (i % 4 == 0 && i / 4 < n_list) fprintf(l, "train2014/COCO_train2014_%012d.jpg\n", i + 1);
    }
    fprintf(f, "], \"licenses\": [{\"url\": \"http://creativecommons.org/licenses/by-nc-sa/2.0/\", \"id\": 1, "
               "\"name\": \"Attribution-NonCommercial-ShareAlike License\"}], \"annotations\": [");
    for (long a = 0; a < n_ann; a++) {
        int img = a < n_img ? (int)a + 1 : 1 + (int)(next() % n_img); /* every image has one */
        int crowd = a >= n_img && next() % 100 == 0;
        double x = next() % 300 + (next() % 100) / 100.0, y = next() % 200 + (next() % 100) / 100.0;
        double w = 1 + next() % 300 + (next() % 100) / 100.0, h = 1 + next() % 200 + (next() % 100) / 100.0;
        fprintf(f, "%s{\"segmentation\": ", a ? ", " : "");
        if (crowd) {
            fprintf(f, "{\"counts\": [");
            for (long k = 0; k < per_poly; k++) fprintf(f, "%s%u", k ? "," : "", next() % 5000);
            fprintf(f, "], \"size\": [480, 640]}");
        } else {
            fprintf(f, "[[");
            for (long k = 0; k < per_poly; k++) fprintf(f, "%s%u.%02u", k ? "," : "", next() % 640, next() % 100);
            fprintf(f, "]]");
        }
        fprintf(f, ", \"area\": %.4f, \"iscrowd\": %d, \"image_id\": %d, \"bbox\": [%.2f, %.2f, %.2f, %.2f], "
                   "\"category_id\": %u, \"id\": %ld}",
                w * h * 0.6, crowd, img, x, y, w, h, 1 + next() % 90, a + 1);
    }
    fprintf(f, "], \"categories\": [{\"supercategory\": \"person\", \"id\": 1, \"name\": \"person\"}]}\n");
    int rc = ferror(f) || ferror(l);
    rc |= fclose(f) != 0;
    rc |= fclose(l) != 0;
    return rc ? kc_fail("%s: write error", json) : 0;
}

int main(int argc, char **argv)
{
    kc_set_prog("bench_coco");
    if (argc == 5 && !strcmp(argv[1], "gen")) {
        if (gen(argv[2], argv[3], atof(argv[4])) < 0) kc_die();
        return 0;
    }
    if (argc == 4 && !strcmp(argv[1], "read")) {
        char **names = NULL;
        int n = 0, cap = 0;
        char line[512];
        FILE *l = fopen(argv[3], "r");
        if (!l) kc_die_msg("%s: cannot open", argv[3]);
        while (fgets(line, sizeof line, l)) {
            line[strcspn(line, "\r\n")] = 0;
            if (n == cap) names = kc_realloc(names, (size_t)(cap = cap ? 2 * cap : 1024) * sizeof *names);
            names[n++] = kc_strdup(line);
        }
        fclose(l);
        double t0 = kc_now();
        coco_gt g;
        if (coco_read_json(argv[2], names, n, &g) < 0) kc_die();
        long boxes = 0, crowd = 0;
        for (int i = 0; i < g.n; i++) boxes += g.img[i].n_boxes, crowd += g.img[i].n_crowd;
        printf("%d images, %ld boxes kept, %ld crowd dropped, %.2f s\n", g.n, boxes, crowd, kc_now() - t0);
        coco_gt_free(&g);
        for (int i = 0; i < n; i++) free(names[i]);
        free(names);
        return 0;
    }
    fprintf(stderr, "usage: bench_coco gen JSON LIST MB | bench_coco read JSON LIST\n");
    return 2;
}
