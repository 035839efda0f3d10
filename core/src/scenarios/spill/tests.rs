//! Tests of the spill simulation: the thread's workloads, verification, edge cases.

use super::strategies::codec_pair;
use super::*;
use crate::rng::SeededRng;

const STRATEGIES: &[SpillStrategy] = SpillStrategy::ALL;

fn recs(records: &[Vec<u8>]) -> Records {
    Records::try_from_slices(records).unwrap()
}

fn run(records: &[Vec<u8>]) -> Vec<SpillRow> {
    let mut ticks = 0usize;
    let rows = simulate(&recs(records), &SpillSpec::all(1), &mut || ticks += 1).unwrap();
    assert!(records.is_empty() || ticks >= 2 * records.len().div_ceil(TICK_EVERY) * STRATEGIES.len());
    for r in &rows {
        eprintln!(
            "{:12} records {:6} raw {:9} stored {:9} ({:6.1}%) raw_records {:6} {:.3}s cpu {:.3}s",
            r.strategy,
            r.records,
            r.raw_bytes,
            r.stored_bytes,
            100.0 * r.stored_bytes as f64 / r.raw_bytes.max(1) as f64,
            r.raw_records,
            r.wall_seconds,
            r.cpu_seconds
        );
    }
    rows
}

fn row<'a>(rows: &'a [SpillRow], name: &str) -> &'a SpillRow {
    rows.iter().find(|r| r.strategy == name).unwrap()
}

fn headers(n: usize) -> i64 {
    (n * RECORD_HEADER_BYTES) as i64
}

/// The thread's "Hello" test: `INSERT ... SELECT i, 'Hello number n°'||i`, one change per
/// row. Each record is a 21-byte pseudo change header that varies with i (action byte,
/// xid, an LSN advancing 64 bytes per change, relfilenode, the int4 column) followed by
/// the text column. (The real ReorderBufferDiskChange is ~159 bytes per row, 1590 MB for
/// 10 M rows, mostly fixed struct fields; ours are ~43 bytes, which makes the per-record
/// codecs' job harder and the stream's gain smaller, not larger.)
fn hello_records(n: u32) -> Vec<Vec<u8>> {
    (1..=n)
        .map(|i| {
            let mut r = Vec::with_capacity(48);
            r.push(0u8); // REORDER_BUFFER_CHANGE_INSERT
            r.extend_from_slice(&(1000u32 + i / 4096).to_le_bytes()); // xid (subxacts)
            r.extend_from_slice(&(0x0100_0000u64 + u64::from(i) * 64).to_le_bytes()); // lsn
            r.extend_from_slice(&16_384u32.to_le_bytes()); // relfilenode
            r.extend_from_slice(&i.to_le_bytes()); // column i
            r.extend_from_slice(format!("Hello number n°{i}").as_bytes());
            r
        })
        .collect()
}

#[test]
fn hello_stream_beats_per_record() {
    let records = hello_records(100_000);
    let n = records.len();
    let rows = run(&records);
    let raw = row(&rows, "raw");
    assert_eq!(raw.stored_bytes, raw.raw_bytes);
    assert_eq!(raw.raw_records, n as i64);
    // The text alone is shorter than pglz's 32-byte minimum; with the header it is not,
    // but no record has a repeat inside it: pglz refuses every one.
    assert!(records.iter().all(|r| r.len() - 21 < 32));
    let pglz = row(&rows, "pglz");
    assert_eq!(pglz.raw_records, n as i64);
    assert_eq!(pglz.stored_bytes, raw.raw_bytes + headers(n));
    // Per-record LZ4 saves nothing or little.
    let lz4 = row(&rows, "lz4");
    assert!(lz4.stored_bytes as f64 >= 0.95 * raw.raw_bytes as f64, "{lz4:?}");
    // The streams see the previous changes: the thread measured -58.9% with lz4.
    let lz4s = row(&rows, "lz4_stream");
    assert!((lz4s.stored_bytes as f64) <= 0.6 * raw.raw_bytes as f64, "{lz4s:?}");
    assert!(lz4s.raw_records < n as i64 / 100, "{lz4s:?}");
    let zs = row(&rows, "zstd_stream");
    assert!((zs.stored_bytes as f64) <= 0.6 * raw.raw_bytes as f64, "{zs:?}");
    assert!(lz4s.stored_bytes < lz4.stored_bytes && zs.stored_bytes < pglz.stored_bytes);
    assert!(rows.iter().all(|r| r.records == n as i64 && r.raw_bytes == raw.raw_bytes));
    assert!(rows.iter().all(|r| r.wall_seconds >= 0.0 && r.cpu_seconds >= 0.0));
}

/// Tomas's test-columns, compressible (the thread measured pglz at 3-13% and lz4 at 1-7%
/// of the raw spill): an id and 99 float8 columns as text with eight distinct values; each
/// row mostly repeats one value, with ten columns drawn afresh.
#[test]
fn compressible_rows_shrink_everywhere_streams_most() {
    let mut rng = SeededRng::new(0x1234_5678_9abc_def1);
    // float8 text as random() renders it: eight distinct values.
    const VALUES: [&str; 8] = [
        "0.8414709848078965",
        "0.5403023058681398",
        "0.9092974268256817",
        "0.1411200080598672",
        "0.7568024953079282",
        "0.2794154981989259",
        "0.6569865987187891",
        "0.9893582466233818",
    ];
    let pick = |rng: &mut SeededRng| VALUES[(rng.next_u64() % VALUES.len() as u64) as usize];
    let records: Vec<Vec<u8>> = (0..20_000)
        .map(|i| {
            let mut cols = vec![pick(&mut rng); 99];
            for _ in 0..10 {
                let j = (rng.next_u64() % 99) as usize;
                cols[j] = pick(&mut rng);
            }
            format!("({i},{})", cols.join(",")).into_bytes()
        })
        .collect();
    let rows = run(&records);
    let raw = row(&rows, "raw").raw_bytes as f64;
    let (pglz, lz4) = (row(&rows, "pglz").stored_bytes, row(&rows, "lz4").stored_bytes);
    let (lz4s, zs) = (row(&rows, "lz4_stream").stored_bytes, row(&rows, "zstd_stream").stored_bytes);
    assert!((pglz as f64) < 0.15 * raw && (lz4 as f64) < 0.15 * raw, "pglz {pglz} lz4 {lz4} raw {raw}");
    assert_eq!(row(&rows, "pglz").raw_records, 0);
    assert_eq!(row(&rows, "lz4").raw_records, 0);
    // The streams also see the previous rows: at least a quarter less than the best
    // per-record codec.
    let per_record = pglz.min(lz4) as f64;
    assert!((lz4s as f64) < 0.75 * per_record && (zs as f64) < 0.75 * per_record, "lz4_stream {lz4s} zstd_stream {zs}");
    assert!((lz4s as f64) < 0.1 * raw && (zs as f64) < 0.1 * raw);
}

/// Tomas's "random values, repeated rows": each row's values are random, but rows repeat,
/// their copies within the 64 KB window. Per-record codecs gain nothing, streams a lot.
#[test]
fn repeated_random_rows_only_streams_gain() {
    let mut rng = SeededRng::new(42);
    let distinct: Vec<Vec<u8>> = (0..200).map(|_| rng.printable(800)).collect();
    // Four groups of 50 rows (40 KB); each group cycles 100 times before the next.
    let records: Vec<Vec<u8>> = (0..20_000).map(|k| distinct[(k / 5000) * 50 + k % 50].clone()).collect();
    let n = records.len();
    let rows = run(&records);
    let raw = row(&rows, "raw").raw_bytes;
    for name in ["pglz", "lz4"] {
        let r = row(&rows, name);
        assert_eq!(r.raw_records, n as i64, "{r:?}");
        assert_eq!(r.stored_bytes, raw + headers(n), "{r:?}");
    }
    for name in ["lz4_stream", "zstd_stream"] {
        let r = row(&rows, name);
        assert!((r.stored_bytes as f64) < 0.2 * raw as f64, "{r:?}");
    }
    // Only the 200 first occurrences have nothing to refer to.
    assert!(row(&rows, "lz4_stream").raw_records <= 200);
}

/// "random2": every row unique random bytes; nobody gains.
#[test]
fn unique_random_rows_nobody_gains() {
    let mut rng = SeededRng::new(7);
    let records: Vec<Vec<u8>> = (0..5_000).map(|_| rng.bytes(800)).collect();
    let rows = run(&records);
    let raw = row(&rows, "raw").raw_bytes;
    for r in &rows {
        assert!(r.stored_bytes >= raw, "{r:?}");
        assert!((r.stored_bytes as f64) >= 0.98 * raw as f64);
    }
    for name in ["pglz", "lz4", "lz4_stream"] {
        let r = row(&rows, name);
        assert_eq!(r.raw_records, records.len() as i64, "{r:?}");
        assert_eq!(r.stored_bytes, raw + headers(records.len()));
    }
}

/// A decoder that returns wrong bytes must be caught, never counted.
struct Lying(Box<dyn SpillDecoder>);

impl SpillDecoder for Lying {
    fn decode(&mut self, flag: Flag, payload: &[u8], dst: &mut [u8]) -> Result<()> {
        self.0.decode(flag, payload, dst)?;
        if let Some(b) = dst.last_mut() {
            *b ^= 1;
        }
        Ok(())
    }
}

#[test]
fn verification_catches_wrong_decodes_and_damaged_files() {
    let records = recs(&hello_records(2000));
    for &strategy in STRATEGIES {
        let headers = strategy.headers();
        let name = strategy.name();
        let (mut enc, _) = codec_pair(strategy, 1).unwrap();
        let (file, _) = write_spill(&records, enc.as_mut(), headers, &mut || ()).unwrap();
        let fresh = || codec_pair(strategy, 1).unwrap().1;
        read_spill(name, &file, &records, fresh().as_mut(), headers, &mut || ()).unwrap();

        let mut lying = Lying(fresh());
        let err = read_spill(name, &file, &records, &mut lying, headers, &mut || ()).unwrap_err();
        assert!(matches!(err, CodecError::Corrupt(_)), "{name}: {err:?}");

        // A flipped byte somewhere in the middle, a truncated file, an extra byte.
        let mut damaged = file.clone();
        let mid = damaged.len() / 2;
        damaged[mid] ^= 0x20;
        let err = read_spill(name, &damaged, &records, fresh().as_mut(), headers, &mut || ()).unwrap_err();
        assert!(matches!(err, CodecError::Corrupt(_)), "{name}: {err:?}");
        let err =
            read_spill(name, &file[..file.len() - 1], &records, fresh().as_mut(), headers, &mut || ()).unwrap_err();
        assert!(matches!(err, CodecError::Corrupt(_)), "{name}: {err:?}");
        let mut longer = file.clone();
        longer.push(0);
        let err = read_spill(name, &longer, &records, fresh().as_mut(), headers, &mut || ()).unwrap_err();
        assert!(matches!(err, CodecError::Corrupt(_)), "{name}: {err:?}");
    }
    // A storage flag no strategy writes.
    let (mut enc, mut dec) = codec_pair(SpillStrategy::Lz4, 1).unwrap();
    let first = recs(&hello_records(1));
    let (mut file, _) = write_spill(&first, enc.as_mut(), true, &mut || ()).unwrap();
    file[0] = 9;
    let err = read_spill("lz4", &file, &first, dec.as_mut(), true, &mut || ()).unwrap_err();
    assert!(matches!(err, CodecError::Corrupt(_)), "{err:?}");
}

#[test]
fn unknown_strategy_and_bad_level_are_invalid() {
    let err = SpillSpec::parse("snappy", 3).unwrap_err();
    assert!(
        matches!(&err, CodecError::InvalidParameter(m) if m.contains("snappy") && m.contains("lz4_stream")),
        "{err:?}"
    );
    let err = SpillSpec::parse("zstd_stream:1000", 3).unwrap_err();
    assert!(matches!(err, CodecError::InvalidParameter(_)), "{err:?}");
}

/// Found by attack: 15 or more empty records in a row made the zstd stream's reader fail
/// with "Operation made no progress" on a valid file.
#[test]
fn runs_of_empty_records_read_back() {
    let mut records = vec![b"hello".to_vec()];
    records.extend(std::iter::repeat_n(Vec::new(), 40));
    records.push(b"world".to_vec());
    let rows = simulate(&recs(&records), &SpillSpec::all(1), &mut || ()).unwrap();
    assert!(rows.iter().all(|r| r.records == 42 && r.raw_bytes == 10));
}

#[test]
fn empty_input_gives_zero_rows_and_bytes() {
    let rows = simulate(&Records::new(), &SpillSpec::all(1), &mut || ()).unwrap();
    assert_eq!(rows.len(), STRATEGIES.len());
    for r in rows {
        assert_eq!((r.records, r.raw_bytes, r.stored_bytes, r.raw_records), (0, 0, 0, 0), "{r:?}");
        assert_eq!(r.ratio, 1.0);
    }
    assert!(simulate(&Records::new(), &[], &mut || ()).unwrap().is_empty());
    // Empty records are fine too.
    let rows = simulate(&recs(&[Vec::new(), Vec::new()]), &SpillSpec::all(1), &mut || ()).unwrap();
    assert!(rows.iter().all(|r| r.raw_bytes == 0 && r.records == 2));
}

/// A long record is fed to the zstd stream a chunk at a time, with a tick between chunks.
#[test]
fn long_records_tick() {
    let record = crate::lab::payload::synthetic(crate::lab::payload::SyntheticKind::Text, 5 << 20, 2).unwrap();
    let mut ticks = 0;
    simulate(&recs(&[record]), &[SpillSpec::parse("zstd_stream:1", 3).unwrap()], &mut || ticks += 1).unwrap();
    assert!(ticks >= 5, "{ticks}");
}
