//! Settings. All but one are USERSET: they only steer what the caller compresses for itself;
//! `compresslab.max_decompressed_size_ceiling` is SUSET, the administrator's cap on memory.

use compresslab_core::{zstd_codec, EnvelopeMethod};
use pgrx::{GucContext, GucFlags, GucRegistry, GucSetting, PostgresGucEnum};

#[derive(PostgresGucEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum MethodSetting {
    #[name = c"none"]
    None,
    #[name = c"pglz"]
    Pglz,
    #[name = c"lz4"]
    Lz4,
    #[name = c"zstd"]
    Zstd,
}

/// The varlena limit: no value can be 1 GB or longer (`MaxAllocSize` = 1 GB - 1 bytes, header
/// included).
pub const VARLENA_MAX: i32 = 0x3FFF_FFFF;
/// The longest bytea result a function can return: 4 bytes of varlena header and the payload
/// must stay below `MaxAllocSize` (1,073,741,818 bytes).
pub const MAX_RESULT: i32 = VARLENA_MAX - 5;

static METHOD: GucSetting<MethodSetting> = GucSetting::<MethodSetting>::new(MethodSetting::Lz4);
static ZSTD_LEVEL: GucSetting<i32> = GucSetting::<i32>::new(zstd_codec::DEFAULT_LEVEL);
/// Upper bound of `compresslab.bench_iterations` and of any `iterations` argument.
pub const MAX_BENCH_ITERATIONS: i32 = 1000;

static BENCH_ITERATIONS: GucSetting<i32> = GucSetting::<i32>::new(5);
static MAX_DECOMPRESSED_SIZE: GucSetting<i32> = GucSetting::<i32>::new(MAX_RESULT);
static MAX_DECOMPRESSED_SIZE_CEILING: GucSetting<i32> = GucSetting::<i32>::new(MAX_RESULT);

/// Define every setting, then reserve the `compresslab.` prefix: from then on a misspelt
/// `compresslab.*` setting is an error (and placeholders set before the library loaded are
/// warned about and removed), as for any extension that reserves its prefix.
pub fn register() {
    GucRegistry::define_enum_guc(
        c"compresslab.method",
        c"Compression method compresslab.compress() uses when none is given.",
        c"One of none, pglz, lz4, zstd.",
        &METHOD,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"compresslab.zstd_level",
        c"zstd level used when compresslab.compress() or zstd_compress() is given none.",
        c"Negative levels are zstd's fast levels; 22 is the strongest.",
        &ZSTD_LEVEL,
        *zstd_codec::level_range().start(),
        *zstd_codec::level_range().end(),
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"compresslab.max_decompressed_size",
        c"Largest result compresslab's decompression functions will produce.",
        c"Compressed data whose header or frame declares more is refused before any memory is allocated.",
        &MAX_DECOMPRESSED_SIZE,
        0,
        MAX_RESULT,
        GucContext::Userset,
        GucFlags::UNIT_BYTE,
    );
    GucRegistry::define_int_guc(
        c"compresslab.max_decompressed_size_ceiling",
        c"Largest result any session may let compresslab's decompression functions produce.",
        c"Superuser only: caps compresslab.max_decompressed_size, which every user may set, so an administrator can bound the memory one call takes.",
        &MAX_DECOMPRESSED_SIZE_CEILING,
        0,
        MAX_RESULT,
        GucContext::Suset,
        GucFlags::UNIT_BYTE,
    );
    GucRegistry::define_int_guc(
        c"compresslab.bench_iterations",
        c"Timed iterations per benchmark row when a bench function is given none.",
        c"Each row also runs one untimed warm-up iteration.",
        &BENCH_ITERATIONS,
        1,
        MAX_BENCH_ITERATIONS,
        GucContext::Userset,
        GucFlags::default(),
    );
    // SAFETY: called once from _PG_init with a static NUL-terminated name.
    unsafe { pgrx::pg_sys::MarkGUCPrefixReserved(c"compresslab".as_ptr()) };
}

pub fn bench_iterations() -> i32 {
    BENCH_ITERATIONS.get()
}

pub fn method() -> EnvelopeMethod {
    match METHOD.get() {
        MethodSetting::None => EnvelopeMethod::None,
        MethodSetting::Pglz => EnvelopeMethod::Pglz,
        MethodSetting::Lz4 => EnvelopeMethod::Lz4,
        MethodSetting::Zstd => EnvelopeMethod::Zstd,
    }
}

pub fn zstd_level() -> i32 {
    ZSTD_LEVEL.get()
}

/// The limit in force: the session's `compresslab.max_decompressed_size`, capped by the
/// administrator's `compresslab.max_decompressed_size_ceiling`.
pub fn max_decompressed_size() -> usize {
    MAX_DECOMPRESSED_SIZE.get().min(MAX_DECOMPRESSED_SIZE_CEILING.get()) as usize
}
