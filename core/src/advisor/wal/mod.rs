//! The `wal_compression` row: how much WAL to read in the time there is, and the row from the
//! what-if over it (or, when it holds no full-page image, from sampled pages), scaled to a day
//! by the rate `pg_stat_wal` observed.

use super::words::{period, size, Rate, GB};
use super::{
    bulk_load_words, choose_wal, per_day_confidence, saving_percent, AdviceRow, Confidence, Decision, Inserted,
    WalOption,
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
        if load.is_some() { Confidence::Low } else { per_day_confidence(now.sampled_images as u64, written.seconds) };
    let mut cautions = String::new();
    if window_share < MIN_WINDOW_SHARE {
        confidence = confidence.step_down();
        cautions.push_str(&format!(
            "; the WAL read is {:.2}% of the period's: it stands for little of it",
            100.0 * window_share
        ));
    }
    if noisy {
        confidence = Confidence::Low;
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
        confidence,
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
        confidence: if load.is_none() && per_day_confidence(off.images as u64, written.seconds) == Confidence::High {
            Confidence::Medium
        } else {
            Confidence::Low
        },
        ..row(current_setting, &options, &decision, ", from sampled pages standing for the images", "")
    }
    .over_period(written.amount, bytes_then, written.seconds)
}

#[cfg(test)]
mod tests;
