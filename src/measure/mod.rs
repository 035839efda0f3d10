//! Measurements that several SQL functions share, so that no file of `api/` calls another:
//! codecs built from method text, a relation's full-page images, WAL replayed through the
//! what-if, the range of WAL to read, sample sizes.

use std::ops::ControlFlow;
use std::time::Instant;

use compresslab_core::advisor::wal::pieces::RecordSeen;
use compresslab_core::lab::{Codec, Hooks};
use compresslab_core::page::{sample_blocks, Hole};
use compresslab_core::pg_compression::WalCompression;
use compresslab_core::registry::MethodSpec;
use compresslab_core::registry::Named;
use compresslab_core::scenarios::fpi::{FpiEstimator, FpiTotals};
use compresslab_core::scenarios::wal::layout::WalLayout;
use compresslab_core::scenarios::wal::{lsn_text, WalWhatIf, WalWhatIfRow};
use compresslab_core::CodecError;
use pgrx::{PgRelation, PgSqlErrorCode};

use crate::errors::{raise, report, OrRaise};
use crate::server::codecs::versions::wal_built_with;
use crate::server::pages::{is_permanent, read_pages, relation_blocks, PAGES_PER_BATCH};
use crate::server::wal::{self, WalReader, WalSource};
use crate::server::{check_interrupts, codecs, PgHooks};

pub mod advice;
mod sample_wal;

/// Progress NOTICEs this often (bytes of WAL read).
const PROGRESS_EVERY: u64 = 256 << 20;

/// The codec of any method, ours or the server's.
pub fn build_codec(spec: &MethodSpec) -> Box<dyn Codec> {
    codecs::build(spec).or_raise()
}

/// The `wal_compression` settings with the server's codecs, less `lz4` and `zstd` on a server
/// built without them (its liblz4 or libzstd not loaded; `wal_compression` refuses them
/// there too), which a NOTICE names.
pub fn wal_settings() -> Vec<(WalCompression, Option<Box<dyn Codec>>)> {
    let (offered, missing): (Vec<WalCompression>, Vec<WalCompression>) =
        WalCompression::ALL.iter().partition(|&&setting| wal_built_with(setting));
    if !missing.is_empty() {
        let names: Vec<&str> = missing.iter().map(|s| s.name()).collect();
        PgHooks
            .progress(&format!("wal_compression = {} left out: this server was built without them", names.join(", ")));
    }
    offered.into_iter().map(|setting| (setting, setting.server_method().map(|m| build_codec(&m)))).collect()
}

/// Add one relation's full-page images (all pages, or a seeded sample scaled up) to `totals`.
pub fn add_relation(rel: &PgRelation, sample_pages: Option<i32>, seed: i32, totals: &mut FpiTotals) {
    if !is_permanent(rel) {
        return; // unlogged and temporary relations write no WAL
    }
    let nblocks = relation_blocks(rel);
    let blocks = sampled_blocks(nblocks, sample_pages, seed);
    PgHooks.progress(&format!("estimating full-page images of {} ({} of {nblocks} pages)", rel.name(), blocks.len()));
    let settings = wal_settings();
    let mut estimator = FpiEstimator::new(settings);
    for batch in blocks.chunks(PAGES_PER_BATCH) {
        for page in read_pages(rel, batch, Hole::ZeroFilled) {
            estimator.add_page(&page).or_raise();
        }
    }
    let scale = if blocks.is_empty() { 0.0 } else { nblocks as f64 / blocks.len() as f64 };
    totals.add_scaled(estimator.finish(), scale);
}

/// A sample size from SQL, the one convention of every function that samples: NULL means
/// everything, otherwise at least 1.
pub fn sample_size(n: Option<i32>, name: &str) -> Option<i32> {
    if let Some(n) = n.filter(|&n| n < 1) {
        raise(CodecError::invalid(format!("{name} must be at least 1 (or NULL for all), got {n}")));
    }
    n
}

/// The blocks to read: all of `nblocks`, or a seeded sample of `n`.
pub fn sampled_blocks(nblocks: u32, n: Option<i32>, seed: i32) -> Vec<u32> {
    match n {
        None => (0..nblocks).collect(),
        Some(n) => sample_blocks(nblocks, n as u32, seed as u64),
    }
}

fn invalid_range(message: String, hint: &str) -> ! {
    report(PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE, message, Some(hint))
}

/// What a WAL source holds, and how to say that a range is outside it.
struct Readable {
    /// The first LSN it holds, and its segment's name.
    oldest: u64,
    oldest_name: String,
    /// The last LSN that may be read.
    limit: u64,
    /// Said of an end_lsn past `limit`.
    past_limit: String,
    /// Said of a start_lsn before `oldest`, then its hint.
    gone: &'static str,
    gone_hint: &'static str,
    /// The hint of an end_lsn past `limit`.
    end_hint: &'static str,
}

impl Readable {
    fn of(source: &WalSource) -> Readable {
        match source {
            WalSource::PgWal => {
                wal::require_readable_pg_wal();
                let Some((oldest, oldest_name)) = wal::oldest_segment() else {
                    report(PgSqlErrorCode::ERRCODE_UNDEFINED_FILE, "no WAL segment found in pg_wal".into(), None)
                };
                let limit = wal::flush_lsn();
                Readable {
                    oldest,
                    oldest_name,
                    limit,
                    past_limit: format!("is in the future: WAL is flushed up to {}", lsn_text(limit)),
                    gone: "is no longer in pg_wal: the oldest segment there is",
                    gone_hint:
                        "Leave start_lsn NULL to start from the oldest WAL still in pg_wal; wal_keep_size keeps more.",
                    end_hint: "Leave end_lsn NULL to read up to pg_current_wal_flush_lsn().",
                }
            }
            WalSource::Archive(archive) => {
                let ((oldest, oldest_name), (limit, newest_name)) = (archive.oldest(), archive.newest());
                Readable {
                    oldest,
                    oldest_name,
                    limit,
                    past_limit: format!(
                        "is past the WAL in the directory: its newest segment {newest_name} ends at {}",
                        lsn_text(limit)
                    ),
                    gone: "is not in the directory: its oldest segment is",
                    gone_hint: "Leave start_lsn NULL to start from the oldest segment of wal_dir.",
                    end_hint: "Leave end_lsn NULL to read to the end of the newest complete record of wal_dir.",
                }
            }
        }
    }
}

/// The range to read from `source`: defaults (pg_wal: its oldest segment to the flush LSN; a
/// directory: all of it, to the end of its newest complete record), and clear errors for a
/// range that is gone, reversed or ahead, or (a directory) has a gap.
pub fn checked_range(source: &WalSource, start_lsn: Option<i64>, end_lsn: Option<i64>) -> (u64, u64) {
    let Readable { oldest, oldest_name, limit, past_limit, gone, gone_hint, end_hint } = Readable::of(source);
    let start = start_lsn.map_or(oldest, |lsn| lsn as u64);
    let end = end_lsn.map_or(limit, |lsn| lsn as u64);
    if end > limit {
        invalid_range(format!("end_lsn {} {past_limit}", lsn_text(end)), end_hint);
    }
    if start > end {
        invalid_range(
            format!("start_lsn {} is after end_lsn {}", lsn_text(start), lsn_text(end)),
            "Give the earlier LSN as start_lsn.",
        );
    }
    if start < oldest {
        report(
            PgSqlErrorCode::ERRCODE_UNDEFINED_FILE,
            format!("WAL at {} {gone} {oldest_name}, starting at {}", lsn_text(start), lsn_text(oldest)),
            Some(gone_hint),
        );
    }
    if let WalSource::Archive(archive) = source {
        archive.require_contiguous(start, end);
    }
    (start, end)
}

/// Replay `[start, end)` of `source` (checked by the caller) through the what-if. After each
/// record, `after_record` is told what the record is ([`RecordSeen`]: its LSNs, images, whether
/// it writes pages whole, and the time commits, aborts and checkpoints carry, in microseconds)
/// and may stop the replay: the what-if then covers the records read so far (its `end_lsn`
/// says where it stopped).
pub fn replay_range(
    source: &WalSource,
    start: u64,
    end: u64,
    sample: f64,
    after_record: &mut dyn FnMut(&RecordSeen) -> ControlFlow<()>,
) -> WalWhatIf {
    let settings = wal_settings();
    let offered: Vec<WalCompression> = settings.iter().map(|(setting, _)| *setting).collect();
    let mut whatif = WalWhatIf::new(WalLayout::new(source.segment_size()), settings, sample).or_raise();
    // Our pglz and LZ4 write the server's bytes and are faster: they size every image, the
    // server's routines run (timed, compared) on one batch in TIMED_EVERY.
    for setting in offered {
        if let Some(ours) = setting.sizer() {
            whatif.size_with(setting, build_codec(&ours)).or_raise();
        }
    }
    let clock = Instant::now();
    let mut reader = WalReader::open(source, start, end);
    let (mut last_end, mut next_progress) = (start, start + PROGRESS_EVERY);
    while let Some(mut record) = reader.next() {
        check_interrupts();
        let header = record.header();
        let time = record.timestamp();
        let whole_page = record.writes_whole_pages();
        let (images, ids) = record.images();
        whatif
            .add_record(header, &images, &mut |i, page| {
                record.restore(ids[i], page);
                Ok(())
            })
            .or_raise();
        last_end = record.end_lsn();
        let seen = RecordSeen {
            lsn: header.lsn,
            end_lsn: last_end,
            images: images.len() as u64,
            image_bytes: images.iter().map(|i| i.bytes_in_record()).sum(),
            whole_page,
            time,
        };
        if after_record(&seen).is_break() {
            break;
        }
        if last_end >= next_progress {
            next_progress += PROGRESS_EVERY;
            let done = (last_end - start) as f64 / (end - start).max(1) as f64;
            PgHooks.progress(&format!(
                "wal_whatif: read {} MB of {} MB of WAL ({:.0}%), {:.1} s",
                (last_end - start) >> 20,
                (end - start) >> 20,
                100.0 * done,
                clock.elapsed().as_secs_f64()
            ));
        }
    }
    drop(reader);
    whatif.set_end_lsn(last_end);
    PgHooks.progress(&format!(
        "wal_whatif: read {} MB of WAL from {} to {} in {:.1} s",
        (last_end.max(start) - start) >> 20,
        lsn_text(start),
        lsn_text(last_end.max(start)),
        clock.elapsed().as_secs_f64()
    ));
    whatif
}

/// [`WalWhatIf::finish`], saying in a NOTICE if one of our encoders wrote other bytes than the
/// server's routine (the rest of the range was then sized by the server's).
pub fn finish_whatif(whatif: &mut WalWhatIf) -> Vec<WalWhatIfRow> {
    let rows = whatif.finish().or_raise();
    for setting in whatif.sizers_dropped() {
        PgHooks.progress(&format!(
            "wal_whatif: our {setting} wrote other bytes than the server's on some image; the server's sized the rest"
        ));
    }
    rows
}
