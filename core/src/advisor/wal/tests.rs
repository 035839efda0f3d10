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
    assert_eq!(row.confidence, Confidence::Medium);
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
    assert_eq!(kept.confidence, Confidence::Low, "ten minutes of statistics");
    // seven hours of statistics that include loading every row the tables hold
    let loaded =
        from_whatif(&rows, &[], "off", 64_000_000, stats(6.4e9, 50_000.0, 25200.0), Inserted { rows: 1e6, held: 1e6 });
    assert_eq!(loaded.confidence, Confidence::Low);
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
    assert_eq!(
        row.confidence,
        Confidence::Medium,
        "two hours, 500 images; the statistics' bulk load is not the archive's"
    );
    assert!(row.basis.ends_with("3 commit and checkpoint timestamps spanning 2.0 h"), "{}", row.basis);
    // fewer than two timestamps: pg_stat_wal's period instead, and the basis says why
    let mut one = TimeSpan::default();
    one.observe(5);
    let period = WalPeriod::Archive { span: one, written: statistics, images: Rate { amount: 1e6, seconds: 600.0 } };
    let fallback = from_whatif(&rows, &[], "off", 64_000_000, period, loaded);
    assert_eq!((fallback.bytes_now, fallback.observed_period), (Some(1_000_000_000_000), Some(600.0)));
    assert!(fallback.basis.contains("holds 1 commit or checkpoint timestamp(s), fewer than two"), "{}", fallback.basis);
    assert_eq!(fallback.confidence, Confidence::Low);
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
    assert_eq!(big.confidence, Confidence::High, "{}", big.basis);
    let small = from_whatif(&rows, &[], "off", 10_000_000, stats(6.4e9, 100_000.0, 86400.0), steady);
    assert_eq!(small.confidence, Confidence::Medium);
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
        let share =
            read.iter().map(|c| c.images).sum::<u64>() as f64 / population.iter().map(|c| c.images).sum::<u64>() as f64;
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
    assert_eq!(row.confidence, Confidence::Medium, "{}", row.basis);
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
    assert_eq!(noisy.confidence, Confidence::Low);
    assert!(noisy.basis.contains("the pick is within the noise"), "{}", noisy.basis);
}
