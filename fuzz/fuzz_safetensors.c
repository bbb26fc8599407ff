/* fuzz/fuzz_safetensors.c — the safetensors header (length, JSON, offsets) and tensor conversion. */
#include "fuzz/fuzz_util.h"
#include "pipeline/kc.h"
#include "pipeline/weights/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_init();
    (void)st_detect(data, size);
    st_file f;
    if (st_open(&f, "fuzz.safetensors", data, size) == 0) {
        for (int i = 0; i < f.n; i++) {
            float *x = NULL;
            if (st_tensor_f32(&f, &f.t[i], &x) == 0) free(x);
        }
        st_close(&f);
    } else if (!kc_error()[0]) {
        abort();
    }
    return 0;
}
