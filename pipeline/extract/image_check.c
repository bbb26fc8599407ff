/* pipeline/extract/image_check.c — an image file against the hash its cache recorded.  See
 * image_check.h. */
#include "pipeline/extract/image_check.h"

#include <string.h>

#include "pipeline/kc.h"
#include "pipeline/sha256.h"

int image_check_unchanged(const cache_reader *r, const char *dset, const char *path)
{
    uint8_t want[32], got[32];
    int has = cache_read_image_sha(r, dset, want);
    if (has <= 0) return has;
    KC_TRY(kc_sha256_file_raw(path, got));
    if (memcmp(got, want, 32) == 0) return 0;
    return kc_fail("%s: changed since extraction (sha256 %02x%02x%02x%02x..., but %s recorded %02x%02x%02x%02x... "
                   "for %s)",
                   path, got[0], got[1], got[2], got[3], r->path, want[0], want[1], want[2], want[3], dset);
}
