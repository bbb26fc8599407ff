/* pipeline/cache/cache.h — keycut's HDF5 caches: reading, and crash-safe writing.
 *
 * Layout (docs/cache-format.md; docs/design.md, "The cache"):
 *   features cache: /features/<kind>/<id> float32 (n_tok, dim);  masks cache: /masks/<setting>/<id>
 *   uint8 (grid_h, grid_w) with float attrs lambda2, eigengap (one per round) and int degenerate,
 *   or, for the attention-mass settings /masks/attn-mass<m>/<id>, a uint8 (heads, grid_h, grid_w)
 *   stack with attrs mass and knife_edge_heads (docs/attention-baseline.md); /features/attn/<id>
 *   is float32 (heads, grid_h * grid_w);
 *   /index/ids (vlen UTF-8 strings), /index/grid int32 (n, 2), /index/size int32 (n, 2), and (format
 *   version 2, when the writer knows the policy) /index/resized int32 (n, 2) and /index/box int32 (n, 4);
 *   provenance as root attributes (format, format_version, code_version, command, ...): strings,
 *   but the keys of CACHE_NUMERIC_KEYS as numbers (version 2; version 1 stored every one as a string).
 *
 * Versions.  This keycut writes CACHE_FORMAT_VERSION (2) and reads it and the one before (1):
 *   2 over 1: format_version and the numeric provenance keys are numbers, not strings; every dataset
 *   that carries image_sha256 (8 int32) also carries image_sha256_hex (the 64-char hex digest);
 *   /index/resized and /index/box record how a grid maps back to the image.  Neither the
 *   hex attribute nor the two index datasets enter the content hash (they follow from what does),
 *   so the same data has the same content_hash in both versions.  A version-1 file reads as before:
 *   the reader gives every root attribute as text either way (cache_attr), and index.resized /
 *   index.box are NULL for it.
 *
 * Writing ("Nothing lost"): the work is split into batches of images.  Each finished batch is a
 * small self-contained HDF5 piece OUT.partial/piece-NNNNNN.h5 (written as .tmp, fsynced, renamed).
 * OUT.partial/lock keeps one writer per output (pipeline/lock.h) from open to finish.
 * OUT.partial/fingerprint holds a hash of what determines the output (inputs, options, code
 * version): pieces of another command are never reused (a folder with no finished piece is
 * simply taken over by the next run, whatever command left it).  cache_writer_finish merges the
 * pieces in batch order into OUT.tmp, writes /index and the provenance, fsyncs, renames to OUT and
 * removes OUT.partial.  OUT is therefore absent or complete; a rerun skips the pieces already there.
 *
 *     cache_writer cw;
 *     cache_writer_open(&cw, "keys.h5", fingerprint_hex, n_batches);   // fails if OUT exists? no:
 *                                                                      // OUT is replaced at finish
 *     for (b = 0; b < n_batches; b++) {
 *         if (cache_writer_have(&cw, b)) continue;
 *         cache_piece *p = cache_piece_new(&cw, b);
 *         cache_piece_put_f32(p, "/features/keys/img1", data, 2, dims);
 *         cache_piece_attr_f32(p, "/features/keys/img1", "lambda2", vals, n);   // optional
 *         if (cache_piece_commit(p) < 0) ...;          // frees p
 *     }
 *     cache_index idx = {...};  prov attrs ...
 *     cache_writer_finish(&cw, &idx, &prov);
 *
 * Reading:
 *     cache_reader r;
 *     cache_open(&r, "keys.h5", "features");      // checks format name and version
 *     cache_read_f32(&r, "/features/keys/img1", &data, &n_tok, &dim);
 *     cache_attr(&r, "weights_sha256");            // NULL when absent
 *     cache_close(&r);
 */
#ifndef KC_CACHE_H
#define KC_CACHE_H
#include <stdint.h>

#define CACHE_FORMAT_FEATURES "keycut-features"
#define CACHE_FORMAT_MASKS "keycut-masks"
#define CACHE_FORMAT_VERSION "2"
#define CACHE_FORMAT_VERSION_OLD "1" /* still read */
/* Root attributes written as numbers (version 2): integers as int64, except those of
 * CACHE_REAL_KEYS, written as float32 (a value that does not parse as one stays a string, as
 * kc-extract --model color's ln_eps "-"). */
#define CACHE_NUMERIC_KEYS {"format_version", "patch", "dim", "heads", "registers", "settings", "shard_images", "shard_batch", "ln_eps", NULL}
#define CACHE_REAL_KEYS {"ln_eps", NULL}

/* The image index shared by every cache. */
typedef struct cache_index {
    int n;
    char **ids;
    int32_t *grid; /* (n, 2): grid_h, grid_w */
    int32_t *size; /* (n, 2): original h, w */
    /* How the grid maps back to the image (NULL when not recorded: version 1, or a writer that did not
     * know the policy).  resized: (n, 2) the network input's h, w (the resized image with its padding;
     * grid = resized / patch); box: (n, 4) top, left, height, width of the original image inside it,
     * in resized pixels (the whole input for the resizing policies; native16: 0, 0, h, w, padding
     * below and right).  Original pixel x lies at resized x' = left + (x + 1/2) width / w, in grid
     * cell floor(x' / patch): pipeline/images/grid_map.h's rule for every policy. */
    int32_t *resized;
    int32_t *box;
} cache_index;
void cache_index_free(cache_index *ix);
/* Position of id in the index, or -1. */
int cache_index_find(const cache_index *ix, const char *id);

/* Provenance: ordered string key/value pairs written as root attributes. */
typedef struct cache_prov {
    int n;
    char **key, **value;
} cache_prov;
void prov_set(cache_prov *p, const char *key, const char *value);      /* replaces if present */
void prov_setf(cache_prov *p, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
const char *prov_get(const cache_prov *p, const char *key);
/* 1 for the root attributes every cache writes afresh (format, format_version, code_version,
 * created, content_hash, command): a derived cache never copies them from its input. */
int prov_is_reserved(const char *key);
void prov_free(cache_prov *p);

/* ---- reading ------------------------------------------------------------------------------ */
typedef struct cache_reader {
    char *path;
    int64_t file;          /* hid_t */
    cache_index index;
    cache_prov prov;       /* all root attributes, as text (numbers formatted: ints %lld, float32 %.9g) */
    int version;           /* the file's format_version: 1 or 2 */
} cache_reader;

/* Opens and validates: the root attribute "format" must equal format (NULL accepts any keycut
 * cache), format_version must be 1 or 2 (text or number), /index must be consistent.  Errors name
 * the file. */
int cache_open(cache_reader *r, const char *path, const char *format);
const char *cache_attr(const cache_reader *r, const char *key);
/* 1 when a masks cache holds attention-mass stacks, (heads, grid_h, grid_w) per image (kc-decode
 * --kind attn: its feature_kind is attn), 0 when it holds one mask per image. */
int cache_masks_are_stacks(const cache_reader *r);
/* 1 if the dataset exists. */
int cache_has(const cache_reader *r, const char *dset);
/* float32 2-D dataset into a new buffer; *rows, *cols its shape.  Non-finite values are an error. */
int cache_read_f32(const cache_reader *r, const char *dset, float **data, int *rows, int *cols);
/* uint8 2-D dataset. */
int cache_read_u8(const cache_reader *r, const char *dset, uint8_t **data, int *rows, int *cols);
/* uint8 3-D dataset (n, rows, cols): the (heads, grid_h, grid_w) attention-mass mask stacks. */
int cache_read_u8_stack(const cache_reader *r, const char *dset, uint8_t **data, int *n, int *rows, int *cols);
/* Float attribute array of a dataset (up to max values); returns the count, -1 on error. */
int cache_read_attr_f32(const cache_reader *r, const char *dset, const char *name, float *vals, int max);
int cache_read_attr_i32(const cache_reader *r, const char *dset, const char *name, int32_t *val);
/* 1 if the dataset exists and has the attribute (masks caches older than knife_edge lack it). */
int cache_has_attr(const cache_reader *r, const char *dset, const char *name);
/* Names of the members of a group (e.g. the setting ids under /masks), sorted. */
int cache_list(const cache_reader *r, const char *group, char ***names, int *n);
/* As cache_open, but an empty index (an empty shard, kc-merge) is accepted. */
int cache_open_shard(cache_reader *r, const char *path, const char *format);
/* Hash of the cache's content (stored at write time as root attribute content_hash). */
const char *cache_content_hash(const cache_reader *r);
/* The content hash, recomputed from the file, of images [first, first + count) of r's index as a
 * cache holding only those images, written in pieces of `batch` images, would have stored: the
 * writer's sha256 over every dataset of those images (piece by piece, HDF5 name order within a
 * piece: "/path" NUL, shape as int64, values, then each attribute's name NUL values), then their
 * ids (each with its NUL), grids and sizes.  first = 0, count = n and the writer's batch give the
 * stored content_hash of an intact cache; a shard's slice of a merged cache gives that shard's
 * (kc-merge --verify).  0, or -1 with the error set. */
int cache_hash_images(const cache_reader *r, int first, int count, int batch, char hex[65]);
void cache_close(cache_reader *r);

/* ---- writing ------------------------------------------------------------------------------ */
struct kc_lock;
typedef struct cache_writer {
    char *path, *partial, *format;
    char fingerprint[65];
    int n_batches;
    struct kc_lock *lock; /* OUT.partial/lock, held from open to finish (pipeline/lock.h) */
} cache_writer;
typedef struct cache_piece cache_piece;

/* format: CACHE_FORMAT_FEATURES or CACHE_FORMAT_MASKS.  Creates OUT.partial/ and takes its lock
 * (OUT.partial/lock: one writer per output; a second run is refused with a line naming the
 * first), then keeps the pieces whose fingerprint matches (refusing a partial folder that holds
 * finished pieces of another command, with a message that says how to clear it).  A partial folder
 * that holds no finished piece (a run that stopped before its first batch, a kill before the
 * fingerprint was in place) never blocks: what is left in it goes and this run takes it over, with
 * one info line when another command had left it.  Prints how many pieces are resumed.  The lock
 * is held until cache_writer_finish (or cache_writer_free). */
int cache_writer_open(cache_writer *w, const char *path, const char *format, const char *fingerprint,
                      int n_batches);
/* As cache_writer_open, with check(ctx) called once the lock is held and before any finished
 * piece or the fingerprint of one is changed (a folder without a finished piece has been emptied
 * by then): its refusal (-1 with the message) leaves the finished pieces as they were. */
int cache_writer_open_check(cache_writer *w, const char *path, const char *format, const char *fingerprint,
                            int n_batches, int (*check)(void *ctx), void *ctx);
int cache_writer_have(const cache_writer *w, int batch);
cache_piece *cache_piece_new(cache_writer *w, int batch);
/* dims: rank values. */
int cache_piece_put_f32(cache_piece *p, const char *dset, const float *data, int rank, const int64_t *dims);
int cache_piece_put_u8(cache_piece *p, const char *dset, const uint8_t *data, int rank, const int64_t *dims);
int cache_piece_attr_f32(cache_piece *p, const char *dset, const char *name, const float *vals, int n);
int cache_piece_attr_i32(cache_piece *p, const char *dset, const char *name, int32_t val);
/* The sha256 of each image's file: kc-extract records it on every dataset of the image as the
 * attribute CACHE_IMAGE_SHA (8 int32, the 32 bytes in order) and, from format version 2, as
 * CACHE_IMAGE_SHA_HEX (the 64-char lowercase hex digest, what sha256sum prints); kc-center, kc-decode and kc-refine
 * carry it to their datasets (cache_piece_copy_image_sha) and kc-refine checks it against the image
 * it reads.  Caches older than it have none. */
#define CACHE_IMAGE_SHA "image_sha256"
#define CACHE_IMAGE_SHA_HEX "image_sha256_hex"
int cache_piece_attr_sha(cache_piece *p, const char *dset, const uint8_t sha[32]);
/* 1 and the bytes when src_dset of r carries the hash, 0 when it does not, -1 on error. */
int cache_read_image_sha(const cache_reader *r, const char *src_dset, uint8_t sha[32]);
/* Copies the hash of r's src_dset (if any) to the piece's dset. */
int cache_piece_copy_image_sha(cache_piece *p, const char *dset, const cache_reader *r, const char *src_dset);
/* One mask of a masks cache (/masks/<setting>/<id>, the layout above) with the decoder's
 * attributes, as kc-decode writes it and kc-refine carries it on. */
typedef struct cache_mask {
    const uint8_t *labels;           /* (rows, cols): 0 background, r the mask of round r */
    int64_t rows, cols;
    const float *lambda2, *eigengap; /* (n_rounds) each, NaN for a round not run */
    int n_rounds;
    int32_t degenerate;
    int has_knife;                   /* 0: no knife_edge and knife_margin (caches older than them) */
    int32_t knife_edge;              /* 1: a decision too close to call (docs/ties.md) */
    float knife_margin;              /* the smallest decision margin over max|x| */
} cache_mask;
/* Writes m as dset into the piece: the labels, then the attributes lambda2, eigengap, degenerate,
 * knife_edge, knife_margin, in that order (the file's attribute order); a stage adds its own
 * attributes, then the image hash (cache_piece_copy_image_sha), after it.  0, or -1 with the error
 * set (the caller aborts the piece). */
int cache_piece_put_mask(cache_piece *p, const char *dset, const cache_mask *m);
/* Closes, fsyncs and renames the piece into place; frees p (also on failure). */
int cache_piece_commit(cache_piece *p);
void cache_piece_abort(cache_piece *p);
/* Copies dataset dset of r (values and attributes) into the piece under the same name (kc-merge). */
int cache_piece_copy(cache_piece *p, const cache_reader *r, const char *dset);
/* Merges all pieces (all must be present) into OUT atomically, with the index and provenance
 * (format, format_version, code_version, created and content_hash are added here). */
int cache_writer_finish(cache_writer *w, const cache_index *ix, const cache_prov *prov);
void cache_writer_free(cache_writer *w);

/* Hash of a list of strings (for fingerprints): sha256 over each string and a separator. */
void cache_fingerprint(char hex[65], int n, const char *const *parts);
#endif
