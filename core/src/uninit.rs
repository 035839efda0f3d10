//! Output memory the decoders only write. A decoder into `&mut [MaybeUninit<u8>]` is handed
//! fresh memory (a palloc'd result, a vector's spare capacity) without zeroing it first, and
//! returns how many bytes it wrote from the start: those are initialised, the rest is not
//! promised anything.

use std::mem::MaybeUninit;

/// `buf` seen as memory to be written.
///
/// # Safety
///
/// Whoever writes through the result writes initialised bytes only (as every decoder of this
/// crate does: it copies from its input or from output it has written), since `buf` is read as
/// initialised `u8`s afterwards.
#[inline(always)]
pub unsafe fn as_uninit_mut(buf: &mut [u8]) -> &mut [MaybeUninit<u8>] {
    // SAFETY: same layout; the caller keeps every byte initialised.
    unsafe { &mut *(buf as *mut [u8] as *mut [MaybeUninit<u8>]) }
}

/// `buf` as a source for copies into uninitialised memory (`copy_from_slice`).
#[inline(always)]
pub fn as_uninit(buf: &[u8]) -> &[MaybeUninit<u8>] {
    // SAFETY: same layout, and nothing can be written through a shared slice.
    unsafe { &*(buf as *const [u8] as *const [MaybeUninit<u8>]) }
}

/// The first `len` bytes of `buf`, which its writer says it wrote.
///
/// # Safety
///
/// `buf[..len]` is initialised.
#[inline(always)]
pub unsafe fn assume_written(buf: &[MaybeUninit<u8>], len: usize) -> &[u8] {
    // SAFETY: the caller's contract; same layout.
    unsafe { &*(&buf[..len] as *const [MaybeUninit<u8>] as *const [u8]) }
}

/// Test inputs for the decoders into uninitialised memory: data with repetitions of every
/// short period (the matches whose copies read near the end of the output), runs and noise,
/// of `len` bytes.
#[cfg(test)]
pub(crate) fn periodic_test_data(rng: &mut crate::rng::SeededRng, len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        let period = 1 + rng.below(20) as usize;
        let unit = rng.bytes(period);
        let reps = 1 + rng.below(12) as usize;
        for _ in 0..reps {
            out.extend_from_slice(&unit);
        }
        let noise = rng.below(6) as usize;
        out.extend(rng.bytes(noise));
    }
    out.truncate(len);
    out
}

/// Damaged copies of `block`: truncated, and with a byte or two overwritten.
#[cfg(test)]
pub(crate) fn damaged(rng: &mut crate::rng::SeededRng, block: &[u8]) -> Vec<Vec<u8>> {
    let mut out = vec![block[..block.len() / 2].to_vec(), block[..block.len().saturating_sub(1)].to_vec()];
    for _ in 0..3 {
        let mut b = block.to_vec();
        for _ in 0..=rng.below(2) {
            if !b.is_empty() {
                let at = rng.below(b.len() as u64) as usize;
                b[at] = rng.next_u64() as u8;
            }
        }
        out.push(b);
    }
    out
}

/// `decode` run into truly uninitialised memory (a vector's spare capacity, which Miri tracks
/// as such) and into memory filled with 0x00 and with 0xFF first: the same result each time,
/// returned with the written bytes. An `Err` is returned as its `Debug` text.
#[cfg(test)]
pub(crate) fn same_whatever_the_buffer_held<E: std::fmt::Debug>(
    cap: usize,
    decode: &mut impl FnMut(&mut [MaybeUninit<u8>]) -> std::result::Result<usize, E>,
) -> std::result::Result<Vec<u8>, String> {
    let mut run = |fill: Option<u8>| {
        let mut buf: Vec<u8> = Vec::with_capacity(cap);
        if let Some(byte) = fill {
            buf.resize(cap, byte);
            buf.clear();
        }
        let room = &mut buf.spare_capacity_mut()[..cap];
        match decode(room) {
            Ok(n) => {
                assert!(n <= cap, "{n} bytes written into {cap}");
                // SAFETY: the decoder wrote the n bytes it returns.
                Ok(unsafe { assume_written(room, n) }.to_vec())
            }
            Err(e) => Err(format!("{e:?}")),
        }
    };
    let fresh = run(None);
    assert_eq!(run(Some(0x00)), fresh, "the result depends on what the buffer held (0x00)");
    assert_eq!(run(Some(0xFF)), fresh, "the result depends on what the buffer held (0xFF)");
    fresh
}
