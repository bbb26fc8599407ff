/* eval/report/html.c — see html.h. */
#include "eval/report/html.h"

#include <stdlib.h>
#include <string.h>

#include "pipeline/sha256.h"

void html_escape(kc_buf *b, const char *s)
{
    kc_buf_printf(b, "%s", "");
    if (!s) return;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '&': kc_buf_printf(b, "&amp;"); break;
        case '<': kc_buf_printf(b, "&lt;"); break;
        case '>': kc_buf_printf(b, "&gt;"); break;
        case '"': kc_buf_printf(b, "&quot;"); break;
        case '\'': kc_buf_printf(b, "&#39;"); break;
        default:
            if (*p < 0x20 && *p != '\t' && *p != '\n') kc_buf_printf(b, "\xef\xbf\xbd");
            else kc_buf_printf(b, "%c", *p);
        }
    }
}

char *html_escaped(const char *s)
{
    kc_buf b = {0};
    html_escape(&b, s);
    return b.s;
}

/* The code point of the UTF-8 sequence at p (its length into *len), -1 when there is none. */
static long utf8_next(const unsigned char *p, int *len)
{
    int n = p[0] < 0x80 ? 1 : (p[0] & 0xE0) == 0xC0 ? 2 : (p[0] & 0xF0) == 0xE0 ? 3 : (p[0] & 0xF8) == 0xF0 ? 4 : 0;
    *len = 1;
    if (!n) return -1;
    long c = n == 1 ? p[0] : p[0] & (0x7F >> n);
    for (int k = 1; k < n; k++) {
        if ((p[k] & 0xC0) != 0x80) return -1;
        c = c << 6 | (p[k] & 0x3F);
    }
    static const long least[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (c < least[n] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return -1;
    *len = n;
    return c;
}

void html_js_string(kc_buf *b, const char *s)
{
    kc_buf_printf(b, "\"");
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
        int len;
        long c = utf8_next(p, &len);
        p += len;
        if (c < 0) c = 0xFFFD;
        if (c >= 0x20 && c < 0x7F && !strchr("\"\\'<>&", (int)c)) kc_buf_printf(b, "%c", (int)c);
        else if (c < 0x10000) kc_buf_printf(b, "\\u%04lx", c);
        else kc_buf_printf(b, "\\u%04lx\\u%04lx", 0xD800 + ((c - 0x10000) >> 10), 0xDC00 + ((c - 0x10000) & 0x3FF));
    }
    kc_buf_printf(b, "\"");
}

char *html_safe_name(const char *s)
{
    size_t n = strlen(s);
    char *out = kc_malloc(n + 12);
    int changed = n == 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                   c == '_' || c == '-';
        if (i == 0 && c == '.') keep = 0;
        out[i] = keep ? c : '_';
        changed |= !keep;
    }
    out[n] = 0;
    if (changed) {
        char hex[65];
        kc_sha256_buf_hex(s, n, hex);
        out[n] = '~';
        memcpy(out + n + 1, hex, 10);
        out[n + 11] = 0;
    }
    return out;
}
