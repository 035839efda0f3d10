//! Time as the lab measures it: wall-clock seconds and the CPU seconds (user + system) of the
//! calling thread — the absolute CPU cost the full-page-writes thread asked for beside elapsed
//! time.
//!
//! CPU time is read with `clock_gettime(CLOCK_THREAD_CPUTIME_ID)`, the scheduler's exact
//! runtime of the thread in nanoseconds. `getrusage` reports the same total but, on kernels
//! without fine-grained accounting (this machine's), only advances in scheduler ticks (4 ms),
//! too coarse for one batch of 8 KB images.

use std::time::Instant;

/// CPU time (user + system) this thread has used, in seconds.
pub fn thread_cpu_seconds() -> f64 {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes a timespec we own; CLOCK_THREAD_CPUTIME_ID always exists on
    // Linux, and on failure the zero value stays.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    now.tv_sec as f64 + now.tv_nsec as f64 / 1e9
}

/// A timer over one region: wall and CPU seconds.
pub struct Timer {
    wall: Instant,
    cpu: f64,
}

impl Timer {
    pub fn start() -> Timer {
        Timer { cpu: thread_cpu_seconds(), wall: Instant::now() }
    }

    /// (wall seconds, CPU seconds) since [`Timer::start`].
    pub fn stop(self) -> (f64, f64) {
        (self.wall.elapsed().as_secs_f64(), (thread_cpu_seconds() - self.cpu).max(0.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_advances_with_work() {
        let timer = Timer::start();
        let before = thread_cpu_seconds();
        let mut x = 0u64;
        for i in 0..50_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        assert!(thread_cpu_seconds() > before);
        // Nanosecond resolution: a few microseconds of work already show.
        let start = thread_cpu_seconds();
        std::hint::black_box((0..2_000u64).map(|i| i.wrapping_mul(i)).sum::<u64>());
        let elapsed = thread_cpu_seconds() - start;
        assert!(elapsed > 0.0 && elapsed < 0.004, "{elapsed}");
        let (wall, cpu) = timer.stop();
        assert!(wall > 0.0 && cpu > 0.0);
    }
}
