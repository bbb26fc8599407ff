/* pipeline/sha256.h — SHA-256 for weights, splits, caches and the ledger: nettle's streaming hash
 * (nettle-dev, <nettle/sha2.h>) behind byte-pointer helpers and the lowercase hex keycut records.
 *
 *     kc_sha256 c; kc_sha256_init(&c); kc_sha256_update(&c, buf, n); kc_sha256_hex(&c, hex);
 *     kc_sha256_file("w.pth", hex);     // hex: 65 chars, lowercase, NUL-terminated
 */
#ifndef KC_SHA256_H
#define KC_SHA256_H
#include <stddef.h>
#include <stdint.h>

#include <nettle/sha2.h>

typedef struct sha256_ctx kc_sha256;   // nettle's context, on the caller's stack

static inline void kc_sha256_init(kc_sha256 *c) { sha256_init(c); }
static inline void kc_sha256_update(kc_sha256 *c, const void *data, size_t n)
{
    if (n) sha256_update(c, n, (const uint8_t *)data);
}
/* The digest as 32 bytes; the context starts over (nettle resets it). */
static inline void kc_sha256_final(kc_sha256 *c, uint8_t out[32]) { sha256_digest(c, SHA256_DIGEST_SIZE, out); }
void kc_sha256_hex(kc_sha256 *c, char hex[65]);
void kc_sha256_buf_hex(const void *data, size_t n, char hex[65]);
int kc_sha256_file(const char *path, char hex[65]);
/* The same digest as 32 bytes. */
int kc_sha256_file_raw(const char *path, uint8_t out[32]);
#endif
