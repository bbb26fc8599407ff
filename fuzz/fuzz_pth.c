/* fuzz/fuzz_pth.c — the .pth reader (zip directory and the pickle interpreter) on arbitrary bytes.
 * Every tensor the pickle describes is converted to float32, so views outside their storage are
 * exercised too.  The reader must fail cleanly (a message naming the file), never crash. */
#include "fuzz/fuzz_util.h"
#include "pipeline/kc.h"
#include "pipeline/weights/pth.h"

static void convert_all(const pth_file *f, const pk_value *v, int depth)
{
    if (!v || depth > 8) return;
    if (v->type == PK_TENSOR) {
        float *x = NULL;
        if (pth_tensor_f32(f, v, "t", &x) == 0) free(x);
        return;
    }
    if (v->type == PK_DICT || v->type == PK_LIST || v->type == PK_TUPLE)
        for (int i = 0; i < v->n; i++) convert_all(f, v->items[i], depth + 1);
    if (v->type == PK_OBJECT) convert_all(f, v->state, depth + 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_init();
    pth_file f;
    if (pth_open(&f, "fuzz.pth", data, size) == 0) {
        convert_all(&f, f.root, 0);
        pth_close(&f);
    } else if (!kc_error()[0]) {
        abort(); /* a failure must say why */
    }
    return 0;
}
