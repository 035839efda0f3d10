//! An SVG chart of what columns store under each method: a group of horizontal bars per
//! column, one bar per method, its 95% interval as a whisker and its bytes beside it.

use serde::Deserialize;

use super::{closed_with_caption, distinct, shorten_to_width, wrap, xml_text, PALETTE};
use crate::advisor::words::size;

/// One bar: a column, a method, the bytes it would store and their 95% interval (None: not
/// sampled, or a single block).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct StoredBar {
    pub column: String,
    pub method: String,
    pub stored_bytes: f64,
    #[serde(default)]
    pub stored_bytes_low: Option<f64>,
    #[serde(default)]
    pub stored_bytes_high: Option<f64>,
}

const W: f64 = 960.0;
const LEFT: f64 = 260.0;
const RIGHT: f64 = 120.0;
const TOP: f64 = 70.0;
const BAR: f64 = 16.0;
const GAP: f64 = 14.0;
const BOTTOM: f64 = 80.0;

/// The chart of `bars`, in the order of their columns' first bars, methods sorted.
pub fn svg_stored_chart(bars: &[StoredBar], title: &str, caption: &str) -> String {
    let bars: Vec<&StoredBar> = bars.iter().filter(|b| b.stored_bytes.is_finite() && b.stored_bytes >= 0.0).collect();
    let mut columns: Vec<&str> = Vec::new();
    for bar in &bars {
        if !columns.contains(&bar.column.as_str()) {
            columns.push(&bar.column);
        }
    }
    let methods = distinct(bars.iter().map(|b| b.method.as_str()).collect());
    let group = methods.len().max(1) as f64 * BAR + GAP;
    let plot_h = (columns.len() as f64 * group).max(BAR + GAP);
    let h = TOP + plot_h + BOTTOM;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{h}\" viewBox=\"0 0 {W} {h}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{}\" y=\"28\" font-size=\"16\" text-anchor=\"middle\">{}</text>\n",
        W / 2.0,
        xml_text(title)
    );
    if bars.is_empty() {
        svg.push_str("<text x=\"40\" y=\"100\">no results</text>\n</svg>\n");
        return svg;
    }
    let most =
        bars.iter().map(|b| b.stored_bytes_high.unwrap_or(b.stored_bytes).max(b.stored_bytes)).fold(1.0, f64::max);
    let (step, unit, unit_name) = tick_step(most);
    let ticks = (most / step).ceil().max(1.0) as u32;
    let top = step * f64::from(ticks);
    let plot_w = W - LEFT - RIGHT;
    let x = |bytes: f64| LEFT + bytes.clamp(0.0, top) / top * plot_w;
    for i in 0..=ticks {
        let bytes = step * f64::from(i);
        svg.push_str(&format!(
            "<line x1=\"{0:.1}\" y1=\"{TOP}\" x2=\"{0:.1}\" y2=\"{1:.1}\" stroke=\"#ddd\"/><text x=\"{0:.1}\" y=\"{2:.1}\" text-anchor=\"middle\">{3} {unit_name}</text>\n",
            x(bytes),
            TOP + plot_h,
            TOP + plot_h + 18.0,
            bytes / unit
        ));
    }
    let colour = |method: &str| PALETTE[methods.iter().position(|m| *m == method).unwrap_or(0) % PALETTE.len()];
    for (c, column) in columns.iter().enumerate() {
        let y0 = TOP + c as f64 * group + GAP / 2.0;
        svg.push_str(&format!(
            "<text class=\"column\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\"><title>{}</title>{}</text>\n",
            LEFT - 8.0,
            y0 + methods.len() as f64 * BAR / 2.0 + 4.0,
            xml_text(column),
            xml_text(&shorten_to_width(column, 12.0, LEFT - 16.0))
        ));
        for (m, method) in methods.iter().enumerate() {
            let Some(bar) = bars.iter().find(|b| b.column == *column && b.method == *method) else { continue };
            let y = y0 + m as f64 * BAR;
            let interval = match (bar.stored_bytes_low, bar.stored_bytes_high) {
                (Some(low), Some(high)) if high > low => format!(" (95% interval {}..{})", bytes(low), bytes(high)),
                _ => String::new(),
            };
            svg.push_str(&format!(
                "<rect class=\"bar\" x=\"{LEFT}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{}\"><title>{}: {} with {}{}</title></rect>\n",
                y + 1.0,
                x(bar.stored_bytes) - LEFT,
                BAR - 2.0,
                colour(method),
                xml_text(column),
                bytes(bar.stored_bytes),
                xml_text(method),
                interval
            ));
            let mut end = x(bar.stored_bytes);
            if let (Some(low), Some(high)) = (bar.stored_bytes_low, bar.stored_bytes_high) {
                let (lx, hx, my) = (x(low), x(high), y + BAR / 2.0);
                svg.push_str(&format!(
                    "<path class=\"interval\" d=\"M{lx:.1} {my:.1}H{hx:.1}M{lx:.1} {:.1}V{:.1}M{hx:.1} {:.1}V{:.1}\" stroke=\"#222\" fill=\"none\"/>\n",
                    my - 4.0,
                    my + 4.0,
                    my - 4.0,
                    my + 4.0
                ));
                end = end.max(hx);
            }
            svg.push_str(&format!(
                "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\">{}</text>\n",
                end + 6.0,
                y + BAR - 4.0,
                bytes(bar.stored_bytes)
            ));
        }
    }
    for (i, method) in methods.iter().enumerate() {
        let lx = LEFT + i as f64 * 140.0;
        svg.push_str(&format!(
            "<rect x=\"{lx}\" y=\"44\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{}\" y=\"54\">{}</text>\n",
            colour(method),
            lx + 18.0,
            xml_text(&shorten_to_width(method, 12.0, 115.0))
        ));
    }
    closed_with_caption(svg, &wrap(caption, 11.0, W - 40.0), 20.0, TOP + plot_h + 42.0)
}

/// A step of about a fifth of `most` bytes that reads well: 1, 2 or 5 times a power of ten
/// of a unit (bytes, kB, MB, GB: powers of 1024), and the unit's value and name.
fn tick_step(most: f64) -> (f64, f64, &'static str) {
    const UNITS: [(f64, &str); 4] = [(1073741824.0, "GB"), (1048576.0, "MB"), (1024.0, "kB"), (1.0, "bytes")];
    let (unit, name) = UNITS.into_iter().find(|&(u, _)| most >= 10.0 * u).unwrap_or((1.0, "bytes"));
    let rough = most / unit / 5.0;
    let decade = 10f64.powf(rough.log10().floor());
    let nice = [1.0, 2.0, 5.0, 10.0].into_iter().find(|&n| n * decade >= rough).unwrap_or(10.0);
    (nice * decade * unit, unit, name)
}

/// A bar's bytes: as [`size`] writes them, with a decimal in MB and GB, where methods often
/// differ by less than a unit.
fn bytes(n: f64) -> String {
    const MB: f64 = 1048576.0;
    match size(n) {
        words if words.ends_with(" MB") => format!("{:.1} MB", n / MB),
        words => words,
    }
}
