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
fn the_time_is_the_wal_at_the_rate_never_faster_than_full_speed() {
    assert!((seconds(35e6, None) - 1.0).abs() < 1e-12);
    assert!((seconds(5e6, Some(1e6)) - 5.0).abs() < 1e-12);
    assert_eq!(seconds(5e6, Some(1e12)), seconds(5e6, None), "never faster than full speed");
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

#[test]
fn the_capped_wal_counts_padding_and_page_headers() {
    // no record: nothing
    assert_eq!(wal_lsn_bytes(0.0, 0.0), 0.0);
    // a page's worth of one-byte-short records: each padded, and the page header on top
    let lsn = wal_lsn_bytes(8168.0 - 7.0 * 8.0, 8.0);
    assert!((lsn - 8192.0).abs() < 1e-9, "{lsn}");
    // never under the counters' own figure
    assert!(wal_lsn_bytes(1e6, 1000.0) > 1e6 + 7000.0);
}

mod runs {
    use crate::rewrite::run::*;

    fn batch(rewritten: i64) -> Counts {
        Counts { read: rewritten, rewritten, ..Counts::default() }
    }

    #[test]
    fn a_pass_ends_where_the_table_ended_when_it_began() {
        let first = Saved::START.after_batch(4, 10, 3, false);
        assert_eq!(first.saved, Saved { pass: 1, next_block: 4, total_blocks: 10, pass_changes: 3 });
        assert!(!first.pass_ended && !first.finished);
        // the table grew to 12 blocks meanwhile (rows rewritten land at its end): the pass
        // still ends at 10
        let end = first.saved.after_batch(10, 12, 0, false);
        assert!(end.pass_ended && !end.finished, "3 rows changed in the pass: another follows");
        assert_eq!(end.saved, Saved { pass: 2, next_block: 0, total_blocks: 10, pass_changes: 0 });
        // the second pass reads the table as it is when it begins
        let second = end.saved.after_batch(12, 12, 0, false);
        assert!(second.finished);
        assert_eq!(second.saved.total_blocks, 12);
        // a table truncated under the pass ends it at its new end
        let cut = first.saved.after_batch(6, 6, 0, false);
        assert!(cut.pass_ended);
        assert_eq!(cut.saved.total_blocks, 6);
    }

    #[test]
    fn passes_go_on_while_rows_change_three_at_most_none_when_quiet() {
        let mut saved = Saved::START;
        for pass in 1..=MAX_PASSES {
            let advance = saved.after_batch(10, 10, 5, false);
            assert!(advance.pass_ended);
            assert_eq!(advance.finished, pass == MAX_PASSES, "pass {pass}");
            saved = advance.saved;
        }
        // a pass that changed rows but in which no other session wrote is the last
        assert!(Saved::START.after_batch(10, 10, 5, true).finished);
        // quiet counts only at the pass's end
        assert!(!Saved::START.after_batch(5, 10, 5, true).pass_ended);
        // an empty table is done in one batch
        assert!(Saved::START.after_batch(0, 0, 0, false).finished);
    }

    #[test]
    fn a_saved_row_that_does_not_fit_starts_over() {
        let saved = Saved { pass: 2, next_block: 7, total_blocks: 9, pass_changes: 4 };
        assert!(saved.goes_on(false, true, 9));
        assert!(!saved.goes_on(true, true, 9), "done");
        assert!(!saved.goes_on(false, false, 9), "another method");
        assert!(!saved.goes_on(false, true, 6), "the table was truncated");
        for forged in [
            Saved { pass: 0, ..saved },
            Saved { pass: 4, ..saved },
            Saved { next_block: -1, ..saved },
            Saved { pass_changes: -1, ..saved },
            Saved { total_blocks: -1, ..saved },
        ] {
            assert!(!forged.goes_on(false, true, 9), "{forged:?}");
        }
    }

    #[test]
    fn a_pass_is_quiet_only_if_no_other_transaction_took_an_id() {
        let mut run = Run::new(0, 1);
        run.done(None);
        // the mark: the next ID when the pass began, no transaction holding one
        let watch = run.watch_batch(Some(100));
        assert_eq!(watch, PassWatch::Marked { mark: Some(100), batches: 1 });
        assert!(watch.quiet(101), "our batch took 100");
        assert!(!watch.quiet(102), "another session took one");
        run.batch_done(batch(1), Saved::START.after_batch(4, 10, 1, false));
        let watch = run.watch_batch(Some(555)); // taken once, when the pass began
        assert_eq!(watch, PassWatch::Marked { mark: Some(100), batches: 2 });
        // another transaction held an ID when the pass began: never quiet
        let mut busy = Run::new(0, 1);
        busy.done(None);
        assert!(!busy.watch_batch(None).quiet(101));
        // a pass taken up midway: never quiet
        let mut resumed = Run::new(0, 1);
        resumed.done(Some(Saved { pass: 1, next_block: 4, total_blocks: 10, pass_changes: 0 }));
        assert!(!resumed.watch_batch(Some(100)).quiet(101));
    }

    /// A run driven as the server drives it over tables of `blocks[i]` blocks, a batch reading
    /// `per_batch` blocks and rewriting a row a block, `moved[round][leaf]` rows found moved
    /// into a table already done (rewritten in the next round). The steps, in order.
    fn drive(alters: usize, blocks: &[i64], per_batch: i64, moved: &[&[i64]]) -> (Vec<Step>, Run) {
        let mut run = Run::new(alters, blocks.len());
        let mut steps = Vec::new();
        let mut saved = Vec::new();
        let mut xid = 1000;
        while steps.len() < 1000 {
            let step = run.next();
            steps.push(step);
            match step {
                Step::Alter(_) | Step::CountHidden(_) => run.done(None),
                Step::Enter { leaf, restart } => {
                    if restart || saved.len() <= leaf {
                        saved.resize(saved.len().max(leaf + 1), Saved::START);
                        saved[leaf] = Saved::START;
                    }
                    run.done(Some(saved[leaf]));
                }
                Step::Batch { leaf, .. } => {
                    let watch = run.watch_batch(Some(xid));
                    xid += 1; // the batch's own ID
                    let s = saved[leaf];
                    let next = (s.next_block + per_batch).min(blocks[leaf]);
                    let round = run.round as usize - 1;
                    let extra = moved.get(round).and_then(|m| m.get(leaf)).copied().unwrap_or(0);
                    // a block's row is rewritten in the first round's first pass; rows moved
                    // in are found in a round's first pass; another session's write takes an ID
                    let fresh = if round == 0 && s.pass == 1 { next - s.next_block } else { 0 };
                    let changes = if s.pass == 1 { fresh + extra * i64::from(next == blocks[leaf]) } else { 0 };
                    if extra > 0 && s.pass == 1 {
                        xid += 1;
                    }
                    let advance = s.after_batch(next, blocks[leaf], changes, watch.quiet(xid));
                    saved[leaf] = advance.saved;
                    run.batch_done(batch(changes), advance);
                }
                Step::Finish => break,
            }
        }
        (steps, run)
    }

    #[test]
    fn a_run_alters_then_rewrites_each_table_then_counts_what_was_hidden() {
        let (steps, run) = drive(2, &[8, 3], 4, &[]);
        assert_eq!(
            steps,
            vec![
                Step::Alter(0),
                Step::Alter(1),
                Step::Enter { leaf: 0, restart: false },
                Step::Batch { leaf: 0, watch: PassWatch::Begins },
                Step::Batch { leaf: 0, watch: PassWatch::Marked { mark: Some(1000), batches: 1 } },
                Step::Enter { leaf: 1, restart: false },
                Step::Batch { leaf: 1, watch: PassWatch::Begins },
                // a second round finds no row moved into a table already done
                Step::Enter { leaf: 0, restart: true },
                Step::Batch { leaf: 0, watch: PassWatch::Begins },
                Step::Batch { leaf: 0, watch: PassWatch::Marked { mark: Some(1003), batches: 1 } },
                Step::Enter { leaf: 1, restart: true },
                Step::Batch { leaf: 1, watch: PassWatch::Begins },
                Step::CountHidden(0),
                Step::CountHidden(1),
                Step::Finish,
            ]
        );
        // quiet passes: one each
        assert_eq!((run.round, run.counts.rewritten), (2, 11));
        // no table holds rows: nothing to do after the statements
        let (steps, _) = drive(1, &[], 4, &[]);
        assert_eq!(steps, vec![Step::Alter(0), Step::Finish]);
    }

    #[test]
    fn rounds_go_on_while_rows_move_into_tables_done_three_at_most() {
        // round 2 finds 2 rows moved into table 0; round 3 none
        let (steps, run) = drive(0, &[4, 4], 4, &[&[], &[2, 0]]);
        assert_eq!((run.round, run.counts.rewritten), (3, 10));
        assert!(steps.contains(&Step::Enter { leaf: 0, restart: true }));
        assert!(steps.contains(&Step::Enter { leaf: 1, restart: true }));
        // rows move in every round: the third is the last
        let (_, run) = drive(0, &[4, 4], 4, &[&[1, 0], &[1, 0], &[1, 0], &[1, 0]]);
        assert_eq!(run.round, MAX_ROUNDS);
        // one table: no second round, whatever moved
        let (steps, run) = drive(0, &[4], 4, &[&[3]]);
        assert_eq!(run.round, 1);
        assert!(!steps.contains(&Step::Enter { leaf: 0, restart: true }));
    }

    #[test]
    fn a_round_over_is_said_with_its_changes() {
        let mut run = Run::new(0, 2);
        for leaf in 0..2 {
            run.done(None);
            run.watch_batch(None);
            let over = run.batch_done(batch(3), Saved::START.after_batch(1, 1, 0, true));
            assert_eq!(over, (leaf == 1).then_some(RoundOver { round: 1, changes: 6 }));
        }
        assert_eq!(run.next(), Step::Enter { leaf: 0, restart: true });
    }
}
