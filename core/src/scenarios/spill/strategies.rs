//! The spill strategies' encoders and decoders: raw, pglz and LZ4 per record, LZ4 streaming
//! ([`crate::lz4::stream`]) and zstd streaming flushed per record. The file format around
//! them (record headers, verification) is the parent module's.

use zstd::stream::raw::{Decoder as ZstdDecoder, Encoder as ZstdEncoder, InBuffer, Operation, OutBuffer};

use super::{Flag, SpillDecoder, SpillEncoder, SpillStrategy};
use crate::error::{try_reserve, try_resize, CodecError, Result};
use crate::lz4::stream::{Lz4StreamDecoder, Lz4StreamEncoder, StreamBlock};
use crate::{lz4, pglz, zstd_codec};

/// A fresh encoder and decoder for `strategy`.
pub(super) fn codec_pair(
    strategy: SpillStrategy,
    zstd_level: i32,
) -> Result<(Box<dyn SpillEncoder>, Box<dyn SpillDecoder>)> {
    Ok(match strategy {
        SpillStrategy::Raw => (Box::new(RawCodec), Box::new(RawCodec)),
        SpillStrategy::Pglz => (Box::new(PglzEncoder { scratch: Vec::new() }), Box::new(PglzDecoder)),
        SpillStrategy::Lz4 => (Box::new(Lz4Encoder { scratch: Vec::new() }), Box::new(Lz4Decoder)),
        SpillStrategy::Lz4Stream => (Box::new(Lz4StreamEncoder::new()), Box::new(Lz4StreamDecoder::new())),
        SpillStrategy::ZstdStream => {
            (Box::new(ZstdStreamEncoder::new(zstd_level)?), Box::new(ZstdStreamDecoder::new()?))
        }
    })
}

/// A raw payload must be exactly the record's length.
fn copy_raw(payload: &[u8], dst: &mut [u8]) -> Result<()> {
    if payload.len() != dst.len() {
        return Err(CodecError::corrupt(format!(
            "raw payload is {} bytes, the record is {}",
            payload.len(),
            dst.len()
        )));
    }
    dst.copy_from_slice(payload);
    Ok(())
}

fn unexpected(flag: Flag, strategy: &str) -> CodecError {
    CodecError::corrupt(format!("storage flag {} is not one {strategy} writes", flag as u8))
}

// ---------------------------------------------------------------------------------------------
// raw

struct RawCodec;

impl SpillEncoder for RawCodec {
    fn encode(&mut self, record: &[u8], out: &mut Vec<u8>, _tick: &mut dyn FnMut()) -> Result<Flag> {
        out.extend_from_slice(record);
        Ok(Flag::Raw)
    }
}

impl SpillDecoder for RawCodec {
    fn decode(&mut self, flag: Flag, payload: &[u8], dst: &mut [u8]) -> Result<()> {
        match flag {
            Flag::Raw => copy_raw(payload, dst),
            other => Err(unexpected(other, "raw")),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// pglz, per record

struct PglzEncoder {
    scratch: Vec<u8>,
}

impl SpillEncoder for PglzEncoder {
    fn encode(&mut self, record: &[u8], out: &mut Vec<u8>, _tick: &mut dyn FnMut()) -> Result<Flag> {
        try_resize(&mut self.scratch, pglz::max_output(record.len()), "a compressed record")?;
        match pglz::compress_to(record, &mut self.scratch, &pglz::Strategy::DEFAULT) {
            Some(n) => {
                out.extend_from_slice(&self.scratch[..n]);
                Ok(Flag::Pglz)
            }
            None => {
                out.extend_from_slice(record);
                Ok(Flag::Raw)
            }
        }
    }
}

struct PglzDecoder;

impl SpillDecoder for PglzDecoder {
    fn decode(&mut self, flag: Flag, payload: &[u8], dst: &mut [u8]) -> Result<()> {
        match flag {
            Flag::Raw => copy_raw(payload, dst),
            Flag::Pglz => {
                let n = pglz::decompress_into(payload, dst, true)?;
                if n != dst.len() {
                    return Err(CodecError::corrupt(format!("pglz produced {n} bytes, expected {}", dst.len())));
                }
                Ok(())
            }
            other => Err(unexpected(other, "pglz")),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// LZ4 block, per record

struct Lz4Encoder {
    scratch: Vec<u8>,
}

impl SpillEncoder for Lz4Encoder {
    fn encode(&mut self, record: &[u8], out: &mut Vec<u8>, _tick: &mut dyn FnMut()) -> Result<Flag> {
        try_resize(&mut self.scratch, lz4::block::compress_bound(record.len()), "a compressed record")?;
        let n = lz4::block::compress_to(record, &mut self.scratch)?;
        if n < record.len() {
            out.extend_from_slice(&self.scratch[..n]);
            Ok(Flag::Lz4Block)
        } else {
            out.extend_from_slice(record);
            Ok(Flag::Raw)
        }
    }
}

struct Lz4Decoder;

impl SpillDecoder for Lz4Decoder {
    fn decode(&mut self, flag: Flag, payload: &[u8], dst: &mut [u8]) -> Result<()> {
        match flag {
            Flag::Raw => copy_raw(payload, dst),
            Flag::Lz4Block => lz4::block::decompress_into(payload, dst),
            other => Err(unexpected(other, "lz4")),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// LZ4 streaming

impl SpillEncoder for Lz4StreamEncoder {
    fn encode(&mut self, record: &[u8], out: &mut Vec<u8>, _tick: &mut dyn FnMut()) -> Result<Flag> {
        Ok(match Lz4StreamEncoder::encode(self, record, out)? {
            StreamBlock::Raw => Flag::Raw,
            StreamBlock::Independent => Flag::Lz4Block,
            StreamBlock::Linked => Flag::Lz4Stream,
        })
    }
}

impl SpillDecoder for Lz4StreamDecoder {
    fn decode(&mut self, flag: Flag, payload: &[u8], dst: &mut [u8]) -> Result<()> {
        let block = match flag {
            Flag::Raw => StreamBlock::Raw,
            Flag::Lz4Block => StreamBlock::Independent,
            Flag::Lz4Stream => StreamBlock::Linked,
            other => return Err(unexpected(other, "lz4_stream")),
        };
        Lz4StreamDecoder::decode(self, block, payload, dst)
    }
}

// ---------------------------------------------------------------------------------------------
// zstd streaming, flushed per record

struct ZstdStreamEncoder {
    encoder: ZstdEncoder<'static>,
    /// Input between two ticks: less at the slowest levels (`zstd_codec::compress_chunk`).
    piece: usize,
}

impl ZstdStreamEncoder {
    fn new(level: i32) -> Result<Self> {
        let encoder = ZstdEncoder::new(level)
            .map_err(|e| CodecError::invalid(format!("zstd: cannot create a stream at level {level}: {e}")))?;
        Ok(ZstdStreamEncoder { encoder, piece: zstd_codec::compress_chunk(level) })
    }
}

fn zstd_failed(e: std::io::Error) -> CodecError {
    CodecError::invalid(format!("zstd stream compression failed: {e}"))
}

impl SpillEncoder for ZstdStreamEncoder {
    fn encode(&mut self, record: &[u8], out: &mut Vec<u8>, tick: &mut dyn FnMut()) -> Result<Flag> {
        // A long record goes in a chunk at a time, with a tick between chunks.
        for chunk in record.chunks(self.piece) {
            let mut input = InBuffer::around(chunk);
            while input.pos() < chunk.len() {
                reserve_room(out, zstd_codec::compress_bound(chunk.len() - input.pos()) + 64)?;
                let pos = out.len();
                let mut output = OutBuffer::around_pos(out, pos);
                self.encoder.run(&mut input, &mut output).map_err(zstd_failed)?;
            }
            tick();
        }
        loop {
            reserve_room(out, 1024)?;
            let pos = out.len();
            let mut output = OutBuffer::around_pos(out, pos);
            let left = self.encoder.flush(&mut output).map_err(zstd_failed)?;
            if left == 0 {
                break;
            }
        }
        Ok(Flag::ZstdStream)
    }
}

/// At least `room` bytes of spare capacity in `out`, allocated fallibly.
fn reserve_room(out: &mut Vec<u8>, room: usize) -> Result<()> {
    if out.capacity() - out.len() < room {
        try_reserve(out, room.max(1 << 16), "the spill file")?;
    }
    Ok(())
}

struct ZstdStreamDecoder {
    decoder: ZstdDecoder<'static>,
    /// Output buffer one byte longer than the record, to notice a piece that decodes to more.
    buf: Vec<u8>,
}

impl ZstdStreamDecoder {
    fn new() -> Result<Self> {
        let decoder =
            ZstdDecoder::new().map_err(|e| CodecError::invalid(format!("zstd: cannot create a decoder: {e}")))?;
        Ok(ZstdStreamDecoder { decoder, buf: Vec::new() })
    }
}

impl SpillDecoder for ZstdStreamDecoder {
    fn decode(&mut self, flag: Flag, payload: &[u8], dst: &mut [u8]) -> Result<()> {
        if flag != Flag::ZstdStream {
            return Err(unexpected(flag, "zstd_stream"));
        }
        let want = dst.len();
        if payload.is_empty() && want == 0 {
            // An empty record flushed nothing; running the decoder on nothing would only count
            // towards zstd's "no progress" limit (16 calls), which rejects valid streams.
            return Ok(());
        }
        self.buf.clear();
        try_resize(&mut self.buf, want + 1, "a record read back")?;
        let mut input = InBuffer::around(payload);
        let mut output = OutBuffer::around(&mut self.buf[..]);
        loop {
            let before = (input.pos(), output.pos());
            self.decoder
                .run(&mut input, &mut output)
                .map_err(|e| CodecError::corrupt(format!("zstd stream is corrupt: {e}")))?;
            if output.pos() > want {
                return Err(CodecError::corrupt(format!(
                    "zstd stream piece decodes to more than the record's {want} bytes"
                )));
            }
            if (input.pos(), output.pos()) == before {
                break;
            }
        }
        if input.pos() != payload.len() || output.pos() != want {
            return Err(CodecError::corrupt(format!(
                "zstd stream piece decoded to {} bytes using {} of its {} bytes, expected {want} bytes from all",
                output.pos(),
                input.pos(),
                payload.len()
            )));
        }
        dst.copy_from_slice(&self.buf[..want]);
        Ok(())
    }
}
