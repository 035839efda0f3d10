//! Copies, fills and comparisons of input-sized buffers done a piece at a time, with a call of
//! `tick` between pieces (where the extension checks for cancel). One `copy_from_slice` of a
//! gigabyte, the first touch of every page of its destination included, took 0.3 s on an idle
//! machine and more under load, with no interrupt checked; a piece of [`PIECE`] bytes takes a
//! few milliseconds. A buffer of at most one piece is handled in one step, without a tick.

use std::sync::OnceLock;

use crate::error::{try_with_capacity, Result};

/// Bytes handled between two ticks.
pub const PIECE: usize = 4 << 20;

/// Where code that must not raise (a callback from C, which nothing may unwind through) asks
/// whether a cancel is pending; set once by the extension. None set: never.
static CANCEL_PROBE: OnceLock<fn() -> bool> = OnceLock::new();

/// Set the probe [`cancel_pending`] asks (the first call wins).
pub fn set_cancel_probe(probe: fn() -> bool) {
    let _ = CANCEL_PROBE.set(probe);
}

/// Whether the extension's probe says an interrupt is pending. A `true` means only "stop and
/// tick soon": the tick decides what it was.
pub fn cancel_pending() -> bool {
    CANCEL_PROBE.get().is_some_and(|probe| probe())
}

/// `dst.copy_from_slice(src)`, a [`PIECE`] at a time. Panics if the lengths differ, as
/// `copy_from_slice` does.
pub fn copy(dst: &mut [u8], src: &[u8], tick: &mut dyn FnMut()) {
    assert_eq!(dst.len(), src.len(), "ticking::copy: lengths differ");
    for (i, (d, s)) in dst.chunks_mut(PIECE).zip(src.chunks(PIECE)).enumerate() {
        if i > 0 {
            tick();
        }
        d.copy_from_slice(s);
    }
}

/// `dst.fill(byte)`, a [`PIECE`] at a time.
pub fn fill(dst: &mut [u8], byte: u8, tick: &mut dyn FnMut()) {
    for (i, d) in dst.chunks_mut(PIECE).enumerate() {
        if i > 0 {
            tick();
        }
        d.fill(byte);
    }
}

/// `a == b`, a [`PIECE`] at a time (stopping at the first piece that differs).
pub fn equal(a: &[u8], b: &[u8], tick: &mut dyn FnMut()) -> bool {
    if a.len() != b.len() {
        return false;
    }
    for (i, (x, y)) in a.chunks(PIECE).zip(b.chunks(PIECE)).enumerate() {
        if i > 0 {
            tick();
        }
        if x != y {
            return false;
        }
    }
    true
}

/// A copy of `data`, allocated fallibly ([`crate::error::try_copy`]) and filled a [`PIECE`]
/// at a time.
pub fn try_copy(data: &[u8], what: &str, tick: &mut dyn FnMut()) -> Result<Vec<u8>> {
    let mut v = try_with_capacity(data.len(), what)?;
    for (i, piece) in data.chunks(PIECE).enumerate() {
        if i > 0 {
            tick();
        }
        v.extend_from_slice(piece);
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lengths around the piece boundaries, and the ticks each takes: one between two pieces.
    const LENGTHS: [usize; 7] = [0, 1, PIECE - 1, PIECE, PIECE + 1, 2 * PIECE, 2 * PIECE + 3];

    fn ticks_for(len: usize) -> usize {
        len.div_ceil(PIECE).saturating_sub(1)
    }

    fn data(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 + i / 251) as u8).collect()
    }

    #[test]
    fn copy_equals_copy_from_slice_and_ticks_between_pieces() {
        for len in LENGTHS {
            let src = data(len);
            let mut dst = vec![0xA5; len];
            let mut ticks = 0;
            copy(&mut dst, &src, &mut || ticks += 1);
            assert!(dst == src, "{len}");
            assert_eq!(ticks, ticks_for(len), "{len}");
        }
    }

    #[test]
    #[should_panic(expected = "lengths differ")]
    fn copy_of_different_lengths_panics() {
        copy(&mut [0; 3], &[1; 4], &mut || ());
    }

    #[test]
    fn fill_fills_every_byte_and_ticks_between_pieces() {
        for len in LENGTHS {
            let mut dst = data(len);
            let mut ticks = 0;
            fill(&mut dst, 0xA5, &mut || ticks += 1);
            assert!(dst.iter().all(|&b| b == 0xA5), "{len}");
            assert_eq!(ticks, ticks_for(len), "{len}");
        }
    }

    #[test]
    fn equal_agrees_with_eq_wherever_the_difference_is() {
        for len in LENGTHS {
            let a = data(len);
            let mut ticks = 0;
            assert!(equal(&a, &a.clone(), &mut || ticks += 1), "{len}");
            assert_eq!(ticks, ticks_for(len), "{len}");
            for at in [0, len / 2, len.saturating_sub(1)] {
                if at < len {
                    let mut b = a.clone();
                    b[at] ^= 1;
                    assert!(!equal(&a, &b, &mut || ()), "{len} {at}");
                }
            }
            assert!(!equal(&a, &a[..len.saturating_sub(1)], &mut || ()) || len == 0, "{len}");
        }
    }

    #[test]
    fn try_copy_copies_and_ticks_between_pieces() {
        for len in LENGTHS {
            let src = data(len);
            let mut ticks = 0;
            assert!(try_copy(&src, "a test", &mut || ticks += 1).unwrap() == src, "{len}");
            assert_eq!(ticks, ticks_for(len), "{len}");
        }
    }
}
