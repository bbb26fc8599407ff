/* tests/test_init.c — kc-init's network (pipeline/model/vit_init.h) and the safetensors writer.
 *
 * References, none produced by the code under test:
 *   - Philox4x32-10: Random123's three published known-answer vectors;
 *   - the series ln: libm's log, relative 2e-15;
 *   - the tensors' bytes: tests/data/init/NAME.sha256, written by tests/ref/init_ref.py (NumPy, the same
 *     recipe) for toy/16 seed 7 and the full-size vit-s/16 seed 0: bit-identical, tolerance 0;
 *   - the statistics of a full-size ViT-S/16 against DINO's init (analytic): every trunc-normal
 *     tensor's std within 2 % of 0.02 (within 5 standard errors, 5/sqrt(2n), for tensors too small
 *     for 2 % to be meaningful: cls_token), mean within 5 standard errors of 0, |x| <= 2 and
 *     <= 6.5 std; biases exactly 0, LayerNorm exactly 1 and 0; patch_embed inside
 *     +-1/sqrt(3 * 16 * 16), its std bound/sqrt(3) within 2 %, its extremes beyond 0.99 bound;
 *   - determinism: 1 and 2 threads give the same bytes, seed 1 differs from seed 0 everywhere;
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

static void test_full(void)
{
    const vit_arch *a = vit_init_find("vit-s/16");
    vit_init_net net;
    double t0 = kc_now();
    omp_set_num_threads(2);
    vit_init_build(&net, a, 0);
    printf("vit-s/16 seed 0 built in %.2f s (2 threads)\n", kc_now() - t0);
    int bad = check_hashes(&net, "tests/data/init/vits16_seed0.sha256");
    printf("vit-s/16 seed 0: %d of %d tensors differ from the NumPy reference\n", bad, net.n);

    /* statistics */
    int64_t params = 0, n_tn = 0, n_zero = 0, n_ln = 0;
    double worst_sd = 0, pooled_s2 = 0, all_amax = 0;
    int64_t pooled_n = 0;
    const double bound = 1.0 / sqrt(3.0 * 16 * 16);
    for (int k = 0; k < net.n; k++) {
        const init_tensor *t = &net.t[k];
        params += t->numel;
        double mean, sd, amax, mn, mx;
        stats(t, &mean, &sd, &amax, &mn, &mx);
        const char *dot = strrchr(t->name, '.');
        int is_bias = dot && !strcmp(dot, ".bias"), is_ln = strstr(t->name, "norm") && !strstr(t->name, "patch");
        if (!strncmp(t->name, "patch_embed.", 12)) {
            CHECK(amax < bound, "%s: |x| %.6g reaches the bound %.6g", t->name, amax, bound);
            if (!is_bias) {
                CHECK(fabs(sd / (bound / sqrt(3.0)) - 1) <= 0.02, "%s: std %.6g, U(-b, b) has %.6g", t->name, sd,
                      bound / sqrt(3.0));
                CHECK(mn < -0.99 * bound && mx > 0.99 * bound, "%s: range [%.6g, %.6g] vs bound %.6g", t->name, mn, mx,
                      bound);
            }
            printf("%-28s U(-%.6f, %.6f): min %.6f max %.6f std %.6f\n", t->name, bound, bound, mn, mx, sd);
        } else if (is_ln) {
            double want = is_bias ? 0.0 : 1.0;
            CHECK(mn == want && mx == want, "%s: LayerNorm %s is not exactly %g", t->name, is_bias ? "bias" : "weight",
                  want);
            n_ln++;
        } else if (is_bias) {
            CHECK(mn == 0 && mx == 0, "%s: bias not zero (range [%g, %g])", t->name, mn, mx);
            n_zero++;
        } else { /* trunc normal, std 0.02 */
            double n = (double)t->numel, tol = fmax(0.02, 5 / sqrt(2 * n));
            double rel = fabs(sd / 0.02 - 1);
            CHECK(rel <= tol, "%s: std %.6g, want 0.02 within %.1f %%", t->name, sd, 100 * tol);
            CHECK(fabs(mean) <= 5 * 0.02 / sqrt(n), "%s: mean %.3g beyond 5 standard errors", t->name, mean);
            CHECK(amax <= 2.0 && amax <= 6.5 * 0.02, "%s: max |x| %.6g (bounds +-2, and 6.5 std = 0.13)", t->name, amax);
            if (n >= 1e4 && rel > worst_sd) worst_sd = rel;
            if (amax > all_amax) all_amax = amax;
            pooled_s2 += sd * sd * n;
            pooled_n += t->numel;
            n_tn++;
        }
    }
    double pooled = sqrt(pooled_s2 / (double)pooled_n);
    printf("vit-s/16: %lld parameters; %lld trunc-normal tensors (pooled std %.6f, worst |std/0.02 - 1| %.3f %% over "
           "tensors of >= 1e4 values, max |x| %.4f = %.2f std), %lld zero biases, %lld LayerNorm tensors\n",
           (long long)params, (long long)n_tn, pooled, 100 * worst_sd, all_amax, all_amax / 0.02, (long long)n_zero,
           (long long)n_ln);
    CHECK(params == 21665664, "vit-s/16 has %lld parameters, DINO's vit_small 21665664", (long long)params);
    CHECK(n_tn == 2 + 4 * 12 && n_zero == 4 * 12 && n_ln == 4 * 12 + 2, "tensor kinds %lld / %lld / %lld",
          (long long)n_tn, (long long)n_zero, (long long)n_ln);
    CHECK(fabs(pooled / 0.02 - 1) <= 0.02 && worst_sd <= 0.02, "pooled std %.6g, worst %.3g", pooled, worst_sd);

    /* determinism: one thread gives the same bytes; another seed differs everywhere it is random
     * (checked on the random tensors of block 0 and the embeddings: enough to cover every kind) */
    int same = 1, differ = 1, checked = 0;
    for (int k = 0; k < net.n; k++) {
        init_tensor c = net.t[k];
        if (strncmp(c.name, "blocks.0.", 9) && strncmp(c.name, "patch_embed.", 12) && strcmp(c.name, "pos_embed")) continue;
        size_t nb = (size_t)c.numel * 4;
        c.data = kc_malloc(nb);
        omp_set_num_threads(1);
        vit_init_fill(&c, 0);
        omp_set_num_threads(2);
        if (memcmp(net.t[k].data, c.data, nb)) same = 0;
        vit_init_fill(&c, 1);
        if (c.kind == INIT_TRUNC_NORMAL || c.kind == INIT_UNIFORM) {
            int64_t eq = 0;
            for (int64_t i = 0; i < c.numel; i++) eq += net.t[k].data[i] == c.data[i];
            if (eq > c.numel / 1000) differ = 0;
        } else if (memcmp(net.t[k].data, c.data, nb)) {
            differ = 0; /* constants must not depend on the seed */
        }
        free(c.data);
        checked++;
    }
    CHECK(checked == 15 && same, "vit-s/16 seed 0: 1 thread and 2 threads give different bytes (%d tensors)", checked);
    CHECK(differ, "vit-s/16: seed 1 is not different from seed 0 in every random tensor");
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
    test_full();
    return test_done();
}
