/* fuzz/fuzz_ini.c — the INI reader and the sweep-grid reader on top of it (configs/sweep.ini). */
#include "decoders/grid.h"
#include "fuzz/fuzz_util.h"
#include "pipeline/ini.h"
#include "pipeline/kc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_init();
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = 0;
    ini_file f;
    if (ini_parse(&f, "fuzz.ini", text) == 0) {
        for (int i = 0; i < f.n; i++) {
            char **items = NULL;
            int n = ini_split_list(f.e[i].value, &items);
            for (int j = 0; j < n; j++) free(items[j]);
            free(items);
        }
        (void)ini_get(&f, "grid", "tau");
        ini_free(&f);
    }
    ncut_grid g;
    if (ncut_grid_parse(&g, "fuzz.ini", text) == 0) ncut_grid_free(&g);
    /* the same bytes as a setting id (kc-decode --setting) */
    if (size < 64 && !memchr(data, 0, size) && ncut_grid_single(&g, text) == 0) ncut_grid_free(&g);
    free(text);
    return 0;
}
