//! The output side of the pglz encoders: control bytes, literals and tags.

/// The output side of both encoders, as `pglz_out_ctrl`, `pglz_out_literal` and
/// `pglz_out_tag` write it: items grouped by eight behind a control byte whose
/// bits, least significant first, say literal (0) or tag (1).
///
/// The callers refuse an item once `op >= result_max` (their size check, with
/// `limit <= result_max`), so an item starts below `result_max` and its at most
/// four bytes (control byte, three-byte tag) end within `result_max + 4`. The
/// output holds that much: both callers slice it to `max_output(slen) = slen + 4`
/// (`compress_with`, and again `compress_fast_core`), and `result_max <= slen`
/// (`Params::new` clamps the rate to 0..=99). [`Emitter::item`] relies on this
/// instead of checking each item's room again, a check that cost the exact
/// encoder a large share of its instructions (BENCHMARKS.md). [`Emitter::new`]
/// checks the output's size in debug builds (and so under the fuzz targets)
/// only, for the same reason.
pub(super) struct Emitter<'a> {
    out: &'a mut [u8],
    /// The next output position.
    pub(super) op: usize,
    ctrl_pos: usize,
    ctrl_byte: u8,
    /// The bit of the next item in `ctrl_byte`; 0 when a new control byte is due.
    ctrl_bit: u8,
    result_max: usize,
}

impl<'a> Emitter<'a> {
    pub(super) fn new(out: &'a mut [u8], result_max: usize) -> Emitter<'a> {
        // See `Emitter` for why this holds.
        debug_assert!(
            result_max.checked_add(4).is_some_and(|end| end <= out.len()),
            "the output holds the items the size checks let start"
        );
        // The first item "flushes" a control byte to out[0] before reserving out[0]
        // itself, so no dummy location is needed.
        Emitter { out, op: 0, ctrl_pos: 0, ctrl_byte: 0, ctrl_bit: 0, result_max }
    }

    /// Room for one item: a control byte if one is due, then up to three bytes.
    /// Only while `op < result_max` (the callers' size check before every item).
    #[inline(always)]
    fn item(&mut self) -> &mut [u8; 3] {
        if self.ctrl_bit == 0 {
            self.out[self.ctrl_pos] = self.ctrl_byte;
            self.ctrl_pos = self.op;
            self.op += 1;
            self.ctrl_byte = 0;
            self.ctrl_bit = 1;
        }
        debug_assert!(self.op + 3 <= self.out.len(), "an item started past the size check");
        // SAFETY: the item started below result_max (the callers' size check), so
        // with its control byte it ends by result_max + 4 <= out.len() (see
        // `Emitter`): op + 3 <= out.len(), three writable bytes, borrowed from self.out.
        unsafe { &mut *self.out.as_mut_ptr().add(self.op).cast::<[u8; 3]>() }
    }

    #[inline(always)]
    pub(super) fn literal(&mut self, byte: u8) {
        self.item()[0] = byte;
        self.op += 1;
        self.ctrl_bit <<= 1;
    }

    /// How many literals in a row the output takes before it refuses an item:
    /// the size check before every item (refused when `op >= limit`) passes
    /// for each of them, and fails for the item after them.
    #[inline(always)]
    pub(super) fn literals_before(&self, limit: usize) -> usize {
        // The item after n literals is checked at op + n + (the control bytes the
        // n start): (n + filled - 1) / 8 of them, with `filled` (1..=8) items in
        // the current group (8 when a new control byte is due). With
        // m = n + filled - 1 that is op + floor(9m / 8) - filled + 1, which stays
        // below `limit` exactly for m <= (8s + 7) / 9, s = limit - op - 2 + filled.
        let filled = self.ctrl_bit.trailing_zeros() as usize;
        match (limit + filled).checked_sub(self.op + 2) {
            Some(s) => ((8 * s + 7) / 9 + 2).saturating_sub(filled),
            None => 0,
        }
    }

    /// The literals `src[from..to]`, a control byte (all literal bits, 0)
    /// reserved before each new group: the bytes of a group moved as one word.
    #[inline(always)]
    pub(super) fn literals(&mut self, src: &[u8], mut from: usize, to: usize) {
        loop {
            // Items the current group still takes (none when a new one is due).
            let k = (8 - self.ctrl_bit.trailing_zeros() as usize).min(to - from);
            // Eight bytes moved where both sides have eight; those past the k
            // literals are rewritten by the next items or lie past the result.
            match (src.get(from..from + 8), self.out.get_mut(self.op..self.op + 8)) {
                (Some(word), Some(room)) => room.copy_from_slice(word),
                _ => self.out[self.op..self.op + k].copy_from_slice(&src[from..from + k]),
            }
            self.op += k;
            self.ctrl_bit = (u32::from(self.ctrl_bit) << k) as u8;
            from += k;
            if from == to {
                return;
            }
            self.out[self.ctrl_pos] = self.ctrl_byte;
            self.ctrl_pos = self.op;
            self.op += 1;
            self.ctrl_byte = 0;
            self.ctrl_bit = 1;
        }
    }

    /// A tag: `len` (3..=273) bytes copied from `off` (1..=4095) bytes back.
    #[inline(always)]
    pub(super) fn tag(&mut self, off: usize, len: usize) {
        let hi = ((off & 0xf00) >> 4) as u8;
        let room = self.item();
        room[1] = off as u8;
        let n = if len > 17 {
            room[0] = hi | 0x0f;
            room[2] = (len - 18) as u8;
            3
        } else {
            room[0] = hi | (len - 3) as u8;
            2
        };
        self.op += n;
        self.ctrl_byte |= self.ctrl_bit;
        self.ctrl_bit <<= 1;
    }

    /// Write the pending control byte; fail as PostgreSQL does unless the result is
    /// below `result_max`.
    pub(super) fn finish(self) -> Option<usize> {
        self.out[self.ctrl_pos] = self.ctrl_byte;
        (self.op < self.result_max).then_some(self.op)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`Emitter::literals`] writes what as many [`Emitter::literal`] calls write,
    /// from every position in a control group, for runs up to three groups long,
    /// up to the last byte of the output (where it cannot move whole words).
    #[test]
    fn emitter_literals_match_one_literal_at_a_time() {
        let src: Vec<u8> = (0..64u8).map(|b| b.wrapping_mul(37) | 1).collect();
        for before in 0..10usize {
            for run in 0..24usize {
                // Every output length from just enough (the items' bytes, and
                // `result_max + 4` for `Emitter::new`) to room for words more.
                let need = (before + run).div_ceil(8) + before + run + 4;
                for len in need..need + 12 {
                    let (mut a, mut b) = (vec![0u8; len], vec![0u8; len]);
                    let mut one = Emitter::new(&mut a, len - 4);
                    let mut batch = Emitter::new(&mut b, len - 4);
                    for &byte in &src[..before] {
                        one.literal(byte);
                        batch.literal(byte);
                    }
                    for &byte in &src[before..before + run] {
                        one.literal(byte);
                    }
                    batch.literals(&src, before, before + run);
                    assert_eq!(
                        (one.op, one.ctrl_pos, one.ctrl_byte, one.ctrl_bit),
                        (batch.op, batch.ctrl_pos, batch.ctrl_byte, batch.ctrl_bit)
                    );
                    let n = one.op;
                    one.finish();
                    batch.finish();
                    assert_eq!(a[..n], b[..n], "{before} then {run} literals, {len} bytes of output");
                }
            }
        }
    }

    /// [`Emitter::literals_before`]: the number of literals whose size checks pass
    /// before one fails, from every position in a control group and output size.
    #[test]
    fn emitter_literals_before_counts_the_checks_that_pass() {
        for before in 0..10 {
            for limit in 0..40 {
                let mut out = vec![0u8; 204];
                let mut e = Emitter::new(&mut out, 200);
                for _ in 0..before {
                    e.literal(1);
                }
                let want = {
                    let (op, bit) = (e.op, e.ctrl_bit);
                    let mut n = 0;
                    while e.op < limit {
                        e.literal(1);
                        n += 1;
                    }
                    (e.op, e.ctrl_bit) = (op, bit);
                    n
                };
                assert_eq!(e.literals_before(limit), want, "{before} literals, limit {limit}");
            }
        }
    }
}
