/* stages/kc-init.c — a randomly initialised ViT (DINO's initialisation) as a safetensors file.
 *
 *   kc-init --arch vit-s/16|vit-s/8|vit-b/16|vit-b/8|toy/16 --seed N --out FILE.safetensors
 *
 * The tensors, their names and the initialisation are those of pipeline/model/vit_init.h; the same arch
 * and seed give the same bytes on every machine.  __metadata__ records arch, seed, the
 * initialisation, the keycut version and "format": "pt" (so the Python safetensors library's
 * load_file gives torch tensors).  The file is written to FILE.tmp and renamed.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/kc.h"
#include "pipeline/weights/safetensors.h"
#include "pipeline/model/vit_init.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: kc-init --arch ARCH --seed N --out FILE.safetensors\n"
               "\n"
               "Writes a randomly initialised ViT with DINO/timm tensor names and the initialisation of\n"
               "DINO's vision_transformer.py (truncated normal std 0.02 for linear weights, pos_embed and\n"
               "cls_token; zero biases; LayerNorm 1 and 0; PyTorch's Conv2d default for patch_embed): the\n"
               "'random weights' baseline.  The same ARCH and seed give the same bytes on every machine.\n"
               "ARCH: %s (toy/16: width 64, 2 blocks, for tests).\n"
               "\n"
               "example:\n"
               "  kc-init --arch vit-s/16 --seed 0 --out nets/random-s16.safetensors\n",
            vit_init_names());
}

int main(int argc, char **argv)
{
    kc_set_prog("kc-init");
    kc_set_cmdline(argc, argv);
    const char *arch_name = NULL, *seed_text = NULL, *out = NULL;
    static struct option opts[] = {{"arch", 1, 0, 'a'}, {"seed", 1, 0, 's'}, {"out", 1, 0, 'o'},
                                   {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'a': arch_name = optarg; break;
        case 's': seed_text = optarg; break;
        case 'o': out = optarg; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) kc_die_msg("unexpected argument '%s' (see --help)", argv[optind]);
    if (!arch_name || !seed_text || !out) kc_die_msg("need --arch, --seed and --out (see --help)");
    const vit_arch *arch = vit_init_find(arch_name);
    if (!arch) kc_die_msg("--arch '%s': unknown architecture (known: %s)", arch_name, vit_init_names());
    char *end;
    errno = 0;
    unsigned long long seed = strtoull(seed_text, &end, 10);
    if (!*seed_text || *end || errno || seed_text[0] == '-' || seed_text[0] == '+')
        kc_die_msg("--seed '%s': not an integer in [0, 2^64)", seed_text);
    if (!*out) kc_die_msg("--out: empty path");
    const char *slash = strrchr(out, '/');
    if (slash && slash != out) {
        char *dir = kc_strfmt("%.*s", (int)(slash - out), out);
        if (kc_mkdirs(dir) < 0) kc_die();
        free(dir);
    }

    double t0 = kc_now();
    vit_init_net net;
    vit_init_build(&net, arch, (uint64_t)seed);
    st_out_tensor *t = kc_calloc((size_t)net.n, sizeof *t);
    int64_t params = 0;
    for (int i = 0; i < net.n; i++) {
        t[i].name = net.t[i].name;
        t[i].ndim = net.t[i].ndim;
        memcpy(t[i].shape, net.t[i].shape, sizeof net.t[i].shape);
        t[i].data = net.t[i].data;
        params += net.t[i].numel;
    }
    char seed_str[32];
    snprintf(seed_str, sizeof seed_str, "%llu", seed);
    const char *meta[] = {"arch",   arch->name,
                          "seed",   seed_str,
                          "init",   "dino-vision_transformer: trunc_normal std 0.02 in [-2, 2], zero biases, "
                                    "LayerNorm 1/0, patch_embed Conv2d default; philox4x32-10 polar",
                          "keycut_version", KC_VERSION,
                          "format", "pt"};
    if (st_write_f32(out, t, net.n, meta, 5) < 0) kc_die();
    kc_info("%s seed %llu: %lld parameters in %d tensors, written to %s in %.1fs", arch->name, seed, (long long)params,
            net.n, out, kc_now() - t0);
    free(t);
    vit_init_free(&net);
    return 0;
}
