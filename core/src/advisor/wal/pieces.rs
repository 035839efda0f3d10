//! The WAL read as pieces of [`CHUNK_BYTES`], read back from the flush LSN: how much to read in
//! each part within the time left ([`next_part`]), what each piece holds ([`PieceLog`],
//! [`pieces_of_part`]), and which pieces are a one-off load rather than the steady workload
//! ([`split`]).

use super::{READ_SECONDS_PER_GB, REPLAY_SECONDS_PER_GB};
use crate::advisor::words::GB;
use crate::scenarios::wal::{ChunkSavings, WalWhatIfRow, CHUNK_BYTES};

/// The first part read back from the flush LSN gets this share of the time, and at most
/// [`FIRST_PART_BYTES`] (its speed, measured, sizes the parts after it): small, so that a
/// machine slower than the model still reads the newest WAL whole.
pub const FIRST_PART_SHARE: f64 = 0.125;
pub const FIRST_PART_BYTES: u64 = 16 * CHUNK_BYTES;
/// A later part gets at most this share of the time left: a part the deadline cuts short
/// keeps only its oldest pieces, leaving a gap before the newer parts, so a part is kept small
/// against what is left.
pub const PART_SHARE: f64 = 0.5;
/// The least share of images compressed.
pub const MIN_SAMPLE: f64 = 0.01;

/// The seconds the model gives for reading `bytes` at `sample`, before the machine's factor.
pub fn model_seconds(bytes: u64, sample: f64) -> f64 {
    bytes as f64 / GB * (READ_SECONDS_PER_GB + sample * REPLAY_SECONDS_PER_GB)
}

/// The next part to read: `[start, end)`, back from `end` (the oldest LSN read so far, the
/// flush LSN at first) and no earlier than `floor`, with `seconds` left, and the share of its
/// images to compress. `factor` is the seconds measured over those the model predicted on
/// the parts read so far (None before the first): the first part gets
/// [`FIRST_PART_SHARE`] of the time at every image, at most [`FIRST_PART_BYTES`]; later ones the share of images that
/// reads back to `floor` in the time left (at least [`MIN_SAMPLE`]), at most [`PART_SHARE`]
/// of the time left each. Starts are whole pieces ([`CHUNK_BYTES`]), so that no piece is
/// split between two parts. None when nothing is left to read or no time.
pub fn next_part(end: u64, floor: u64, seconds: f64, factor: Option<f64>) -> Option<(u64, f64)> {
    if end <= floor || seconds <= 0.0 {
        return None;
    }
    let left = end - floor;
    let factor_known = factor.is_some();
    let (share, sample, factor) = match factor {
        None => (FIRST_PART_SHARE, 1.0, 1.0),
        Some(f) => {
            let f = f.max(1e-3);
            let whole = (seconds / (left as f64 / GB * f) - READ_SECONDS_PER_GB) / REPLAY_SECONDS_PER_GB;
            (PART_SHARE, whole.clamp(MIN_SAMPLE, 1.0), f)
        }
    };
    let per_byte = model_seconds(1 << 30, sample) / GB * factor;
    let bytes = (seconds * share / per_byte) as u64;
    let bytes = if factor_known { bytes } else { bytes.min(FIRST_PART_BYTES) }.max(CHUNK_BYTES);
    let start = if bytes >= left {
        floor
    } else {
        // whole pieces (at least one: never an empty part)
        ((end - bytes) / CHUNK_BYTES * CHUNK_BYTES).max(floor)
    };
    Some((start, sample))
}

/// What the reader says of one record, for the pieces.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RecordSeen {
    pub lsn: u64,
    pub end_lsn: u64,
    /// Its full-page images, and their bytes in the record as written.
    pub images: u64,
    pub image_bytes: u64,
    /// An `XLOG_FPI` record: pages written whole (index builds, loads), not images of pages
    /// a change touched first after a checkpoint.
    pub whole_page: bool,
    /// The time it carries (commits, aborts, checkpoints), microseconds since 2000.
    pub time: Option<i64>,
}

/// One piece of the WAL read: the records that start in one [`CHUNK_BYTES`] of LSN.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Piece {
    /// Its first record's LSN, and the next piece's (the last record's end for the newest).
    pub start: u64,
    pub end: u64,
    pub records: u64,
    pub images: u64,
    /// Bytes of records besides their images, and of pages written whole: what a load writes
    /// (a checkpoint's burst of images is not one).
    pub load_bytes: u64,
    /// Records carrying a time, and the first and last of them (LSN, microseconds).
    pub stamps: u64,
    pub first_stamp: Option<(u64, i64)>,
    pub last_stamp: Option<(u64, i64)>,
    /// Images compressed, and per setting (the what-if's order, off first) the bytes all its
    /// images would save against as written, estimated from those compressed.
    pub sampled: u64,
    pub saved: Vec<f64>,
}

impl Piece {
    pub fn bytes(&self) -> u64 {
        self.end.saturating_sub(self.start)
    }
}

/// The pieces of one part as its records are read, in LSN order.
#[derive(Debug, Clone, Default)]
pub struct PieceLog {
    pub pieces: Vec<Piece>,
}

impl PieceLog {
    pub fn observe(&mut self, record: &RecordSeen) {
        let index = record.lsn / CHUNK_BYTES;
        if self.pieces.last().is_none_or(|p| p.start / CHUNK_BYTES != index) {
            if let Some(last) = self.pieces.last_mut() {
                last.end = record.lsn;
            }
            self.pieces.push(Piece { start: record.lsn, end: record.lsn, ..Piece::default() });
        }
        let piece = self.pieces.last_mut().expect("pushed above");
        piece.end = record.end_lsn.max(piece.end);
        piece.records += 1;
        piece.images += record.images;
        let length = record.end_lsn.saturating_sub(record.lsn);
        piece.load_bytes += if record.whole_page { length } else { length.saturating_sub(record.image_bytes) };
        if let Some(time) = record.time {
            piece.stamps += 1;
            piece.first_stamp.get_or_insert((record.lsn, time));
            piece.last_stamp = Some((record.lsn, time));
        }
    }
}

/// The pieces of one part, with what their images save: `chunks` (the what-if's sampled
/// savings per piece) scaled to each piece's images, a piece with no image compressed
/// charged the part's saving per image, and every setting's savings scaled so that they sum
/// to the part's own (`as_written` less the row's bytes: page headers and alignment included).
pub fn pieces_of_part(rows: &[WalWhatIfRow], as_written: i64, chunks: &[ChunkSavings], log: PieceLog) -> Vec<Piece> {
    let settings = rows.len();
    let mut pieces = log.pieces;
    let sampled: u64 = chunks.iter().map(|c| c.images).sum();
    let per_image: Vec<f64> = (0..settings)
        .map(|s| {
            let saved: i64 = chunks.iter().map(|c| c.saved.get(s).copied().unwrap_or(0)).sum();
            if sampled > 0 {
                saved as f64 / sampled as f64
            } else {
                0.0
            }
        })
        .collect();
    for piece in &mut pieces {
        let index = piece.start / CHUNK_BYTES;
        piece.saved = match chunks.iter().find(|c| c.index == index && c.images > 0) {
            Some(c) => {
                piece.sampled = c.images;
                let scale = piece.images.max(c.images) as f64 / c.images as f64;
                (0..settings).map(|s| c.saved.get(s).copied().unwrap_or(0) as f64 * scale).collect()
            }
            None => per_image.iter().map(|p| p * piece.images as f64).collect(),
        };
    }
    for (s, row) in rows.iter().enumerate() {
        let target = (as_written - row.wal_bytes) as f64;
        let sum: f64 = pieces.iter().map(|p| p.saved[s]).sum();
        let factor = target / sum;
        if sum.abs() >= 1.0 && (0.5..=2.0).contains(&factor) {
            pieces.iter_mut().for_each(|p| p.saved[s] *= factor);
        }
    }
    pieces
}

/// A run of 16 MB or more ([`LOAD_MIN_BYTES`])...
pub const LOAD_MIN_BYTES: u64 = 16 * CHUNK_BYTES;
/// ...written at this many times the steady rate of load bytes, or by transactions of a
/// megabyte or more (at most [`SPARSE_STAMPS`] timestamped records in a piece)...
pub const LOAD_FACTOR: f64 = 10.0;
pub const SPARSE_STAMPS: u64 = 1;
/// ...at least half of it load bytes, is a one-off load. Two such runs closer than this are
/// one load (a bulk load's phases: the rows, a VACUUM, the indexes).
pub const LOAD_GAP_BYTES: u64 = 8 * CHUNK_BYTES;

/// A one-off load set apart from the steady WAL.
#[derive(Debug, Clone, PartialEq)]
pub struct Load {
    pub start: u64,
    pub end: u64,
    pub seconds: f64,
}

/// The WAL read split into the steady workload and one-off loads.
#[derive(Debug, Clone, PartialEq)]
pub struct Split {
    /// Per piece: whether it is steady.
    pub steady: Vec<bool>,
    /// Per piece: the seconds it took to write (from the times its records and the flush carry).
    pub seconds: Vec<f64>,
    pub loads: Vec<Load>,
    /// Every piece was in a load: nothing steady is left, so the advice is on the load.
    pub all_load: bool,
}

impl Split {
    /// The steady pieces' LSN ranges, each run of them one range, oldest first.
    pub fn steady_ranges(&self, pieces: &[Piece]) -> Vec<(u64, u64)> {
        let mut ranges: Vec<(u64, u64)> = Vec::new();
        for (piece, _) in pieces.iter().zip(&self.steady).filter(|(_, &s)| s) {
            match ranges.last_mut() {
                Some(last) if last.1 == piece.start => last.1 = piece.end,
                _ => ranges.push((piece.start, piece.end)),
            }
        }
        ranges
    }

    /// The steady pieces' seconds.
    pub fn steady_seconds(&self) -> f64 {
        self.seconds.iter().zip(&self.steady).filter(|(_, &s)| s).map(|(t, _)| t).sum()
    }
}

/// The time at `lsn` (microseconds), interpolated between `anchors` (LSN, time) sorted by LSN;
/// the nearest anchor's time outside them.
fn time_at(anchors: &[(u64, i64)], lsn: u64) -> Option<f64> {
    let after = anchors.partition_point(|a| a.0 <= lsn);
    match (after.checked_sub(1).map(|i| anchors[i]), anchors.get(after)) {
        (Some((l0, t0)), Some(&(l1, t1))) if l1 > l0 => {
            Some(t0 as f64 + (t1 - t0) as f64 * (lsn - l0) as f64 / (l1 - l0) as f64)
        }
        (Some((_, t)), _) | (None, Some(&(_, t))) => Some(t as f64),
        (None, None) => None,
    }
}

/// The seconds each piece took to write: the times its records carry, and `end` (the flush
/// LSN and the time of the call, when the read ends there), interpolated by LSN in between.
pub fn piece_seconds(pieces: &[Piece], end: Option<(u64, i64)>) -> Vec<f64> {
    let mut anchors: Vec<(u64, i64)> =
        pieces.iter().flat_map(|p| [p.first_stamp, p.last_stamp]).flatten().chain(end).collect();
    anchors.sort_unstable();
    anchors.dedup();
    // times in LSN order (commits are stamped just before they are written)
    for i in 1..anchors.len() {
        anchors[i].1 = anchors[i].1.max(anchors[i - 1].1);
    }
    pieces
        .iter()
        .map(|p| match (time_at(&anchors, p.start), time_at(&anchors, p.end)) {
            (Some(a), Some(b)) => ((b - a) / 1e6).max(0.0),
            _ => 0.0,
        })
        .collect()
}

/// The median of `rates`: the rate most of the read's pieces (each about a megabyte) were
/// written at. By piece, not by time, so that an idle hour inside one piece does not make it.
fn median(rates: &[f64]) -> Option<f64> {
    let mut sorted: Vec<f64> = rates.iter().copied().filter(|r| r.is_finite()).collect();
    sorted.sort_by(f64::total_cmp);
    sorted.get(sorted.len() / 2).copied()
}

/// Which pieces (oldest first, contiguous) are a one-off load: a run of [`LOAD_MIN_BYTES`] or
/// more, at least half of it load bytes (records besides their images, pages written whole),
/// each of its pieces written by few transactions (at most [`SPARSE_STAMPS`] timestamped
/// records in a megabyte) or at [`LOAD_FACTOR`] times the steady rate of load bytes (the
/// median over the pieces with more); runs closer than [`LOAD_GAP_BYTES`] are
/// one load. A checkpoint's burst of images is not a load: its pieces hold commits, and
/// images are not load bytes. `end`: the flush LSN and the time of the call.
pub fn split(pieces: &[Piece], end: Option<(u64, i64)>) -> Split {
    let seconds = piece_seconds(pieces, end);
    let rate = |i: usize| pieces[i].load_bytes as f64 / seconds[i];
    let sparse = |i: usize| pieces[i].stamps <= SPARSE_STAMPS;
    let baseline = median(&(0..pieces.len()).filter(|&i| !sparse(i) && seconds[i] > 0.0).map(rate).collect::<Vec<_>>());
    let hot: Vec<bool> = (0..pieces.len())
        .map(|i| sparse(i) || baseline.is_some_and(|b| seconds[i] > 0.0 && rate(i) >= LOAD_FACTOR * b.max(1.0)))
        .collect();
    // runs of hot pieces that are loads
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i < pieces.len() {
        if !hot[i] {
            i += 1;
            continue;
        }
        let j = (i..pieces.len()).find(|&j| !hot[j]).unwrap_or(pieces.len());
        let bytes: u64 = pieces[i..j].iter().map(Piece::bytes).sum();
        let load: u64 = pieces[i..j].iter().map(|p| p.load_bytes).sum();
        if bytes >= LOAD_MIN_BYTES && 2 * load >= bytes {
            match runs.last_mut() {
                Some(last) if pieces[i].start.saturating_sub(pieces[last.1 - 1].end) < LOAD_GAP_BYTES => last.1 = j,
                _ => runs.push((i, j)),
            }
        }
        i = j;
    }
    let mut steady = vec![true; pieces.len()];
    let loads = runs
        .iter()
        .map(|&(i, j)| {
            steady[i..j].iter_mut().for_each(|s| *s = false);
            Load { start: pieces[i].start, end: pieces[j - 1].end, seconds: seconds[i..j].iter().sum() }
        })
        .collect();
    let all_load = !pieces.is_empty() && steady.iter().all(|s| !s);
    if all_load {
        steady.iter_mut().for_each(|s| *s = true);
    }
    Split { steady, seconds, loads, all_load }
}

/// The what-if's rows of the parts read (each in the what-if's order, off first) as one read
/// of `[start, end)`: counts, bytes and CPU summed, each saving against off again.
pub fn combine_rows(parts: &[Vec<WalWhatIfRow>], start: u64, end: u64) -> Vec<WalWhatIfRow> {
    let Some(first) = parts.first() else { return Vec::new() };
    let mut rows: Vec<WalWhatIfRow> = first.clone();
    for part in &parts[1..] {
        for (row, other) in rows.iter_mut().zip(part) {
            row.records += other.records;
            row.fpi_images += other.fpi_images;
            row.sampled_images += other.sampled_images;
            row.compressed_images += other.compressed_images;
            row.stored_images += other.stored_images;
            row.fpi_bytes += other.fpi_bytes;
            row.wal_bytes += other.wal_bytes;
            row.compress_cpu_seconds += other.compress_cpu_seconds;
            row.decompress_cpu_seconds += other.decompress_cpu_seconds;
        }
    }
    let off = rows.first().map_or(0, |r| r.wal_bytes);
    for row in &mut rows {
        row.start_lsn = crate::scenarios::wal::lsn_text(start);
        row.end_lsn = crate::scenarios::wal::lsn_text(end.max(start));
        row.saving_percent = if off > 0 { 100.0 * (off - row.wal_bytes) as f64 / off as f64 } else { 0.0 };
    }
    rows
}
