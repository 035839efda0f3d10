//! Values as TOAST stores them: a stored varlena's method, its sizes and whether it is a pointer
//! to the TOAST table, and its bytes once detoasted.

use compresslab_core::pg_compression::ToastCompression;
use compresslab_core::scenarios::toast::TOAST_TUPLE_THRESHOLD;
use compresslab_core::ticking;
use pgrx::{pg_sys, PgRelation};

use crate::errors::OrRaise;

/// The compression method of a stored varlena, None when it is not compressed.
pub fn compression_method(datum: pg_sys::Datum) -> Option<ToastCompression> {
    // SAFETY: a non-NULL varlena of a tuple as stored; the server's reading of its method (what
    // pg_column_compression returns) reads its header (and, for a TOAST pointer, the pointer) only.
    match unsafe { pg_sys::toast_get_compression_id(datum.cast_mut_ptr()) } {
        pg_sys::ToastCompressionId::TOAST_PGLZ_COMPRESSION_ID => Some(ToastCompression::Pglz),
        pg_sys::ToastCompressionId::TOAST_LZ4_COMPRESSION_ID => Some(ToastCompression::Lz4),
        _ => None,
    }
}

/// A varlena datum as stored: its data bytes once detoasted, `pg_column_size`, and whether it
/// is a pointer to the TOAST table.
pub fn stored_varlena(datum: pg_sys::Datum) -> (usize, usize, bool) {
    let (external, size) = stored_form(datum);
    // SAFETY: the datum is a non-NULL varlena of the tuple as stored (a TOAST pointer stays a
    // pointer); only its first byte and its header (or pointer) are read.
    let (first, raw) = unsafe { (*(datum.cast_mut_ptr::<u8>()), pg_sys::toast_raw_datum_size(datum)) };
    // an external pointer's raw size counts a 4-byte header; another odd first byte: a 1-byte
    // header; else a 4-byte one (little-endian varlena headers)
    let header = if !external && first & 0x01 == 0x01 { 1 } else { 4 };
    (raw.saturating_sub(header), size, external)
}

/// The bytes of a varlena datum after detoasting (decompressed, fetched out of line), copied
/// into a buffer allocated fallibly (a huge value is an ERROR, never an abort), a piece at a
/// time with a cancel check between pieces.
pub fn varlena_bytes(datum: pg_sys::Datum) -> Vec<u8> {
    with_varlena_bytes(datum, |bytes| ticking::try_copy(bytes, "a value read", &mut super::check_interrupts)).or_raise()
}

/// `f` on the payload of a varlena datum (bytea, text or any other variable-length type),
/// detoasted if need be; a detoasted copy is freed once `f` returns.
pub fn with_varlena_bytes<T>(datum: pg_sys::Datum, f: impl FnOnce(&[u8]) -> T) -> T {
    let original = datum.cast_mut_ptr::<pg_sys::varlena>();
    // SAFETY: the datum is a varlena; pg_detoast_datum_packed returns it unchanged, or a plain
    // (possibly short-header) copy in palloc'd memory that we own and free after `f` (which
    // cannot keep the borrowed slice).
    unsafe {
        let plain = pg_sys::pg_detoast_datum_packed(original);
        let result = f(pgrx::varlena::varlena_to_byte_slice(plain));
        if plain != original {
            pg_sys::pfree(plain.cast());
        }
        result
    }
}

/// Whether a stored value is a pointer to the TOAST table, and its `pg_column_size`.
pub fn stored_form(datum: pg_sys::Datum) -> (bool, usize) {
    // SAFETY: a non-NULL varlena as the table stores it; only its header (and, for a
    // pointer, the pointer) is read.
    unsafe { (*(datum.cast_mut_ptr::<u8>()) == 0x01, pg_sys::toast_datum_size(datum)) }
}

/// The table's `toast_tuple_target` (TOAST compresses a row's values until it fits in it): the
/// reloption, or its default (`TOAST_TUPLE_TARGET`, 2032 bytes, as `TOAST_TUPLE_THRESHOLD`).
pub fn tuple_target(rel: &PgRelation) -> usize {
    // SAFETY: rd_options of an open table or materialized view is NULL or its StdRdOptions,
    // whose toast_tuple_target the reloption keeps between 128 and 8160.
    unsafe {
        let options = rel.rd_options as *const pg_sys::StdRdOptions;
        if options.is_null() {
            TOAST_TUPLE_THRESHOLD
        } else {
            (*options).toast_tuple_target.max(0) as usize
        }
    }
}
