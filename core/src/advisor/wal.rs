//! The `wal_compression` row: how much WAL to read in the time there is, and the row from the
//! what-if over it (or, when it holds no full-page image, from sampled pages), scaled to a day
//! by the rate `pg_stat_wal` observed.

use super::words::{period, size, Rate, GB};
use super::{
    bulk_load_words, choose_wal, per_day_confidence, saving_percent, AdviceRow, Decision, Inserted, WalOption,
};
use crate::pg_compression::WalCompression;
use crate::scenarios::fpi::FpiRow;
use crate::scenarios::wal::{ChunkSavings, WalWhatIfRow};

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

/// The period a WAL row's bytes cover, and the full-page images written over it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WalPeriod {
    /// pg_wal read: pg_stat_wal's bytes written (`wal_bytes`) and full-page images
    /// (`wal_fpi`) since its reset.
    Statistics { written: Rate, images: Rate },
    /// An archive read (`wal_dir`): the span of its records' timestamps, with pg_stat_wal's
    /// figures standing in when the WAL read holds fewer than two.
    Archive { span: TimeSpan, written: Rate, images: Rate },
}

/// The WAL a row's bytes are: the volume and the images over the period, the words that say
/// where they come from, and whether the statistics' bulk-load rule applies (only to
/// pg_stat_wal's period).
fn observed(period_of: WalPeriod, read_bytes: i64, read_images: i64) -> (Rate, Rate, String, bool) {
    let statistics = |written: Rate, images: Rate, why: &str| {
        (
            written,
            images,
            format!(
                "; bytes over the period from pg_stat_wal{why}: {} written and {:.0} full-page images over {}",
                size(written.amount),
                images.amount,
                period(written.seconds)
            ),
            true,
        )
    };
    match period_of {
        WalPeriod::Statistics { written, images } => statistics(written, images, ""),
        WalPeriod::Archive { span, written, images } => match span.seconds() {
            Some(seconds) => (
                Rate { amount: read_bytes as f64, seconds },
                Rate { amount: read_images as f64, seconds },
                format!(
                    "; the period is the WAL read's own: {} commit and checkpoint timestamps spanning {}",
                    span.count,
                    period(seconds)
                ),
                false,
            ),
            None => statistics(
                written,
                images,
                &format!(
                    " (the archive's WAL read holds {} commit or checkpoint timestamp(s), fewer than two apart, \
                     to span a period)",
                    span.count
                ),
            ),
        },
    }
}

/// z of a two-sided 95% interval.
const Z95: f64 = 1.96;

/// Below this share of the period's WAL, the WAL read stands for too little of it to be sure:
/// the confidence is a step lower.
pub const MIN_WINDOW_SHARE: f64 = 0.01;

/// The bytes a full-page image saves under setting `index` (the what-if's order) against as
/// written, per image sampled, over `chunks` (the pieces of the WAL read): the ratio
/// estimator `Σ saved / Σ images`, and the half-width of its 95% interval from how it varies
/// from piece to piece (a cluster sample of pieces; `sampled_share`, the share of the
/// period's images sampled, the finite-population correction: 1 when every image of the
/// period was compressed). None without a sampled image; no half-width with fewer than two
/// pieces.
pub fn saved_per_image(chunks: &[ChunkSavings], index: usize, sampled_share: f64) -> Option<(f64, Option<f64>)> {
    let images: u64 = chunks.iter().map(|c| c.images).sum();
    if images == 0 {
        return None;
    }
    let saved: i64 = chunks.iter().map(|c| c.saved.get(index).copied().unwrap_or(0)).sum();
    let ratio = saved as f64 / images as f64;
    let k = chunks.len() as f64;
    if chunks.len() < 2 {
        return Some((ratio, None));
    }
    let mean_images = images as f64 / k;
    let residuals: f64 = chunks
        .iter()
        .map(|c| {
            let r = (c.saved.get(index).copied().unwrap_or(0) as f64 - ratio * c.images as f64) / mean_images;
            r * r
        })
        .sum();
    let variance = (1.0 - sampled_share.clamp(0.0, 1.0)) * residuals / (k * (k - 1.0));
    Some((ratio, Some(Z95 * variance.sqrt())))
}

/// One confidence step lower (`high` to `medium`, `medium` to `low`).
fn step_down(confidence: &str) -> &'static str {
    match confidence {
        "high" => "medium",
        _ => "low",
    }
}

/// The row from the what-if's rows (at least one full-page image read) and the pieces of the
/// WAL read ([`ChunkSavings`]), the bytes the range read took as the server wrote it (its LSN
/// span: images compressed or not as each record says, whatever sessions had set), the period
/// its bytes cover, and the rows inserted over pg_stat_wal's period (a bulk load makes it
/// `low`).
///
/// The WAL read measures what an image saves under each setting (per image, over the whole
/// read); the period says how many images were written: the bytes under a setting are the
/// period's bytes as written less its images times what one saves. So a read that happens to
/// hold a checkpoint's burst of images, or to end in a segment switch, does not move the
/// period's figures; a read small against the period lowers the confidence instead.
pub fn from_whatif(
    rows: &[WalWhatIfRow],
    chunks: &[ChunkSavings],
    current_setting: &str,
    as_written: i64,
    period_of: WalPeriod,
    inserted: Inserted,
) -> AdviceRow {
    let now = setting_row(rows, in_force(current_setting));
    let read_images = now.fpi_images.max(1);
    let (written, counted, words, statistics) = observed(period_of, as_written, read_images);
    // pg_stat_wal counting no image (reset since the WAL read was written): the read's own
    // share of images stands for the period's.
    let (images, images_words) = if counted.amount > 0.0 {
        (counted.amount, String::new())
    } else {
        (
            read_images as f64 * written.amount / as_written.max(1) as f64,
            "; pg_stat_wal counts no full-page image over its period: the WAL read's images per byte stand for it"
                .to_string(),
        )
    };
    let sampled_share = now.sampled_images as f64 / images.max(1.0);
    // Per setting: bytes saved per image against as written (the rows' layout, page headers
    // and alignment included), and the interval's half-width from the pieces' spread.
    let per_image = |r: &WalWhatIfRow| (as_written - r.wal_bytes) as f64 / read_images as f64;
    let half_width = |i: usize| saved_per_image(chunks, i, sampled_share).and_then(|(_, h)| h);
    let off_bytes = written.amount - images * per_image(setting_row(rows, WalCompression::Off));
    let under = |r: &WalWhatIfRow, delta: f64| written.amount - images * (per_image(r) + delta);
    let options_at = |sign: f64| -> Vec<WalOption> {
        rows.iter()
            .enumerate()
            .map(|(i, r)| WalOption {
                setting: r.wal_compression,
                saving_percent: saving_percent(
                    off_bytes.round() as i64,
                    under(r, sign * half_width(i).unwrap_or(0.0)).round() as i64,
                ),
            })
            .collect()
    };
    let options = options_at(0.0);
    let decision = choose_wal(&options);
    let then_index = rows.iter().position(|r| r.wal_compression == decision.recommended).unwrap_or(0);
    let then = &rows[then_index];
    // The pick at both ends of the intervals: another pick at either is within the noise.
    let noisy = [-1.0, 1.0].iter().any(|&sign| choose_wal(&options_at(sign)).recommended != decision.recommended);
    let load = if statistics { bulk_load_words(inserted, written.seconds) } else { None };
    let window_share = as_written as f64 / written.amount.max(1.0);
    let keep = decision.recommended == in_force(current_setting);
    let read_gb = now.wal_bytes as f64 / GB;
    let cpu = |seconds: f64, scale: Option<f64>| {
        (!keep && now.wal_bytes > 0).then_some(seconds).zip(scale).map(|(s, k)| s * k)
    };
    // CPU goes with the images: the read's per image, times the period's images a day.
    let daily = Rate { amount: images, seconds: written.seconds }.per_day().map(|d| d / read_images as f64);
    let mut confidence =
        if load.is_some() { "low" } else { per_day_confidence(now.sampled_images as u64, written.seconds) };
    let mut cautions = String::new();
    if window_share < MIN_WINDOW_SHARE {
        confidence = step_down(confidence);
        cautions.push_str(&format!(
            "; the WAL read is {:.2}% of the period's: it stands for little of it",
            100.0 * window_share
        ));
    }
    if noisy {
        confidence = "low";
        cautions
            .push_str("; at an end of the 95% intervals another setting would be picked: the pick is within the noise");
    }
    let then_bytes = under(then, 0.0);
    let (then_low, then_high) = match half_width(then_index) {
        Some(h) => {
            let (a, b) = (under(then, h), under(then, -h));
            (Some(a.min(b).round() as i64), Some(a.max(b).round() as i64))
        }
        None => (None, None),
    };
    let interval_words = match (then_low, then_high) {
        (Some(lo), Some(hi)) => format!(
            "; {} under {} (95% interval {}..{}, from how the bytes an image saves vary over {} pieces of 1 MB of \
             the WAL read)",
            size(then_bytes),
            decision.recommended.setting(),
            size(lo as f64),
            size(hi as f64),
            chunks.len()
        ),
        _ => String::new(),
    };
    AdviceRow {
        compress_cpu_seconds_per_day: cpu(then.compress_cpu_seconds, daily),
        decompress_cpu_seconds_per_day: cpu(then.decompress_cpu_seconds, daily),
        compress_cpu_seconds_per_gb: cpu(then.compress_cpu_seconds, Some(1.0 / read_gb)),
        decompress_cpu_seconds_per_gb: cpu(then.decompress_cpu_seconds, Some(1.0 / read_gb)),
        basis: format!(
            "the cluster's WAL (every database's) {}..{}: {} as written (wal_compression = {current_setting} now), {} \
             with every image uncompressed ({} records, {} full-page images, {} compressed under each setting with the \
             server's routines){words}{images_words}{interval_words}{cautions}",
            then.start_lsn,
            then.end_lsn,
            size(as_written as f64),
            size(setting_row(rows, WalCompression::Off).wal_bytes as f64),
            now.records,
            now.fpi_images,
            now.sampled_images,
        ) + load.as_deref().unwrap_or(""),
        confidence: confidence.into(),
        ..row(
            current_setting,
            &options,
            &decision,
            "",
            " bytes_now is the WAL written over observed_period, bytes_per_day_now the same scaled to a day; \
             bytes_recommended is it less the period's full-page images times what one saves under the setting in \
             the WAL read; CPU is the server's own code compressing full-page images as WAL is written and \
             decompressing them at replay or recovery.",
        )
    }
    .over_period(written.amount, then_bytes, written.seconds)
    .with_intervals(Some((written.amount, written.amount)), then_low.zip(then_high).map(|(a, b)| (a as f64, b as f64)))
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

    fn stats(written: f64, images: f64, seconds: f64) -> WalPeriod {
        WalPeriod::Statistics { written: Rate { amount: written, seconds }, images: Rate { amount: images, seconds } }
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
        // 6.4 GB and 50,000 images written over a day: 48,000 bytes saved an image under lz4
        let day = stats(6.4e9, 50_000.0, 86400.0);
        let row = from_whatif(&rows, &[], "off", 64_000_000, day, steady);
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
        let lz4_now = from_whatif(&rows, &[], "lz4", 40_000_000, stats(4e9, 50_000.0, 86400.0), steady);
        assert!(lz4_now.basis.contains(": 38 MB as written (wal_compression = lz4 now), 61 MB with every image"));
        // kept: no statement and no CPU figures
        let kept = from_whatif(&rows, &[], "lz4", 40_000_000, stats(6.4e9, 50_000.0, 600.0), steady);
        assert!(kept.apply_sql.is_none() && kept.note.starts_with("keep: "));
        // ten minutes measured: the bytes are those of the ten minutes, and a day is 144 times them
        assert_eq!((kept.bytes_now, kept.bytes_per_day_now), (Some(6_400_000_000), Some(921_600_000_000)));
        assert_eq!(kept.compress_cpu_seconds_per_gb, None);
        assert_eq!(kept.confidence, "low", "ten minutes of statistics");
        // seven hours of statistics that include loading every row the tables hold
        let loaded = from_whatif(
            &rows,
            &[],
            "off",
            64_000_000,
            stats(6.4e9, 50_000.0, 25200.0),
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
        let period = WalPeriod::Archive { span, written: statistics, images: statistics };
        let row = from_whatif(&rows, &[], "off", 45_000_000, period, steady);
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
        let period = WalPeriod::Archive { span, written: statistics, images: Rate { amount: 1e6, seconds: 600.0 } };
        let row = from_whatif(&rows, &[], "off", 64_000_000, period, loaded);
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
        let period =
            WalPeriod::Archive { span: one, written: statistics, images: Rate { amount: 1e6, seconds: 600.0 } };
        let fallback = from_whatif(&rows, &[], "off", 64_000_000, period, loaded);
        assert_eq!((fallback.bytes_now, fallback.observed_period), (Some(1_000_000_000_000), Some(600.0)));
        assert!(
            fallback.basis.contains("holds 1 commit or checkpoint timestamp(s), fewer than two"),
            "{}",
            fallback.basis
        );
        assert_eq!(fallback.confidence, "low");
    }

    /// A WAL read of `images` images as written under off (`wal_bytes` as written), each saving
    /// `pglz`, `lz4` and `zstd` bytes under those settings.
    fn read_of(wal_bytes: i64, images: i64, saved: [i64; 3]) -> Vec<WalWhatIfRow> {
        let mut rows = vec![whatif("off", wal_bytes, 0.0)];
        for (setting, each) in ["pglz", "lz4", "zstd"].iter().zip(saved) {
            rows.push(whatif(setting, wal_bytes - images * each, 0.5));
        }
        for row in &mut rows {
            (row.fpi_images, row.sampled_images) = (images, images);
            row.saving_percent = 100.0 * (wal_bytes - row.wal_bytes) as f64 / wal_bytes as f64;
        }
        rows
    }

    #[test]
    fn the_pick_holds_whether_the_read_holds_a_burst_of_images_or_few() {
        // a steady day: 6.4 GB and 100,000 images; an image saves 4,000 bytes under lz4
        let day = stats(6.4e9, 100_000.0, 86400.0);
        let steady = Inserted { rows: 1000.0, held: 1_000_000.0 };
        let saved = [3_900, 4_000, 4_600];
        // read just after a checkpoint: images are most of the WAL
        let burst = read_of(10_000_000, 1_000, saved);
        // read late in the checkpoint cycle: few images in much WAL
        let quiet = read_of(50_000_000, 500, saved);
        // the read's own ratio applied to the period (the old rule) flips the pick to off
        let own = |rows: &[WalWhatIfRow]| {
            choose_wal(
                &rows
                    .iter()
                    .map(|r| WalOption { setting: r.wal_compression, saving_percent: r.saving_percent })
                    .collect::<Vec<_>>(),
            )
            .recommended
        };
        assert_eq!((own(&burst), own(&quiet)), (WalCompression::Lz4, WalCompression::Off));
        // the period's images times what one saves: the same pick and bytes from both reads
        let a = from_whatif(&burst, &[], "off", 10_000_000, day, steady);
        let b = from_whatif(&quiet, &[], "off", 50_000_000, day, steady);
        assert_eq!((a.recommended.as_str(), b.recommended.as_str()), ("lz4", "lz4"));
        assert_eq!(a.bytes_recommended, Some(6_400_000_000 - 100_000 * 4_000));
        assert_eq!((a.bytes_now, a.bytes_recommended), (b.bytes_now, b.bytes_recommended));
        assert!((a.saving_percent - 6.25).abs() < 1e-9, "{}", a.saving_percent);
        assert!(a.note.contains("lz4 6.2%, zstd 7.2%"), "{}", a.note);
        // bytes_now is counted, not estimated: its interval is the figure itself
        assert_eq!((a.bytes_now_low, a.bytes_now_high), (Some(6_400_000_000), Some(6_400_000_000)));
    }

    #[test]
    fn a_read_small_against_the_period_lowers_the_confidence() {
        let steady = Inserted { rows: 1000.0, held: 1_000_000.0 };
        let mut rows = read_of(10_000_000, 2_000, [3_900, 4_000, 4_600]);
        rows.iter_mut().for_each(|r| r.sampled_images = 2_000);
        // 10 MB read of 640 MB (1.6%): high; of 6.4 GB (0.16%): a step lower
        let big = from_whatif(&rows, &[], "off", 10_000_000, stats(6.4e8, 100_000.0, 86400.0), steady);
        assert_eq!(big.confidence, "high", "{}", big.basis);
        let small = from_whatif(&rows, &[], "off", 10_000_000, stats(6.4e9, 100_000.0, 86400.0), steady);
        assert_eq!(small.confidence, "medium");
        assert_eq!(small.recommended, big.recommended);
        assert!(small.basis.contains("the WAL read is 0.16% of the period's"), "{}", small.basis);
    }

    /// Pieces of the WAL read where an image saves `per_image[i]` bytes under lz4 (index 2 of
    /// off, pglz, lz4, zstd), `images` images each.
    fn pieces(images: u64, per_image: &[i64]) -> Vec<ChunkSavings> {
        per_image
            .iter()
            .map(|&s| ChunkSavings { images, saved: vec![0, s * images as i64, s * images as i64, s * images as i64] })
            .collect()
    }

    #[test]
    fn the_interval_comes_from_how_the_pieces_vary() {
        assert_eq!(saved_per_image(&[], 2, 0.0), None);
        assert_eq!(saved_per_image(&pieces(10, &[4000]), 2, 0.0), Some((4000.0, None)), "one piece: no spread");
        // the same saving in every piece: no width
        assert_eq!(saved_per_image(&pieces(10, &[4000, 4000, 4000]), 2, 0.0), Some((4000.0, Some(0.0))));
        // 3,000 and 5,000 with 10 images each: ratio 4,000; residuals ±10,000 over a mean of 10
        // images, so a variance of (1 + 1) / (2 * 1) = 1,000,000 and a half-width of 1.96 * 1,000
        let (ratio, half) = saved_per_image(&pieces(10, &[3000, 5000]), 2, 0.0).unwrap();
        assert_eq!(ratio, 4000.0);
        assert!((half.unwrap() - 1960.0).abs() < 1e-9, "{half:?}");
        // every image of the period compressed: nothing left to estimate
        assert_eq!(saved_per_image(&pieces(10, &[3000, 5000]), 2, 1.0).unwrap().1, Some(0.0));
        // a quarter of the period's images sampled: the variance times 3/4
        let quarter = saved_per_image(&pieces(10, &[3000, 5000]), 2, 0.25).unwrap().1.unwrap();
        assert!((quarter - 1960.0 * 0.75f64.sqrt()).abs() < 1e-9);
    }

    #[test]
    fn the_intervals_cover_the_periods_saving_in_at_least_93_of_200_seeds() {
        // a period of 2,000 pieces whose images save 4,000 bytes each on average, varying by
        // piece (a gamma-like spread, pieces of 5 to 40 images); each seed reads 100 pieces at random
        let mut covered = 0;
        for seed in 0..200u64 {
            let mut rng = crate::rng::SeededRng::new(1000 + seed);
            let population: Vec<ChunkSavings> = (0..2000)
                .map(|_| {
                    let images = 5 + rng.below(36);
                    let each = 2000 + rng.below(2000) as i64 + (rng.below(4000) as i64) * (rng.below(2) as i64);
                    ChunkSavings { images, saved: vec![0, 0, each * images as i64, 0] }
                })
                .collect();
            let truth = saved_per_image(&population, 2, 1.0).unwrap().0;
            let mut order: Vec<usize> = (0..population.len()).collect();
            for i in 0..100 {
                let j = i + rng.below((order.len() - i) as u64) as usize;
                order.swap(i, j);
            }
            let read: Vec<ChunkSavings> = order[..100].iter().map(|&i| population[i].clone()).collect();
            let share = read.iter().map(|c| c.images).sum::<u64>() as f64
                / population.iter().map(|c| c.images).sum::<u64>() as f64;
            let (ratio, half) = saved_per_image(&read, 2, share).unwrap();
            let half = half.unwrap();
            assert!(half > 0.0);
            if (ratio - truth).abs() <= half {
                covered += 1;
            }
        }
        assert!(covered >= 186, "{covered} of 200 covered");
    }

    #[test]
    fn the_row_carries_the_interval_and_a_pick_within_the_noise_is_low() {
        let steady = Inserted { rows: 1000.0, held: 1_000_000.0 };
        let day = stats(6.4e9, 100_000.0, 86400.0);
        let rows = read_of(10_000_000, 1_000, [3_900, 4_000, 4_600]);
        // 10 pieces of 100 images: lz4 saves 3,800 to 4,200 an image
        let mut chunks = pieces(100, &[3800, 4200, 3900, 4100, 4000, 3800, 4200, 3900, 4100, 4000]);
        for c in &mut chunks {
            c.saved[1] = c.saved[2] * 39 / 40;
            c.saved[3] = c.saved[2] * 46 / 40;
        }
        let row = from_whatif(&rows, &chunks, "off", 10_000_000, day, steady);
        assert_eq!(row.recommended, "lz4");
        let (low, high) = (row.bytes_recommended_low.unwrap(), row.bytes_recommended_high.unwrap());
        let then = row.bytes_recommended.unwrap();
        assert!(low < then && then < high, "{low} {then} {high}");
        // the half-width: 1.96 * the pieces' spread, times the period's 100,000 images
        let (_, half) = saved_per_image(&chunks, 2, 1_000.0 / 100_000.0).unwrap();
        assert!(((high - low) as f64 / 2.0 - 100_000.0 * half.unwrap()).abs() < 2.0);
        assert_eq!(row.confidence, "medium", "{}", row.basis);
        assert!(row.basis.contains("(95% interval "), "{}", row.basis);
        // lz4 saving 5.0% of the WAL, give or take: off at one end of its interval
        let thin = read_of(10_000_000, 1_000, [3_100, 3_200, 3_300]);
        let mut wide = pieces(100, &[2000, 4400, 2000, 4400, 3200, 3200, 2000, 4400, 3200, 3200]);
        for c in &mut wide {
            c.saved[1] = c.saved[2] * 31 / 32;
            c.saved[3] = c.saved[2] * 33 / 32;
        }
        let noisy = from_whatif(&thin, &wide, "off", 10_000_000, day, steady);
        assert_eq!(noisy.recommended, "lz4", "5.0%: on the threshold; {}", noisy.note);
        assert_eq!(noisy.confidence, "low");
        assert!(noisy.basis.contains("the pick is within the noise"), "{}", noisy.basis);
    }
}
