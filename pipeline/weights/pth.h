/* pipeline/weights/pth.h — PyTorch .pth files (torch.save's zip format) read without running any code.
 * (Owner: weights module.)
 *
 * A .pth file is a zip archive "<name>/data.pkl", "<name>/data/<key>", "<name>/version" (and in
 * newer PyTorch "<name>/byteorder", ".data/serialization_id").  The zip reader takes the central
 * directory (zip64 records included), accepts only "stored" entries (torch.save never compresses),
 * and checks every offset and size against the file.  data.pkl is run by a pickle interpreter
 * that only builds data: dicts, lists, tuples, numbers, strings, None/bools, and tensors described
 * by (storage entry, dtype, offset, shape, stride).  The only globals it accepts are
 *   collections.OrderedDict, argparse.Namespace (an inert record),
 *   torch._utils._rebuild_tensor, _rebuild_tensor_v2, _rebuild_parameter,
 *   _rebuild_parameter_with_state, and the storage types torch.<Type>Storage / torch.UntypedStorage
 *   / torch.storage.UntypedStorage / torch.storage.TypedStorage names;
 * any other global is refused as "refusing global module.name".  Every count is bounded by the
 * bytes that remain, so a hostile file cannot make it read outside the file or allocate more
 * than a small multiple of the file's size.
 *
 *     pth_file f;
 *     if (pth_open(&f, path, data, size) < 0) return -1;      // data stays owned by the caller
 *     const pk_value *root = f.root;                            // usually PK_DICT
 *     for (int i = 0; i < root->n / 2; i++) { root->items[2*i] is a key, root->items[2*i+1] a value }
 *     float *x; if (pth_tensor_f32(&f, t, "pos_embed", &x) < 0) ...   // (numel) row-major
 *     pth_close(&f);
 */
#ifndef KC_PTH_H
#define KC_PTH_H
#include <stddef.h>
#include <stdint.h>

typedef enum pk_type {
    PK_NONE, PK_BOOL, PK_INT, PK_FLOAT, PK_STR, PK_BYTES, PK_TUPLE, PK_LIST, PK_DICT, PK_SET,
    PK_GLOBAL,  /* an accepted class or function (str = "module.name") */
    PK_STORAGE, /* a persistent storage reference */
    PK_TENSOR,
    PK_OBJECT,  /* argparse.Namespace: state = its attribute dict */
    PK_MARK     /* internal */
} pk_type;

typedef enum pk_dtype {
    PK_F32, PK_F16, PK_BF16, PK_F64, PK_I64, PK_I32, PK_I16, PK_I8, PK_U8, PK_BOOL_T, PK_OTHER_T
} pk_dtype;

typedef struct pk_value pk_value;
struct pk_value {
    pk_type type;
    int64_t i;          /* PK_BOOL, PK_INT (big: value does not fit; i is 0) */
    int big;
    double f;           /* PK_FLOAT */
    char *s;            /* PK_STR / PK_BYTES / PK_GLOBAL (NUL-terminated); PK_STORAGE: its key */
    size_t len;
    int n, cap;         /* containers: items; a dict has n / 2 pairs items[2i] (key), items[2i+1] */
    pk_value **items;
    pk_value *state;    /* PK_OBJECT attributes; a dict's BUILD state (ignored) */
    /* PK_STORAGE */
    pk_dtype dtype;
    const char *type_name;   /* e.g. "torch.FloatStorage" */
    int64_t numel;
    /* PK_TENSOR */
    pk_value *storage;
    int64_t offset;
    int ndim;
    int64_t *shape, *stride; /* (ndim) */
};

typedef struct pth_entry {
    char *name;
    uint64_t offset, size; /* of the stored data in the file */
} pth_entry;

typedef struct pth_file {
    const char *path;
    const uint8_t *data;
    size_t size;
    int n_entries;
    pth_entry *entries;
    char *prefix;          /* archive folder, e.g. "archive" */
    pk_value *root;
    /* internal: every value, for freeing; bytes the interpreter allocated and its limit */
    pk_value **all;
    size_t n_all, cap_all;
    uint64_t mem_used, mem_limit;
} pth_file;

/* Parses the zip and runs data.pkl.  data/size: the whole file (kept by the caller until
 * pth_close).  Returns 0, or -1 with "<path>: <problem>". */
int pth_open(pth_file *f, const char *path, const uint8_t *data, size_t size);
/* Bytes per element of a dtype (0 for PK_OTHER_T). */
int pk_dtype_size(pk_dtype d);
/* Converts a PK_TENSOR (float32 / float16 / bfloat16 storage; any strides and storage offset) to
 * a new row-major float32 array of prod(shape) values (at least one float allocated).  name is for
 * messages.  Returns 0, or -1 with "<path>: tensor <name>: <problem>". */
int pth_tensor_f32(const pth_file *f, const pk_value *t, const char *name, float **out);
/* Strided float32 / float16 / bfloat16 elements to row-major float32.  base: the storage's bytes,
 * base_numel elements of dtype dt; the view (offset, shape, stride) is checked to stay inside it
 * and not to hold more elements than the storage.  out: prod(shape) floats.  Returns 0, or -1 with
 * a message (no file name: the caller prefixes it). */
int kc_strided_f32(const uint8_t *base, int64_t base_numel, pk_dtype dt, int64_t offset, int ndim,
                   const int64_t *shape, const int64_t *stride, float *out);
/* Number of elements of a tensor, or -1 on overflow. */
int64_t pk_numel(const pk_value *t);
/* Key string of a dict key value (PK_STR), else NULL. */
const char *pk_str(const pk_value *v);
void pth_close(pth_file *f);

/* float16 / bfloat16 bits to float32 (exact, subnormals, inf and NaN included). */
float kc_half_to_float(uint16_t h);
float kc_bf16_to_float(uint16_t b);
#endif
