//! The codecs against their references: pglz and LZ4 blocks byte for byte against the server's
//! own C (PostgreSQL's pglz, the liblz4 it links) and read back by it both ways; LZ4 frames and
//! zstd frames and dictionaries against the `lz4` and `zstd` command-line tools.

use pgrx::prelude::*;

#[pg_schema]
mod tests {
    use std::io::Write;
    use std::process::{Command, Stdio};

    use compresslab_core::pglz::{self, Strategy};
    use pgrx::prelude::*;

    use crate::server::codecs as server_c;
    use crate::tests::{bytes, bytes_with, server_payloads};

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

    /// A worker of `off_thread` runs with every signal blocked, so that the backend's SIGINT,
    /// SIGTERM and SIGALRM reach the backend's thread alone, whose own mask is left as it was.
    #[pg_test]
    fn c_call_workers_block_every_signal_and_leave_the_backends_mask() {
        fn blocked(signals: &[i32]) -> Vec<bool> {
            // SAFETY: sigset_t is plain data.
            let mut mask: libc::sigset_t = unsafe { std::mem::zeroed() };
            // SAFETY: reads this thread's mask into a sigset_t we own (a null set changes nothing).
            unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut mask) };
            // SAFETY: a sigset_t pthread_sigmask filled in.
            signals.iter().map(|&s| unsafe { libc::sigismember(&mask, s) } == 1).collect()
        }
        const SIGNALS: [i32; 5] = [libc::SIGINT, libc::SIGTERM, libc::SIGALRM, libc::SIGUSR1, libc::SIGQUIT];
        let before = blocked(&SIGNALS);
        let done = crate::server::codecs::off_thread::run(&mut || (), || blocked(&SIGNALS)).unwrap();
        assert_eq!(done.value, [true; 5], "the worker blocks every signal");
        assert_eq!(blocked(&SIGNALS), before, "the backend's mask is restored");
        assert!(!before[0], "the backend takes SIGINT");
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

    /// Our LZ4 stream blocks are what liblz4's streaming decoder reads: each record decoded by
    /// the server's `LZ4_decompress_safe_usingDict` with the previous 64 KB as dictionary.
    #[pg_test]
    fn lz4_stream_blocks_decode_with_the_servers_liblz4() {
        use compresslab_core::lz4::stream::{Lz4StreamEncoder, StreamBlock, WINDOW};
        type UsingDict = unsafe extern "C" fn(*const u8, *mut u8, i32, i32, *const u8, i32) -> i32;
        let symbol =
            crate::server::codecs::loaded::loaded_symbol(c"liblz4.so.1", c"LZ4_decompress_safe_usingDict").unwrap();
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
}
