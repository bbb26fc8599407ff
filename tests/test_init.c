/* tests/test_init.c — kc-init's network (pipeline/model/vit_init.h) and the safetensors writer.
 *
 * References, none produced by the code under test:
 *   - Philox4x32-10: Random123's three published known-answer vectors;
 *   - the series ln: libm's log, relative 2e-15;
 *   - the tensors' bytes: tests/data/init/NAME.sha256, written by tests/ref/init_ref.py (NumPy, the same
 *     recipe) for toy/16 seed 7 and the full-size vit-s/16, dinov2-s/14, dinov2-reg-s/14 and
 *     dinov3-s/16 seed 0: bit-identical, tolerance 0;
 *   - the released files' tensor counts (175, 176, 188), value counts and shapes (cls_token,
 *     pos_embed 1 + 37*37, mask_token, register/storage tokens, periods, bias_mask, gammas);
 *   - the statistics of each full-size network against its family's official init, the expected
 *     value per tensor written below from the official code (expected()): every trunc-normal
 *     tensor's std within 2 % of 0.02 (within 5 standard errors, 5/sqrt(2n), for tensors too small
 *     for 2 % to be meaningful), mean within 5 standard errors of 0, |x| <= 2 and <= 6.5 std;
 *     normal_ tensors (DINOv2's cls_token and registers std 1e-6, DINOv3's cls_token and storage
 *     tokens std 0.02) likewise; biases, mask_token exactly 0, LayerNorm exactly 1 and 0, LayerScale
 *     gammas exactly fp32(1e-5), qkv.bias_mask exactly 1/0/1 by thirds, rope_embed.periods the bits
 *     PyTorch computes (tolerance 0); patch_embed inside +-1/sqrt(3 p^2), its std bound/sqrt(3)
 *     within 2 %, its extremes beyond 0.99 bound;
 *   - determinism: 1 and 2 threads give the same bytes, seed 1 differs from seed 0 in every random
 *     tensor and in no constant one;
 *   - the writer: its file read back by st_open and weights_load gives the same floats; header
 *     layout (metadata first, sorted names, padding to 8); bad input leaves no file.
 *   - supervised ViT: a hand-made timm-named safetensors (toy backbone + head.weight (1000, 64),
 *     head.bias (1000), final norm) loads with the head skipped and listed.
 */
#include <omp.h>
#include <stdint.h>
#include <unistd.h>

#include "pipeline/json.h"
#include "pipeline/kc.h"
#include "pipeline/weights/safetensors.h"
#include "pipeline/sha256.h"
#include "pipeline/model/vit_init.h"
#include "pipeline/weights/weights.h"
#include "tests/test.h"

static void test_philox(void)
{
    static const uint32_t kat[3][10] = {
        {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
        {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d, 0x41c83b0e, 0xa20bc7c6,
         0x6d5451fd},
        {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09, 0x94fdcceb, 0x5001e420,
         0x24126ea1},
    };
    for (int k = 0; k < 3; k++) {
        uint32_t out[4];
        philox4x32_10(kat[k], kat[k] + 4, out);
        CHECK(!memcmp(out, kat[k] + 6, sizeof out), "philox KAT %d: %08x %08x %08x %08x", k, out[0], out[1], out[2],
              out[3]);
    }
}

static void test_ln(void)
{
    double worst = 0;
    for (int i = 1; i <= 200000; i++) {
        double s = i / 200001.0; /* (0, 1): what the polar method feeds it */
        double r = fabs(init_ln(s) - log(s)) / fabs(log(s));
        if (r > worst) worst = r;
    }
    for (double s = 1e-300; s < 1e300; s *= 1.37) {
        double l = log(s), r = l ? fabs(init_ln(s) - l) / fabs(l) : fabs(init_ln(s));
        if (r > worst) worst = r;
    }
    printf("series ln vs libm log: worst relative difference %.3g\n", worst);
    CHECK(worst <= 2e-15, "series ln: worst relative difference %.3g > 2e-15", worst);
}

/* Every tensor's sha256 against the committed NumPy digests; returns the mismatches. */
static int check_hashes(const vit_init_net *net, const char *path)
{
    FILE *f = fopen(path, "r");
    CHECK(f != NULL, "cannot open %s", path);
    if (!f) return 1;
    char name[256], hash[65];
    int i = 0, bad = 0;
    while (fscanf(f, "%255s %64s", name, hash) == 2) {
        if (i >= net->n || strcmp(net->t[i].name, name)) {
            CHECK(0, "%s: tensor %d is %s, expected %s", path, i, i < net->n ? net->t[i].name : "(none)", name);
            bad++;
        } else {
            char got[65];
            kc_sha256_buf_hex(net->t[i].data, (size_t)net->t[i].numel * 4, got);
            if (strcmp(got, hash)) {
                CHECK(0, "%s: %s differs from the NumPy reference (%.12s vs %.12s)", path, name, got, hash);
                bad++;
            }
        }
        i++;
    }
    fclose(f);
    CHECK(i == net->n, "%s: %d tensors listed, %d built", path, i, net->n);
    return bad + (i != net->n);
}

static void stats(const init_tensor *t, double *mean, double *sd, double *amax, double *mn, double *mx)
{
    double s = 0, s2 = 0;
    *amax = 0;
    *mn = INFINITY;
    *mx = -INFINITY;
    for (int64_t i = 0; i < t->numel; i++) {
        double v = t->data[i];
        s += v;
        if (fabs(v) > *amax) *amax = fabs(v);
        if (v < *mn) *mn = v;
        if (v > *mx) *mx = v;
    }
    *mean = s / (double)t->numel;
    for (int64_t i = 0; i < t->numel; i++) s2 += (t->data[i] - *mean) * (t->data[i] - *mean);
    *sd = sqrt(s2 / (double)t->numel);
}

/* What the official code gives each tensor, written here from that code (the file's header, and
 * vit_init.h for the lines), not from vit_init.c.  *v: std, bound or constant. */
typedef enum { X_TRUNC_NORMAL, X_NORMAL, X_UNIFORM, X_CONST, X_PERIODS, X_KMASK } expect_kind;

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

static expect_kind expected(const char *family, const char *name, int patch, double *v)
{
    *v = 0;
    if (!strncmp(name, "patch_embed.proj.", 17)) { /* Conv2d default / DINOv3's reset_parameters */
        *v = 1.0 / sqrt(3.0 * patch * patch);
        return X_UNIFORM;
    }
    if (strstr(name, "norm")) { /* norm1, norm2, norm: LayerNorm 1 / 0 */
        *v = ends_with(name, ".weight") ? 1.0 : 0.0;
        return X_CONST;
    }
    if (ends_with(name, ".gamma")) { /* LayerScale: ssl_default_config layerscale / hub layerscale_init */
        *v = 1e-5;
        return X_CONST;
    }
    if (ends_with(name, ".bias_mask")) return X_KMASK;
    if (!strcmp(name, "rope_embed.periods")) return X_PERIODS;
    if (!strcmp(name, "mask_token")) return X_CONST;
    if (!strcmp(name, "cls_token") || !strcmp(name, "register_tokens") || !strcmp(name, "storage_tokens")) {
        if (!strcmp(family, "dino")) { /* DINO: trunc_normal_(cls_token, std=.02) */
            *v = 0.02;
            return X_TRUNC_NORMAL;
        }
        *v = !strcmp(family, "dinov2") ? 1e-6 : 0.02; /* DINOv2 normal_(std=1e-6), DINOv3 normal_(std=.02) */
        return X_NORMAL;
    }
    if (ends_with(name, ".bias")) return X_CONST; /* linear biases: zeros */
    *v = 0.02;                                    /* linear weights and pos_embed: trunc_normal_(std=.02) */
    return X_TRUNC_NORMAL;
}

/* PyTorch 1.13, fp32: 100 ** (2 * torch.arange(16, dtype=torch.float32) / 32), the float bits (what
 * DINOv3's RopePositionEmbedding._init_weights computes for D_head 64, base 100, dtype fp32) */
static const uint32_t torch_periods[16] = {0x3f800000, 0x3faab0d5, 0x3fe39ea9, 0x4017c496, 0x404a62c2, 0x4086f161,
                                           0x40b3f300, 0x40eff755, 0x41200000, 0x41555d0a, 0x418e432a, 0x41bdb5bc,
                                           0x41fcfb72, 0x4228adb9, 0x4260efc0, 0x4295fa95};

typedef struct full_case {
    const char *arch, *family, *hashes;
    int patch, n_tensors;
    int n_random;            /* random tensors: trunc-normal, normal and the 2 uniform ones of patch_embed */
    int n_det;               /* tensors of block 0, patch_embed and the embeddings (the determinism check) */
    int64_t values;          /* every tensor's numel, buffers included */
    struct {
        const char *name;
        int ndim;
        int64_t shape[4];
    } shapes[6];             /* the released files' shapes (notes/dino23.md, section 5) */
} full_case;

static const full_case full_cases[] = {
    {"vit-s/16", "dino", "tests/data/init/vits16_seed0.sha256", 16, 150, 52, 12 + 2 + 2, 21665664,
     {{"cls_token", 3, {1, 1, 384}}, {"pos_embed", 3, {1, 197, 384}},
      {"patch_embed.proj.weight", 4, {384, 3, 16, 16}}}},
    {"dinov2-s/14", "dinov2", "tests/data/init/dinov2s14_seed0.sha256", 14, 175, 52, 14 + 2 + 3, 22056576,
     {{"cls_token", 3, {1, 1, 384}}, {"pos_embed", 3, {1, 1370, 384}}, {"mask_token", 2, {1, 384}},
      {"patch_embed.proj.weight", 4, {384, 3, 14, 14}}, {"blocks.11.ls2.gamma", 1, {384}}}},
    {"dinov2-reg-s/14", "dinov2", "tests/data/init/dinov2regs14_seed0.sha256", 14, 176, 53, 14 + 2 + 4, 22058112,
     {{"cls_token", 3, {1, 1, 384}}, {"pos_embed", 3, {1, 1370, 384}}, {"mask_token", 2, {1, 384}},
      {"register_tokens", 3, {1, 4, 384}}, {"patch_embed.proj.weight", 4, {384, 3, 14, 14}},
      {"blocks.0.ls1.gamma", 1, {384}}}},
    {"dinov3-s/16", "dinov3", "tests/data/init/dinov3s16_seed0.sha256", 16, 188, 52, 15 + 2 + 4, 21614992,
     {{"cls_token", 3, {1, 1, 384}}, {"storage_tokens", 3, {1, 4, 384}}, {"mask_token", 2, {1, 384}},
      {"rope_embed.periods", 1, {16}}, {"patch_embed.proj.weight", 4, {384, 3, 16, 16}},
      {"blocks.5.attn.qkv.bias_mask", 1, {1152}}}},
};

static const init_tensor *find_tensor(const vit_init_net *net, const char *name)
{
    for (int k = 0; k < net->n; k++)
        if (!strcmp(net->t[k].name, name)) return &net->t[k];
    return NULL;
}

/* One full-size architecture, seed 0: NumPy's bytes, the released shapes, each tensor's distribution
 * against the official init, determinism. */
static void test_full(const full_case *c)
{
    const vit_arch *a = vit_init_find(c->arch);
    CHECK(a != NULL, "%s: unknown to vit_init_find", c->arch);
    if (!a) return;
    vit_init_net net;
    double t0 = kc_now();
    omp_set_num_threads(2);
    vit_init_build(&net, a, 0);
    printf("%s seed 0 built in %.2f s (2 threads)\n", c->arch, kc_now() - t0);
    int bad = check_hashes(&net, c->hashes);
    printf("%s seed 0: %d of %d tensors differ from the NumPy reference\n", c->arch, bad, net.n);
    CHECK(net.n == c->n_tensors, "%s: %d tensors, the released file has %d", c->arch, net.n, c->n_tensors);
    for (int i = 0; i < 6 && c->shapes[i].name; i++) {
        const init_tensor *t = find_tensor(&net, c->shapes[i].name);
        int same = t && t->ndim == c->shapes[i].ndim;
        for (int d = 0; same && d < t->ndim; d++) same = t->shape[d] == c->shapes[i].shape[d];
        CHECK(same, "%s: %s missing or not of the released shape", c->arch, c->shapes[i].name);
    }

    /* statistics */
    int64_t values = 0, n_tn = 0, n_const = 0, n_normal = 0;
    double worst_sd = 0, pooled_s2 = 0, all_amax = 0, worst_const = 0;
    int64_t pooled_n = 0;
    for (int k = 0; k < net.n; k++) {
        const init_tensor *t = &net.t[k];
        values += t->numel;
        double mean, sd, amax, mn, mx, v;
        stats(t, &mean, &sd, &amax, &mn, &mx);
        const double n = (double)t->numel;
        switch (expected(c->family, t->name, c->patch, &v)) {
        case X_UNIFORM:
            CHECK(amax < v, "%s: |x| %.6g reaches the bound %.6g", t->name, amax, v);
            if (!ends_with(t->name, ".bias")) {
                CHECK(fabs(sd / (v / sqrt(3.0)) - 1) <= 0.02, "%s: std %.6g, U(-b, b) has %.6g (tolerance 2 %%)",
                      t->name, sd, v / sqrt(3.0));
                CHECK(mn < -0.99 * v && mx > 0.99 * v, "%s: range [%.6g, %.6g] vs bound %.6g", t->name, mn, mx, v);
            }
            printf("%-28s U(-%.6f, %.6f): min %.6f max %.6f std %.6f\n", t->name, v, v, mn, mx, sd);
            break;
        case X_CONST: { /* LayerNorm 1 / 0, biases 0, mask_token 0, LayerScale 1e-5: exact */
            double w = fmax(fabs(mn - (float)v), fabs(mx - (float)v));
            CHECK(w == 0, "%s: not exactly %g (worst |difference| %.3g, tolerance 0)", t->name, (double)(float)v, w);
            if (w > worst_const) worst_const = w;
            n_const++;
            break;
        }
        case X_PERIODS: {
            double w = t->numel == 16 ? 0 : INFINITY;
            int same = t->numel == 16;
            for (int i = 0; t->numel == 16 && i < 16; i++) {
                float want;
                memcpy(&want, &torch_periods[i], 4);
                same &= !memcmp(&t->data[i], &want, 4);
                w = fmax(w, fabs((double)t->data[i] - want));
            }
            printf("%s: %s vs PyTorch's fp32 100 ** (2 arange(16) / 32): worst |difference| %.3g (tolerance 0)\n",
                   c->arch, t->name, w);
            CHECK(same, "%s: %s differ from PyTorch's fp32 periods (worst |difference| %.3g, tolerance 0)", c->arch,
                  t->name, w);
            break;
        }
        case X_KMASK: { /* fill 1, then the k third [o // 3, 2 o // 3) 0 */
            int64_t wrong = 0, o = t->numel;
            for (int64_t i = 0; i < o; i++) wrong += t->data[i] != (i >= o / 3 && i < 2 * o / 3 ? 0.0f : 1.0f);
            CHECK(o == 1152 && wrong == 0, "%s: %lld of %lld values differ from 1 (q), 0 (k), 1 (v)", t->name,
                  (long long)wrong, (long long)o);
            n_const++;
            break;
        }
        case X_NORMAL: { /* untruncated normal_: std within 5 standard errors (at least 2 %), mean too */
            double tol = fmax(0.02, 5 / sqrt(2 * n)), rel = fabs(sd / v - 1);
            printf("%-28s normal_(std=%g): std %.4g (|ratio - 1| %.3f, tolerance %.3f), mean %.3g, max |x| %.2f std\n",
                   t->name, v, sd, rel, tol, mean, amax / v);
            CHECK(rel <= tol, "%s: std %.6g, want %g within %.1f %%", t->name, sd, v, 100 * tol);
            CHECK(fabs(mean) <= 5 * v / sqrt(n), "%s: mean %.3g beyond 5 standard errors of 0", t->name, mean);
            CHECK(amax <= 6.5 * v, "%s: max |x| %.6g beyond 6.5 std", t->name, amax);
            n_normal++;
            break;
        }
        case X_TRUNC_NORMAL: { /* trunc_normal_(std=.02) in [-2, 2]: the clamp never acts */
            double tol = fmax(0.02, 5 / sqrt(2 * n)), rel = fabs(sd / v - 1);
            CHECK(rel <= tol, "%s: std %.6g, want %g within %.1f %%", t->name, sd, v, 100 * tol);
            CHECK(fabs(mean) <= 5 * v / sqrt(n), "%s: mean %.3g beyond 5 standard errors", t->name, mean);
            CHECK(amax <= 2.0 && amax <= 6.5 * v, "%s: max |x| %.6g (bounds +-2, and 6.5 std = %g)", t->name, amax,
                  6.5 * v);
            if (n >= 1e4 && rel > worst_sd) worst_sd = rel;
            if (amax > all_amax) all_amax = amax;
            pooled_s2 += sd * sd * n;
            pooled_n += t->numel;
            n_tn++;
            break;
        }
        }
    }
    double pooled = sqrt(pooled_s2 / (double)pooled_n);
    printf("%s: %lld values; %lld trunc-normal tensors (pooled std %.6f, worst |std/0.02 - 1| %.3f %% over "
           "tensors of >= 1e4 values, max |x| %.4f = %.2f std), %lld normal tensors, %lld exact constant tensors "
           "(worst |difference| %.3g)\n",
           c->arch, (long long)values, (long long)n_tn, pooled, 100 * worst_sd, all_amax, all_amax / 0.02,
           (long long)n_normal, (long long)n_const, worst_const);
    CHECK(values == c->values, "%s has %lld values, the released file %lld", c->arch, (long long)values,
          (long long)c->values);
    CHECK(n_tn + n_normal + 2 == c->n_random, "%s: %lld normal and trunc-normal tensors, want %d", c->arch,
          (long long)(n_tn + n_normal), c->n_random - 2);
    CHECK(fabs(pooled / 0.02 - 1) <= 0.02 && worst_sd <= 0.02, "pooled std %.6g, worst %.3g (tolerance 2 %%)", pooled,
          worst_sd);

    /* determinism: one thread gives the same bytes; another seed differs everywhere it is random and
     * nowhere else (checked on block 0 and the embeddings: every kind of tensor) */
    int same = 1, differ = 1, checked = 0;
    for (int k = 0; k < net.n; k++) {
        init_tensor c1 = net.t[k];
        if (strncmp(c1.name, "blocks.0.", 9) && strncmp(c1.name, "patch_embed.", 12) && strcmp(c1.name, "pos_embed") &&
            !strstr(c1.name, "_token") && strcmp(c1.name, "rope_embed.periods"))
            continue;
        size_t nb = (size_t)c1.numel * 4;
        c1.data = kc_malloc(nb);
        omp_set_num_threads(1);
        vit_init_fill(&c1, 0);
        omp_set_num_threads(2);
        if (memcmp(net.t[k].data, c1.data, nb)) same = 0;
        vit_init_fill(&c1, 1);
        double v;
        expect_kind x = expected(c->family, c1.name, c->patch, &v);
        if (x == X_TRUNC_NORMAL || x == X_NORMAL || x == X_UNIFORM) {
            int64_t eq = 0;
            for (int64_t i = 0; i < c1.numel; i++) eq += net.t[k].data[i] == c1.data[i];
            if (eq > c1.numel / 1000) differ = 0;
        } else if (memcmp(net.t[k].data, c1.data, nb)) {
            differ = 0; /* constants must not depend on the seed */
        }
        free(c1.data);
        checked++;
    }
    CHECK(checked == c->n_det && same, "%s seed 0: 1 thread and 2 threads give different bytes (%d tensors, want %d)",
          c->arch, checked, c->n_det);
    CHECK(differ, "%s: seed 1 is not different from seed 0 in every random tensor, or a constant changed", c->arch);
    vit_init_free(&net);
}

static void test_toy_and_writer(void)
{
    const vit_arch *a = vit_init_find("toy/16");
    CHECK(a && !vit_init_find("vit-x/16") && !vit_init_find(""), "vit_init_find");
    vit_init_net net;
    vit_init_build(&net, a, 7);
    CHECK(check_hashes(&net, "tests/data/init/toy16_seed7.sha256") == 0, "toy/16 seed 7 differs from NumPy");
    for (int k = 0; k < net.n; k++)
        for (int j = 0; j < k; j++)
            CHECK(init_name_hash(net.t[k].name) != init_name_hash(net.t[j].name), "name hashes collide");

    /* write it, with a classification head as a supervised timm file has */
    const char *dir = test_tmpdir("init");
    char *path = kc_strfmt("%s/sup.safetensors", dir);
    int n = net.n + 2;
    st_out_tensor *t = kc_calloc((size_t)n, sizeof *t);
    for (int k = 0; k < net.n; k++) {
        t[k].name = net.t[k].name;
        t[k].ndim = net.t[k].ndim;
        memcpy(t[k].shape, net.t[k].shape, sizeof net.t[k].shape);
        t[k].data = net.t[k].data;
    }
    float *hw = kc_malloc(1000 * 64 * sizeof *hw), *hb = kc_malloc(1000 * sizeof *hb);
    for (int i = 0; i < 1000 * 64; i++) hw[i] = (float)((i % 97) - 48) / 1000.0f;
    for (int i = 0; i < 1000; i++) hb[i] = (float)i / 1000.0f;
    t[net.n] = (st_out_tensor){"head.weight", 2, {1000, 64}, hw};
    t[net.n + 1] = (st_out_tensor){"head.bias", 1, {1000}, hb};
    const char *meta[] = {"seed", "7", "arch", "toy/16"};
    CHECK(st_write_f32(path, t, n, meta, 2) == 0, "st_write_f32: %s", kc_error());
    char *tmp = kc_strfmt("%s.tmp", path);
    CHECK(!kc_exists(tmp), "%s left behind", tmp);

    /* header layout */
    uint8_t *data = NULL;
    size_t size = 0;
    if (kc_read_file(path, &data, &size) == 0) {
        uint64_t hl = 0;
        for (int k = 7; k >= 0; k--) hl = hl << 8 | data[k];
        CHECK(hl % 8 == 0 && hl + 8 <= size, "header length %llu", (unsigned long long)hl);
        CHECK(!strncmp((char *)data + 8, "{\"__metadata__\":{\"arch\":\"toy/16\",\"seed\":\"7\"},", 45),
              "header does not start with the sorted metadata: %.60s", (char *)data + 8);
        json_value root;
        if (json_parse(&root, (const char *)data + 8, (size_t)hl, "header") == 0) {
            int sorted = 1;
            for (int i = 2; i < root.n; i++) sorted &= strcmp(root.keys[i - 1], root.keys[i]) < 0;
            CHECK(sorted && root.n == n + 1, "header keys not sorted, or %d keys for %d tensors", root.n, n);
            json_free(&root);
        } else {
            CHECK(0, "header is not JSON: %s", kc_error());
        }
        CHECK(size == 8 + hl + 4 * (size_t)(1000 * 65 + 150464), "file size %zu", size); /* toy: 150464 parameters */
        free(data);
    }

    /* read back: the supervised file loads with the head skipped and listed, values exact */
    kc_weights w;
    if (weights_load(&w, path, NULL) == 0) {
        CHECK(w.n == net.n, "%d backbone tensors loaded, %d written", w.n, net.n);
        CHECK(w.n_skipped == 2 && !strcmp(w.skipped[0], "head.bias") && !strcmp(w.skipped[1], "head.weight"),
              "skipped: %d (%s ...)", w.n_skipped, w.n_skipped ? w.skipped[0] : "");
        int exact = 1;
        for (int k = 0; k < net.n; k++) {
            const kc_tensor *x = weights_find(&w, net.t[k].name);
            if (!x || memcmp(x->data, net.t[k].data, (size_t)net.t[k].numel * 4)) exact = 0;
        }
        CHECK(exact, "a tensor read back differs from what was written");
        weights_free(&w);
    } else {
        CHECK(0, "weights_load: %s", kc_error());
    }

    /* bad input: a duplicate name writes nothing */
    char *dup = kc_strfmt("%s/dup.safetensors", dir);
    t[1].name = t[0].name;
    CHECK(st_write_f32(dup, t, n, meta, 2) < 0 && strstr(kc_error(), "given twice"), "duplicate name: %s", kc_error());
    char *duptmp = kc_strfmt("%s.tmp", dup);
    CHECK(!kc_exists(dup) && !kc_exists(duptmp), "a failed write left a file");
    free(duptmp);
    free(dup);
    free(tmp);
    free(hw);
    free(hb);
    free(t);
    free(path);
    vit_init_free(&net);
}

int main(void)
{
    kc_set_prog("test_init");
    test_philox();
    test_ln();
    test_toy_and_writer();
    for (size_t i = 0; i < sizeof full_cases / sizeof *full_cases; i++) test_full(&full_cases[i]);
    return test_done();
}
