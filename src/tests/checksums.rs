//! The checksums against the server's: CRC-32C against its C routines (and on 18 its SQL
//! `crc32c`), the legacy CRC-32 against the one PostgreSQL stores in tsquery operands.

use pgrx::prelude::*;

#[pg_schema]
mod tests {
    use pgrx::prelude::*;

    use crate::server::codecs as server_c;
    use crate::tests::{bytes, server_payloads};

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

    /// PostgreSQL 18 and 19 have their own SQL `crc32c(bytea)` (the server's CRC-32C routine,
    /// AVX-512 where the CPU has it): ours must give the same value on random inputs of every
    /// length up to 3 pages, empty included, and on the server's own payloads.
    #[cfg(any(feature = "pg18", feature = "pg19"))]
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
}
