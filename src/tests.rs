//! In-server tests (`cargo pgrx test`): interop with PostgreSQL's own C routines and with the
//! `lz4` and `zstd` command-line tools, through the SQL functions.

use pgrx::prelude::*;

#[pg_schema]
mod tests {
    use std::io::Write;
    use std::process::{Command, Stdio};

    use compresslab_core::pglz::{self, Strategy};
    use pgrx::prelude::*;

    use crate::server::c_codecs as server_c;

    fn bytes(query: &str) -> Vec<u8> {
        Spi::get_one::<Vec<u8>>(query).expect("query failed").expect("query returned NULL")
    }

    fn bytes_with(query: &str, arg: &[u8]) -> Option<Vec<u8>> {
        Spi::get_one_with_args::<Vec<u8>>(query, &[arg.into()]).expect("query failed")
    }

    /// A heap page image as a full-page write sees it: the hole between pd_lower and pd_upper cut out.
    fn page_image_without_hole(page: &[u8]) -> Vec<u8> {
        let lower = u16::from_le_bytes([page[12], page[13]]) as usize;
        let upper = u16::from_le_bytes([page[14], page[15]]) as usize;
        assert!(lower <= upper && upper <= page.len(), "not a standard page");
        [&page[..lower], &page[upper..]].concat()
    }

    /// Real payloads from this server: heap pages (hole removed and zero-filled), 2 KB slices
    /// of the current WAL segment, 8 KB slices of catalog text, plus random and tiny inputs.
    fn server_payloads() -> Vec<(String, Vec<u8>)> {
        Spi::run("CREATE EXTENSION IF NOT EXISTS pageinspect").unwrap();
        Spi::run(
            "CREATE TABLE interop_rows AS SELECT i AS id, md5(i::text) AS digest, repeat('x', i % 50) AS pad, now() AS at \
             FROM generate_series(1, 2000) i",
        )
        .unwrap();
        Spi::run("DELETE FROM interop_rows WHERE id % 3 = 0").unwrap();
        let mut payloads = Vec::new();
        for blkno in 0..4 {
            let page = bytes(&format!("SELECT get_raw_page('interop_rows', {blkno})"));
            payloads.push((format!("page {blkno} without hole"), page_image_without_hole(&page)));
            payloads.push((format!("page {blkno} zero-filled hole"), page));
        }
        Spi::run("CHECKPOINT").unwrap();
        let wal = bytes("SELECT pg_read_binary_file('pg_wal/' || pg_walfile_name(pg_current_wal_lsn()), 0, 16384)");
        for (i, slice) in wal.chunks(2048).enumerate() {
            payloads.push((format!("WAL slice {i}"), slice.to_vec()));
        }
        let text = bytes(
            "SELECT convert_to(string_agg(description, ' ' ORDER BY objoid, objsubid), 'UTF8') FROM pg_description",
        );
        for (i, slice) in text.chunks(8192).take(6).enumerate() {
            payloads.push((format!("text slice {i}"), slice.to_vec()));
        }
        payloads.push(("text 64 KB".into(), text[..65_536.min(text.len())].to_vec()));
        payloads.push(("random 8 KB".into(), compresslab_core::rng::SeededRng::new(0x2545_F491).bytes(8192)));
        payloads.push(("high bytes".into(), (0..5000u32).map(|i| 0x80 | ((i * 7 / 3) % 128) as u8).collect()));
        payloads.push(("31 bytes".into(), vec![b'a'; 31]));
        payloads.push(("32 bytes".into(), vec![b'a'; 32]));
        payloads
    }

    #[pg_test]
    fn pglz_is_byte_identical_to_the_server_and_interoperates_both_ways() {
        let custom = Strategy::parse(
            "min_input_size=16, min_comp_rate=5, first_success_by=2048, match_size_good=64, match_size_drop=20",
        )
        .unwrap();
        let mut compared = 0;
        for (name, data) in server_payloads() {
            for strategy in [Strategy::DEFAULT, Strategy::ALWAYS, custom] {
                let ours = pglz::compress(&data, &strategy);
                let mut buf = vec![0u8; pglz::max_output(data.len())];
                let theirs = server_c::c_pglz_compress(&data, &mut buf, &strategy).map(|n| buf[..n].to_vec());
                assert_eq!(ours.is_some(), theirs.is_some(), "{name} / {strategy}: accept/refuse differs");
                assert_eq!(ours, theirs, "{name} / {strategy}: output differs");
                if let Some(ours) = ours {
                    // The server decodes ours ...
                    let mut out = vec![0u8; data.len()];
                    let decoded = server_c::c_pglz_decompress(&ours, &mut out, true, &mut Vec::new()).unwrap();
                    assert_eq!(decoded, Some(data.len()), "{name}");
                    assert_eq!(out, data, "{name}: server decoded our output wrongly");
                    // ... and we decode the server's (the same bytes, but through SQL here).
                    let sql = bytes_with(
                        &format!("SELECT compresslab.pglz_decompress($1, {}, true)", data.len()),
                        theirs.as_deref().unwrap(),
                    );
                    assert_eq!(sql.as_deref(), Some(&data[..]), "{name}: we decoded the server's output wrongly");
                    compared += 1;
                }
            }
        }
        assert!(compared > 40, "only {compared} payloads compressed");
    }

    #[pg_test]
    fn sql_pglz_functions_agree_with_the_servers() {
        let text = bytes("SELECT convert_to(repeat('PostgreSQL pglz interop ', 200), 'UTF8')");
        let ours = bytes_with("SELECT compresslab.pglz_compress($1)", &text).unwrap();
        let theirs = bytes_with("SELECT compresslab.server_pglz_compress($1)", &text).unwrap();
        assert_eq!(ours, theirs);
        let back =
            bytes_with(&format!("SELECT compresslab.server_pglz_decompress($1, {})", text.len()), &ours).unwrap();
        assert_eq!(back, text);
        // Refusals are NULL on both sides.
        assert_eq!(bytes_with("SELECT compresslab.pglz_compress($1)", b"short"), None);
        assert_eq!(bytes_with("SELECT compresslab.server_pglz_compress($1)", b"short"), None);
    }

    #[pg_test]
    fn crc32c_equals_the_servers_on_every_payload() {
        for (name, data) in server_payloads() {
            let server = server_c::c_crc32c(0, &data);
            assert_eq!(compresslab_core::checksum::crc32c(0, &data), server, "{name}");
            assert_eq!(compresslab_core::checksum::slicing8::crc32c(0, &data), server, "{name}");
            assert_eq!(server_c::c_crc32c_sb8(0, &data), server, "{name}");
            let sql = Spi::get_one_with_args::<i64>("SELECT compresslab.crc32c($1)", &[data.as_slice().into()]);
            assert_eq!(sql.unwrap(), Some(server as i64), "{name}");
        }
        assert_eq!(Spi::get_one::<i64>("SELECT compresslab.crc32c('abc'::bytea)").unwrap(), Some(910_901_175));
        assert_eq!(
            Spi::get_one::<i64>("SELECT compresslab.crc32c('c'::bytea, compresslab.crc32c('ab'::bytea))").unwrap(),
            Some(910_901_175)
        );
    }

    /// PostgreSQL 18 has its own SQL `crc32c(bytea)` (the server's CRC-32C routine, AVX-512 where
    /// the CPU has it): ours must give the same value on random inputs of every length up to
    /// 3 pages, empty included, and on the server's own payloads.
    #[cfg(feature = "pg18")]
    #[pg_test]
    fn crc32c_equals_pg18_sql_crc32c_on_random_inputs() {
        let mut rng = compresslab_core::rng::SeededRng::new(18);
        let mut inputs: Vec<Vec<u8>> = (0..2000)
            .map(|_| {
                let len = rng.below(3 * 8192) as usize;
                rng.bytes(len)
            })
            .collect();
        inputs.extend((0..=130).map(|n| rng.bytes(n)));
        inputs.extend(server_payloads().into_iter().map(|(_, data)| data));
        for data in &inputs {
            let (ours, theirs) = Spi::get_two_with_args::<i64, i64>(
                "SELECT compresslab.crc32c($1), pg_catalog.crc32c($1)",
                &[data.as_slice().into()],
            )
            .unwrap();
            assert_eq!(ours, theirs, "length {}", data.len());
            assert_eq!(ours, Some(compresslab_core::checksum::crc32c(0, data) as i64), "length {}", data.len());
        }
    }

    /// tsquery operands carry PostgreSQL's legacy CRC-32 of their lexeme on disk (`valcrc`):
    /// read it from a heap tuple and compare.
    #[pg_test]
    fn crc32_legacy_equals_the_crc_postgres_stores_in_tsquery() {
        Spi::run("CREATE EXTENSION IF NOT EXISTS pageinspect").unwrap();
        Spi::run("CREATE TABLE queries (q tsquery)").unwrap();
        for lexeme in ["abc", "postgresql", "123456789", "crc"] {
            Spi::run("TRUNCATE queries").unwrap();
            Spi::run(&format!("INSERT INTO queries VALUES ('{lexeme}'::tsquery)")).unwrap();
            let tuple = bytes("SELECT t_data FROM heap_page_items(get_raw_page('queries', 0))");
            // varlena header (1 byte if short, else 4), int32 item count, then the operand:
            // type, weight, prefix, padding, valcrc.
            let header = if tuple[0] & 1 == 1 { 1 } else { 4 };
            assert_eq!(i32::from_le_bytes(tuple[header..header + 4].try_into().unwrap()), 1);
            let at = header + 8;
            let stored = i32::from_le_bytes(tuple[at..at + 4].try_into().unwrap());
            let ours = compresslab_core::checksum::crc32_legacy(0, lexeme.as_bytes()) as i32;
            assert_eq!(ours, stored, "{lexeme}");
            assert_ne!(compresslab_core::checksum::crc32(0, lexeme.as_bytes()) as i32, stored, "{lexeme}");
        }
    }

    fn run_tool(program: &str, args: &[&str], input: &[u8]) -> Vec<u8> {
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {program} (Debian package {program}): {e}"));
        let mut stdin = child.stdin.take().unwrap();
        let input = input.to_vec();
        let writer = std::thread::spawn(move || stdin.write_all(&input));
        let out = child.wait_with_output().unwrap();
        writer.join().unwrap().unwrap();
        assert!(out.status.success(), "{program} {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
        out.stdout
    }

    fn interop_inputs() -> Vec<Vec<u8>> {
        vec![
            Vec::new(),
            b"a".to_vec(),
            bytes("SELECT convert_to(string_agg(md5(i::text), ',') , 'UTF8') FROM generate_series(1, 20000) i"),
            bytes("SELECT convert_to(repeat('lz4 and zstd interop ', 300000), 'UTF8')"),
        ]
    }

    #[pg_test]
    fn lz4_frames_interoperate_with_the_lz4_tool() {
        for data in interop_inputs() {
            let ours = bytes_with("SELECT compresslab.lz4_frame_compress($1)", &data).unwrap();
            assert_eq!(run_tool("lz4", &["-d", "-c"], &ours), data, "lz4 -d read our frame wrongly");
            for args in [&["-c"][..], &["-c", "-9", "--content-size"], &["-c", "-1", "-BD", "--no-frame-crc"]] {
                let theirs = run_tool("lz4", args, &data);
                let back = bytes_with("SELECT compresslab.lz4_frame_decompress($1)", &theirs).unwrap();
                assert_eq!(back, data, "we read lz4 {args:?} output wrongly");
            }
        }
    }

    #[pg_test]
    fn zstd_frames_interoperate_with_the_zstd_tool() {
        for data in interop_inputs() {
            for level in [-5, 3, 19] {
                let ours = bytes_with(&format!("SELECT compresslab.zstd_compress($1, {level})"), &data).unwrap();
                assert_eq!(
                    run_tool("zstd", &["-d", "-c", "-q"], &ours),
                    data,
                    "zstd -d read our level {level} frame wrongly"
                );
            }
            // From a pipe the tool declares no content size (decoded aside); with --stream-size
            // it does (decoded straight into the result).
            let sized = format!("--stream-size={}", data.len());
            for args in [
                &["-c", "-q"][..],
                &["-c", "-q", "-19"],
                &["-c", "-q", "--fast=3", "--no-check"],
                &["-c", "-q", &sized],
            ] {
                let theirs = run_tool("zstd", args, &data);
                let back = bytes_with("SELECT compresslab.zstd_decompress($1)", &theirs).unwrap();
                assert_eq!(back, data, "we read zstd {args:?} output wrongly");
            }
        }
    }

    #[pg_test]
    fn zstd_dictionaries_interoperate_with_the_zstd_tool() {
        let dict = b"{\"customer_id\": , \"status\": \"shipped\", \"country\": \"NO\", \"items\": []}".repeat(4);
        let dict_path = std::env::temp_dir().join(format!("compresslab-dict-{}", std::process::id()));
        std::fs::write(&dict_path, &dict).unwrap();
        let data = b"{\"customer_id\": 42, \"status\": \"shipped\", \"country\": \"NO\", \"items\": [1,2]}".to_vec();
        let ours = Spi::get_one_with_args::<Vec<u8>>(
            "SELECT compresslab.zstd_compress($1, 3, $2)",
            &[data.as_slice().into(), dict.as_slice().into()],
        )
        .unwrap()
        .unwrap();
        let dict_arg = dict_path.to_str().unwrap();
        assert_eq!(run_tool("zstd", &["-d", "-c", "-q", "-D", dict_arg], &ours), data);
        let theirs = run_tool("zstd", &["-c", "-q", "-D", dict_arg], &data);
        let back = Spi::get_one_with_args::<Vec<u8>>(
            "SELECT compresslab.zstd_decompress($1, $2)",
            &[theirs.as_slice().into(), dict.as_slice().into()],
        )
        .unwrap()
        .unwrap();
        std::fs::remove_file(dict_path).ok();
        assert_eq!(back, data);
    }

    #[pg_test]
    fn gucs_steer_compress_and_are_range_checked() {
        let method = |q: &str| Spi::get_one::<String>(q).unwrap().unwrap();
        let probe = "SELECT method FROM compresslab.compression_info(compresslab.compress(convert_to(repeat('guc ', 100), 'UTF8')))";
        assert_eq!(method(probe), "lz4");
        Spi::run("SET compresslab.method = 'zstd'").unwrap();
        assert_eq!(method(probe), "zstd");
        Spi::run("SET compresslab.method = 'pglz'").unwrap();
        assert_eq!(method(probe), "pglz");
        Spi::run("RESET compresslab.method").unwrap();
        assert_eq!(method(probe), "lz4");
        Spi::run("SET compresslab.zstd_level = 19").unwrap();
        assert_eq!(Spi::get_one::<String>("SHOW compresslab.zstd_level").unwrap().as_deref(), Some("19"));
    }

    #[pg_test(error = "23 is outside the valid range for parameter \"compresslab.zstd_level\" (-131072 .. 22)")]
    fn zstd_level_setting_is_range_checked() {
        Spi::run("SET compresslab.zstd_level = 23").unwrap();
    }

    #[pg_test(error = "invalid value for parameter \"compresslab.method\": \"snappy\"")]
    fn method_setting_rejects_unknown_methods() {
        Spi::run("SET compresslab.method = 'snappy'").unwrap();
    }

    #[pg_test(
        error = "compressed value declares 4000 decompressed bytes, more than the limit of 1000 (compresslab.max_decompressed_size)"
    )]
    fn max_decompressed_size_refuses_large_values() {
        Spi::run("SET compresslab.max_decompressed_size = 1000").unwrap();
        Spi::run(
            "SELECT compresslab.decompress(compresslab.compress(convert_to(repeat('abcd', 1000), 'UTF8'), 'zstd'))",
        )
        .unwrap();
    }

    #[pg_test]
    fn capabilities_all_pass() {
        let failing = Spi::get_one::<i64>("SELECT count(*) FROM compresslab.capabilities() WHERE NOT ok").unwrap();
        assert_eq!(failing, Some(0));
        let rows = Spi::get_one::<i64>("SELECT count(*) FROM compresslab.capabilities()").unwrap();
        assert_eq!(rows, Some(10));
    }

    /// Our LZ4 stream blocks are what liblz4's streaming decoder reads: each record decoded by
    /// the server's `LZ4_decompress_safe_usingDict` with the previous 64 KB as dictionary.
    #[pg_test]
    fn lz4_stream_blocks_decode_with_the_servers_liblz4() {
        use compresslab_core::lz4::stream::{Lz4StreamEncoder, StreamBlock, WINDOW};
        type UsingDict = unsafe extern "C" fn(*const u8, *mut u8, i32, i32, *const u8, i32) -> i32;
        let symbol = crate::server::loaded::loaded_symbol(c"liblz4.so.1", c"LZ4_decompress_safe_usingDict").unwrap();
        // SAFETY: the symbol has this C signature in lz4.h.
        let using_dict = unsafe { std::mem::transmute::<*mut std::ffi::c_void, UsingDict>(symbol) };
        let mut rng = compresslab_core::rng::SeededRng::new(11);
        let pool: Vec<Vec<u8>> = (0..20).map(|i| rng.printable(50 + i * 37)).collect();
        let records: Vec<Vec<u8>> = (0..3000).map(|_| pool[rng.below(20) as usize].clone()).collect();
        let mut encoder = Lz4StreamEncoder::new();
        let mut history: Vec<u8> = Vec::new();
        let mut linked = 0;
        for record in &records {
            let mut payload = Vec::new();
            let block = encoder.encode(record, &mut payload).unwrap();
            if block == StreamBlock::Linked {
                linked += 1;
                let dict = &history[history.len().saturating_sub(WINDOW)..];
                let mut out = vec![0u8; record.len()];
                // SAFETY: LZ4_decompress_safe_usingDict reads at most srcSize input bytes and the
                // dictionary, and writes at most dstCapacity bytes.
                let n = unsafe {
                    using_dict(
                        payload.as_ptr(),
                        out.as_mut_ptr(),
                        payload.len() as i32,
                        out.len() as i32,
                        dict.as_ptr(),
                        dict.len() as i32,
                    )
                };
                assert_eq!(n, record.len() as i32);
                assert_eq!(&out, record);
            }
            history.extend_from_slice(record);
        }
        assert!(linked > 2900, "{linked} linked blocks");
    }

    /// `lz4_compress` writes the server's own LZ4 blocks: byte for byte what the liblz4 loaded in
    /// the server writes with `LZ4_compress_default` (the call behind lz4 TOAST values and lz4
    /// WAL compression), on both sides of its 64 KB table switch, and the server's
    /// `LZ4_decompress_safe` reads them back.
    #[pg_test]
    fn lz4_blocks_are_byte_for_byte_the_servers_liblz4() {
        use compresslab_core::registry::{MethodKind, MethodSpec};
        let mut server_lz4 = server_c::build(&MethodSpec { kind: MethodKind::ServerLz4, level: None }).unwrap();
        let mut rng = compresslab_core::rng::SeededRng::new(12);
        let text = bytes(
            "SELECT convert_to(string_agg(description, ' ' ORDER BY objoid, objsubid), 'UTF8') FROM pg_description",
        );
        let mut inputs: Vec<Vec<u8>> = vec![Vec::new(), b"short".to_vec(), vec![0; 100_000], rng.bytes(70_000)];
        for len in [12, 13, 4096, 8192, 65_546, 65_547, 65_548, 300_000] {
            inputs.push(text.iter().cycle().take(len).copied().collect());
        }
        // Text with random bytes sprinkled in: matches of every length and offset.
        let mut mixed = text[..200_000.min(text.len())].to_vec();
        for _ in 0..mixed.len() / 50 {
            let at = rng.below(mixed.len() as u64) as usize;
            mixed[at] = rng.bytes(1)[0];
        }
        inputs.push(mixed);
        for data in &inputs {
            let ours = bytes_with("SELECT compresslab.lz4_compress($1)", data).unwrap();
            let mut theirs = vec![0u8; server_lz4.compress_bound(data.len())];
            let n = server_lz4.compress(data, &mut theirs, &mut || {}).unwrap().unwrap();
            theirs.truncate(n);
            assert!(ours == theirs, "{} bytes: ours {} bytes, liblz4's {}", data.len(), ours.len(), theirs.len());
            // The server's LZ4_decompress_safe must fill the buffer exactly, and the same bytes.
            let mut back = vec![0u8; data.len()];
            server_lz4.decompress(&ours, &mut back, &mut || {}).unwrap();
            assert!(&back == data, "{} bytes decoded wrongly", data.len());
        }
    }

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
        };
        let layout = compresslab_core::scenarios::wal::layout::WalLayout::new(16 << 20);
        let whatif = compresslab_core::scenarios::wal::WalWhatIf::new(layout, vec![("off".into(), None)], 1.0)
            .unwrap()
            .finish()
            .unwrap()
            .remove(0);
        let by_relation = compresslab_core::scenarios::wal::WalWhatIfRelationRow {
            relation: "public.t".into(),
            fork: "main".into(),
            wal_compression: "off".into(),
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
