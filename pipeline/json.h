/* pipeline/json.h — JSON (RFC 8259) parsed into a tree, by yajl (see json.c).  (Owner: weights module.)
 *
 * Used for safetensors headers and Hugging Face config.json; usable by any module.  The whole text
 * is parsed (by yajl: Debian libyajl-dev) into a tree of json_value nodes owned by the root; strings
 * must be valid UTF-8, are decoded (escapes and \uXXXX surrogate pairs included; an unpaired
 * surrogate becomes '?', yajl's rule) and NUL-terminated.  Numbers keep their double
 * value and, when the literal is an integer that fits, its exact int64 value (safetensors offsets
 * may exceed 2^53).  Nesting is limited to JSON_MAX_DEPTH; anything after the value other than
 * white space is an error.  Errors name the source ("what") and the byte offset.
 *
 *     json_value root;
 *     if (json_parse(&root, text, len, "config.json") < 0) return -1;   // kc_error() says why
 *     double eps;
 *     if (json_get_number(json_get(&root, "layer_norm_eps"), &eps) == 0) ...
 *     for (int i = 0; i < json_count(arr); i++) { const json_value *v = json_item(arr, i); ... }
 *     json_free(&root);
 */
#ifndef KC_JSON_H
#define KC_JSON_H
#include <stddef.h>
#include <stdint.h>

#define JSON_MAX_DEPTH 256

typedef enum json_type { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT } json_type;

typedef struct json_value {
    json_type type;
    int boolean;               /* JSON_BOOL */
    double number;             /* JSON_NUMBER */
    int is_int;                /* JSON_NUMBER: literal is an integer that fits int64 */
    int64_t integer;           /* JSON_NUMBER with is_int */
    char *string;              /* JSON_STRING (NUL-terminated UTF-8) */
    size_t len;                /* JSON_STRING: bytes, without the NUL (may contain \u0000) */
    int n;                     /* JSON_ARRAY / JSON_OBJECT: number of items / members */
    struct json_value *items;  /* (n) items, or member values */
    char **keys;               /* JSON_OBJECT: (n) member names, in file order */
} json_value;

/* Parses text[0..len) into root.  Returns 0, or -1 with "<what>: <problem> at byte N". */
int json_parse(json_value *root, const char *text, size_t len, const char *what);
/* Frees everything below root (root itself is the caller's). */
void json_free(json_value *root);

/* Member of an object by name (the first when repeated); NULL when v is NULL, not an object, or
 * has no such member. */
const json_value *json_get(const json_value *v, const char *key);
/* Number of items of an array or members of an object; 0 otherwise. */
int json_count(const json_value *v);
/* Item i of an array or value of member i of an object; NULL when out of range. */
const json_value *json_item(const json_value *v, int i);
/* Name of member i of an object; NULL when out of range. */
const char *json_key(const json_value *v, int i);
/* String of a JSON string value; NULL otherwise. */
const char *json_string(const json_value *v);
/* 0 and *out on a number; -1 otherwise (no message recorded). */
int json_get_number(const json_value *v, double *out);
/* 0 and *out on an integer literal that fits int64; -1 otherwise (no message recorded). */
int json_get_int(const json_value *v, int64_t *out);
#endif
