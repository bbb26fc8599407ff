/* tests/test_voc.c — VOC ground truth, Jaccard / CorLoc, splits and the ledger.
 *
 * Parity: tests/data/voc/cases.txt (written by tests/ref/voc_ref.py, NumPy) holds label maps on the
 * real VOC ground truth of ../shared/data (voc_official, voc_labelme) and on generated ground truth,
 * for several policies and grid sizes, with the expected Jaccard, CorLoc and area.  The fast path
 * (per-cell counts) and the naive per-pixel reference must both agree to 1e-9; on random images so
 * must the area without ground truth (voc_mask_area, kc-score --boxes-only).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/splits.h"
#include "datasets/voc.h"
#include "eval/voc/ledger.h"
#include "eval/figures/overlay.h"
#include "eval/voc/voc_metrics.h"
#include "pipeline/images/image.h"
#include "pipeline/kc.h"
#include "pipeline/sha256.h"
#include "tests/test.h"

#define TOL 1e-9

typedef struct gt_entry {
    char name[64];
    int w, h, n_boxes, ok;
    uint8_t *object;
    voc_box boxes[16];
} gt_entry;

static gt_entry gts[64];
static int n_gts;

static gt_entry *find_gt(const char *name)
{
    for (int i = 0; i < n_gts; i++)
        if (!strcmp(gts[i].name, name)) return &gts[i];
    return NULL;
}

/* Reads "n_boxes x1 y1 x2 y2 ..." from the token stream. */
static char *read_boxes(char *s, gt_entry *g)
{
    g->n_boxes = (int)strtol(s, &s, 10);
    for (int b = 0; b < g->n_boxes && b < 16; b++) {
        g->boxes[b].xmin = strtod(s, &s);
        g->boxes[b].ymin = strtod(s, &s);
        g->boxes[b].xmax = strtod(s, &s);
        g->boxes[b].ymax = strtod(s, &s);
    }
    return s;
}

static void parity(void)
{
    uint8_t *data;
    size_t size;
    if (kc_read_file("tests/data/voc/cases.txt", &data, &size) < 0) {
        CHECK(0, "%s", kc_error());
        return;
    }
    const char *shared = test_shared_data();
    double worst_j = 0, worst_area = 0;
    int n_cases = 0, n_skipped = 0, corloc_bad = 0, n_hits = 0, real_cases = 0;
    char worst_where[256] = "";
    for (char *line = strtok((char *)data, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#') continue;
        char kind[8], sub[16], name[64];
        if (!strncmp(line, "gt ", 3)) {
            gt_entry *g = &gts[n_gts++];
            int off = 0;
            sscanf(line, "gt %7s %15s %n", sub, name, &off);
            char *s = line + off;
            if (!strcmp(sub, "real")) {
                char id[64];
                sscanf(s, "%63s %n", id, &off);
                s += off;
                snprintf(g->name, sizeof g->name, "%s", id);
                g->w = (int)strtol(s, &s, 10);
                g->h = (int)strtol(s, &s, 10);
                s = read_boxes(s, g);
                if (!shared) continue;
                char *root = kc_strfmt("%s/%s", shared, name);
                voc_gt v;
                int rc = voc_gt_load(root, id, VOC_GT_CLASS, &v);
                CHECK(rc == 0, "load %s: %s", id, kc_error());
                free(root);
                if (rc < 0) continue;
                CHECK(v.w == g->w && v.h == g->h, "%s: size %dx%d, reference %dx%d", id, v.w, v.h, g->w, g->h);
                CHECK(v.n_boxes == g->n_boxes, "%s: %d boxes, reference %d", id, v.n_boxes, g->n_boxes);
                double bw = 0;
                for (int b = 0; b < v.n_boxes && b < g->n_boxes; b++) {
                    double d[4] = {v.boxes[b].xmin - g->boxes[b].xmin, v.boxes[b].ymin - g->boxes[b].ymin,
                                   v.boxes[b].xmax - g->boxes[b].xmax, v.boxes[b].ymax - g->boxes[b].ymax};
                    for (int k = 0; k < 4; k++) bw = fmax(bw, fabs(d[k]));
                }
                CHECK(bw == 0, "%s: XML corners differ from the reference by %g", id, bw);
                CHECK(v.cls != NULL, "%s: SegmentationClass read", id);
                g->object = v.object;
                v.object = NULL;
                g->ok = v.w == g->w && v.h == g->h;
                voc_gt_free(&v);
            } else {
                snprintf(g->name, sizeof g->name, "%s", name);
                g->w = (int)strtol(s, &s, 10);
                g->h = (int)strtol(s, &s, 10);
                s = read_boxes(s, g);
                while (*s == ' ') s++;
                if (*s == '-') s += 2;
                size_t np = (size_t)g->w * g->h;
                g->object = kc_malloc(np);
                for (size_t k = 0; k < np; k++) {
                    unsigned v;
                    sscanf(s + 2 * k, "%2x", &v);
                    g->object[k] = (uint8_t)v;
                }
                g->ok = 1;
            }
            continue;
        }
        if (strncmp(line, "case ", 5)) continue;
        char pol[16];
        int patch, gh, gw, off = 0;
        sscanf(line, "%7s %63s %15s %d %d %d %n", kind, name, pol, &patch, &gh, &gw, &off);
        char *s = line + off;
        gt_entry *g = find_gt(name);
        if (!g || !g->ok) {
            n_skipped++;
            continue;
        }
        uint8_t *lab = kc_malloc((size_t)gh * gw);
        for (int k = 0; k < gh * gw; k++) lab[k] = (uint8_t)(s[k] - '0');
        s += gh * gw;
        double ej = strtod(s, &s);
        int ec = (int)strtol(s, &s, 10);
        double ea = strtod(s, &s);
        kc_policy p;
        CHECK(voc_policy_parse(pol, &p) == 0, "policy %s", pol);
        voc_cells c;
        voc_score fast, slow;
        int rc = voc_cells_init(&c, g->object, g->h, g->w, g->boxes, g->n_boxes, p, patch, gh, gw);
        CHECK(rc == 0, "%s %s %dx%d: %s", name, pol, gw, gh, kc_error());
        if (rc == 0) {
            voc_score_mask(&c, lab, &fast);
            voc_cells_free(&c);
            voc_score_naive(g->object, g->h, g->w, g->boxes, g->n_boxes, p, patch, lab, gh, gw, &slow);
            double dj = fmax(fabs(fast.jaccard - ej), fabs(slow.jaccard - ej));
            double da = fmax(fabs(fast.area - ea), fabs(slow.area - ea));
            if (dj > worst_j) {
                worst_j = dj;
                snprintf(worst_where, sizeof worst_where, "%s %s %d %dx%d", name, pol, patch, gw, gh);
            }
            worst_area = fmax(worst_area, da);
            if (fast.corloc != ec || slow.corloc != ec) corloc_bad++;
            n_hits += ec;
            n_cases++;
            real_cases += g->w == 500;
        }
        free(lab);
    }
    free(data);
    printf("parity: %d cases (%d on real VOC images, %d CorLoc hits), %d skipped; worst |dJ| %.3g (%s), "
           "worst |d area| %.3g, CorLoc disagreements %d (tol %g)\n",
           n_cases, real_cases, n_hits, n_skipped, worst_j, worst_where, worst_area, corloc_bad, TOL);
    CHECK(n_cases >= 100, "only %d parity cases ran", n_cases);
    CHECK(worst_j <= TOL, "Jaccard worst mismatch %.3g at %s", worst_j, worst_where);
    CHECK(worst_area <= TOL, "area worst mismatch %.3g", worst_area);
    CHECK(corloc_bad == 0, "%d CorLoc disagreements", corloc_bad);
    if (n_skipped) SKIP("%d real-image cases: shared data absent", n_skipped);
    for (int i = 0; i < n_gts; i++) free(gts[i].object);
}

/* Fast path against the naive reference on random ground truth and masks. */
static void random_consistency(void)
{
    uint64_t st = 12345;
#define RND() (st = st * 6364136223846793005ULL + 1442695040888963407ULL, (uint32_t)(st >> 33))
    double worst = 0, worst_area = 0; /* worst_area: voc_mask_area (no ground truth) vs the naive area */
    int bad_corloc = 0, runs = 0;
    for (int t = 0; t < 300; t++) {
        int w = 1 + RND() % 90, h = 1 + RND() % 70;
        kc_policy p = (kc_policy)(RND() % 3);
        int patch = p == POLICY_NATIVE16 ? 1 + RND() % 20 : 16, gh, gw;
        if (p == POLICY_NATIVE16) grid_expected(p, patch, w, h, &gh, &gw);
        else gh = 1 + RND() % 40, gw = 1 + RND() % 40;
        uint8_t *obj = kc_malloc((size_t)w * h), *lab = kc_malloc((size_t)gh * gw);
        int dens = RND() % 4;
        for (int k = 0; k < w * h; k++) {
            uint32_t r = RND() % 100;
            obj[k] = r < 5 ? 255 : r < 5 + 20 * (uint32_t)dens ? 1 + RND() % 3 : 0;
        }
        int dl = RND() % 4;
        for (int k = 0; k < gh * gw; k++) lab[k] = (RND() % 4 < (uint32_t)dl) ? 1 + RND() % 3 : 0;
        voc_box b[2] = {{1 + RND() % w, 1 + RND() % h, 0, 0}, {1, 1, w, h}};
        b[0].xmax = b[0].xmin + RND() % w;
        b[0].ymax = b[0].ymin + RND() % h;
        voc_cells c;
        voc_score f, s;
        if (voc_cells_init(&c, obj, h, w, b, 1 + (int)(RND() % 2), p, patch, gh, gw) == 0) {
            voc_score_mask(&c, lab, &f);
            voc_score_naive(obj, h, w, b, c.n_boxes, p, patch, lab, gh, gw, &s);
            worst = fmax(worst, fmax(fabs(f.jaccard - s.jaccard), fabs(f.area - s.area)));
            bad_corloc += f.corloc != s.corloc;
            worst_area = fmax(worst_area, fabs(voc_mask_area(p, patch, w, h, lab, gh, gw) - s.area));
            voc_cells_free(&c);
            runs++;
        }
        free(obj);
        free(lab);
    }
    printf("fast vs naive: %d random images, worst |d| %.3g, CorLoc disagreements %d; voc_mask_area worst |d| %.3g\n", runs,
           worst, bad_corloc, worst_area);
    CHECK(runs == 300, "only %d random cases ran", runs);
    CHECK(worst <= TOL, "fast vs naive worst %.3g (tol %g)", worst, TOL);
    CHECK(bad_corloc == 0, "fast vs naive CorLoc disagreements %d", bad_corloc);
    CHECK(worst_area <= TOL, "voc_mask_area vs the naive area worst %.3g (tol %g)", worst_area, TOL);
}

/* Hand-made cases: void never counts, J = 1 on an empty union, the -1 corner shift, empty mask. */
static void hand_cases(void)
{
    /* 4x2 image, grid 2x2 under native16 with patch 2: cells are 2x2 pixel blocks (w 4, h 2 -> 1x2 grid) */
    uint8_t obj[8] = {1, 1, 0, 255, 1, 255, 0, 0};
    uint8_t lab[2] = {1, 0};
    voc_score s;
    voc_box box = {1, 1, 2, 2}; /* shifted: [0, 0, 2, 2] = exactly the left cell */
    voc_score_naive(obj, 2, 4, &box, 1, POLICY_NATIVE16, 2, lab, 1, 2, &s);
    /* left cell: 3 fg + 1 void; right: 2 bg + 1 void -> J = 3/3 */
    CHECK_CLOSE(s.jaccard, 1.0, 0, "void ignored: J");
    CHECK(s.corloc == 1, "box [0,0,2,2] hits the GT box after the -1 shift");
    CHECK_CLOSE(s.area, 0.5, 0, "area counts void pixels");
    voc_box unshifted = {2, 2, 2, 2}; /* shifted [1,1,2,2]: IoU 1/4 */
    voc_score_naive(obj, 2, 4, &unshifted, 1, POLICY_NATIVE16, 2, lab, 1, 2, &s);
    CHECK(s.corloc == 0, "IoU 1/4 is a miss");
    uint8_t none[2] = {0, 0};
    voc_score_naive(obj, 2, 4, &box, 1, POLICY_NATIVE16, 2, none, 1, 2, &s);
    CHECK(s.corloc == 0 && s.jaccard == 0 && s.area == 0, "empty mask: miss, J 0 (%g)", s.jaccard);
    uint8_t empty[8] = {0, 0, 255, 0, 0, 0, 255, 0};
    voc_score_naive(empty, 2, 4, NULL, 0, POLICY_NATIVE16, 2, none, 1, 2, &s);
    CHECK(s.jaccard == 1.0, "empty union: J = 1 (%g)", s.jaccard);
    uint8_t round2[2] = {2, 0}; /* only a round-2 mask: Jaccard counts it, CorLoc does not */
    voc_score_naive(obj, 2, 4, &box, 1, POLICY_NATIVE16, 2, round2, 1, 2, &s);
    CHECK(s.jaccard == 1.0 && s.corloc == 0, "round-2 label: J %g, CorLoc %d", s.jaccard, s.corloc);
    /* mapping at the edges: pixel-centre nearest neighbour */
    double b[4];
    uint8_t one[9] = {0, 0, 0, 0, 1, 0, 0, 0, 0};
    CHECK(voc_mask_box(POLICY_SQUARE480, 16, 500, 375, one, 3, 3, b) == 1, "box of centre cell");
    CHECK_CLOSE(b[0], 500.0 / 3, 1e-12, "x0 = 1 * W / 3");
    CHECK_CLOSE(b[3], 2 * 375.0 / 3, 1e-12, "y1 = 2 * H / 3");
    CHECK(voc_mask_box(POLICY_NATIVE16, 16, 40, 40, one, 3, 3, b) == 1 && b[2] == 32, "native box x1 %g", b[2]);
    uint8_t corner[9] = {0, 0, 0, 0, 0, 0, 0, 0, 1};
    voc_mask_box(POLICY_NATIVE16, 16, 40, 40, corner, 3, 3, b);
    CHECK(b[2] == 40 && b[3] == 40, "native box clipped to the image (%g, %g)", b[2], b[3]);
    int gh, gw;
    grid_expected(POLICY_SHORT480, 16, 854, 480, &gh, &gw);
    CHECK(gh == 30 && gw == 52, "short480 854x480 grid %dx%d", gw, gh);
    grid_expected(POLICY_SHORT480, 16, 480, 480, &gh, &gw);
    CHECK(gh == 30 && gw == 28, "short480 square grid %dx%d (480x448 as DINO)", gw, gh);
    grid_expected(POLICY_SHORT480, 16, 375, 500, &gh, &gw);
    CHECK(gh == 40 && gw == 30, "short480 portrait grid %dx%d", gw, gh);
    CHECK(grid_check("m", POLICY_NATIVE16, 16, 500, 375, 23, 32) < 0 && strstr(kc_error(), "expected 32x24"),
          "native16 wrong grid: %s", kc_error());
    kc_policy p;
    CHECK(voc_policy_parse("square224", &p) < 0 && strstr(kc_error(), "square224"), "bad policy named");
}

static int write_file(const char *path, const char *text) { return kc_write_file_atomic(path, text, strlen(text)); }

/* The grid mapping shared by the scores, the attention scores, the overlays and kc-score's area
 * (grid_pixel_cell, grid_axis_cells): values worked out by hand from docs/design.md's rule, then every
 * pixel of a few axes against floor((x + 0.5) g / n) in doubles (exact here: small integers). */
static void grid_mapping(void)
{
    static const struct {
        kc_policy p;
        int patch, x, n, g, cell;
    } hand[] = {
        {POLICY_SQUARE480, 16, 0, 500, 30, 0},   {POLICY_SQUARE480, 16, 16, 500, 30, 0}, /* 990 div 1000 */
        {POLICY_SQUARE480, 16, 17, 500, 30, 1},  {POLICY_SQUARE480, 16, 250, 500, 30, 15},
        {POLICY_SQUARE480, 16, 499, 500, 30, 29}, {POLICY_SHORT480, 16, 12, 375, 30, 1}, /* 750 div 750 */
        {POLICY_SHORT480, 16, 11, 375, 30, 0},   {POLICY_SHORT480, 16, 374, 375, 30, 29},
        {POLICY_SQUARE480, 16, 0, 4, 8, 1},      {POLICY_SQUARE480, 16, 3, 4, 8, 7}, /* more cells than pixels */
        {POLICY_NATIVE16, 16, 15, 500, 32, 0},   {POLICY_NATIVE16, 16, 16, 500, 32, 1},
        {POLICY_NATIVE16, 16, 499, 500, 32, 31}, {POLICY_NATIVE16, 8, 17, 20, 3, 2},
    };
    for (size_t k = 0; k < sizeof hand / sizeof *hand; k++) {
        int got = grid_pixel_cell(hand[k].p, hand[k].patch, hand[k].x, hand[k].n, hand[k].g);
        CHECK(got == hand[k].cell, "%s, pixel %d of %d onto %d cells: cell %d, expected %d", voc_policy_name(hand[k].p),
              hand[k].x, hand[k].n, hand[k].g, got, hand[k].cell);
    }
    static const int axes[][2] = {{500, 30}, {375, 30}, {854, 52}, {7, 30}, {1, 1}, {333, 17}};
    int bad = 0;
    for (size_t a = 0; a < sizeof axes / sizeof *axes; a++) {
        int n = axes[a][0], g = axes[a][1];
        int32_t *cell = kc_malloc((size_t)n * sizeof *cell);
        grid_axis_cells(POLICY_SQUARE480, 16, n, g, cell);
        for (int x = 0; x < n; x++) bad += cell[x] != (int32_t)floor((x + 0.5) * g / n);
        grid_axis_cells(POLICY_NATIVE16, 16, n, (n + 15) / 16, cell);
        for (int x = 0; x < n; x++) bad += cell[x] != x / 16;
        free(cell);
    }
    CHECK(bad == 0, "grid_axis_cells: %d pixels off the rule", bad);
}

/* Patch 14 (and 8): the grids of the three scored policies, worked out by hand (docs/design.md:
 * each side p ceil(side / p)), and the grid-to-pixel mapping against a naive computation from
 * what the grid means: cell c of the resized side R = g p holds resized pixels [c p, (c + 1) p),
 * and original pixel x of n sits at resized position (x + 0.5) R / n. */
static void patch14_mapping(void)
{
    static const struct {
        kc_policy p;
        int patch, w, h, gw, gh;
    } grids[] = {
        {POLICY_SQUARE480, 14, 500, 375, 35, 35}, /* 490 / 14 (not 480 / 14 = 34) */
        {POLICY_SQUARE480, 8, 500, 375, 60, 60},
        {POLICY_SHORT480, 14, 854, 480, 60, 35},  /* 840 x 490 */
        {POLICY_SHORT480, 14, 480, 480, 32, 35},  /* 448 x 490 */
        {POLICY_SHORT480, 14, 375, 500, 35, 46},  /* 490 x 644 */
        {POLICY_SHORT480, 8, 854, 480, 104, 60},
        {POLICY_NATIVE16, 14, 500, 375, 36, 27},
        {POLICY_NATIVE16, 8, 500, 375, 63, 47},
    };
    for (size_t k = 0; k < sizeof grids / sizeof *grids; k++) {
        int gh, gw;
        grid_expected(grids[k].p, grids[k].patch, grids[k].w, grids[k].h, &gh, &gw);
        CHECK(gh == grids[k].gh && gw == grids[k].gw, "%s patch %d on %dx%d: grid %dx%d, by hand %dx%d",
              voc_policy_name(grids[k].p), grids[k].patch, grids[k].w, grids[k].h, gw, gh, grids[k].gw, grids[k].gh);
        CHECK(grid_check_policy("m", grids[k].p, grids[k].patch, grids[k].w, grids[k].h, grids[k].gh, grids[k].gw) == 0,
              "%s patch %d: its own grid refused: %s", voc_policy_name(grids[k].p), grids[k].patch, kc_error());
    }
    /* a 480 image cropped to 476 (the 34 x 34 grid keycut made for patch 14 before) is refused */
    CHECK(grid_check_policy("masks/x", POLICY_SQUARE480, 14, 500, 375, 34, 34) < 0 &&
              strstr(kc_error(), "expected 35x35") && strstr(kc_error(), "490x490") && strstr(kc_error(), "masks/x"),
          "square480 patch 14 with a 34x34 grid: %s", kc_error());
    CHECK(grid_check_policy("m", POLICY_SQUARE480, 0, 500, 375, 34, 34) == 0, "no patch recorded: nothing to check");

    /* mapping: every pixel of several axes, resized side R per policy (square480 490; short480 840,
     * 490, 644; native16 none) */
    static const struct {
        kc_policy p;
        int n, R; /* original and resized side (0: native16) */
    } axes[] = {
        {POLICY_SQUARE480, 500, 490}, {POLICY_SQUARE480, 375, 490}, {POLICY_SQUARE480, 854, 490},
        {POLICY_SQUARE480, 7, 490},   {POLICY_SQUARE480, 1280, 490}, {POLICY_SHORT480, 854, 840},
        {POLICY_SHORT480, 480, 490},  {POLICY_SHORT480, 500, 644},   {POLICY_SHORT480, 375, 490},
        {POLICY_NATIVE16, 500, 0},    {POLICY_NATIVE16, 13, 0},
    };
    const int P = 14;
    int bad = 0, bad_pixel = 0, n_px = 0;
    double worst_box = 0;
    for (size_t a = 0; a < sizeof axes / sizeof *axes; a++) {
        const int n = axes[a].n, R = axes[a].R, g = R ? R / P : (n + P - 1) / P;
        int32_t *cell = kc_malloc((size_t)n * sizeof *cell);
        grid_axis_cells(axes[a].p, P, n, g, cell);
        for (int x = 0; x < n; x++) {
            /* exact in doubles: (x + 0.5) R is exact, one division rounds, and a quotient below an
             * integer k is below it by at least 1 / (2 n P), far more than its rounding */
            const int naive = R ? (int)floor((x + 0.5) * R / ((double)n * P)) : x / P;
            bad += cell[x] != naive;
            bad_pixel += grid_pixel_cell(axes[a].p, P, x, n, g) != naive;
            n_px++;
        }
        /* a box of cells [c0, c1] back to pixels: resized [c0 P, (c1 + 1) P] times n / R (native16: clipped) */
        for (int c0 = 0; c0 < g; c0 += 5) {
            const int c1 = c0 + 3 < g ? c0 + 3 : g - 1;
            uint8_t *lab = kc_calloc((size_t)g, 1);
            for (int c = c0; c <= c1; c++) lab[c] = 1;
            double box[4];
            if (voc_mask_box(axes[a].p, P, n, 1, lab, 1, g, box) != 1) bad++;
            double lo = R ? (double)c0 * P * n / R : c0 * P, hi = R ? (double)(c1 + 1) * P * n / R : (c1 + 1) * P;
            if (!R && hi > n) hi = n;
            worst_box = fmax(worst_box, fmax(fabs(box[0] - lo), fabs(box[2] - hi)));
            free(lab);
        }
        free(cell);
    }
    printf("patch 14 grid to pixels: %d pixels on %zu axes, %d (axis) and %d (pixel) off the naive cell; boxes worst "
           "|d| %.3g (tol 1e-9)\n", n_px, sizeof axes / sizeof *axes, bad, bad_pixel, worst_box);
    CHECK(bad == 0 && bad_pixel == 0, "patch 14 mapping: %d + %d pixels off the naive cell", bad, bad_pixel);
    CHECK(worst_box <= 1e-9, "patch 14 boxes: worst |d| %.3g (tol 1e-9)", worst_box);

    /* the overlay of a whole 35 x 35 square480 grid on a 500 x 375 image, pixel by pixel */
    const int W = 500, H = 375, G = 35;
    uint8_t *grid = kc_malloc((size_t)G * G), *lab = kc_malloc((size_t)W * H);
    for (int k = 0; k < G * G; k++) grid[k] = (uint8_t)(k % 251);
    int bad_overlay = 0;
    if (overlay_grid_to_pixels(grid, G, G, POLICY_SQUARE480, P, W, H, lab) == 0) {
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                int cy = (int)floor((y + 0.5) * 490 / ((double)H * P)), cx = (int)floor((x + 0.5) * 490 / ((double)W * P));
                bad_overlay += lab[(size_t)y * W + x] != grid[cy * G + cx];
            }
    } else {
        bad_overlay = -1;
    }
    CHECK(bad_overlay == 0, "overlay of a 35x35 patch-14 grid: %d of %d pixels off the naive cell (tol 0)", bad_overlay,
          W * H);
    free(grid);
    free(lab);
}

static void bad_input(void)
{
    const char *tmp = test_tmpdir("test_voc");
    char *root = kc_strfmt("%s/voc", tmp);
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s/JPEGImages %s/SegmentationObject %s/Annotations && "
             "cp tests/data/voc/tiny/JPEGImages/t_000001.jpg %s/JPEGImages/a.jpg && "
             "cp tests/data/voc/tiny/JPEGImages/t_000001.jpg %s/JPEGImages/b.jpg && "
             "cp tests/data/voc/tiny/JPEGImages/t_000001.jpg %s/JPEGImages/c.jpg && "
             "cp tests/data/voc/tiny/Annotations/t_000001.xml %s/Annotations/a.xml && "
             "cp tests/data/voc/tiny/Annotations/t_000001.xml %s/Annotations/b.xml",
             root, root, root, root, root, root, root, root);
    CHECK(system(cmd) == 0, "fixture copy");
    uint8_t pal[768];
    image_davis_palette(pal);
    uint8_t *px = kc_calloc(64 * 48, 1);
    char *p = kc_strfmt("%s/SegmentationObject/a.png", root);
    CHECK(image_write_png_index(p, 64, 48, px, pal) == 0, "write a.png: %s", kc_error());
    free(p);
    p = kc_strfmt("%s/SegmentationObject/b.png", root);
    CHECK(image_write_png_index(p, 48, 64, px, pal) == 0, "write b.png: %s", kc_error()); /* transposed */
    free(p);
    p = kc_strfmt("%s/SegmentationObject/c.png", root);
    CHECK(image_write_png_index(p, 64, 48, px, pal) == 0, "write c.png");
    free(p);
    free(px);
    voc_init();
    voc_gt g;
    CHECK(voc_gt_load(root, "a", 0, &g) == 0, "good fixture loads: %s", kc_error());
    if (g.object) voc_gt_free(&g);
    CHECK(voc_gt_load(root, "b", 0, &g) < 0 && strstr(kc_error(), "b.png") && strstr(kc_error(), "differs"),
          "size mismatch: %s", kc_error());
    CHECK(voc_gt_load(root, "c", 0, &g) < 0 && strstr(kc_error(), "Annotations/c.xml") &&
              strstr(kc_error(), "missing"),
          "missing XML: %s", kc_error());
    CHECK(voc_gt_load(root, "zzz", 0, &g) < 0 && strstr(kc_error(), "'zzz' has no files"), "no files: %s",
          kc_error());
    CHECK(voc_gt_load(root, "a", VOC_GT_CLASS, &g) < 0 && strstr(kc_error(), "SegmentationClass/a.png"),
          "missing class PNG: %s", kc_error());
    /* XML content errors */
    p = kc_strfmt("%s/Annotations/a.xml", root);
    write_file(p, "<annotation><object><bndbox><xmin>1</xmin><ymin>x</ymin><xmax>3</xmax><ymax>4</ymax>"
                  "</bndbox></object></annotation>");
    CHECK(voc_gt_load(root, "a", 0, &g) < 0 && strstr(kc_error(), "a.xml") && strstr(kc_error(), "<ymin>"),
          "non-numeric corner: %s", kc_error());
    write_file(p, "<annotation><object><bndbox><xmin>1</xmin>");
    CHECK(voc_gt_load(root, "a", 0, &g) < 0 && strstr(kc_error(), "a.xml") && strstr(kc_error(), "XML"),
          "broken XML: %s", kc_error());
    write_file(p, "<annotation><size><width>65</width><height>48</height></size></annotation>");
    CHECK(voc_gt_load(root, "a", 0, &g) < 0 && strstr(kc_error(), "<size> 65x48"), "XML size: %s", kc_error());
    write_file(p, "<annotation><object><name>cat</name><bndbox><xmin>1.5</xmin><ymin>2</ymin><xmax>30.25</xmax>"
                  "<ymax>40</ymax></bndbox></object><object><name>cat</name><bndbox><xmin>3</xmin><ymin>4</ymin>"
                  "<xmax>5</xmax><ymax>6</ymax></bndbox></object></annotation>");
    CHECK(voc_gt_load(root, "a", 0, &g) == 0 && g.n_boxes == 2 && g.boxes[0].xmin == 1.5 &&
              g.boxes[0].xmax == 30.25 && !strcmp(g.names[1], "cat"),
          "real-number corners, every object kept: %s", kc_error());
    if (g.object) voc_gt_free(&g);
    free(p);
    free(root);
}

static void splits_and_ledger(void)
{
    const char *tmp = test_tmpdir("test_voc_split");
    char **ids;
    int n;
    char *p = kc_strfmt("%s/dup.txt", tmp);
    write_file(p, "a\r\nb\n\n c \na\n");
    CHECK(split_read(p, &ids, &n) < 0 && strstr(kc_error(), "dup.txt") && strstr(kc_error(), "'a' listed twice"),
          "duplicate id: %s", kc_error());
    write_file(p, "a\r\nb\n\n c \n");
    CHECK(split_read(p, &ids, &n) == 0 && n == 3 && !strcmp(ids[2], "c"), "trimmed ids");
    if (n == 3) split_free(ids, n);
    free(p);
    /* the selection rule against the reference script's hash */
    char *path = NULL, hex[65], want[65] = "", first[64] = "", last[64] = "";
    FILE *f = fopen("tests/data/voc/select1000.expected.sha256", "r");
    CHECK(f && fscanf(f, "%64s %63s %63s", want, first, last) == 3, "expected selection hash");
    if (f) fclose(f);
    CHECK(split_make_selection("tests/data/voc/train1500.txt", tmp, 1000, &path) == 0, "selection: %s", kc_error());
    if (path) {
        kc_sha256_file(path, hex);
        CHECK(!strcmp(hex, want), "select1000.txt sha256 %s, reference %s", hex, want);
        CHECK(split_read(path, &ids, &n) == 0 && n == 1000 && !strcmp(ids[0], first) && !strcmp(ids[999], last),
              "selection first/last");
        if (n == 1000) split_free(ids, n);
        char *hp = kc_strfmt("%s.sha256", path);
        uint8_t *d;
        size_t sz;
        CHECK(kc_read_file(hp, &d, &sz) == 0 && !strncmp((char *)d, want, 64) && strstr((char *)d, "  select1000.txt"),
              "hash file");
        if (sz) free(d);
        free(hp);
        free(path);
    }
    CHECK(split_make_selection("tests/data/voc/train1500.txt", tmp, 2000, NULL) < 0 &&
              strstr(kc_error(), "fewer than the 2000"),
          "too few ids: %s", kc_error());
    /* ledger */
    char *lp = kc_strfmt("%s/ledger.tsv", tmp);
    ledger_entry e;
    memset(&e, 0, sizeof e);
    e.split = "splits/select1000.txt";
    memset(e.split_sha256, 'a', 64);
    memset(e.summary_sha256, 'b', 64);
    e.networks = "dino\tx";
    e.n_settings = 144;
    CHECK(ledger_append(lp, &e) == 0, "append: %s", kc_error());
    memset(e.split_sha256, 'c', 64);
    e.time[0] = 0;
    e.split = "val.txt";
    CHECK(ledger_append(lp, &e) == 0, "append 2");
    memset(e.split_sha256, 'a', 64);
    e.time[0] = 0;
    CHECK(ledger_append(lp, &e) == 0, "append 3");
    ledger_entry *es;
    int ne;
    CHECK(ledger_read(lp, &es, &ne) == 0 && ne == 3, "ledger read back %d: %s", ne, kc_error());
    if (ne == 3) {
        CHECK(!strcmp(es[0].networks, "dino x") && es[0].n_settings == 144 && strlen(es[0].time) == 20,
              "fields: '%s' %d '%s'", es[0].networks, es[0].n_settings, es[0].time);
        char **sp, **sh;
        int *runs, ns;
        ledger_count(es, ne, &sp, &sh, &runs, &ns);
        CHECK(ns == 2 && runs[0] == 2 && runs[1] == 1 && !strcmp(sp[0], "val.txt"), "counts %d", ns);
        for (int i = 0; i < ns; i++) {
            free(sp[i]);
            free(sh[i]);
        }
        free(sp);
        free(sh);
        free(runs);
        ledger_free(es, ne);
    }
    FILE *lf = fopen(lp, "a");
    if (lf) {
        fputs("garbage line\n", lf);
        fclose(lf);
    }
    CHECK(ledger_read(lp, &es, &ne) < 0 && strstr(kc_error(), "ledger.tsv:5"), "malformed: %s", kc_error());
    free(lp);
}

int main(void)
{
    voc_init();
    parity();
    random_consistency();
    hand_cases();
    grid_mapping();
    patch14_mapping();
    bad_input();
    splits_and_ledger();
    return test_done();
}
