//! The `wal_compression` row: how much WAL to read in the time there is, and the row from the
//! what-if over it (or, when it holds no full-page image, from sampled pages), scaled to a day
//! by the rate `pg_stat_wal` observed.

use super::words::{period, size, Rate, GB};
use super::{
    bulk_load_words, choose_wal, per_day_confidence, saving_percent, AdviceRow, Decision, Inserted, WalOption,
};
use crate::pg_compression::WalCompression;
use crate::scenarios::fpi::FpiRow;
use crate::scenarios::wal::WalWhatIfRow;

/// wal_whatif's cost (scripts/bench/wal_whatif_speed.sh): seconds per GB of WAL to read it, and per
/// GB to rebuild and compress every image under every setting.
pub const READ_SECONDS_PER_GB: f64 = 0.4;
pub const REPLAY_SECONDS_PER_GB: f64 = 4.5;

/// The part of `[start, flush)` to read within `seconds`, and the share of images to sample:
/// the most recent WAL that can be read at a 1% sample in time, then the sample that fits.
pub fn window(seconds: f64, start: u64, flush: u64) -> (u64, f64) {
    let readable = (seconds / (READ_SECONDS_PER_GB + 0.01 * REPLAY_SECONDS_PER_GB) * GB) as u64;
    let start = start.max(flush.saturating_sub(readable));
    let gb = flush.saturating_sub(start) as f64 / GB;
    let sample =
        if gb > 0.0 { ((seconds / gb - READ_SECONDS_PER_GB) / REPLAY_SECONDS_PER_GB).clamp(0.01, 1.0) } else { 1.0 };
    (start, sample)
}

/// The setting in force, as `SHOW wal_compression` printed it, typed (`on` is pglz; a value
/// this version does not know counts as off).
fn in_force(setting: &str) -> WalCompression {
    WalCompression::from_setting(setting).unwrap_or(WalCompression::Off)
}

/// What every `wal_compression` row says besides its figures: the setting in force and the
/// one to use, the statements that apply it (none to keep), and the note: the reason, then the
/// saving of each setting (measured `how`), then `tail`.
fn row(
    current_setting: &str,
    options: &[WalOption],
    decision: &Decision<WalCompression>,
    how: &str,
    tail: &str,
) -> AdviceRow {
    let keep = decision.recommended == in_force(current_setting);
    let savings: Vec<String> = options.iter().map(|o| format!("{} {:.1}%", o.setting, o.saving_percent)).collect();
    AdviceRow {
        area: "wal_compression".into(),
        target: "wal_compression (cluster-wide)".into(),
        current: current_setting.into(),
        recommended: decision.recommended.setting().into(),
        apply_sql: (!keep).then(|| {
            format!(
                "ALTER SYSTEM SET wal_compression = '{}';\nSELECT pg_catalog.pg_reload_conf();",
                decision.recommended.setting()
            )
        }),
        note: format!(
            "{}{}. Savings of WAL bytes against off{how}: {}. WAL is the whole cluster's.{tail}",
            if keep { "keep: " } else { "" },
            decision.reason,
            savings.join(", ")
        ),
        ..AdviceRow::default()
    }
}

fn setting_row(rows: &[WalWhatIfRow], setting: WalCompression) -> &WalWhatIfRow {
    rows.iter().find(|r| r.wal_compression == setting).unwrap_or(&rows[0])
}

/// The times of the records read that carry one (commits, aborts, checkpoints), in
/// microseconds: the period an archive's WAL covers.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TimeSpan {
    pub earliest: Option<i64>,
    pub latest: Option<i64>,
    /// Timestamps seen.
    pub count: u64,
}

impl TimeSpan {
    /// One record's time (they need not come in order: commits are logged as they happen).
    pub fn observe(&mut self, micros: i64) {
        self.earliest = Some(self.earliest.map_or(micros, |e| e.min(micros)));
        self.latest = Some(self.latest.map_or(micros, |l| l.max(micros)));
        self.count += 1;
    }

    /// The seconds between the earliest and the latest, given at least two timestamps apart.
    pub fn seconds(&self) -> Option<f64> {
        match (self.earliest, self.latest) {
            (Some(e), Some(l)) if self.count >= 2 && l > e => Some((l - e) as f64 / 1e6),
            _ => None,
        }
    }
}

/// The period a WAL row's bytes cover.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WalPeriod {
    /// pg_wal read: pg_stat_wal's bytes written since its reset.
    Statistics(Rate),
    /// An archive read (`wal_dir`): the span of its records' timestamps, with pg_stat_wal's
    /// rate standing in when the WAL read holds fewer than two.
    Archive { span: TimeSpan, statistics: Rate },
}

/// The WAL a row's bytes are: the volume over the period, the words that say where it comes
/// from, and whether the statistics' bulk-load rule applies (only to pg_stat_wal's period).
fn observed(period_of: WalPeriod, read_bytes: i64) -> (Rate, String, bool) {
    let statistics = |written: Rate, why: &str| {
        (
            written,
            format!(
                "; bytes over the period from pg_stat_wal{why}: {} written over {}",
                size(written.amount),
                period(written.seconds)
            ),
            true,
        )
    };
    match period_of {
        WalPeriod::Statistics(written) => statistics(written, ""),
        WalPeriod::Archive { span, statistics: written } => match span.seconds() {
            Some(seconds) => (
                Rate { amount: read_bytes as f64, seconds },
                format!(
                    "; the period is the WAL read's own: {} commit and checkpoint timestamps spanning {}",
                    span.count,
                    period(seconds)
                ),
                false,
            ),
            None => statistics(
                written,
                &format!(
                    " (the archive's WAL read holds {} commit or checkpoint timestamp(s), fewer than two apart, \
                     to span a period)",
                    span.count
                ),
            ),
        },
    }
}

/// The row from the what-if's rows (at least one full-page image read), the bytes the range
/// read took as the server wrote it (its LSN span: images compressed or not as each record
/// says, whatever sessions had set), the period its bytes cover, and the rows inserted over
/// pg_stat_wal's period (a bulk load makes it `low`).
pub fn from_whatif(
    rows: &[WalWhatIfRow],
    current_setting: &str,
    as_written: i64,
    period_of: WalPeriod,
    inserted: Inserted,
) -> AdviceRow {
    let options: Vec<WalOption> =
        rows.iter().map(|r| WalOption { setting: r.wal_compression, saving_percent: r.saving_percent }).collect();
    let decision = choose_wal(&options);
    let (now, then) = (setting_row(rows, in_force(current_setting)), setting_row(rows, decision.recommended));
    let (written, words, statistics) = observed(period_of, as_written);
    let load = if statistics { bulk_load_words(inserted, written.seconds) } else { None };
    // The WAL as written over the period, scaled by the what-if's ratio between the range
    // under the recommended setting and the range as written (which equals the current
    // setting's row unless sessions set wal_compression themselves).
    let ratio = if as_written > 0 { then.wal_bytes as f64 / as_written as f64 } else { 1.0 };
    let per_day = written.per_day();
    let keep = decision.recommended == in_force(current_setting);
    let read_gb = now.wal_bytes as f64 / GB;
    let cpu = |seconds: f64, scale: Option<f64>| {
        (!keep && now.wal_bytes > 0).then_some(seconds).zip(scale).map(|(s, k)| s * k)
    };
    let daily = per_day.map(|d| d / now.wal_bytes.max(1) as f64);
    AdviceRow {
        compress_cpu_seconds_per_day: cpu(then.compress_cpu_seconds, daily),
        decompress_cpu_seconds_per_day: cpu(then.decompress_cpu_seconds, daily),
        compress_cpu_seconds_per_gb: cpu(then.compress_cpu_seconds, Some(1.0 / read_gb)),
        decompress_cpu_seconds_per_gb: cpu(then.decompress_cpu_seconds, Some(1.0 / read_gb)),
        basis: format!(
            "the cluster's WAL (every database's) {}..{}: {} as written (wal_compression = {current_setting} now), {} \
             with every image uncompressed ({} records, {} full-page images, {} compressed under each setting with the \
             server's routines){words}",
            then.start_lsn,
            then.end_lsn,
            size(as_written as f64),
            size(setting_row(rows, WalCompression::Off).wal_bytes as f64),
            now.records,
            now.fpi_images,
            now.sampled_images,
        ) + load.as_deref().unwrap_or(""),
        confidence: if load.is_some() { "low" } else { per_day_confidence(now.sampled_images as u64, written.seconds) }
            .into(),
        ..row(
            current_setting,
            &options,
            &decision,
            "",
            " bytes_now is the WAL written over observed_period, bytes_per_day_now the same scaled to a day; CPU is \
             the server's own code compressing full-page images as WAL is written and decompressing them at replay \
             or recovery.",
        )
    }
    .over_period(written.amount, written.amount * ratio, written.seconds)
}

/// The row when the WAL read (`range`) holds no full-page image: `fpi` (off first) measured on
/// pages sampled from `tables` stands for the images, pg_stat_wal's `written` bytes and
/// `images` say how much a day the server writes.
pub fn from_pages(
    fpi: &[FpiRow],
    tables: &[String],
    range: &str,
    current_setting: &str,
    written: Rate,
    images: Rate,
    inserted: Inserted,
) -> AdviceRow {
    let load = bulk_load_words(inserted, written.seconds);
    let (off, sampled_images) = (&fpi[0], fpi[0].images.max(1) as f64);
    let raw_image = off.stored_bytes as f64 / sampled_images;
    let stored_share = |setting: WalCompression| {
        fpi.iter()
            .find(|r| r.wal_compression == setting)
            .map_or(1.0, |r| r.stored_bytes as f64 / off.stored_bytes.max(1) as f64)
    };
    // WAL over the period as written now; what it would be under off; then under each setting.
    let under =
        |setting: WalCompression, off_bytes: f64| off_bytes - images.amount * raw_image * (1.0 - stored_share(setting));
    let off_bytes = written.amount + images.amount * raw_image * (1.0 - stored_share(in_force(current_setting)));
    let options: Vec<WalOption> = fpi
        .iter()
        .map(|r| WalOption {
            setting: r.wal_compression,
            saving_percent: saving_percent(
                off_bytes.round() as i64,
                under(r.wal_compression, off_bytes).round() as i64,
            ),
        })
        .collect();
    let decision = choose_wal(&options);
    let keep = decision.recommended == in_force(current_setting);
    let then = fpi.iter().find(|r| r.wal_compression == decision.recommended).unwrap_or(off);
    let bytes_then = under(decision.recommended, off_bytes);
    let cpu_per_image = then.compress_cpu_seconds / sampled_images;
    AdviceRow {
        compress_cpu_seconds_per_day: images.per_day().filter(|_| !keep).map(|n| n * cpu_per_image),
        compress_cpu_seconds_per_gb: (!keep && raw_image > 0.0).then(|| cpu_per_image / raw_image * GB),
        basis: format!(
            "no full-page image in the cluster's WAL read ({range}): {} pages sampled from the most-written tables \
             ({}), hole removed, compressed with the server's routines; bytes over the period from pg_stat_wal \
             (the cluster's, every database's): {} as written under wal_compression = {current_setting} and {:.0} \
             full-page images over {}",
            off.images,
            tables.join(", "),
            size(written.amount),
            images.amount,
            period(written.seconds)
        ) + load.as_deref().unwrap_or(""),
        confidence: if load.is_none() && per_day_confidence(off.images as u64, written.seconds) == "high" {
            "medium"
        } else {
            "low"
        }
        .into(),
        ..row(current_setting, &options, &decision, ", from sampled pages standing for the images", "")
    }
    .over_period(written.amount, bytes_then, written.seconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whatif(setting: &str, wal_bytes: i64, compress: f64) -> WalWhatIfRow {
        WalWhatIfRow {
            wal_compression: WalCompression::from_setting(setting).unwrap(),
            start_lsn: "0/1000000".into(),
            end_lsn: "0/5000000".into(),
            records: 1000,
            fpi_images: 500,
            sampled_images: 500,
            compressed_images: 0,
            stored_images: 0,
            fpi_bytes: 0,
            wal_bytes,
            saving_percent: 100.0 * (1.0 - wal_bytes as f64 / 64e6),
            compress_cpu_seconds: compress,
            decompress_cpu_seconds: compress / 4.0,
        }
    }

    #[test]
    fn the_window_reads_recent_wal_and_samples_to_fit() {
        let gb = 1u64 << 30;
        // 10 s: everything of 1 GB, at the sample that fits
        let (start, sample) = window(10.0, 0, gb);
        assert_eq!(start, 0);
        assert_eq!(sample, 1.0);
        let (_, sample) = window(10.0, 0, 4 * gb);
        assert!((sample - (2.5 - 0.4) / 4.5).abs() < 1e-9, "{sample}");
        // 1 s over 100 GB: only the most recent 2.2 GB, which a 1% sample reads in time
        let (start, sample) = window(1.0, 0, 100 * gb);
        let readable = 100 * gb - start;
        assert!(readable > 2 * gb && readable < 3 * gb, "{readable}");
        assert!((sample - 0.01).abs() < 1e-6, "{sample}");
    }

    #[test]
    fn from_whatif_scales_to_a_day_and_prices_per_gb() {
        let rows = [
            whatif("off", 64_000_000, 0.0),
            whatif("pglz", 40_000_000, 2.0),
            whatif("lz4", 40_000_000, 0.5),
            whatif("zstd", 38_000_000, 1.0),
        ];
        // 6.4 GB written over a day
        let steady = Inserted { rows: 1000.0, held: 1_000_000.0 };
        let day = WalPeriod::Statistics(Rate { amount: 6.4e9, seconds: 86400.0 });
        let row = from_whatif(&rows, "off", 64_000_000, day, steady);
        assert_eq!(row.recommended, "lz4");
        assert_eq!((row.bytes_now, row.bytes_per_day_now), (Some(6_400_000_000), Some(6_400_000_000)));
        assert_eq!(row.bytes_recommended, Some(4_000_000_000));
        assert_eq!(row.observed_period, Some(86400.0));
        assert_eq!(
            row.apply_sql.as_deref(),
            Some("ALTER SYSTEM SET wal_compression = 'lz4';\nSELECT pg_catalog.pg_reload_conf();")
        );
        // 0.5 CPU seconds over the 64 MB read, per GiB of WAL and per day
        let per_gb = row.compress_cpu_seconds_per_gb.unwrap();
        assert!((per_gb - 0.5 / (64e6 / GB)).abs() < 1e-9);
        assert!((row.compress_cpu_seconds_per_day.unwrap() - 0.5 * 100.0).abs() < 1e-6);
        assert_eq!(row.confidence, "medium");
        assert_eq!(row.target, "wal_compression (cluster-wide)");
        assert!(
            row.basis.starts_with(
                "the cluster's WAL (every database's) 0/1000000..0/5000000: 61 MB as written \
                 (wal_compression = off now), 61 MB with every image uncompressed ("
            ),
            "{}",
            row.basis
        );
        let lz4_now = from_whatif(
            &rows,
            "lz4",
            40_000_000,
            WalPeriod::Statistics(Rate { amount: 4e9, seconds: 86400.0 }),
            steady,
        );
        assert!(lz4_now.basis.contains(": 38 MB as written (wal_compression = lz4 now), 61 MB with every image"));
        // kept: no statement and no CPU figures
        let kept = from_whatif(
            &rows,
            "lz4",
            40_000_000,
            WalPeriod::Statistics(Rate { amount: 6.4e9, seconds: 600.0 }),
            steady,
        );
        assert!(kept.apply_sql.is_none() && kept.note.starts_with("keep: "));
        // ten minutes measured: the bytes are those of the ten minutes, and a day is 144 times them
        assert_eq!((kept.bytes_now, kept.bytes_per_day_now), (Some(6_400_000_000), Some(921_600_000_000)));
        assert_eq!(kept.compress_cpu_seconds_per_gb, None);
        assert_eq!(kept.confidence, "low", "ten minutes of statistics");
        // seven hours of statistics that include loading every row the tables hold
        let loaded = from_whatif(
            &rows,
            "off",
            64_000_000,
            WalPeriod::Statistics(Rate { amount: 6.4e9, seconds: 25200.0 }),
            Inserted { rows: 1e6, held: 1e6 },
        );
        assert_eq!(loaded.confidence, "low");
        assert!(loaded.basis.contains("over 7.0 h; the period is dominated by a bulk load"), "{}", loaded.basis);
    }

    #[test]
    fn bytes_now_is_the_wal_as_written_when_sessions_set_their_own() {
        // off in force, but sessions wrote with lz4: 45 MB really written, not the off row's 64
        let rows = [whatif("off", 64_000_000, 0.0), whatif("lz4", 40_000_000, 0.5), whatif("zstd", 38_000_000, 1.0)];
        let mut span = TimeSpan::default();
        span.observe(0);
        span.observe(3_600_000_000);
        let statistics = Rate { amount: 1e12, seconds: 600.0 };
        let steady = Inserted { rows: 1000.0, held: 1_000_000.0 };
        let row = from_whatif(&rows, "off", 45_000_000, WalPeriod::Archive { span, statistics }, steady);
        assert_eq!((row.bytes_now, row.bytes_recommended), (Some(45_000_000), Some(40_000_000)));
        assert!(
            row.basis.contains("43 MB as written (wal_compression = off now), 61 MB with every image"),
            "{}",
            row.basis
        );
    }

    #[test]
    fn an_archive_is_scaled_by_the_span_of_its_timestamps() {
        let mut span = TimeSpan::default();
        assert_eq!(span.seconds(), None);
        span.observe(7_200_000_000);
        assert_eq!(span.seconds(), None, "one timestamp spans nothing");
        span.observe(0);
        span.observe(3_600_000_000);
        assert_eq!((span.seconds(), span.count), (Some(7200.0), 3), "earliest to latest, in any order");
        let rows = [whatif("off", 64_000_000, 0.0), whatif("lz4", 40_000_000, 0.5), whatif("zstd", 38_000_000, 1.0)];
        let statistics = Rate { amount: 1e12, seconds: 600.0 };
        let loaded = Inserted { rows: 1e6, held: 1e6 };
        let row = from_whatif(&rows, "off", 64_000_000, WalPeriod::Archive { span, statistics }, loaded);
        // the 64 MB read over its two hours, not pg_stat_wal's terabyte; twelve such a day
        assert_eq!(row.observed_period, Some(7200.0));
        assert_eq!((row.bytes_now, row.bytes_recommended), (Some(64_000_000), Some(40_000_000)));
        assert_eq!((row.bytes_per_day_now, row.bytes_per_day_recommended), (Some(768_000_000), Some(480_000_000)));
        assert!((row.compress_cpu_seconds_per_day.unwrap() - 0.5 * 12.0).abs() < 1e-9);
        assert_eq!(row.confidence, "medium", "two hours, 500 images; the statistics' bulk load is not the archive's");
        assert!(row.basis.ends_with("3 commit and checkpoint timestamps spanning 2.0 h"), "{}", row.basis);
        // fewer than two timestamps: pg_stat_wal's period instead, and the basis says why
        let mut one = TimeSpan::default();
        one.observe(5);
        let fallback = from_whatif(&rows, "off", 64_000_000, WalPeriod::Archive { span: one, statistics }, loaded);
        assert_eq!((fallback.bytes_now, fallback.observed_period), (Some(1_000_000_000_000), Some(600.0)));
        assert!(
            fallback.basis.contains("holds 1 commit or checkpoint timestamp(s), fewer than two"),
            "{}",
            fallback.basis
        );
        assert_eq!(fallback.confidence, "low");
    }
}
