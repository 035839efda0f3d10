//! `advise()`: should this server change `wal_compression` or a column's TOAST compression?
//! Measures with the WAL what-if (`wal_whatif`), the TOAST estimate and the spill simulation
//! within a time budget, and applies the core's decision rules (`compresslab_core::advisor`).

use std::time::{Duration, Instant};

use compresslab_core::advisor::{self, AdviceRow, Decision, WalOption};
use compresslab_core::lab::Hooks;
use compresslab_core::scenarios::spill::{self, SpillSpec, SpillStrategy};
use compresslab_core::scenarios::wal::WalWhatIfRow;
use compresslab_core::CodecError;
use pgrx::datum::Interval;
use pgrx::prelude::*;
use pgrx::{composite_type, PgRelation};

use compresslab_core::scenarios::fpi::FpiTotals;

use compresslab_core::lab::Codec;
use compresslab_core::scenarios::toast::{self, TOAST_METHODS};

use super::scenarios::{add_relation, codec_of, toast_estimate_of};
use super::wal::replay_range;
use crate::errors::{raise, required, OrRaise};
use crate::rows::set_of;
use crate::server::activity::{self, Rate, ToastColumn};
use crate::server::privileges::may_read_server_files;
use crate::server::{check_interrupts, sampling, wal, PgHooks};

/// Shares of the budget: WAL first, then TOAST columns until this much is spent, then spill.
const WAL_SHARE: f64 = 0.4;
const TOAST_UNTIL: f64 = 0.9;
/// wal_whatif's cost on this machine (scripts/wal_whatif_speed.sh): seconds per GB of WAL to
/// read it, and per GB to rebuild and compress every image under every setting.
const READ_SECONDS_PER_GB: f64 = 0.4;
const REPLAY_SECONDS_PER_GB: f64 = 4.5;
/// Values sampled per column, and fewer when little time is left.
const TOAST_SAMPLE: i32 = 300;
const TOAST_SAMPLE_HURRIED: i32 = 50;
/// Rows of a table turned into change records for the spill simulation.
const SPILL_SAMPLE_ROWS: i64 = 2000;
/// Without images in pg_wal: pages sampled from this many of the most-written tables.
const FALLBACK_TABLES: i64 = 5;
const FALLBACK_PAGES: i32 = 200;
const GB: f64 = (1u64 << 30) as f64;

/// What the advisor could not look at, reported in one NOTICE.
#[derive(Default)]
struct LeftOut {
    wal: Option<String>,
    unreadable_columns: usize,
    columns_over_budget: usize,
    spill: Option<String>,
}

/// One row per decision: `wal_compression` (needs superuser or pg_read_server_files, like
/// reading WAL), `toast` for every compressible column of the tables the caller may read
/// (largest first, as many as the budget allows), `spill` (informational) when logical
/// decoding has spilled. Each row says what is in force, what to use, what it saves and costs,
/// what was measured, how sure it is, and the statement that applies it.
#[pg_extern(
    volatile,
    parallel_unsafe,
    sql = r#"
CREATE FUNCTION compresslab."advise"(
    "budget" interval DEFAULT '30 s',
    "wal_since" pg_catalog.pg_lsn DEFAULT NULL
) RETURNS SETOF compresslab.advice
VOLATILE PARALLEL UNSAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'advise_wrapper';
COMMENT ON FUNCTION compresslab.advise(interval, pg_catalog.pg_lsn) IS
'Should this server change wal_compression or a column''s TOAST compression? One row per decision, measured within the budget on this server''s WAL (from wal_since, default the oldest in pg_wal) and the tables the caller may read, with the statement that applies it';
"#
)]
fn advise(
    budget: Option<Interval>,
    wal_since: Option<i64>,
) -> SetOfIterator<'static, composite_type!('static, "compresslab.advice")> {
    let seconds = required(budget, "budget").as_micros() as f64 / 1e6;
    if !(seconds > 0.0 && seconds <= 86400.0) {
        raise(CodecError::invalid(format!("budget must be between 0 and 1 day, got {seconds} s")));
    }
    let clock = Instant::now();
    let at = |share: f64| clock + Duration::from_secs_f64(seconds * share);
    let mut rows = Vec::new();
    let mut left_out = LeftOut::default();
    if may_read_server_files() {
        match wal_advice(wal_since.map(|lsn| lsn as u64), at(WAL_SHARE)) {
            Ok(row) => rows.push(row),
            Err(why) => left_out.wal = Some(why),
        }
    } else {
        left_out.wal = Some("reading WAL needs superuser or pg_read_server_files".into());
    }
    toast_advice(at(TOAST_UNTIL), &mut rows, &mut left_out);
    match spill_advice() {
        Ok(row) => rows.push(row),
        Err(why) => left_out.spill = Some(why),
    }
    let mut notes = Vec::new();
    if let Some(why) = &left_out.wal {
        notes.push(format!("wal_compression left out: {why}"));
    }
    if left_out.unreadable_columns > 0 {
        notes.push(format!("{} column(s) of tables you may not read left out", left_out.unreadable_columns));
    }
    if left_out.columns_over_budget > 0 {
        notes.push(format!(
            "{} column(s) not looked at within the budget (smallest tables)",
            left_out.columns_over_budget
        ));
    }
    if let Some(why) = &left_out.spill {
        notes.push(format!("spill left out: {why}"));
    }
    PgHooks.progress(&format!(
        "advise: {} row(s) in {:.1} s of a {seconds} s budget{}{}",
        rows.len(),
        clock.elapsed().as_secs_f64(),
        if notes.is_empty() { "" } else { "; " },
        notes.join("; ")
    ));
    set_of("compresslab.advice", &rows)
}

/// A period in words: minutes under two hours, hours under two days, else days.
fn period(seconds: f64) -> String {
    if seconds < 7200.0 {
        format!("{:.0} min", seconds / 60.0)
    } else if seconds < 172800.0 {
        format!("{:.1} h", seconds / 3600.0)
    } else {
        format!("{:.1} days", seconds / 86400.0)
    }
}

/// What every `wal_compression` row says besides its figures: the setting in force and the
/// one to use, the statements that apply it (none to keep), and the note: the reason, then the
/// saving of each setting (measured `how`), then `tail`. The figures are the caller's.
fn wal_row(
    current_setting: &str,
    current: &str,
    options: &[WalOption],
    decision: &Decision,
    how: &str,
    tail: &str,
) -> AdviceRow {
    let keep = decision.recommended == current;
    let savings: Vec<String> = options.iter().map(|o| format!("{} {:.1}%", o.setting, o.saving_percent)).collect();
    AdviceRow {
        area: "wal_compression".into(),
        target: "wal_compression".into(),
        current: current_setting.into(),
        recommended: decision.recommended.clone(),
        bytes_now: 0,
        bytes_recommended: 0,
        saving_percent: 0.0,
        compress_cpu_seconds_per_day: None,
        decompress_cpu_seconds_per_day: None,
        compress_cpu_seconds_per_gb: None,
        decompress_cpu_seconds_per_gb: None,
        basis: String::new(),
        confidence: String::new(),
        apply_sql: (!keep).then(|| {
            format!(
                "ALTER SYSTEM SET wal_compression = '{}'; SELECT pg_catalog.pg_reload_conf();",
                decision.recommended
            )
        }),
        note: format!(
            "{}{}. Savings of WAL bytes against off{how}: {}.{tail}",
            if keep { "keep: " } else { "" },
            decision.reason,
            savings.join(", ")
        ),
    }
}

fn row_of<'a>(rows: &'a [WalWhatIfRow], setting: &str) -> &'a WalWhatIfRow {
    rows.iter().find(|r| r.wal_compression == setting).unwrap_or(&rows[0])
}

/// `wal_compression` from the WAL in pg_wal (from `since`, default the oldest), read and
/// sampled to fit before `deadline`, scaled to a day with pg_stat_wal.
fn wal_advice(since: Option<u64>, deadline: Instant) -> Result<AdviceRow, String> {
    wal::require_primary();
    let flush = wal::flush_lsn();
    let (oldest, _) = wal::oldest_segment().ok_or("no WAL segment in pg_wal")?;
    let mut start = since.unwrap_or(oldest).clamp(oldest, flush);
    let seconds = deadline.saturating_duration_since(Instant::now()).as_secs_f64();
    // The most recent WAL that can be read at a 1% sample in time, then the sample that fits.
    let readable = (seconds / (READ_SECONDS_PER_GB + 0.01 * REPLAY_SECONDS_PER_GB) * GB) as u64;
    start = start.max(flush.saturating_sub(readable));
    let gb = (flush - start) as f64 / GB;
    let sample =
        if gb > 0.0 { ((seconds / gb - READ_SECONDS_PER_GB) / REPLAY_SECONDS_PER_GB).clamp(0.01, 1.0) } else { 1.0 };
    let mut whatif = replay_range(start, flush, sample, Some(deadline));
    let rows = whatif.finish().or_raise();
    let current_setting = activity::setting("wal_compression");
    let current = match current_setting.as_str() {
        "on" => "pglz",
        other => other,
    };
    if rows[0].fpi_images == 0 {
        return wal_advice_from_pages(
            &current_setting,
            current,
            &format!("{}..{}", rows[0].start_lsn, rows[0].end_lsn),
        );
    }
    let options: Vec<WalOption> = rows
        .iter()
        .map(|r| WalOption { setting: r.wal_compression.clone(), saving_percent: r.saving_percent })
        .collect();
    let decision = advisor::choose_wal(&options);
    let (now, then) = (row_of(&rows, current), row_of(&rows, &decision.recommended));
    let (written, _) = activity::wal_written();
    // Per day: WAL as written now, scaled by the what-if's ratio between the two settings.
    let per_day = written.per_day();
    let scale = |bytes: i64| if now.wal_bytes > 0 { bytes as f64 / now.wal_bytes as f64 } else { 1.0 };
    let bytes_now = per_day.unwrap_or(now.wal_bytes as f64);
    let bytes_then = bytes_now * scale(then.wal_bytes);
    let per_gb = |cpu: f64| (now.wal_bytes > 0).then(|| cpu / (now.wal_bytes as f64 / GB));
    Ok(AdviceRow {
        bytes_now: bytes_now.round() as i64,
        bytes_recommended: bytes_then.round() as i64,
        saving_percent: advisor::saving_percent(bytes_now.round() as i64, bytes_then.round() as i64),
        compress_cpu_seconds_per_day: per_day.map(|d| then.compress_cpu_seconds * d / now.wal_bytes.max(1) as f64),
        decompress_cpu_seconds_per_day: per_day.map(|d| then.decompress_cpu_seconds * d / now.wal_bytes.max(1) as f64),
        compress_cpu_seconds_per_gb: per_gb(then.compress_cpu_seconds),
        decompress_cpu_seconds_per_gb: per_gb(then.decompress_cpu_seconds),
        basis: format!(
            "WAL {}..{} ({} MB, {} records, {} full-page images, {} compressed under each setting with the server's routines); \
             per day from pg_stat_wal: {:.0} MB over {}",
            then.start_lsn,
            then.end_lsn,
            now.wal_bytes >> 20,
            now.records,
            now.fpi_images,
            now.sampled_images,
            written.amount / (1u64 << 20) as f64,
            period(written.seconds)
        ),
        confidence: advisor::confidence(now.sampled_images as u64, written.seconds).into(),
        ..wal_row(
            &current_setting,
            current,
            &options,
            &decision,
            "",
            " bytes are per day (of WAL as written now); CPU is the server's own code compressing full-page images \
             as WAL is written and decompressing them at replay or recovery.",
        )
    })
}

/// `wal_compression` when the WAL read holds no full-page image (recycled, or a quiet range):
/// pages sampled from the most-written tables stand for the images, hole removed, and
/// pg_stat_wal's `wal_fpi` says how many images a day the server writes.
fn wal_advice_from_pages(current_setting: &str, current: &str, range: &str) -> Result<AdviceRow, String> {
    let (written, images) = activity::wal_written();
    let tables = sampling::most_written_readable_tables(FALLBACK_TABLES);
    if tables.is_empty() {
        return Err(format!("no full-page image in the WAL read ({range}) and no table to sample pages from"));
    }
    let mut totals = FpiTotals::default();
    for (oid, _) in &tables {
        // SAFETY: AccessShareLock is taken; one relation is open at a time.
        let rel = unsafe { PgRelation::with_lock(*oid, pg_sys::AccessShareLock as _) };
        add_relation(&rel, Some(FALLBACK_PAGES), 0, &mut totals);
    }
    let fpi = totals.rows();
    let (off, sampled_images) = (&fpi[0], fpi[0].images.max(1) as f64);
    let raw_image = off.stored_bytes as f64 / sampled_images;
    let stored_share = |setting: &str| {
        fpi.iter()
            .find(|r| r.wal_compression == setting)
            .map_or(1.0, |r| r.stored_bytes as f64 / off.stored_bytes.max(1) as f64)
    };
    // WAL a day as written now; what it would be under off; then under each setting.
    let per_day = written.per_day().unwrap_or(written.amount);
    let images_per_day = images.per_day().unwrap_or(images.amount);
    let under = |setting: &str, off_bytes: f64| off_bytes - images_per_day * raw_image * (1.0 - stored_share(setting));
    let off_bytes = per_day + images_per_day * raw_image * (1.0 - stored_share(current));
    let options: Vec<WalOption> = fpi
        .iter()
        .map(|r| WalOption {
            setting: r.wal_compression.clone(),
            saving_percent: advisor::saving_percent(
                off_bytes.round() as i64,
                under(&r.wal_compression, off_bytes).round() as i64,
            ),
        })
        .collect();
    let decision = advisor::choose_wal(&options);
    let then = fpi.iter().find(|r| r.wal_compression == decision.recommended).unwrap_or(off);
    let bytes_then = under(&decision.recommended, off_bytes);
    let cpu_per_image = then.compress_cpu_seconds / sampled_images;
    let names: Vec<&str> = tables.iter().map(|(_, name)| name.as_str()).collect();
    Ok(AdviceRow {
        bytes_now: per_day.round() as i64,
        bytes_recommended: bytes_then.round() as i64,
        saving_percent: advisor::saving_percent(per_day.round() as i64, bytes_then.round() as i64),
        compress_cpu_seconds_per_day: images.per_day().map(|n| n * cpu_per_image),
        decompress_cpu_seconds_per_day: None,
        compress_cpu_seconds_per_gb: (raw_image > 0.0).then(|| cpu_per_image / raw_image * GB),
        decompress_cpu_seconds_per_gb: None,
        basis: format!(
            "no full-page image in the WAL read ({range}): {} pages sampled from the most-written tables ({}), hole removed, compressed with the server's routines; per day from pg_stat_wal: {:.0} MB and {:.0} full-page images over {}",
            off.images,
            names.join(", "),
            written.amount / (1u64 << 20) as f64,
            images.amount,
            period(written.seconds)
        ),
        confidence: if advisor::confidence(off.images as u64, written.seconds) == "high" { "medium" } else { "low" }.into(),
        ..wal_row(current_setting, current, &options, &decision, ", from sampled pages standing for the images", "")
    })
}

/// TOAST compression of every compressible column the caller may read, largest tables first,
/// until `deadline`.
fn toast_advice(deadline: Instant, rows: &mut Vec<AdviceRow>, left_out: &mut LeftOut) {
    let columns = activity::toast_columns();
    let default_method = activity::setting("default_toast_compression");
    let mut looked = 0;
    for column in &columns {
        check_interrupts();
        if !column.readable {
            left_out.unreadable_columns += 1;
            continue;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            left_out.columns_over_budget += 1;
            continue;
        }
        looked += 1;
        let sample = if left < Duration::from_secs(2) { TOAST_SAMPLE_HURRIED } else { TOAST_SAMPLE };
        if let Some(row) = column_advice(column, &default_method, sample) {
            rows.push(row);
        }
    }
    if looked > 0 {
        PgHooks.progress(&format!("advise: {looked} column(s) of {} measured", columns.len()));
    }
}

fn column_advice(column: &ToastColumn, default_method: &str, sample: i32) -> Option<AdviceRow> {
    // SAFETY: AccessShareLock is taken; one relation is open at a time.
    let rel = unsafe { PgRelation::with_lock(column.table, pg_sys::AccessShareLock as _) };
    let (values, stored) = sampling::column_values_as_stored(&rel, &column.column_name, Some(sample), 0);
    if values.is_empty() {
        return None;
    }
    let estimate = toast_estimate_of(&rel, &column.column_name, values, true, 3);
    let (pglz, lz4) = (&estimate.rows[0], &estimate.rows[1]);
    let raw = pglz.raw_bytes;
    // What each method would store, TOAST's decisions for these rows kept (see stored_as_decided).
    let mut codecs: Vec<(&str, Box<dyn Codec>)> =
        TOAST_METHODS.iter().map(|(name, method)| (*name, codec_of(method))).collect();
    let decided = toast::stored_as_decided(&estimate.values, &stored, &mut codecs).or_raise();
    let scaled = |bytes: i64| (bytes as f64 * estimate.scale).round() as i64;
    let (pglz_bytes, lz4_bytes) = (scaled(decided[0]), scaled(decided[1]));
    let mut decision = advisor::choose_toast(raw, pglz_bytes, lz4_bytes);
    if stored.iter().all(|s| s.method.is_none()) && pglz.compressed_values == 0 && lz4.compressed_values == 0 {
        decision.reason =
            "TOAST compresses none of these values (rows under toast_tuple_target, or no gain): no change".into();
    }
    let mut mix: Vec<(String, usize)> = Vec::new();
    for s in &stored {
        let name = s.method.clone().unwrap_or_else(|| "uncompressed".into());
        match mix.iter_mut().find(|(n, _)| *n == name) {
            Some((_, count)) => *count += 1,
            None => mix.push((name, 1)),
        }
    }
    let configured = if column.compression.is_empty() { default_method } else { column.compression.as_str() };
    let current = if column.compression.is_empty() {
        format!("{configured} (default_toast_compression)")
    } else {
        configured.to_string()
    };
    let recommended =
        if decision.recommended.is_empty() { configured.to_string() } else { decision.recommended.clone() };
    let keep = recommended == configured;
    let stored_now = scaled(stored.iter().map(|s| s.size as i64).sum());
    let chosen = if recommended == "pglz" { pglz } else { lz4 };
    let bytes_then = match recommended.as_str() {
        _ if decision.recommended.is_empty() => stored_now,
        "pglz" => pglz_bytes,
        _ => lz4_bytes,
    };
    let mix: Vec<String> = mix.iter().map(|(method, count)| format!("{method} {count}")).collect();
    let (written, read) = activity::table_rows(column.table);
    let avg_raw = if pglz.values > 0 { raw as f64 / pglz.values as f64 } else { 0.0 };
    let gb_per_day = |rate: Rate| rate.per_day().map(|rows| rows * avg_raw / GB);
    let seconds_per_gb = |mbps: f64| (mbps > 0.0).then(|| 1024.0 / mbps);
    let (compress_per_gb, decompress_per_gb) =
        (seconds_per_gb(chosen.compress_mbps), seconds_per_gb(chosen.decompress_mbps));
    let rewrite_mb = stored_now as f64 / (1u64 << 20) as f64;
    Some(AdviceRow {
        area: "toast".into(),
        target: column.target.clone(),
        current: format!("{current}; stored values sampled: {}", mix.join(", ")),
        recommended: recommended.clone(),
        bytes_now: stored_now,
        bytes_recommended: bytes_then,
        saving_percent: advisor::saving_percent(stored_now, bytes_then),
        compress_cpu_seconds_per_day: gb_per_day(written).zip(compress_per_gb).map(|(gb, s)| gb * s),
        decompress_cpu_seconds_per_day: gb_per_day(read).zip(decompress_per_gb).map(|(gb, s)| gb * s),
        compress_cpu_seconds_per_gb: compress_per_gb,
        decompress_cpu_seconds_per_gb: decompress_per_gb,
        basis: format!(
            "{} values sampled of about {:.0} ({} MB raw), compressed with the server's pglz and lz4 under TOAST's rules; \
             per day from pg_stat_user_tables: {:.0} rows written, {:.0} read (each read counted as detoasting the value) over {}",
            estimate.sampled,
            estimate.sampled as f64 * estimate.scale,
            raw >> 20,
            written.amount,
            read.amount,
            period(written.seconds)
        ),
        confidence: advisor::confidence(estimate.sampled as u64, written.seconds).into(),
        apply_sql: (!keep).then(|| {
            format!("ALTER TABLE {} ALTER COLUMN {} SET COMPRESSION {recommended};", column.table_name, column.column)
        }),
        note: if keep {
            format!("keep: {}.", decision.reason)
        } else {
            format!(
                "{}. In PostgreSQL 15 SET COMPRESSION applies to values written from then on: VACUUM FULL, CLUSTER, \
                 table rewrites, INSERT ... SELECT and UPDATEs that keep the value all keep the old method (tested by \
                 compresslab); only a new value is compressed anew, e.g. UPDATE {} SET {} = {} || '' for text, or a \
                 dump and restore, which would rewrite about {:.0} MB here.",
                decision.reason, column.table_name, column.column, column.column, rewrite_mb
            )
        },
    })
}

/// Spill files of logical decoding (informational: PostgreSQL 15 cannot compress them): what
/// LZ4 streaming would save, simulated on rows of the most-written table the caller may read.
fn spill_advice() -> Result<AdviceRow, String> {
    let (slots, txns, spilled) = activity::spilled();
    if spilled.amount <= 0.0 {
        return Err(format!("no logical-decoding spill recorded ({slots} replication slot(s))"));
    }
    let (_, table) =
        sampling::most_written_readable_tables(1).pop().ok_or("no table you may read to sample change records from")?;
    let query = format!("SELECT t FROM {table} t LIMIT {SPILL_SAMPLE_ROWS}");
    let records = sampling::query_records(&query);
    let specs = [
        SpillSpec { strategy: SpillStrategy::Raw, level: None },
        SpillSpec { strategy: SpillStrategy::Lz4Stream, level: None },
    ];
    let result = spill::simulate(&records, &specs, &mut check_interrupts).or_raise();
    let (raw, lz4) = (&result[0], &result[1]);
    let ratio = if raw.stored_bytes > 0 { lz4.stored_bytes as f64 / raw.stored_bytes as f64 } else { 1.0 };
    let bytes_now = spilled.per_day().unwrap_or(spilled.amount);
    let bytes_then = bytes_now * ratio;
    let per_gb = |seconds: f64| (raw.raw_bytes > 0).then(|| seconds / (raw.raw_bytes as f64 / GB));
    Ok(AdviceRow {
        area: "spill".into(),
        target: format!("logical decoding spill files ({slots} slot(s), {txns} transaction(s) spilled)"),
        current: "uncompressed (PostgreSQL 15 cannot compress spill files)".into(),
        recommended: "lz4_stream".into(),
        bytes_now: bytes_now.round() as i64,
        bytes_recommended: bytes_then.round() as i64,
        saving_percent: 100.0 * (1.0 - ratio),
        compress_cpu_seconds_per_day: None,
        decompress_cpu_seconds_per_day: None,
        compress_cpu_seconds_per_gb: per_gb(lz4.cpu_seconds),
        decompress_cpu_seconds_per_gb: None,
        basis: format!(
            "pg_stat_replication_slots: {:.0} MB spilled over {}; {} rows of {table} as change records, LZ4 \
             streaming across records against raw (simulate_spill)",
            spilled.amount / (1u64 << 20) as f64,
            period(spilled.seconds),
            records.len()
        ),
        confidence: advisor::confidence(records.len() as u64, spilled.seconds).into(),
        apply_sql: None,
        note: "informational: the pgsql-hackers patch compressing ReorderBuffer spill files with LZ4 streaming is \
               not in PostgreSQL 15; raising logical_decoding_work_mem spills less."
            .into(),
    })
}
