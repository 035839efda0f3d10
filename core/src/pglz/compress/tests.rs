use super::*;
use crate::pglz::decompress;
use crate::rng::SeededRng;

/// Both encoders on every size class of the dispatch (the small fast loop's table sizes and
/// edge rules, the chain encoder's `u16` and `u32` tables, each side of every boundary): the
/// result decodes to the input.
#[test]
fn every_size_class_round_trips() {
    let mut rng = SeededRng::new(3);
    for len in [511, 512, 1023, 1024, 4096, 4097, 8192, 8193, SMALL_INPUT, SMALL_INPUT + 1] {
        let mut data = rng.printable(200).repeat(len / 200 + 1);
        data.truncate(len);
        for fast in [false, true] {
            let c = if fast { compress_fast(&data, &Strategy::DEFAULT) } else { compress(&data, &Strategy::DEFAULT) };
            let c = c.unwrap_or_else(|| panic!("{len} bytes (fast: {fast}) refused"));
            assert_eq!(decompress(&c, len, true).unwrap(), data, "{len} bytes (fast: {fast})");
        }
    }
}
