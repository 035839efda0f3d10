//! What both loops of the decoder read the same way: the shortest match, the bytes extending a
//! length nibble, and the errors a block can have.

/// Why a block does not decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodeError {
    /// The block ends in the middle of a sequence (a length, or an offset).
    Truncated,
    /// A literal run is longer than what is left of the block.
    LiteralOutOfBounds,
    /// A match has offset 0.
    OffsetZero,
    /// A match refers to bytes before the start of the output (and of the dictionary).
    OffsetOutOfBounds,
    /// The block decodes to more bytes than the output buffer holds.
    OutputTooSmall,
}

/// The shortest match; a token's match nibble is the match length minus this.
pub(super) const MIN_MATCH: usize = 4;

/// Read the bytes extending a length nibble of 15 and return what they add.
#[inline(always)]
pub(super) fn read_length(src: &[u8], ip: &mut usize) -> Result<usize, DecodeError> {
    let mut n = 0usize;
    loop {
        let b = *src.get(*ip).ok_or(DecodeError::Truncated)?;
        *ip += 1;
        n += b as usize;
        if b != 255 {
            return Ok(n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A length goes on while its bytes are 255, and a length cut short is `Truncated`.
    #[test]
    fn read_length_adds_bytes_up_to_one_under_255() {
        let mut ip = 1;
        assert_eq!(read_length(&[9, 255, 255, 7, 1], &mut ip), Ok(517));
        assert_eq!(ip, 4);
        let mut ip = 0;
        assert_eq!(read_length(&[0], &mut ip), Ok(0));
        assert_eq!(read_length(&[255, 255], &mut 0), Err(DecodeError::Truncated));
        assert_eq!(read_length(&[], &mut 0), Err(DecodeError::Truncated));
    }
}
