/* eval/html.c — see html.h. */
#include "eval/html.h"

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
