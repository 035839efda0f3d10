//! SQL functions for the codecs: the self-describing `compress`/`decompress` pair, the raw
//! formats (pglz as PostgreSQL stores it, LZ4 block and frame, zstd frame), and the server's
//! own C pglz, liblz4 and libzstd for comparison.

use compresslab_core::lab::Codec;
use compresslab_core::pglz::Strategy;
use compresslab_core::registry::{MethodKind, MethodSpec};
use compresslab_core::{envelope, lz4, pglz, zstd_codec, CodecError, EnvelopeMethod};
use pgrx::prelude::*;

use crate::bytea::ResultBytea;
use pgrx::PgSqlErrorCode;

use crate::errors::{checked_raw_size, raise, report, OrRaise};
use crate::gucs;
use crate::server::check_interrupts;
use crate::server::codecs::off_thread::Elsewhere;
use crate::server::codecs::zstd;
use crate::server::codecs::{self, c_pglz_compress, c_pglz_decompress_uninit, c_pglz_max_input};

/// Compress `data` into compresslab's self-describing format with the method of the
/// `compresslab.method` setting (and `compresslab.zstd_level` for zstd): STABLE, since it
/// reads settings.
#[pg_extern(stable, strict, parallel_safe)]
fn compress(data: &[u8]) -> ResultBytea {
    let method = gucs::method();
    let level = (method == EnvelopeMethod::Zstd).then(gucs::zstd_level);
    envelope_compress(data, method, level)
}

/// Compress `data` with `method` (`none`, `pglz`, `lz4`, `zstd`; zstd at its default level 3):
/// IMMUTABLE, it reads no setting.
#[pg_extern(immutable, strict, parallel_safe, name = "compress")]
fn compress_with_method(data: &[u8], method: &str) -> ResultBytea {
    envelope_compress(data, EnvelopeMethod::parse(method).or_raise(), None)
}

/// Compress `data` with `method` at `level` (zstd only).
#[pg_extern(immutable, strict, parallel_safe, name = "compress")]
fn compress_with_level(data: &[u8], method: &str, level: i32) -> ResultBytea {
    envelope_compress(data, EnvelopeMethod::parse(method).or_raise(), Some(level))
}

fn envelope_compress(data: &[u8], method: EnvelopeMethod, level: Option<i32>) -> ResultBytea {
    ResultBytea::within_bound(envelope::compress_bound(data.len()), |room| {
        envelope::compress_to(data, method, level, room, &mut check_interrupts).or_raise()
    })
}

/// Decompress a value written by `compress()`; the method is read from its header.
#[pg_extern(stable, strict, parallel_safe)]
fn decompress(data: &[u8]) -> ResultBytea {
    let len = envelope::decompressed_len(data, gucs::max_decompressed_size()).or_raise();
    let mut out = ResultBytea::unwritten(len);
    envelope::decompress_uninit(data, out.room(), &mut check_interrupts).or_raise();
    // SAFETY: Ok means all len bytes were written.
    unsafe { out.written(len) }
}

/// What the header of a `compress()` value says.
#[pg_extern(immutable, strict, parallel_safe)]
fn compression_info(
    data: &[u8],
) -> TableIterator<'static, (name!(method, String), name!(raw_bytes, i64), name!(stored_bytes, i64))> {
    let info = envelope::info(data).or_raise();
    TableIterator::once((
        compresslab_core::registry::Named::name(info.method).to_string(),
        info.raw_size as i64,
        info.compressed_size as i64,
    ))
}

/// PostgreSQL's raw pglz format (no header), as TOAST and WAL store it. NULL when the strategy
/// refuses to compress, as PostgreSQL's `pglz_compress` returns -1. `strategy` is `default`,
/// `always`, or `key=value` pairs of the six strategy fields.
#[pg_extern(immutable, strict, parallel_safe)]
fn pglz_compress(data: &[u8], strategy: default!(&str, "'default'")) -> Option<ResultBytea> {
    let strategy = pglz::Strategy::parse(strategy).or_raise();
    ResultBytea::within_bound_or_none(pglz::max_output(data.len()), |room| {
        pglz::compress_to_ticking(data, room, &strategy, false, &mut check_interrupts)
    })
}

/// Decompress raw pglz data into `raw_size` bytes. With `check_complete` (the default) the data
/// must produce exactly `raw_size` bytes and be consumed whole; without it, a prefix is fine
/// (as for TOAST slices).
#[pg_extern(stable, strict, parallel_safe)]
fn pglz_decompress(data: &[u8], raw_size: i32, check_complete: default!(bool, true)) -> ResultBytea {
    let room = pglz::decodable_room(data.len(), checked_raw_size(raw_size), check_complete).or_raise();
    let mut out = ResultBytea::unwritten(room);
    let n = pglz::decompress_uninit_ticking(data, out.room(), check_complete, &mut check_interrupts).or_raise();
    // SAFETY: the decoder wrote the n bytes it returns.
    unsafe { out.written(n) }
}

/// One LZ4 block; with `size_prefix` the raw size is prepended as 4 bytes little-endian.
#[pg_extern(immutable, strict, parallel_safe)]
fn lz4_compress(data: &[u8], size_prefix: default!(bool, false)) -> ResultBytea {
    ResultBytea::within_bound(4 + lz4::block::compress_bound(data.len()), |room| {
        let tick = &mut check_interrupts;
        if size_prefix {
            lz4::block::compress_prefixed_to_ticking(data, room, tick)
        } else {
            lz4::block::compress_to_ticking(data, room, tick)
        }
        .or_raise()
    })
}

/// Decompress one LZ4 block that starts with its raw size (4 bytes, little-endian).
#[pg_extern(stable, strict, parallel_safe)]
fn lz4_decompress(data: &[u8]) -> ResultBytea {
    let (raw_size, block) = lz4::block::split_size_prefix(data, gucs::max_decompressed_size()).or_raise();
    lz4_block_result(block, raw_size)
}

/// `block` decoded into a result of `raw_size` bytes, which it must fill.
fn lz4_block_result(block: &[u8], raw_size: usize) -> ResultBytea {
    let mut out = ResultBytea::unwritten(raw_size);
    lz4::block::decompress_uninit_ticking(block, out.room(), &mut check_interrupts).or_raise();
    // SAFETY: Ok means all raw_size bytes were written.
    unsafe { out.written(raw_size) }
}

/// Decompress one LZ4 block into exactly `raw_size` bytes.
#[pg_extern(stable, strict, parallel_safe, name = "lz4_decompress")]
fn lz4_decompress_sized(data: &[u8], raw_size: i32) -> ResultBytea {
    let raw_size = checked_raw_size(raw_size);
    lz4::block::check_decodable(data.len(), raw_size).or_raise();
    lz4_block_result(data, raw_size)
}

/// One LZ4 frame, as the `lz4` command-line tool writes (content size and checksum included).
#[pg_extern(immutable, strict, parallel_safe)]
fn lz4_frame_compress(data: &[u8]) -> ResultBytea {
    ResultBytea::within_bound(lz4::frame::compress_bound(data.len()), |room| {
        lz4::frame::compress_to_ticking(data, room, &mut check_interrupts).or_raise()
    })
}

/// Decompress LZ4 frames (from `lz4_frame_compress` or the `lz4` tool). Frames that all
/// declare their content size (ours do) decode straight into the result; others into a
/// growing buffer, copied once.
#[pg_extern(stable, strict, parallel_safe)]
fn lz4_frame_decompress(data: &[u8]) -> ResultBytea {
    let max = gucs::max_decompressed_size();
    ResultBytea::of_frames(
        lz4::frame::content_size(data),
        max,
        |dst| lz4::frame::decompress_to_uninit(data, dst, &mut check_interrupts),
        || lz4::frame::decompress_with_tick(data, max, &mut check_interrupts),
    )
}

/// One zstd frame at the `compresslab.zstd_level` setting: STABLE, since it reads it.
#[pg_extern(stable, strict, parallel_safe)]
fn zstd_compress(data: &[u8]) -> ResultBytea {
    zstd_frame(data, gucs::zstd_level(), None)
}

/// One zstd frame at `level`.
#[pg_extern(immutable, strict, parallel_safe, name = "zstd_compress")]
fn zstd_compress_level(data: &[u8], level: i32) -> ResultBytea {
    zstd_frame(data, level, None)
}

/// One zstd frame at `level` with a dictionary (raw content or one trained by `zstd --train`).
#[pg_extern(immutable, strict, parallel_safe, name = "zstd_compress")]
fn zstd_compress_dictionary(data: &[u8], level: i32, dictionary: &[u8]) -> ResultBytea {
    zstd_frame(data, level, Some(dictionary))
}

fn zstd_frame(data: &[u8], level: i32, dictionary: Option<&[u8]>) -> ResultBytea {
    ResultBytea::within_bound(zstd_codec::compress_bound(data.len()), |room| {
        zstd_codec::compress_to(data, level, dictionary, room, &mut check_interrupts)
            .or_raise()
            .unwrap_or_else(|| raise(CodecError::invalid("zstd frame is larger than ZSTD_compressBound")))
    })
}

/// Decompress zstd frames (from `zstd_compress` or the `zstd` tool).
#[pg_extern(stable, strict, parallel_safe)]
fn zstd_decompress(data: &[u8]) -> ResultBytea {
    zstd_unframe(data, None)
}

/// Decompress zstd frames made with `dictionary`.
#[pg_extern(stable, strict, parallel_safe, name = "zstd_decompress")]
fn zstd_decompress_dictionary(data: &[u8], dictionary: &[u8]) -> ResultBytea {
    zstd_unframe(data, Some(dictionary))
}

/// Frames that declare their sizes (ours always do) decode straight into the result; others
/// into a growing buffer, copied once.
fn zstd_unframe(data: &[u8], dictionary: Option<&[u8]>) -> ResultBytea {
    let max = gucs::max_decompressed_size();
    ResultBytea::of_frames(
        zstd_codec::declared_size(data),
        max,
        |dst| zstd_codec::decompress_to_uninit(data, dictionary, dst, &mut check_interrupts),
        || zstd_codec::decompress_with_tick(data, dictionary, max, &mut check_interrupts),
    )
}

/// PostgreSQL's own C `pglz_compress` (reference for interop and benchmarks), on at most
/// 4 MiB under the default strategy, 512 KiB under any other: a cancel waits for one call, and
/// it cannot run on a thread of its own (`codecs::c_pglz_max_input`).
#[pg_extern(immutable, strict, parallel_safe)]
fn server_pglz_compress(data: &[u8], strategy: default!(&str, "'default'")) -> Option<ResultBytea> {
    let strategy = Strategy::parse(strategy).or_raise();
    let max = c_pglz_max_input(&strategy);
    if data.len() > max {
        let under =
            if strategy == Strategy::DEFAULT { "the default strategy" } else { "a strategy other than the default" };
        report(
            PgSqlErrorCode::ERRCODE_PROGRAM_LIMIT_EXCEEDED,
            format!(
                "server_pglz_compress takes at most {max} bytes under {under}, got {}: one call of the \
                 server's pglz_compress cannot be cancelled",
                data.len()
            ),
            Some(
                "compresslab.pglz_compress writes the same bytes as the server's pglz_compress, with the same \
                  strategy, and answers cancel.",
            ),
        );
    }
    ResultBytea::within_bound_or_none(pglz::max_output(data.len()), |room| c_pglz_compress(data, room, &strategy))
}

/// The server's liblz4, `LZ4_compress_default` (the call behind lz4 TOAST values): an LZ4
/// block, for interop and benchmarks.
#[pg_extern(immutable, strict, parallel_safe)]
fn server_lz4_compress(data: &[u8]) -> ResultBytea {
    server_compress(MethodSpec::new(MethodKind::ServerLz4, None).or_raise(), data)
}

/// The server's liblz4, `LZ4_decompress_safe`: an LZ4 block of `raw_size` bytes.
#[pg_extern(stable, strict, parallel_safe)]
fn server_lz4_decompress(data: &[u8], raw_size: i32) -> ResultBytea {
    server_decompress(MethodSpec::new(MethodKind::ServerLz4, None).or_raise(), data, raw_size)
}

/// The server's libzstd at `level`: one zstd frame, for interop and benchmarks.
#[pg_extern(immutable, strict, parallel_safe)]
fn server_zstd_compress(data: &[u8], level: default!(i32, 3)) -> ResultBytea {
    server_compress(MethodSpec::new(MethodKind::ServerZstd, Some(level)).or_raise(), data)
}

/// The server's libzstd: zstd frames holding `raw_size` bytes.
#[pg_extern(stable, strict, parallel_safe)]
fn server_zstd_decompress(data: &[u8], raw_size: i32) -> ResultBytea {
    server_decompress(MethodSpec::new(MethodKind::ServerZstd, Some(3)).or_raise(), data, raw_size)
}

/// `data` compressed by a server library's codec, written within its bound.
fn server_compress(spec: MethodSpec, data: &[u8]) -> ResultBytea {
    let mut codec = codecs::build(&spec).or_raise();
    ResultBytea::within_bound(codec.compress_bound(data.len()), |room| {
        match codec.compress(data, room, &mut check_interrupts).or_raise() {
            Some(n) => n,
            None => raise(CodecError::invalid("the server's library wrote no output")),
        }
    })
}

/// `data` decompressed by a server library's codec into `raw_size` bytes, which it must fill.
/// libzstd comes set up from the last call in this backend, as our zstd's decoding context.
fn server_decompress(spec: MethodSpec, data: &[u8], raw_size: i32) -> ResultBytea {
    let mut codec = (spec.kind != MethodKind::ServerZstd).then(|| codecs::build(&spec).or_raise());
    let raw_size = checked_raw_size(raw_size);
    match spec.kind {
        MethodKind::ServerLz4 => lz4::block::check_decodable(data.len(), raw_size).or_raise(),
        MethodKind::ServerZstd => zstd_codec::check_decodable(data, raw_size).or_raise(),
        _ => {}
    }
    let mut out = ResultBytea::unwritten(raw_size);
    let room = out.room();
    let tick = &mut check_interrupts;
    match &mut codec {
        Some(codec) => codec.decompress_uninit(data, room, tick),
        None => zstd::with_backend_decoder(|zstd| zstd.decompress_uninit(data, room, tick)),
    }
    .or_raise();
    // SAFETY: Ok means all raw_size bytes were written.
    unsafe { out.written(raw_size) }
}

/// PostgreSQL's own C `pglz_decompress` (reference for interop and benchmarks).
#[pg_extern(stable, strict, parallel_safe)]
fn server_pglz_decompress(data: &[u8], raw_size: i32, check_complete: default!(bool, true)) -> ResultBytea {
    let room = pglz::decodable_room(data.len(), checked_raw_size(raw_size), check_complete).or_raise();
    let mut out = ResultBytea::unwritten(room);
    let tick = &mut check_interrupts;
    match c_pglz_decompress_uninit(data, out.room(), check_complete, &mut Vec::new(), tick, &mut Elsewhere::default())
        .or_raise()
    {
        // SAFETY: the C decoder wrote the n bytes it returns.
        Some(n) => unsafe { out.written(n) },
        None => raise(CodecError::corrupt("PostgreSQL's pglz_decompress rejected the data as corrupt")),
    }
}
