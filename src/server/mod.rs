//! What touches the server: its pages through the buffer manager, its WAL through its own
//! reader, SPI queries, files, the privilege checks, and its own C codecs. Nothing here knows
//! what a benchmark is.

pub mod activity;
pub mod c_codecs;
pub mod c_zstd;
pub mod files;
pub mod heap;
pub mod loaded;
pub mod names;
pub mod off_thread;
pub mod owner;
pub mod pages;
pub mod privileges;
pub mod relations;
pub mod rewrite;
pub mod sampling;
pub mod spi;
pub mod subtransaction;
pub mod versions;
pub mod wal;
pub mod wal_archive;

use compresslab_core::lab::Hooks;
use pgrx::prelude::*;

/// Check for cancel, `statement_timeout` and termination: an ERROR (or exit) if one is due.
pub fn check_interrupts() {
    check_for_interrupts!();
}

/// Whether an interrupt (cancel, timeout, termination, ...) is pending, without processing it:
/// the probe of code that must not raise, such as an allocator the C library calls
/// (`compresslab_core::ticking::cancel_pending`).
pub fn interrupt_pending() -> bool {
    // SAFETY: a sig_atomic_t the signal handlers set; read, never written here.
    unsafe { std::ptr::read_volatile(&raw const pg_sys::InterruptPending) != 0 }
}

/// Interrupt checks between slices and during long work (cancel, `statement_timeout`,
/// `pg_terminate_backend`), and progress as NOTICEs.
pub struct PgHooks;

impl Hooks for PgHooks {
    fn tick(&mut self) {
        check_interrupts();
    }
    fn progress(&mut self, what: &str) {
        notice!("compresslab: {what}");
    }
}
