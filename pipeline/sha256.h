/* pipeline/sha256.h — SHA-256 (FIPS 180-4), for weights, splits, caches and the ledger.
 *
 *     sha256_ctx c; sha256_init(&c); sha256_update(&c, buf, n); sha256_hex(&c, hex);
 *     sha256_file("w.pth", hex);     // hex: 65 chars, lowercase, NUL-terminated
 */
#ifndef KC_SHA256_H
#define KC_SHA256_H
#include <stddef.h>
#include <stdint.h>
typedef struct sha256_ctx {
    uint32_t h[8];
    uint64_t len;
    uint8_t buf[64];
    size_t fill;
} sha256_ctx;
void sha256_init(sha256_ctx *c);
void sha256_update(sha256_ctx *c, const void *data, size_t n);
void sha256_final(sha256_ctx *c, uint8_t out[32]);
void sha256_hex(sha256_ctx *c, char hex[65]);
void sha256_buf_hex(const void *data, size_t n, char hex[65]);
int sha256_file(const char *path, char hex[65]);
/* The same digest as 32 bytes. */
int sha256_file_raw(const char *path, uint8_t out[32]);
#endif
