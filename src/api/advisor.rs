//! `advise()`: should this server change `wal_compression` or a column's TOAST compression?
//! Gathers the measurements within a time budget (the WAL what-if, each column's sampled rows,
//! the spill simulation) and hands them to the core's advisor (`compresslab_core::advisor`),
//! which does the arithmetic and applies the decision rules.

use std::time::{Duration, Instant};

use compresslab_core::advisor::budget::Budget;
use compresslab_core::advisor::toast::fold_small_columns;
use compresslab_core::advisor::AdviceRow;
use compresslab_core::lab::Hooks;
use pgrx::composite_type;
use pgrx::datum::Interval;
use pgrx::prelude::*;

use crate::errors::{required, OrRaise, SqlArguments};
use crate::measure::advice;
use crate::rows::set_of;
use crate::server::catalog::privileges::may_read_server_files;
use crate::server::codecs::versions::toast_built_with;
use crate::server::PgHooks;
use crate::server::{activity, subtransaction};
use compresslab_core::pg_compression::ToastCompression;

/// One row per decision: `wal_compression` (needs superuser or pg_read_server_files, like
/// reading WAL), `toast` for every compressible column of the tables the caller may read
/// (largest first, as many as the budget allows), `spill` (informational) when logical
/// decoding has spilled. Each row says what is in force, what to use, what it saves and costs,
/// what was measured, how sure it is, and the statements that apply it. Two or more columns
/// storing under 1 MB each are one row unless `verbose`.
#[pg_extern(
    volatile,
    parallel_unsafe,
    sql = r#"
CREATE FUNCTION compresslab."advise"(
    "budget" interval DEFAULT '30 s',
    "wal_since" pg_catalog.pg_lsn DEFAULT NULL,
    "wal_dir" text DEFAULT NULL,
    "verbose" boolean DEFAULT false
) RETURNS SETOF compresslab.advice
VOLATILE PARALLEL UNSAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'advise_wrapper';
COMMENT ON FUNCTION compresslab.advise(interval, pg_catalog.pg_lsn, text, boolean) IS
'Should this server change wal_compression or a column''s TOAST compression? One row per decision, measured within the budget on this server''s WAL (from wal_since, default the oldest in pg_wal, or in the archived segments of wal_dir) and the tables the caller may read, with the statement that applies it; columns storing under 1 MB each are one row unless verbose';
"#
)]
fn advise(
    _sql: SqlArguments<4>,
    budget: Option<Interval>,
    wal_since: Option<i64>,
    wal_dir: Option<&str>,
    verbose: Option<bool>,
) -> SetOfIterator<'static, composite_type!('static, "compresslab.advice")> {
    let budget = Budget::new(required(budget, "budget").as_micros() as f64 / 1e6).or_raise();
    let verbose = required(verbose, "verbose");
    let clock = Instant::now();
    let at = |seconds: f64| clock + Duration::from_secs_f64(seconds);
    let mut rows: Vec<AdviceRow> = Vec::new();
    let mut notes = Vec::new();
    // The columns first: on a database of thousands of tables their catalogue query is the
    // slow part (a file size per table), and the WAL's share of the budget absorbs it.
    let columns = activity::toast_columns();
    // default_toast_compression takes pglz or lz4 only (the server checks it)
    let default_method = ToastCompression::from_setting(&activity::setting("default_toast_compression"))
        .unwrap_or(ToastCompression::Pglz);
    if !may_read_server_files() {
        notes.push("wal_compression left out: reading WAL needs superuser or pg_read_server_files".to_string());
    } else {
        // An ERROR reading WAL (a damaged or foreign segment, a directory that is not there)
        // leaves out this row, not the whole advice; the subtransaction, rolled back once the
        // row is out, frees the locks of the tables it sampled.
        let wal = subtransaction::rolled_back(|| {
            advice::wal_row(wal_since.map(|lsn| lsn as u64), at(budget.wal_until()), wal_dir)
        });
        match wal.and_then(|row| row) {
            Ok(row) => rows.push(row),
            Err(why) => notes.push(format!("wal_compression left out: {why}")),
        }
    }
    // TOAST's one alternative to pglz is lz4: a server built without it has no choice to make.
    let (toast, toast_notes) = if toast_built_with(ToastCompression::Lz4) {
        advice::toast_rows(&columns, default_method, at(budget.toast_until()))
    } else {
        (
            Vec::new(),
            vec!["TOAST compression left out: this server was built without lz4, its one alternative to pglz".into()],
        )
    };
    let (toast, folded) = if verbose { (toast, 0) } else { fold_small_columns(toast) };
    rows.extend(toast);
    notes.extend(toast_notes);
    if folded > 0 {
        notes.push(format!(
            "{folded} column(s) storing under 1 MB each folded into one row (verbose => true lists each)"
        ));
    }
    // as the WAL row: its ERROR (its table dropped meanwhile) leaves out this row alone
    match subtransaction::rolled_back(|| advice::spill_row(at(budget.spill_until()))).and_then(|row| row) {
        Ok(row) => rows.push(row),
        Err(why) => notes.push(format!("spill left out: {why}")),
    }
    PgHooks.progress(&format!(
        "advise: {} row(s) in {:.1} s of a {} s budget{}{}",
        rows.len(),
        clock.elapsed().as_secs_f64(),
        budget.seconds(),
        if notes.is_empty() { "" } else { "; " },
        notes.join("; ")
    ));
    set_of("compresslab.advice", &rows)
}
