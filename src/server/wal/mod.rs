//! The server's WAL, read with its own reader (xlogreader.c) the way PostgreSQL 15's
//! pg_walinspect does: `XLogReaderAllocate` with `read_local_xlog_page_no_wait`, which reads
//! segments from `pg_wal` up to the flush pointer and never waits for more. A record the reader
//! cannot decode is an ERROR naming the LSN; a segment that is gone is the reader's own ERROR
//! naming the segment. The reader is freed (and its segment file closed) when [`WalReader`]
//! drops, on success and on ERROR alike.

pub mod archive;

use std::ffi::{c_char, c_int, CStr};
use std::ptr::NonNull;

use compresslab_core::pg_compression::WalCompression;
use compresslab_core::scenarios::wal::layout::WalLayout;
use compresslab_core::scenarios::wal::{lsn_text, ImageRef, RecordRef, RelationKey};
use pgrx::{check_for_interrupts, notice, pg_guard, pg_sys, PgSqlErrorCode};

use super::catalog::names::{self, quote_identifier};
use crate::errors::report;
use archive::{Archive, ArchivePrivate};

// The reader's callbacks, declared here to take their C addresses (pgrx's bindings wrap them
// in Rust functions), and RelidByRelfilenumber, which pgrx does not bind: each as 15's to 19's
// headers declare it. The callbacks are only ever called by the reader itself.
unsafe extern "C-unwind" {
    fn read_local_xlog_page_no_wait(
        state: *mut pg_sys::XLogReaderState,
        target_page: pg_sys::XLogRecPtr,
        req_len: c_int,
        target_rec: pg_sys::XLogRecPtr,
        cur_page: *mut c_char,
    ) -> c_int;
    fn wal_segment_open(state: *mut pg_sys::XLogReaderState, seg_no: pg_sys::XLogSegNo, tli: *mut pg_sys::TimeLineID);
    fn wal_segment_close(state: *mut pg_sys::XLogReaderState);
    // PostgreSQL 16 renamed RelidByRelfilenode to RelidByRelfilenumber (same arguments).
    #[cfg(feature = "pg15")]
    #[link_name = "RelidByRelfilenode"]
    fn relid_by_relfilenumber(tablespace: pg_sys::Oid, relfilenode: pg_sys::Oid) -> pg_sys::Oid;
    #[cfg(not(feature = "pg15"))]
    #[link_name = "RelidByRelfilenumber"]
    fn relid_by_relfilenumber(tablespace: pg_sys::Oid, relfilenode: pg_sys::Oid) -> pg_sys::Oid;
}

/// The first record at or after `start`, or 0. PostgreSQL 19 also returns why it found none;
/// the message said here stays the same on every major.
///
/// # Safety
/// `state` is a live reader whose callbacks can read from `start`.
unsafe fn find_next_record(state: *mut pg_sys::XLogReaderState, start: pg_sys::XLogRecPtr) -> pg_sys::XLogRecPtr {
    #[cfg(not(feature = "pg19"))]
    // SAFETY: the caller's.
    return unsafe { pg_sys::XLogFindNextRecord(state, start) };
    #[cfg(feature = "pg19")]
    {
        let mut why: *mut c_char = std::ptr::null_mut();
        // SAFETY: the caller's; `why` is left NULL or pointed at the reader's own buffer.
        unsafe { pg_sys::XLogFindNextRecord(state, start, &mut why) }
    }
}

/// The reader's page callback: the server's `read_local_xlog_page_no_wait`, after a check for
/// cancel. One record of hundreds of MB (a logical message) is read page by page inside one
/// `XLogReadRecord` call, which checks for nothing: without this, a cancel waited for the
/// whole record (3.4 s for 400 MB in 0.5.0). An ERROR here leaves the reader as the
/// server's own page readers do when they wait for WAL and are cancelled; `WalReader`'s drop
/// frees it.
#[pg_guard]
unsafe extern "C-unwind" fn read_page_checking_interrupts(
    state: *mut pg_sys::XLogReaderState,
    target_page: pg_sys::XLogRecPtr,
    req_len: c_int,
    target_rec: pg_sys::XLogRecPtr,
    cur_page: *mut c_char,
) -> c_int {
    check_for_interrupts!();
    // SAFETY: the reader calls us with its own arguments, which we pass on unchanged to the
    // callback `open` would otherwise have given it.
    unsafe { read_local_xlog_page_no_wait(state, target_page, req_len, target_rec, cur_page) }
}

/// `wal_segment_size` of this cluster.
pub fn segment_size() -> u64 {
    // SAFETY: a GUC the server sets at start-up and never changes.
    unsafe { pg_sys::wal_segment_size as u64 }
}

fn in_recovery() -> bool {
    // SAFETY: reads shared memory.
    unsafe { pg_sys::RecoveryInProgress() }
}

/// The end of what may be read from pg_wal, and its timeline: the WAL flushed so far, or on a
/// standby the WAL replayed so far (what read_local_xlog_page_no_wait reads up to).
fn readable_end() -> (u64, u32) {
    let mut timeline: pg_sys::TimeLineID = 0;
    // SAFETY: both read shared memory under the server's own locks; the replay pointer is
    // what a standby's WAL reader may read up to.
    let end = unsafe {
        if in_recovery() {
            pg_sys::GetXLogReplayRecPtr(&mut timeline)
        } else {
            pg_sys::GetFlushRecPtr(&mut timeline)
        }
    };
    (end, timeline)
}

/// The end of what may be read from pg_wal: the flush LSN, or on a standby the replay LSN.
pub fn flush_lsn() -> u64 {
    readable_end().0
}

/// WAL the reader cannot decode: `data_corrupted`, the message naming the LSN.
fn unreadable(message: String, hint: Option<&str>) -> ! {
    report(PgSqlErrorCode::ERRCODE_DATA_CORRUPTED, message, hint)
}

/// The segments in `pg_wal` of the timeline being written (on a standby: replayed): where
/// each starts, and its name, oldest first.
fn pg_wal_segments() -> Vec<(u64, String)> {
    let timeline = readable_end().1;
    let segments_per_xlogid = 0x1_0000_0000 / segment_size();
    let mut segments: Vec<(u64, String)> = std::fs::read_dir("pg_wal")
        .map(|dir| {
            dir.filter_map(|entry| entry.ok()?.file_name().into_string().ok())
                .filter_map(|name| match archive::parse_name(&name)? {
                    (tli, log, seg, false) if tli == timeline => {
                        Some(((log * segments_per_xlogid + seg) * segment_size(), name))
                    }
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    segments.sort();
    segments
}

/// The LSN where the oldest WAL segment still in `pg_wal` of the timeline being written (on
/// a standby: replayed) starts, and the segment's name.
pub fn oldest_segment() -> Option<(u64, String)> {
    pg_wal_segments().into_iter().next()
}

/// The oldest segment of `pg_wal` from which none is missing up to the one the readable end
/// (the flush LSN, or the replay LSN) is in: where reading starts again when an older segment
/// is gone (removed by a checkpoint after it was listed, or missing).
pub fn oldest_contiguous_segment() -> Option<(u64, String)> {
    let size = segment_size();
    let last = flush_lsn().saturating_sub(1) / size * size;
    let segments = pg_wal_segments();
    let mut run = segments.iter().rev().skip_while(|(lsn, _)| *lsn > last);
    let mut oldest = run.next()?;
    for segment in run {
        if segment.0 + size != oldest.0 {
            break;
        }
        oldest = segment;
    }
    Some(oldest.clone())
}

/// On PostgreSQL 15, refuse to read pg_wal on a standby (its pg_walinspect refuses too; 16
/// made the reader's use during recovery supported): the archive (`wal_dir`) still reads.
pub fn require_readable_pg_wal() {
    if cfg!(feature = "pg15") && in_recovery() {
        report(
            PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
            "recovery is in progress: PostgreSQL 15 cannot read pg_wal with its WAL reader on a standby".into(),
            Some("Run wal_whatif on the primary, or give wal_dir a directory of archived segments; PostgreSQL 16 and later read pg_wal on a standby."),
        );
    }
}

/// Whether `dir` (relative to the data directory, or absolute) is the directory `pg_wal` is:
/// the same device and inode, whatever path or symlink leads to it.
fn is_pg_wal(dir: &str) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(dir), std::fs::metadata("pg_wal")) {
        (Ok(a), Ok(b)) => a.is_dir() && (a.dev(), a.ino()) == (b.dev(), b.ino()),
        _ => false,
    }
}

/// Where WAL is read from: the server's `pg_wal`, or a directory of archived segments.
pub enum WalSource {
    PgWal,
    Archive(Archive),
}

impl WalSource {
    /// `pg_wal`, or the segments of `wal_dir` (scanned and checked now). A `wal_dir` that is
    /// this server's `pg_wal` (`'pg_wal'`, its absolute path, a symlink to it, any path that
    /// leads to it) is read as `pg_wal`, up to the flush LSN: read as an archive, its newest
    /// segment, still being written or recycled, would look like damaged WAL. Except on a
    /// standby of PostgreSQL 15, whose WAL reader cannot read `pg_wal` during recovery
    /// ([`require_readable_pg_wal`]): there it is read as a directory, the way out that
    /// ERROR names (the segments a standby holds were written by its primary).
    pub fn open(wal_dir: Option<&str>) -> WalSource {
        let readable_as_pg_wal = !(cfg!(feature = "pg15") && in_recovery());
        match wal_dir {
            None => WalSource::PgWal,
            Some(dir) if readable_as_pg_wal && is_pg_wal(dir) => {
                notice!("compresslab: wal_dir \"{dir}\" is this server's pg_wal: read as pg_wal, up to the flush LSN");
                WalSource::PgWal
            }
            Some(dir) => WalSource::Archive(Archive::scan(dir)),
        }
    }

    pub fn segment_size(&self) -> u64 {
        match self {
            WalSource::PgWal => segment_size(),
            WalSource::Archive(archive) => archive.segment_size,
        }
    }
}

/// The reader's private data: the server's for `pg_wal`, ours for a directory.
enum Private {
    Local(*mut pg_sys::ReadLocalXLogPageNoWaitPrivate),
    Archive(Box<ArchivePrivate>),
}

/// A reader over `[start, end)`: records that start in the range.
pub struct WalReader {
    state: NonNull<pg_sys::XLogReaderState>,
    end: u64,
    layout: WalLayout,
    timeline: Option<u32>,
    done: bool,
    // Dropped after the reader (Drop::drop frees it first): its callbacks use this.
    private: Private,
}

/// The record the reader stands on.
pub struct Record<'a> {
    reader: &'a mut WalReader,
}

impl WalReader {
    /// Open a reader of `source` at the first record that starts at or after `start`.
    pub fn open(source: &WalSource, start: u64, end: u64) -> WalReader {
        let (mut routine, mut private) = match source {
            WalSource::PgWal => (
                pg_sys::XLogReaderRoutine {
                    page_read: Some(read_page_checking_interrupts),
                    segment_open: Some(wal_segment_open),
                    segment_close: Some(wal_segment_close),
                },
                // SAFETY: palloc0 of the private struct read_local_xlog_page_no_wait expects.
                Private::Local(unsafe {
                    pg_sys::palloc0(std::mem::size_of::<pg_sys::ReadLocalXLogPageNoWaitPrivate>()).cast()
                }),
            ),
            WalSource::Archive(archive) => (
                pg_sys::XLogReaderRoutine {
                    page_read: Some(archive::archive_page_read),
                    segment_open: Some(archive::archive_segment_open),
                    segment_close: Some(archive::archive_segment_close),
                },
                Private::Archive(Box::new(ArchivePrivate { archive: archive.clone(), end_of_wal: false })),
            ),
        };
        let private_ptr: *mut std::ffi::c_void = match &mut private {
            Private::Local(p) => (*p).cast(),
            Private::Archive(b) => (b.as_mut() as *mut ArchivePrivate).cast(),
        };
        // SAFETY: the reader copies `routine`; `private` lives in the WalReader as long as the
        // reader; a NULL state is the reader's out-of-memory, raised below.
        let state = unsafe {
            pg_sys::XLogReaderAllocate(source.segment_size() as c_int, std::ptr::null(), &mut routine, private_ptr)
        };
        let Some(state) = NonNull::new(state) else {
            report(PgSqlErrorCode::ERRCODE_OUT_OF_MEMORY, "out of memory allocating a WAL reader".into(), None)
        };
        // The reader then refuses a page of another cluster's WAL ("WAL file is from different
        // database system"), also in a segment replaced after the directory was scanned.
        // SAFETY: a field of the reader just allocated, read by its page-header checks.
        unsafe { (*state.as_ptr()).system_identifier = pg_sys::GetSystemIdentifier() };
        let layout = WalLayout::new(source.segment_size());
        let mut reader = WalReader { state, end, layout, timeline: None, done: false, private };
        // SAFETY: a live reader; XLogFindNextRecord reads pages through the callbacks.
        let first = unsafe { find_next_record(reader.state.as_ptr(), start) };
        if first == 0 {
            if reader.end_of_wal() || reader.in_partial(start) {
                reader.done = true; // no record starts between `start` and the end of the WAL
            } else {
                unreadable(
                    format!("could not find a valid WAL record at or after {}", lsn_text(start)),
                    Some("The WAL there may be damaged."),
                );
            }
        }
        reader
    }

    fn end_of_wal(&self) -> bool {
        match &self.private {
            // SAFETY: the ReadLocalXLogPageNoWaitPrivate allocated in `open`.
            Private::Local(p) => unsafe { (**p).end_of_wal },
            Private::Archive(b) => b.end_of_wal,
        }
    }

    /// Whether `lsn` is in pg_receivewal's `.partial` segment, whose WAL ends at its first
    /// invalid record (the rest of the file is zeros).
    fn in_partial(&self, lsn: u64) -> bool {
        matches!(&self.private, Private::Archive(b) if b.archive.in_partial(lsn))
    }

    /// The next record that starts before the end, or None.
    pub fn next(&mut self) -> Option<Record<'_>> {
        // SAFETY: a field of a live reader: the end of the record read last (the first
        // record's start before the first read).
        let last_end = unsafe { self.state.as_ref().EndRecPtr };
        // The next record would start at or past `end`: not read, as it may not exist yet (the
        // end of a standby's WAL, or of an archive's last segment read as it is written).
        if self.done || self.layout.next_record_start(last_end) >= self.end {
            self.done = true;
            return None;
        }
        let mut errormsg: *mut c_char = std::ptr::null_mut();
        // SAFETY: a live reader; the record it returns stays valid until the next read.
        let record = unsafe { pg_sys::XLogReadRecord(self.state.as_ptr(), &mut errormsg) };
        // SAFETY: fields of a live reader.
        let (read_lsn, next_lsn, tli) = unsafe {
            let s = self.state.as_ref();
            (s.ReadRecPtr, s.EndRecPtr, s.currTLI)
        };
        if record.is_null() {
            if self.end_of_wal() || self.in_partial(next_lsn) {
                self.done = true;
                return None;
            }
            let why = if errormsg.is_null() {
                "the record could not be decoded".to_string()
            } else {
                // SAFETY: the reader's NUL-terminated error buffer.
                unsafe { CStr::from_ptr(errormsg) }.to_string_lossy().into_owned()
            };
            unreadable(format!("could not read WAL at {}: {why}", lsn_text(next_lsn)), None);
        }
        if read_lsn >= self.end {
            self.done = true;
            return None;
        }
        match self.timeline {
            None => self.timeline = Some(tli),
            Some(first) if first != tli => report(
                PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                format!("the WAL range switches from timeline {first} to timeline {tli} at {}", lsn_text(read_lsn)),
                Some("Choose a range within one timeline."),
            ),
            Some(_) => {}
        }
        Some(Record { reader: self })
    }
}

impl Drop for WalReader {
    fn drop(&mut self) {
        // SAFETY: the reader was allocated by XLogReaderAllocate and is freed once; freeing it
        // closes its open segment.
        unsafe { pg_sys::XLogReaderFree(self.state.as_ptr()) }
    }
}

impl Record<'_> {
    fn decoded(&self) -> &pg_sys::DecodedXLogRecord {
        // SAFETY: after a successful XLogReadRecord, `record` points at the decoded record.
        unsafe { &*self.reader.state.as_ref().record }
    }

    fn blocks(&self) -> &[pg_sys::DecodedBkpBlock] {
        let record = self.decoded();
        // SAFETY: the decoded record holds max_block_id + 1 block slots.
        unsafe { record.blocks.as_slice((record.max_block_id + 1).max(0) as usize) }
    }

    /// LSN, `xl_tot_len`, and whether it is an `XLOG_SWITCH`.
    pub fn header(&self) -> RecordRef {
        let record = self.decoded();
        let info = record.header.xl_info as u32 & !pg_sys::XLR_INFO_MASK;
        RecordRef {
            lsn: record.lsn,
            total_length: record.header.xl_tot_len,
            is_switch: record.header.xl_rmid as u32 == pg_sys::RmgrIds::RM_XLOG_ID && info == pg_sys::XLOG_SWITCH,
        }
    }

    /// The time the record carries, in microseconds since 2000-01-01 (PostgreSQL's
    /// `TimestampTz`): a transaction's commit or abort time (`xact_time`, the first field of
    /// its main data) or a checkpoint's (`CheckPoint.time`, seconds since 1970). None for
    /// every other record.
    pub fn timestamp(&self) -> Option<i64> {
        let record = self.decoded();
        let info = record.header.xl_info as u32 & !pg_sys::XLR_INFO_MASK;
        let main = |len: usize| {
            // SAFETY: the decoded record's main data holds main_data_len bytes; only read when
            // it holds at least `len`.
            (record.main_data_len as usize >= len && !record.main_data.is_null())
                .then(|| unsafe { std::slice::from_raw_parts(record.main_data.cast::<u8>(), len) })
        };
        match record.header.xl_rmid as u32 {
            pg_sys::RmgrIds::RM_XACT_ID
                if matches!(
                    info & pg_sys::XLOG_XACT_OPMASK,
                    pg_sys::XLOG_XACT_COMMIT
                        | pg_sys::XLOG_XACT_ABORT
                        | pg_sys::XLOG_XACT_COMMIT_PREPARED
                        | pg_sys::XLOG_XACT_ABORT_PREPARED
                ) =>
            {
                main(8).map(|b| i64::from_ne_bytes(b.try_into().unwrap_or_default()))
            }
            pg_sys::RmgrIds::RM_XLOG_ID
                if info == pg_sys::XLOG_CHECKPOINT_SHUTDOWN || info == pg_sys::XLOG_CHECKPOINT_ONLINE =>
            {
                let bytes = main(std::mem::size_of::<pg_sys::CheckPoint>())?;
                // SAFETY: as many bytes as a CheckPoint, read unaligned.
                let checkpoint = unsafe { std::ptr::read_unaligned(bytes.as_ptr().cast::<pg_sys::CheckPoint>()) };
                // seconds since 1970 to microseconds since 2000
                Some((checkpoint.time - 946_684_800) * 1_000_000)
            }
            _ => None,
        }
    }

    /// Whether it is an `XLOG_FPI` record: pages written whole (index builds, `log_newpage`),
    /// not images of pages a change touched first after a checkpoint.
    pub fn writes_whole_pages(&self) -> bool {
        let record = self.decoded();
        let info = record.header.xl_info as u32 & !pg_sys::XLR_INFO_MASK;
        record.header.xl_rmid as u32 == pg_sys::RmgrIds::RM_XLOG_ID && info == pg_sys::XLOG_FPI
    }

    /// The end of the record (the start of the next).
    pub fn end_lsn(&self) -> u64 {
        self.decoded().next_lsn
    }

    /// The full-page images, and for each its block id.
    pub fn images(&self) -> (Vec<ImageRef>, Vec<u8>) {
        let mut images = Vec::new();
        let mut ids = Vec::new();
        for (id, block) in self.blocks().iter().enumerate() {
            if block.in_use && block.has_image {
                // PostgreSQL 16 renamed the block's RelFileNode rnode (spcNode, dbNode, relNode)
                // to RelFileLocator rlocator (spcOid, dbOid, relNumber).
                #[cfg(feature = "pg15")]
                let (tablespace, database, relfilenode) =
                    (block.rnode.spcNode, block.rnode.dbNode, block.rnode.relNode);
                #[cfg(not(feature = "pg15"))]
                let (tablespace, database, relfilenode) =
                    (block.rlocator.spcOid, block.rlocator.dbOid, block.rlocator.relNumber);
                images.push(ImageRef {
                    relation: RelationKey {
                        tablespace: tablespace.into(),
                        database: database.into(),
                        relfilenode: relfilenode.into(),
                        fork: block.forknum as u8,
                    },
                    stored_as: WalCompression::from_bimg_info(block.bimg_info),
                    bimg_len: block.bimg_len,
                    hole_offset: block.hole_offset,
                    hole_length: block.hole_length,
                });
                ids.push(id as u8);
            }
        }
        (images, ids)
    }

    /// The page block `id` images, decompressed by its method and with the hole zero-filled,
    /// into `page` (BLCKSZ bytes).
    pub fn restore(&mut self, id: u8, page: &mut [u8]) {
        assert_eq!(page.len(), pg_sys::BLCKSZ as usize);
        // SAFETY: a live reader standing on this record, a block id it has, and BLCKSZ bytes.
        let ok = unsafe { pg_sys::RestoreBlockImage(self.reader.state.as_ptr(), id, page.as_mut_ptr().cast()) };
        if !ok {
            // SAFETY: the reader's NUL-terminated error buffer, set when RestoreBlockImage fails.
            let why = unsafe { CStr::from_ptr(self.reader.state.as_ref().errormsg_buf) }.to_string_lossy().into_owned();
            let lsn = self.decoded().lsn;
            unreadable(format!("could not restore the full-page image at {}: {why}", lsn_text(lsn)), None);
        }
    }
}

/// A relation fork as `schema.table` (or a description when it is not in this database or no
/// longer exists) and its fork name.
pub fn relation_name(key: &RelationKey) -> (String, String) {
    let fork = match key.fork {
        0 => "main",
        1 => "fsm",
        2 => "vm",
        3 => "init",
        _ => "unknown",
    }
    .to_string();
    // SAFETY: MyDatabaseId is set for the whole session.
    let my_database: u32 = unsafe { pg_sys::MyDatabaseId }.into();
    if key.database != my_database && key.database != 0 {
        // SAFETY: a catalog lookup returning a palloc'd NUL-terminated name, or NULL for an OID
        // no database has.
        let database = unsafe { pg_sys::get_database_name(pg_sys::Oid::from(key.database)) };
        let database = if database.is_null() {
            format!("{} (dropped)", key.database)
        } else {
            // SAFETY: checked non-NULL above.
            quote_identifier(&unsafe { CStr::from_ptr(database) }.to_string_lossy())
        };
        return (format!("(database {database}, relfilenode {})", key.relfilenode), fork);
    }
    // SAFETY: RelidByRelfilenode (RelidByRelfilenumber from 16) does catalog lookups (which may ERROR, hence the guard) and
    // returns InvalidOid for a relfilenode no relation has now.
    let oid = unsafe {
        pg_sys::ffi::pg_guard_ffi_boundary(|| {
            relid_by_relfilenumber(pg_sys::Oid::from(key.tablespace), pg_sys::Oid::from(key.relfilenode))
        })
    };
    if oid == pg_sys::InvalidOid {
        return (format!("(dropped or rewritten: relfilenode {})", key.relfilenode), fork);
    }
    (names::relation_name(oid).unwrap_or_else(|| format!("(relation {})", u32::from(oid))), fork)
}
