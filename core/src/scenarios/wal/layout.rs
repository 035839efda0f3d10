//! Where WAL records land, byte for byte, the way PostgreSQL 15 lays them out (xlog.c).
//!
//! WAL is a sequence of `XLOG_BLCKSZ` (8 KB) pages grouped in segments (`wal_segment_size`,
//! 16 MB by default). Every page starts with a header: `SizeOfXLogLongPHD` (40 bytes, MAXALIGNed)
//! on the first page of a segment, `SizeOfXLogShortPHD` (24 bytes) on the others. Records are
//! written back to back into the bytes the headers leave free (the "usable" bytes), each
//! starting at a MAXALIGN (8-byte) boundary, and may span any number of pages and segments.
//!
//! The server reserves WAL as a count of usable bytes (`CurrBytePos`) and converts it to an LSN
//! with `XLogBytePosToRecPtr`; a record of `xl_tot_len` bytes takes `MAXALIGN(xl_tot_len)`
//! usable bytes. An `XLOG_SWITCH` record also takes the rest of its segment
//! (`ReserveXLogSwitch`). So the WAL a run of records occupies follows from its start LSN and the
//! records' lengths alone — which is what lets us ask what the same records would occupy if
//! their full-page images had other lengths.
//!
//! Inside a record, what `wal_compression` changes is each full-page image's bytes (`bimg_len`)
//! and, for a compressed image of a page with a hole, the 2-byte `XLogRecordBlockCompressHeader`
//! that holds the hole length (an uncompressed image's hole length is implied by its length).
//! Every other byte (`XLogRecord`, block headers, the 5-byte image header, the relation and block
//! number, data) is the same under every setting.

/// `XLOG_BLCKSZ`: the size of a WAL page.
pub const XLOG_BLCKSZ: u64 = 8192;
/// `SizeOfXLogShortPHD`: the header of every page but a segment's first, MAXALIGNed.
pub const SHORT_PAGE_HEADER: u64 = 24;
/// `SizeOfXLogLongPHD`: the header of a segment's first page, MAXALIGNed.
pub const LONG_PAGE_HEADER: u64 = 40;

/// `MAXALIGN` on x86-64 and every 64-bit platform PostgreSQL supports.
pub fn maxalign(len: u64) -> u64 {
    (len + 7) & !7
}

/// The mapping between LSNs and usable byte positions for one `wal_segment_size`.
#[derive(Debug, Clone, Copy)]
pub struct WalLayout {
    segment_size: u64,
}

impl WalLayout {
    /// `segment_size` must be a power of two between 1 MB and 1 GB, as initdb allows.
    pub fn new(segment_size: u64) -> WalLayout {
        assert!(segment_size.is_power_of_two() && segment_size >= XLOG_BLCKSZ, "bad wal_segment_size {segment_size}");
        WalLayout { segment_size }
    }

    pub fn segment_size(&self) -> u64 {
        self.segment_size
    }

    fn usable_bytes_in_page(&self) -> u64 {
        XLOG_BLCKSZ - SHORT_PAGE_HEADER
    }

    /// `UsableBytesInSegment`.
    pub fn usable_bytes_in_segment(&self) -> u64 {
        (self.segment_size / XLOG_BLCKSZ) * self.usable_bytes_in_page() - (LONG_PAGE_HEADER - SHORT_PAGE_HEADER)
    }

    /// `XLogRecPtrToBytePos`: the usable byte position of an LSN that is not inside a page
    /// header (a record's start or end, or a page boundary).
    pub fn byte_pos(&self, lsn: u64) -> u64 {
        let full_segments = lsn / self.segment_size;
        let in_segment = lsn % self.segment_size;
        let full_pages = in_segment / XLOG_BLCKSZ;
        let offset = lsn % XLOG_BLCKSZ;
        let base = full_segments * self.usable_bytes_in_segment();
        if full_pages == 0 {
            base + offset.saturating_sub(LONG_PAGE_HEADER)
        } else {
            base + (XLOG_BLCKSZ - LONG_PAGE_HEADER)
                + (full_pages - 1) * self.usable_bytes_in_page()
                + offset.saturating_sub(SHORT_PAGE_HEADER)
        }
    }

    /// `XLogBytePosToRecPtr`: the LSN of a usable byte position, past the page header when the
    /// position is at a page boundary (where the next record would start; what
    /// `pg_current_wal_insert_lsn()` returns).
    pub fn lsn(&self, byte_pos: u64) -> u64 {
        let full_segments = byte_pos / self.usable_bytes_in_segment();
        let mut left = byte_pos % self.usable_bytes_in_segment();
        let in_segment = if left < XLOG_BLCKSZ - LONG_PAGE_HEADER {
            left + LONG_PAGE_HEADER
        } else {
            left -= XLOG_BLCKSZ - LONG_PAGE_HEADER;
            let full_pages = left / self.usable_bytes_in_page();
            XLOG_BLCKSZ + full_pages * XLOG_BLCKSZ + left % self.usable_bytes_in_page() + SHORT_PAGE_HEADER
        };
        full_segments * self.segment_size + in_segment
    }

    /// Where the record after one that ends at `end_of_record` starts: the next MAXALIGNed
    /// usable byte, past the page header when that is a page's first.
    pub fn next_record_start(&self, end_of_record: u64) -> u64 {
        self.lsn(maxalign(self.byte_pos(end_of_record)))
    }

    /// The usable position after an `XLOG_SWITCH` record that ends at `byte_pos`: the start of
    /// the next segment (unchanged if it already is one).
    pub fn after_switch(&self, byte_pos: u64) -> u64 {
        byte_pos.div_ceil(self.usable_bytes_in_segment()) * self.usable_bytes_in_segment()
    }
}

/// A run of WAL laid out from a start LSN: feed it record lengths, read the bytes it takes.
#[derive(Debug, Clone, Copy)]
pub struct WalCursor {
    layout: WalLayout,
    start: u64,
    position: u64,
    /// Bytes laid out before the last segment switch, its padding as written included.
    carried: u64,
}

impl WalCursor {
    /// Start at `lsn`, the LSN of the first record (or an insert position).
    pub fn new(layout: WalLayout, lsn: u64) -> WalCursor {
        let position = layout.byte_pos(lsn);
        WalCursor { layout, start: layout.lsn(position), position, carried: 0 }
    }

    /// Append one record of `total_length` bytes (`xl_tot_len`).
    pub fn append(&mut self, total_length: u64, is_switch: bool) {
        self.position += maxalign(total_length);
        if is_switch {
            self.position = self.layout.after_switch(self.position);
        }
    }

    /// Append an `XLOG_SWITCH` record of `total_length` bytes that the server wrote at
    /// `written_at`, charged the padding it had there (the rest of its segment as written), not
    /// the rest of the segment this cursor has reached: the padding is the same under every
    /// setting, so that a range ending in a switch is not rounded to whole segments. Laying
    /// out continues from the next segment's start, as it did on the server.
    pub fn append_switch(&mut self, total_length: u64, written_at: u64) {
        let written_end = self.layout.byte_pos(written_at) + maxalign(total_length);
        let padding = self.layout.lsn(self.layout.after_switch(written_end)) - self.layout.lsn(written_end);
        self.position += maxalign(total_length);
        self.carried += self.layout.lsn(self.position) - self.start + padding;
        self.position = self.layout.after_switch(self.position);
        self.start = self.layout.lsn(self.position);
    }

    /// Add `bytes` of records whose exact lengths are not known (estimated, already aligned).
    pub fn advance(&mut self, bytes: u64) {
        self.position += bytes;
    }

    /// The WAL bytes from the start to the insert position after the last record, page
    /// headers included: `pg_current_wal_insert_lsn()` after minus before.
    pub fn bytes(&self) -> u64 {
        self.carried + self.layout.lsn(self.position) - self.start
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MB16: u64 = 16 << 20;

    #[test]
    fn first_record_of_a_segment_follows_the_long_header() {
        let l = WalLayout::new(MB16);
        assert_eq!(l.lsn(0), LONG_PAGE_HEADER);
        assert_eq!(l.byte_pos(LONG_PAGE_HEADER), 0);
        // The last usable byte of the first page, then the second page's first record byte.
        assert_eq!(l.lsn(XLOG_BLCKSZ - LONG_PAGE_HEADER - 8), XLOG_BLCKSZ - 8);
        assert_eq!(l.lsn(XLOG_BLCKSZ - LONG_PAGE_HEADER), XLOG_BLCKSZ + SHORT_PAGE_HEADER);
        // The next segment.
        assert_eq!(l.lsn(l.usable_bytes_in_segment()), MB16 + LONG_PAGE_HEADER);
        assert_eq!(l.usable_bytes_in_segment(), 2048 * (8192 - 24) - 16);
    }

    #[test]
    fn byte_positions_and_lsns_are_inverse_at_every_record_start() {
        let l = WalLayout::new(1 << 20);
        for pos in (0..3 * l.usable_bytes_in_segment()).step_by(8 * 97) {
            assert_eq!(l.byte_pos(l.lsn(pos)), pos, "{pos}");
        }
        // Page boundaries map to the position after their header.
        assert_eq!(l.byte_pos(XLOG_BLCKSZ), l.byte_pos(XLOG_BLCKSZ + SHORT_PAGE_HEADER));
        assert_eq!(l.byte_pos(1 << 20), l.byte_pos((1 << 20) + LONG_PAGE_HEADER));
    }

    #[test]
    fn the_next_record_starts_aligned_and_after_a_page_header() {
        let l = WalLayout::new(1 << 20);
        assert_eq!(l.next_record_start(0x1000 + 3), 0x1008);
        assert_eq!(l.next_record_start(0x1008), 0x1008);
        // a record ending at or just before a page's end: the next starts after its header
        assert_eq!(l.next_record_start(2 * XLOG_BLCKSZ), 2 * XLOG_BLCKSZ + SHORT_PAGE_HEADER);
        assert_eq!(l.next_record_start(2 * XLOG_BLCKSZ - 5), 2 * XLOG_BLCKSZ + SHORT_PAGE_HEADER);
        // and at a segment's end, after the long header
        assert_eq!(l.next_record_start((1 << 20) - 1), (1 << 20) + LONG_PAGE_HEADER);
    }

    #[test]
    fn a_cursor_counts_page_headers_and_alignment() {
        let l = WalLayout::new(MB16);
        // 100 records of 81 bytes from the start of the second page: 88 bytes each, no boundary.
        let mut c = WalCursor::new(l, XLOG_BLCKSZ + SHORT_PAGE_HEADER);
        (0..90).for_each(|_| c.append(81, false));
        assert_eq!(c.bytes(), 90 * 88);
        // 92 records still fit the page's 8168 usable bytes; the 93rd crosses into the third
        // page, and its header (24 bytes) is counted.
        (0..2).for_each(|_| c.append(81, false));
        assert_eq!(c.bytes(), 92 * 88);
        c.append(81, false);
        assert_eq!(c.bytes(), 93 * 88 + SHORT_PAGE_HEADER);
        // Crossing a segment boundary costs a long header.
        let mut c = WalCursor::new(l, MB16 - 16);
        c.append(64, false);
        assert_eq!(c.bytes(), 64 + LONG_PAGE_HEADER);
    }

    #[test]
    fn a_switch_takes_the_rest_of_the_segment() {
        let l = WalLayout::new(MB16);
        let mut c = WalCursor::new(l, 3 * MB16 + 1000);
        c.append(24, true);
        assert_eq!(c.bytes(), MB16 - 1000 + LONG_PAGE_HEADER);
        c.append(30, false);
        assert_eq!(c.bytes(), MB16 - 1000 + LONG_PAGE_HEADER + 32);
    }

    #[test]
    fn a_switch_is_charged_the_padding_it_had_as_written() {
        let l = WalLayout::new(MB16);
        // written: 3 MB of records from a segment's start, then a switch at that point
        let start = 5 * MB16 + LONG_PAGE_HEADER;
        let mut written = WalCursor::new(l, start);
        written.append(3 << 20, false);
        let switch_at = l.lsn(l.byte_pos(start) + (3 << 20));
        let mut as_written = written;
        as_written.append_switch(24, switch_at);
        // under the setting it was written with, the exact LSN span: up to the next segment
        assert_eq!(as_written.bytes(), MB16);
        // the same records at 1 MB: 2 MB less, whatever segment the padding would have ended
        let mut smaller = WalCursor::new(l, start);
        smaller.append(1 << 20, false);
        smaller.append_switch(24, switch_at);
        let saved = as_written.bytes() - smaller.bytes();
        assert!(saved > (2 << 20) && saved < (2 << 20) + 8192, "{saved}");
        // records after the switch take the same bytes under both: laid out from a segment start
        as_written.append(100, false);
        smaller.append(100, false);
        assert_eq!(as_written.bytes() - smaller.bytes(), saved);
        // the old rule rounded to segments: both end at the next segment, no saving at all
        let (mut a, mut b) = (WalCursor::new(l, start), WalCursor::new(l, start));
        a.append(3 << 20, false);
        a.append(24, true);
        b.append(1 << 20, false);
        b.append(24, true);
        assert_eq!(a.bytes(), b.bytes());
    }

    #[test]
    fn a_start_at_a_page_boundary_is_the_record_after_the_header() {
        let l = WalLayout::new(MB16);
        let mut at_boundary = WalCursor::new(l, 5 * XLOG_BLCKSZ);
        let mut after_header = WalCursor::new(l, 5 * XLOG_BLCKSZ + SHORT_PAGE_HEADER);
        at_boundary.append(100, false);
        after_header.append(100, false);
        assert_eq!(at_boundary.bytes(), 104);
        assert_eq!(after_header.bytes(), 104);
    }
}
