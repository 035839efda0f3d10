//! The one pseudo-random generator of the project: small, fast and seeded (xorshift64*), so
//! synthetic payloads, page samples and test data are the same on every run and machine.
//! Not for anything secret.

#[derive(Debug, Clone)]
pub struct SeededRng(u64);

impl SeededRng {
    pub fn new(seed: u64) -> SeededRng {
        SeededRng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n` (n > 0, n < 2^32).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() >> 32) * n) >> 32
    }

    pub fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let x = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&x[..chunk.len()]);
        }
    }

    /// `n` random bytes.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        let mut v = vec![0u8; n];
        self.fill(&mut v);
        v
    }

    /// `n` bytes from a 64-symbol alphabet: 6 bits of entropy per byte, so a coder without
    /// entropy coding (pglz, LZ4) gains nothing without matches.
    pub fn printable(&mut self, n: usize) -> Vec<u8> {
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        (0..n).map(|_| ALPHABET[(self.next_u64() >> 58) as usize]).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_and_spread() {
        assert_eq!(SeededRng::new(1).bytes(64), SeededRng::new(1).bytes(64));
        assert_ne!(SeededRng::new(1).bytes(64), SeededRng::new(2).bytes(64));
        let mut rng = SeededRng::new(9);
        let mut seen = [false; 10];
        for _ in 0..1000 {
            seen[rng.below(10) as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
        assert!(SeededRng::new(3).printable(100).iter().all(|b| b.is_ascii_alphanumeric() || b"+/".contains(b)));
    }
}
