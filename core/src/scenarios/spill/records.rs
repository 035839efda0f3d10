//! The records of a spill simulation, held in one buffer: each record is its length (LEB128,
//! 1 byte below 128, at most 5) followed by its bytes. Twenty million 2-byte records take
//! 60 MB (plus the buffer's doubling slack while it grows), where a vector of vectors took
//! about 34 times the records' bytes (a 24-byte vector and a heap block per record) and ran
//! out of small allocations under a memory limit. The buffer grows fallibly: running out of
//! memory is [`CodecError::OutOfMemory`], never an abort.

use crate::error::{try_reserve, CodecError, Result};

/// Records in the order they were pushed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Records {
    buf: Vec<u8>,
    count: usize,
    raw_bytes: usize,
}

impl Records {
    pub fn new() -> Records {
        Records::default()
    }

    /// Records copied from `records`, in order.
    pub fn try_from_slices<T: AsRef<[u8]>>(records: &[T]) -> Result<Records> {
        let mut all = Records::new();
        for record in records {
            all.try_push(record.as_ref())?;
        }
        Ok(all)
    }

    /// Append `record`. A record longer than 4 GB is refused as too large.
    pub fn try_push(&mut self, record: &[u8]) -> Result<()> {
        let len = u32::try_from(record.len())
            .map_err(|_| CodecError::too_large(format!("a record of {} bytes is over 4 GB", record.len())))?;
        try_reserve(&mut self.buf, 5 + record.len(), "the records").map_err(|_| {
            CodecError::out_of_memory(format!(
                "out of memory after {} records ({} bytes): every record is held in memory; use fewer rows \
                     (LIMIT)",
                self.count, self.raw_bytes
            ))
        })?;
        let mut len = len;
        while len >= 0x80 {
            self.buf.push((len as u8 & 0x7f) | 0x80);
            len >>= 7;
        }
        self.buf.push(len as u8);
        self.buf.extend_from_slice(record);
        self.count += 1;
        self.raw_bytes += record.len();
        Ok(())
    }

    /// How many records.
    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The sum of the records' lengths.
    pub fn raw_bytes(&self) -> usize {
        self.raw_bytes
    }

    /// The bytes held: the records and their lengths (what [`try_push`](Self::try_push)
    /// wrote, not the buffer's capacity).
    pub fn held_bytes(&self) -> usize {
        self.buf.len()
    }

    /// The records, in order.
    pub fn iter(&self) -> Iter<'_> {
        Iter { rest: &self.buf, left: self.count }
    }
}

/// The records of a [`Records`], in order.
#[derive(Clone)]
pub struct Iter<'a> {
    rest: &'a [u8],
    left: usize,
}

impl<'a> Iterator for Iter<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        if self.left == 0 {
            return None;
        }
        let mut len = 0usize;
        let mut shift = 0;
        let mut at = 0;
        loop {
            // The buffer holds only what `try_push` wrote: a length and its record.
            let byte = self.rest[at];
            at += 1;
            len |= usize::from(byte & 0x7f) << shift;
            if byte < 0x80 {
                break;
            }
            shift += 7;
        }
        let (record, rest) = self.rest[at..].split_at(len);
        self.rest = rest;
        self.left -= 1;
        Some(record)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl<'a> IntoIterator for &'a Records {
    type Item = &'a [u8];
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_of_every_length_class_come_back_in_order() {
        let lengths = [0usize, 1, 2, 127, 128, 129, 16_383, 16_384, 70_000, 2_100_000];
        let originals: Vec<Vec<u8>> =
            lengths.iter().enumerate().map(|(i, &n)| (0..n).map(|k| (k * 31 + i) as u8).collect()).collect();
        let records = Records::try_from_slices(&originals).unwrap();
        assert_eq!(records.len(), originals.len());
        assert_eq!(records.raw_bytes(), lengths.iter().sum::<usize>());
        assert_eq!(records.iter().len(), originals.len());
        let back: Vec<&[u8]> = records.iter().collect();
        assert_eq!(back, originals.iter().map(|r| r.as_slice()).collect::<Vec<_>>());
    }

    /// Memory is a small multiple of the records' bytes, whatever their size.
    #[test]
    fn tiny_records_take_one_length_byte_each() {
        let mut records = Records::new();
        for _ in 0..1_000_000 {
            records.try_push(b"ab").unwrap();
        }
        assert_eq!(records.held_bytes(), 3_000_000);
        assert!(records.buf.capacity() <= 2 * records.held_bytes() + 64, "{}", records.buf.capacity());
        assert!(records.iter().all(|r| r == b"ab"));
    }
}
