use super::*;

const PGLZ: ToastCompression = ToastCompression::Pglz;
const LZ4: ToastCompression = ToastCompression::Lz4;

fn stored(method: Option<ToastCompression>, external: bool, size: usize, row_len: Option<usize>) -> StoredValue {
    StoredValue { method, external, size, row_len }
}

#[test]
fn only_values_a_new_write_would_change_are_rewritten() {
    assert_eq!(decide(stored(Some(LZ4), true, 9000, None), LZ4, 2032), Decision::Keep);
    assert_eq!(decide(stored(Some(PGLZ), false, 900, None), LZ4, 2032), Decision::Rewrite);
    assert_eq!(decide(stored(Some(LZ4), true, 900, None), PGLZ, 2032), Decision::Rewrite);
    // stored raw out of line: pglz gave up; lz4 may shrink it
    assert_eq!(decide(stored(None, true, 9000, None), LZ4, 2032), Decision::TryCompress);
    // raw in a row over the threshold: TOAST would try; in a short row it would not
    assert_eq!(decide(stored(None, false, 1900, Some(2100)), LZ4, 2032), Decision::TryCompress);
    assert_eq!(decide(stored(None, false, 1900, Some(2000)), LZ4, 2032), Decision::Keep);
    assert_eq!(decide(stored(None, false, 1900, Some(2100)), LZ4, 4000), Decision::Keep);
    // too short for TOAST to pick, whatever the row
    assert_eq!(decide(stored(None, false, 20, Some(5000)), LZ4, 2032), Decision::Keep);
    assert_eq!(decide(stored(None, false, 1900, None), LZ4, 2032), Decision::Keep);
}

#[test]
fn batches_are_sized_in_bytes_and_follow_the_wal_rate() {
    assert_eq!(batch_bytes(None), MAX_BATCH_BYTES);
    assert_eq!(batch_bytes(Some(20.0 * 1048576.0)), 5 * 1048576);
    assert_eq!(batch_bytes(Some(1024.0)), MIN_BATCH_BYTES);
    assert_eq!(batch_bytes(Some(1e12)), MAX_BATCH_BYTES);
}

#[test]
fn a_scan_reads_enough_blocks_for_the_rows_and_stops_at_the_end() {
    assert_eq!(scan_end(0, 100, Some(10.0), 1000), 100);
    assert_eq!(scan_end(0, 1000, Some(10.0), 1000), 100);
    assert_eq!(scan_end(50, 1000, Some(4.0), 10), 53);
    assert_eq!(scan_end(0, 1_000_000, None, 100_000), 1024, "capped at 1,024 blocks");
    assert_eq!(scan_end(0, 1_000_000, Some(0.0), 10), 10, "no statistics: a row a block");
    assert_eq!(scan_end(7, 7, Some(10.0), 10), 7, "nothing past the end");
    assert_eq!(scan_end(9, 7, Some(10.0), 10), 7);
}

#[test]
fn rates_parse_in_the_units_of_the_settings() {
    assert_eq!(parse_rate("20 MB/s").unwrap(), 20.0 * 1048576.0);
    assert_eq!(parse_rate("512kB/s").unwrap(), 512.0 * 1024.0);
    assert_eq!(parse_rate(" 1.5 GB/s ").unwrap(), 1.5 * 1073741824.0);
    assert_eq!(parse_rate("4096 B/s").unwrap(), 4096.0);
    for bad in ["20 MB", "20 mb/s", "MB/s", "-1 MB/s", "1e3 kB/s", "", "/s", "20 MiB/s", "1 B/s", "nan MB/s"] {
        let err = parse_rate(bad).unwrap_err();
        assert!(err.message().contains("max_wal_rate"), "{bad:?}: {}", err.message());
    }
}

#[test]
fn the_pause_keeps_the_average_at_the_rate() {
    // 10 MB written in 0.2 s at 20 MB/s: due at 0.5 s, so 0.3 s more
    assert!((pause_seconds(10e6, 0.2, 20e6) - 0.3).abs() < 1e-12);
    assert_eq!(pause_seconds(10e6, 1.0, 20e6), 0.0, "behind the rate: no pause");
    assert_eq!(pause_seconds(10e6, 0.0, 0.0), 0.0);
    // batch after batch, the pauses hold the rate whatever each batch wrote
    let (rate, mut wal, mut clock) = (5e6, 0.0, 0.0);
    for batch in [1e6, 3e6, 0.5e6, 2e6, 7e6] {
        wal += batch;
        clock += 0.05; // the batch's own time
        clock += pause_seconds(wal, clock, rate);
        assert!((wal / clock - rate).abs() / rate < 1e-9 || wal / clock < rate);
    }
}

#[test]
fn digests_tell_values_apart() {
    assert_eq!(Digest::of(b"abc"), Digest::of(b"abc"));
    assert_ne!(Digest::of(b"abc"), Digest::of(b"abd"));
    assert_ne!(Digest::of(b""), Digest::of(b"\0"));
    // CRC-32C's check value (RFC 3720), so the hardware path is the right function
    assert_eq!(Digest::of(b"123456789").crc32c, 0xe306_9283);
}

#[test]
fn a_flipped_bit_anywhere_in_a_value_changes_both_halves_of_its_digest() {
    let value: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
    let digest = Digest::of(&value);
    for bit in (0..value.len() * 8).step_by(61) {
        let mut changed = value.clone();
        changed[bit / 8] ^= 1 << (bit % 8);
        let other = Digest::of(&changed);
        assert_ne!(other.crc32c, digest.crc32c, "bit {bit}");
        assert_ne!(other.xxh3, digest.xxh3, "bit {bit}");
    }
}

#[test]
fn the_estimate_counts_the_new_values_and_the_rows() {
    let e = estimate(1000.0, 5e6, None);
    assert_eq!(e.wal_bytes, 5e6 + 1000.0 * WAL_BYTES_PER_ROW);
    assert!((e.seconds - e.wal_bytes / WAL_BYTES_PER_SECOND).abs() < 1e-12);
    let slow = estimate(1000.0, 5e6, Some(1e6));
    assert!((slow.seconds - slow.wal_bytes / 1e6).abs() < 1e-12);
    assert_eq!(estimate(1000.0, 5e6, Some(1e12)).seconds, e.seconds, "never faster than full speed");
}

#[test]
fn lock_timeout_is_checked_before_anything_changes() {
    assert_eq!(lock_timeout_ms(Some(1.0)).unwrap(), 1000);
    assert_eq!(lock_timeout_ms(Some(0.0)).unwrap(), 0, "0 waits without a limit, as the setting");
    assert_eq!(lock_timeout_ms(Some(0.0004)).unwrap(), 1, "rounded up: never 0 by accident");
    assert!(lock_timeout_ms(None).is_err());
    assert!(lock_timeout_ms(Some(-1.0)).is_err());
    assert!(lock_timeout_ms(Some(25.0 * 86400.0)).is_err(), "past INT_MAX ms");
    assert!(lock_timeout_ms(Some(1_000_000.0 * 365.25 * 86400.0)).is_err());
    assert_eq!(lock_timeout_ms(Some(24.0 * 86400.0)).unwrap(), 24 * 86_400_000);
}

#[test]
fn a_negative_replay_lag_is_refused() {
    assert!(check_replay_lag(None).is_ok());
    assert!(check_replay_lag(Some(0.0)).is_ok());
    assert!(check_replay_lag(Some(10.0)).is_ok());
    assert!(check_replay_lag(Some(-1.0)).is_err());
}
