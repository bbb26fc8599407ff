/* pipeline/model/color.c — the no-learning colour extractor (`--model color`).
 *
 * Per patch of the normalised image (the same (3, grid_h*p, grid_w*p) input the ViT reads, so the
 * channels are R, G, B after ImageNet mean / std), over its p x p pixels, with the opponent
 * channels O1 = (R - G) / sqrt 2, O2 = (R + G - 2B) / sqrt 6 and luminance L = (R + G + B) / sqrt 3:
 *
 *   f[0..2]   mean R, mean G, mean B                  colour
 *   f[3..5]   std R, std G, std B                     texture / shading per channel
 *   f[6..7]   mean O1, mean O2                        hue (colour-opponent means)
 *   f[8..9]   std O1, std O2                          colour texture
 *   f[10]     mean |L(y, x+1) - L(y, x)|              horizontal edge energy
 *   f[11]     mean |L(y+1, x) - L(y, x)|              vertical edge energy
 *   f[12]     std L                                   luminance contrast
 *   f[13]     sqrt(mean O1^2 + mean O2^2)             colourfulness (saturation)
 *   f[14..15] 0.5 * ((gy + 0.5) / grid_h - 1/2),  0.5 * ((gx + 0.5) / grid_w - 1/2)
 *                                                     position, weighted low
 *
 * (std is the population standard deviation over the patch's pixels; differences stay inside the
 * patch.)  Then each of f[0..13] has its mean over the image's patches subtracted, so that a patch
 * is described by how it differs from the image as a whole: cosine similarity, which the graph
 * decoders use, then groups patches that differ from the rest in the same way (an object against
 * its background) instead of calling every pair of patches similar.  Positions are already
 * centred.  The result depends on nothing but the image; no weights, no randomness.
 *
 *     float feats[grid_h * grid_w * COLOR_DIM];
 *     color_features(chw, grid_h, grid_w, 16, feats);
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/kc.h"
#include "pipeline/model/vit.h"

#define POS_WEIGHT 0.5f

int color_features(const float *chw, int grid_h, int grid_w, int patch, float *feats)
{
    if (grid_h < 1 || grid_w < 1 || patch < 1 || (int64_t)grid_h * grid_w > 10000000)
        return kc_fail("colour features: bad grid %dx%d of %d-pixel patches", grid_h, grid_w,
                       patch);
    const int p = patch, H = grid_h * p, W = grid_w * p;
    const size_t plane = (size_t)H * W;
    const float r2 = 0.70710678f, r6 = 0.40824829f, r3 = 0.57735027f;
    const int n = grid_h * grid_w;

#pragma omp parallel for schedule(static)
    for (int g = 0; g < n; g++) {
        const int gy = g / grid_w, gx = g % grid_w;
        double s[6] = {0}, q[6] = {0}; /* sums and squares of R G B O1 O2 L */
        double sl = 0, ql = 0, ex = 0, ey = 0;
        for (int y = 0; y < p; y++) {
            size_t row = (size_t)(gy * p + y) * W + (size_t)gx * p;
            for (int x = 0; x < p; x++) {
                size_t i = row + x;
                float R = chw[i], G = chw[plane + i], B = chw[2 * plane + i];
                float v[5] = {R, G, B, (R - G) * r2, (R + G - 2 * B) * r6};
                for (int k = 0; k < 5; k++) {
                    s[k] += v[k];
                    q[k] += (double)v[k] * v[k];
                }
                float L = (R + G + B) * r3;
                sl += L;
                ql += (double)L * L;
                if (x + 1 < p) {
                    size_t j = i + 1;
                    ex += fabsf((chw[j] + chw[plane + j] + chw[2 * plane + j]) * r3 - L);
                }
                if (y + 1 < p) {
                    size_t j = i + (size_t)W;
                    ey += fabsf((chw[j] + chw[plane + j] + chw[2 * plane + j]) * r3 - L);
                }
            }
        }
        const double np = (double)p * p;
        float *f = feats + (size_t)g * COLOR_DIM;
        double mean[5], sd[5];
        for (int k = 0; k < 5; k++) {
            mean[k] = s[k] / np;
            double var = q[k] / np - mean[k] * mean[k];
            sd[k] = var > 0 ? sqrt(var) : 0;
        }
        double ml = sl / np, vl = ql / np - ml * ml;
        f[0] = (float)mean[0];
        f[1] = (float)mean[1];
        f[2] = (float)mean[2];
        f[3] = (float)sd[0];
        f[4] = (float)sd[1];
        f[5] = (float)sd[2];
        f[6] = (float)mean[3];
        f[7] = (float)mean[4];
        f[8] = (float)sd[3];
        f[9] = (float)sd[4];
        f[10] = p > 1 ? (float)(ex / (p * (p - 1.0))) : 0.0f;
        f[11] = p > 1 ? (float)(ey / (p * (p - 1.0))) : 0.0f;
        f[12] = vl > 0 ? (float)sqrt(vl) : 0.0f;
        f[13] = (float)sqrt(mean[3] * mean[3] + mean[4] * mean[4]);
        f[14] = POS_WEIGHT * (((float)gy + 0.5f) / (float)grid_h - 0.5f);
        f[15] = POS_WEIGHT * (((float)gx + 0.5f) / (float)grid_w - 0.5f);
    }

    /* centre the appearance features over the image (fixed order: deterministic) */
    for (int k = 0; k < 14; k++) {
        double m = 0;
        for (int g = 0; g < n; g++) m += feats[(size_t)g * COLOR_DIM + k];
        m /= n;
        for (int g = 0; g < n; g++) feats[(size_t)g * COLOR_DIM + k] -= (float)m;
    }
    return 0;
}
