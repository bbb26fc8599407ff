/* pipeline/images/grid_map.c — the grid-to-pixel mapping.  See grid_map.h. */
#include "pipeline/images/grid_map.h"

#include "pipeline/kc.h"

void grid_expected(kc_policy p, int patch, int w, int h, int *grid_h, int *grid_w)
{
    policy_grid(p, patch > 0 ? patch : 16, w, h, grid_h, grid_w);
}

int grid_check(const char *what, kc_policy p, int patch, int w, int h, int grid_h, int grid_w)
{
    if (w <= 0 || h <= 0 || grid_h <= 0 || grid_w <= 0 || grid_h > 4096 || grid_w > 4096)
        return kc_fail("%s: bad sizes (image %dx%d, grid %dx%d)", what, w, h, grid_w, grid_h);
    if (p == POLICY_NATIVE16) {
        if (patch <= 0) return kc_fail("%s: native16 needs a positive patch size (got %d)", what, patch);
        int eh = (h + patch - 1) / patch, ew = (w + patch - 1) / patch;
        if (eh != grid_h || ew != grid_w)
            return kc_fail("%s: grid %dx%d does not fit a %dx%d image under native16 with patch %d "
                           "(expected %dx%d)", what, grid_w, grid_h, w, h, patch, ew, eh);
    }
    if (p == POLICY_ROUND) {
        if (patch <= 0) return kc_fail("%s: policy round needs a positive patch size (got %d)", what, patch);
        int eh, ew;
        policy_grid(p, patch, w, h, &eh, &ew);
        if (eh != grid_h || ew != grid_w)
            return kc_fail("%s: grid %dx%d does not fit a %dx%d image under policy round with patch %d "
                           "(expected %dx%d)", what, grid_w, grid_h, w, h, patch, ew, eh);
    }
    return 0;
}

int grid_check_policy(const char *what, kc_policy p, int patch, int w, int h, int grid_h, int grid_w)
{
    if (patch <= 0) return 0; /* no patch recorded: nothing to compare with */
    int eh, ew;
    grid_expected(p, patch, w, h, &eh, &ew);
    if (eh == grid_h && ew == grid_w) return 0;
    int rw, rh;
    policy_size(p, patch, w, h, &rw, &rh);
    return kc_fail("%s: a %dx%d grid does not fit a %dx%d image under %s with patch %d (expected %dx%d: the image "
                   "%s %dx%d)", what, grid_w, grid_h, w, h, policy_name(p), patch, ew, eh,
                   p == POLICY_NATIVE16 ? "padded to" : "resized to", p == POLICY_NATIVE16 ? ew * patch : rw,
                   p == POLICY_NATIVE16 ? eh * patch : rh);
}

void grid_axis_cells(kc_policy p, int patch, int n, int g, int32_t *cell)
{
    for (int x = 0; x < n; x++) cell[x] = grid_pixel_cell(p, patch, x, n, g);
}
