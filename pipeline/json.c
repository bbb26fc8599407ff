/* pipeline/json.c — strict recursive-descent JSON parser (see json.h). */
#include "pipeline/json.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/kc.h"

typedef struct jparser {
    const char *s;
    size_t len, pos;
    const char *what;
} jparser;

static int jfail(jparser *p, const char *problem)
{
    return kc_fail("%s: bad JSON: %s at byte %zu", p->what, problem, p->pos);
}

static void skip_ws(jparser *p)
{
    while (p->pos < p->len) {
        char c = p->s[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
        p->pos++;
    }
}

static int hex4(jparser *p, unsigned *out)
{
    if (p->len - p->pos < 4) return jfail(p, "truncated \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p->s[p->pos + i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else return jfail(p, "bad \\u escape");
    }
    p->pos += 4;
    *out = v;
    return 0;
}

static size_t put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* At the opening quote.  The decoded string is never longer than its escaped form. */
static int parse_string(jparser *p, char **out, size_t *out_len)
{
    size_t start = ++p->pos, end = start;
    while (end < p->len && p->s[end] != '"') end += (p->s[end] == '\\') ? 2 : 1;
    if (end >= p->len) return jfail(p, "unterminated string");
    char *o = kc_malloc(end - start + 1);
    size_t n = 0;
    while (p->pos < end) {
        unsigned char c = (unsigned char)p->s[p->pos];
        if (c < 0x20) {
            free(o);
            return jfail(p, "control character in string");
        }
        if (c != '\\') {
            o[n++] = (char)c;
            p->pos++;
            continue;
        }
        char e = p->s[p->pos + 1];
        p->pos += 2;
        switch (e) {
        case '"': o[n++] = '"'; break;
        case '\\': o[n++] = '\\'; break;
        case '/': o[n++] = '/'; break;
        case 'b': o[n++] = '\b'; break;
        case 'f': o[n++] = '\f'; break;
        case 'n': o[n++] = '\n'; break;
        case 'r': o[n++] = '\r'; break;
        case 't': o[n++] = '\t'; break;
        case 'u': {
            unsigned cp, lo;
            if (hex4(p, &cp) < 0) {
                free(o);
                return -1;
            }
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                if (p->len - p->pos < 6 || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u') {
                    free(o);
                    return jfail(p, "unpaired surrogate");
                }
                p->pos += 2;
                if (hex4(p, &lo) < 0) {
                    free(o);
                    return -1;
                }
                if (lo < 0xDC00 || lo > 0xDFFF) {
                    free(o);
                    return jfail(p, "unpaired surrogate");
                }
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                free(o);
                return jfail(p, "unpaired surrogate");
            }
            n += put_utf8(o + n, cp); /* \uXXXX is 6 bytes, its UTF-8 at most 4 */
            break;
        }
        default:
            free(o);
            return jfail(p, "bad escape in string");
        }
    }
    if (p->pos != end) { /* a trailing backslash escaped the closing quote */
        free(o);
        return jfail(p, "unterminated string");
    }
    p->pos = end + 1;
    o[n] = 0;
    *out = o;
    *out_len = n;
    return 0;
}

static int parse_number(jparser *p, json_value *v)
{
    size_t i = p->pos;
    const char *s = p->s;
    int integer = 1;
    if (i < p->len && s[i] == '-') i++;
    if (i >= p->len || !(s[i] >= '0' && s[i] <= '9')) return jfail(p, "bad number");
    if (s[i] == '0') i++;
    else
        while (i < p->len && s[i] >= '0' && s[i] <= '9') i++;
    if (i < p->len && s[i] == '.') {
        integer = 0;
        i++;
        if (i >= p->len || !(s[i] >= '0' && s[i] <= '9')) return jfail(p, "bad number");
        while (i < p->len && s[i] >= '0' && s[i] <= '9') i++;
    }
    if (i < p->len && (s[i] == 'e' || s[i] == 'E')) {
        integer = 0;
        i++;
        if (i < p->len && (s[i] == '+' || s[i] == '-')) i++;
        if (i >= p->len || !(s[i] >= '0' && s[i] <= '9')) return jfail(p, "bad number");
        while (i < p->len && s[i] >= '0' && s[i] <= '9') i++;
    }
    size_t n = i - p->pos;
    char buf[512];
    char *tmp = n < sizeof buf ? buf : kc_malloc(n + 1);
    memcpy(tmp, s + p->pos, n);
    tmp[n] = 0;
    v->type = JSON_NUMBER;
    v->number = strtod(tmp, NULL);
    if (integer) {
        errno = 0;
        long long ll = strtoll(tmp, NULL, 10);
        if (errno == 0) {
            v->is_int = 1;
            v->integer = (int64_t)ll;
        }
    }
    if (tmp != buf) free(tmp);
    p->pos = i;
    return 0;
}

static int parse_value(jparser *p, json_value *v, int depth);

static int parse_container(jparser *p, json_value *v, int depth, int object)
{
    char close = object ? '}' : ']';
    int cap = 0;
    v->type = object ? JSON_OBJECT : JSON_ARRAY;
    p->pos++;
    skip_ws(p);
    if (p->pos < p->len && p->s[p->pos] == close) {
        p->pos++;
        return 0;
    }
    for (;;) {
        if (v->n == cap) {
            cap = cap ? 2 * cap : 4;
            v->items = kc_realloc(v->items, (size_t)cap * sizeof *v->items);
            if (object) v->keys = kc_realloc(v->keys, (size_t)cap * sizeof *v->keys);
        }
        json_value *item = &v->items[v->n];
        memset(item, 0, sizeof *item);
        skip_ws(p);
        if (object) {
            size_t klen;
            if (p->pos >= p->len || p->s[p->pos] != '"') return jfail(p, "expected a member name");
            if (parse_string(p, &v->keys[v->n], &klen) < 0) return -1;
            v->n++; /* owns the key from here; the item is zeroed, so freeing is safe */
            skip_ws(p);
            if (p->pos >= p->len || p->s[p->pos] != ':') return jfail(p, "expected ':'");
            p->pos++;
        } else {
            v->n++;
        }
        if (parse_value(p, item, depth + 1) < 0) return -1;
        skip_ws(p);
        if (p->pos >= p->len) return jfail(p, object ? "unterminated object" : "unterminated array");
        if (p->s[p->pos] == ',') {
            p->pos++;
            continue;
        }
        if (p->s[p->pos] == close) {
            p->pos++;
            return 0;
        }
        return jfail(p, object ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static int literal(jparser *p, const char *word)
{
    size_t n = strlen(word);
    if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n) != 0) return jfail(p, "unexpected character");
    p->pos += n;
    return 0;
}

static int parse_value(jparser *p, json_value *v, int depth)
{
    if (depth > JSON_MAX_DEPTH) return jfail(p, "nesting too deep");
    skip_ws(p);
    if (p->pos >= p->len) return jfail(p, "unexpected end");
    switch (p->s[p->pos]) {
    case '{': return parse_container(p, v, depth, 1);
    case '[': return parse_container(p, v, depth, 0);
    case '"':
        v->type = JSON_STRING;
        return parse_string(p, &v->string, &v->len);
    case 't':
        v->type = JSON_BOOL;
        v->boolean = 1;
        return literal(p, "true");
    case 'f':
        v->type = JSON_BOOL;
        return literal(p, "false");
    case 'n':
        v->type = JSON_NULL;
        return literal(p, "null");
    default: return parse_number(p, v);
    }
}

int json_parse(json_value *root, const char *text, size_t len, const char *what)
{
    jparser p = {text, len, 0, what ? what : "JSON"};
    memset(root, 0, sizeof *root);
    if (parse_value(&p, root, 0) < 0) {
        json_free(root);
        return -1;
    }
    skip_ws(&p);
    if (p.pos != len) {
        json_free(root);
        return jfail(&p, "trailing characters after the value");
    }
    return 0;
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
