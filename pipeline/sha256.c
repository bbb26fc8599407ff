/* pipeline/sha256.c — hex digests of buffers and files, over nettle's SHA-256. */
#include "pipeline/sha256.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "pipeline/kc.h"

static void to_hex(const uint8_t d[32], char hex[65])
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        hex[2 * i] = digits[d[i] >> 4];
        hex[2 * i + 1] = digits[d[i] & 15];
    }
    hex[64] = '\0';
}

void kc_sha256_hex(kc_sha256 *c, char hex[65])
{
    uint8_t d[32];
    kc_sha256_final(c, d);
    to_hex(d, hex);
}

void kc_sha256_buf_hex(const void *data, size_t n, char hex[65])
{
    kc_sha256 c;
    kc_sha256_init(&c);
    kc_sha256_update(&c, data, n);
    kc_sha256_hex(&c, hex);
}

int kc_sha256_file(const char *path, char hex[65])
{
    uint8_t d[32];
    KC_TRY(kc_sha256_file_raw(path, d));
    to_hex(d, hex);
    return 0;
}

int kc_sha256_file_raw(const char *path, uint8_t out[32])
{
    FILE *f = fopen(path, "rb");
    if (!f) return kc_fail("%s: cannot open (%s)", path, strerror(errno));
    kc_sha256 c;
    kc_sha256_init(&c);
    static _Thread_local uint8_t buf[1 << 16];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) kc_sha256_update(&c, buf, n);
    int err = ferror(f);
    fclose(f);
    if (err) return kc_fail("%s: read error", path);
    kc_sha256_final(&c, out);
    return 0;
}
