//! Rendering bench rows for people: a markdown table in the spirit of lzbench's output, an SVG
//! chart of compression ratio against speed, and one of columns' stored bytes per method.

mod stored;

pub use stored::{svg_stored_chart, StoredBar};

use super::checksums::ChecksumRow;
use super::harness::BenchRow;
use crate::sql_text::breaks_lines;

/// The colours of the charts' series, in order.
const PALETTE: &[&str] =
    &["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];

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

/// Font size of a point's label, and the estimate of a text's width at a font size: 0.62 em a
/// character, above the average of a sans-serif font's letters and digits (0.5 to 0.56 em),
/// so that two labels estimated apart are apart on the page.
const LABEL_FONT: f64 = 10.0;
pub(crate) fn text_width(text: &str, font_size: f64) -> f64 {
    text.chars().count() as f64 * 0.62 * font_size
}

/// The box a label at (x, y) (its baseline's start) takes: left, top, right, bottom.
pub(crate) fn label_box(text: &str, x: f64, y: f64) -> [f64; 4] {
    [x, y - LABEL_FONT, x + text_width(text, LABEL_FONT), y + 0.3 * LABEL_FONT]
}

fn overlap(a: &[f64; 4], b: &[f64; 4]) -> bool {
    a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3]
}

/// Points of the same method and level closer than this (pixels) share one label.
const SHARED_LABEL_PX: f64 = 30.0;

/// Marker shapes, one per source: circle, square, triangle, diamond, triangle down, cross.
const SHAPES: usize = 6;

/// A marker of shape `shape` centred on (x, y), filled with `fill`, holding `inner` (a title).
fn marker(shape: usize, x: f64, y: f64, fill: &str, inner: &str) -> String {
    let poly = |points: &[(f64, f64)]| {
        let at: Vec<String> = points.iter().map(|(dx, dy)| format!("{:.1},{:.1}", x + dx, y + dy)).collect();
        format!("<polygon class=\"marker\" points=\"{}\" fill=\"{fill}\" stroke=\"#222\" stroke-width=\"0.6\">{inner}</polygon>", at.join(" "))
    };
    match shape % SHAPES {
        0 => format!("<circle class=\"marker\" cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"5\" fill=\"{fill}\" stroke=\"#222\" stroke-width=\"0.6\">{inner}</circle>"),
        1 => format!(
            "<rect class=\"marker\" x=\"{:.1}\" y=\"{:.1}\" width=\"9\" height=\"9\" fill=\"{fill}\" stroke=\"#222\" stroke-width=\"0.6\">{inner}</rect>",
            x - 4.5,
            y - 4.5
        ),
        2 => poly(&[(0.0, -6.0), (5.5, 4.5), (-5.5, 4.5)]),
        3 => poly(&[(0.0, -6.0), (6.0, 0.0), (0.0, 6.0), (-6.0, 0.0)]),
        4 => poly(&[(0.0, 6.0), (5.5, -4.5), (-5.5, -4.5)]),
        _ => poly(&[
            (-2.0, -6.0),
            (2.0, -6.0),
            (2.0, -2.0),
            (6.0, -2.0),
            (6.0, 2.0),
            (2.0, 2.0),
            (2.0, 6.0),
            (-2.0, 6.0),
            (-2.0, 2.0),
            (-6.0, 2.0),
            (-6.0, -2.0),
            (-2.0, -2.0),
        ]),
    }
}

/// Where a label goes: beside its point, right then left, moved up or down in steps until its
/// box is clear of every label placed and every marker, within `bounds`; None when no place is.
fn place_label(text: &str, px: f64, py: f64, bounds: [f64; 4], taken: &[[f64; 4]]) -> Option<(f64, f64)> {
    let width = text_width(text, LABEL_FONT);
    for step in 0..=24 {
        let dy = 12.0 * ((step + 1) / 2) as f64 * if step % 2 == 1 { -1.0 } else { 1.0 };
        for x in [px + 8.0, px - 8.0 - width] {
            let y = py + 4.0 + dy;
            let b = label_box(text, x, y);
            let inside = b[0] >= bounds[0] && b[1] >= bounds[1] && b[2] <= bounds[2] && b[3] <= bounds[3];
            if inside && !taken.iter().any(|t| overlap(&b, t)) {
                return Some((x, y));
            }
        }
    }
    None
}

/// An SVG scatter chart of compression ratio against compression speed (log scale), one point
/// per row — the picture lzbench users look at. A point's colour is its method, its shape its
/// source (payload or table), each with a legend entry; each is labelled with its method and
/// level (one label for the points of a method and level that lie together), the labels placed
/// where they overlap no other label or marker (a label with no such place is left out, its
/// point's title still names it, and the caption says how many). When a
/// `server_*` method is plotted, a line under the chart says what those are.
pub fn svg_chart(rows: &[BenchRow], title: &str) -> String {
    const W: f64 = 960.0;
    const H: f64 = 600.0;
    const LEFT: f64 = 80.0;
    const RIGHT: f64 = 250.0;
    const TOP: f64 = 50.0;
    const BOTTOM: f64 = 90.0;
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
        TOP + plot_h + 38.0,
        TOP + plot_h / 2.0
    ));
    let methods = distinct(points.iter().map(|r| r.method.as_str()).collect());
    let sources = distinct(points.iter().map(|r| r.source.as_str()).collect());
    let colour = |method: &str| PALETTE[methods.iter().position(|m| *m == method).unwrap_or(0) % PALETTE.len()];
    let shape = |source: &str| sources.iter().position(|s| *s == source).unwrap_or(0);
    let mut by_speed = points.clone();
    by_speed.sort_by(|a, b| a.compress_mbps.total_cmp(&b.compress_mbps));
    // Every marker first, so that no label is placed over a point.
    let mut taken: Vec<[f64; 4]> = Vec::new();
    for r in &by_speed {
        let (px, py) = (x(r.compress_mbps), y(r.ratio));
        taken.push([px - 6.0, py - 6.0, px + 6.0, py + 6.0]);
        let inner = format!(
            "<title>{} {} ({}): {:.1} MB/s, ratio {:.3}</title>",
            xml_text(&r.source),
            xml_text(&method_label(r)),
            slice_label(r.slice_size),
            r.compress_mbps,
            r.ratio
        );
        svg.push_str(&marker(shape(&r.source), px, py, colour(&r.method), &inner));
        svg.push('\n');
    }
    let bounds = [LEFT + 2.0, TOP + 2.0, LEFT + plot_w - 2.0, TOP + plot_h - 2.0];
    let mut left_out = 0;
    // One label for the points of a method and level that lie together (the same method on
    // the sources): their shapes say which source each is.
    let mut labelled: Vec<(String, f64, f64)> = Vec::new();
    for r in &by_speed {
        let (px, py) = (x(r.compress_mbps), y(r.ratio));
        let label = method_label(r);
        if labelled.iter().any(|(l, lx, ly)| *l == label && (lx - px).hypot(ly - py) < SHARED_LABEL_PX) {
            continue;
        }
        labelled.push((label.clone(), px, py));
        let Some((lx, ly)) = place_label(&label, px, py, bounds, &taken) else {
            left_out += 1;
            continue;
        };
        let b = label_box(&label, lx, ly);
        if (ly - py - 4.0).abs() > 0.5 {
            // moved off its point's line: a leader from the point to the label
            let to_x = if lx > px { b[0] } else { b[2] };
            svg.push_str(&format!(
                "<line x1=\"{px:.1}\" y1=\"{py:.1}\" x2=\"{to_x:.1}\" y2=\"{:.1}\" stroke=\"#999\" stroke-width=\"0.5\"/>",
                ly - 3.0
            ));
        }
        taken.push(b);
        svg.push_str(&format!(
            "<text class=\"label\" x=\"{lx:.1}\" y=\"{ly:.1}\" font-size=\"{LABEL_FONT}\">{}</text>\n",
            xml_text(&label)
        ));
    }
    // The legend: a shape per source, then a colour per method.
    let legend_x = W - RIGHT + 20.0;
    let mut ly = TOP + 6.0;
    svg.push_str(&format!("<text x=\"{legend_x}\" y=\"{ly:.1}\" font-weight=\"bold\">source (shape)</text>\n"));
    for (i, source) in sources.iter().enumerate() {
        ly += 18.0;
        svg.push_str(&marker(i, legend_x + 6.0, ly - 4.0, "#bbb", ""));
        svg.push_str(&format!(
            "<text class=\"legend-source\" x=\"{}\" y=\"{ly:.1}\">{}</text>\n",
            legend_x + 18.0,
            // within the image: "pgbench_accounts pages (hole removed)" ran past its edge
            xml_text(&shorten_to_width(source, 12.0, W - legend_x - 18.0 - 4.0))
        ));
    }
    ly += 28.0;
    svg.push_str(&format!("<text x=\"{legend_x}\" y=\"{ly:.1}\" font-weight=\"bold\">method (colour)</text>\n"));
    for method in &methods {
        ly += 18.0;
        svg.push_str(&format!(
            "<rect x=\"{legend_x}\" y=\"{:.1}\" width=\"12\" height=\"12\" fill=\"{}\"/><text class=\"legend-method\" x=\"{}\" y=\"{ly:.1}\">{}</text>\n",
            ly - 10.0,
            colour(method),
            legend_x + 18.0,
            xml_text(method)
        ));
    }
    // The lines under the chart.
    let mut caption = Vec::new();
    if methods.iter().any(|m| m.starts_with("server_")) {
        caption.push(
            "server_*: the server's own C routines (pglz_compress, liblz4, libzstd as PostgreSQL links them), what the \
             server would spend; the others are compresslab's code."
                .to_string(),
        );
    }
    if left_out > 0 {
        caption.push(format!("{left_out} label(s) left out where points crowd: a point's tooltip names it."));
    }
    let lines: Vec<String> = caption.iter().flat_map(|c| wrap(c, 11.0, W - LEFT - 20.0)).collect();
    closed_with_caption(svg, &lines, LEFT, TOP + plot_h + 58.0)
}

/// `svg` closed after its caption, `lines` from (`x`, `top`) down.
fn closed_with_caption(mut svg: String, lines: &[String], x: f64, top: f64) -> String {
    for (i, line) in lines.iter().enumerate() {
        svg.push_str(&format!(
            "<text class=\"caption\" x=\"{x}\" y=\"{:.1}\" font-size=\"11\">{}</text>\n",
            top + 14.0 * i as f64,
            xml_text(line)
        ));
    }
    svg.push_str("</svg>\n");
    svg
}

/// Words of `text` in lines no wider than `width` at `font_size` (by [`text_width`]).
fn wrap(text: &str, font_size: f64, width: f64) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ') {
        match lines.last_mut() {
            Some(line) if text_width(&format!("{line} {word}"), font_size) <= width => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

/// The names, sorted, each once.
fn distinct(mut names: Vec<&str>) -> Vec<&str> {
    names.sort();
    names.dedup();
    names
}

/// `text` cut to `max` characters, an ellipsis marking the cut.
fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        text.chars().take(max - 1).chain(std::iter::once('…')).collect()
    }
}

/// `text` shortened (with an ellipsis) to no wider than `width` at `font_size`, by [`text_width`].
fn shorten_to_width(text: &str, font_size: f64, width: f64) -> String {
    let mut max = text.chars().count();
    let mut short = text.to_string();
    while max > 1 && text_width(&short, font_size) > width {
        max -= 1;
        short = shorten(text, max);
    }
    short
}

#[cfg(test)]
mod tests;
