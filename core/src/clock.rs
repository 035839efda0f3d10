//! Time as the lab measures it: wall-clock seconds and the CPU seconds (user + system) of the
//! calling thread, from `getrusage(RUSAGE_THREAD)` — the absolute CPU cost the full-page-writes
//! thread asked for beside elapsed time.

use std::time::Instant;

/// CPU time (user + system) this thread has used, in seconds.
pub fn thread_cpu_seconds() -> f64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a complete rusage into the zeroed buffer we own; RUSAGE_THREAD
    // cannot fail on Linux, and a zeroed rusage is a valid value anyway.
    let usage = unsafe {
        libc::getrusage(libc::RUSAGE_THREAD, usage.as_mut_ptr());
        usage.assume_init()
    };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
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
        let (wall, cpu) = timer.stop();
        assert!(wall > 0.0 && cpu > 0.0);
    }
}
