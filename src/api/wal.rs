//! WAL what-if in SQL: the server's real WAL replayed under every `wal_compression` setting
//! (the core's `scenarios::wal`), read with the server's own reader (`crate::server::wal`).

use std::ops::ControlFlow;

use compresslab_core::scenarios::wal::WalWhatIf;
use pgrx::composite_type;
use pgrx::prelude::*;

use crate::errors::SqlArguments;
use crate::measure::{checked_range, finish_whatif, replay_range};
use crate::rows::set_of;
use crate::server::catalog::privileges::require_wal_read;
use crate::server::wal::{relation_name, WalSource};

/// Read `[start_lsn, end_lsn)` of pg_wal or of `wal_dir` and replay its full-page images under
/// every setting.
fn replay(start_lsn: Option<i64>, end_lsn: Option<i64>, sample: f64, wal_dir: Option<&str>, what: &str) -> WalWhatIf {
    require_wal_read(what);
    let source = WalSource::open(wal_dir);
    let (start, end) = checked_range(&source, start_lsn, end_lsn);
    replay_range(&source, start, end, sample, &mut |_: &_| ControlFlow::Continue(()))
}

/// What the WAL from `start_lsn` (default: the oldest still in pg_wal) to `end_lsn` (default:
/// the flush LSN) would have taken under each wal_compression setting: full-page images
/// rebuilt and compressed with the server's own routines, records laid out as the server lays
/// them out, CPU to write and to replay. `sample` < 1 compresses that fraction of the images
/// and extrapolates. `wal_dir` reads the archived segments of that directory instead of
/// pg_wal (by default all of them). Superuser or pg_read_server_files.
#[pg_extern(
    volatile,
    parallel_restricted,
    sql = r#"
CREATE FUNCTION compresslab."wal_whatif"(
    "start_lsn" pg_catalog.pg_lsn DEFAULT NULL,
    "end_lsn" pg_catalog.pg_lsn DEFAULT NULL,
    "sample" double precision DEFAULT 1.0,
    "wal_dir" text DEFAULT NULL
) RETURNS SETOF compresslab.wal_whatif_row
VOLATILE PARALLEL RESTRICTED
LANGUAGE c AS 'MODULE_PATHNAME', 'wal_whatif_wrapper';
COMMENT ON FUNCTION compresslab.wal_whatif(pg_catalog.pg_lsn, pg_catalog.pg_lsn, double precision, text) IS
'What the WAL from start_lsn (default: the oldest in pg_wal) to end_lsn (default: the flush LSN) would take under each wal_compression setting, with the CPU to write and replay its full-page images; sample < 1 compresses that fraction of the images; wal_dir reads the archived segments of that directory (by default all of them) instead of pg_wal';
"#
)]
fn wal_whatif(
    _sql: SqlArguments<4>,
    start_lsn: Option<i64>,
    end_lsn: Option<i64>,
    sample: Option<f64>,
    wal_dir: Option<&str>,
) -> SetOfIterator<'static, composite_type!('static, "compresslab.wal_whatif_row")> {
    let mut whatif = replay(start_lsn, end_lsn, sample.unwrap_or(1.0), wal_dir, "read WAL for wal_whatif");
    set_of("compresslab.wal_whatif_row", &finish_whatif(&mut whatif))
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
    "sample" double precision DEFAULT 1.0,
    "wal_dir" text DEFAULT NULL
) RETURNS SETOF compresslab.wal_whatif_relation_row
VOLATILE PARALLEL RESTRICTED
LANGUAGE c AS 'MODULE_PATHNAME', 'wal_whatif_by_relation_wrapper';
COMMENT ON FUNCTION compresslab.wal_whatif_by_relation(pg_catalog.pg_lsn, pg_catalog.pg_lsn, double precision, text) IS
'wal_whatif per relation fork: full-page images and their bytes under each wal_compression setting, largest first; wal_dir as for wal_whatif';
"#
)]
fn wal_whatif_by_relation(
    _sql: SqlArguments<4>,
    start_lsn: Option<i64>,
    end_lsn: Option<i64>,
    sample: Option<f64>,
    wal_dir: Option<&str>,
) -> SetOfIterator<'static, composite_type!('static, "compresslab.wal_whatif_relation_row")> {
    let mut whatif = replay(start_lsn, end_lsn, sample.unwrap_or(1.0), wal_dir, "read WAL for wal_whatif_by_relation");
    finish_whatif(&mut whatif);
    set_of("compresslab.wal_whatif_relation_row", &whatif.relation_rows(&mut relation_name))
}
