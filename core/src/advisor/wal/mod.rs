//! The `wal_compression` row: how much WAL to read in the time there is, newest first
//! ([`pieces`]), and the row from the what-if over it (or, when it holds no full-page image,
//! from sampled pages): over the steady part of the WAL read, a one-off load set apart, and
//! scaled to a day by the rate that part was written at.

use super::words::{period, size, Rate, GB};
use super::{
    bulk_load_words, choose_wal, per_day_confidence, saving_percent, AdviceRow, Confidence, Decision, Inserted,
    WalOption,
};
use crate::pg_compression::WalCompression;
use crate::scenarios::fpi::FpiRow;
use crate::scenarios::wal::{lsn_text, ChunkSavings, WalWhatIfRow, CHUNK_BYTES};

pub mod pieces;
use pieces::Piece;

/// wal_whatif's cost (scripts/bench/wal_whatif_speed.sh): seconds per GB of WAL to read it, and per
/// GB to rebuild and compress every image under every setting.
pub const READ_SECONDS_PER_GB: f64 = 0.4;
pub const REPLAY_SECONDS_PER_GB: f64 = 4.5;

/// The setting in force, as `SHOW wal_compression` printed it, typed (`on` is pglz; a value
/// this version does not know counts as off).
fn in_force(setting: &str) -> WalCompression {
    WalCompression::from_setting(setting).unwrap_or(WalCompression::Off)
}

/// What every `wal_compression` row says besides its figures: the setting in force and the
/// one to use, the statements that apply it (none to keep), and the note: the reason, then the
/// saving of each setting (measured `how`), then `tail`.
/// `intervals`: each option's 95% interval of its saving in percent, where known (a setting
/// whose saving is exact, or one point, has none in words).
fn row(
    current_setting: &str,
    options: &[WalOption],
    intervals: &[Option<(f64, f64)>],
    decision: &Decision<WalCompression>,
    how: &str,
    tail: &str,
) -> AdviceRow {
    let keep = decision.recommended == in_force(current_setting);
    let savings: Vec<String> = options
        .iter()
        .enumerate()
        .map(|(i, o)| match intervals.get(i).copied().flatten() {
            Some((lo, hi)) if hi - lo >= 0.05 => {
                format!("{} {:.1}% (95% interval {lo:.1}..{hi:.1}%)", o.setting, o.saving_percent)
            }
            _ => format!("{} {:.1}%", o.setting, o.saving_percent),
        })
        .collect();
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

/// What stands for the period when the WAL read cannot say how long it took to write (fewer
/// than two times among its records and the flush), and where the read ends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WalPeriod {
    /// pg_wal read back from the flush LSN: `now`, the time the flush LSN was taken
    /// (microseconds since 2000); pg_stat_wal's figures since its reset.
    PgWal { now: i64, statistics: WalStatistics },
    /// An archive read (`wal_dir`): pg_stat_wal's figures.
    Archive { statistics: WalStatistics },
}

/// pg_stat_wal's figures since its reset: bytes written (`wal_bytes`), full-page images
/// (`wal_fpi`) and, from PostgreSQL 19, their bytes as written (`wal_fpi_bytes`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WalStatistics {
    pub written: Rate,
    pub images: Rate,
    pub image_bytes: Option<f64>,
}

impl WalPeriod {
    fn statistics(&self) -> WalStatistics {
        match *self {
            WalPeriod::PgWal { statistics, .. } | WalPeriod::Archive { statistics } => statistics,
        }
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

/// The row from the what-if's rows over the whole read (at least one full-page image read)
/// and its pieces ([`Piece`], oldest first, contiguous: the WAL read back from the flush LSN),
/// what stands for the period when the read carries too few times (`period_of`), and the rows
/// inserted over pg_stat_wal's period (None: pg_stat_database's counters cover another).
///
/// The pieces split into one-off loads and the steady workload ([`pieces::split`]); the row
/// is the steady part's: its bytes as written, its images, what they save under each setting
/// (summed over its pieces), over the seconds it took to write (the times its records and
/// the flush carry). Every figure is over that one period; each setting's saving has a 95%
/// interval from how the bytes an image saves vary from piece to piece, the pieces a sample of
/// the steady workload. The loads are said apart in the basis. With fewer than two times,
/// pg_stat_wal's period stands for it: its images times what one saves in the read.
pub fn from_whatif(
    rows: &[WalWhatIfRow],
    pieces: &[Piece],
    current_setting: &str,
    period_of: WalPeriod,
    inserted: Option<Inserted>,
) -> AdviceRow {
    let now = setting_row(rows, in_force(current_setting));
    let as_written: u64 = pieces.iter().map(Piece::bytes).sum();
    let end = match period_of {
        WalPeriod::PgWal { now, .. } => pieces.last().map(|p| (p.end, now)),
        WalPeriod::Archive { .. } => None,
    };
    let split = pieces::split(pieces, end);
    let steady: Vec<&Piece> = pieces.iter().zip(&split.steady).filter(|(_, s)| **s).map(|(p, _)| p).collect();
    let steady_bytes: f64 = steady.iter().map(|p| p.bytes() as f64).sum();
    let steady_images: u64 = steady.iter().map(|p| p.images).sum();
    let steady_seconds = split.steady_seconds();
    let stamps: u64 = steady.iter().map(|p| p.stamps).sum();
    // What an image saves under each setting against as written: the steady pieces' (all the
    // read's without a steady image).
    let with_images: Vec<&Piece> = if steady_images > 0 { steady.clone() } else { pieces.iter().collect() }
        .into_iter()
        .filter(|p| p.images > 0)
        .collect();
    let clusters: Vec<ChunkSavings> = with_images
        .iter()
        .map(|p| ChunkSavings {
            index: p.start / CHUNK_BYTES,
            images: p.images,
            saved: p.saved.iter().map(|v| v.round() as i64).collect(),
        })
        .collect();
    let images_in = |list: &[&Piece]| list.iter().map(|p| p.images).sum::<u64>().max(1) as f64;
    let per_image = |i: usize| {
        with_images.iter().map(|p| p.saved.get(i).copied().unwrap_or(0.0)).sum::<f64>() / images_in(&with_images)
    };
    let read_images = now.fpi_images.max(1);
    let sampled_steady: u64 = steady.iter().map(|p| p.sampled).sum();
    let ranges = split.steady_ranges(pieces);
    let range_words: Vec<String> = ranges.iter().map(|(a, b)| format!("{}..{}", lsn_text(*a), lsn_text(*b))).collect();
    let read_period = steady_seconds > 0.0;
    let (written, images, sampled_share, words, load) = if read_period {
        (
            Rate { amount: steady_bytes, seconds: steady_seconds },
            steady_images as f64,
            // the pieces stand for the steady workload, not for a finite period
            0.0,
            format!(
                "; the period is the steady WAL read's own, {}: {} written and {} full-page images over {}, timed by \
                 the {} times its commit and checkpoint records carry{}",
                range_words.join(", "),
                size(steady_bytes),
                steady_images,
                period(steady_seconds),
                stamps,
                if end.is_some() { " and the time of the flush LSN" } else { "" }
            ),
            None,
        )
    } else {
        let WalStatistics { written, images: counted, image_bytes } = period_of.statistics();
        // 19 counts the images' bytes as written: over the read's bytes an image, they say how
        // many images of the read's kind the period wrote. Else pg_stat_wal's count; counting
        // no image (reset since the WAL read was written), the read's own share of images.
        let image_size = now.fpi_bytes as f64 / read_images as f64;
        let (images, images_words) = match image_bytes {
            Some(bytes) if bytes > 0.0 && now.fpi_bytes > 0 => (
                bytes / image_size,
                format!(
                    "; the images from pg_stat_wal's wal_fpi_bytes: {} of full-page images as written, at the WAL \
                     read's {image_size:.0} bytes an image",
                    size(bytes)
                ),
            ),
            _ if counted.amount > 0.0 => (counted.amount, String::new()),
            _ => (
                read_images as f64 * written.amount / as_written.max(1) as f64,
                "; pg_stat_wal counts no full-page image over its period: the WAL read's images per byte stand for it"
                    .to_string(),
            ),
        };
        // The rows inserted count over pg_stat_wal's period only when pg_stat_database's
        // counters were reset with it.
        let (load, rows_words) = match inserted {
            Some(inserted) => (bulk_load_words(inserted, written.seconds), ""),
            None => (
                None,
                "; a bulk load is not judged from rows inserted: pg_stat_database's counters cover another period \
                 than pg_stat_wal's",
            ),
        };
        (
            written,
            images,
            now.sampled_images as f64 / images.max(1.0),
            format!(
                "; the WAL read carries fewer than two times to span a period: bytes over the period from pg_stat_wal: \
                 {} written and {:.0} full-page images over {}{images_words}{rows_words}",
                size(written.amount),
                images,
                period(written.seconds)
            ),
            load,
        )
    };
    let half_width = |i: usize| saved_per_image(&clusters, i, sampled_share).and_then(|(_, h)| h);
    let off_index = rows.iter().position(|r| r.wal_compression == WalCompression::Off).unwrap_or(0);
    let off_bytes = written.amount - images * per_image(off_index);
    let under = |i: usize, delta: f64| written.amount - images * (per_image(i) + delta);
    let options_at = |sign: f64| -> Vec<WalOption> {
        rows.iter()
            .enumerate()
            .map(|(i, r)| WalOption {
                setting: r.wal_compression,
                saving_percent: saving_percent(
                    off_bytes.round() as i64,
                    under(i, sign * half_width(i).unwrap_or(0.0)).round() as i64,
                ),
            })
            .collect()
    };
    let options = options_at(0.0);
    let (low, high) = (options_at(-1.0), options_at(1.0));
    let intervals: Vec<Option<(f64, f64)>> = (0..rows.len())
        .map(|i| {
            half_width(i).map(|_| {
                (low[i].saving_percent.min(high[i].saving_percent), low[i].saving_percent.max(high[i].saving_percent))
            })
        })
        .collect();
    let decision = choose_wal(&options);
    let then_index = rows.iter().position(|r| r.wal_compression == decision.recommended).unwrap_or(0);
    let then = &rows[then_index];
    // The pick at both ends of the intervals: another pick at either is within the noise.
    let noisy = [&low, &high].iter().any(|o| choose_wal(o).recommended != decision.recommended);
    let keep = decision.recommended == in_force(current_setting);
    let read_gb = now.wal_bytes as f64 / GB;
    let cpu = |seconds: f64, scale: Option<f64>| {
        (!keep && now.wal_bytes > 0).then_some(seconds).zip(scale).map(|(s, k)| s * k)
    };
    // CPU goes with the images: the read's per image, times the period's images a day.
    let daily = Rate { amount: images, seconds: written.seconds }.per_day().map(|d| d / read_images as f64);
    let sampled = if read_period { sampled_steady } else { now.sampled_images as u64 };
    let mut confidence =
        if load.is_some() || split.all_load { Confidence::Low } else { per_day_confidence(sampled, written.seconds) };
    let mut cautions = String::new();
    let window_share = as_written as f64 / written.amount.max(1.0);
    if !read_period && window_share < MIN_WINDOW_SHARE {
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
    let then_bytes = under(then_index, 0.0);
    let bounds = |i: usize| {
        half_width(i).map(|h| {
            let (a, b) = (under(i, h), under(i, -h));
            (a.min(b), a.max(b))
        })
    };
    let (then_low, then_high) = match bounds(then_index) {
        Some((a, b)) => (Some(a.round() as i64), Some(b.round() as i64)),
        None => (None, None),
    };
    // The interval the decision rests on: the recommendation's, or when it keeps the setting
    // (whose bytes are counted), the best other setting's, which the rule turned down.
    let best_other = (0..rows.len())
        .filter(|&i| i != then_index)
        .max_by(|&a, &b| options[a].saving_percent.total_cmp(&options[b].saving_percent));
    let decided = if keep { best_other } else { Some(then_index) };
    let interval_words = match decided.and_then(|i| bounds(i).map(|b| (i, b))) {
        Some((i, (lo, hi))) => format!(
            "; {} under {}{} (95% interval {}..{}, from how the bytes an image saves vary over {} pieces of 1 MB of \
             the WAL read)",
            size(under(i, 0.0)),
            rows[i].wal_compression.setting(),
            if keep { ", the best setting turned down" } else { "" },
            size(lo),
            size(hi),
            clusters.len()
        ),
        None => String::new(),
    };
    let mut load_words = String::new();
    if split.all_load {
        load_words.push_str(
            "; the WAL read is all one-off load (16 MB or more written by few transactions or at 10 times the rate \
             of the rest, mostly rows and whole pages): the advice is on it, and a steady day writes otherwise",
        );
    } else {
        for l in &split.loads {
            load_words.push_str(&format!(
                "; set apart as a one-off load (16 MB or more written by few transactions or at 10 times the steady \
                 rate, mostly rows and whole pages): {} at {}..{}{}",
                size(l.end.saturating_sub(l.start) as f64),
                lsn_text(l.start),
                lsn_text(l.end),
                if l.seconds > 0.0 { format!(" over {}", period(l.seconds)) } else { String::new() }
            ));
        }
        if !split.loads.is_empty() {
            load_words.push_str("; the advice is on the steady WAL");
        }
    }
    AdviceRow {
        compress_cpu_seconds_per_day: cpu(then.compress_cpu_seconds, daily),
        decompress_cpu_seconds_per_day: cpu(then.decompress_cpu_seconds, daily),
        compress_cpu_seconds_per_gb: cpu(then.compress_cpu_seconds, Some(1.0 / read_gb)),
        decompress_cpu_seconds_per_gb: cpu(then.decompress_cpu_seconds, Some(1.0 / read_gb)),
        basis: format!(
            "the cluster's WAL (every database's) {}..{}, the newest, read back from {}: {} as written \
             (wal_compression = {current_setting} now), {} with every image uncompressed ({} records, {} full-page \
             images, {} compressed under each setting with the server's routines){words}{load_words}{interval_words}\
             {cautions}",
            then.start_lsn,
            then.end_lsn,
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
            &intervals,
            &decision,
            "",
            " bytes_now is the WAL written over observed_period, bytes_per_day_now the same scaled to a day; \
             bytes_recommended is it less what its full-page images save under the setting; CPU is the server's own \
             code compressing full-page images as WAL is written and decompressing them at replay or recovery.",
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
    inserted: Option<Inserted>,
) -> AdviceRow {
    let load = inserted.and_then(|inserted| bulk_load_words(inserted, written.seconds));
    let rows_words = if inserted.is_some() {
        ""
    } else {
        "; a bulk load is not judged from rows inserted: pg_stat_database's counters cover another period than \
         pg_stat_wal's"
    };
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
             full-page images over {}{rows_words}",
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
        ..row(current_setting, &options, &[], &decision, ", from sampled pages standing for the images", "")
    }
    .over_period(written.amount, bytes_then, written.seconds)
}

#[cfg(test)]
mod tests;
