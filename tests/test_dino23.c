/* tests/test_dino23.c — the forward of DINOv2, DINOv2 with registers and DINOv3 against the
 * independent PyTorch references of tests/ref/dino23_ref.py (issue 29).
 *
 *     build/tests/test_dino23              the committed tiny cases, tests/data/dino23/cases.txt
 *     build/tests/test_dino23 DIR [NAME]   the cases of DIR/cases.txt (tests/test_dino23_full.sh),
 *                                          only those whose name contains NAME when given
 *
 * Each case loads its weights file (weights_load), builds the model with its vit_opts (posembed,
 * keys_pre_rope, ln_eps), runs vit_forward_ex for keys, tokens and attention, then keys alone,
 * and compares every output with the reference:
 *     max |keycut - expected| <= 2e-6 * max |expected|
 * (README.md's bound for DINO's paths against PyTorch; the references are float64, so this is
 * keycut's own rounding, ~5e-7 for PyTorch's float32 on the same cases).  The same case lists
 * the outputs of wrong formulas (LayerNorm eps 1e-6 vs 1e-5, position offset 0.1 or none,
 * antialias or not, renormalised attention, keys before / after RoPE, the key bias mask ignored,
 * RoPE periods from the formula instead of the file, registers left out, ...): keycut's output
 * must be further than the tolerance from each, so the tolerance cannot hide that mistake.  Before
 * any forward, the data are checked to make both possible: every wrong formula lies more than
 * twice the tolerance from the expected output.
 *
 * Weights named '@file' are the forms of the tiny networks that are not committed (hub .pth,
 * training checkpoint, Hugging Face safetensors + config.json): tests/ref/dino23_ref.py forms
 * writes them under build/test-tmp/dino23_forms from the committed files (python3-torch; those
 * cases SKIP without it).  Inputs: .u8 = HWC RGB bytes, normalised here with the ImageNet mean /
 * std in float32 exactly as the reference did; .f32 = CHW floats as they are.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/kc.h"
#include "pipeline/model/vit.h"
#include "pipeline/weights/weights.h"
#include "tests/test.h"

#define DATA "tests/data/dino23"
#define TOL 2e-6
#define MAX_CHECKS 16

static const char *case_dir = DATA;
static const char *forms_dir; /* where the '@' weights are; NULL: not made (no python3-torch) */
static const char *forms_missing;

typedef struct check {
    char kind[8];    /* keys, tokens or attn */
    char label[64];  /* the wrong formula */
    char file[200];
} check;

typedef struct dcase {
    char name[64], weights[256], posembed[8], input[200], out[3][200];
    int pre_rope, h, w, n_checks;
    double ln_eps;
    check checks[MAX_CHECKS];
} dcase;

static const char *const kinds[3] = {"keys", "tokens", "attn"};

static int kind_index(const char *k)
{
    for (int i = 0; i < 3; i++)
        if (!strcmp(k, kinds[i])) return i;
    return -1;
}

static float *read_f32(const char *name, size_t n)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", case_dir, name);
    return test_read_exact(path, n * sizeof(float));
}

/* (3, h, w) normalised input: .u8 (h, w, 3) RGB bytes -> (v / 255 - mean) / sd in float, the
 * operations of tests/ref/dino23_ref.py normalise(), so the same floats; .f32 read as is. */
static float *read_input(const char *name, int h, int w)
{
    const size_t n = (size_t)3 * h * w;
    const size_t len = strlen(name);
    if (len > 3 && !strcmp(name + len - 3, ".u8")) {
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", case_dir, name);
        unsigned char *u8 = test_read_exact(path, n);
        if (!u8) return NULL;
        static const float mean[3] = {0.485f, 0.456f, 0.406f}, sd[3] = {0.229f, 0.224f, 0.225f};
        float *chw = malloc(n * sizeof(float));
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                for (int c = 0; c < 3; c++) {
                    float v = (float)u8[((size_t)y * w + x) * 3 + c] / 255.0f;
                    chw[((size_t)c * h + y) * w + x] = (v - mean[c]) / sd[c];
                }
        free(u8);
        return chw;
    }
    return read_f32(name, n);
}

/* max |a - b|, max |b| and where the largest difference is (NaN counts as the largest) */
static void compare(const float *a, const float *b, size_t n, double *maxdiff, double *maxref,
                    size_t *worst)
{
    *maxdiff = 0;
    *maxref = 0;
    *worst = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]);
        if (!(d <= *maxdiff)) { *maxdiff = d; *worst = i; }
        if (fabs(b[i]) > *maxref) *maxref = fabs(b[i]);
    }
}

static int read_cases(dcase *cs, int max)
{
    char path[4200], line[8192];
    snprintf(path, sizeof path, "%s/cases.txt", case_dir);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    int n = 0, bad = 0;
    while (n < max && fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[strspn(line, " \t\r\n")] == 0) continue;
        dcase *c = &cs[n];
        memset(c, 0, sizeof *c);
        int used = 0;
        if (sscanf(line, "%63s %255s %7s %d %lf %d %d %199s %199s %199s %199s%n", c->name, c->weights,
                   c->posembed, &c->pre_rope, &c->ln_eps, &c->h, &c->w, c->input, c->out[0], c->out[1],
                   c->out[2], &used) != 11) {
            fprintf(stderr, "%s: cannot read line: %s", path, line);
            bad = 1;
            continue;
        }
        for (char *tok = strtok(line + used, " \t\r\n"); tok; tok = strtok(NULL, " \t\r\n")) {
            char *c1 = strchr(tok, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
            if (!c2 || c->n_checks == MAX_CHECKS) {
                fprintf(stderr, "%s: %s: bad check \"%s\"\n", path, c->name, tok);
                bad = 1;
                break;
            }
            check *k = &c->checks[c->n_checks++];
            snprintf(k->kind, sizeof k->kind, "%.*s", (int)(c1 - tok), tok);
            snprintf(k->label, sizeof k->label, "%.*s", (int)(c2 - c1 - 1), c1 + 1);
            snprintf(k->file, sizeof k->file, "%s", c2 + 1);
            if (kind_index(k->kind) < 0) {
                fprintf(stderr, "%s: %s: unknown output \"%s\"\n", path, c->name, k->kind);
                bad = 1;
            }
        }
        n++;
    }
    fclose(f);
    return bad ? -1 : n;
}

static int posembed_of(const char *s)
{
    if (!strcmp(s, "auto")) return VIT_POS_AUTO;
    if (!strcmp(s, "dino")) return VIT_POS_DINO;
    if (!strcmp(s, "hf")) return VIT_POS_HF;
    if (!strcmp(s, "aa")) return VIT_POS_AA;
    return -1;
}

/* The expected output sizes: keys and tokens (G, dim), attn (heads, G). */
static size_t out_count(int kind, size_t G, int dim, int heads)
{
    return kind == 2 ? (size_t)heads * G : G * (size_t)dim;
}

/* The data alone (no forward): every wrong formula is more than 2 tolerances from the expected
 * output, so a forward can be within the tolerance of one and beyond it from the other.  The
 * sizes are not known before a model is built: files are compared whole. */
static void check_data(const dcase *c)
{
    for (int i = 0; i < c->n_checks; i++) {
        const check *k = &c->checks[i];
        const char *ref_file = c->out[kind_index(k->kind)];
        char p1[4400], p2[4400];
        snprintf(p1, sizeof p1, "%s/%s", case_dir, ref_file);
        snprintf(p2, sizeof p2, "%s/%s", case_dir, k->file);
        FILE *f1 = fopen(p1, "rb"), *f2 = fopen(p2, "rb");
        long n1 = -1, n2 = -2;
        if (f1 && f2) {
            fseek(f1, 0, SEEK_END);
            fseek(f2, 0, SEEK_END);
            n1 = ftell(f1);
            n2 = ftell(f2);
        }
        if (f1) fclose(f1);
        if (f2) fclose(f2);
        CHECK(n1 == n2 && n1 > 0 && n1 % 4 == 0, "%s: %s and %s are missing or differ in size", c->name,
              ref_file, k->file);
        if (!(n1 == n2 && n1 > 0 && n1 % 4 == 0)) continue;
        float *e = read_f32(ref_file, (size_t)n1 / 4), *v = read_f32(k->file, (size_t)n1 / 4);
        double md = 0, mv = 0;
        size_t wi;
        if (e && v) compare(e, v, (size_t)n1 / 4, &md, &mv, &wi);
        CHECK(e && v && md > 2 * TOL * mv,
              "%s: the wrong formula %s is only %.3g of max from the expected %s (need > %g)", c->name,
              k->label, mv > 0 ? md / mv : 0.0, k->kind, 2 * TOL);
        free(e);
        free(v);
    }
}

static void run_case(const dcase *c)
{
    char path[4400];
    if (c->weights[0] == '@') {
        if (!forms_dir) {
            SKIP("%s: %s (the file forms made at test time) not made: %s not installed", c->name,
                 c->weights + 1, forms_missing ? forms_missing : "python3-torch");
            return;
        }
        snprintf(path, sizeof path, "%s/%s", forms_dir, c->weights + 1);
    } else {
        snprintf(path, sizeof path, "%s/%s", case_dir, c->weights);
    }
    kc_weights w;
    if (weights_load(&w, path, NULL) < 0) {
        printf("%-24s %-36s cannot load: %s\n", c->name, c->weights, kc_error());
        CHECK(0, "%s: weights_load: %s", c->name, kc_error());
        return;
    }
    vit_opts o = VIT_OPTS_DEFAULT;
    o.posembed = posembed_of(c->posembed);
    o.keys_pre_rope = c->pre_rope;
    o.ln_eps = c->ln_eps;
    CHECK(o.posembed >= 0, "%s: unknown posembed %s", c->name, c->posembed);
    vit_model *m = NULL;
    if (vit_init(&m, &w, &o) < 0) {
        printf("%-24s %-36s vit_init refused it: %s\n", c->name, c->weights, kc_error());
        CHECK(0, "%s: vit_init: %s", c->name, kc_error());
        weights_free(&w);
        return;
    }
    weights_free(&w); /* the model keeps its own copy */
    const int p = vit_patch(m), D = vit_dim(m), heads = vit_heads(m);
    const int gh = c->h / p, gw = c->w / p;
    const size_t G = (size_t)gh * gw;
    CHECK(c->h % p == 0 && c->w % p == 0, "%s: %dx%d is not a multiple of the patch %d", c->name, c->h, c->w, p);
    const double want_eps = c->ln_eps > 0 ? c->ln_eps : !strncmp(c->name, "dinov3", 6) ? 1e-5 : 1e-6;
    CHECK(vit_ln_eps(m) == want_eps, "%s: LayerNorm eps %g, expected %g", c->name, vit_ln_eps(m), want_eps);
    CHECK(vit_has_cls(m), "%s: no class token", c->name);
    float *in = read_input(c->input, c->h, c->w);
    float *ref[3], *got[3];
    int have = in != NULL;
    for (int k = 0; k < 3; k++) {
        ref[k] = read_f32(c->out[k], out_count(k, G, D, heads));
        got[k] = malloc(out_count(k, G, D, heads) * sizeof(float));
        have &= ref[k] != NULL;
    }
    CHECK(have, "%s: input or reference missing or of the wrong size (grid %dx%d, dim %d, heads %d)",
          c->name, gh, gw, D, heads);
    vit_state *s = NULL;
    int rc = vit_state_new(&s, m, gh, gw);
    CHECK(rc == 0, "%s: vit_state_new: %s", c->name, kc_error());
    if (have && rc == 0) {
        vit_outputs out = {got[0], got[1], got[2]};
        double t0 = kc_now();
        rc = vit_forward_ex(m, s, in, gh, gw, &out);
        double ms = 1e3 * (kc_now() - t0);
        CHECK(rc == 0, "%s: vit_forward_ex: %s", c->name, kc_error());
        float *keys_only = malloc(G * D * sizeof(float));
        vit_outputs ko = {keys_only, NULL, NULL};
        int rc2 = vit_forward_ex(m, s, in, gh, gw, &ko);
        CHECK(rc2 == 0, "%s: vit_forward_ex (keys only): %s", c->name, kc_error());
        double md[4], mr[4];
        size_t wi[4];
        for (int k = 0; k < 3; k++) compare(got[k], ref[k], out_count(k, G, D, heads), &md[k], &mr[k], &wi[k]);
        compare(keys_only, ref[0], G * D, &md[3], &mr[3], &wi[3]);
        printf("%-24s %-36s grid %2dx%-2d max|diff|/max|ref|: keys %.2g tokens %.2g attn %.2g keys-only %.2g "
               "(tolerance %g)  %.0f ms  [%s; %s]\n",
               c->name, c->weights, gh, gw, md[0] / mr[0], md[1] / mr[1], md[2] / mr[2], md[3] / mr[3], TOL, ms,
               vit_forward_kind(m), vit_attention_path(m));
        for (int k = 0; k < 4; k++) {
            const float *g = k == 3 ? keys_only : got[k];
            const char *what = k == 3 ? "keys (alone)" : kinds[k];
            CHECK(rc == 0 && rc2 == 0 && md[k] <= TOL * mr[k],
                  "%s: %s max |diff| %.3g > %g * max |ref| %.3g (worst at %zu: %.8g vs %.8g)", c->name, what,
                  md[k], TOL, mr[k], wi[k], (double)g[wi[k]], (double)ref[k == 3 ? 0 : k][wi[k]]);
        }
        for (int i = 0; i < c->n_checks; i++) {
            const check *ch = &c->checks[i];
            const int k = kind_index(ch->kind);
            const size_t n = out_count(k, G, D, heads);
            float *wrong = read_f32(ch->file, n);
            CHECK(wrong != NULL, "%s: %s missing or of the wrong size", c->name, ch->file);
            if (!wrong) continue;
            double dw, mw;
            size_t ww;
            compare(got[k], wrong, n, &dw, &mw, &ww);
            printf("    %-7s vs the wrong formula %-16s %.3g of max (%.0fx the tolerance)\n", ch->kind,
                   ch->label, dw / mw, dw / mw / TOL);
            CHECK(dw > TOL * mw, "%s: %s within the tolerance of the wrong formula %s (%.3g of max)", c->name,
                  ch->kind, ch->label, dw / mw);
            free(wrong);
        }
        free(keys_only);
    }
    vit_state_free(s);
    vit_free(m);
    free(in);
    for (int k = 0; k < 3; k++) {
        free(ref[k]);
        free(got[k]);
    }
}

/* The forms of the tiny networks that are not committed, made once by the reference script. */
static void make_forms(const dcase *cs, int n)
{
    int any = 0;
    for (int i = 0; i < n; i++) any |= cs[i].weights[0] == '@';
    if (!any) return;
    if ((forms_missing = test_missing("py:torch py:numpy"))) return;
    const char *tmp = test_tmpdir("dino23_forms");
    char cmd[8400];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 tests/ref/dino23_ref.py forms '%s' '%s' >/dev/null", case_dir, tmp);
    int rc = system(cmd);
    CHECK(rc == 0, "%s failed (%d)", cmd, rc);
    if (rc == 0) forms_dir = tmp;
    else forms_missing = "a working tests/ref/dino23_ref.py forms";
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* lines reach the log even if something crashes */
    if (argc > 1) case_dir = argv[1];
    const char *only = argc > 2 ? argv[2] : NULL;
    enum { MAX_CASES = 64 };
    dcase *cs = calloc(MAX_CASES, sizeof *cs);
    int n = read_cases(cs, MAX_CASES);
    CHECK(n > 0, "%s/cases.txt: no cases or a bad line", case_dir);
    if (n > 0 && !strcmp(case_dir, DATA)) {
        CHECK(n >= 19, "%s/cases.txt: %d cases (expected the 19 written by dino23_ref.py tiny)", DATA, n);
        int fams[3] = {0, 0, 0};
        for (int i = 0; i < n; i++) {
            fams[0] += !strncmp(cs[i].name, "dinov2_", 7) && strncmp(cs[i].name, "dinov2_reg", 10);
            fams[1] += !strncmp(cs[i].name, "dinov2_reg", 10);
            fams[2] += !strncmp(cs[i].name, "dinov3", 6);
        }
        CHECK(fams[0] && fams[1] && fams[2], "cases of every family: %d %d %d", fams[0], fams[1], fams[2]);
    }
    for (int i = 0; i < n; i++) check_data(&cs[i]);
    make_forms(cs, n);
    for (int i = 0; i < n; i++)
        if (!only || strstr(cs[i].name, only)) run_case(&cs[i]);
    free(cs);
    return test_done();
}
