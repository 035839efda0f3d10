//! What the reader hands the what-if: a record, its full-page images, the relation fork each
//! belongs to, and how an LSN is written.

use crate::page::BLCKSZ;
use crate::pg_compression::WalCompression;
use crate::scenarios::fpi::COMPRESSED_HOLE_HEADER;

/// The relation fork an image belongs to (`RelFileNode` and fork number).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RelationKey {
    pub tablespace: u32,
    pub database: u32,
    pub relfilenode: u32,
    pub fork: u8,
}

/// One full-page image as a record holds it.
#[derive(Debug, Clone, Copy)]
pub struct ImageRef {
    pub relation: RelationKey,
    pub stored_as: WalCompression,
    /// `bimg_len`: the image's bytes in the record.
    pub bimg_len: u16,
    pub hole_offset: u16,
    pub hole_length: u16,
}

impl ImageRef {
    /// Bytes the image takes in its record now: the image, and the hole header of a
    /// compressed image with a hole.
    pub fn bytes_in_record(&self) -> u64 {
        let header = self.stored_as != WalCompression::Off && self.hole_length != 0;
        self.bimg_len as u64 + if header { COMPRESSED_HOLE_HEADER as u64 } else { 0 }
    }

    /// The hole-less image's length: what `off` stores.
    pub(super) fn raw_len(&self) -> usize {
        BLCKSZ - self.hole_length as usize
    }
}

/// One WAL record: its LSN, `xl_tot_len`, and whether it is an `XLOG_SWITCH`.
#[derive(Debug, Clone, Copy)]
pub struct RecordRef {
    pub lsn: u64,
    pub total_length: u32,
    pub is_switch: bool,
}

/// An LSN as PostgreSQL prints it: `16/B374D848`.
pub fn lsn_text(lsn: u64) -> String {
    format!("{:X}/{:X}", lsn >> 32, lsn as u32)
}
