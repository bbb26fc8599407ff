/* pipeline/weights/pth.c — zip reader and data-only pickle interpreter for torch.save files (see pth.h).
 *
 * Zip: the end-of-central-directory record (and its zip64 form) gives the central directory;
 * each central entry gives name, method, sizes and the local header offset; the data begins after
 * the local header's name and extra field.  Only method 0 ("stored") is accepted.
 *
 * Pickle: a stack machine.  MARK pushes the stack depth on a mark stack; TUPLE / LIST / DICT /
 * APPENDS / SETITEMS pop down to the last mark.  The memo (PUT / GET / MEMOIZE) maps small
 * integers to values; values are shared, never copied.  GLOBAL only resolves names from the
 * accept list to inert tokens; REDUCE / NEWOBJ / BUILD / BINPERSID build data from those tokens:
 *   _rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks[, metadata]) -> tensor
 *   persistent id ('storage', torch.XStorage, key, location, numel)                     -> storage
 *   OrderedDict() -> dict;  Namespace() + BUILD(dict) -> record.
 */
#include "pipeline/weights/pth.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/kc.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "keycut's weights readers assume a little-endian host"
#endif

/* ---- little helpers --------------------------------------------------------------------------- */

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t rd64(const uint8_t *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }

float kc_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1F, man = h & 0x3FF, bits;
    if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else { /* subnormal: normalise */
            int e = -1;
            do {
                man <<= 1;
                e++;
            } while (!(man & 0x400));
            bits = sign | (uint32_t)(127 - 15 - e) << 23 | (man & 0x3FF) << 13;
        }
    } else if (exp == 31) {
        bits = sign | 0x7F800000u | man << 13;
    } else {
        bits = sign | (exp + 127 - 15) << 23 | man << 13;
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

float kc_bf16_to_float(uint16_t b)
{
    uint32_t bits = (uint32_t)b << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

int pk_dtype_size(pk_dtype d)
{
    switch (d) {
    case PK_F64: case PK_I64: return 8;
    case PK_F32: case PK_I32: return 4;
    case PK_F16: case PK_BF16: case PK_I16: return 2;
    case PK_I8: case PK_U8: case PK_BOOL_T: return 1;
    default: return 0;
    }
}

/* ---- zip -------------------------------------------------------------------------------------- */

static int cmp_entry(const void *a, const void *b)
{
    return strcmp(((const pth_entry *)a)->name, ((const pth_entry *)b)->name);
}

static const pth_entry *find_entry(const pth_file *f, const char *name)
{
    pth_entry key = {(char *)name, 0, 0};
    return bsearch(&key, f->entries, (size_t)f->n_entries, sizeof key, cmp_entry);
}

static int zip_read(pth_file *f)
{
    const uint8_t *d = f->data;
    size_t size = f->size;
    if (size < 22) return kc_fail("%s: truncated zip (%zu bytes, no end-of-central-directory record)", f->path, size);
    /* The EOCD is the last 22 bytes plus a comment of at most 65535 bytes. */
    size_t lo = size > 22 + 65535 ? size - 22 - 65535 : 0, eocd = (size_t)-1;
    for (size_t p = size - 22 + 1; p-- > lo;) {
        if (rd32(d + p) == 0x06054b50 && p + 22 + rd16(d + p + 20) <= size) {
            eocd = p;
            break;
        }
    }
    if (eocd == (size_t)-1) return kc_fail("%s: truncated or damaged zip (no end-of-central-directory record)", f->path);
    uint64_t n_total = rd16(d + eocd + 10), cd_size = rd32(d + eocd + 12), cd_off = rd32(d + eocd + 16);
    if (rd16(d + eocd + 4) != 0 || rd16(d + eocd + 6) != 0) return kc_fail("%s: multi-disk zip archives are not supported", f->path);
    if (eocd >= 20 && rd32(d + eocd - 20) == 0x07064b50) { /* zip64 locator */
        uint64_t e64 = rd64(d + eocd - 20 + 8);
        if (e64 > eocd - 20 || eocd - 20 - e64 < 56 || rd32(d + e64) != 0x06064b50)
            return kc_fail("%s: damaged zip64 end-of-central-directory record", f->path);
        n_total = rd64(d + e64 + 32);
        cd_size = rd64(d + e64 + 40);
        cd_off = rd64(d + e64 + 48);
    } else if (n_total == 0xFFFF || cd_size == 0xFFFFFFFFu || cd_off == 0xFFFFFFFFu) {
        return kc_fail("%s: damaged zip (zip64 values without a zip64 record)", f->path);
    }
    if (cd_off > size || cd_size > size - cd_off) return kc_fail("%s: truncated zip (central directory at %llu+%llu beyond the file's %zu bytes)", f->path, (unsigned long long)cd_off, (unsigned long long)cd_size, size);
    if (n_total > cd_size / 46) return kc_fail("%s: damaged zip (%llu entries cannot fit a %llu-byte central directory)", f->path, (unsigned long long)n_total, (unsigned long long)cd_size);
    f->entries = kc_calloc(n_total ? n_total : 1, sizeof *f->entries);
    const uint8_t *p = d + cd_off, *end = d + cd_off + cd_size;
    for (uint64_t k = 0; k < n_total; k++) {
        if (end - p < 46 || rd32(p) != 0x02014b50) return kc_fail("%s: damaged zip central directory (entry %llu)", f->path, (unsigned long long)k);
        unsigned flags = rd16(p + 8), method = rd16(p + 10), nlen = rd16(p + 28), elen = rd16(p + 30), clen = rd16(p + 32);
        uint64_t csize = rd32(p + 20), usize = rd32(p + 24), loff = rd32(p + 42);
        if ((size_t)(end - p) < 46u + nlen + elen + clen) return kc_fail("%s: damaged zip central directory (entry %llu overruns it)", f->path, (unsigned long long)k);
        char *name = kc_malloc(nlen + 1u);
        memcpy(name, p + 46, nlen);
        name[nlen] = 0;
        f->entries[f->n_entries].name = name;
        f->n_entries++;
        /* zip64 extended information: the fields that are 0xFFFFFFFF, in this order */
        const uint8_t *x = p + 46 + nlen, *xend = x + elen;
        while (xend - x >= 4) {
            unsigned id = rd16(x), xl = rd16(x + 2);
            if ((size_t)(xend - x - 4) < xl) break;
            if (id == 0x0001) {
                const uint8_t *q = x + 4, *qend = x + 4 + xl;
                uint64_t *fields[3] = {&usize, &csize, &loff};
                for (int j = 0; j < 3; j++) {
                    if (*fields[j] != 0xFFFFFFFFu) continue;
                    if (qend - q < 8) return kc_fail("%s: damaged zip64 extra field of %s", f->path, name);
                    *fields[j] = rd64(q);
                    q += 8;
                }
            }
            x += 4 + xl;
        }
        if (flags & 1) return kc_fail("%s: zip entry %s is encrypted", f->path, name);
        if (method != 0) return kc_fail("%s: zip entry %s is compressed (method %u); torch.save writes stored entries only", f->path, name, method);
        if (csize != usize) return kc_fail("%s: zip entry %s: stored sizes differ (%llu vs %llu)", f->path, name, (unsigned long long)csize, (unsigned long long)usize);
        if (loff > size || size - loff < 30 || rd32(d + loff) != 0x04034b50) return kc_fail("%s: truncated or damaged zip (local header of %s at %llu)", f->path, name, (unsigned long long)loff);
        uint64_t data_off = loff + 30 + rd16(d + loff + 26) + rd16(d + loff + 28);
        if (data_off > size) return kc_fail("%s: truncated zip (local header of %s)", f->path, name);
        if (rd16(d + loff + 26) != nlen || memcmp(d + loff + 30, name, nlen) != 0)
            return kc_fail("%s: damaged zip (local header of %s names another file)", f->path, name);
        if (data_off > size || csize > size - data_off)
            return kc_fail("%s: truncated zip (entry %s needs bytes %llu..%llu, the file has %zu)", f->path, name, (unsigned long long)data_off, (unsigned long long)(data_off + csize), size);
        f->entries[k].offset = data_off;
        f->entries[k].size = csize;
        p += 46 + nlen + elen + clen;
    }
    qsort(f->entries, (size_t)f->n_entries, sizeof *f->entries, cmp_entry);
    for (int k = 1; k < f->n_entries; k++)
        if (!strcmp(f->entries[k].name, f->entries[k - 1].name)) return kc_fail("%s: zip holds %s twice", f->path, f->entries[k].name);
    return 0;
}

/* ---- pickle values ---------------------------------------------------------------------------- */

static pk_value *new_value(pth_file *f, pk_type type)
{
    if (f->n_all == f->cap_all) {
        f->cap_all = f->cap_all ? 2 * f->cap_all : 256;
        f->all = kc_realloc(f->all, f->cap_all * sizeof *f->all);
    }
    pk_value *v = kc_calloc(1, sizeof *v);
    f->mem_used += sizeof *v + 2 * sizeof(pk_value *);
    v->type = type;
    f->all[f->n_all++] = v;
    return v;
}

static void push_item(pth_file *f, pk_value *c, pk_value *item)
{
    if (c->n == c->cap) {
        f->mem_used += (uint64_t)(c->cap ? c->cap : 4) * sizeof *c->items;
        c->cap = c->cap ? 2 * c->cap : 4;
        c->items = kc_realloc(c->items, (size_t)c->cap * sizeof *c->items);
    }
    c->items[c->n++] = item;
}

const char *pk_str(const pk_value *v) { return v && v->type == PK_STR ? v->s : NULL; }

int64_t pk_numel(const pk_value *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++)
        if (__builtin_mul_overflow(n, t->shape[i], &n)) return -1;
    return n;
}

static const char *type_name(pk_type t)
{
    static const char *names[] = {"None", "bool", "int", "float", "str", "bytes", "tuple", "list", "dict", "set",
                                  "global", "storage", "tensor", "Namespace", "mark"};
    return (unsigned)t < sizeof names / sizeof *names ? names[t] : "?";
}

/* ---- the interpreter -------------------------------------------------------------------------- */

typedef struct unpickler {
    pth_file *f;
    const uint8_t *p, *end;
    const char *what;        /* "<path>: data.pkl" */
    pk_value **stack;
    size_t n_stack, cap_stack;
    size_t *marks;
    size_t n_marks, cap_marks;
    pk_value **memo;
    size_t n_memo, max_memo, memo_used; /* memo_used: distinct indices stored (MEMOIZE's next) */
} unpickler;

#define UFAIL(u, ...) (kc_fail(__VA_ARGS__), kc_fail_prefix("%s: data.pkl at byte %td", (u)->f->path, (u)->p - (u)->f->data))

static int push(unpickler *u, pk_value *v)
{
    if (u->n_stack == u->cap_stack) {
        u->cap_stack = u->cap_stack ? 2 * u->cap_stack : 64;
        u->stack = kc_realloc(u->stack, u->cap_stack * sizeof *u->stack);
    }
    u->stack[u->n_stack++] = v;
    return 0;
}

static size_t floor_of(const unpickler *u) { return u->n_marks ? u->marks[u->n_marks - 1] : 0; }

static pk_value *pop(unpickler *u)
{
    if (u->n_stack <= floor_of(u)) return NULL;
    return u->stack[--u->n_stack];
}

static pk_value *top(unpickler *u)
{
    if (u->n_stack <= floor_of(u)) return NULL;
    return u->stack[u->n_stack - 1];
}

/* Pops the items above the last mark and the mark; *first points at them (still valid until the
 * next push). */
static int pop_mark(unpickler *u, pk_value ***first, size_t *count)
{
    if (!u->n_marks) return UFAIL(u, "no MARK on the stack");
    size_t m = u->marks[--u->n_marks];
    *first = u->stack ? u->stack + m : NULL; /* (MARK before any push: no stack yet, count 0) */
    *count = u->n_stack - m;
    u->n_stack = m;
    return 0;
}

static int need(unpickler *u, uint64_t n)
{
    if ((uint64_t)(u->end - u->p) < n) return UFAIL(u, "truncated pickle (needs %llu more bytes)", (unsigned long long)n);
    return 0;
}

static int memo_put(unpickler *u, uint64_t idx, pk_value *v)
{
    if (!v) return UFAIL(u, "memo store from an empty stack");
    if (idx >= u->max_memo) return UFAIL(u, "memo index %llu out of range", (unsigned long long)idx);
    if (idx >= u->n_memo) {
        size_t n = u->n_memo ? u->n_memo : 64;
        while (n <= idx) n *= 2;
        if (n > u->max_memo) n = u->max_memo;
        u->memo = kc_realloc(u->memo, n * sizeof *u->memo);
        memset(u->memo + u->n_memo, 0, (n - u->n_memo) * sizeof *u->memo);
        u->n_memo = n;
    }
    if (!u->memo[idx]) u->memo_used++;
    u->memo[idx] = v;
    return 0;
}

static int memo_get(unpickler *u, uint64_t idx)
{
    if (idx >= u->n_memo || !u->memo[idx]) return UFAIL(u, "memo index %llu was never stored", (unsigned long long)idx);
    return push(u, u->memo[idx]);
}

static pk_value *new_string(unpickler *u, pk_type type, const uint8_t *s, size_t n)
{
    pk_value *v = new_value(u->f, type);
    v->s = kc_malloc(n + 1);
    u->f->mem_used += n + 1;
    memcpy(v->s, s, n);
    v->s[n] = 0;
    v->len = n;
    return v;
}

/* Reads a text line (GLOBAL, PUT, GET, INT ...) without its newline. */
static int read_line(unpickler *u, const uint8_t **s, size_t *n)
{
    const uint8_t *nl = memchr(u->p, '\n', (size_t)(u->end - u->p));
    if (!nl) return UFAIL(u, "truncated pickle (unterminated text argument)");
    *s = u->p;
    *n = (size_t)(nl - u->p);
    u->p = nl + 1;
    return 0;
}

static const struct {
    const char *name;
    pk_dtype dtype;
} storage_types[] = {
    {"FloatStorage", PK_F32},   {"HalfStorage", PK_F16}, {"BFloat16Storage", PK_BF16}, {"DoubleStorage", PK_F64},
    {"LongStorage", PK_I64},    {"IntStorage", PK_I32},  {"ShortStorage", PK_I16},     {"CharStorage", PK_I8},
    {"ByteStorage", PK_U8},     {"BoolStorage", PK_BOOL_T}, {"UntypedStorage", PK_U8},
    {"ComplexFloatStorage", PK_OTHER_T}, {"ComplexDoubleStorage", PK_OTHER_T},
};

/* Accept list.  Returns a PK_GLOBAL token, or NULL with "refusing global module.name". */
static pk_value *resolve_global(unpickler *u, const char *module, const char *name)
{
    static const char *accepted[] = {
        "collections.OrderedDict", "argparse.Namespace", "torch._utils._rebuild_tensor", "torch._utils._rebuild_tensor_v2",
        "torch._utils._rebuild_parameter", "torch._utils._rebuild_parameter_with_state",
    };
    char *full = kc_strfmt("%s.%s", module, name);
    int ok = 0;
    pk_dtype dtype = PK_OTHER_T;
    for (size_t i = 0; i < sizeof accepted / sizeof *accepted; i++)
        if (!strcmp(full, accepted[i])) ok = 1;
    if (!strcmp(module, "torch") || !strcmp(module, "torch.storage") || !strcmp(module, "torch.cuda"))
        for (size_t i = 0; i < sizeof storage_types / sizeof *storage_types; i++)
            if (!strcmp(name, storage_types[i].name)) {
                ok = 2;
                dtype = storage_types[i].dtype;
            }
    if (!ok) {
        UFAIL(u, "refusing global %s (only tensors, dicts, lists and plain values are read)", full);
        free(full);
        return NULL;
    }
    pk_value *g = new_value(u->f, PK_GLOBAL);
    g->s = full;
    g->len = strlen(full);
    g->dtype = ok == 2 ? dtype : PK_OTHER_T;
    g->i = ok == 2; /* 1: a storage type */
    return g;
}

static int is_global(const pk_value *v, const char *name) { return v && v->type == PK_GLOBAL && !strcmp(v->s, name); }

static int get_int(unpickler *u, const pk_value *v, const char *what, int64_t *out)
{
    if (!v || (v->type != PK_INT && v->type != PK_BOOL) || v->big) return UFAIL(u, "%s: expected an int, got %s", what, v ? type_name(v->type) : "nothing");
    *out = v->i;
    return 0;
}

static int int_tuple(unpickler *u, const pk_value *v, const char *what, int64_t **out)
{
    if (!v || (v->type != PK_TUPLE && v->type != PK_LIST)) return UFAIL(u, "%s: expected a tuple", what);
    *out = kc_malloc((size_t)(v->n ? v->n : 1) * sizeof **out);
    for (int i = 0; i < v->n; i++) {
        if (get_int(u, v->items[i], what, &(*out)[i]) < 0) return -1;
        if ((*out)[i] < 0) return UFAIL(u, "%s: negative value %lld", what, (long long)(*out)[i]);
    }
    return 0;
}

static int persistent_load(unpickler *u, pk_value *pid)
{
    if (!pid || pid->type != PK_TUPLE || pid->n != 5 || !pk_str(pid->items[0]) || strcmp(pid->items[0]->s, "storage") != 0)
        return UFAIL(u, "unsupported persistent id (expected ('storage', type, key, location, numel))");
    pk_value *type = pid->items[1], *key = pid->items[2];
    if (!type || type->type != PK_GLOBAL || type->i != 1) return UFAIL(u, "persistent id: %s is not a storage type", type && type->type == PK_GLOBAL ? type->s : "value");
    if (!pk_str(key) || key->len > 200 || strchr(key->s, '/')) return UFAIL(u, "persistent id: bad storage key");
    int64_t numel;
    if (get_int(u, pid->items[4], "storage numel", &numel) < 0) return -1;
    char *entry_name = kc_strfmt("%s/data/%s", u->f->prefix, key->s);
    const pth_entry *e = find_entry(u->f, entry_name);
    if (!e) {
        UFAIL(u, "storage %s is missing from the zip (truncated file?)", entry_name);
        free(entry_name);
        return -1;
    }
    free(entry_name);
    int es = pk_dtype_size(type->dtype);
    if (numel < 0 || (es && (uint64_t)numel > e->size / (uint64_t)es))
        return UFAIL(u, "storage %s: %lld elements of %d bytes do not fit its %llu bytes", key->s, (long long)numel, es, (unsigned long long)e->size);
    pk_value *s = new_value(u->f, PK_STORAGE);
    s->s = kc_strdup(key->s);
    s->len = key->len;
    s->dtype = type->dtype;
    s->type_name = type->s;
    s->numel = es ? numel : 0;
    s->offset = (int64_t)e->offset;
    return push(u, s);
}

static int rebuild_tensor(unpickler *u, pk_value *args, int v2, pk_value **out)
{
    if (!args || args->type != PK_TUPLE || args->n < 4) return UFAIL(u, "_rebuild_tensor: expected (storage, offset, size, stride, ...)");
    pk_value *st = args->items[0];
    if (!st || st->type != PK_STORAGE) return UFAIL(u, "_rebuild_tensor: first argument is %s, not a storage", st ? type_name(st->type) : "nothing");
    (void)v2;
    pk_value *t = new_value(u->f, PK_TENSOR);
    t->storage = st;
    t->dtype = st->dtype;
    if (get_int(u, args->items[1], "tensor storage offset", &t->offset) < 0) return -1;
    if (t->offset < 0) return UFAIL(u, "negative storage offset");
    if (int_tuple(u, args->items[2], "tensor size", &t->shape) < 0) return -1;
    t->ndim = args->items[2]->n;
    if (int_tuple(u, args->items[3], "tensor stride", &t->stride) < 0) return -1;
    if (args->items[3]->n != t->ndim) return UFAIL(u, "tensor size has %d dims, stride %d", t->ndim, args->items[3]->n);
    *out = t;
    return 0;
}

static int call(unpickler *u, pk_value *fn, pk_value *args, pk_value **out)
{
    if (!fn || fn->type != PK_GLOBAL) return UFAIL(u, "REDUCE on a %s, not a callable", fn ? type_name(fn->type) : "nothing");
    if (!args || args->type != PK_TUPLE) return UFAIL(u, "REDUCE: arguments are not a tuple");
    if (is_global(fn, "collections.OrderedDict")) {
        pk_value *d = new_value(u->f, PK_DICT);
        if (args->n == 1 && args->items[0]->type == PK_LIST) {
            pk_value *l = args->items[0];
            for (int i = 0; i < l->n; i++) {
                pk_value *pair = l->items[i];
                if (pair->type != PK_TUPLE || pair->n != 2) return UFAIL(u, "OrderedDict: items must be pairs");
                push_item(u->f, d, pair->items[0]);
                push_item(u->f, d, pair->items[1]);
            }
        } else if (args->n != 0) {
            return UFAIL(u, "OrderedDict: unsupported arguments");
        }
        *out = d;
        return 0;
    }
    if (is_global(fn, "argparse.Namespace")) {
        if (args->n) return UFAIL(u, "Namespace: unexpected arguments");
        *out = new_value(u->f, PK_OBJECT);
        return 0;
    }
    if (is_global(fn, "torch._utils._rebuild_tensor_v2")) return rebuild_tensor(u, args, 1, out);
    if (is_global(fn, "torch._utils._rebuild_tensor")) return rebuild_tensor(u, args, 0, out);
    if (is_global(fn, "torch._utils._rebuild_parameter") || is_global(fn, "torch._utils._rebuild_parameter_with_state")) {
        if (args->n < 1 || args->items[0]->type != PK_TENSOR) return UFAIL(u, "%s: first argument is not a tensor", fn->s);
        *out = args->items[0];
        return 0;
    }
    return UFAIL(u, "cannot call %s", fn->s);
}

static int new_object(unpickler *u, pk_value *cls, pk_value *args)
{
    if (!cls || cls->type != PK_GLOBAL) return UFAIL(u, "NEWOBJ on a %s, not a class", cls ? type_name(cls->type) : "nothing");
    if (!args || args->type != PK_TUPLE) return UFAIL(u, "NEWOBJ: arguments are not a tuple");
    if (is_global(cls, "argparse.Namespace") && args->n == 0) return push(u, new_value(u->f, PK_OBJECT));
    if (is_global(cls, "collections.OrderedDict") && args->n == 0) return push(u, new_value(u->f, PK_DICT));
    return UFAIL(u, "cannot instantiate %s", cls->s);
}

enum {
    OP_MARK = '(', OP_STOP = '.', OP_POP = '0', OP_POP_MARK = '1', OP_DUP = '2', OP_FLOAT = 'F', OP_INT = 'I',
    OP_BININT = 'J', OP_BININT1 = 'K', OP_LONG = 'L', OP_BININT2 = 'M', OP_NONE = 'N', OP_PERSID = 'P',
    OP_BINPERSID = 'Q', OP_REDUCE = 'R', OP_STRING = 'S', OP_BINSTRING = 'T', OP_SHORT_BINSTRING = 'U',
    OP_UNICODE = 'V', OP_BINUNICODE = 'X', OP_APPEND = 'a', OP_BUILD = 'b', OP_GLOBAL = 'c', OP_DICT = 'd',
    OP_EMPTY_DICT = '}', OP_APPENDS = 'e', OP_GET = 'g', OP_BINGET = 'h', OP_INST = 'i', OP_LONG_BINGET = 'j',
    OP_LIST = 'l', OP_EMPTY_LIST = ']', OP_OBJ = 'o', OP_PUT = 'p', OP_BINPUT = 'q', OP_LONG_BINPUT = 'r',
    OP_SETITEM = 's', OP_TUPLE = 't', OP_EMPTY_TUPLE = ')', OP_SETITEMS = 'u', OP_BINFLOAT = 'G',
    OP_PROTO = 0x80, OP_NEWOBJ = 0x81, OP_TUPLE1 = 0x85, OP_TUPLE2 = 0x86, OP_TUPLE3 = 0x87, OP_NEWTRUE = 0x88,
    OP_NEWFALSE = 0x89, OP_LONG1 = 0x8a, OP_LONG4 = 0x8b, OP_BINBYTES = 'B', OP_SHORT_BINBYTES = 'C',
    OP_SHORT_BINUNICODE = 0x8c, OP_BINUNICODE8 = 0x8d, OP_BINBYTES8 = 0x8e, OP_EMPTY_SET = 0x8f,
    OP_ADDITEMS = 0x90, OP_FROZENSET = 0x91, OP_NEWOBJ_EX = 0x92, OP_STACK_GLOBAL = 0x93, OP_MEMOIZE = 0x94,
    OP_FRAME = 0x95,
};

static pk_value *new_int(unpickler *u, int64_t i)
{
    pk_value *v = new_value(u->f, PK_INT);
    v->i = i;
    return v;
}

/* Little-endian two's complement of n bytes; values beyond int64 are marked big. */
static pk_value *new_long(unpickler *u, const uint8_t *b, uint64_t n)
{
    pk_value *v = new_value(u->f, PK_INT);
    if (n == 0) return v;
    int neg = b[n - 1] & 0x80;
    if (n > 8) { /* fits only if the extra bytes are sign extension */
        for (uint64_t k = 8; k < n; k++)
            if (b[k] != (neg ? 0xFF : 0x00)) {
                v->big = 1;
                return v;
            }
        if (((b[7] & 0x80) != 0) != (neg != 0)) {
            v->big = 1;
            return v;
        }
        n = 8;
    }
    uint64_t x = neg ? ~(uint64_t)0 : 0;
    for (uint64_t k = 0; k < n; k++) x = (x & ~((uint64_t)0xFF << (8 * k))) | (uint64_t)b[k] << (8 * k);
    memcpy(&v->i, &x, 8);
    return v;
}

static int text_number(unpickler *u, int op)
{
    const uint8_t *s;
    size_t n;
    KC_TRY(read_line(u, &s, &n));
    char buf[64];
    if (n >= sizeof buf) return UFAIL(u, "number text too long");
    memcpy(buf, s, n);
    buf[n] = 0;
    if (op == OP_LONG && n && buf[n - 1] == 'L') buf[n - 1] = 0;
    char *endp;
    if (op == OP_FLOAT) {
        pk_value *v = new_value(u->f, PK_FLOAT);
        v->f = strtod(buf, &endp);
        if (*endp || endp == buf) return UFAIL(u, "bad FLOAT text");
        return push(u, v);
    }
    if (op == OP_INT && (!strcmp(buf, "00") || !strcmp(buf, "01"))) {
        pk_value *v = new_value(u->f, PK_BOOL);
        v->i = buf[1] == '1';
        return push(u, v);
    }
    long long ll = strtoll(buf, &endp, 10);
    if (*endp || endp == buf) return UFAIL(u, "bad INT/LONG text");
    return push(u, new_int(u, ll));
}

static int run_pickle(unpickler *u, pk_value **result)
{
    pk_value *a, *b, *c, **items;
    size_t n;
    while (u->p < u->end) {
        if (u->f->mem_used + 8 * (u->cap_stack + u->cap_marks + u->n_memo) > u->f->mem_limit)
            return UFAIL(u, "the pickle needs more memory than its file justifies (over %llu MB)",
                         (unsigned long long)(u->f->mem_limit >> 20));
        int op = *u->p++;
        switch (op) {
        case OP_PROTO:
            KC_TRY(need(u, 1));
            if (*u->p > 5) return UFAIL(u, "pickle protocol %d is not supported", *u->p);
            u->p++;
            break;
        case OP_FRAME: KC_TRY(need(u, 8)); u->p += 8; break;
        case OP_STOP:
            if (!(a = pop(u)) || u->n_stack || u->n_marks) return UFAIL(u, "STOP with %zu values and %zu marks on the stack", u->n_stack + (a != NULL), u->n_marks);
            *result = a;
            return 0;
        case OP_MARK:
            if (u->n_marks == u->cap_marks) {
                u->cap_marks = u->cap_marks ? 2 * u->cap_marks : 16;
                u->marks = kc_realloc(u->marks, u->cap_marks * sizeof *u->marks);
            }
            u->marks[u->n_marks++] = u->n_stack;
            break;
        case OP_POP:
            if (u->n_stack > floor_of(u)) u->n_stack--;
            else if (u->n_marks && u->marks[u->n_marks - 1] == u->n_stack) u->n_marks--; /* pops the mark */
            else return UFAIL(u, "POP on an empty stack");
            break;
        case OP_POP_MARK: KC_TRY(pop_mark(u, &items, &n)); break;
        case OP_DUP:
            if (!(a = top(u))) return UFAIL(u, "DUP on an empty stack");
            push(u, a);
            break;
        case OP_NONE: push(u, new_value(u->f, PK_NONE)); break;
        case OP_NEWTRUE: case OP_NEWFALSE:
            a = new_value(u->f, PK_BOOL);
            a->i = op == OP_NEWTRUE;
            push(u, a);
            break;
        case OP_BININT:
            KC_TRY(need(u, 4));
            push(u, new_int(u, (int32_t)rd32(u->p)));
            u->p += 4;
            break;
        case OP_BININT1:
            KC_TRY(need(u, 1));
            push(u, new_int(u, *u->p++));
            break;
        case OP_BININT2:
            KC_TRY(need(u, 2));
            push(u, new_int(u, rd16(u->p)));
            u->p += 2;
            break;
        case OP_LONG1: case OP_LONG4: {
            uint64_t len;
            if (op == OP_LONG1) {
                KC_TRY(need(u, 1));
                len = *u->p++;
            } else {
                KC_TRY(need(u, 4));
                int32_t l = (int32_t)rd32(u->p);
                if (l < 0) return UFAIL(u, "LONG4 with a negative length");
                len = (uint64_t)l;
                u->p += 4;
            }
            KC_TRY(need(u, len));
            push(u, new_long(u, u->p, len));
            u->p += len;
            break;
        }
        case OP_INT: case OP_LONG: case OP_FLOAT: KC_TRY(text_number(u, op)); break;
        case OP_BINFLOAT: {
            KC_TRY(need(u, 8));
            uint64_t bits = 0;
            for (int k = 0; k < 8; k++) bits = bits << 8 | u->p[k]; /* big-endian */
            a = new_value(u->f, PK_FLOAT);
            memcpy(&a->f, &bits, 8);
            push(u, a);
            u->p += 8;
            break;
        }
        case OP_BINUNICODE: case OP_SHORT_BINUNICODE: case OP_BINUNICODE8: case OP_BINSTRING:
        case OP_SHORT_BINSTRING: case OP_BINBYTES: case OP_SHORT_BINBYTES: case OP_BINBYTES8: {
            uint64_t len;
            int lb = (op == OP_SHORT_BINUNICODE || op == OP_SHORT_BINSTRING || op == OP_SHORT_BINBYTES) ? 1
                   : (op == OP_BINUNICODE8 || op == OP_BINBYTES8)                                        ? 8
                                                                                                          : 4;
            KC_TRY(need(u, (uint64_t)lb));
            len = lb == 1 ? *u->p : lb == 4 ? rd32(u->p) : rd64(u->p);
            if (op == OP_BINSTRING && (int32_t)len < 0) return UFAIL(u, "BINSTRING with a negative length");
            u->p += lb;
            KC_TRY(need(u, len));
            int bytes = op == OP_BINBYTES || op == OP_SHORT_BINBYTES || op == OP_BINBYTES8;
            push(u, new_string(u, bytes ? PK_BYTES : PK_STR, u->p, (size_t)len));
            u->p += len;
            break;
        }
        case OP_EMPTY_DICT: push(u, new_value(u->f, PK_DICT)); break;
        case OP_EMPTY_LIST: push(u, new_value(u->f, PK_LIST)); break;
        case OP_EMPTY_TUPLE: push(u, new_value(u->f, PK_TUPLE)); break;
        case OP_EMPTY_SET: push(u, new_value(u->f, PK_SET)); break;
        case OP_TUPLE: case OP_LIST: case OP_FROZENSET:
            KC_TRY(pop_mark(u, &items, &n));
            a = new_value(u->f, op == OP_TUPLE ? PK_TUPLE : op == OP_LIST ? PK_LIST : PK_SET);
            for (size_t k = 0; k < n; k++) push_item(u->f, a, items[k]);
            push(u, a);
            break;
        case OP_DICT:
            KC_TRY(pop_mark(u, &items, &n));
            if (n % 2) return UFAIL(u, "DICT with an odd number of items");
            a = new_value(u->f, PK_DICT);
            for (size_t k = 0; k < n; k++) push_item(u->f, a, items[k]);
            push(u, a);
            break;
        case OP_TUPLE1: case OP_TUPLE2: case OP_TUPLE3: {
            int k = op - OP_TUPLE1 + 1;
            pk_value *t[3];
            for (int j = k - 1; j >= 0; j--)
                if (!(t[j] = pop(u))) return UFAIL(u, "TUPLE%d on a short stack", k);
            a = new_value(u->f, PK_TUPLE);
            for (int j = 0; j < k; j++) push_item(u->f, a, t[j]);
            push(u, a);
            break;
        }
        case OP_APPEND:
            if (!(b = pop(u)) || !(a = top(u))) return UFAIL(u, "APPEND on a short stack");
            if (a->type != PK_LIST) return UFAIL(u, "APPEND to a %s", type_name(a->type));
            push_item(u->f, a, b);
            break;
        case OP_APPENDS: case OP_ADDITEMS:
            KC_TRY(pop_mark(u, &items, &n));
            if (!(a = top(u))) return UFAIL(u, "APPENDS without a list");
            if (a->type != (op == OP_APPENDS ? PK_LIST : PK_SET)) return UFAIL(u, "APPENDS/ADDITEMS to a %s", type_name(a->type));
            for (size_t k = 0; k < n; k++) push_item(u->f, a, items[k]);
            break;
        case OP_SETITEM:
            if (!(c = pop(u)) || !(b = pop(u)) || !(a = top(u))) return UFAIL(u, "SETITEM on a short stack");
            if (a->type != PK_DICT) return UFAIL(u, "SETITEM on a %s", type_name(a->type));
            push_item(u->f, a, b);
            push_item(u->f, a, c);
            break;
        case OP_SETITEMS:
            KC_TRY(pop_mark(u, &items, &n));
            if (n % 2) return UFAIL(u, "SETITEMS with an odd number of items");
            if (!(a = top(u)) || a->type != PK_DICT) return UFAIL(u, "SETITEMS on a %s", a ? type_name(a->type) : "short stack");
            for (size_t k = 0; k < n; k++) push_item(u->f, a, items[k]);
            break;
        case OP_GLOBAL: {
            const uint8_t *m, *nm;
            size_t ml, nl;
            KC_TRY(read_line(u, &m, &ml));
            KC_TRY(read_line(u, &nm, &nl));
            if (ml > 200 || nl > 200) return UFAIL(u, "GLOBAL name too long");
            char mod[201], name[201];
            memcpy(mod, m, ml);
            mod[ml] = 0;
            memcpy(name, nm, nl);
            name[nl] = 0;
            if (!(a = resolve_global(u, mod, name))) return -1;
            push(u, a);
            break;
        }
        case OP_STACK_GLOBAL:
            if (!(b = pop(u)) || !(a = pop(u))) return UFAIL(u, "STACK_GLOBAL on a short stack");
            if (!pk_str(a) || !pk_str(b)) return UFAIL(u, "STACK_GLOBAL with non-string names");
            if (!(c = resolve_global(u, a->s, b->s))) return -1;
            push(u, c);
            break;
        case OP_REDUCE:
            if (!(b = pop(u)) || !(a = pop(u))) return UFAIL(u, "REDUCE on a short stack");
            KC_TRY(call(u, a, b, &c));
            push(u, c);
            break;
        case OP_NEWOBJ:
            if (!(b = pop(u)) || !(a = pop(u))) return UFAIL(u, "NEWOBJ on a short stack");
            KC_TRY(new_object(u, a, b));
            break;
        case OP_NEWOBJ_EX:
            if (!(c = pop(u)) || !(b = pop(u)) || !(a = pop(u))) return UFAIL(u, "NEWOBJ_EX on a short stack");
            if (c->type != PK_DICT || c->n) return UFAIL(u, "NEWOBJ_EX with keyword arguments");
            KC_TRY(new_object(u, a, b));
            break;
        case OP_BUILD:
            if (!(b = pop(u)) || !(a = top(u))) return UFAIL(u, "BUILD on a short stack");
            if (a->type == PK_OBJECT) {
                if (b->type == PK_TUPLE && b->n == 2) b = b->items[0]; /* (dict, slots) */
                if (b->type != PK_DICT) return UFAIL(u, "Namespace state is a %s, not a dict", type_name(b->type));
                a->state = b;
            } else if (a->type == PK_DICT || a->type == PK_TENSOR) {
                a->state = b; /* OrderedDict._metadata, parameter state: kept, unused */
            } else {
                return UFAIL(u, "BUILD on a %s", type_name(a->type));
            }
            break;
        case OP_BINPERSID:
            if (!(a = pop(u))) return UFAIL(u, "BINPERSID on an empty stack");
            KC_TRY(persistent_load(u, a));
            break;
        case OP_BINPUT:
            KC_TRY(need(u, 1));
            KC_TRY(memo_put(u, *u->p++, top(u)));
            break;
        case OP_LONG_BINPUT:
            KC_TRY(need(u, 4));
            u->p += 4;
            KC_TRY(memo_put(u, rd32(u->p - 4), top(u)));
            break;
        case OP_MEMOIZE: /* the next index is Python's len(memo) */
            KC_TRY(memo_put(u, u->memo_used, top(u)));
            break;
        case OP_BINGET:
            KC_TRY(need(u, 1));
            KC_TRY(memo_get(u, *u->p++));
            break;
        case OP_LONG_BINGET:
            KC_TRY(need(u, 4));
            u->p += 4;
            KC_TRY(memo_get(u, rd32(u->p - 4)));
            break;
        case OP_PUT: case OP_GET: {
            const uint8_t *s;
            size_t len;
            KC_TRY(read_line(u, &s, &len));
            char buf[32];
            if (len == 0 || len >= sizeof buf) return UFAIL(u, "bad PUT/GET index");
            memcpy(buf, s, len);
            buf[len] = 0;
            char *endp;
            unsigned long long idx = strtoull(buf, &endp, 10);
            if (*endp) return UFAIL(u, "bad PUT/GET index");
            KC_TRY(op == OP_PUT ? memo_put(u, idx, top(u)) : memo_get(u, idx));
            break;
        }
        case OP_INST: case OP_OBJ: return UFAIL(u, "refusing opcode %s (instantiates a class)", op == OP_INST ? "INST" : "OBJ");
        default: return UFAIL(u, "unsupported pickle opcode 0x%02x", op);
        }
    }
    return UFAIL(u, "truncated pickle (no STOP)");
}

int pth_open(pth_file *f, const char *path, const uint8_t *data, size_t size)
{
    memset(f, 0, sizeof *f);
    f->path = path;
    f->data = data;
    f->size = size;
    if (zip_read(f) < 0) goto fail;
    const pth_entry *pkl = NULL;
    for (int k = 0; k < f->n_entries; k++) {
        const char *nm = f->entries[k].name, *slash = strchr(nm, '/');
        if (slash && !strcmp(slash, "/data.pkl")) {
            pkl = &f->entries[k];
            f->prefix = kc_malloc((size_t)(slash - nm) + 1);
            memcpy(f->prefix, nm, (size_t)(slash - nm));
            f->prefix[slash - nm] = 0;
            break;
        }
    }
    if (!pkl) {
        int script = 0;
        for (int k = 0; k < f->n_entries; k++)
            if (strstr(f->entries[k].name, "constants.pkl")) script = 1;
        kc_fail(script ? "%s: a TorchScript archive, not a torch.save file (save the model's state_dict instead)"
                       : "%s: zip holds no <name>/data.pkl (not a torch.save file)", path);
        goto fail;
    }
    char *bo_name = kc_strfmt("%s/byteorder", f->prefix);
    const pth_entry *bo = find_entry(f, bo_name);
    free(bo_name);
    if (bo && !(bo->size >= 6 && !memcmp(data + bo->offset, "little", 6))) {
        kc_fail("%s: storages are not little-endian (byteorder entry)", path);
        goto fail;
    }
    unpickler u = {0};
    u.f = f;
    u.p = data + pkl->offset;
    u.end = u.p + pkl->size;
    u.max_memo = pkl->size + 1;
    f->mem_limit = 2 * (uint64_t)size + ((uint64_t)16 << 20); /* real pickles use a few hundred KB */
    int rc = run_pickle(&u, &f->root);
    free(u.stack);
    free(u.marks);
    free(u.memo);
    if (rc < 0) goto fail;
    return 0;
fail:
    pth_close(f);
    return -1;
}

void pth_close(pth_file *f)
{
    for (size_t k = 0; k < f->n_all; k++) {
        pk_value *v = f->all[k];
        free(v->items);
        free(v->s);
        free(v->shape);
        free(v->stride);
        free(v);
    }
    free(f->all);
    for (int k = 0; k < f->n_entries; k++) free(f->entries[k].name);
    free(f->entries);
    free(f->prefix);
    memset(f, 0, sizeof *f);
}

/* ---- tensors ---------------------------------------------------------------------------------- */

static float load_f32(const uint8_t *p, pk_dtype dt)
{
    if (dt == PK_F32) {
        float x;
        memcpy(&x, p, 4);
        return x;
    }
    uint16_t h;
    memcpy(&h, p, 2);
    return dt == PK_F16 ? kc_half_to_float(h) : kc_bf16_to_float(h);
}

int kc_strided_f32(const uint8_t *base, int64_t base_numel, pk_dtype dt, int64_t offset, int ndim,
                   const int64_t *shape, const int64_t *stride, float *out)
{
    if (dt != PK_F32 && dt != PK_F16 && dt != PK_BF16) return kc_fail("not a float32, float16 or bfloat16 tensor");
    int64_t numel = 1, last = offset;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0 || stride[d] < 0) return kc_fail("negative size or stride");
        if (__builtin_mul_overflow(numel, shape[d], &numel)) return kc_fail("element count overflows");
    }
    if (numel == 0) return 0;
    for (int d = 0; d < ndim; d++) {
        int64_t span;
        if (__builtin_mul_overflow(shape[d] - 1, stride[d], &span) || __builtin_add_overflow(last, span, &last))
            return kc_fail("view overflows");
    }
    if (offset < 0 || last >= base_numel)
        return kc_fail("view reaches element %lld of a storage of %lld", (long long)last, (long long)base_numel);
    if (numel > base_numel) return kc_fail("%lld elements from a storage of %lld (overlapping view)", (long long)numel, (long long)base_numel);
    int es = pk_dtype_size(dt);
    int64_t idx[8] = {0};
    if (ndim > 8) return kc_fail("%d dimensions (at most 8)", ndim);
    int64_t inner = ndim ? shape[ndim - 1] : 1, istride = ndim ? stride[ndim - 1] : 1;
    int64_t pos = offset, o = 0;
    for (;;) {
        const uint8_t *src = base + (size_t)pos * (size_t)es;
        if (dt == PK_F32 && istride == 1) {
            memcpy(out + o, src, (size_t)inner * 4);
        } else {
            for (int64_t k = 0; k < inner; k++) out[o + k] = load_f32(src + (size_t)(k * istride) * (size_t)es, dt);
        }
        o += inner;
        int d = ndim - 2;
        for (; d >= 0; d--) {
            if (++idx[d] < shape[d]) {
                pos += stride[d];
                break;
            }
            pos -= (idx[d] - 1) * stride[d];
            idx[d] = 0;
        }
        if (d < 0) break;
    }
    return 0;
}

int pth_tensor_f32(const pth_file *f, const pk_value *t, const char *name, float **out)
{
    if (t->type != PK_TENSOR) return kc_fail("%s: %s is a %s, not a tensor", f->path, name, type_name(t->type));
    if (t->ndim > 8) return kc_fail("%s: tensor %s has %d dimensions (at most 8)", f->path, name, t->ndim);
    int64_t numel = pk_numel(t);
    if (numel < 0) return kc_fail("%s: tensor %s: element count overflows", f->path, name);
    const pk_value *st = t->storage;
    if (st->dtype != PK_F32 && st->dtype != PK_F16 && st->dtype != PK_BF16)
        return kc_fail("%s: tensor %s is stored as %s, not float32, float16 or bfloat16", f->path, name, st->type_name);
    if (numel > st->numel) return kc_fail("%s: tensor %s: %lld elements from a storage of %lld (overlapping view)", f->path, name, (long long)numel, (long long)st->numel);
    float *x = kc_malloc((size_t)(numel ? numel : 1) * sizeof *x);
    if (kc_strided_f32(f->data + st->offset, st->numel, st->dtype, t->offset, t->ndim, t->shape, t->stride, x) < 0) {
        free(x);
        return kc_fail_prefix("%s: tensor %s", f->path, name);
    }
    *out = x;
    return 0;
}
