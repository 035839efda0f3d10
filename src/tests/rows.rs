//! The SQL result types (sql/result_types.sql) against the core's row structs, and their
//! conversion into tuples (`crate::rows`).

use pgrx::prelude::*;

#[pg_schema]
mod tests {
    use pgrx::prelude::*;

    fn checksum_row() -> compresslab_core::lab::ChecksumRow {
        compresslab_core::lab::ChecksumRow {
            source: "s".into(),
            implementation: "crc32c".into(),
            family: "crc32c".into(),
            slice_size: 16,
            slices: 1,
            raw_bytes: 16,
            mbps: 1.0,
            mbps_best: 1.0,
            ns_per_byte: 1.0,
            wall_seconds: 1.0,
            cpu_seconds: 1.0,
            iterations: 1,
        }
    }

    /// Every result type in sql/result_types.sql has the columns of its core struct, in order.
    #[pg_test]
    fn result_types_match_their_rows() {
        use compresslab_core::lab::BenchRow;
        use compresslab_core::scenarios::{fpi::FpiRow, spill::SpillRow, toast::ToastRow};
        fn columns(type_name: &str) -> Vec<String> {
            Spi::get_one_with_args::<Vec<String>>(
                "SELECT array_agg(attname::text ORDER BY attnum) FROM pg_attribute \
                 WHERE attrelid = (SELECT typrelid FROM pg_type WHERE oid = $1::regtype) AND attnum > 0",
                &[type_name.into()],
            )
            .unwrap()
            .unwrap()
        }
        fn fields<T: serde::Serialize>(row: &T) -> Vec<String> {
            serde_json::to_value(row).unwrap().as_object().unwrap().keys().cloned().collect()
        }
        let bench: BenchRow = serde_json::from_value(serde_json::json!({
            "source": "s", "method": "lz4", "level": null, "slice_size": 0, "slices": 1, "raw_slices": 0,
            "raw_bytes": 1, "stored_bytes": 1, "ratio": 1.0, "compress_mbps": 1.0, "decompress_mbps": 1.0,
            "compress_mbps_best": 1.0, "decompress_mbps_best": 1.0, "compress_ns_per_byte": 1.0,
            "decompress_ns_per_byte": 1.0, "compress_wall_seconds": 1.0, "compress_cpu_seconds": 1.0,
            "decompress_wall_seconds": 1.0, "decompress_cpu_seconds": 1.0, "iterations": 1, "busy": false
        }))
        .unwrap();
        let checksum = checksum_row();
        let spill = compresslab_core::scenarios::spill::simulate(
            &compresslab_core::scenarios::spill::Records::try_from_slices(&[b"x"]).unwrap(),
            &compresslab_core::scenarios::spill::SpillSpec::all(1),
            &mut || (),
        )
        .unwrap()
        .remove(0);
        let fpi = compresslab_core::scenarios::fpi::FpiTotals::default().rows().remove(0);
        let toast = ToastRow {
            method: "pglz".into(),
            values: 1,
            compressed_values: 0,
            raw_bytes: 1,
            stored_bytes: 2,
            ratio: 0.5,
            compress_mbps: 1.0,
            decompress_mbps: 1.0,
            stored_bytes_low: Some(2),
            stored_bytes_high: Some(2),
        };
        let layout = compresslab_core::scenarios::wal::layout::WalLayout::new(16 << 20);
        let whatif = compresslab_core::scenarios::wal::WalWhatIf::new(
            layout,
            vec![(compresslab_core::pg_compression::WalCompression::Off, None)],
            1.0,
        )
        .unwrap()
        .finish()
        .unwrap()
        .remove(0);
        let by_relation = compresslab_core::scenarios::wal::WalWhatIfRelationRow {
            relation: "public.t".into(),
            fork: "main".into(),
            wal_compression: compresslab_core::pg_compression::WalCompression::Off,
            fpi_images: 1,
            fpi_bytes: 1,
            saving_percent: 0.0,
        };
        let check = |type_name: &str, names: Vec<String>| assert_eq!(columns(type_name), names, "{type_name}");
        check("compresslab.bench_result", fields(&bench));
        check("compresslab.checksum_result", fields(&checksum));
        check("compresslab.spill_result", fields::<SpillRow>(&spill));
        check("compresslab.wal_compression_estimate", fields::<FpiRow>(&fpi));
        check("compresslab.toast_compression_estimate", fields(&toast));
        check("compresslab.wal_whatif_row", fields(&whatif));
        check("compresslab.wal_whatif_relation_row", fields(&by_relation));
        let advice = compresslab_core::advisor::AdviceRow { observed_period: Some(5400.5), ..Default::default() };
        check("compresslab.advice", fields(&advice));
        // and the conversion accepts each
        crate::rows::to_composite("compresslab.bench_result", &bench);
        crate::rows::to_composite("compresslab.checksum_result", &checksum);
        crate::rows::to_composite("compresslab.spill_result", &spill);
        crate::rows::to_composite("compresslab.wal_compression_estimate", &fpi);
        crate::rows::to_composite("compresslab.toast_compression_estimate", &toast);
        crate::rows::to_composite("compresslab.wal_whatif_row", &whatif);
        crate::rows::to_composite("compresslab.wal_whatif_relation_row", &by_relation);
        // observed_period's seconds as an interval
        let tuple = crate::rows::to_composite("compresslab.advice", &advice);
        let period: Option<pgrx::datum::Interval> = tuple.get_by_name("observed_period").unwrap();
        assert_eq!(period.map(|p| p.as_micros()), Some(5_400_500_000));
    }

    /// A row that does not fit its type is an ERROR, not a wrong tuple.
    #[pg_test(
        error = "compresslab's result type compresslab.spill_result does not match its row: 9 columns, 12 fields"
    )]
    fn a_row_of_the_wrong_shape_is_refused() {
        crate::rows::to_composite("compresslab.spill_result", &checksum_row());
    }
}
