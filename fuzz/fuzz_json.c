/* fuzz/fuzz_json.c — the JSON parser (safetensors headers, Hugging Face config.json). */
#include "fuzz/fuzz_util.h"
#include "pipeline/json.h"
#include "pipeline/kc.h"

static void walk(const json_value *v, int depth)
{
    if (!v || depth > JSON_MAX_DEPTH + 1) return;
    int n = json_count(v);
    for (int i = 0; i < n; i++) {
        (void)json_key(v, i);
        walk(json_item(v, i), depth + 1);
    }
    double d;
    int64_t k;
    (void)json_get_number(v, &d);
    (void)json_get_int(v, &k);
    (void)json_string(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_init();
    json_value root;
    if (json_parse(&root, (const char *)data, size, "fuzz.json") == 0) {
        walk(&root, 0);
        (void)json_get(&root, "layer_norm_eps");
        (void)json_get(&root, "num_attention_heads");
        json_free(&root);
    } else if (!kc_error()[0]) {
        abort();
    }
    return 0;
}
