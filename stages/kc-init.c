/* stages/kc-init.c — a randomly initialised ViT (DINO's, DINOv2's or DINOv3's initialisation) as a
 * safetensors file.
 *
 *   kc-init --arch vit-s/16|vit-s/8|vit-b/16|vit-b/8|toy/16|dinov2-s/14|dinov2-reg-s/14|dinov3-s/16
 *           --seed N --out FILE.safetensors
 *
 * The tensors, their names (each family's official state-dict names) and the initialisation are those
 * of pipeline/model/vit_init.h; the same arch and seed give the same bytes on every machine.
 * __metadata__ records arch, seed, the initialisation, the keycut version and "format": "pt" (so the
 * Python safetensors library's load_file gives torch tensors).  The file is written to FILE.tmp and
 * renamed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/kc.h"
#include "pipeline/opts.h"
#include "pipeline/weights/safetensors.h"
#include "pipeline/model/vit_init.h"

/* (a function: the text names the architectures of pipeline/model/vit_init.h) */
static void usage(FILE *f)
{
    fprintf(f, "usage: kc-init --arch ARCH --seed N --out FILE.safetensors\n"
               "\n"
               "Writes a randomly initialised ViT, the 'random weights' baseline of its family, with the\n"
               "family's official tensor names and initialisation:\n"
               "  vit-s/16 vit-s/8 vit-b/16 vit-b/8 toy/16  DINO's vision_transformer.py, DINO/timm names\n"
               "      (truncated normal std 0.02 for linear weights, pos_embed and cls_token; zero biases;\n"
               "      LayerNorm 1 and 0; PyTorch's Conv2d default for patch_embed); toy/16: width 64,\n"
               "      2 blocks, for tests;\n"
               "  dinov2-s/14 dinov2-reg-s/14  DINOv2 ViT-S/14 without / with 4 registers, as its training\n"
               "      builds it (names of dinov2_vits14[_reg]_pretrain.pth: pos_embed 37x37 + 1,\n"
               "      mask_token, register_tokens, ls1/ls2.gamma): linear weights and pos_embed truncated\n"
               "      normal std 0.02, cls_token and registers normal std 1e-6, LayerScale 1e-5 (the\n"
               "      training config's; the hub's 1.0 is overwritten by the released weights);\n"
               "  dinov3-s/16  DINOv3 ViT-S/16 by its init_weights (names of dinov3_vits16_pretrain_*.pth:\n"
               "      storage_tokens, rope_embed.periods, attn.qkv.bias_mask): linear weights truncated\n"
               "      normal std 0.02, cls_token and 4 storage tokens normal std 0.02, RoPE periods\n"
               "      100^(i/16) in fp32, k bias masked, LayerScale 1e-5.\n"
               "pipeline/model/vit_init.h says which line of the official code gives each value.  The same\n"
               "ARCH and seed give the same bytes on every machine; a tensor of the same name draws the\n"
               "same numbers in every ARCH, so take other seeds for independent networks.\n"
               "ARCH: %s.\n"
               "\n"
               "example:\n"
               "  kc-init --arch vit-s/16 --seed 0 --out nets/random-s16.safetensors\n"
               "  kc-init --arch dinov3-s/16 --seed 0 --out nets/random-dinov3-s16.safetensors\n",
            vit_init_names());
}

int main(int argc, char **argv)
{
    kc_set_prog("kc-init");
    kc_set_cmdline(argc, argv);
    const char *arch_name = NULL, *seed_text = NULL, *out = NULL;
    const opts_option options[] = {
        {"--arch", .value = &arch_name}, {"--seed", .value = &seed_text}, {"--out", .value = &out}, {0}};
    const opts_cli cli = {.print_usage = usage, .options = options, .syntax = OPTS_GETOPT};
    int rc = opts_parse(&cli, argc, argv);
    if (rc < 0) kc_die();
    if (rc != OPTS_OK) exit(opts_usage(&cli, rc));
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
                          "init",   vit_init_describe(arch),
                          "keycut_version", KC_VERSION,
                          "format", "pt"};
    if (st_write_f32(out, t, net.n, meta, 5) < 0) kc_die();
    kc_info("%s seed %llu: %lld parameters in %d tensors, written to %s in %.1fs", arch->name, seed, (long long)params,
            net.n, out, kc_now() - t0);
    free(t);
    vit_init_free(&net);
    return 0;
}
