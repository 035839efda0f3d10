use super::*;

#[test]
fn small_values_are_never_compressed() {
    assert_eq!(stored_value_size(100, 28, Some(10)), (101, false));
    assert_eq!(stored_value_size(1000, 28, Some(10)), (1004, false));
}

#[test]
fn wide_values_compress_inline_or_move_out_of_line() {
    assert_eq!(stored_value_size(5000, 28, Some(500)), (508, true));
    assert_eq!(stored_value_size(50_000, 28, Some(4000)), (4004, true));
    assert_eq!(stored_value_size(5000, 28, None), (5000, false));
}

#[test]
fn a_saving_of_two_bytes_or_less_is_refused() {
    // VARSIZE(compressed) = len + 8 must be < valsize - 2
    assert!(!stored_value_size(3000, 28, Some(2990)).1);
    assert!(stored_value_size(3000, 28, Some(2989)).1);
}

#[test]
fn each_row_is_toasted_anew_under_each_method() {
    // a value pglz refuses (no match in its first kilobyte) that lz4 compresses, stored raw
    // and out of line today under pglz: under lz4 it is compressed
    let mut value = crate::rng::SeededRng::new(3).bytes(1500);
    value.extend(b"a repeated tail ".repeat(300));
    let values = Payload::new("t.c", vec![value.clone(), b"short".to_vec()]);
    let mut codecs =
        [("pglz", crate::lab::codecs::tests::codec("pglz")), ("lz4", crate::lab::codecs::tests::codec("lz4"))];
    assert_eq!(compress_to_vec(codecs[0].1.as_mut(), &value, &mut Vec::new(), &mut || ()).unwrap(), None);
    let lz4_len = compress_to_vec(codecs[1].1.as_mut(), &value, &mut Vec::new(), &mut || ()).unwrap().unwrap();
    let stored = |raw: usize, size: usize, external: bool| StoredAttribute {
        storage: Storage::Extended,
        raw,
        size,
        method: None,
        external,
    };
    let rows = [
        SampledRow {
            header: 24,
            fixed: 4,
            target: 2032,
            attributes: vec![stored(value.len(), value.len(), true)],
            column: 0,
            padding: 0,
        },
        SampledRow { header: 24, fixed: 4, target: 2032, attributes: vec![stored(5, 6, false)], column: 0, padding: 0 },
    ];
    let totals = stored_per_row(&values, &rows, &mut codecs, &mut || ()).unwrap();
    assert_eq!(totals, [value.len() as i64 + 6, lz4_len as i64 + 8 + 6]);
}

/// Another column stored raw in the row: refused by its method, or never reached? The model
/// reads it as refused (the value then compressed), and its range reaches the other reading
/// (that column compressed first, the row then short enough: the value stays raw). With no such
/// column, no range.
#[test]
fn a_raw_neighbour_gives_the_model_its_known_error() {
    let value = b"a repetitive value, ".repeat(50);
    let attribute = |raw: usize, external: bool| StoredAttribute {
        storage: Storage::Extended,
        raw,
        size: if external { raw } else { raw + 4 },
        method: None,
        external,
    };
    let mut codecs = [("lz4", crate::lab::codecs::tests::codec("lz4"))];
    let compressed = compress_to_vec(codecs[0].1.as_mut(), &value, &mut Vec::new(), &mut || ()).unwrap().unwrap();
    let row = |neighbour: StoredAttribute| SampledRow {
        header: 24,
        fixed: 4,
        target: 2032,
        attributes: vec![neighbour, attribute(value.len(), false)],
        column: 1,
        padding: 0,
    };
    let with_raw = toasted_anew(&value, &row(attribute(1500, false)), &mut codecs, &mut || ()).unwrap()[0];
    assert_eq!((with_raw.stored.size, with_raw.low, with_raw.high), (compressed + 8, compressed + 8, value.len() + 4));
    // the neighbour out of line: it stays a pointer whatever it is, no range
    let with_pointer = toasted_anew(&value, &row(attribute(1500, true)), &mut codecs, &mut || ()).unwrap()[0];
    assert_eq!((with_pointer.low, with_pointer.high), (with_pointer.stored.size, with_pointer.stored.size));
    // a row 24 + 4 + 18 + 1004 bytes wide: under the threshold, however padded; one 4 bytes
    // under it is over it with its padding (15 bytes at most), the value then compressed
    let mut near = row(attribute(1500, true));
    near.padding = 15;
    let far = toasted_anew(&value, &near, &mut codecs, &mut || ()).unwrap()[0];
    assert_eq!((far.stored.size, far.low, far.high), (value.len() + 4, value.len() + 4, value.len() + 4));
    near.fixed += 2032 - (24 + 4 + 18 + value.len() + 4) - 4;
    let padded = toasted_anew(&value, &near, &mut codecs, &mut || ()).unwrap()[0];
    assert_eq!((padded.stored.size, padded.low, padded.high), (value.len() + 4, compressed + 8, value.len() + 4));
}

/// A long value is toasted anew with the caller's tick passed to each codec: our pglz checks
/// for cancel every megabyte of a 5 MB value.
#[test]
fn toasting_a_long_value_anew_ticks_inside_it() {
    let value = b"wide and repetitive, a long value ".repeat(150_000);
    let row = SampledRow {
        header: 24,
        fixed: 4,
        target: 2032,
        attributes: vec![StoredAttribute {
            storage: Storage::Extended,
            raw: value.len(),
            size: value.len(),
            method: None,
            external: true,
        }],
        column: 0,
        padding: 0,
    };
    let mut codecs = [("pglz", crate::lab::codecs::tests::codec("pglz"))];
    let mut ticks = 0;
    toasted_anew(&value, &row, &mut codecs, &mut || ticks += 1).unwrap();
    assert!(ticks >= 4, "{ticks}");
}

#[test]
fn estimate_counts_values_by_the_rules() {
    let values = Payload::new(
        "t.c",
        vec![b"small".to_vec(), b"wide and repetitive ".repeat(200), crate::rng::SeededRng::new(1).bytes(5000)],
    );
    let mut pglz = crate::lab::codecs::tests::codec("pglz");
    let row = estimate(&values, 28, "pglz", pglz.as_mut(), 1, &mut crate::lab::NoHooks).unwrap();
    assert_eq!((row.values, row.compressed_values, row.raw_bytes), (3, 1, 9005));
    // small inline (5 + 1), random external raw (5000), repetitive compressed and inline
    assert!(row.stored_bytes > 5006 && row.stored_bytes < 5006 + 200, "{row:?}");
    assert!(row.compress_mbps > 0.0 && row.ratio > 1.0);
}
