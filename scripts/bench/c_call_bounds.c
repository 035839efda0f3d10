/* scripts/bench/c_call_bounds.sh's program: c_call_bounds SIZE times one call each of liblz4's
 * and PostgreSQL's compression and decompression on SIZE bytes of English-like text;
 * c_call_bounds --pglz-shapes SIZE times pglz_compress on SIZE bytes of each shape of data
 * under each strategy, for its worst CPU time per byte. */
#define _DEFAULT_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pg_c_symbols.h"

static double now(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}
#define TIME(label, call) do { \
    double c0 = now(CLOCK_PROCESS_CPUTIME_ID), w0 = now(CLOCK_MONOTONIC); \
    long r = (call); \
    printf("%-22s %12ld bytes  cpu %6.2f s  wall %6.2f s\n", label, r, \
           now(CLOCK_PROCESS_CPUTIME_ID) - c0, now(CLOCK_MONOTONIC) - w0); \
    fflush(stdout); \
    if (r < 0) return 1; \
    out_len = r; \
} while (0)

/* pglz_compress's CPU time per byte over shapes of data and strategies: the history chains
 * it walks are long where many positions share a hash, and a strategy that never lowers its
 * good match length (match_size_drop=0) walks them whole. */
static int pglz_shapes(long n, const char *text) {
    static const PGLZ_Strategy always = {0, INT32_MAX, 0, INT32_MAX, 128, 6};
    static const PGLZ_Strategy walk_all = {0, INT32_MAX, 0, INT32_MAX, 273, 0};
    const PGLZ_Strategy *strategies[] = {PGLZ_strategy_default, &always, &walk_all};
    const char *strategy_names[] = {"default", "always", "good=273,drop=0"};
    const char *shape_names[] = {"text", "random bytes", "zeros", "random over 2 bytes",
        "random over 0x00/0x80", "random over 4 bytes", "period 3"};
    char *src = malloc(n), *dst = malloc(n + 4);
    if (!src || !dst) return 1;
    memset(dst, 0, n + 4);
    for (size_t shape = 0; shape < sizeof shape_names / sizeof *shape_names; shape++) {
        uint64_t x = 88172645463325252ull;
        for (long i = 0; i < n; i++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            switch (shape) {
            case 0: src[i] = text[i]; break;
            case 1: src[i] = (char)(x >> 24); break;
            case 2: src[i] = 0; break;
            case 3: src[i] = (x >> 29) & 1 ? 'a' : 'b'; break;
            case 4: src[i] = (char)((x >> 29) & 1 ? 0x80 : 0); break;
            case 5: src[i] = "acgt"[(x >> 29) & 3]; break;
            default: src[i] = "abc"[i % 3]; break;
            }
        }
        for (size_t s = 0; s < sizeof strategies / sizeof *strategies; s++) {
            double c0 = now(CLOCK_PROCESS_CPUTIME_ID), w0 = now(CLOCK_MONOTONIC);
            long r = pglz_compress(src, n, dst, strategies[s]);
            double cpu = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
            printf("pglz_compress %-22s %-16s %11ld bytes  cpu %6.3f s (%6.1f ns/byte)  wall %6.3f s\n",
                   shape_names[shape], strategy_names[s], r, cpu, cpu * 1e9 / n, now(CLOCK_MONOTONIC) - w0);
            fflush(stdout);
        }
    }
    return 0;
}

int main(int argc, char **argv) {
    int shapes = argc == 3 && strcmp(argv[1], "--pglz-shapes") == 0;
    if (shapes) {
        argv++;
        argc--;
    }
    if (argc != 2 || atol(argv[1]) <= 0) {
        fprintf(stderr, "usage: c_call_bounds [--pglz-shapes] SIZE (bytes, more than 0)\n");
        return 2;
    }
    long n = atol(argv[1]), out_len = 0;
    static const char *words[] = {"the", "of", "and", "to", "in", "a", "is", "that", "for", "it", "as", "was",
        "with", "be", "by", "on", "not", "he", "this", "are", "or", "his", "from", "at", "which", "but", "have",
        "an", "had", "they", "you", "were", "their", "one", "all", "we", "can", "her", "has", "there", "been",
        "compression", "database", "value", "page", "record", "server", "backend", "memory", "cancel"};
    char *src = malloc(n), *packed = malloc(LZ4_compressBound(n) + 16), *back = malloc(n);
    if (!src || !packed || !back) return 1;
    uint64_t x = 88172645463325252ull;
    for (long i = 0; i < n;) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        const char *w = words[x % (sizeof words / sizeof *words)];
        for (const char *p = w; *p && i < n; p++) src[i++] = *p;
        if (i < n) src[i++] = (x >> 32) % 11 == 0 ? '\n' : ' ';
    }
    if (shapes) return pglz_shapes(n, src);
    // The calls write into memory touched before (as palloc0 does for a result); zeroing a
    // fresh buffer of the value's size, which the server_* functions do first, is timed alone.
    memset(packed, 0, LZ4_compressBound(n) + 16);
    memset(back, 0, n);
    char *fresh = malloc(n);
    if (!fresh) return 1;
    TIME("zeroing a fresh result", (explicit_bzero(fresh, n), n));
    free(fresh);
    TIME("LZ4_compress_default", LZ4_compress_default(src, packed, n, LZ4_compressBound(n)));
    TIME("LZ4_decompress_safe", LZ4_decompress_safe(packed, back, out_len, n));
    TIME("pglz_compress", pglz_compress(src, n, packed, PGLZ_strategy_default));
    TIME("pglz_decompress", pglz_decompress(packed, out_len, back, n, true));
    return memcmp(src, back, n) != 0;
}
