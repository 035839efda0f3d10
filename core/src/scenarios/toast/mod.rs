//! What TOAST would store for a column's values under `pglz` and `lz4` (PostgreSQL 15's
//! `heap_toast_insert_or_update` and `toast_compress_datum`).
//!
//! * A row is considered for compression only when it is wider than `TOAST_TUPLE_THRESHOLD`
//!   (2032 bytes with 8 kB blocks). This model looks at one column: a value is tried when its
//!   varlena (4-byte header + data) plus the rest of the row (`row_overhead`: the heap tuple
//!   header and the other columns) passes the threshold.
//! * `pglz` uses the `default` strategy (inputs of 32 bytes up, at least 25% saving); `lz4` uses
//!   `LZ4_compress_default`. A compressed value carries an 8-byte header (varlena header + raw
//!   size and method), and is kept only if it saves **more than 2 bytes** over the raw data
//!   (`VARSIZE(compressed) < valsize - 2`), since alignment can eat a smaller gain.
//! * A value that is still too wide moves out of line to the TOAST table. `pg_column_size`
//!   then reports the external size: the compressed data with its 4-byte raw-size header, or the
//!   raw data alone. Inline it reports the varlena size: compressed + 8, or data + 4 (data + 1
//!   for a short value under 127 bytes).

use serde::Serialize;

use crate::error::Result;
use crate::lab::codecs::{compress_to_vec, Codec};
use crate::lab::harness::{measure_codec, Hooks};
use crate::lab::payload::Payload;
use crate::pg_compression::ToastCompression;

mod tuple;
pub use tuple::{toast_row, Arrives, Attribute, Row, Storage, Stored, TOAST_POINTER_SIZE};

/// `TOAST_TUPLE_THRESHOLD` and `TOAST_TUPLE_TARGET` for 8 kB blocks.
pub const TOAST_TUPLE_THRESHOLD: usize = 2032;
pub const TOAST_TUPLE_TARGET: usize = 2032;
/// Varlena header plus the 4-byte raw size/method word of a compressed value.
pub const VARHDRSZ_COMPRESSED: usize = 8;
pub const VARHDRSZ: usize = 4;
/// Largest data that fits a 1-byte varlena header.
pub const SHORT_VARLENA_MAX_DATA: usize = 126;

/// What TOAST stores for one value of `valsize` data bytes, given what the method produced
/// (`None`: refused). Returns (`pg_column_size` of the stored value, compressed?).
pub fn stored_value_size(valsize: usize, row_overhead: usize, compressed_len: Option<usize>) -> (usize, bool) {
    let tries = valsize + VARHDRSZ + row_overhead > TOAST_TUPLE_THRESHOLD;
    let accepted = match compressed_len {
        Some(len) if tries => len + VARHDRSZ_COMPRESSED < valsize.saturating_sub(2),
        _ => false,
    };
    if accepted {
        let len = compressed_len.unwrap();
        if len + VARHDRSZ_COMPRESSED + row_overhead > TOAST_TUPLE_THRESHOLD {
            (len + VARHDRSZ, true) // external: compressed data with its raw-size word
        } else {
            (len + VARHDRSZ_COMPRESSED, true)
        }
    } else if valsize + VARHDRSZ + row_overhead > TOAST_TUPLE_THRESHOLD {
        (valsize, false) // external, uncompressed
    } else if valsize <= SHORT_VARLENA_MAX_DATA {
        (valsize + 1, false)
    } else {
        (valsize + VARHDRSZ, false)
    }
}

/// One result row of `estimate_toast_compression`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToastRow {
    pub method: String,
    pub values: i64,
    pub compressed_values: i64,
    pub raw_bytes: i64,
    pub stored_bytes: i64,
    pub ratio: f64,
    pub compress_mbps: f64,
    pub decompress_mbps: f64,
    /// The 95% interval of `stored_bytes` where it is scaled up from a sample of the table's
    /// blocks; both equal `stored_bytes` where every value was read, both None where the
    /// sample was a single block.
    pub stored_bytes_low: Option<i64>,
    pub stored_bytes_high: Option<i64>,
}

/// What TOAST would store for `values` (one column's values; `row_overhead` bytes of the rest
/// of each row) under `method`, run by `codec`; speeds measured on the same values.
pub fn estimate(
    values: &Payload,
    row_overhead: usize,
    method: &str,
    codec: &mut dyn Codec,
    iterations: u32,
    hooks: &mut dyn Hooks,
) -> Result<ToastRow> {
    let mut scratch = Vec::new();
    let (mut stored, mut compressed, mut raw) = (0usize, 0i64, 0usize);
    for value in &values.pieces {
        hooks.tick();
        let len = compress_to_vec(codec, value, &mut scratch, &mut || hooks.tick())?;
        let (size, was_compressed) = stored_value_size(value.len(), row_overhead, len);
        stored += size;
        raw += value.len();
        compressed += was_compressed as i64;
    }
    let measured = measure_codec(values, 0, codec, iterations, hooks)?;
    let speed = measured.row(&values.name, &codec.spec(), 0);
    // Every value stored raw: reading them back is copying them, at the speed the lab timed.
    let decompress_mbps = speed.decompress_mbps.unwrap_or_else(|| measured.decompress_mbps_raw());
    Ok(ToastRow {
        method: method.to_string(),
        values: values.pieces.len() as i64,
        compressed_values: compressed,
        raw_bytes: raw as i64,
        stored_bytes: stored as i64,
        ratio: if stored > 0 { raw as f64 / stored as f64 } else { 1.0 },
        compress_mbps: speed.compress_mbps,
        decompress_mbps,
        stored_bytes_low: Some(stored as i64),
        stored_bytes_high: Some(stored as i64),
    })
}

/// One variable-length attribute of a sampled row as the table stores it now.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredAttribute {
    pub storage: Storage,
    /// Data bytes once detoasted (`toast_raw_datum_size` less the header).
    pub raw: usize,
    /// `pg_column_size`.
    pub size: usize,
    /// The method it is compressed with, None if it is not.
    pub method: Option<ToastCompression>,
    pub external: bool,
}

impl StoredAttribute {
    /// The attribute as it arrives in the UPDATE that rewrites another column: as it is stored,
    /// compressed or not, in line or as its TOAST pointer (an uncompressed value was refused or
    /// never reached, and is taken as refused).
    fn as_arriving(&self) -> Attribute {
        let header = if self.external { VARHDRSZ } else { VARHDRSZ_COMPRESSED };
        Attribute {
            storage: self.storage,
            raw: self.raw,
            compressed: self.method.as_ref().map(|_| self.size.saturating_sub(header)),
            arrives: match (self.external, self.method) {
                (true, _) => Arrives::External,
                (false, Some(_)) => Arrives::Compressed,
                (false, None) => Arrives::Raw,
            },
        }
    }
}

/// A sampled row: its header and fixed-length bytes, the table's `toast_tuple_target`, and its
/// variable-length attributes as stored now, `column` being the one advised on.
#[derive(Debug, Clone, PartialEq)]
pub struct SampledRow {
    pub header: usize,
    pub fixed: usize,
    pub target: usize,
    pub attributes: Vec<StoredAttribute>,
    pub column: usize,
    /// The most alignment padding the tuple may hold (each column's alignment less one): the
    /// model counts none, TOAST's thresholds count what there is.
    pub padding: usize,
}

/// How a sampled value would be stored under one method: as the model reads its row, and the
/// range of sizes its known error allows (see [`toasted_anew`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Toasted {
    pub stored: Stored,
    /// The smallest and largest `pg_column_size` between the model's two readings of the row.
    pub low: usize,
    pub high: usize,
}

/// How `value` (one sampled value, detoasted) would be stored under each of `codecs` (name,
/// codec), its row `sampled` toasted anew as TOAST would (see [`tuple`]): whether the value is
/// tried at all depends on its row's width and its turn among the row's attributes, whether it
/// is kept on the method's own rules; the other attributes keep the compression they have now.
///
/// The model's known error, two readings it cannot tell apart: another attribute stored raw in
/// the row was either refused by its method or never reached (its row fit before its turn), the
/// model taking it as refused (were it compressible, the UPDATE could compress it first and
/// leave the value raw); and the row's alignment padding, which the model leaves out (a row
/// within a few bytes of `TOAST_TUPLE_THRESHOLD` or the target may be toasted or not by it).
/// [`Toasted`]'s range holds the value's size under the model and under each other reading
/// (such attributes compressed to nothing; the most padding the row may hold).
pub fn toasted_anew(
    value: &[u8],
    sampled: &SampledRow,
    codecs: &mut [(&str, Box<dyn Codec>)],
    tick: &mut dyn FnMut(),
) -> Result<Vec<Toasted>> {
    let mut row = Row {
        header: sampled.header,
        fixed: sampled.fixed,
        target: sampled.target,
        attributes: sampled.attributes.iter().map(StoredAttribute::as_arriving).collect(),
    };
    // the other readings: raw attributes in line taken as compressible to nothing; the row
    // with the most padding
    let mut readings = Vec::new();
    let mut compressible = row.clone();
    for (i, a) in compressible.attributes.iter_mut().enumerate() {
        if i != sampled.column && a.arrives == Arrives::Raw {
            a.compressed = Some(0);
        }
    }
    if compressible != row {
        readings.push(compressible);
    }
    if sampled.padding > 0 {
        readings.push(Row { header: row.header + sampled.padding, ..row.clone() });
    }
    let mut scratch = Vec::new();
    let mut toasted = Vec::with_capacity(codecs.len());
    for (_, codec) in codecs.iter_mut() {
        // the value written anew, raw
        let compressed = compress_to_vec(codec.as_mut(), value, &mut scratch, tick)?;
        let with = |row: &mut Row| {
            let column = &mut row.attributes[sampled.column];
            column.arrives = Arrives::Raw;
            column.raw = value.len();
            column.compressed = compressed;
            toast_row(row)[sampled.column]
        };
        let stored = with(&mut row);
        let (mut low, mut high) = (stored.size, stored.size);
        for reading in &mut readings {
            let size = with(reading).size;
            (low, high) = (low.min(size), high.max(size));
        }
        toasted.push(Toasted { stored, low, high });
    }
    Ok(toasted)
}

/// What the column's sampled values (`values`, one per row of `rows`, detoasted) would take
/// under each of `codecs` (name, codec), each row toasted anew ([`toasted_anew`]). Returns the
/// stored bytes (`pg_column_size`) per codec, in order.
pub fn stored_per_row(
    values: &Payload,
    rows: &[SampledRow],
    codecs: &mut [(&str, Box<dyn Codec>)],
    tick: &mut dyn FnMut(),
) -> Result<Vec<i64>> {
    let mut totals = vec![0i64; codecs.len()];
    for (value, sampled) in values.pieces.iter().zip(rows) {
        for (total, toasted) in totals.iter_mut().zip(toasted_anew(value, sampled, codecs, tick)?) {
            *total += toasted.stored.size as i64;
        }
    }
    Ok(totals)
}

#[cfg(test)]
mod tests;
