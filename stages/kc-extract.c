/* stages/kc-extract.c — images -> keys.h5 (ViT attention keys and/or output tokens, or the
 * no-learning colour features): the options, the dataset, one call into the extraction engine
 * (pipeline/extract/extract.h).  See docs/design.md "Stages", "The model", "The cache". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/dataset.h"
#include "pipeline/cache/shard.h"
#include "pipeline/extract/extract.h"
#include "pipeline/images/resize.h"
#include "pipeline/kc.h"
#include "pipeline/opts.h"

static const char usage[] =
    "usage: kc-extract --weights FILE [--checkpoint-key K] [--model vit|color] [--drop-cls]\n"
    "                  [--heads H] [--ln-eps E] --dataset SPEC [--policy square480|short480|native16|round]\n"
    "                  [--features keys|tokens|attn|keys,tokens,...] [--posembed auto|dino|hf|antialias]\n"
    "                  [--keys post-rope|pre-rope] [--batch N]\n"
    "                  [--patch P] [--shard i/n] [--split auto|images|rows] [--verbose] --out keys.h5\n"
    "\n"
    "Runs a ViT teacher (or the no-learning colour extractor) over a dataset and stores, per\n"
    "image, the last block's attention keys and/or its output tokens, without the class token.\n"
    "\n"
    "  --weights FILE        .pth (state dict or training checkpoint) or .safetensors\n"
    "  --checkpoint-key K    state dict inside a checkpoint (default: first of teacher, student,\n"
    "                        model, state_dict holding tensors)\n"
    "  --model vit|color     vit (default with --weights) or color (no weights; patch 16)\n"
    "  --drop-cls            run DINO weights as the converted network (no class token, no final norm)\n"
    "  --heads H             attention heads (default: config.json beside the weights, else dim/64)\n"
    "  --ln-eps E            LayerNorm eps (default: the family's: 1e-6 DINO, timm, DINOv2; 1e-5 DINOv3;\n"
    "                        config.json's for Hugging Face files, else 1e-12 for a HF ViTModel)\n"
    "  --dataset SPEC        voc:ROOT:SPLIT | davis:ROOT:SPLIT | dir:DIR | list:FILE | saliency:ROOT\n"
    "                        " DATASET_LIST_RULES
    "                        " DATASET_LIST_RULES2
    "  --policy P            square480 (default for voc/dir/list), short480 (default for davis),\n"
    "                        native16, round (default for saliency: each side rounded to the nearest\n"
    "                        multiple of the patch, Lanczos; TokenCut's saliency protocol)\n"
    "  --features F          keys (default), tokens, attn, or a comma list (keys,attn); attn is the\n"
    "                        last block's class-token attention per head, (heads, patches), as DINO\n"
    "                        reads it (needs a class token: not SelfPatch-like or --drop-cls)\n"
    "  --posembed R          position-embedding resampling: auto (default: the file's family's own rule:\n"
    "                        dino for DINO, timm, DINOv2; antialias for DINOv2 with registers), dino\n"
    "                        (bicubic, scale (g+0.1)/n), hf (bicubic to size, Hugging Face ViTModel and\n"
    "                        Dinov2Model), antialias (bicubic to size with antialias); DINOv3: RoPE, none\n"
    "  --keys post-rope|pre-rope  DINOv3: the keys after RoPE (default: what attention uses) or before\n"
    "  --batch N             images per crash-safe piece (default 8)\n"
    "  --patch P             patch size of the colour extractor (default 16)\n"
    "  --out FILE            the cache to write (atomically; an interrupted run resumes)\n"
    "  --shard i/n           only slice i of n of the images (pipeline/cache/shard.h); merge the n\n"
    "                        shard caches with kc-merge\n"
    "  --split auto|images|rows  how the cores share the work: images = one image per core (each\n"
    "                        forward on one thread), rows = every image over all cores; auto\n"
    "                        (default) runs one image per core where the outputs are the same\n"
    "                        bytes either way (the matmul path, see --verbose), else rows\n"
    "  --verbose             print once which product kernels run (library, version, ISA), and\n"
    "                        the time taken: start-up, first batch, ms per image after it\n"
    "  environment: KC_ISA=avx512|avx2|generic forces a kernel path (default: the best\n"
    "                        this CPU has); the cache records the one used (attribute products)\n"
    "\n"
    "example:\n"
    "  kc-extract --weights dino_deitsmall16_pretrain.pth --dataset voc:/data/VOC2012:val \\\n"
    "             --policy square480 --out cache/dino/voc12-val/keys.h5\n";

/* The values of options, read as they come. */
static int read_shard(const opts_option *opt, const char *value) { return shard_parse(value, opt->target); }

static int read_split(const opts_option *opt, const char *value)
{
    extract_split *split = opt->target;
    if (!strcmp(value, "auto")) *split = EXTRACT_SPLIT_AUTO;
    else if (!strcmp(value, "images")) *split = EXTRACT_SPLIT_IMAGES;
    else if (!strcmp(value, "rows")) *split = EXTRACT_SPLIT_ROWS;
    else return kc_fail("--split: unknown '%s' (auto, images or rows)", value);
    return 0;
}

static int read_keys(const opts_option *opt, const char *value)
{
    if (!strcmp(value, "pre-rope")) *(int *)opt->target = 1;
    else if (strcmp(value, "post-rope")) return kc_fail("--keys: unknown '%s' (post-rope or pre-rope)", value);
    return 0;
}

/* "keys", "tokens", "attn" or a comma list of them, each at most once. */
static int parse_features(const char *list, int *keys, int *tokens, int *attn)
{
    char buf[64];
    if (!list[0] || strlen(list) >= sizeof buf)
        return kc_fail("--features: bad value '%s' (keys, tokens, attn or a comma list)", list);
    strcpy(buf, list);
    for (char *save = NULL, *f = strtok_r(buf, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
        int *w = !strcmp(f, "keys") ? keys : !strcmp(f, "tokens") ? tokens : !strcmp(f, "attn") ? attn : NULL;
        if (!w) return kc_fail("--features: unknown kind '%s' in '%s' (keys, tokens, attn or a comma list)", f, list);
        if (*w) return kc_fail("--features: '%s' listed twice in '%s'", f, list);
        *w = 1;
    }
    if (list[strlen(list) - 1] == ',' || list[0] == ',' || strstr(list, ",,"))
        return kc_fail("--features: bad value '%s' (keys, tokens, attn or a comma list)", list);
    return 0;
}

int main(int argc, char **argv)
{
    const double t_main = kc_now();
    kc_set_prog("kc-extract");
    kc_keep_freed_memory();
    kc_set_cmdline(argc, argv);
    extract_opts o = EXTRACT_OPTS_DEFAULT;
    o.t_main = t_main;
    const char *policy_s = NULL;
    /* (the order of getopt's table: an ambiguous abbreviation lists its candidates in it) */
    const opts_option options[] = {
        {"--weights", .value = &o.weights}, {"--checkpoint-key", .value = &o.ckey}, {"--model", .value = &o.model_name},
        {"--drop-cls", .flag = &o.drop_cls}, {"--heads", .read = opts_read_atoi, .target = &o.heads},
        {"--ln-eps", .read = opts_read_atof, .target = &o.ln_eps, .number = OPTS_DOUBLE},
        {"--dataset", .value = &o.dataset}, {"--policy", .value = &policy_s}, {"--features", .value = &o.features},
        {"--posembed", .value = &o.posembed}, {"--out", .value = &o.out},
        {"--batch", .read = opts_read_atoi, .target = &o.batch},
        {"--patch", .read = opts_read_atoi, .target = &o.patch_color},
        {"--shard", .read = read_shard, .target = &o.shard}, {"--verbose", .flag = &o.verbose},
        {"--split", .read = read_split, .target = &o.split}, {"--keys", .read = read_keys, .target = &o.keys_pre_rope},
        {0}};
    const opts_cli cli = {.usage = usage, .options = options, .syntax = OPTS_GETOPT};
    int rc = opts_parse(&cli, argc, argv);
    if (rc < 0) kc_die();
    if (rc != OPTS_OK) exit(opts_usage(&cli, rc));
    if (!o.model_name) o.model_name = o.weights ? "vit" : "color";
    int use_vit = !strcmp(o.model_name, "vit");
    if (!use_vit && strcmp(o.model_name, "color")) kc_die_msg("--model: unknown model '%s' (vit or color)", o.model_name);
    if (use_vit && !o.weights) kc_die_msg("--model vit needs --weights FILE (or use --model color)");
    if (!use_vit && o.weights) kc_die_msg("--model color takes no --weights");
    if (!o.dataset) kc_die_msg("--dataset is required (see --help)");
    if (!o.out) kc_die_msg("--out is required (see --help)");
    if (o.batch < 1 || o.batch > 4096) kc_die_msg("--batch: %d is out of range 1..4096", o.batch);
    if (o.heads < 0) kc_die_msg("--heads: must be positive");
    if (o.patch_color < 2 || o.patch_color > 64) kc_die_msg("--patch: %d is out of range 2..64", o.patch_color);
    if (parse_features(o.features, &o.want_keys, &o.want_tokens, &o.want_attn) < 0) kc_die();
    if (strcmp(o.posembed, "auto") && strcmp(o.posembed, "dino") && strcmp(o.posembed, "hf") && strcmp(o.posembed, "antialias"))
        kc_die_msg("--posembed: unknown '%s' (auto, dino, hf or antialias)", o.posembed);

    kc_dataset ds;
    if (dataset_open(&ds, o.dataset) < 0) kc_die();
    if (policy_s) {
        if (policy_parse(policy_s, &o.policy) < 0) kc_die();
    } else {
        o.policy = !strcmp(ds.kind, "davis") ? POLICY_SHORT480 : !strcmp(ds.kind, "saliency") ? POLICY_ROUND : POLICY_SQUARE480;
    }
    o.dataset_kind = ds.kind;
    if (extract_run(&o, ds.n, (const char *const *)ds.ids, (const char *const *)ds.paths) < 0) kc_die();
    dataset_free(&ds);
    return 0;
}
