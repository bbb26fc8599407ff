/* fuzz/fuzz_image.c — the image decoders as keycut drives them: the header-only size, the RGB
 * decode (JPEG and PNG through libjpeg / libpng) and the palette-index PNG reader used for VOC and
 * DAVIS annotations.  The first byte does not choose anything: the file is tried as all three. */
#include "fuzz/fuzz_util.h"
#include "pipeline/images/image.h"
#include "pipeline/kc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_init();
    const char *path = fuzz_scratch(data, size, size > 1 && data[0] == 0xFF ? ".jpg" : ".png");
    int w = 0, h = 0;
    (void)image_size(path, &w, &h);
    kc_image im = {0};
    if (image_load_rgb(path, &im) == 0) {
        if (im.w <= 0 || im.h <= 0 || !im.rgb) abort();
        volatile uint8_t sink = im.rgb[(size_t)im.w * im.h * 3 - 1]; /* last byte is in bounds */
        (void)sink;
        image_free(&im);
    } else if (!kc_error()[0]) {
        abort();
    }
    uint8_t *idx = NULL;
    if (image_read_png_index(path, &w, &h, &idx) == 0) free(idx);
    return 0;
}
