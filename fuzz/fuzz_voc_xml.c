/* fuzz/fuzz_voc_xml.c — the VOC annotation reader (libxml2 underneath; boxes and sizes checked). */
#include "datasets/voc.h"
#include "fuzz/fuzz_util.h"
#include "pipeline/kc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_init();
    static int init;
    if (!init) {
        voc_init();
        init = 1;
    }
    const char *path = fuzz_scratch(data, size, ".xml");
    voc_box *boxes = NULL;
    char **names = NULL;
    int n = 0, w = 0, h = 0;
    if (voc_read_annotation(path, &boxes, &names, &n, &w, &h) == 0) {
        for (int i = 0; i < n; i++) free(names[i]);
        free(names);
        free(boxes);
    } else if (!kc_error()[0]) {
        abort();
    }
    return 0;
}
