/* pipeline/json.c — the JSON tree of json.h built from yajl's event parser (Debian libyajl-dev).
 *
 * yajl does the lexing and validation (RFC 8259 grammar, UTF-8 in strings, no comments, no
 * trailing garbage, no partial values); this file only turns its events into json_value nodes.
 * Numbers arrive as their literal text (the yajl_number callback), so integers keep their exact
 * int64 value.  The stack of open containers holds pointers into their parents' item arrays; a
 * parent's array grows only after the child is closed, so the pointers stay valid.  Nesting deeper
 * than JSON_MAX_DEPTH cancels the parse.  One yajl behaviour differs from the strictest reading of
 * the RFC: an unpaired UTF-16 surrogate escape (\ud800 alone) decodes to '?' instead of failing. */
#include "pipeline/json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "pipeline/kc.h"

typedef struct jbuild {
    json_value *root;
    int root_set;
    json_value *stack[JSON_MAX_DEPTH + 1]; /* open containers, innermost last */
    int depth;
    const char *problem; /* set when a callback cancels the parse */
} jbuild;

/* The node the next value goes into (zeroed), or NULL after setting b->problem. */
static json_value *slot(jbuild *b)
{
    if (b->depth == 0) {
        if (b->root_set) {
            b->problem = "trailing characters after the value";
            return NULL;
        }
        b->root_set = 1;
        return b->root;
    }
    json_value *c = b->stack[b->depth - 1];
    if (c->type == JSON_OBJECT) return &c->items[c->n - 1]; /* the member opened by its key */
    if ((c->n & (c->n - 1)) == 0) { /* capacity is the next power of two: grow at 0, 1, 2, 4, ... */
        size_t cap = c->n ? 2 * (size_t)c->n : 1;
        c->items = kc_realloc(c->items, cap * sizeof *c->items);
    }
    json_value *v = &c->items[c->n++];
    memset(v, 0, sizeof *v);
    return v;
}

static int on_null(void *ctx)
{
    json_value *v = slot(ctx);
    if (!v) return 0;
    v->type = JSON_NULL;
    return 1;
}

static int on_boolean(void *ctx, int value)
{
    json_value *v = slot(ctx);
    if (!v) return 0;
    v->type = JSON_BOOL;
    v->boolean = value != 0;
    return 1;
}

static int on_number(void *ctx, const char *s, size_t len)
{
    json_value *v = slot(ctx);
    if (!v) return 0;
    char buf[512];
    char *tmp = len < sizeof buf ? buf : kc_malloc(len + 1);
    memcpy(tmp, s, len);
    tmp[len] = 0;
    v->type = JSON_NUMBER;
    v->number = strtod(tmp, NULL);
    if (!memchr(s, '.', len) && !memchr(s, 'e', len) && !memchr(s, 'E', len)) {
        errno = 0;
        long long ll = strtoll(tmp, NULL, 10);
        if (errno == 0) {
            v->is_int = 1;
            v->integer = (int64_t)ll;
        }
    }
    if (tmp != buf) free(tmp);
    return 1;
}

static char *copy_string(const unsigned char *s, size_t len)
{
    char *o = kc_malloc(len + 1);
    memcpy(o, s, len);
    o[len] = 0;
    return o;
}

static int on_string(void *ctx, const unsigned char *s, size_t len)
{
    json_value *v = slot(ctx);
    if (!v) return 0;
    v->type = JSON_STRING;
    v->string = copy_string(s, len);
    v->len = len;
    return 1;
}

static int open_container(jbuild *b, json_type type)
{
    if (b->depth >= JSON_MAX_DEPTH) {
        b->problem = "nesting too deep";
        return 0;
    }
    json_value *v = slot(b);
    if (!v) return 0;
    v->type = type;
    b->stack[b->depth++] = v;
    return 1;
}

static int on_start_map(void *ctx) { return open_container(ctx, JSON_OBJECT); }
static int on_start_array(void *ctx) { return open_container(ctx, JSON_ARRAY); }

static int on_end(void *ctx)
{
    jbuild *b = ctx;
    b->depth--;
    return 1;
}

static int on_map_key(void *ctx, const unsigned char *s, size_t len)
{
    jbuild *b = ctx;
    json_value *c = b->stack[b->depth - 1];
    if ((c->n & (c->n - 1)) == 0) {
        size_t cap = c->n ? 2 * (size_t)c->n : 1;
        c->items = kc_realloc(c->items, cap * sizeof *c->items);
        c->keys = kc_realloc(c->keys, cap * sizeof *c->keys);
    }
    memset(&c->items[c->n], 0, sizeof *c->items);
    c->keys[c->n++] = copy_string(s, len); /* the zeroed member is freed safely if the parse stops */
    return 1;
}

static const yajl_callbacks callbacks = {
    on_null, on_boolean, NULL, NULL, on_number, on_string, on_start_map, on_map_key, on_end, on_start_array, on_end,
};

/* yajl's message without its "parse error: " / "lexical error: " prefix and trailing newline. */
static void yajl_problem(yajl_handle h, char *out, size_t n)
{
    unsigned char *msg = yajl_get_error(h, 0, NULL, 0);
    const char *m = msg ? (const char *)msg : "unknown error";
    const char *colon = strstr(m, "error: ");
    if (colon) m = colon + 7;
    snprintf(out, n, "%s", m);
    size_t l = strlen(out);
    while (l > 0 && (out[l - 1] == '\n' || out[l - 1] == ' ' || out[l - 1] == '.')) out[--l] = 0;
    if (msg) yajl_free_error(h, msg);
}

int json_parse(json_value *root, const char *text, size_t len, const char *what)
{
    if (!what) what = "JSON";
    memset(root, 0, sizeof *root);
    jbuild b = {.root = root};
    yajl_handle h = yajl_alloc(&callbacks, NULL, &b);
    if (!h) return kc_fail("%s: out of memory for the JSON parser", what);
    yajl_status st = yajl_parse(h, (const unsigned char *)text, len);
    size_t pos = yajl_get_bytes_consumed(h);
    if (st == yajl_status_ok) {
        st = yajl_complete_parse(h);
        pos = len;
    }
    int rc = 0;
    if (st != yajl_status_ok) {
        char problem[256];
        if (b.problem) snprintf(problem, sizeof problem, "%s", b.problem);
        else yajl_problem(h, problem, sizeof problem);
        rc = kc_fail("%s: bad JSON: %s at byte %zu", what, problem, pos);
        json_free(root);
    }
    yajl_free(h);
    return rc;
}

void json_free(json_value *v)
{
    if (!v) return;
    if (v->type == JSON_ARRAY || v->type == JSON_OBJECT) {
        for (int i = 0; i < v->n; i++) {
            json_free(&v->items[i]);
            if (v->keys) free(v->keys[i]);
        }
        free(v->items);
        free(v->keys);
    } else if (v->type == JSON_STRING) {
        free(v->string);
    }
    memset(v, 0, sizeof *v);
}

const json_value *json_get(const json_value *v, const char *key)
{
    if (!v || v->type != JSON_OBJECT) return NULL;
    for (int i = 0; i < v->n; i++)
        if (!strcmp(v->keys[i], key)) return &v->items[i];
    return NULL;
}

int json_count(const json_value *v)
{
    return v && (v->type == JSON_ARRAY || v->type == JSON_OBJECT) ? v->n : 0;
}

const json_value *json_item(const json_value *v, int i)
{
    return i >= 0 && i < json_count(v) ? &v->items[i] : NULL;
}

const char *json_key(const json_value *v, int i)
{
    return v && v->type == JSON_OBJECT && i >= 0 && i < v->n ? v->keys[i] : NULL;
}

const char *json_string(const json_value *v)
{
    return v && v->type == JSON_STRING ? v->string : NULL;
}

int json_get_number(const json_value *v, double *out)
{
    if (!v || v->type != JSON_NUMBER) return -1;
    *out = v->number;
    return 0;
}

int json_get_int(const json_value *v, int64_t *out)
{
    if (!v || v->type != JSON_NUMBER || !v->is_int) return -1;
    *out = v->integer;
    return 0;
}
