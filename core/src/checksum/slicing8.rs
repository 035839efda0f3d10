//! Slicing-by-8 table CRCs for reflected polynomials (Intel's algorithm, as in PostgreSQL's
//! `pg_crc32c_sb8.c`): eight 256-entry tables let the loop fold eight input bytes per step with
//! independent table look-ups instead of one dependent look-up per byte. Table 0 is the classic
//! byte-at-a-time (Sarwate) table; table k gives the effect of a byte followed by k zero bytes.

const fn make_tables(poly: u32) -> [[u32; 256]; 8] {
    let mut tables = [[0u32; 256]; 8];
    let mut i = 0;
    while i < 256 {
        let mut crc = i as u32;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ poly } else { crc >> 1 };
            bit += 1;
        }
        tables[0][i] = crc;
        i += 1;
    }
    let mut k = 1;
    while k < 8 {
        let mut i = 0;
        while i < 256 {
            let prev = tables[k - 1][i];
            tables[k][i] = (prev >> 8) ^ tables[0][(prev & 0xFF) as usize];
            i += 1;
        }
        k += 1;
    }
    tables
}

/// Tables for CRC-32C (Castagnoli), reflected polynomial 0x82F63B78.
pub static CRC32C_TABLES: [[u32; 256]; 8] = make_tables(0x82F6_3B78);
/// Tables for the standard CRC-32 (zlib), reflected polynomial 0xEDB88320. Table 0 is also
/// PostgreSQL's `pg_crc32_table`, used by the legacy CRC.
pub static CRC32_TABLES: [[u32; 256]; 8] = make_tables(0xEDB8_8320);

fn update(tables: &[[u32; 256]; 8], register: u32, data: &[u8]) -> u32 {
    let mut crc = register;
    let mut chunks = data.chunks_exact(8);
    for chunk in &mut chunks {
        let low = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]) ^ crc;
        let high = u32::from_le_bytes([chunk[4], chunk[5], chunk[6], chunk[7]]);
        crc = tables[7][(low & 0xFF) as usize]
            ^ tables[6][((low >> 8) & 0xFF) as usize]
            ^ tables[5][((low >> 16) & 0xFF) as usize]
            ^ tables[4][(low >> 24) as usize]
            ^ tables[3][(high & 0xFF) as usize]
            ^ tables[2][((high >> 8) & 0xFF) as usize]
            ^ tables[1][((high >> 16) & 0xFF) as usize]
            ^ tables[0][(high >> 24) as usize];
    }
    for &byte in chunks.remainder() {
        crc = tables[0][((crc ^ byte as u32) & 0xFF) as usize] ^ (crc >> 8);
    }
    crc
}

/// CRC-32C by slicing-by-8, continuing from the finished CRC `previous`.
pub fn crc32c(previous: u32, data: &[u8]) -> u32 {
    !update(&CRC32C_TABLES, !previous, data)
}

/// Standard CRC-32 by slicing-by-8, continuing from the finished CRC `previous`.
pub fn crc32(previous: u32, data: &[u8]) -> u32 {
    !update(&CRC32_TABLES, !previous, data)
}
