//! What touches the server, one room per concept (CONTRIBUTING.md draws them): the catalog
//! and SPI, the server's C codecs (as the core's `Codec`, so the lab can time them beside
//! ours), its WAL reader, a table's rows (sampled, or read by a heap scan), a recompress batch,
//! the one switch to a table's owner, its pages and files. The measuring itself is the core's.

pub mod activity;
pub mod catalog;
pub mod codecs;
pub mod files;
pub mod heap;
pub mod images;
pub mod owner;
pub mod pages;
pub mod rewrite;
pub mod sampling;
pub mod subtransaction;
pub mod toast;
pub mod wal;

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
