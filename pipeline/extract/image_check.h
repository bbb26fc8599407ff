/* pipeline/extract/image_check.h — is an image file still the one its cache was extracted from?
 *
 * kc-extract records each image file's sha256 on the image's datasets (pipeline/cache/cache.h,
 * cache_read_image_sha), and every derived cache carries it along.  A stage that reads an image
 * after extraction (kc-refine, kc-show, kc-plot voc-grid, kc-report) compares the file with it
 * before drawing or refining, so that a photo replaced under the same name is refused instead of
 * getting the old photo's mask.  Caches made before the hash have none: their images pass here and
 * are checked by size only, where the caller does.
 *
 *     if (image_check_unchanged(&r, "/masks/t0.15-bin-mean-corners-n3/2007_000033", path) < 0) kc_die();
 */
#ifndef KC_IMAGE_CHECK_H
#define KC_IMAGE_CHECK_H
#include "pipeline/cache/cache.h"

/* 0 when the file at path has the hash recorded on dset of r, or dset records none; -1 with one
 * line naming the file ("PATH: changed since extraction (sha256 ..., CACHE recorded ... for DSET)")
 * when they differ, or when either cannot be read. */
int image_check_unchanged(const cache_reader *r, const char *dset, const char *path);
#endif
