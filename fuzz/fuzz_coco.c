/* fuzz/fuzz_coco.c — the streaming COCO annotations reader (datasets/coco.h, yajl events). */
#include "datasets/coco.h"
#include "fuzz/fuzz_util.h"
#include "pipeline/kc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_init();
    const char *path = fuzz_scratch(data, size, ".json");
    if (!path) return 0;
    char *names[] = {"COCO_train2014_000000100000.jpg", "COCO_train2014_000000100017.jpg", "a.jpg"};
    coco_gt g;
    if (coco_read_json(path, names, 3, &g) == 0) {
        for (int i = 0; i < g.n; i++)
            for (int k = 0; k < g.img[i].n_boxes; k++) (void)coco_round(g.img[i].boxes[k].xmax);
        coco_gt_free(&g);
    } else if (!kc_error()[0]) {
        abort();
    }
    return 0;
}
