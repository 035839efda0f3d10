//! Byte-level helpers the codec kernels share: little-endian loads and the common-prefix
//! length of two positions of one buffer (how far a match extends).

/// Four bytes at `at`, little-endian. Panics if fewer than four bytes remain.
#[inline(always)]
pub fn load_u32(buf: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(buf[at..at + 4].try_into().unwrap())
}

/// Eight bytes at `at`, little-endian. Panics if fewer than eight bytes remain.
#[inline(always)]
pub fn load_u64(buf: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(buf[at..at + 8].try_into().unwrap())
}

/// Length of the common prefix of `buf[a..]` and `buf[b..]`, at most `limit`; compares eight
/// bytes at a time. Panics unless `a + limit <= buf.len()` and `b + limit <= buf.len()`.
#[inline(always)]
pub fn common_prefix(buf: &[u8], a: usize, b: usize, limit: usize) -> usize {
    let (x, y) = (&buf[a..a + limit], &buf[b..b + limit]);
    let mut n = 0;
    while n + 8 <= limit {
        let diff = load_u64(x, n) ^ load_u64(y, n);
        if diff != 0 {
            return n + (diff.trailing_zeros() / 8) as usize;
        }
        n += 8;
    }
    while n < limit && x[n] == y[n] {
        n += 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_lengths() {
        let buf = b"abcdefghijklmnopabcdefghijklmnoXabc";
        assert_eq!(common_prefix(buf, 0, 16, 19), 15);
        assert_eq!(common_prefix(buf, 0, 16, 7), 7);
        assert_eq!(common_prefix(buf, 0, 32, 3), 3);
        assert_eq!(common_prefix(buf, 1, 2, 10), 0);
        assert_eq!(load_u32(b"\x01\x02\x03\x04", 0), 0x0403_0201);
        assert_eq!(load_u64(&[1, 0, 0, 0, 0, 0, 0, 0, 9], 0), 1);
    }
}
