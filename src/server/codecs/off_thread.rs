//! One call of thread-safe C code on a worker thread, so that the backend answers cancel,
//! `statement_timeout` and `pg_terminate_backend` while it runs: liblz4's
//! `LZ4_compress_default` and `LZ4_decompress_safe` and PostgreSQL's `pglz_decompress` (pure
//! C, no static state, no `elog`) on more than [`THRESHOLD`] bytes. Below it they run on the
//! backend as before: no copy, no thread. PostgreSQL's `pglz_compress` keeps its history in
//! static arrays and never comes here (its input is bounded instead, `mod.rs`).
//!
//! The rules:
//! - The worker makes no `pg_sys` call (pgrx panics on one off the main thread), no palloc,
//!   and touches no backend memory: it gets a copy of the input and an output buffer it owns
//!   (allocated fallibly by the backend), and gives them back through a channel. The backend
//!   copies the output into its result (a palloc'd `ResultBytea`, the lab's arena) once it
//!   arrives, a piece at a time with checks for cancel.
//! - The worker is spawned with every signal blocked (the backend blocks them all, spawns,
//!   restores its mask: the new thread inherits the blocked mask, so there is no window), so
//!   the backend's SIGINT, SIGTERM, SIGALRM and the rest are only ever delivered to the
//!   backend's own thread.
//! - The backend waits on the channel [`WAIT`] at a time and checks for interrupts between
//!   waits. On a cancel the ERROR unwinds through the wait: the receiver is dropped and the
//!   worker abandoned (detached); it ends its C call, finds nobody waiting and frees its own
//!   memory.
//! - A backend has at most one abandoned worker: the next call that needs a worker first
//!   waits for it to end (answering cancel while it waits).

use std::mem::MaybeUninit;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Mutex;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use compresslab_core::clock::thread_cpu_seconds;
use compresslab_core::error::{try_with_capacity, Result};
use compresslab_core::ticking::PIECE;
use compresslab_core::CodecError;

/// Bytes (of input for an encoder, of output for a decoder) above which a call runs on a
/// worker. At this size one call took at most 0.03 s CPU, 0.06 s wall at a load of 2.9 on
/// 2 CPUs (`scripts/bench/c_call_bounds.sh 16777216`: `LZ4_compress_default` 0.03 s,
/// `LZ4_decompress_safe` 0.01 s, `pglz_decompress` 0.02 s), well within a second of a cancel
/// even under load; below it the per-call cost of copies and a thread is not paid.
pub const THRESHOLD: usize = 16 << 20;

/// How long the backend waits for the worker between two checks for interrupts.
const WAIT: Duration = Duration::from_millis(10);

/// The worker a cancel left running, if any: waited for before the next one starts.
static ABANDONED: Mutex<Option<JoinHandle<()>>> = Mutex::new(None);

/// What a worker's call returned, and the wall and CPU seconds of the call on the worker.
pub struct Done<T> {
    pub value: T,
    pub wall: f64,
    pub cpu: f64,
}

/// Time to add to what the calling thread measured around calls made on workers, so that a
/// timing of them is the C call's alone: the worker's wall and CPU seconds in the call, less
/// the caller's own around it (copies, the thread's start, waiting). The lab adds it to its
/// figures (`Codec::take_time_elsewhere`).
#[derive(Debug, Default, Clone, Copy)]
pub struct Elsewhere {
    pub wall: f64,
    pub cpu: f64,
}

impl Elsewhere {
    /// Count one call: `caller` the (wall, CPU) seconds the caller spent around it.
    pub fn add<T>(&mut self, caller: (f64, f64), done: &Done<T>) {
        self.wall += done.wall - caller.0;
        self.cpu += done.cpu - caller.1;
    }

    /// The time counted so far, reset.
    pub fn take(&mut self) -> (f64, f64) {
        let Elsewhere { wall, cpu } = std::mem::take(self);
        (wall, cpu)
    }
}

/// Run `work` on a worker thread (see the module's rules: it must make no `pg_sys` call and
/// own all it touches) while this thread waits, calling `tick` (which checks for interrupts)
/// between waits of [`WAIT`]. A cancel raised in `tick` abandons the worker.
pub fn run<T: Send + 'static>(tick: &mut dyn FnMut(), work: impl FnOnce() -> T + Send + 'static) -> Result<Done<T>> {
    wait_for_abandoned(tick);
    let (sender, receiver) = mpsc::sync_channel(1);
    let handle = spawn_without_signals(move || {
        let (wall, cpu) = (Instant::now(), thread_cpu_seconds());
        let value = work();
        let done = Done { value, wall: wall.elapsed().as_secs_f64(), cpu: thread_cpu_seconds() - cpu };
        // Err when the backend stopped waiting: the result is dropped here, on this thread.
        let _ = sender.send(done);
    })?;
    let mut worker = Worker(Some(handle));
    loop {
        match receiver.recv_timeout(WAIT) {
            Ok(done) => {
                worker.join();
                return Ok(done);
            }
            Err(RecvTimeoutError::Timeout) => tick(),
            Err(RecvTimeoutError::Disconnected) => {
                worker.join();
                return Err(CodecError::invalid("the worker thread of a C call ended without a result"));
            }
        }
    }
}

/// A worker being waited for; dropped before it was joined (an ERROR unwinding), it becomes
/// the backend's abandoned worker.
struct Worker(Option<JoinHandle<()>>);

impl Worker {
    fn join(&mut self) {
        if let Some(handle) = self.0.take() {
            // The worker sends its result as its last act; a panic in it is its own.
            let _ = handle.join();
        }
    }

    fn finished(&self) -> bool {
        self.0.as_ref().is_none_or(JoinHandle::is_finished)
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        if let Some(handle) = self.0.take() {
            *ABANDONED.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(handle);
        }
    }
}

/// Wait for the worker a cancel abandoned, if one is still running, calling `tick` between
/// waits; cancelled meanwhile, it stays the abandoned one.
fn wait_for_abandoned(tick: &mut dyn FnMut()) {
    let Some(handle) = ABANDONED.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take() else {
        return;
    };
    let mut worker = Worker(Some(handle));
    while !worker.finished() {
        tick();
        std::thread::sleep(WAIT);
    }
    worker.join();
}

/// Spawn `f` on a new thread with every signal blocked in it.
fn spawn_without_signals(f: impl FnOnce() + Send + 'static) -> Result<JoinHandle<()>> {
    // SAFETY: sigset_t is plain data that sigfillset / pthread_sigmask fill in.
    let (mut all, mut old): (libc::sigset_t, libc::sigset_t) = unsafe { (std::mem::zeroed(), std::mem::zeroed()) };
    // SAFETY: pointers to sigset_t values we own; blocking every signal in this thread for the
    // spawn only (a signal arriving meanwhile stays pending and is delivered when the old mask
    // is restored below); the new thread inherits the mask in force when it is created.
    let blocked =
        unsafe { libc::sigfillset(&mut all) == 0 && libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old) == 0 };
    if !blocked {
        return Err(CodecError::invalid("could not block signals to start the worker thread of a C call"));
    }
    let spawned = std::thread::Builder::new().name("compresslab-c".into()).spawn(f);
    // SAFETY: restores the mask saved above.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut()) };
    spawned.map_err(|e| CodecError::out_of_memory(format!("could not start the worker thread of a C call: {e}")))
}

/// A worker's own copy of `src` followed by `spare` zero bytes, allocated fallibly and
/// filled a [`PIECE`] at a time with a `tick` between pieces.
pub fn copy_in(src: &[u8], spare: usize, tick: &mut dyn FnMut()) -> Result<Vec<u8>> {
    let mut copy = try_with_capacity(src.len() + spare, "a copy of the input for a C call")?;
    for (i, piece) in src.chunks(PIECE).enumerate() {
        if i > 0 {
            tick();
        }
        copy.extend_from_slice(piece);
    }
    copy.resize(src.len() + spare, 0);
    Ok(copy)
}

/// A worker's output buffer of `len` bytes, allocated fallibly and never touched here: the C
/// call only writes it.
pub fn output(len: usize) -> Result<Vec<u8>> {
    try_with_capacity(len, "the output of a C call")
}

/// Copy a worker's output into `dst` (the same length) a [`PIECE`] at a time with a `tick`
/// between pieces.
pub fn copy_out(dst: &mut [MaybeUninit<u8>], src: &[u8], tick: &mut dyn FnMut()) {
    assert_eq!(dst.len(), src.len(), "copy_out: lengths differ");
    for (i, (to, from)) in dst.chunks_mut(PIECE).zip(src.chunks(PIECE)).enumerate() {
        if i > 0 {
            tick();
        }
        // SAFETY: two pieces of the same length (the slices have the same length and are cut
        // alike), in different allocations.
        unsafe { std::ptr::copy_nonoverlapping(from.as_ptr(), to.as_mut_ptr().cast::<u8>(), from.len()) };
    }
}
