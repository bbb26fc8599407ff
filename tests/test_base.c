/* tests/test_base.c — sha256 against FIPS 180-4 test vectors, ini reader, error messages, the
 * allocator setting of the per-image stages. */
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "pipeline/ini.h"
#include "pipeline/kc.h"
#include "pipeline/sha256.h"
#include "tests/test.h"

#if defined(__SANITIZE_ADDRESS__)
#define KC_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KC_TEST_ASAN 1
#endif
#endif

#if defined(__GLIBC__) && !defined(KC_TEST_ASAN)
/* Page faults taken while allocating n bytes and writing every page of them (then freed). */
static long faults_fresh_block(size_t n)
{
    struct rusage a, b;
    getrusage(RUSAGE_SELF, &a);
    volatile uint8_t *p = malloc(n);
    for (size_t i = 0; i < n; i += 4096) p[i] = (uint8_t)i;
    getrusage(RUSAGE_SELF, &b);
    free((void *)p);
    return b.ru_minflt - a.ru_minflt;
}

/* kc_keep_freed_memory: the second 8 MiB block of a run reuses the first one's pages (without it,
 * glibc maps the block afresh or trims it away: about 2,048 faults each time). */
static void test_keep_freed_memory(void)
{
    kc_keep_freed_memory();
    const size_t n = (size_t)8 << 20;
    long first = faults_fresh_block(n), again = 0;
    for (int k = 0; k < 3; k++) again += faults_fresh_block(n);
    CHECK(first >= 1024, "an 8 MiB block written for the first time: %ld page faults (expected about 2048)", first);
    CHECK(again < 64, "8 MiB blocks allocated again after kc_keep_freed_memory: %ld page faults in 3 (expected none)",
          again);
}
#else
static void test_keep_freed_memory(void) { SKIP("kc_keep_freed_memory: glibc's allocator only (ASan has its own)"); }
#endif

int main(void)
{
    test_keep_freed_memory();
    char hex[65];
    kc_sha256_buf_hex("abc", 3, hex);
    CHECK(!strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"), "sha256(abc) %s", hex);
    kc_sha256_buf_hex("", 0, hex);
    CHECK(!strcmp(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"), "sha256('') %s", hex);
    const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    kc_sha256_buf_hex(m, strlen(m), hex);
    CHECK(!strcmp(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"), "sha256(448 bits) %s", hex);
    /* a million 'a', fed in odd-sized pieces */
    kc_sha256 c;
    kc_sha256_init(&c);
    char a[997];
    memset(a, 'a', sizeof a);
    size_t left = 1000000;
    while (left) {
        size_t k = left < sizeof a ? left : sizeof a;
        kc_sha256_update(&c, a, k);
        left -= k;
    }
    kc_sha256_hex(&c, hex);
    CHECK(!strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"), "sha256(1e6 a) %s", hex);

    ini_file f;
    int rc = ini_parse(&f, "t.ini", "top = 1\n# comment\n[grid]\ntau = 0.10, 0.15\n; c\nedges=bin wtd\n");
    CHECK(rc == 0, "ini parse: %s", kc_error());
    if (rc == 0) {
        CHECK(ini_get(&f, "", "top") && !strcmp(ini_get(&f, "", "top"), "1"), "top key");
        char **items;
        int n = ini_split_list(ini_get(&f, "grid", "tau"), &items);
        CHECK(n == 2 && !strcmp(items[1], "0.15"), "list split n=%d", n);
        for (int i = 0; i < n; i++) free(items[i]);
        free(items);
        n = ini_split_list(ini_get(&f, "grid", "edges"), &items);
        CHECK(n == 2 && !strcmp(items[0], "bin"), "space list n=%d", n);
        for (int i = 0; i < n; i++) free(items[i]);
        free(items);
        CHECK(ini_get(&f, "grid", "nope") == NULL, "absent key");
        ini_free(&f);
    }
    rc = ini_parse(&f, "bad.ini", "[a]\nx=1\nx=2\n");
    CHECK(rc < 0 && strstr(kc_error(), "bad.ini:3") && strstr(kc_error(), "duplicate"), "dup key: %s", kc_error());
    rc = ini_parse(&f, "bad.ini", "[a\n");
    CHECK(rc < 0 && strstr(kc_error(), "bad.ini:1"), "bad section: %s", kc_error());
    kc_fail("inner %d", 3);
    kc_fail_prefix("%s", "outer");
    CHECK(!strcmp(kc_error(), "outer: inner 3"), "prefix: %s", kc_error());
    return test_done();
}
