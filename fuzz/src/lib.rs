//! Helpers shared by the fuzz targets: a byte reader that turns the fuzzer's input into
//! parameters, a builder of long repetitive inputs, PostgreSQL's C pglz and the system's
//! liblz4 encoder behind safe wrappers, and the fixed zstd dictionary.

use std::os::raw::c_char;

/// `seed` repeated to `len` bytes, each copy rotated by a step that changes per copy and with
/// one byte of it overwritten: long inputs with matches of every length and distance.
/// `seed` must not be empty.
pub fn repeat_rotated(seed: &[u8], len: usize) -> Vec<u8> {
    let mut src = Vec::with_capacity(len);
    let mut copy = 0usize;
    while src.len() < len {
        let start = src.len();
        let rotate = (copy * 13) % seed.len();
        src.extend(seed[rotate..].iter().chain(&seed[..rotate]).take(len - start));
        let poke = start + (copy * 7919) % (src.len() - start);
        src[poke] = copy as u8;
        copy += 1;
    }
    src
}

/// Reads parameters from the front of the fuzzer's input; missing bytes read as 0, so every
/// input is usable and short inputs exercise the small cases.
pub struct Reader<'a> {
    pub rest: &'a [u8],
}

impl<'a> Reader<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Reader { rest: data }
    }

    pub fn u8(&mut self) -> u8 {
        match self.rest.split_first() {
            Some((&b, rest)) => {
                self.rest = rest;
                b
            }
            None => 0,
        }
    }

    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }

    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }

    /// Up to `n` bytes (fewer if the input ends).
    pub fn bytes(&mut self, n: usize) -> &'a [u8] {
        let n = n.min(self.rest.len());
        let (head, rest) = self.rest.split_at(n);
        self.rest = rest;
        head
    }

    /// Up to `max` records for the streaming targets, read until the input ends: each a head
    /// byte (low 7 bits: a unit's length; high bit: a repeat byte follows), the unit, and the
    /// unit repeated until the record reaches repeat byte × `repeat_step` bytes.
    pub fn records(&mut self, max: usize, repeat_step: usize) -> Vec<Vec<u8>> {
        let mut records = Vec::new();
        while !self.rest.is_empty() && records.len() < max {
            let head = self.u8();
            let repeat_to = if head & 0x80 != 0 { self.u8() as usize * repeat_step } else { 0 };
            let unit = self.bytes((head & 0x7f) as usize);
            let mut record = unit.to_vec();
            if !unit.is_empty() {
                while record.len() < repeat_to {
                    record.extend_from_slice(unit);
                }
            }
            records.push(record);
        }
        records
    }
}

/// PostgreSQL's `PGLZ_Strategy`: the core's `Strategy` has its layout (`#[repr(C)]`).
pub use compresslab_core::pglz::Strategy as PgLzStrategy;

extern "C" {
    fn pglz_decompress(source: *const c_char, slen: i32, dest: *mut c_char, rawsize: i32, check_complete: bool) -> i32;
    fn pglz_compress(source: *const c_char, slen: i32, dest: *mut c_char, strategy: *const PgLzStrategy) -> i32;
    static PGLZ_strategy_default: *const PgLzStrategy;
    static PGLZ_strategy_always: *const PgLzStrategy;
}

extern "C" {
    fn LZ4_compress_default(src: *const c_char, dst: *mut c_char, src_size: i32, dst_capacity: i32) -> i32;
}

/// liblz4's `LZ4_compress_default` (the system's liblz4.so.1, linked by build.rs) into a
/// buffer of `capacity` bytes: `None` when it returns 0 (the block does not fit).
pub fn c_lz4_compress(src: &[u8], capacity: usize) -> Option<Vec<u8>> {
    let mut out = vec![0u8; capacity];
    // SAFETY: LZ4_compress_default reads src_size bytes of src and writes at most dst_capacity
    // bytes of dst; both lengths fit in i32 for the inputs the targets build (under 1 MB).
    let n = unsafe {
        LZ4_compress_default(src.as_ptr().cast(), out.as_mut_ptr().cast(), src.len() as i32, capacity as i32)
    };
    if n <= 0 {
        return None;
    }
    out.truncate(n as usize);
    Some(out)
}

/// Spare zero bytes after the input given to the C decoder: on a tag truncated at the end of
/// the input it reads up to 2 bytes past `slen` before noticing.
pub const C_DECODER_SLACK: usize = 4;

/// PostgreSQL 15's `pglz_decompress` into a fresh buffer of `raw_size` bytes: `None` for -1.
pub fn c_pglz_decompress(src: &[u8], raw_size: usize, check_complete: bool) -> Option<Vec<u8>> {
    let mut padded = Vec::with_capacity(src.len() + C_DECODER_SLACK);
    padded.extend_from_slice(src);
    padded.resize(src.len() + C_DECODER_SLACK, 0);
    let mut dest = vec![0u8; raw_size];
    // SAFETY: `padded` holds `src.len()` input bytes plus C_DECODER_SLACK readable bytes (the C
    // decoder reads at most 2 past `slen`); it writes only inside `dest[..raw_size]` (every copy
    // is clamped to `destend`). Both lengths are small (fuzzer inputs), so they fit in i32.
    let n = unsafe {
        pglz_decompress(
            padded.as_ptr().cast(),
            i32::try_from(src.len()).unwrap(),
            dest.as_mut_ptr().cast(),
            i32::try_from(raw_size).unwrap(),
            check_complete,
        )
    };
    if n < 0 {
        return None;
    }
    dest.truncate(n as usize);
    Some(dest)
}

/// Which strategy the C compressor gets.
#[derive(Debug, Clone, Copy)]
pub enum CStrategy {
    /// The exported `PGLZ_strategy_default` pointer.
    Default,
    /// The exported `PGLZ_strategy_always` pointer.
    Always,
    /// A struct built here.
    Custom(PgLzStrategy),
}

/// PostgreSQL 15's `pglz_compress`: `None` when it returns -1.
pub fn c_pglz_compress(src: &[u8], strategy: CStrategy) -> Option<Vec<u8>> {
    // pglz_compress may write up to 4 bytes past the limit it checks (one item).
    let mut dest = vec![0u8; src.len() + 4];
    let custom;
    // SAFETY: reading the two exported `const PGLZ_Strategy *const` globals, which are
    // initialised at load time and never written.
    let strategy_ptr: *const PgLzStrategy = unsafe {
        match strategy {
            CStrategy::Default => PGLZ_strategy_default,
            CStrategy::Always => PGLZ_strategy_always,
            CStrategy::Custom(s) => {
                custom = s;
                &custom
            }
        }
    };
    // SAFETY: `dest` has `slen + 4` bytes, PostgreSQL's documented requirement
    // (PGLZ_MAX_OUTPUT); the source is read only within `slen`; the strategy pointer is valid
    // for the call. The C function keeps static history tables, so calls must not run
    // concurrently: libFuzzer runs one input at a time per process.
    let n = unsafe {
        pglz_compress(src.as_ptr().cast(), i32::try_from(src.len()).unwrap(), dest.as_mut_ptr().cast(), strategy_ptr)
    };
    if n < 0 {
        return None;
    }
    dest.truncate(n as usize);
    Some(dest)
}

/// Compress `src` with C's `pglz_compress` (`c_strategy`) and with our exact `pglz::compress`
/// (`rust_strategy`, the same fields) and panic unless both refuse or both give the same bytes.
pub fn assert_pglz_compress_matches_c(
    src: &[u8],
    c_strategy: CStrategy,
    rust_strategy: &compresslab_core::pglz::Strategy,
) {
    let c = c_pglz_compress(src, c_strategy);
    let rust = compresslab_core::pglz::compress(src, rust_strategy);
    match (&c, &rust) {
        (Some(c), Some(rust)) => assert!(
            c == rust,
            "outputs differ ({} vs {} bytes) for {rust_strategy:?}, {} input bytes",
            c.len(),
            rust.len(),
            src.len()
        ),
        (None, None) => {}
        (c, rust) => panic!(
            "accept/refuse differ for {rust_strategy:?}, {} input bytes: C {:?}, Rust {:?}",
            src.len(),
            c.as_ref().map(|v| v.len()),
            rust.as_ref().map(|v| v.len())
        ),
    }
}

/// The C strategies' fields, to check the Rust constants against the exported structs.
pub fn c_strategy_fields(strategy: CStrategy) -> PgLzStrategy {
    // SAFETY: as above, the exported pointers point to static, initialised structs.
    unsafe {
        match strategy {
            CStrategy::Default => *PGLZ_strategy_default,
            CStrategy::Always => *PGLZ_strategy_always,
            CStrategy::Custom(s) => s,
        }
    }
}

/// A zstd dictionary trained (`zstd --train`) on small JSON-like records, committed with the
/// seeds; the seed corpus of `zstd_decode_with_dictionary_never_panics` holds frames made with it.
pub static FIXED_ZSTD_DICTIONARY: &[u8] = include_bytes!("../seeds/zstd.dict");
