use super::layout::{WalCursor, WalLayout, LONG_PAGE_HEADER, XLOG_BLCKSZ};
use super::*;
use crate::lab::codecs::tests::codec;
use crate::pg_compression::WalCompression;
use crate::rng::SeededRng;
use crate::scenarios::fpi::stored_image;

const SEGMENT: u64 = 16 << 20;
/// A record's bytes besides its images: header, block headers, data.
const OTHER_BYTES: u32 = 60;

fn settings() -> Vec<(WalCompression, Option<Box<dyn Codec>>)> {
    vec![
        (WalCompression::Off, None),
        (WalCompression::Pglz, Some(codec("pglz"))),
        (WalCompression::Lz4, Some(codec("lz4"))),
        (WalCompression::Zstd, Some(codec("zstd:3"))),
    ]
}

/// A heap-like page: header with pd_lower/pd_upper, a zero hole, tuples of text above it.
fn page(lower: u16, upper: u16, seed: u64) -> Vec<u8> {
    let mut rng = SeededRng::new(seed);
    let mut p = vec![0u8; BLCKSZ];
    for (i, b) in p.iter_mut().enumerate().skip(upper as usize) {
        *b = b"abcdefghij0123456789 "[(i + rng.below(3) as usize) % 21];
    }
    p[12..14].copy_from_slice(&lower.to_le_bytes());
    p[14..16].copy_from_slice(&upper.to_le_bytes());
    p
}

fn image(relfilenode: u32, p: &[u8], stored_as: WalCompression, bimg_len: usize) -> ImageRef {
    let (hole_offset, hole_length) = crate::page::hole(p);
    ImageRef {
        relation: RelationKey { tablespace: 1663, database: 5, relfilenode, fork: 0 },
        stored_as,
        bimg_len: bimg_len as u16,
        hole_offset: hole_offset as u16,
        hole_length: hole_length as u16,
    }
}

/// A `restore` that hands back `page` for every image.
fn restore_from(page: &[u8]) -> impl FnMut(usize, &mut [u8]) -> Result<()> + '_ {
    move |_, out| {
        out.copy_from_slice(page);
        Ok(())
    }
}

/// Run records of one raw image each through the what-if.
fn run(pages: &[Vec<u8>], sample: f64, start: u64) -> (Vec<WalWhatIfRow>, WalWhatIf) {
    run_sized(pages, sample, start, &[])
}

/// [`run`] with sizers: (setting, method of our codec).
fn run_sized(
    pages: &[Vec<u8>],
    sample: f64,
    start: u64,
    sizers: &[(WalCompression, &str)],
) -> (Vec<WalWhatIfRow>, WalWhatIf) {
    let mut whatif = WalWhatIf::new(WalLayout::new(SEGMENT), settings(), sample).unwrap();
    for (setting, method) in sizers {
        whatif.size_with(*setting, codec(method)).unwrap();
    }
    let mut lsn = start;
    for (i, p) in pages.iter().enumerate() {
        let img = image(100 + (i % 2) as u32, p, WalCompression::Off, BLCKSZ - crate::page::hole(p).1);
        let total = OTHER_BYTES + img.bimg_len as u32;
        let record = RecordRef { lsn, total_length: total, is_switch: false };
        whatif.add_record(record, &[img], &mut restore_from(p)).unwrap();
        lsn += layout::maxalign(total as u64); // good enough: tests read the cursor, not this
    }
    (whatif.finish().unwrap(), whatif)
}

#[test]
fn off_replays_the_range_as_written() {
    let pages: Vec<Vec<u8>> = (0..50).map(|i| page(200, 3000, i)).collect();
    let (rows, _) = run(&pages, 1.0, 5 * XLOG_BLCKSZ + 24);
    let mut expected = WalCursor::new(WalLayout::new(SEGMENT), 5 * XLOG_BLCKSZ + 24);
    pages.iter().for_each(|_| expected.append((OTHER_BYTES as usize + BLCKSZ - 2800) as u64, false));
    let off = &rows[0];
    assert_eq!((off.wal_compression, off.records, off.fpi_images), (WalCompression::Off, 50, 50));
    assert_eq!(off.wal_bytes as u64, expected.bytes());
    assert_eq!(off.fpi_bytes as usize, 50 * (BLCKSZ - 2800));
    assert_eq!((off.stored_images, rows[1].stored_images), (50, 0));
    assert_eq!((off.compress_cpu_seconds, off.decompress_cpu_seconds, off.saving_percent), (0.0, 0.0, 0.0));
}

#[test]
fn each_setting_stores_what_xlog_compress_backup_block_would() {
    let pages: Vec<Vec<u8>> = (0..30).map(|i| page(200, 3000, i)).collect();
    let (rows, _) = run(&pages, 1.0, LONG_PAGE_HEADER);
    for (row, (name, codec)) in rows.iter().zip(settings()).skip(1) {
        let mut codec = codec.unwrap();
        let mut cursor = WalCursor::new(WalLayout::new(SEGMENT), LONG_PAGE_HEADER);
        let mut fpi_bytes = 0;
        for p in &pages {
            let (len, compressed) = stored_image(p, Some(codec.as_mut()), &mut Vec::new()).unwrap();
            assert!(compressed, "{name}: text pages compress");
            fpi_bytes += len;
            cursor.append((OTHER_BYTES as usize + len + 2) as u64, false);
        }
        assert_eq!(row.wal_compression, name);
        assert_eq!(row.fpi_bytes as usize, fpi_bytes, "{name}");
        assert_eq!(row.wal_bytes as u64, cursor.bytes(), "{name}");
        assert_eq!(row.compressed_images, 30);
        assert!(row.saving_percent > 10.0 && row.saving_percent < 100.0, "{name}: {}", row.saving_percent);
    }
}

#[test]
fn incompressible_images_stay_raw_under_every_setting() {
    let mut rng = SeededRng::new(9);
    let pages: Vec<Vec<u8>> = (0..8)
        .map(|_| {
            let mut p = page(8192, 8192, 0);
            rng.fill(&mut p[24..]);
            p
        })
        .collect();
    let (rows, _) = run(&pages, 1.0, LONG_PAGE_HEADER);
    for row in &rows {
        assert_eq!((row.compressed_images, row.fpi_bytes as usize), (0, 8 * BLCKSZ), "{}", row.wal_compression);
        assert_eq!(row.wal_bytes, rows[0].wal_bytes);
        assert_eq!(row.decompress_cpu_seconds, 0.0);
    }
}

#[test]
fn a_compressed_image_in_the_range_is_swapped_for_each_settings_bytes() {
    // A record written under pglz: its image is 700 bytes plus the 2-byte hole header.
    let p = page(200, 3000, 1);
    let img = image(7, &p, WalCompression::Pglz, 700);
    let mut whatif = WalWhatIf::new(WalLayout::new(SEGMENT), settings(), 1.0).unwrap();
    let record = RecordRef { lsn: LONG_PAGE_HEADER, total_length: OTHER_BYTES + 702, is_switch: false };
    whatif.add_record(record, &[img], &mut restore_from(&p)).unwrap();
    let rows = whatif.finish().unwrap();
    let raw = BLCKSZ - 2800;
    assert_eq!(rows[0].fpi_bytes as usize, raw);
    assert_eq!(rows[0].wal_bytes as u64, layout::maxalign((OTHER_BYTES as usize + raw) as u64));
    assert_eq!((rows[0].stored_images, rows[1].stored_images), (0, 1));
    let (pglz_len, _) = stored_image(&p, Some(codec("pglz").as_mut()), &mut Vec::new()).unwrap();
    assert_eq!(rows[1].wal_bytes as u64, layout::maxalign((OTHER_BYTES as usize + pglz_len + 2) as u64));
}

#[test]
fn a_sample_charges_the_others_the_sampled_ratio() {
    // Identical images: the sample's ratio is every image's ratio, so the estimate is exact.
    let pages: Vec<Vec<u8>> = (0..40).map(|_| page(200, 3000, 3)).collect();
    let (exact, _) = run(&pages, 1.0, LONG_PAGE_HEADER);
    let (sampled, _) = run(&pages, 0.25, LONG_PAGE_HEADER);
    for (e, s) in exact.iter().zip(&sampled) {
        assert_eq!(s.sampled_images, 10);
        assert_eq!((s.records, s.fpi_images, s.compressed_images), (e.records, e.fpi_images, e.compressed_images));
        assert_eq!(s.fpi_bytes, e.fpi_bytes, "{}", e.wal_compression);
        // Unsampled images are charged in one sum: each record's alignment may differ by < 8.
        assert!(
            (s.wal_bytes - e.wal_bytes).abs() < 8 * 30,
            "{}: {} vs {}",
            e.wal_compression,
            s.wal_bytes,
            e.wal_bytes
        );
    }
    // Under off nothing is estimated.
    assert_eq!(sampled[0].wal_bytes, exact[0].wal_bytes);
    // The first image is always sampled, then every fourth.
    let whatif = WalWhatIf::new(WalLayout::new(SEGMENT), settings(), 0.25).unwrap();
    let picked: Vec<u64> = (0..12).filter(|&i| whatif.is_sampled(i)).collect();
    assert_eq!(picked, [0, 4, 8]);
}

#[test]
fn a_sample_is_not_biased_by_a_ratio_that_drifts_along_the_range() {
    // Compressible images first, incompressible ones after: a running ratio would charge the
    // later unsampled images the early ratio.
    let mut rng = SeededRng::new(4);
    let pages: Vec<Vec<u8>> = (0..80)
        .map(|i| {
            let mut p = page(200, 3000, i);
            if i >= 40 {
                rng.fill(&mut p[3000..]);
            }
            p
        })
        .collect();
    let (exact, _) = run(&pages, 1.0, LONG_PAGE_HEADER);
    let (sampled, _) = run(&pages, 0.25, LONG_PAGE_HEADER);
    for (e, s) in exact.iter().zip(&sampled).skip(1) {
        let error = (s.fpi_bytes - e.fpi_bytes).abs() as f64 / e.fpi_bytes as f64;
        assert!(error < 0.03, "{}: {} vs {}", e.wal_compression, s.fpi_bytes, e.fpi_bytes);
    }
}

#[test]
fn a_switch_record_pads_as_written_under_every_setting() {
    let p = page(200, 3000, 1);
    let layout = WalLayout::new(SEGMENT);
    let mut whatif = WalWhatIf::new(layout, settings(), 1.0).unwrap();
    let img = image(1, &p, WalCompression::Off, BLCKSZ - 2800);
    let first = RecordRef { lsn: SEGMENT + 4096, total_length: OTHER_BYTES + img.bimg_len as u32, is_switch: false };
    whatif.add_record(first, &[img], &mut restore_from(&p)).unwrap();
    // the switch where the server wrote it: right after the first record
    let switch_at = layout.lsn(layout.byte_pos(first.lsn) + layout::maxalign(first.total_length as u64));
    let switch = RecordRef { lsn: switch_at, total_length: 24, is_switch: true };
    whatif.add_record(switch, &[], &mut |_, _| unreachable!()).unwrap();
    let rows = whatif.finish().unwrap();
    // as written (off): to the next segment's first record, the LSN span exactly
    assert_eq!(rows[0].wal_bytes as u64, SEGMENT - 4096 + LONG_PAGE_HEADER);
    assert_eq!(rows[0].records, 2);
    for row in &rows[1..] {
        // the image's bytes saved, not rounded to a segment: every setting pads as written
        let saved = rows[0].wal_bytes - row.wal_bytes;
        let image_saved = rows[0].fpi_bytes - row.fpi_bytes;
        assert!((saved - image_saved).abs() <= 2 + 8 + 24, "{}: {saved} vs {image_saved}", row.wal_compression);
        assert!(image_saved > 1000, "{}: {image_saved}", row.wal_compression);
    }
}

#[test]
fn relations_are_listed_largest_first_with_every_setting() {
    let pages: Vec<Vec<u8>> = (0..5).map(|i| page(200, 3000 + 1000 * (i % 2) as u16, i)).collect();
    let (rows, whatif) = run(&pages, 1.0, LONG_PAGE_HEADER);
    let by_relation = whatif.relation_rows(&mut |key| (format!("rel{}", key.relfilenode), "main".into()));
    // Relation 100 has the three pages with the smaller hole: more bytes, listed first.
    assert_eq!(by_relation.len(), 2 * rows.len());
    assert_eq!((by_relation[0].relation.as_str(), by_relation[0].fpi_images), ("rel100", 3));
    assert_eq!((by_relation[4].relation.as_str(), by_relation[4].fpi_images), ("rel101", 2));
    for (s, row) in rows.iter().enumerate() {
        let sum: i64 =
            by_relation.iter().filter(|r| r.wal_compression == row.wal_compression).map(|r| r.fpi_bytes).sum();
        assert_eq!(sum, row.fpi_bytes, "{s}");
    }
}

#[test]
fn bad_arguments_and_holes_are_errors() {
    assert!(WalWhatIf::new(WalLayout::new(SEGMENT), settings(), 0.0).is_err());
    assert!(WalWhatIf::new(WalLayout::new(SEGMENT), settings(), 1.5).is_err());
    assert!(WalWhatIf::new(WalLayout::new(SEGMENT), settings().split_off(1), 1.0).is_err());
    let mut whatif = WalWhatIf::new(WalLayout::new(SEGMENT), settings(), 1.0).unwrap();
    let p = page(200, 3000, 1);
    let mut bad = image(1, &p, WalCompression::Off, 100);
    bad.hole_offset = 8000;
    let record = RecordRef { lsn: LONG_PAGE_HEADER, total_length: 200, is_switch: false };
    let err = whatif.add_record(record, &[bad], &mut restore_from(&p)).unwrap_err();
    assert!(err.message().contains("outside the page"), "{}", err.message());
}

#[test]
fn lsns_print_as_postgres_prints_them() {
    assert_eq!(lsn_text(0x16_B374_D848), "16/B374D848");
    assert_eq!(lsn_text(0x0100_0028), "0/1000028");
    assert_eq!(WalCompression::from_bimg_info(0x02 | 0x01), WalCompression::Off);
    assert_eq!(WalCompression::from_bimg_info(0x04 | 0x02), WalCompression::Pglz);
    assert_eq!(WalCompression::from_bimg_info(0x08), WalCompression::Lz4);
    assert_eq!(WalCompression::from_bimg_info(0x10 | 0x01), WalCompression::Zstd);
}

/// Sizes from a sizer writing the same bytes are the sizes the setting's codec gives, over
/// batches it does not run on too; a sizer writing other bytes is dropped at the first timed
/// batch, and the figures are the codec's.
#[test]
fn sizers_give_the_codecs_sizes_or_are_dropped() {
    // 300 pages of 5.2 KB without their hole: two batches, the second one untimed.
    let pages: Vec<Vec<u8>> = (0..300).map(|i| page(200, 3000, i)).collect();
    let sizes = |rows: &[WalWhatIfRow]| -> Vec<(WalCompression, i64, i64, i64)> {
        rows.iter().map(|r| (r.wal_compression, r.fpi_bytes, r.wal_bytes, r.compressed_images)).collect()
    };
    let (plain, _) = run(&pages, 1.0, LONG_PAGE_HEADER);
    let (same, whatif) =
        run_sized(&pages, 1.0, LONG_PAGE_HEADER, &[(WalCompression::Pglz, "pglz"), (WalCompression::Lz4, "lz4")]);
    assert_eq!(sizes(&same), sizes(&plain));
    assert!(whatif.sizers_dropped().is_empty());
    assert!(same.iter().skip(1).all(|r| r.compress_cpu_seconds > 0.0 && r.decompress_cpu_seconds > 0.0));

    let (other, whatif) = run_sized(&pages, 1.0, LONG_PAGE_HEADER, &[(WalCompression::Pglz, "lz4")]);
    assert_eq!(sizes(&other), sizes(&plain));
    assert_eq!(whatif.sizers_dropped(), [WalCompression::Pglz]);

    let mut whatif = WalWhatIf::new(WalLayout::new(SEGMENT), settings(), 1.0).unwrap();
    assert!(whatif.size_with(WalCompression::Off, codec("pglz")).is_err());
    let mut without_lz4 =
        WalWhatIf::new(WalLayout::new(SEGMENT), settings().into_iter().take(2).collect(), 1.0).unwrap();
    assert!(without_lz4.size_with(WalCompression::Lz4, codec("lz4")).is_err());
}

/// A codec counting the images it compresses.
struct Counting(Box<dyn Codec>, std::rc::Rc<std::cell::Cell<usize>>);

impl Codec for Counting {
    fn spec(&self) -> crate::registry::MethodSpec {
        self.0.spec()
    }
    fn compress_bound(&self, len: usize) -> usize {
        self.0.compress_bound(len)
    }
    fn compress(&mut self, src: &[u8], dst: &mut [u8], tick: &mut dyn FnMut()) -> Result<Option<usize>> {
        self.1.set(self.1.get() + 1);
        self.0.compress(src, dst, tick)
    }
    fn decompress(&mut self, src: &[u8], dst: &mut [u8], tick: &mut dyn FnMut()) -> Result<()> {
        self.0.decompress(src, dst, tick)
    }
}

/// With a sizer the setting's codec compresses the first batch and every TIMED_EVERY-th after
/// it, and the sizer every image; the CPU figures are scaled up from the timed batches.
#[test]
fn with_a_sizer_the_codec_runs_on_the_timed_batches_only() {
    // About 10 batches of 1 MB: pages of 5.2 KB without their hole.
    let pages: Vec<Vec<u8>> = (0..2000).map(|i| page(200, 3000, i)).collect();
    let (server, ours) = (std::rc::Rc::new(std::cell::Cell::new(0)), std::rc::Rc::new(std::cell::Cell::new(0)));
    let settings = vec![
        (WalCompression::Off, None),
        (WalCompression::Pglz, Some(Box::new(Counting(codec("pglz"), server.clone())) as Box<dyn Codec>)),
    ];
    let mut whatif = WalWhatIf::new(WalLayout::new(SEGMENT), settings, 1.0).unwrap();
    whatif.size_with(WalCompression::Pglz, Box::new(Counting(codec("pglz"), ours.clone()))).unwrap();
    let mut lsn = LONG_PAGE_HEADER;
    for p in &pages {
        let img = image(100, p, WalCompression::Off, BLCKSZ - crate::page::hole(p).1);
        let total = OTHER_BYTES + img.bimg_len as u32;
        whatif
            .add_record(RecordRef { lsn, total_length: total, is_switch: false }, &[img], &mut restore_from(p))
            .unwrap();
        lsn += layout::maxalign(total as u64);
    }
    let rows = whatif.finish().unwrap();
    let per_batch = (1 << 20) / (BLCKSZ - 2800) + 1;
    let batches = pages.len().div_ceil(per_batch);
    assert!(batches > TIMED_EVERY as usize, "{batches} batches");
    assert_eq!(ours.get(), pages.len());
    assert_eq!(server.get(), 2 * per_batch, "the first and the ninth batch");
    assert!(rows[1].compress_cpu_seconds > 0.0);
}

#[test]
fn pieces_of_the_read_count_each_sampled_image_once_with_its_savings() {
    // 300 records of one image (~5.4 kB each): about 1.6 MB of WAL, so two pieces of 1 MB
    let pages: Vec<Vec<u8>> = (0..300).map(|i| page(200, 3000, i)).collect();
    let (rows, whatif) = run(&pages, 1.0, LONG_PAGE_HEADER);
    let chunks = whatif.chunks();
    assert_eq!(chunks.len(), 2, "{chunks:?}");
    assert_eq!(chunks.iter().map(|c| c.images).sum::<u64>(), 300);
    for (s, row) in rows.iter().enumerate() {
        let saved: i64 = chunks.iter().map(|c| c.saved[s]).sum();
        // the image bytes saved against as written (off), the hole header of each compressed
        // image included
        let image_saved = rows[0].fpi_bytes - row.fpi_bytes;
        assert!((image_saved - saved).abs() <= 2 * 300, "{}: {saved} vs {image_saved}", row.wal_compression);
    }
    assert_eq!(chunks[0].saved[0], 0, "off against off-written images saves nothing");
    // a sample of a third: only the sampled images are counted
    let (_, sampled) = run(&pages, 1.0 / 3.0, LONG_PAGE_HEADER);
    assert_eq!(sampled.chunks().iter().map(|c| c.images).sum::<u64>(), 100);
}
