#!/usr/bin/env bash
# How long the server's C calls that compresslab cannot split run on one 1 GB value: the bound
# on cancel for server_lz4_compress, server_lz4_decompress, server_pglz_compress and
# server_pglz_decompress (and bench of server_lz4 / server_pglz on a whole value), which call
# LZ4_compress_default, LZ4_decompress_safe, pglz_compress and pglz_decompress once per value
# (RELIABILITY.md, promise 4). Builds a small C program against the system's liblz4 (the one
# PostgreSQL links) and PostgreSQL 15's libpgcommon.a, runs each call once on SIZE bytes of
# English-like text (default 1,000,000,000), and prints CPU and wall seconds per call (CPU is
# what a loaded machine stretches, wall what it was this time), and of zeroing a fresh result
# of that size first (ResultBytea::zeroed, palloc0), uninterruptible too.
#
#   scripts/bench/c_call_bounds.sh [SIZE]
set -euo pipefail
size=${1:-1000000000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/bounds.c" <<'C'
#define _DEFAULT_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int LZ4_compressBound(int inputSize);
int LZ4_compress_default(const char *src, char *dst, int srcSize, int dstCapacity);
int LZ4_decompress_safe(const char *src, char *dst, int compressedSize, int dstCapacity);
typedef struct { int32_t min_input_size, max_input_size, min_comp_rate, first_success_by, match_size_good, match_size_drop; } PGLZ_Strategy;
extern const PGLZ_Strategy *const PGLZ_strategy_default;
int32_t pglz_compress(const char *source, int32_t slen, char *dest, const PGLZ_Strategy *strategy);
int32_t pglz_decompress(const char *source, int32_t slen, char *dest, int32_t rawsize, bool check_complete);

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

int main(int argc, char **argv) {
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
C
cc -O2 -o "$dir/bounds" "$dir/bounds.c" /usr/lib/x86_64-linux-gnu/liblz4.so.1 /usr/lib/postgresql/15/lib/libpgcommon.a
echo "c_call_bounds: one call each on $size bytes of text ($(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg))"
"$dir/bounds" "$size"
