//! What TOAST does to one row, attribute by attribute: PostgreSQL's `heap_toast_insert_or_update`
//! (heaptoast.c, unchanged in this respect from 15 to 19) replayed on sizes.
//!
//! A new tuple is toasted only when it is wider than `TOAST_TUPLE_THRESHOLD` (2032 bytes with
//! 8 kB blocks). Then, while the data is wider than the table's `toast_tuple_target` (default
//! 2032) less the tuple header:
//! 1. the biggest attribute of storage `extended` not yet tried is compressed (`external` ones
//!    are only marked), and moved out of line at once if it is still wider than the target;
//! 2. the biggest `extended` or `external` attribute still in line is moved out of line;
//! 3. the biggest `main` attribute not yet tried is compressed;
//! 4. against `MaxHeapTupleSize` instead of the target, the biggest `main` one moves out of line.
//!
//! An attribute may arrive compressed (another column's value in an UPDATE, or an INSERT ...
//! SELECT): it is then never compressed again, only moved; or as a TOAST pointer (another
//! column's out-of-line value, which an UPDATE keeps): it takes the pointer's bytes and is never
//! picked. "Biggest" counts only attributes wider than a TOAST pointer (24 bytes, aligned). A value is
//! compressed only when the method produces something and `VARSIZE(compressed) < raw - 2`; a
//! refusal is final for that row. Each method's own refusals (pglz's strategy: at least 25%
//! saved, a match within the first kilobyte; lz4: any saving) come with the compressed length.

use super::{SHORT_VARLENA_MAX_DATA, TOAST_TUPLE_THRESHOLD, VARHDRSZ, VARHDRSZ_COMPRESSED};

/// A TOAST pointer in a tuple: 2-byte header and `varatt_external`.
pub const TOAST_POINTER_SIZE: usize = 18;
/// `MaxHeapTupleSize` for 8 kB blocks: the target of step 4.
pub const TOAST_TUPLE_TARGET_MAIN: usize = 8160;
/// Attributes at most this wide (`MAXALIGN(TOAST_POINTER_SIZE)`) are never picked.
const SMALLEST_PICKED: usize = 24;

/// An attribute's storage strategy (`pg_attribute.attstorage`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Storage {
    /// `p`: never compressed nor moved.
    Plain,
    /// `e`: moved out of line, never compressed.
    External,
    /// `x`: compressed, then moved out of line.
    Extended,
    /// `m`: compressed, moved only as a last resort.
    Main,
}

impl Storage {
    /// From `attstorage`; unknown letters are plain.
    pub fn from_attstorage(c: u8) -> Storage {
        match c {
            b'e' => Storage::External,
            b'x' => Storage::Extended,
            b'm' => Storage::Main,
            _ => Storage::Plain,
        }
    }
}

/// One variable-length attribute of a row as it arrives to be stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Attribute {
    pub storage: Storage,
    /// Data bytes, without the varlena header.
    pub raw: usize,
    /// What the column's compression method makes of it (data bytes), None if it refuses; for
    /// an attribute that arrives compressed, its compressed data bytes.
    pub compressed: Option<usize>,
    pub arrives: Arrives,
}

/// How an attribute arrives to be stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrives {
    /// Its raw bytes (a new value).
    Raw,
    /// Compressed, in line.
    Compressed,
    /// As a TOAST pointer, out of line (compressed there if `compressed` is Some).
    External,
}

/// A row: its tuple header (`t_hoff`), the bytes of its fixed-length columns, its
/// variable-length attributes, and the table's `toast_tuple_target`.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub header: usize,
    pub fixed: usize,
    pub attributes: Vec<Attribute>,
    pub target: usize,
}

/// How one attribute ends up stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stored {
    /// `pg_column_size` of the stored value.
    pub size: usize,
    pub compressed: bool,
    pub external: bool,
}

#[derive(Clone, Copy)]
struct State {
    compressed: Option<usize>,
    external: bool,
    tried: bool,
}

impl State {
    /// `tai_size`: the value's varlena size while toasting (a 4-byte header until stored).
    fn varsize(&self, raw: usize) -> usize {
        self.compressed.map_or(raw + VARHDRSZ, |len| len + VARHDRSZ_COMPRESSED)
    }

    /// Its bytes in the tuple (`heap_compute_data_size`: short headers for short values).
    fn in_tuple(&self, raw: usize) -> usize {
        match self.compressed {
            _ if self.external => TOAST_POINTER_SIZE,
            Some(len) => len + VARHDRSZ_COMPRESSED,
            None if raw <= SHORT_VARLENA_MAX_DATA => raw + 1,
            None => raw + VARHDRSZ,
        }
    }
}

/// How TOAST stores each of the row's variable-length attributes, in order.
pub fn toast_row(row: &Row) -> Vec<Stored> {
    let attrs = &row.attributes;
    let mut state: Vec<State> = attrs
        .iter()
        .map(|a| State {
            compressed: if a.arrives == Arrives::Raw { None } else { a.compressed },
            external: a.arrives == Arrives::External,
            tried: false,
        })
        .collect();
    let data = |state: &[State]| row.fixed + attrs.iter().zip(state).map(|(a, s)| s.in_tuple(a.raw)).sum::<usize>();
    if row.header + data(&state) > TOAST_TUPLE_THRESHOLD {
        let max_data = row.target.saturating_sub(row.header);
        // toast_tuple_find_biggest_attribute: for compression, attributes not tried and not yet
        // compressed; for moving, any still in line; of the storages asked for.
        let biggest = |state: &[State], for_compression: bool, main: bool| {
            let mut best: Option<(usize, usize)> = None;
            for (i, (a, s)) in attrs.iter().zip(state).enumerate() {
                let wanted = if main {
                    a.storage == Storage::Main
                } else {
                    matches!(a.storage, Storage::Extended | Storage::External)
                };
                let skip = s.external || (for_compression && (s.tried || s.compressed.is_some()));
                let size = s.varsize(a.raw);
                if wanted && !skip && size > best.map_or(SMALLEST_PICKED, |(_, b)| b) {
                    best = Some((i, size));
                }
            }
            best.map(|(i, _)| i)
        };
        let try_compression = |a: &Attribute, s: &mut State| {
            s.tried = true;
            s.compressed = a.compressed.filter(|len| len + VARHDRSZ_COMPRESSED < a.raw.saturating_sub(2));
        };
        while data(&state) > max_data {
            let Some(i) = biggest(&state, true, false) else { break };
            if attrs[i].storage == Storage::Extended {
                try_compression(&attrs[i], &mut state[i]);
            } else {
                state[i].tried = true;
            }
            if state[i].varsize(attrs[i].raw) > max_data {
                state[i].external = true;
            }
        }
        while data(&state) > max_data {
            let Some(i) = biggest(&state, false, false) else { break };
            state[i].external = true;
        }
        while data(&state) > max_data {
            let Some(i) = biggest(&state, true, true) else { break };
            try_compression(&attrs[i], &mut state[i]);
        }
        let max_data = TOAST_TUPLE_TARGET_MAIN - row.header;
        while data(&state) > max_data {
            let Some(i) = biggest(&state, false, true) else { break };
            state[i].external = true;
        }
    }
    attrs
        .iter()
        .zip(&state)
        .map(|(a, s)| Stored {
            size: match s.compressed {
                Some(len) if s.external => len + VARHDRSZ,
                Some(len) => len + VARHDRSZ_COMPRESSED,
                None if s.external => a.raw,
                None if a.raw <= SHORT_VARLENA_MAX_DATA => a.raw + 1,
                None => a.raw + VARHDRSZ,
            },
            compressed: s.compressed.is_some(),
            external: s.external,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attr(storage: Storage, raw: usize, compressed: Option<usize>) -> Attribute {
        Attribute { storage, raw, compressed, arrives: Arrives::Raw }
    }

    fn row(attributes: Vec<Attribute>) -> Row {
        Row { header: 24, fixed: 4, attributes, target: 2032 }
    }

    #[test]
    fn a_narrow_row_is_left_alone() {
        let stored = toast_row(&row(vec![attr(Storage::Extended, 1900, Some(100)), attr(Storage::Extended, 50, None)]));
        assert_eq!(stored[0], Stored { size: 1904, compressed: false, external: false });
        assert_eq!(stored[1], Stored { size: 51, compressed: false, external: false });
    }

    /// An UPDATE of one column: another column arrives as it is stored. Compressed in line, it
    /// counts its compressed bytes and is not compressed again: the row (24 + 4 + 108 + 1804
    /// bytes) stays under the threshold and the new value is stored raw, where counting the other
    /// one raw (1004 bytes) would have compressed the new one. Out of line, it counts its
    /// pointer's 18 bytes and keeps its size.
    #[test]
    fn other_columns_arrive_as_they_are_stored() {
        let compressed = Attribute { arrives: Arrives::Compressed, ..attr(Storage::Extended, 1000, Some(100)) };
        let stored = toast_row(&row(vec![compressed.clone(), attr(Storage::Extended, 1800, Some(300))]));
        assert_eq!(stored[0], Stored { size: 108, compressed: true, external: false });
        assert_eq!(stored[1], Stored { size: 1804, compressed: false, external: false });
        let as_raw =
            toast_row(&row(vec![attr(Storage::Extended, 1000, Some(100)), attr(Storage::Extended, 1800, Some(300))]));
        assert_eq!(as_raw[1], Stored { size: 308, compressed: true, external: false });
        let external = Attribute { arrives: Arrives::External, ..attr(Storage::Extended, 5000, Some(700)) };
        let stored = toast_row(&row(vec![external, attr(Storage::Extended, 1950, Some(300))]));
        assert_eq!(stored[0], Stored { size: 704, compressed: true, external: true });
        assert_eq!(stored[1], Stored { size: 1954, compressed: false, external: false });
    }

    #[test]
    fn a_wide_value_is_compressed_in_line_or_moved_out() {
        let inline = toast_row(&row(vec![attr(Storage::Extended, 5000, Some(900))]));
        assert_eq!(inline[0], Stored { size: 908, compressed: true, external: false });
        let out = toast_row(&row(vec![attr(Storage::Extended, 50_000, Some(4000))]));
        assert_eq!(out[0], Stored { size: 4004, compressed: true, external: true });
        let refused = toast_row(&row(vec![attr(Storage::Extended, 5000, None)]));
        assert_eq!(refused[0], Stored { size: 5000, compressed: false, external: true });
    }

    #[test]
    fn a_saving_of_two_bytes_or_less_is_refused() {
        assert!(!toast_row(&row(vec![attr(Storage::Extended, 3000, Some(2990))]))[0].compressed);
        assert!(toast_row(&row(vec![attr(Storage::Extended, 3000, Some(2989))]))[0].compressed);
    }

    #[test]
    fn the_biggest_goes_first_and_toasting_stops_when_the_row_fits() {
        // 1,500 + 1,200 bytes: the 1,500-byte value compresses to 100, the row then fits, the
        // 1,200-byte value is never tried although it would compress
        let stored =
            toast_row(&row(vec![attr(Storage::Extended, 1200, Some(50)), attr(Storage::Extended, 1500, Some(100))]));
        assert_eq!(stored[1], Stored { size: 108, compressed: true, external: false });
        assert_eq!(stored[0], Stored { size: 1204, compressed: false, external: false });
        // when the big one refuses, the smaller one is compressed: a row's decision, not a value's
        let stored =
            toast_row(&row(vec![attr(Storage::Extended, 1200, Some(50)), attr(Storage::Extended, 1500, None)]));
        assert_eq!(stored[1], Stored { size: 1504, compressed: false, external: false });
        assert_eq!(stored[0], Stored { size: 58, compressed: true, external: false });
    }

    #[test]
    fn storages_other_than_extended() {
        // external: never compressed, moved out
        let stored = toast_row(&row(vec![attr(Storage::External, 5000, Some(100))]));
        assert_eq!(stored[0], Stored { size: 5000, compressed: false, external: true });
        // main: compressed, kept in line up to a page
        let stored = toast_row(&row(vec![attr(Storage::Main, 7000, Some(6000))]));
        assert_eq!(stored[0], Stored { size: 6008, compressed: true, external: false });
        let stored = toast_row(&row(vec![attr(Storage::Main, 9000, None)]));
        assert_eq!(stored[0], Stored { size: 9000, compressed: false, external: true });
        // plain: never touched
        let stored = toast_row(&row(vec![attr(Storage::Plain, 3000, Some(10))]));
        assert_eq!(stored[0], Stored { size: 3004, compressed: false, external: false });
    }

    #[test]
    fn toast_tuple_target_decides_how_far_toasting_goes() {
        // a 3,000-byte row: with the default target its value is compressed, with a target of
        // 4,000 it is tried only because the row passed the threshold, and not compressed since
        // the row already fits
        let mut r = row(vec![attr(Storage::Extended, 3000, Some(500))]);
        assert!(toast_row(&r)[0].compressed);
        r.target = 4000;
        assert!(!toast_row(&r)[0].compressed);
    }
}
