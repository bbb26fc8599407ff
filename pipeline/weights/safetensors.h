/* pipeline/weights/safetensors.h — safetensors files (Hugging Face's weights format).  (Owner: weights module.)
 *
 * Layout: 8-byte little-endian header length N, N bytes of JSON, then the byte buffer.  The JSON
 * object maps each tensor name to {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}
 * (offsets relative to the byte buffer); an optional "__metadata__" member holds strings.  Every
 * length, offset and shape is checked against the file: a header that overruns the file, offsets
 * outside the buffer or a byte count that disagrees with the shape are errors naming the file.
 * Conversion to float32 supports F32, F16 and BF16.
 *
 *     st_file f;
 *     if (st_open(&f, path, data, size) < 0) return -1;   // data stays owned by the caller
 *     for (int i = 0; i < f.n; i++) { f.t[i].name, f.t[i].dtype_name, f.t[i].shape ... }
 *     float *x; if (st_tensor_f32(&f, &f.t[i], &x) < 0) ...      // (numel) row-major
 *     st_close(&f);
 *
 * Writing (float32 only): st_write_f32 writes the header JSON by hand, compact (no spaces), with
 * "__metadata__" first (its string members sorted by key) and then the tensors sorted by name in
 * strcmp (byte) order, which is also the order of their data (no gaps), as the Python safetensors
 * library orders tensors of one dtype; the header is padded with spaces to a multiple of 8 bytes;
 * values are little-endian.  The file is written to PATH.tmp, fsynced and renamed to PATH.
 *
 *     st_out_tensor t[2] = {{"b", 1, {3}, b_data}, {"a", 2, {2, 2}, a_data}};
 *     const char *meta[] = {"seed", "0", "arch", "vit-s/16"};   // key, value pairs
 *     if (st_write_f32("net.safetensors", t, 2, meta, 2) < 0) ...
 */
#ifndef KC_SAFETENSORS_H
#define KC_SAFETENSORS_H
#include <stddef.h>
#include <stdint.h>

#include "pipeline/weights/pth.h" /* pk_dtype */

typedef struct st_tensor {
    char *name;
    char dtype_name[16];
    pk_dtype dtype;        /* PK_OTHER_T when not a type keycut knows */
    int ndim;
    int64_t shape[8];
    int64_t numel;
    const uint8_t *data;   /* inside the file's bytes */
    uint64_t nbytes;
} st_tensor;

typedef struct st_file {
    const char *path;
    int n;
    st_tensor *t;          /* in header order */
    int n_meta;            /* the string members of "__metadata__" */
    char **meta_key, **meta_value;
} st_file;

/* 1 when the bytes look like a safetensors file (a plausible length followed by '{'). */
int st_detect(const uint8_t *data, size_t size);
/* Parses and checks the header.  Returns 0, or -1 with "<path>: <problem>". */
int st_open(st_file *f, const char *path, const uint8_t *data, size_t size);
/* New row-major float32 copy of a F32 / F16 / BF16 tensor.  Returns 0, or -1 with a message. */
int st_tensor_f32(const st_file *f, const st_tensor *t, float **out);
void st_close(st_file *f);
/* The "__metadata__" string of that key, or NULL (valid until st_close). */
const char *st_meta(const st_file *f, const char *key);

typedef struct st_out_tensor {
    const char *name;
    int ndim;
    int64_t shape[8];
    const float *data;     /* (prod(shape)) row-major */
} st_out_tensor;
/* n tensors, n_meta (key, value) string pairs in meta[2 * n_meta].  Duplicate names are errors.
 * Returns 0, or -1 with "<path>: <problem>" (nothing left at path or path.tmp). */
int st_write_f32(const char *path, const st_out_tensor *t, int n, const char *const *meta, int n_meta);
#endif
