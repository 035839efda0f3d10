/* scripts/bench/against_c.sh's C side, built by it as target/against_c/pgc.
 * pgc OP PAYLOAD SLICE PASSES: OP is exact, decompress (pglz), lz4_compress, lz4_decompress or
 * crc; PASSES passes over PAYLOAD's SLICE-byte slices, silently, or with PASS_CLOCK set, timed
 * after a warm-up pass: best and median ns per byte (as synthetic::each_pass in the examples);
 * with PASS_BYTES set, the bytes a pass counts (a decompression's: its accepted slices'). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pg_c_symbols.h"

static const char *op;
static char *data, *out, *raw;
static long size, slice, nslices;
static char **blocks;
static int *blen, *rlen;
static volatile uint32_t sink;

enum { EXACT, DECOMPRESS, LZ4_COMPRESS, LZ4_DECOMPRESS, CRC } kind;

/* One loop per operation, chosen once: no test of the operation inside the loop. */
static void pass(void) {
    switch (kind) {
    case EXACT:
        for (long i = 0; i < nslices; i++) sink += pglz_compress(data + i * slice, rlen[i], out, PGLZ_strategy_default);
        break;
    case LZ4_COMPRESS:
        for (long i = 0; i < nslices; i++) sink += LZ4_compress_default(data + i * slice, out, rlen[i], 2 * slice + 64);
        break;
    case CRC:
        for (long i = 0; i < nslices; i++) sink ^= pg_comp_crc32c(0xFFFFFFFF, data + i * slice, rlen[i]) ^ 0xFFFFFFFF;
        break;
    case DECOMPRESS:
        for (long i = 0; i < nslices; i++)
            if (blen[i] >= 0) sink += pglz_decompress(blocks[i], blen[i], raw, rlen[i], true);
        break;
    case LZ4_DECOMPRESS:
        for (long i = 0; i < nslices; i++)
            if (blen[i] >= 0) sink += LZ4_decompress_safe(blocks[i], raw, blen[i], rlen[i]);
        break;
    }
}

static double cpu(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc != 5) { fprintf(stderr, "usage: pgc OP PAYLOAD SLICE PASSES\n"); return 2; }
    op = argv[1];
    slice = atol(argv[3]);
    long passes = atol(argv[4]);
    FILE *f = fopen(argv[2], "rb");
    if (!f) { perror(argv[2]); return 2; }
    fseek(f, 0, SEEK_END); size = ftell(f); rewind(f);
    data = malloc(size);
    if (fread(data, 1, size, f) != (size_t) size) { perror("read"); return 2; }
    fclose(f);
    if (!strcmp(op, "exact")) kind = EXACT;
    else if (!strcmp(op, "decompress")) kind = DECOMPRESS;
    else if (!strcmp(op, "lz4_compress")) kind = LZ4_COMPRESS;
    else if (!strcmp(op, "lz4_decompress")) kind = LZ4_DECOMPRESS;
    else if (!strcmp(op, "crc")) kind = CRC;
    else { fprintf(stderr, "pgc: no operation %s\n", op); return 2; }
    nslices = (size + slice - 1) / slice;
    out = malloc(2 * slice + 64);
    raw = malloc(slice);
    blocks = calloc(nslices, sizeof *blocks);
    blen = calloc(nslices, sizeof *blen);
    rlen = calloc(nslices, sizeof *rlen);
    long bytes = size;
    for (long i = 0; i < nslices; i++) rlen[i] = (int) (i == nslices - 1 ? size - i * slice : slice);
    if (kind == DECOMPRESS || kind == LZ4_DECOMPRESS) {
        bytes = 0;
        for (long i = 0; i < nslices; i++) {
            char *src = data + i * slice;
            blen[i] = kind == DECOMPRESS ? pglz_compress(src, rlen[i], out, PGLZ_strategy_default)
                                   : LZ4_compress_default(src, out, rlen[i], LZ4_compressBound(rlen[i]));
            if (blen[i] < 0) continue;
            blocks[i] = malloc(blen[i]);
            memcpy(blocks[i], out, blen[i]);
            bytes += rlen[i];
        }
    }
    if (getenv("PASS_BYTES")) { printf("%ld\n", bytes); return 0; }
    if (!getenv("PASS_CLOCK")) {
        for (long p = 0; p < passes; p++) pass();
        return 0;
    }
    pass();
    double *ns = malloc((passes > 0 ? passes : 1) * sizeof *ns);
    for (long p = 0; p < passes; p++) {
        double t0 = cpu();
        pass();
        ns[p] = (cpu() - t0) * 1e9 / bytes;
    }
    qsort(ns, passes, sizeof *ns, cmp);
    printf("%.4f %.4f\n", ns[0], ns[passes / 2]);
    return 0;
}
