/* What the C harnesses of scripts/bench/ call in PostgreSQL 15's libpgcommon.a and libpgport.a
 * and in the system's liblz4, declared as common/pg_lzcompress.h, port/pg_crc32c.h and lz4.h
 * declare them: the server's headers need all of c.h, and liblz4's are not installed. */
#ifndef PG_C_SYMBOLS_H
#define PG_C_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    int32_t min_input_size, max_input_size, min_comp_rate, first_success_by, match_size_good, match_size_drop;
} PGLZ_Strategy;
extern const PGLZ_Strategy *const PGLZ_strategy_default;
int32_t pglz_compress(const char *source, int32_t slen, char *dest, const PGLZ_Strategy *strategy);
int32_t pglz_decompress(const char *source, int32_t slen, char *dest, int32_t rawsize, bool check_complete);

/* Called as the server calls it: through the pointer its first call sets (to the SSE4.2 code here). */
extern uint32_t (*pg_comp_crc32c)(uint32_t crc, const void *data, size_t len);

int LZ4_compressBound(int inputSize);
int LZ4_compress_default(const char *src, char *dst, int srcSize, int dstCapacity);
int LZ4_decompress_safe(const char *src, char *dst, int compressedSize, int dstCapacity);

#endif
