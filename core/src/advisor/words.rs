//! Figures in words for the advice's `basis` and `note`, and the rates they are scaled by.

/// Bytes in a GiB: the advice's "per GB".
pub const GB: f64 = (1u64 << 30) as f64;

/// A count over a period of seconds, as the server's statistics observed it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Rate {
    pub amount: f64,
    pub seconds: f64,
}

impl Rate {
    /// The amount per day, if the period is known.
    pub fn per_day(&self) -> Option<f64> {
        (self.seconds > 0.0).then(|| self.amount / self.seconds * 86400.0)
    }
}

/// CPU seconds per GiB of data at `mbps` (the lab's MB/s: 10^6 bytes a second).
pub fn seconds_per_gb(mbps: f64) -> Option<f64> {
    (mbps > 0.0).then(|| GB / (mbps * 1e6))
}

/// A period in words: seconds under two minutes, minutes under two hours, hours under two
/// days, else days.
pub fn period(seconds: f64) -> String {
    if seconds < 120.0 {
        format!("{seconds:.0} s")
    } else if seconds < 7200.0 {
        format!("{:.0} min", seconds / 60.0)
    } else if seconds < 172800.0 {
        format!("{:.1} h", seconds / 3600.0)
    } else {
        format!("{:.1} days", seconds / 86400.0)
    }
}

/// A byte count in words, in the unit that keeps it readable (bytes under 10 kB, kB up to
/// 10 MB, then MB, GB): never "0 kB" for bytes there are.
pub fn size(bytes: f64) -> String {
    if bytes < 10.0 * 1024.0 {
        format!("{bytes:.0} bytes")
    } else if bytes < 10.0 * 1024.0 * 1024.0 {
        format!("{:.0} kB", bytes / 1024.0)
    } else if bytes < 10.0 * GB {
        format!("{:.0} MB", bytes / (1024.0 * 1024.0))
    } else {
        format!("{:.1} GB", bytes / GB)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_per_gb_counts_gib_of_data_at_mb_per_second() {
        // 1 GiB at 1,000 MB/s (10^9 bytes a second) takes 1.0737 s, not 1.024 s
        assert!((seconds_per_gb(1000.0).unwrap() - 1.073741824).abs() < 1e-9);
        assert_eq!(seconds_per_gb(0.0), None);
    }

    #[test]
    fn rates_periods_and_sizes() {
        assert_eq!(Rate { amount: 100.0, seconds: 3600.0 }.per_day(), Some(2400.0));
        assert_eq!(Rate { amount: 100.0, seconds: 0.0 }.per_day(), None);
        assert_eq!(period(3.5), "4 s");
        assert_eq!(period(119.0), "119 s");
        assert_eq!(period(1440.0), "24 min");
        assert_eq!(period(7200.0), "2.0 h");
        assert_eq!(period(3.0 * 86400.0), "3.0 days");
        assert_eq!(size(0.0), "0 bytes");
        assert_eq!(size(300.0), "300 bytes");
        assert_eq!(size(10.0 * 1024.0), "10 kB");
        assert_eq!(size(300.0 * 1024.0), "300 kB");
        assert_eq!(size(64.0 * 1024.0 * 1024.0), "64 MB");
        assert_eq!(size(20.0 * GB), "20.0 GB");
    }
}
