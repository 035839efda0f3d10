//! The values a batch writes, gathered as it picks them: each a fresh copy (detoasted) of the
//! value it read. Gathered straight into one array of the column's type, laid out as
//! PostgreSQL lays out a one-dimensional array without NULLs, in a buffer this backend keeps
//! from batch to batch (a batch's megabytes are not allocated, faulted in and freed each time);
//! a column of an array type, whose values no array holds, gets a palloc'd copy each. The kept
//! buffer is at most [`SPARE_MAX`] bytes, and let go when a run ends.

use std::cell::RefCell;

use pgrx::pg_sys;

/// What a one-dimensional array without NULLs takes before its elements
/// (`ARR_OVERHEAD_NONULLS(1)`: `ArrayType`'s 16 bytes and one dimension and lower bound, MAXALIGNed).
const ARRAY_HEADER: usize = 24;

/// The largest buffer kept between batches: a batch of 1,000 values of a few kB.
const SPARE_MAX: usize = 8 << 20;

thread_local! {
    static SPARE: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

pub enum Values {
    /// The elements of an array of the column's type, and its array type.
    Array { buf: Vec<u64>, len: usize, count: i32, element: pg_sys::Oid, align: usize, array_type: pg_sys::Oid },
    /// One copy a value.
    Copies(Vec<pg_sys::Datum>),
}

impl Values {
    /// For a column of type `element` (a varlena type).
    pub fn for_column(element: pg_sys::Oid) -> Values {
        // SAFETY: catalog lookups of the column's type.
        let (array_type, align) = unsafe {
            let (mut len, mut byval, mut align) = (0i16, false, 0 as std::ffi::c_char);
            pg_sys::get_typlenbyvalalign(element, &mut len, &mut byval, &mut align);
            (pg_sys::get_array_type(element), align as u8)
        };
        if array_type == pg_sys::InvalidOid {
            return Values::Copies(Vec::new());
        }
        let align = match align {
            b'd' => 8,
            b'i' => 4,
            b's' => 2,
            _ => 1,
        };
        let mut buf = SPARE.with_borrow_mut(std::mem::take);
        buf.clear();
        buf.resize(ARRAY_HEADER / 8, 0);
        Values::Array { buf, len: ARRAY_HEADER, count: 0, element, align, array_type }
    }

    /// Adds the value whose bytes (without a header) are `data`.
    pub fn push(&mut self, data: &[u8]) {
        let size = data.len() + 4;
        match self {
            Values::Array { buf, len, count, align, .. } => {
                let start = len.next_multiple_of(*align);
                let end = start + size;
                let words = end.div_ceil(8);
                buf.reserve(words.saturating_sub(buf.len()));
                // SAFETY: within the capacity just reserved; the padding before `start` and after
                // `end` up to `words` is zeroed, the rest written below, before the length covers it.
                unsafe {
                    let base = buf.as_mut_ptr().cast::<u8>();
                    let filled = buf.len() * 8;
                    if start > filled {
                        std::ptr::write_bytes(base.add(filled), 0, start - filled);
                    }
                    // a 4-byte varlena header: the size, shifted (little-endian VARSIZE_4B)
                    base.add(start).cast::<u32>().write_unaligned(((size as u32) << 2).to_le());
                    std::ptr::copy_nonoverlapping(data.as_ptr(), base.add(start + 4), data.len());
                    std::ptr::write_bytes(base.add(end), 0, words * 8 - end);
                    buf.set_len(words);
                }
                *len = end;
                *count += 1;
            }
            Values::Copies(copies) => {
                // SAFETY: a palloc'd varlena of `size` bytes, its header set, its data copied.
                unsafe {
                    let copy = pg_sys::palloc(size) as *mut u8;
                    copy.cast::<u32>().write_unaligned((size as u32) << 2);
                    std::ptr::copy_nonoverlapping(data.as_ptr(), copy.add(4), data.len());
                    copies.push(pg_sys::Datum::from(copy));
                }
            }
        }
    }

    /// The array as a datum of its array type (valid while `self` lives), with its type.
    pub fn array(&mut self) -> Option<(pg_sys::Datum, pg_sys::Oid)> {
        let Values::Array { buf, len, count, element, array_type, .. } = self else { return None };
        let bytes = bytes_of(buf);
        bytes[0..4].copy_from_slice(&((*len as u32) << 2).to_le_bytes());
        bytes[4..8].copy_from_slice(&1i32.to_ne_bytes()); // ndim
        bytes[8..12].copy_from_slice(&0i32.to_ne_bytes()); // dataoffset: no NULLs
        bytes[12..16].copy_from_slice(&element.to_u32().to_ne_bytes());
        bytes[16..20].copy_from_slice(&count.to_ne_bytes()); // dims[0]
        bytes[20..24].copy_from_slice(&1i32.to_ne_bytes()); // lbound[0]
        Some((pg_sys::Datum::from(buf.as_ptr()), *array_type))
    }

    /// The `i`-th value's copy, when each has one.
    pub fn copy(&self, i: usize) -> Option<pg_sys::Datum> {
        match self {
            Values::Copies(copies) => copies.get(i).copied(),
            Values::Array { .. } => None,
        }
    }
}

impl Drop for Values {
    fn drop(&mut self) {
        if let Values::Array { buf, .. } = self {
            let buf = std::mem::take(buf);
            if buf.capacity() * 8 <= SPARE_MAX {
                SPARE.with_borrow_mut(|spare| *spare = buf);
            }
        }
    }
}

/// Lets go of the kept buffer (a run ended).
pub fn release() {
    SPARE.with_borrow_mut(|spare| *spare = Vec::new());
}

fn bytes_of(buf: &mut [u64]) -> &mut [u8] {
    // SAFETY: the u64s' bytes, as many as they hold.
    unsafe { std::slice::from_raw_parts_mut(buf.as_mut_ptr().cast::<u8>(), buf.len() * 8) }
}
