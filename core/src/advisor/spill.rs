//! The informational `spill` row: what LZ4 streaming would save on logical decoding's spill
//! files, from the spill simulation on sampled rows and the rate `pg_stat_replication_slots`
//! observed.

use super::words::{period, size, Rate, GB};
#[cfg(test)]
use super::Confidence;
use super::{per_day_confidence, AdviceRow};
use crate::scenarios::spill::SpillRow;

/// The row from the simulation's `raw` and `lz4` results on `records` rows of `table`, for
/// `slots` slots that spilled `txns` transactions and `spilled` bytes.
pub fn spill_row(raw: &SpillRow, lz4: &SpillRow, table: &str, slots: i64, txns: i64, spilled: Rate) -> AdviceRow {
    let ratio = if raw.stored_bytes > 0 { lz4.stored_bytes as f64 / raw.stored_bytes as f64 } else { 1.0 };
    AdviceRow {
        area: "spill".into(),
        target: format!("logical decoding spill files ({slots} slot(s), {txns} transaction(s) spilled)"),
        current: "uncompressed (PostgreSQL cannot compress spill files)".into(),
        recommended: "lz4_stream".into(),
        compress_cpu_seconds_per_gb: (raw.raw_bytes > 0).then(|| lz4.cpu_seconds / (raw.raw_bytes as f64 / GB)),
        basis: format!(
            "pg_stat_replication_slots: {} spilled over {}; {} rows of {table} as change records, LZ4 streaming across \
             records against raw (simulate_spill)",
            size(spilled.amount),
            period(spilled.seconds),
            raw.records
        ),
        confidence: per_day_confidence(raw.records as u64, spilled.seconds),
        apply_sql: None,
        note: "informational: the pgsql-hackers patch compressing ReorderBuffer spill files with LZ4 streaming is \
               not in PostgreSQL; raising logical_decoding_work_mem spills less. bytes_now is what spilled over \
               observed_period, bytes_per_day_now the same scaled to a day."
            .into(),
        ..AdviceRow::default()
    }
    .over_period(spilled.amount, spilled.amount * ratio, spilled.seconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn simulated(strategy: &str, stored: i64, cpu: f64) -> SpillRow {
        SpillRow {
            strategy: strategy.into(),
            level: None,
            records: 2000,
            raw_bytes: 1 << 20,
            stored_bytes: stored,
            ratio: 0.0,
            wall_seconds: cpu,
            cpu_seconds: cpu,
            raw_records: 0,
        }
    }

    #[test]
    fn the_spill_row_scales_the_simulated_ratio_to_a_day() {
        let (raw, lz4) = (simulated("raw", 1 << 20, 0.0), simulated("lz4_stream", 1 << 18, 0.001));
        let row = spill_row(&raw, &lz4, "public.t", 1, 3, Rate { amount: 1e9, seconds: 43200.0 });
        assert_eq!((row.bytes_now, row.bytes_recommended), (Some(1_000_000_000), Some(250_000_000)));
        assert_eq!(row.observed_period, Some(43200.0));
        assert_eq!((row.bytes_per_day_now, row.bytes_per_day_recommended), (Some(2_000_000_000), Some(500_000_000)));
        assert_eq!(row.saving_percent, 75.0);
        assert!((row.compress_cpu_seconds_per_gb.unwrap() - 1.024).abs() < 1e-9);
        assert_eq!(row.confidence, Confidence::High);
        assert!(row.apply_sql.is_none());
    }
}
