use super::*;
use crate::lab::codecs::tests::codec;
use crate::lab::harness::{bench_codec, NoHooks};
use crate::lab::payload::{synthetic, Payload, SyntheticKind};

fn rows(source: &str, size: usize, methods: &[&str]) -> Vec<BenchRow> {
    let p = Payload::new(source, vec![synthetic(SyntheticKind::Text, size, 3).unwrap()]);
    methods.iter().map(|m| bench_codec(&p, 8192, codec(m).as_mut(), 1, &mut NoHooks).unwrap()).collect()
}

#[test]
fn markdown_has_a_row_per_result_and_survives_json() {
    let rows = rows("text", 30_000, &["zstd:5", "lz4"]);
    let table = markdown(&rows);
    // header, rule, two rows, blank, the note (which says so if a row was busy)
    assert_eq!(table.lines().count(), 6);
    assert!(table.contains("ratio = raw bytes / stored bytes"));
    assert!(table.contains("| text | zstd 5 | 8 KB |"), "{table}");
    assert!(table.contains("| text | lz4 | 8 KB |"), "{table}");
    let json = serde_json::to_string(&rows).unwrap();
    let back: Vec<BenchRow> = serde_json::from_str(&json).unwrap();
    for (b, r) in back.iter().zip(&rows) {
        assert_eq!((&b.method, b.level, b.slices, b.stored_bytes), (&r.method, r.level, r.slices, r.stored_bytes));
        assert!((b.compress_ns_per_byte - r.compress_ns_per_byte).abs() < 1e-9);
    }
    assert_eq!(markdown(&back), table);
}

#[test]
fn all_raw_rows_show_no_decompression_speed_and_busy_rows_say_so() {
    let p = Payload::new("random", vec![synthetic(SyntheticKind::Random, 9_000, 1).unwrap()]);
    let mut row = bench_codec(&p, 2048, codec("pglz").as_mut(), 1, &mut NoHooks).unwrap();
    row.busy = true;
    let table = markdown(&[row]);
    assert!(table.contains("| – (all raw) |"), "{table}");
    assert!(table.contains(" busy |") && table.contains("percentage). busy: wall time exceeded 1.5×"), "{table}");
    assert_eq!(table.lines().count(), 5, "{table}");
    // Older JSON without the busy column still reads.
    let mut json = serde_json::to_value(bench_codec(&p, 0, codec("lz4").as_mut(), 1, &mut NoHooks).unwrap()).unwrap();
    json.as_object_mut().unwrap().remove("busy");
    assert!(!serde_json::from_value::<BenchRow>(json).unwrap().busy);
}

/// The point labels of a chart: text and box, read back from the SVG.
fn labels(svg: &str) -> Vec<(String, [f64; 4])> {
    svg.split("<text class=\"label\" x=\"")
        .skip(1)
        .map(|rest| {
            let (x, rest) = rest.split_once("\" y=\"").unwrap();
            let (y, rest) = rest.split_once('"').unwrap();
            let text = rest.split_once('>').unwrap().1.split_once("</text>").unwrap().0;
            let text = text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&");
            let b = label_box(&text, x.parse().unwrap(), y.parse().unwrap());
            (text, b)
        })
        .collect()
}

/// `methods` measured on each of `sources`, the speeds and ratios then set close together
/// (every source within 4% of the others for the same method): a crowded chart.
fn crowded(sources: &[&str], methods: &[&str]) -> Vec<BenchRow> {
    // the server's routines run only inside the server: ours measured, named as theirs
    let ours: Vec<&str> = methods.iter().map(|m| m.trim_start_matches("server_")).collect();
    let mut base = rows("text", 20_000, &ours);
    for (row, method) in base.iter_mut().zip(methods) {
        if method.starts_with("server_") {
            row.method = format!("server_{}", row.method);
        }
    }
    let mut out = Vec::new();
    for (s, source) in sources.iter().enumerate() {
        for (m, row) in base.iter().enumerate() {
            let mut r = row.clone();
            r.source = source.to_string();
            r.compress_mbps = 100.0 * (1.0 + m as f64 * 0.35) * (1.0 + 0.02 * s as f64);
            r.ratio = 2.0 + 0.1 * (m % 3) as f64 + 0.03 * s as f64;
            out.push(r);
        }
    }
    out
}

#[test]
fn a_shape_and_a_legend_entry_per_source_a_colour_per_method() {
    let methods = ["server_pglz", "pglz", "server_lz4", "lz4", "server_zstd:1", "zstd:1", "zstd:9"];
    let plotted = crowded(&["public.orders", "public.events", "public.blobs"], &methods);
    let svg = svg_chart(&plotted, "ratio vs speed");
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert_eq!(svg.matches("<title>").count(), 21, "a point per row");
    assert_eq!(svg.matches("class=\"marker\"").count(), 21 + 3, "21 points and a shape per source");
    assert_eq!(svg.matches("class=\"legend-source\"").count(), 3);
    for source in ["public.orders", "public.events", "public.blobs"] {
        assert!(svg.contains(&format!("class=\"legend-source\" x=\"{}\" y=\"", 960.0 - 250.0 + 38.0)), "{svg}");
        assert!(svg.contains(&format!(">{source}</text>")), "{source}");
    }
    assert_eq!(svg.matches("class=\"legend-method\"").count(), 6, "zstd 1 and zstd 9 share a colour");
    // a long source name is shortened to end inside the image (12 px font)
    let long = "pgbench_accounts pages (hole removed)";
    let svg_long = svg_chart(&crowded(&[long], &methods), "ratio vs speed");
    let shown = svg_long.split("class=\"legend-source\" x=\"").nth(1).unwrap();
    let (x, rest) = shown.split_once('"').unwrap();
    let text = rest.split_once('>').unwrap().1.split_once("</text>").unwrap().0;
    assert!(text.ends_with('…') && text.len() < long.len(), "{text}");
    assert!(x.parse::<f64>().unwrap() + text_width(text, 12.0) <= 960.0, "{x} {text}");
    // the sources' points are three shapes: a circle, a square and a triangle
    assert_eq!(svg.matches("<circle class=\"marker\"").count(), 7 + 1);
    assert_eq!(svg.matches("<rect class=\"marker\"").count(), 7 + 1);
    assert_eq!(svg.matches("<polygon class=\"marker\"").count(), 7 + 1);
    assert!(svg.contains("server_*: the server's own C routines"), "a line says what server_* is");
    assert!(!svg_chart(&rows("text", 20_000, &["lz4"]), "t").contains("server_*"), "only when plotted");
    assert!(svg_chart(&[], "empty").contains("no results"));
}

#[test]
fn no_two_labels_overlap_nor_cover_a_point() {
    let methods = ["server_pglz", "pglz", "pglz_fast", "server_lz4", "lz4", "server_zstd:1", "zstd:1", "zstd:9"];
    let rows = crowded(&["public.orders", "public.events", "public.blobs"], &methods);
    let svg = svg_chart(&rows, "crowded");
    if let Ok(path) = std::env::var("COMPRESSLAB_CHART_OUT") {
        std::fs::write(path, &svg).unwrap();
    }
    let placed = labels(&svg);
    let left_out = svg
        .split_once(" label(s) left out")
        .map_or(0, |(before, _)| before.rsplit('>').next().unwrap().parse::<usize>().unwrap());
    // a label per method and level (the sources' points lie together here), none left out
    assert_eq!((placed.len(), left_out), (methods.len(), 0), "{svg}");
    let mut texts: Vec<&str> = placed.iter().map(|(t, _)| t.as_str()).collect();
    texts.sort();
    texts.dedup();
    assert_eq!(texts.len(), methods.len());
    for (i, (a, box_a)) in placed.iter().enumerate() {
        for (b, box_b) in &placed[i + 1..] {
            assert!(!overlap(box_a, box_b), "{a} {box_a:?} overlaps {b} {box_b:?}");
        }
        assert!(box_a[0] >= 80.0 && box_a[2] <= 960.0 - 250.0, "{a} {box_a:?} inside the plot");
    }
    // every label is a method's, and stays off the markers (cx, cy of each circle)
    for circle in svg.split("<circle class=\"marker\" cx=\"").skip(1) {
        let (cx, rest) = circle.split_once("\" cy=\"").unwrap();
        let cy = rest.split_once('"').unwrap().0;
        let (cx, cy): (f64, f64) = (cx.parse().unwrap(), cy.parse().unwrap());
        let point = [cx - 5.0, cy - 5.0, cx + 5.0, cy + 5.0];
        assert!(placed.iter().all(|(_, b)| !overlap(b, &point)), "a label over the point at {cx}, {cy}");
    }
}

#[test]
fn text_width_is_estimated_wide_enough() {
    // DejaVu Sans at 10 px: "server_zstd 1" is about 70 px wide; the estimate must not be less
    assert!(text_width("server_zstd 1", 10.0) >= 70.0);
    let b = label_box("lz4", 10.0, 20.0);
    assert_eq!((b[0], b[1], b[3]), (10.0, 10.0, 23.0));
    assert!((b[2] - (10.0 + 3.0 * 6.2)).abs() < 1e-9);
}

const HOSTILE: &str = "t|x\n# heading\r<script>alert(1)</script> & \\| a\u{2028}b\u{85}c\u{1}d\u{7f}\"";

#[test]
fn hostile_names_stay_in_their_cell() {
    let mut rows = rows(HOSTILE, 20_000, &["lz4"]);
    rows[0].method = "m|\n## x".to_string();
    let table = markdown(&rows);
    // header, rule, one row, blank, note: a name cannot add a line
    assert_eq!(table.lines().count(), 5, "{table}");
    let row = table.lines().nth(2).unwrap();
    // Nine cells: ten pipes that are not escaped.
    let unescaped = row
        .char_indices()
        .filter(|&(i, c)| c == '|' && row[..i].chars().rev().take_while(|&b| b == '\\').count() % 2 == 0);
    assert_eq!(unescaped.count(), 10, "{row}");
    assert!(!table.contains('<') && !table.contains('\r') && !table.contains('\u{2028}'), "{table}");
    assert!(row.contains("&lt;script&gt;") && row.contains(" &amp; \\\\\\| a b c d "), "{row}");
    assert!(row.starts_with("| t\\|x # heading "), "{row}");
    let crc = ChecksumRow {
        source: HOSTILE.to_string(),
        implementation: "crc32c".to_string(),
        family: "crc32c".to_string(),
        slice_size: 8192,
        slices: 1,
        raw_bytes: 8192,
        mbps: 1.0,
        mbps_best: 1.0,
        ns_per_byte: 1.0,
        wall_seconds: 1.0,
        cpu_seconds: 1.0,
        iterations: 1,
    };
    let table = checksum_markdown(&[crc]);
    assert_eq!(table.lines().count(), 3, "{table}");
    assert!(!table.contains("<script>"), "{table}");
}

#[test]
fn hostile_names_make_well_formed_svg() {
    let rows = rows(HOSTILE, 20_000, &["lz4", "zstd:1"]);
    let svg = svg_chart(&rows, HOSTILE);
    assert!(!svg.contains("<script>") && !svg.contains("\u{1}") && !svg.contains("\u{7f}"), "{svg}");
    assert!(svg.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; \\| a b c d &quot;"), "{svg}");
    // Every element opened is closed: as many '<' as '>'.
    assert_eq!(svg.matches('<').count(), svg.matches('>').count());
}

fn bar(column: &str, method: &str, bytes: f64, interval: Option<(f64, f64)>) -> StoredBar {
    StoredBar {
        column: column.into(),
        method: method.into(),
        stored_bytes: bytes,
        stored_bytes_low: interval.map(|i| i.0),
        stored_bytes_high: interval.map(|i| i.1),
    }
}

#[test]
fn stored_bars_a_group_per_column_a_whisker_per_interval() {
    let bars = [
        bar("public.orders.items", "pglz", 20e6, Some((19.5e6, 20.5e6))),
        bar("public.orders.items", "lz4", 21e6, Some((20.4e6, 21.6e6))),
        bar("public.orders.note", "lz4", 8e6, None),
        bar("public.orders.note", "pglz", 8.1e6, Some((8.1e6, 8.1e6))),
    ];
    let svg = svg_stored_chart(&bars, "stored bytes", "caption words");
    assert_eq!(svg.matches("class=\"bar\"").count(), 4, "a bar each: {svg}");
    // a whisker only where the interval has a width
    assert_eq!(svg.matches("class=\"interval\"").count(), 3, "{svg}");
    assert!(svg.contains("public.orders.items: 19.1 MB with pglz (95% interval 18.6 MB..19.6 MB)"), "{svg}");
    assert_eq!(svg.matches("class=\"column\"").count(), 2);
    // ticks of 5 MB up to 25 MB, past the widest whisker (21.6e6 bytes: 20.6 MB)
    assert!(svg.contains(">5 MB<") && svg.contains(">25 MB<") && !svg.contains(">30 MB<"), "{svg}");
    assert!(svg.contains("caption words"));
    assert_eq!(svg.matches('<').count(), svg.matches('>').count());
    assert!(svg_stored_chart(&[], "t", "").contains("no results"));
}

#[test]
fn hostile_column_names_make_well_formed_stored_charts() {
    let svg = svg_stored_chart(&[bar(HOSTILE, HOSTILE, 1e6, Some((0.9e6, 1.1e6)))], HOSTILE, HOSTILE);
    assert!(!svg.contains("<script>") && !svg.contains("\u{1}") && !svg.contains("\u{7f}"), "{svg}");
    assert_eq!(svg.matches('<').count(), svg.matches('>').count());
}
