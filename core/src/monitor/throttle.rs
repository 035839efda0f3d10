//! The continuous WAL view's cost bound: the worker spends at most `cap` of one core
//! (`compresslab.wal_monitor_cpu`; 1 or more: no bound, every image compressed). Over each
//! stretch of work it measures its CPU (all of it, decoding included) and the wall time; the
//! share of images it compresses next is what the stretch's leftover allows, and where even
//! decoding alone is over the bound it pauses.

/// The least share of images compressed: a sample is never empty while images pass.
pub const MIN_SHARE: f64 = 0.01;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Throttle {
    cap: f64,
    share: f64,
}

impl Throttle {
    pub fn new(cap: f64) -> Throttle {
        Throttle { cap, share: 1.0 }
    }

    /// The share of images to compress (each image by an independent draw).
    pub fn share(&self) -> f64 {
        self.share
    }

    /// Whether every image is compressed, none sampled.
    pub fn exact(&self) -> bool {
        self.cap >= 1.0 || !self.cap.is_finite()
    }

    /// After a stretch that took `cpu` seconds of CPU, `compress_cpu` of them compressing the
    /// images sampled at the current share, in `wall` seconds: the share for the next stretch,
    /// and the pause that keeps the stretch within the bound.
    pub fn after(&mut self, cpu: f64, compress_cpu: f64, wall: f64) -> (f64, f64) {
        if self.exact() {
            return (1.0, 0.0);
        }
        let cap = self.cap.max(0.0);
        let other = (cpu - compress_cpu).max(0.0);
        // what compressing every image would have cost, at the current share
        let full = compress_cpu.max(0.0) / self.share;
        let budget = cap * wall - other;
        self.share = if full <= 0.0 { 1.0 } else { (budget / full).clamp(MIN_SHARE, 1.0) };
        let pause = if cap > 0.0 { (cpu / cap - wall).max(0.0) } else { 0.0 };
        (self.share, pause)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_share_is_what_the_leftover_pays_for() {
        // 10% of a core; a 1 s stretch: 0.02 s decoding, 0.2 s compressing every image
        let mut t = Throttle::new(0.1);
        let (share, pause) = t.after(0.22, 0.2, 1.0);
        assert!((share - 0.4).abs() < 1e-12, "{share}");
        assert!((pause - 1.2).abs() < 1e-12, "{pause}");
        // at that share the next stretch's compressing costs 0.08 s: the share holds, no pause
        let (share, pause) = t.after(0.1, 0.08, 1.0);
        assert!((share - 0.4).abs() < 1e-12 && pause == 0.0, "{share} {pause}");
    }

    #[test]
    fn over_the_bound_by_decoding_alone_it_samples_least_and_pauses() {
        let mut t = Throttle::new(0.05);
        let (share, pause) = t.after(0.2, 0.1, 1.0);
        assert_eq!(share, MIN_SHARE);
        assert!((pause - 3.0).abs() < 1e-12, "{pause}");
    }

    #[test]
    fn a_whole_core_or_more_compresses_every_image() {
        let mut t = Throttle::new(1.0);
        assert!(t.exact());
        assert_eq!(t.after(5.0, 4.0, 1.0), (1.0, 0.0));
        // no image in the stretch: every image of the next
        let mut t = Throttle::new(0.1);
        assert_eq!(t.after(0.01, 0.0, 1.0).0, 1.0);
    }
}
