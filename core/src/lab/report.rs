//! Rendering results as markdown tables, in the spirit of lzbench's output.

use super::harness::{BenchRow, ChecksumRow};

fn slice_label(slice_size: i64) -> String {
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

/// One markdown table of codec rows: speed (median and best), ratio and sizes.
pub fn markdown(rows: &[BenchRow]) -> String {
    let mut out = String::from(
        "| source | method | slice | compress MB/s (best) | decompress MB/s (best) | ratio | input → output bytes | raw slices | CPU s (c/d) |\n\
         |---|---|---|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in rows {
        out.push_str(&format!(
            "| {} | {} | {} | {:.1} ({:.1}) | {:.1} ({:.1}) | {:.3} | {} → {} | {}/{} | {:.3}/{:.3} |\n",
            r.source,
            method_label(r),
            slice_label(r.slice_size),
            r.compress_mbps,
            r.compress_mbps_best,
            r.decompress_mbps,
            r.decompress_mbps_best,
            r.ratio,
            r.input_bytes,
            r.output_bytes,
            r.raw_slices,
            r.slices,
            r.compress_cpu_s,
            r.decompress_cpu_s,
        ));
    }
    out
}

/// One markdown table of checksum rows.
pub fn markdown_checksums(rows: &[ChecksumRow]) -> String {
    let mut out = String::from(
        "| source | implementation | slice | MB/s (best) | ns/byte | bytes | CPU s |\n|---|---|---|---:|---:|---:|---:|\n",
    );
    for r in rows {
        out.push_str(&format!(
            "| {} | {} | {} | {:.1} ({:.1}) | {:.3} | {} | {:.3} |\n",
            r.source,
            r.implementation,
            slice_label(r.slice_size),
            r.mbps,
            r.mbps_best,
            r.ns_per_byte,
            r.input_bytes,
            r.cpu_s
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::codecs::{rust_codec, CodecSpec};
    use crate::lab::harness::{bench_codec, NoHooks};
    use crate::lab::payload::{synthetic, Payload};

    #[test]
    fn markdown_has_a_row_per_result_and_survives_json() {
        let p = Payload::new("text", vec![synthetic("text", 30_000, 3).unwrap()]);
        let rows: Vec<BenchRow> = ["zstd:5", "lz4"]
            .iter()
            .map(|m| {
                let mut c = rust_codec(&CodecSpec::parse(m).unwrap(), 3).unwrap().unwrap();
                bench_codec(&p, 8192, c.as_mut(), 1, &mut NoHooks).unwrap()
            })
            .collect();
        let table = markdown(&rows);
        assert_eq!(table.lines().count(), 4);
        assert!(table.contains("| text | zstd 5 | 8 KB |"), "{table}");
        assert!(table.contains("| text | lz4 | 8 KB |"), "{table}");
        let json = serde_json::to_string(&rows).unwrap();
        let back: Vec<BenchRow> = serde_json::from_str(&json).unwrap();
        for (b, r) in back.iter().zip(&rows) {
            assert_eq!((&b.method, b.level, b.slices, b.output_bytes), (&r.method, r.level, r.slices, r.output_bytes));
            assert!((b.compress_ns_per_byte - r.compress_ns_per_byte).abs() < 1e-9);
        }
        assert_eq!(markdown(&back), table);
    }
}
