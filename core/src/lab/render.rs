//! Rendering bench rows for people: a markdown table in the spirit of lzbench's output, and an
//! SVG chart of compression ratio against speed.

use super::checksums::ChecksumRow;
use super::harness::BenchRow;
use crate::sql_text::breaks_lines;

/// Text from a row (a source or method name may be any table or column name) as one markdown
/// table cell: a line break would end the row and start a heading, `|` a new cell, and `<`,
/// `>`, `&` would reach a page rendered as HTML as markup, so each is written as an escape.
fn cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '|' => out.push_str("\\|"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            c if breaks_lines(c) => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Text as XML character data or an attribute value: markup escaped, and control characters
/// (which XML 1.0 forbids, so that one would make the whole chart unreadable) as spaces.
fn xml_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            c if breaks_lines(c) => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

fn slice_label(slice_size: i32) -> String {
    match slice_size {
        0 => "whole".to_string(),
        n if n % 1024 == 0 => format!("{} KB", n / 1024),
        n => format!("{n} B"),
    }
}

fn method_label(row: &BenchRow) -> String {
    match row.level {
        Some(level) => format!("{} {level}", row.method),
        None => row.method.clone(),
    }
}

/// One markdown table of codec rows: speed (median and best), ratio and sizes. The ratio is
/// raw / stored bytes (2.0 = half the size), the inverse of lzbench's compressed/original
/// percentage; a note under the table says so.
pub fn markdown(rows: &[BenchRow]) -> String {
    let mut out = String::from(
        "| source | method | slice | compress MB/s (best) | decompress MB/s (best) | ratio | raw → stored bytes | raw slices | CPU s (c/d) |\n\
         |---|---|---|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in rows {
        out.push_str(&format!(
            "| {} | {} | {} | {:.1} ({:.1}) | {} | {:.3} | {} → {} | {}/{} | {:.3}/{:.3}{} |\n",
            cell(&r.source),
            cell(&method_label(r)),
            slice_label(r.slice_size),
            r.compress_mbps,
            r.compress_mbps_best,
            match (r.decompress_mbps, r.decompress_mbps_best) {
                (Some(median), Some(best)) => format!("{median:.1} ({best:.1})"),
                _ => "– (all raw)".to_string(),
            },
            r.ratio,
            r.raw_bytes,
            r.stored_bytes,
            r.raw_slices,
            r.slices,
            r.compress_cpu_seconds,
            r.decompress_cpu_seconds,
            if r.busy { " busy" } else { "" },
        ));
    }
    out.push_str("\nratio = raw bytes / stored bytes (lzbench prints the inverse, stored/raw, as a percentage).");
    // On the same line, so that a table has as many lines however busy the machine was.
    if rows.iter().any(|r| r.busy) {
        out.push_str(
            " busy: wall time exceeded 1.5× the CPU time; the machine was busy and the speeds (wall-clock) understate the CPU-time rate.",
        );
    }
    out.push('\n');
    out
}

/// One markdown table of checksum rows: speed (median and best) and ns per byte.
pub fn checksum_markdown(rows: &[ChecksumRow]) -> String {
    let mut out = String::from(
        "| source | implementation | family | slice | MB/s (best) | ns/byte | raw bytes | CPU s |\n\
         |---|---|---|---|---:|---:|---:|---:|\n",
    );
    for r in rows {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {:.1} ({:.1}) | {:.3} | {} | {:.3} |\n",
            cell(&r.source),
            cell(&r.implementation),
            cell(&r.family),
            slice_label(r.slice_size),
            r.mbps,
            r.mbps_best,
            r.ns_per_byte,
            r.raw_bytes,
            r.cpu_seconds,
        ));
    }
    out
}

/// An SVG scatter chart of compression ratio against compression speed (log scale), one point
/// per method and level — the picture lzbench users look at. Points of the same method share
/// a colour; each is labelled with its method and level.
pub fn svg_chart(rows: &[BenchRow], title: &str) -> String {
    const W: f64 = 900.0;
    const H: f64 = 560.0;
    const LEFT: f64 = 80.0;
    const RIGHT: f64 = 200.0;
    const TOP: f64 = 50.0;
    const BOTTOM: f64 = 60.0;
    const PALETTE: &[&str] =
        &["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];
    let points: Vec<&BenchRow> = rows.iter().filter(|r| r.compress_mbps.is_finite() && r.compress_mbps > 0.0).collect();
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" viewBox=\"0 0 {W} {H}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{}\" y=\"28\" font-size=\"16\" text-anchor=\"middle\">{}</text>\n",
        (W - RIGHT + LEFT) / 2.0,
        xml_text(title)
    );
    if points.is_empty() {
        svg.push_str("<text x=\"40\" y=\"100\">no results</text>\n</svg>\n");
        return svg;
    }
    let (min_speed, max_speed) =
        points.iter().fold((f64::MAX, 0.0f64), |(lo, hi), r| (lo.min(r.compress_mbps), hi.max(r.compress_mbps)));
    let max_ratio = points.iter().fold(1.0f64, |m, r| m.max(r.ratio));
    let (x_lo, x_hi) = ((min_speed.log10()).floor(), (max_speed.log10()).ceil().max(min_speed.log10().floor() + 1.0));
    let y_hi = (max_ratio * 1.1).ceil();
    let plot_w = W - LEFT - RIGHT;
    let plot_h = H - TOP - BOTTOM;
    let x = |speed: f64| LEFT + (speed.log10() - x_lo) / (x_hi - x_lo) * plot_w;
    let y = |ratio: f64| TOP + plot_h - (ratio / y_hi) * plot_h;
    svg.push_str(&format!(
        "<rect x=\"{LEFT}\" y=\"{TOP}\" width=\"{plot_w}\" height=\"{plot_h}\" fill=\"none\" stroke=\"#333\"/>\n"
    ));
    let mut decade = x_lo;
    while decade <= x_hi {
        let px = x(10f64.powf(decade));
        svg.push_str(&format!(
            "<line x1=\"{px:.1}\" y1=\"{TOP}\" x2=\"{px:.1}\" y2=\"{}\" stroke=\"#ddd\"/><text x=\"{px:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
            TOP + plot_h,
            TOP + plot_h + 18.0,
            10f64.powf(decade)
        ));
        decade += 1.0;
    }
    let steps = 5;
    for i in 0..=steps {
        let ratio = y_hi * i as f64 / steps as f64;
        let py = y(ratio);
        svg.push_str(&format!(
            "<line x1=\"{LEFT}\" y1=\"{py:.1}\" x2=\"{}\" y2=\"{py:.1}\" stroke=\"#eee\"/><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{ratio:.1}</text>\n",
            LEFT + plot_w,
            LEFT - 6.0,
            py + 4.0
        ));
    }
    svg.push_str(&format!(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">compression speed, MB/s (log scale)</text>\n\
         <text transform=\"translate(22 {}) rotate(-90)\" text-anchor=\"middle\">compression ratio</text>\n",
        LEFT + plot_w / 2.0,
        H - 18.0,
        TOP + plot_h / 2.0
    ));
    let mut methods: Vec<&str> = points.iter().map(|r| r.method.as_str()).collect();
    methods.dedup();
    methods.sort();
    methods.dedup();
    let mut by_speed = points.clone();
    by_speed.sort_by(|a, b| a.compress_mbps.total_cmp(&b.compress_mbps));
    for (i, r) in by_speed.iter().enumerate() {
        let colour = PALETTE[methods.iter().position(|m| *m == r.method).unwrap() % PALETTE.len()];
        let (px, py) = (x(r.compress_mbps), y(r.ratio));
        // Neighbours in speed alternate their labels above and below, so that close points
        // (a codec and its C twin) stay readable.
        let label_dy = if i % 2 == 0 { -7.0 } else { 15.0 };
        svg.push_str(&format!(
            "<circle cx=\"{px:.1}\" cy=\"{py:.1}\" r=\"5\" fill=\"{colour}\"><title>{} {} ({}): {:.1} MB/s, ratio {:.3}</title></circle>\
             <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\">{}</text>\n",
            xml_text(&r.source),
            xml_text(&method_label(r)),
            slice_label(r.slice_size),
            r.compress_mbps,
            r.ratio,
            px + 7.0,
            py + label_dy,
            xml_text(&method_label(r))
        ));
    }
    for (i, m) in methods.iter().enumerate() {
        let ly = TOP + 10.0 + i as f64 * 18.0;
        svg.push_str(&format!(
            "<circle cx=\"{}\" cy=\"{ly:.1}\" r=\"5\" fill=\"{}\"/><text x=\"{}\" y=\"{:.1}\">{}</text>\n",
            W - RIGHT + 20.0,
            PALETTE[i % PALETTE.len()],
            W - RIGHT + 30.0,
            ly + 4.0,
            xml_text(m)
        ));
    }
    svg.push_str("</svg>\n");
    svg
}

#[cfg(test)]
mod tests {
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
        let mut json =
            serde_json::to_value(bench_codec(&p, 0, codec("lz4").as_mut(), 1, &mut NoHooks).unwrap()).unwrap();
        json.as_object_mut().unwrap().remove("busy");
        assert!(!serde_json::from_value::<BenchRow>(json).unwrap().busy);
    }

    #[test]
    fn one_point_per_row_and_a_legend_per_method() {
        let rows = rows("text <1>", 40_000, &["zstd:1", "zstd:9", "lz4", "pglz"]);
        let svg = svg_chart(&rows, "ratio vs speed");
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<title>").count(), 4);
        assert_eq!(svg.matches("r=\"5\"").count(), 4 + 3, "4 points and 3 legend entries");
        assert!(svg.contains("text &lt;1&gt;"), "labels are escaped");
        assert!(svg.contains(">zstd 9<"));
        assert!(svg_chart(&[], "empty").contains("no results"));
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
}
