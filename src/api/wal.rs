//! WAL what-if in SQL: the server's real WAL replayed under every `wal_compression` setting
//! (the core's `scenarios::wal`), read with the server's own reader (`crate::server::wal`).

use std::time::Instant;

use compresslab_core::lab::Hooks;
use compresslab_core::scenarios::fpi::WAL_SETTINGS;
use compresslab_core::scenarios::wal::layout::WalLayout;
use compresslab_core::scenarios::wal::{lsn_text, WalWhatIf};
use pgrx::prelude::*;
use pgrx::{composite_type, PgSqlErrorCode};

use super::scenarios::codec_of;
use crate::errors::{report, OrRaise};
use crate::rows::set_of;
use crate::server::privileges::require_wal_read;
use crate::server::wal::{self, relation_name, WalReader};
use crate::server::{check_interrupts, PgHooks};

/// Progress NOTICEs this often (bytes of WAL read).
const PROGRESS_EVERY: u64 = 256 << 20;

fn invalid_range(message: String, hint: &str) -> ! {
    report(PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE, message, Some(hint))
}

/// The range to read: defaults, and clear errors for a range that is gone, reversed or ahead.
pub(super) fn checked_range(start_lsn: Option<i64>, end_lsn: Option<i64>) -> (u64, u64) {
    wal::require_primary();
    let flush = wal::flush_lsn();
    let Some((oldest, segment)) = wal::oldest_segment() else {
        report(PgSqlErrorCode::ERRCODE_UNDEFINED_FILE, "no WAL segment found in pg_wal".into(), None)
    };
    let start = start_lsn.map_or(oldest, |lsn| lsn as u64);
    let end = end_lsn.map_or(flush, |lsn| lsn as u64);
    if end > flush {
        invalid_range(
            format!("end_lsn {} is in the future: WAL is flushed up to {}", lsn_text(end), lsn_text(flush)),
            "Leave end_lsn NULL to read up to pg_current_wal_flush_lsn().",
        );
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
            format!(
                "WAL at {} is no longer in pg_wal: the oldest segment there is {segment}, starting at {}",
                lsn_text(start),
                lsn_text(oldest)
            ),
            Some("Leave start_lsn NULL to start from the oldest WAL still in pg_wal; wal_keep_size keeps more."),
        );
    }
    (start, end)
}

/// Read `[start_lsn, end_lsn)` and replay its full-page images under every setting.
fn replay(start_lsn: Option<i64>, end_lsn: Option<i64>, sample: f64, what: &str) -> WalWhatIf {
    require_wal_read(what);
    let (start, end) = checked_range(start_lsn, end_lsn);
    replay_range(start, end, sample, None)
}

/// Replay `[start, end)` (checked by the caller), stopping early at `deadline` if one is given:
/// the what-if then covers the records read so far (its `end_lsn` says where it stopped).
pub(super) fn replay_range(start: u64, end: u64, sample: f64, deadline: Option<Instant>) -> WalWhatIf {
    let settings = WAL_SETTINGS.iter().map(|(name, method)| (name.to_string(), method.map(codec_of))).collect();
    let mut whatif = WalWhatIf::new(WalLayout::new(wal::segment_size()), settings, sample).or_raise();
    let clock = Instant::now();
    let mut reader = WalReader::open(start, end);
    let (mut last_end, mut next_progress) = (start, start + PROGRESS_EVERY);
    while let Some(mut record) = reader.next() {
        check_interrupts();
        let header = record.header();
        let (images, ids) = record.images();
        whatif
            .add_record(header, &images, &mut |i, page| {
                record.restore(ids[i], page);
                Ok(())
            })
            .or_raise();
        last_end = record.end_lsn();
        if deadline.is_some_and(|d| Instant::now() >= d) {
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

/// What the WAL from `start_lsn` (default: the oldest still in pg_wal) to `end_lsn` (default:
/// the flush LSN) would have taken under each wal_compression setting: full-page images
/// rebuilt and compressed with the server's own routines, records laid out as the server lays
/// them out, CPU to write and to replay. `sample` < 1 compresses that fraction of the images
/// and extrapolates. Superuser or pg_read_server_files.
#[pg_extern(
    volatile,
    parallel_restricted,
    sql = r#"
CREATE FUNCTION compresslab."wal_whatif"(
    "start_lsn" pg_catalog.pg_lsn DEFAULT NULL,
    "end_lsn" pg_catalog.pg_lsn DEFAULT NULL,
    "sample" double precision DEFAULT 1.0
) RETURNS SETOF compresslab.wal_whatif_row
VOLATILE PARALLEL RESTRICTED
LANGUAGE c AS 'MODULE_PATHNAME', 'wal_whatif_wrapper';
COMMENT ON FUNCTION compresslab.wal_whatif(pg_catalog.pg_lsn, pg_catalog.pg_lsn, double precision) IS
'What the WAL from start_lsn (default: the oldest in pg_wal) to end_lsn (default: the flush LSN) would take under each wal_compression setting, with the CPU to write and replay its full-page images; sample < 1 compresses that fraction of the images';
"#
)]
fn wal_whatif(
    start_lsn: Option<i64>,
    end_lsn: Option<i64>,
    sample: Option<f64>,
) -> SetOfIterator<'static, composite_type!('static, "compresslab.wal_whatif_row")> {
    let mut whatif = replay(start_lsn, end_lsn, sample.unwrap_or(1.0), "read WAL for wal_whatif");
    set_of("compresslab.wal_whatif_row", &whatif.finish().or_raise())
}

/// `wal_whatif` per relation fork: which relations write the full-page images, and what each
/// setting would store for them. Largest first.
#[pg_extern(
    volatile,
    parallel_restricted,
    sql = r#"
CREATE FUNCTION compresslab."wal_whatif_by_relation"(
    "start_lsn" pg_catalog.pg_lsn DEFAULT NULL,
    "end_lsn" pg_catalog.pg_lsn DEFAULT NULL,
    "sample" double precision DEFAULT 1.0
) RETURNS SETOF compresslab.wal_whatif_relation_row
VOLATILE PARALLEL RESTRICTED
LANGUAGE c AS 'MODULE_PATHNAME', 'wal_whatif_by_relation_wrapper';
COMMENT ON FUNCTION compresslab.wal_whatif_by_relation(pg_catalog.pg_lsn, pg_catalog.pg_lsn, double precision) IS
'wal_whatif per relation fork: full-page images and their bytes under each wal_compression setting, largest first';
"#
)]
fn wal_whatif_by_relation(
    start_lsn: Option<i64>,
    end_lsn: Option<i64>,
    sample: Option<f64>,
) -> SetOfIterator<'static, composite_type!('static, "compresslab.wal_whatif_relation_row")> {
    let mut whatif = replay(start_lsn, end_lsn, sample.unwrap_or(1.0), "read WAL for wal_whatif_by_relation");
    whatif.finish().or_raise();
    set_of("compresslab.wal_whatif_relation_row", &whatif.relation_rows(&mut relation_name))
}
