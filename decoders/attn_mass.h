/* decoders/attn_mass.h — DINO's attention-mass masks (the `attn-mass<m>` settings).
 *
 * For each head h of the class attention a_h (G weights, kc-extract --features attn), the mask keeps
 * the patches that hold the top m of the head's attention mass, DINO's rule exactly
 * (visualize_attention.py --threshold m):
 *     sort the weights ascending (ties: the lower row-major index first), share_i = w_i / sum(w),
 *     c_i = share_1 + ... + share_i (the cumulative share in ascending order),
 *     keep patch i  <=>  c_i > 1 - m.
 * Read from the largest weight down: a patch is kept when the mass strictly above it is < m, i.e.
 * patches are added until their cumulative share reaches m (the one that crosses m is kept).
 * Ties: among equal weights the one with the higher row-major index sorts later in ascending order,
 * so it is kept first (a stable ascending sort, as torch.sort on CPU gives).  Arithmetic in double
 * (DINO's float32 cumsum may differ by rounding: a patch whose c_i is within ATTN_KNIFE of 1 - m is
 * a knife edge, counted per mask as the attribute knife_edge_heads).
 *
 * Output: (heads, grid_h, grid_w) uint8, 1 = kept.  Setting ids: "attn-mass" + m with 0 < m <= 1,
 * printed with two decimals (attn-mass0.60) unless m needs more (attn-mass0.625).
 *
 *     double m;  char id[32];
 *     if (attn_mass_parse("attn-mass0.60", &m, id) < 0) ...;    // m = 0.6, id "attn-mass0.60"
 *     int knife = attn_mass_masks(attn, heads, G, m, masks);     // attn (heads, G) -> masks (heads, G)
 */
#ifndef KC_ATTN_MASS_H
#define KC_ATTN_MASS_H
#include <stdint.h>

#define ATTN_MASS_DEFAULT "attn-mass0.60"
#define ATTN_KNIFE 1e-6

/* 1 when id starts with "attn-mass" (a setting of this decoder, valid or not). */
int attn_mass_is_setting(const char *id);
/* Parses "attn-mass<m>": m in (0, 1]; canonical id into id_out (32 bytes).  Errors name the id. */
int attn_mass_parse(const char *id, double *m, char id_out[32]);
/* attn: (heads, G) float32 weights (finite, >= 0); masks: (heads, G) uint8.  Returns the number of
 * heads whose cut lies within ATTN_KNIFE of 1 - m (knife edges), or -1 (an all-zero head). */
int attn_mass_masks(const float *attn, int heads, int G, double m, uint8_t *masks);
#endif
