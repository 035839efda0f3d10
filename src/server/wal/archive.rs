//! Archived WAL: the segments in a directory a DBA names (`archive_command`'s target,
//! `pg_receivewal`'s output), read by the server's own reader through callbacks of ours, the
//! way pg_waldump reads a directory: a segment's file name is its timeline and number
//! (`TTTTTTTTXXXXXXXXYYYYYYYY`, `XLogFileName`), the segment size is the one the oldest
//! segment's long page header gives, and pages are read with the server's `WALRead`, which
//! opens and closes segments through `segment_open` / `segment_close`.
//!
//! The directory is checked before reading: one timeline, every file of the segment size, no
//! segment missing in the range read, a `pg_receivewal` `.partial` segment only as the newest
//! (its WAL ends at its first invalid record). Reading stops cleanly where the directory's WAL
//! ends: at a page past its newest segment, the page callback says "no more" and the reader
//! ends at the last complete record.

use std::collections::BTreeMap;
use std::ffi::{c_char, c_int};
use std::fs::File;
use std::io::Read;
use std::os::fd::{FromRawFd, IntoRawFd};
use std::path::{Path, PathBuf};

use compresslab_core::scenarios::wal::lsn_text;
use pgrx::{notice, pg_guard, pg_sys, PgSqlErrorCode};

use crate::errors::report;
use crate::server::files::{open_regular, os_message};

/// A segment file of the directory.
#[derive(Clone)]
struct Segment {
    file_name: String,
    partial: bool,
}

/// The WAL segments of one directory, one timeline.
#[derive(Clone)]
pub struct Archive {
    dir: String,
    pub timeline: u32,
    pub segment_size: u64,
    segments: BTreeMap<u64, Segment>,
}

/// What the page callback needs: the archive, and whether it ran out of WAL.
pub struct ArchivePrivate {
    pub archive: Archive,
    pub end_of_wal: bool,
}

fn io_error(what: String, e: &std::io::Error) -> ! {
    let code = match e.kind() {
        std::io::ErrorKind::NotFound => PgSqlErrorCode::ERRCODE_UNDEFINED_FILE,
        std::io::ErrorKind::PermissionDenied => PgSqlErrorCode::ERRCODE_INSUFFICIENT_PRIVILEGE,
        _ => PgSqlErrorCode::ERRCODE_IO_ERROR,
    };
    report(code, format!("{what}: {}", os_message(e)), None)
}

/// The timeline, log and segment of a segment file name, and whether it is `.partial`.
pub(super) fn parse_name(name: &str) -> Option<(u32, u64, u64, bool)> {
    let (stem, partial) = match name.strip_suffix(".partial") {
        Some(stem) => (stem, true),
        None => (name, false),
    };
    // Upper-case hexadecimal only, as the server writes them (IsXLogFileName).
    if stem.len() != 24 || !stem.bytes().all(|b| b.is_ascii_digit() || (b'A'..=b'F').contains(&b)) {
        return None;
    }
    let field = |i: usize| u32::from_str_radix(&stem[i..i + 8], 16).ok();
    Some((field(0)?, field(8)? as u64, field(16)? as u64, partial))
}

/// A segment file of the directory opened for reading, or None (with a NOTICE) if it is not a
/// regular file: a FIFO named like a segment would otherwise block the backend in `open()`.
fn open_segment(dir: &str, name: &str) -> Option<File> {
    let path = PathBuf::from(dir).join(name);
    let file = open_regular(&path)
        .unwrap_or_else(|e| io_error(format!("could not open WAL segment \"{}\"", path.display()), &e));
    if file.is_none() {
        notice!("compresslab: {name} in \"{dir}\" skipped: it is not a regular file");
    }
    file
}

/// The system identifier in a segment's long page header, if the file starts with one (a
/// `.partial` segment pg_receivewal has only begun may start with zeros; a file too short or
/// not WAL is left to the checks of the segment size and to the reader).
fn header_system_identifier(file: &mut File) -> Option<u64> {
    let mut header = [0u8; std::mem::size_of::<pg_sys::XLogLongPageHeaderData>()];
    file.read_exact(&mut header).ok()?;
    // SAFETY: the buffer holds a whole XLogLongPageHeaderData, read unaligned.
    let long: pg_sys::XLogLongPageHeaderData = unsafe { std::ptr::read_unaligned(header.as_ptr().cast()) };
    let is_long =
        long.std.xlp_magic as u32 == pg_sys::XLOG_PAGE_MAGIC && long.std.xlp_info as u32 & pg_sys::XLP_LONG_HEADER != 0;
    is_long.then_some(long.xlp_sysid)
}

/// This cluster's system identifier (`pg_control_system()`'s), which its WAL carries.
fn system_identifier() -> u64 {
    // SAFETY: reads the control file's copy in shared memory, set at start-up.
    unsafe { pg_sys::GetSystemIdentifier() }
}

/// The segment size the long header of a segment's first page gives.
fn header_segment_size(mut file: File, path: &Path, name: &str) -> u64 {
    let mut header = [0u8; std::mem::size_of::<pg_sys::XLogLongPageHeaderData>()];
    file.read_exact(&mut header)
        .unwrap_or_else(|e| io_error(format!("could not read WAL segment \"{}\"", path.display()), &e));
    // SAFETY: the buffer holds a whole XLogLongPageHeaderData, read unaligned.
    let long: pg_sys::XLogLongPageHeaderData = unsafe { std::ptr::read_unaligned(header.as_ptr().cast()) };
    if long.std.xlp_magic as u32 != pg_sys::XLOG_PAGE_MAGIC {
        report(
            PgSqlErrorCode::ERRCODE_DATA_CORRUPTED,
            format!(
                "WAL segment {name} has page magic {:04X}, not {:04X}",
                long.std.xlp_magic,
                pg_sys::XLOG_PAGE_MAGIC
            ),
            Some("It is not WAL of this PostgreSQL major version, or not WAL at all."),
        );
    }
    let size = long.xlp_seg_size as u64;
    let valid = long.std.xlp_info as u32 & pg_sys::XLP_LONG_HEADER != 0
        && size.is_power_of_two()
        && ((1 << 20)..=(1 << 30)).contains(&size);
    if !valid {
        report(
            PgSqlErrorCode::ERRCODE_DATA_CORRUPTED,
            format!("WAL segment {name} does not start with a valid long page header (segment size {size})"),
            None,
        );
    }
    size
}

impl Archive {
    /// Scan `dir`: its segment files, their timeline and size; a file that is not a regular
    /// file, or WAL of another cluster, is skipped with a NOTICE. Errors: the directory missing
    /// (58P01) or unreadable (42501), no segment, only segments of another cluster (55000),
    /// several timelines, a file not of the segment size, a `.partial` segment that is not the
    /// newest.
    pub fn scan(dir: &str) -> Archive {
        let entries =
            std::fs::read_dir(dir).unwrap_or_else(|e| io_error(format!("could not open WAL directory \"{dir}\""), &e));
        let mut found: Vec<(u32, u64, u64, bool, String)> = Vec::new();
        let mut compressed = 0;
        // Segments of another cluster: how many, and one's system identifier.
        let ours = system_identifier();
        let (mut foreign, mut foreign_id) = (0, 0);
        for entry in entries {
            let entry = entry.unwrap_or_else(|e| io_error(format!("could not read WAL directory \"{dir}\""), &e));
            let Ok(name) = entry.file_name().into_string() else { continue };
            match parse_name(&name) {
                // Only regular files: a FIFO or device would block in open() or read().
                Some((tli, log, seg, partial)) => {
                    let Some(mut file) = open_segment(dir, &name) else { continue };
                    // Each segment's long header, not only the oldest's: relations are named
                    // through this cluster's catalogue, so another cluster's WAL would be
                    // measured and named as if it were this one's.
                    match header_system_identifier(&mut file) {
                        Some(theirs) if theirs != ours => {
                            notice!(
                                "compresslab: {name} in \"{dir}\" skipped: it is WAL of another cluster \
                                 (system identifier {theirs}; this cluster's is {ours})"
                            );
                            (foreign, foreign_id) = (foreign + 1, theirs);
                        }
                        _ => found.push((tli, log, seg, partial, name)),
                    }
                }
                None if name.len() > 24
                    && parse_name(&name[..24]).is_some()
                    && [".gz", ".lz4", ".zst"].iter().any(|ext| name.ends_with(ext)) =>
                {
                    compressed += 1
                }
                None => {}
            }
        }
        found.sort();
        let Some(oldest) = found.first().cloned() else {
            if foreign > 0 {
                report(
                    PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                    format!(
                        "no WAL segment of this cluster in \"{dir}\": its {foreign} segment(s) are WAL of another \
                         cluster (system identifier {foreign_id}; this cluster's is {ours})"
                    ),
                    Some("Name the directory this cluster's archive_command copies segments to, or pg_receivewal's for this cluster."),
                );
            }
            let hint = if compressed > 0 {
                format!("It holds {compressed} compressed segment(s): decompress them into a directory first.")
            } else {
                "Name the directory archive_command copies segments to, or pg_receivewal's.".into()
            };
            report(PgSqlErrorCode::ERRCODE_UNDEFINED_FILE, format!("no WAL segment in \"{dir}\""), Some(&hint))
        };
        let timeline = oldest.0;
        if let Some(other) = found.iter().find(|f| f.0 != timeline) {
            report(
                PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                format!(
                    "\"{dir}\" holds WAL of more than one timeline: {} (timeline {timeline}) and {} (timeline {})",
                    oldest.4, other.4, other.0
                ),
                Some("Copy the segments of one timeline into a directory of their own."),
            );
        }
        let path = |name: &str| PathBuf::from(dir).join(name);
        // (Replaced by a non-regular file since it was listed: an ERROR, as for any segment
        // the reader opens.)
        let segment_size = header_segment_size(open_asked_segment(&path(&oldest.4)), &path(&oldest.4), &oldest.4);
        let per_log = 0x1_0000_0000 / segment_size;
        let mut segments = BTreeMap::new();
        for (_, log, seg, partial, file_name) in found {
            let len = std::fs::metadata(path(&file_name))
                .unwrap_or_else(|e| io_error(format!("could not stat WAL segment \"{file_name}\""), &e))
                .len();
            if len != segment_size || seg >= per_log {
                report(
                    PgSqlErrorCode::ERRCODE_DATA_CORRUPTED,
                    format!(
                        "WAL segment {file_name} in \"{dir}\" has {len} bytes, not the segment size {segment_size} of {}",
                        oldest.4
                    ),
                    Some("Every segment of a directory must come from the same cluster, whole."),
                );
            }
            // A whole segment wins over pg_receivewal's .partial of the same number.
            let entry =
                segments.entry(log * per_log + seg).or_insert(Segment { file_name: file_name.clone(), partial });
            if entry.partial && !partial {
                *entry = Segment { file_name, partial };
            }
        }
        let archive = Archive { dir: dir.to_string(), timeline, segment_size, segments };
        if let Some((_, s)) = archive.segments.iter().rev().skip(1).find(|(_, s)| s.partial) {
            report(
                PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                format!("{} in \"{dir}\" is not the newest segment", s.file_name),
                Some("Only the newest segment may be partial (pg_receivewal's segment in progress)."),
            );
        }
        archive
    }

    /// Where the oldest segment starts, and its file name.
    pub fn oldest(&self) -> (u64, String) {
        let (segno, s) = self.segments.first_key_value().expect("scan found a segment");
        (segno * self.segment_size, s.file_name.clone())
    }

    /// Where the newest segment ends, and its file name.
    pub fn newest(&self) -> (u64, String) {
        let (segno, s) = self.segments.last_key_value().expect("scan found a segment");
        ((segno + 1) * self.segment_size, s.file_name.clone())
    }

    /// The name a segment would have (XLogFileName).
    fn segment_name(&self, segno: u64) -> String {
        let per_log = 0x1_0000_0000 / self.segment_size;
        format!("{:08X}{:08X}{:08X}", self.timeline, segno / per_log, segno % per_log)
    }

    /// ERROR naming the first segment missing from `[start, end)`.
    pub fn require_contiguous(&self, start: u64, end: u64) {
        if end <= start {
            return;
        }
        let (first, last) = (start / self.segment_size, (end - 1) / self.segment_size);
        if let Some(missing) = (first..=last).find(|segno| !self.segments.contains_key(segno)) {
            report(
                PgSqlErrorCode::ERRCODE_UNDEFINED_FILE,
                format!(
                    "WAL segment {} is missing from \"{}\": the WAL from {} to {} has a gap",
                    self.segment_name(missing),
                    self.dir,
                    lsn_text(start),
                    lsn_text(end)
                ),
                Some("Restore the missing segment, or choose a range on one side of the gap."),
            );
        }
    }

    /// Whether a record failing at `lsn` may be the end of the `.partial` segment's WAL (the
    /// rest of the file is zeros): `lsn` in it, or in the segment before (a record crossing
    /// into it).
    pub fn in_partial(&self, lsn: u64) -> bool {
        let segno = lsn / self.segment_size;
        [segno, segno + 1].iter().any(|n| self.segments.get(n).is_some_and(|s| s.partial))
    }
}

/// The reader's `page_read`: one page of the directory's WAL through `WALRead`, or -1 past the
/// newest segment (the end of the WAL; `end_of_wal` says so).
///
/// # Safety
/// Called by the WAL reader only, with a reader whose private data is an [`ArchivePrivate`].
#[pg_guard]
pub unsafe extern "C-unwind" fn archive_page_read(
    state: *mut pg_sys::XLogReaderState,
    target_page: pg_sys::XLogRecPtr,
    _req_len: c_int,
    _target_rec: pg_sys::XLogRecPtr,
    cur_page: *mut c_char,
) -> c_int {
    // A cancel is seen at every page, also inside one huge record.
    pgrx::check_for_interrupts!();
    // SAFETY: the reader passes itself; private_data is the ArchivePrivate WalReader keeps
    // alive for the reader's life.
    let private = unsafe { &mut *((*state).private_data as *mut ArchivePrivate) };
    let segno = target_page / private.archive.segment_size;
    // SAFETY: the reader's own field; the timeline of every page read is the directory's.
    unsafe { (*state).currTLI = private.archive.timeline };
    if !private.archive.segments.contains_key(&segno) {
        private.end_of_wal = true;
        return -1;
    }
    // SAFETY: a zeroed WALReadError is its initial state.
    let mut errinfo: pg_sys::WALReadError = unsafe { std::mem::zeroed() };
    let count = pg_sys::XLOG_BLCKSZ as usize;
    // SAFETY: cur_page has XLOG_BLCKSZ bytes (the reader's page buffer); WALRead opens
    // segments through archive_segment_open.
    let ok =
        unsafe { pg_sys::WALRead(state, cur_page, target_page, count as _, private.archive.timeline, &mut errinfo) };
    if !ok {
        let name = private.archive.segment_name(segno);
        if errinfo.wre_errno != 0 {
            let e = std::io::Error::from_raw_os_error(errinfo.wre_errno);
            io_error(format!("could not read WAL segment {name} at offset {}", errinfo.wre_off), &e);
        }
        report(
            PgSqlErrorCode::ERRCODE_DATA_CORRUPTED,
            format!(
                "could not read WAL segment {name} at offset {}: read {} of {}",
                errinfo.wre_off, errinfo.wre_read, errinfo.wre_req
            ),
            None,
        );
    }
    count as c_int
}

/// The reader's `segment_open`: the segment's file in the directory.
///
/// # Safety
/// As for [`archive_page_read`].
#[pg_guard]
pub unsafe extern "C-unwind" fn archive_segment_open(
    state: *mut pg_sys::XLogReaderState,
    seg_no: pg_sys::XLogSegNo,
    _tli: *mut pg_sys::TimeLineID,
) {
    // SAFETY: as in archive_page_read.
    let private = unsafe { &*((*state).private_data as *const ArchivePrivate) };
    let archive = &private.archive;
    let Some(segment) = archive.segments.get(&seg_no) else {
        report(
            PgSqlErrorCode::ERRCODE_UNDEFINED_FILE,
            format!("WAL segment {} is missing from \"{}\"", archive.segment_name(seg_no), archive.dir),
            None,
        )
    };
    let path = PathBuf::from(&archive.dir).join(&segment.file_name);
    let file = open_asked_segment(&path);
    // SAFETY: the reader's own segment slot; archive_segment_close closes the descriptor.
    unsafe { (*state).seg.ws_file = file.into_raw_fd() };
}

/// A segment file the WAL read needs: an ERROR if it cannot be opened or is not a regular file
/// (replaced by one since the directory was scanned).
fn open_asked_segment(path: &Path) -> File {
    let opened = open_regular(path)
        .unwrap_or_else(|e| io_error(format!("could not open WAL segment \"{}\"", path.display()), &e));
    opened.unwrap_or_else(|| {
        report(
            PgSqlErrorCode::ERRCODE_WRONG_OBJECT_TYPE,
            format!("WAL segment \"{}\" is not a regular file", path.display()),
            None,
        )
    })
}

/// The reader's `segment_close`.
///
/// # Safety
/// Called by the WAL reader only, with the segment archive_segment_open opened.
#[pg_guard]
pub unsafe extern "C-unwind" fn archive_segment_close(state: *mut pg_sys::XLogReaderState) {
    // SAFETY: ws_file is the descriptor archive_segment_open took from a File; it is closed
    // once, here, and marked closed.
    unsafe {
        drop(File::from_raw_fd((*state).seg.ws_file));
        (*state).seg.ws_file = -1;
    }
}
