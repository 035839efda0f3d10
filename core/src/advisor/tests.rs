use super::*;
use crate::pg_compression::{ToastCompression, WalCompression};
use crate::registry::Named;

fn options(pglz: f64, lz4: f64, zstd: f64) -> Vec<WalOption> {
    [("off", 0.0), ("pglz", pglz), ("lz4", lz4), ("zstd", zstd)]
        .iter()
        .map(|(s, p)| WalOption { setting: WalCompression::from_setting(s).unwrap(), saving_percent: *p })
        .collect()
}

#[test]
fn wal_rule() {
    assert_eq!(choose_wal(&options(3.0, 4.9, 4.0)).recommended.name(), "off");
    assert_eq!(choose_wal(&options(50.0, 48.0, 55.0)).recommended.name(), "lz4");
    assert_eq!(choose_wal(&options(30.0, 30.0, 40.0)).recommended.name(), "zstd");
    // the boundaries: exactly 5% is worth it; exactly 80% of zstd is lz4
    assert_eq!(choose_wal(&options(0.0, 5.0, 0.0)).recommended.name(), "lz4");
    assert_eq!(choose_wal(&options(0.0, 40.0, 50.0)).recommended.name(), "lz4");
    assert!(choose_wal(&options(0.0, 39.9, 50.0)).reason.contains("zstd saves 50.0%"));
}

#[test]
fn wal_rule_on_a_server_without_lz4_or_zstd_offers_what_it_has() {
    let only = |settings: &[&str], all: Vec<WalOption>| -> Vec<WalOption> {
        all.into_iter().filter(|o| settings.contains(&o.setting.name())).collect()
    };
    // without both: pglz, never a setting the server would refuse
    let no_lz4_zstd = only(&["off", "pglz"], options(20.0, 30.0, 40.0));
    assert_eq!(choose_wal(&no_lz4_zstd).recommended.name(), "pglz");
    assert!(choose_wal(&no_lz4_zstd).reason.contains("built with (pglz)"), "{}", choose_wal(&no_lz4_zstd).reason);
    // without zstd: lz4 only when it saves at least as much as pglz
    assert_eq!(choose_wal(&only(&["off", "pglz", "lz4"], options(20.0, 15.0, 40.0))).recommended.name(), "pglz");
    assert_eq!(choose_wal(&only(&["off", "pglz", "lz4"], options(20.0, 20.0, 40.0))).recommended.name(), "pglz");
    assert_eq!(choose_wal(&only(&["off", "pglz", "lz4"], options(20.0, 21.0, 40.0))).recommended.name(), "lz4");
    // and under 5% everywhere still off
    assert_eq!(choose_wal(&only(&["off", "pglz"], options(4.0, 30.0, 40.0))).recommended.name(), "off");
}

#[test]
fn toast_rule() {
    assert_eq!(choose_toast(1000, 980, 990).recommended, None, "2% is no change");
    assert_eq!(choose_toast(1000, 400, 420).recommended, Some(ToastCompression::Lz4));
    assert!(choose_toast(1000, 400, 420).reason.starts_with("pglz stores 4.7% fewer bytes than lz4 (under 10%)"));
    assert!(choose_toast(1000, 420, 400).reason.starts_with("pglz stores 5.0% more bytes than lz4: lz4 is smaller"));
    assert_eq!(choose_toast(1000, 300, 400).recommended, Some(ToastCompression::Pglz));
    assert_eq!(choose_toast(1000, 1000, 960).recommended, None, "4% is no change");
    assert_eq!(choose_toast(0, 0, 0).recommended, None);
    // values too small to be tried: stored with their headers, more than raw under both
    let small = choose_toast(1000, 1404, 1404);
    assert_eq!(small.recommended, None);
    assert!(small.reason.starts_with("not compressed: under the 2 kB threshold"), "{}", small.reason);
    assert!(!small.reason.contains('-'), "no negative saving: {}", small.reason);
}

#[test]
fn confidence_and_saving() {
    assert_eq!(confidence(5000, 7200.0), Confidence::High);
    assert_eq!(confidence(5000, 60.0), Confidence::Medium);
    assert_eq!(confidence(10, 7200.0), Confidence::Low);
    assert_eq!(per_day_confidence(5000, 1440.0), Confidence::Low);
    assert_eq!(per_day_confidence(5000, 7200.0), Confidence::High);
    assert_eq!(saving_percent(200, 50), 75.0);
    assert_eq!(saving_percent(0, 50), 0.0);
}

#[test]
fn a_bulk_load_is_most_of_the_rows_inserted_within_a_day() {
    let loaded = Inserted { rows: 1_000_000.0, held: 1_000_000.0 };
    assert!(bulk_load(loaded, 1440.0), "pagila after 24 minutes: its load");
    assert!(bulk_load(Inserted { rows: 500.0, held: 1000.0 }, 7200.0), "half, the boundary");
    assert!(!bulk_load(Inserted { rows: 499.0, held: 1000.0 }, 7200.0));
    assert!(!bulk_load(loaded, 86400.0 * 3.0), "inserting steadily for days");
    assert!(!bulk_load(Inserted { rows: 0.0, held: 0.0 }, 60.0), "no table");
    assert!(bulk_load_words(loaded, 1440.0).unwrap().contains("dominated by a bulk load (1000000 rows inserted"));
}

/// Every branch of the TOAST rule says the figure the rule decided on, on the side of the
/// threshold the decision is: the words cannot contradict the figure.
#[test]
fn the_toast_rules_words_agree_with_its_figure() {
    let figure = |reason: &str| -> f64 {
        reason.split_whitespace().nth(2).and_then(|w| w.trim_end_matches('%').parse().ok()).unwrap()
    };
    // lz4 against pglz's 1000 bytes: from far smaller to far larger, across the 10% edge
    for lz4 in (500..=1500).step_by(7).chain([1110, 1111, 1112, 1100, 1099]) {
        let d = choose_toast(100_000, 1000, lz4);
        let edge = 100.0 * (lz4 - 1000) as f64 / lz4 as f64;
        assert!(d.reason.starts_with("pglz stores "), "{}", d.reason);
        if edge >= PGLZ_EDGE_PERCENT {
            assert_eq!(d.recommended, Some(ToastCompression::Pglz), "{lz4}");
            assert!(
                d.reason.contains("fewer bytes than lz4 (10% or more)") && figure(&d.reason) >= 10.0,
                "{}",
                d.reason
            );
        } else if edge >= 0.0 {
            assert_eq!(d.recommended, Some(ToastCompression::Lz4), "{lz4}");
            assert!(d.reason.contains("fewer bytes than lz4 (under 10%)") && figure(&d.reason) < 10.0, "{}", d.reason);
        } else {
            assert_eq!(d.recommended, Some(ToastCompression::Lz4), "{lz4}");
            assert!(
                d.reason.contains("more bytes than lz4: lz4 is smaller") && figure(&d.reason) > 0.0,
                "{}",
                d.reason
            );
        }
    }
    // the two notes: 10.6% and 11.6% apart, each now on its side
    assert!(choose_toast(100_000, 1000, 1106).reason.starts_with("pglz stores 9.5% fewer bytes than lz4 (under 10%)"));
    assert!(choose_toast(100_000, 1000, 884).reason.starts_with("pglz stores 13.1% more bytes than lz4"));
}
