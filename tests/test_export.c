/* tests/test_export.c — kc-export's library (eval/export): the COCO RLE against an independent
 * decoder written from the format's definition (below: string -> counts -> column-major mask, and
 * the box as the decoded mask's extent), the edge cases (empty mask, a mask touching the border,
 * 1-pixel objects, odd sizes, counts needing several 5-bit groups and negative differences), a
 * known answer (a mask as pycocotools wrote it, decoded and encoded back to the same string), then
 * export_masks end to end on masks caches written here (patch grids under square480 and native16,
 * and refined pixel masks): every PNG equals the grid mapped by the rule of docs/design.md worked
 * out here from the formula, every annotation's RLE decodes to the PNG's label k, ids, areas,
 * boxes and scores as COCO has them.  The checks are shown to catch a broken encoder (row-major
 * runs; counts without the differences).
 */
#include <stdint.h>
#include <unistd.h>

#include "eval/export/export.h"
#include "pipeline/cache/cache.h"
#include "pipeline/images/image.h"
#include "pipeline/json.h"
#include "pipeline/kc.h"
#include "tests/test.h"

/* ---- the reference: COCO's compressed RLE from its definition ---------------------------------- */
/* The counts of a string: characters of 6 bits (c - 48), 5 bits of value each, low group first,
 * 0x20 = another group follows, 0x10 of the last group = negative; from the fourth count on, the
 * value is the difference from the count two before.  -1 on a character out of range. */
static long ref_counts(const char *s, long long *counts, long max)
{
    long n = 0;
    for (size_t p = 0; s[p];) {
        long long v = 0;
        int k = 0, more = 1;
        while (more) {
            if (!s[p]) return -1;
            int c = s[p] - 48;
            if (c < 0 || c > 63 || k > 12) return -1;
            v += (long long)(c & 0x1f) << (5 * k);
            more = c & 0x20;
            p++;
            k++;
            if (!more && (c & 0x10)) v -= 1LL << (5 * k); /* the sign of a 5k-bit value */
        }
        if (n > 2) v += counts[n - 2];
        if (n >= max) return -1;
        counts[n++] = v;
    }
    return n;
}

/* The mask (h, w) row-major of a string: runs of 0s and 1s alternating, from 0s, filling the
 * pixels column by column (element i is pixel (i div h, i mod h)).  -1 when the runs do not
 * cover exactly h w pixels. */
static int ref_decode(const char *s, int h, int w, uint8_t *mask)
{
    const long max = (long)h * w + 2;
    long long *counts = kc_malloc(sizeof *counts * (size_t)max);
    long n = ref_counts(s, counts, max);
    long long at = 0, total = (long long)h * w;
    int rc = n < 1 ? -1 : 0;
    for (long i = 0; i < n && rc == 0; i++) {
        if (counts[i] < 0 || at + counts[i] > total) rc = -1;
        for (long long c = 0; c < counts[i] && rc == 0; c++, at++) mask[(at % h) * w + at / h] = (uint8_t)(i % 2);
    }
    free(counts);
    return rc == 0 && at == total ? 0 : -1;
}

/* The extent of the pixels set (x, y, w, h); all 0 for none. */
static void ref_extent(const uint8_t *mask, int h, int w, int box[4])
{
    int x0 = w, y0 = h, x1 = -1, y1 = -1;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            if (mask[(size_t)y * w + x]) {
                x0 = x < x0 ? x : x0, x1 = x > x1 ? x : x1;
                y0 = y < y0 ? y : y0, y1 = y > y1 ? y : y1;
            }
    if (x1 < 0) box[0] = box[1] = box[2] = box[3] = 0;
    else box[0] = x0, box[1] = y0, box[2] = x1 - x0 + 1, box[3] = y1 - y0 + 1;
}

/* A broken encoder for the check of the checks: runs read row by row. */
static size_t broken_row_major(const uint8_t *labels, int h, int w, int label, uint32_t *counts)
{
    size_t n = 0;
    uint32_t run = 0;
    int inside = 0;
    for (size_t k = 0; k < (size_t)h * w; k++) {
        int set = labels[k] == label;
        if (set != inside) counts[n++] = run, run = 0, inside = set;
        run++;
    }
    counts[n++] = run;
    return n;
}

/* Another: the counts written without the differences (each as the string's first three are). */
static char *broken_no_differences(const uint32_t *counts, size_t n)
{
    kc_buf b = {0};
    for (size_t i = 0; i < n; i++) {
        uint32_t one[3] = {0, 0, counts[i]}; /* the third count is written as it is */
        char *s = export_rle_string(one, 3);
        kc_buf_printf(&b, "%s", s + 2);      /* (the two zeros are a character each) */
        free(s);
    }
    if (!b.s) kc_buf_printf(&b, "%s", "");
    return b.s;
}

/* Pixels where the string's decoded mask differs from (labels == label), or -1 when it does not decode. */
static long rle_mismatch(const char *s, const uint8_t *labels, int h, int w, int label)
{
    uint8_t *mask = kc_malloc((size_t)h * w);
    long bad = ref_decode(s, h, w, mask) < 0 ? -1 : 0;
    for (size_t k = 0; bad >= 0 && k < (size_t)h * w; k++) bad += mask[k] != (labels[k] == label);
    free(mask);
    return bad;
}

/* Every label 0..n_labels of labels (h, w): the string decodes to it, the area is its pixel count,
 * the box its extent.  Returns the number of failed checks (CHECK counts them too when report). */
static int check_labels(const uint8_t *labels, int h, int w, int n_labels, const char *what)
{
    int failed = test_failed;
    uint32_t *counts = kc_malloc(sizeof *counts * ((size_t)h * w + 1));
    uint8_t *mask = kc_malloc((size_t)h * w);
    for (int label = 1; label <= n_labels; label++) {
        size_t n = export_rle_counts(labels, h, w, label, counts);
        char *s = export_rle_string(counts, n);
        long bad = rle_mismatch(s, labels, h, w, label);
        CHECK(bad == 0, "%s %dx%d label %d: the RLE decodes to %ld wrong pixels (-1: does not decode) '%.40s'", what, w,
              h, label, bad, s);
        long long pixels = 0;
        for (size_t k = 0; k < (size_t)h * w; k++) pixels += labels[k] == label;
        CHECK((long long)export_rle_area(counts, n) == pixels, "%s label %d: area %llu, %lld pixels", what, label,
              (unsigned long long)export_rle_area(counts, n), pixels);
        int box[4], want[4];
        export_rle_bbox(counts, n, h, box);
        for (size_t k = 0; k < (size_t)h * w; k++) mask[k] = labels[k] == label;
        ref_extent(mask, h, w, want);
        CHECK(!memcmp(box, want, sizeof box), "%s %dx%d label %d: bbox [%d %d %d %d], extent [%d %d %d %d]", what, w, h,
              label, box[0], box[1], box[2], box[3], want[0], want[1], want[2], want[3]);
        free(s);
    }
    free(counts);
    free(mask);
    return test_failed - failed;
}

static uint32_t rng_state = 12345;
static uint32_t rnd(void)
{
    rng_state = rng_state * 1664525u + 1013904223u;
    return rng_state >> 8;
}

static void test_rle(void)
{
    /* a hand example: 3 x 2, pixel (0,0) and (1,2) set -> column-major 1 0 0 | 0 0 1 -> runs 0 1 4 1 */
    const uint8_t hand[6] = {1, 0, 0, 0, 0, 1};
    uint32_t counts[16];
    size_t n = export_rle_counts(hand, 3, 2, 1, counts);
    CHECK(n == 4 && counts[0] == 0 && counts[1] == 1 && counts[2] == 4 && counts[3] == 1, "hand runs: %zu", n);
    char *s = export_rle_string(counts, n);
    CHECK(!strcmp(s, "0140"), "hand string '%s', want \"0140\" (0 1 4, then 1 - 1 = 0)", s);
    free(s);

    /* every size from 1 to 9 on each side, random labels 0..3 (odd sizes, borders, 1-pixel objects) */
    for (int h = 1; h <= 9; h++)
        for (int w = 1; w <= 9; w++) {
            uint8_t lab[81];
            for (int k = 0; k < h * w; k++) lab[k] = (uint8_t)(rnd() % 4);
            check_labels(lab, h, w, 4, "random");
        }
    /* edge cases on a 7 x 5 image */
    uint8_t lab[35] = {0};
    uint32_t c35[36];
    n = export_rle_counts(lab, 5, 7, 1, c35);
    int box[4];
    export_rle_bbox(c35, n, 5, box);
    CHECK(n == 1 && c35[0] == 35 && export_rle_area(c35, n) == 0 && box[2] == 0 && box[3] == 0, "empty mask: %zu runs",
          n);
    memset(lab, 1, sizeof lab);
    check_labels(lab, 5, 7, 1, "full");
    memset(lab, 0, sizeof lab);
    lab[0] = 1, lab[34] = 2, lab[6] = 3, lab[28] = 4; /* the four corners, one pixel each */
    check_labels(lab, 5, 7, 4, "corners");
    /* long runs: several 5-bit groups and negative differences (1000 x 3, a thin diagonal band) */
    static uint8_t big[3000 * 3];
    for (int y = 0; y < 3000; y++)
        for (int x = 0; x < 3; x++) big[y * 3 + x] = (uint8_t)((y / 7 + x) % 5 == 0) + (uint8_t)(y > 2500 && x == 1);
    check_labels(big, 3000, 3, 2, "long");

    /* a known answer: a 50 x 70 mask as pycocotools wrote it (the example of the COCOtoolsFORK
     * project's README, armengot/COCOtoolsFORK): the reference decodes it to exactly 3,500 pixels,
     * and the encoder gives the same string back from the decoded mask */
    static const char *const known =
        "0g05b08J4M2N2NA^O1`0OCO=0E090H080IO68DH;>@C>a0_O_O`0j0OWOF<:CM72I24NL43JM92FN;1ENKO72L0LO91J0MO92INO0NO122O"
        "O0M031O000NO31OO11MO40N011MO41MO21L06OL021L06OL021L06OL021L060J040L060J040L060J040L060J040L060J040L060J040L0"
        "60KO31L060KO31L06OL021L06OL021L06OL021MO41MO21MO40N100NO310O00M0310O00NO1220NO92IONO91KOMO72M0<1EO:2GN63KM"
        "34OLM73JF<;=1G_O_Ob0=AC`07EH=1IO71H090F0:1DO>1_O1b0>2N2N3L6H]O";
    static uint8_t known_mask[50 * 70];
    static uint32_t known_counts[50 * 70 + 1];
    CHECK(ref_decode(known, 50, 70, known_mask) == 0, "the known string does not decode to 50 x 70");
    n = export_rle_counts(known_mask, 50, 70, 1, known_counts);
    s = export_rle_string(known_counts, n);
    CHECK(!strcmp(s, known), "the known mask encodes to another string: %.60s", s);
    free(s);

    /* the checks catch a broken encoder: row-major runs, and counts without the differences */
    uint8_t asym[6 * 5];
    for (int k = 0; k < 30; k++) asym[k] = (uint8_t)(k % 4 == 0 || k == 7);
    uint32_t c31[31];
    n = broken_row_major(asym, 5, 6, 1, c31);
    s = export_rle_string(c31, n);
    CHECK(rle_mismatch(s, asym, 5, 6, 1) != 0, "the reference does not see a row-major encoder");
    free(s);
    n = export_rle_counts(asym, 5, 6, 1, c31);
    s = broken_no_differences(c31, n);
    CHECK(n > 3 && rle_mismatch(s, asym, 5, 6, 1) != 0, "the reference does not see counts without differences");
    free(s);
}

/* ---- export_masks end to end ------------------------------------------------------------------ */
typedef struct fixture_image {
    const char *id;
    int w, h;
} fixture_image;
static const fixture_image fixture[] = {{"b_odd", 41, 29}, {"a_tall", 17, 33}, {"c_one", 1, 1}, {"d_wide", 67, 9}};
enum { N_FIX = 4, GRID = 30, PATCH = 16 };

/* The grid of image i: 0..3, label 2 absent in image 0 (no annotation), one border cell in image 2. */
static void fixture_grid(int i, int gh, int gw, uint8_t *grid)
{
    for (int k = 0; k < gh * gw; k++) {
        uint8_t v = (uint8_t)(rnd() % 4);
        grid[k] = i == 0 && v == 2 ? 0 : v;
    }
    if (i == 3) memset(grid, 0, (size_t)gh * gw), grid[gw - 1] = 1; /* the top right cell only */
}

/* The cell of pixel x of n on g cells, by the formula of docs/design.md (not grid_map.h). */
static int ref_cell(int native, int x, int n, int g)
{
    return native ? x / PATCH : (int)floor((x + 0.5) * g / n);
}

/* A masks cache of the fixture's images: kind 0 square480 grids, 1 native16 grids, 2 refined pixels.
 * grids[i] keeps each image's mask (grid or pixels). */
static int write_cache(const char *path, int kind, uint8_t **masks, int *mh, int *mw)
{
    cache_writer cw;
    char fp[65];
    const char *parts[2] = {"test_export", path};
    cache_fingerprint(fp, 2, parts);
    KC_TRY(cache_writer_open(&cw, path, CACHE_FORMAT_MASKS, fp, 1));
    cache_piece *pc = cache_piece_new(&cw, 0);
    cache_index ix = {N_FIX, kc_malloc(N_FIX * sizeof(char *)), kc_malloc(N_FIX * 2 * sizeof(int32_t)),
                      kc_malloc(N_FIX * 2 * sizeof(int32_t)), NULL, NULL};
    for (int i = 0; i < N_FIX; i++) {
        const fixture_image *f = &fixture[i];
        int gh = kind == 0 ? GRID : (f->h + PATCH - 1) / PATCH, gw = kind == 0 ? GRID : (f->w + PATCH - 1) / PATCH;
        mh[i] = kind == 2 ? f->h : gh;
        mw[i] = kind == 2 ? f->w : gw;
        masks[i] = kc_malloc((size_t)mh[i] * mw[i]);
        fixture_grid(i, mh[i], mw[i], masks[i]);
        float l2[3] = {0.25f, 0.5f, NAN}, gap[3] = {0.125f, 0.0625f, NAN};
        if (i == 1) l2[2] = 0.75f, gap[2] = 0.03125f; /* image 1: label 3 has a record, the others not */
        const cache_mask m = {masks[i], mh[i], mw[i], l2, gap, 3, 0, 0, 0, 0};
        char *dset = kc_strfmt("/masks/s1/%s", f->id);
        if (cache_piece_put_mask(pc, dset, &m) < 0) {
            cache_piece_abort(pc);
            return -1;
        }
        free(dset);
        ix.ids[i] = kc_strdup(f->id);
        ix.grid[2 * i] = gh, ix.grid[2 * i + 1] = gw;
        ix.size[2 * i] = f->h, ix.size[2 * i + 1] = f->w;
    }
    KC_TRY(cache_piece_commit(pc));
    cache_prov prov = {0};
    prov_set(&prov, "policy", kind == 1 ? "native16" : "square480");
    prov_set(&prov, "patch", "16");
    if (kind == 2) prov_set(&prov, "refine", "crf");
    int rc = cache_writer_finish(&cw, &ix, &prov);
    cache_writer_free(&cw);
    prov_free(&prov);
    cache_index_free(&ix);
    return rc;
}

static void test_export(const char *dir, int kind)
{
    static const char *const kinds[] = {"square480", "native16", "refined"};
    char *imgs = kc_strfmt("%s/imgs", dir), *spec = kc_strfmt("dir:%s", imgs), *cache = kc_strfmt("%s/m%d.h5", dir, kind);
    char *out = kc_strfmt("%s/out%d", dir, kind);
    kc_mkdirs(imgs);
    for (int i = 0; i < N_FIX; i++) {
        kc_image im = {fixture[i].w, fixture[i].h, kc_calloc((size_t)fixture[i].w * fixture[i].h * 3, 1)};
        char *p = kc_strfmt("%s/%s.png", imgs, fixture[i].id);
        CHECK(image_write_png_rgb(p, &im) == 0, "image %s: %s", p, kc_error());
        free(p);
        free(im.rgb);
    }
    uint8_t *masks[N_FIX] = {0};
    int mh[N_FIX], mw[N_FIX];
    int ok = write_cache(cache, kind, masks, mh, mw) == 0;
    CHECK(ok, "cache %s: %s", cache, kc_error());
    export_request q = {.masks = cache, .setting = "s1", .images = spec, .out = out, .score = EXPORT_SCORE_EIGENGAP};
    ok = ok && export_masks(&q) == 0;
    CHECK(ok, "%s export: %s", kinds[kind], ok ? "" : kc_error());
    /* the JSON */
    char *jp = kc_strfmt("%s/coco.json", out);
    uint8_t *text = NULL;
    size_t len = 0;
    json_value root = {0};
    ok = ok && kc_read_file(jp, &text, &len) == 0 && json_parse(&root, (char *)text, len, jp) == 0;
    CHECK(ok, "%s: %s", jp, ok ? "" : kc_error());
    const json_value *images = json_get(&root, "images"), *anns = json_get(&root, "annotations");
    const json_value *cats = json_get(&root, "categories");
    CHECK(json_count(images) == N_FIX, "%d images", json_count(images));
    CHECK(json_count(cats) == 1 && !strcmp(json_string(json_get(json_item(cats, 0), "name")) ?: "", "object"),
          "categories");
    /* image ids 1..n in id order: a_tall b_odd c_one d_wide */
    static const int by_name[N_FIX] = {1, 0, 2, 3};
    int64_t v, expect_ann = 1;
    int a = 0;
    for (int j = 0; ok && j < N_FIX; j++) {
        const fixture_image *f = &fixture[by_name[j]];
        const json_value *im = json_item(images, j);
        char fname[64];
        snprintf(fname, sizeof fname, "%s.png", f->id);
        CHECK(json_get_int(json_get(im, "id"), &v) == 0 && v == j + 1, "image %d id", j);
        CHECK(!strcmp(json_string(json_get(im, "file_name")) ?: "", fname), "file_name of %s", f->id);
        CHECK(json_get_int(json_get(im, "width"), &v) == 0 && v == f->w, "width of %s", f->id);
        CHECK(json_get_int(json_get(im, "height"), &v) == 0 && v == f->h, "height of %s", f->id);
        /* the PNG: the image's size, palette indices = the mask mapped to pixels */
        char *pp = kc_strfmt("%s/png/%s.png", out, f->id);
        int pw = 0, ph = 0;
        uint8_t *px = NULL;
        int read = image_read_png_index(pp, &pw, &ph, &px) == 0;
        CHECK(read && pw == f->w && ph == f->h, "%s: %dx%d", pp, pw, ph);
        long bad = 0;
        const int i = by_name[j];
        int present[4] = {0};
        for (int y = 0; read && y < ph; y++)
            for (int x = 0; x < pw; x++) {
                uint8_t want = kind == 2 ? masks[i][y * f->w + x]
                                         : masks[i][ref_cell(kind == 1, y, f->h, mh[i]) * mw[i] + ref_cell(kind == 1, x, f->w, mw[i])];
                bad += px[y * pw + x] != want;
                present[want & 3] = 1;
            }
        CHECK(bad == 0, "%s %s: %ld pixels differ from the grid mapped to pixels", kinds[kind], pp, bad);
        /* its annotations, in label order, one per label present */
        for (int label = 1; read && label <= 3; label++) {
            if (!present[label]) continue;
            const json_value *an = json_item(anns, a++);
            CHECK(an != NULL, "%s: no annotation for label %d", f->id, label);
            if (!an) break;
            CHECK(json_get_int(json_get(an, "id"), &v) == 0 && v == expect_ann, "annotation id %lld", (long long)v);
            expect_ann++;
            CHECK(json_get_int(json_get(an, "image_id"), &v) == 0 && v == j + 1, "image_id %lld", (long long)v);
            CHECK(json_get_int(json_get(an, "category_id"), &v) == 0 && v == 1, "category_id");
            CHECK(json_get_int(json_get(an, "iscrowd"), &v) == 0 && v == 0, "iscrowd");
            const json_value *seg = json_get(an, "segmentation"), *size = json_get(seg, "size");
            int64_t sh = -1, sw = -1;
            json_get_int(json_item(size, 0), &sh);
            json_get_int(json_item(size, 1), &sw);
            CHECK(sh == f->h && sw == f->w, "%s: size [%lld, %lld]", f->id, (long long)sh, (long long)sw);
            const char *counts = json_string(json_get(seg, "counts"));
            long mism = counts ? rle_mismatch(counts, px, ph, pw, label) : -1;
            CHECK(mism == 0, "%s %s label %d: the RLE and the PNG differ in %ld pixels", kinds[kind], f->id, label, mism);
            uint8_t *mask = kc_malloc((size_t)pw * ph);
            long long pixels = 0;
            for (int k = 0; k < pw * ph; k++) pixels += mask[k] = px[k] == label;
            int want[4];
            ref_extent(mask, ph, pw, want);
            CHECK(json_get_int(json_get(an, "area"), &v) == 0 && v == pixels, "%s label %d: area %lld, %lld pixels", f->id,
                  label, (long long)v, pixels);
            const json_value *bb = json_get(an, "bbox");
            int same = json_count(bb) == 4;
            for (int k = 0; same && k < 4; k++) same = json_get_int(json_item(bb, k), &v) == 0 && v == want[k];
            CHECK(same, "%s label %d: bbox is not the extent [%d %d %d %d]", f->id, label, want[0], want[1], want[2],
                  want[3]);
            free(mask);
            double score = -1;
            const json_value *sc = json_get(an, "score");
            const double gaps[3] = {0.125, 0.0625, i == 1 ? 0.03125 : NAN};
            if (isnan(gaps[label - 1])) CHECK(sc == NULL, "%s label %d: a score without a record", f->id, label);
            else CHECK(json_get_number(sc, &score) == 0 && score == gaps[label - 1], "%s label %d: score %g", f->id, label,
                       score);
        }
        if (i == 0) CHECK(!present[2], "image 0 has no label 2 (so no annotation)");
        free(px);
        free(pp);
    }
    CHECK(ok && json_count(anns) == a, "%d annotations, %d labels present", json_count(anns), a);
    for (int i = 0; i < N_FIX; i++) free(masks[i]);
    json_free(&root);
    free(text);
    free(jp);
    free(imgs);
    free(spec);
    free(cache);
    free(out);
}

/* Refusals: a features cache, a missing setting, an image not in the dataset; nothing written. */
static void test_refusals(const char *dir)
{
    char *spec = kc_strfmt("dir:%s/imgs", dir), *out = kc_strfmt("%s/refused", dir), *m0 = kc_strfmt("%s/m0.h5", dir);
    export_request q = {.masks = m0, .setting = "nope", .images = spec, .out = out};
    CHECK(export_masks(&q) < 0 && strstr(kc_error(), "no setting 'nope'"), "a missing setting: %s", kc_error());
    char *other = kc_strfmt("%s/imgs2", dir), *spec2 = kc_strfmt("dir:%s", other);
    kc_mkdirs(other);
    kc_image im = {3, 3, kc_calloc(27, 1)};
    q.setting = "s1";
    q.images = spec2;
    for (int i = N_FIX - 1; i >= 0; i--) { /* d_wide, c_one: b_odd is missing; then all at 3x3 */
        char *p = kc_strfmt("%s/%s.png", other, fixture[i].id);
        image_write_png_rgb(p, &im);
        free(p);
        if (i == 2)
            CHECK(export_masks(&q) < 0 && strstr(kc_error(), "image b_odd of") && strstr(kc_error(), "is not in"),
                  "a missing image: %s", kc_error());
    }
    CHECK(export_masks(&q) < 0 && strstr(kc_error(), "b_odd.png: 3x3 pixels, but"), "a wrong size: %s", kc_error());
    CHECK(!kc_exists(out), "%s written after a refusal", out);
    free(im.rgb);
    free(other);
    free(spec2);
    free(spec);
    free(out);
    free(m0);
}

int main(void)
{
    kc_set_prog("test_export");
    test_rle();
    const char *dir = test_tmpdir("export");
    for (int kind = 0; kind < 3; kind++) test_export(dir, kind);
    test_refusals(dir);
    return test_done();
}
