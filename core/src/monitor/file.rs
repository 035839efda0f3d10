//! The file the continuous WAL view keeps its figures in across restarts, in the manner of
//! pg_stat_statements: written at shutdown and every few minutes (to `.tmp`, then renamed),
//! read at start and never trusted. Little-endian throughout:
//!
//! ```text
//! magic "CLWM" | layout version u32 | system identifier u64 | timeline u32 | read LSN u64 |
//! since LSN u64 | since (Unix microseconds) i64 | missed bytes u64 |
//! rows u32 | evictions u32 | hours u32 | rows | evictions | hours | CRC-32C of all before it
//! ```
//!
//! A row is its kind (0 relation, 1 resource manager, 2 overhead, 3 a database's others) and
//! key, then its [`Counters`] as 13 u64s; an eviction count a database and a u64; an hour its
//! start and 5 u64s. [`decode`] refuses, with the reason for the server's log, a file of another
//! layout or cluster, one whose LSN is past the end of WAL, and anything damaged.

use super::history::Hour;
use super::{Counters, Row, SETTINGS};
use crate::scenarios::wal::RelationKey;

pub const MAGIC: [u8; 4] = *b"CLWM";
/// Changed whenever the layout changes: a file of another layout is discarded.
pub const LAYOUT_VERSION: u32 = 1;

/// Where the figures stand: the cluster and timeline they belong to, the LSN read up to, when
/// and from which LSN they count, and the bytes of WAL removed before they were read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub system_identifier: u64,
    pub timeline: u32,
    pub read_lsn: u64,
    pub since_lsn: u64,
    pub since_micros: i64,
    pub missed_bytes: u64,
}

/// What a file holds.
#[derive(Debug, Clone, PartialEq)]
pub struct State {
    pub header: Header,
    pub rows: Vec<(Row, Counters)>,
    pub evictions: Vec<(u32, u64)>,
    pub hours: Vec<Hour>,
}

pub fn encode(state: &State) -> Vec<u8> {
    let mut out = Vec::new();
    let h = &state.header;
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&LAYOUT_VERSION.to_le_bytes());
    out.extend_from_slice(&h.system_identifier.to_le_bytes());
    out.extend_from_slice(&h.timeline.to_le_bytes());
    for v in [h.read_lsn, h.since_lsn, h.since_micros as u64, h.missed_bytes] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    for n in [state.rows.len(), state.evictions.len(), state.hours.len()] {
        out.extend_from_slice(&(n as u32).to_le_bytes());
    }
    for (row, c) in &state.rows {
        match row {
            Row::Relation(k) => {
                out.push(0);
                for v in [k.tablespace, k.database, k.relfilenode] {
                    out.extend_from_slice(&v.to_le_bytes());
                }
                out.push(k.fork);
            }
            Row::ResourceManager(id) => out.extend_from_slice(&[1, *id]),
            Row::Overhead => out.push(2),
            Row::Others(database) => {
                out.push(3);
                out.extend_from_slice(&database.to_le_bytes());
            }
        }
        for v in counters_fields(c) {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    for (database, count) in &state.evictions {
        out.extend_from_slice(&database.to_le_bytes());
        out.extend_from_slice(&count.to_le_bytes());
    }
    for hour in &state.hours {
        out.extend_from_slice(&hour.start.to_le_bytes());
        for v in std::iter::once(hour.wal_bytes).chain(hour.wal_bytes_under) {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    let crc = crate::checksum::crc32c(0, &out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

fn counters_fields(c: &Counters) -> impl Iterator<Item = u64> {
    [c.records, c.wal_bytes, c.images, c.image_bytes, c.sampled_images]
        .into_iter()
        .chain(c.image_bytes_under)
        .chain(c.wal_bytes_under)
}

/// What the file must belong to: this cluster, and a WAL that reaches its LSN.
#[derive(Debug, Clone, Copy)]
pub struct Expect {
    pub system_identifier: u64,
    pub end_of_wal: u64,
}

/// The figures a file holds, or why it is discarded.
pub fn decode(bytes: &[u8], expect: Expect) -> Result<State, String> {
    let body_len = bytes.len().checked_sub(4).ok_or("the file is shorter than its header")?;
    let (body, crc) = bytes.split_at(body_len);
    let mut r = Reader { bytes: body, at: 0 };
    if r.take(4)? != MAGIC {
        return Err("the file is not compresslab's (its magic number differs)".into());
    }
    let version = r.u32()?;
    if version != LAYOUT_VERSION {
        return Err(format!("the file's layout is version {version}, this library's {LAYOUT_VERSION}"));
    }
    if u32::from_le_bytes(crc.try_into().unwrap_or_default()) != crate::checksum::crc32c(0, body) {
        return Err("the file is damaged (its CRC-32C does not match)".into());
    }
    let header = Header {
        system_identifier: r.u64()?,
        timeline: r.u32()?,
        read_lsn: r.u64()?,
        since_lsn: r.u64()?,
        since_micros: r.u64()? as i64,
        missed_bytes: r.u64()?,
    };
    if header.system_identifier != expect.system_identifier {
        return Err(format!(
            "the file belongs to another cluster (system identifier {}, this one's {})",
            header.system_identifier, expect.system_identifier
        ));
    }
    if header.read_lsn > expect.end_of_wal || header.since_lsn > header.read_lsn {
        return Err(format!(
            "the file's LSN {:X}/{:X} is past the end of WAL {:X}/{:X}",
            header.read_lsn >> 32,
            header.read_lsn as u32,
            expect.end_of_wal >> 32,
            expect.end_of_wal as u32
        ));
    }
    let (nrows, nevictions, nhours) = (r.u32()?, r.u32()?, r.u32()?);
    let mut rows = Vec::new();
    for _ in 0..nrows {
        let row = match r.take(1)?[0] {
            0 => Row::Relation(RelationKey {
                tablespace: r.u32()?,
                database: r.u32()?,
                relfilenode: r.u32()?,
                fork: r.take(1)?[0],
            }),
            1 => Row::ResourceManager(r.take(1)?[0]),
            2 => Row::Overhead,
            3 => Row::Others(r.u32()?),
            kind => return Err(format!("the file is damaged (a row of kind {kind})")),
        };
        let mut f = [0u64; 5 + 2 * SETTINGS];
        for v in &mut f {
            *v = r.u64()?;
        }
        let mut c = Counters {
            records: f[0],
            wal_bytes: f[1],
            images: f[2],
            image_bytes: f[3],
            sampled_images: f[4],
            ..Counters::default()
        };
        c.image_bytes_under.copy_from_slice(&f[5..5 + SETTINGS]);
        c.wal_bytes_under.copy_from_slice(&f[5 + SETTINGS..]);
        rows.push((row, c));
    }
    let mut evictions = Vec::new();
    for _ in 0..nevictions {
        evictions.push((r.u32()?, r.u64()?));
    }
    let mut hours = Vec::new();
    for _ in 0..nhours {
        let start = r.u64()? as i64;
        let wal_bytes = r.u64()?;
        let mut wal_bytes_under = [0u64; SETTINGS];
        for v in &mut wal_bytes_under {
            *v = r.u64()?;
        }
        hours.push(Hour { start, wal_bytes, wal_bytes_under });
    }
    if r.at != body.len() {
        return Err("the file is damaged (bytes after its last hour)".into());
    }
    Ok(State { header, rows, evictions, hours })
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len()).ok_or("the file is cut short")?;
        let taken = &self.bytes[self.at..end];
        self.at = end;
        Ok(taken)
    }

    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap_or_default()))
    }

    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().unwrap_or_default()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> State {
        let key = RelationKey { tablespace: 1663, database: 5, relfilenode: 16384, fork: 0 };
        let c = Counters {
            records: 10,
            wal_bytes: 81920,
            images: 3,
            image_bytes: 24000,
            image_bytes_under: [24000, 9000, 8000, 6000],
            wal_bytes_under: [81920, 66920, 65920, 63920],
            sampled_images: 3,
        };
        State {
            header: Header {
                system_identifier: 7_450_000_000_000_000_001,
                timeline: 1,
                read_lsn: 0x1_2345_6789,
                since_lsn: 0x1_0000_0000,
                since_micros: 1_796_000_400_000_000,
                missed_bytes: 0,
            },
            rows: vec![(Row::Relation(key), c), (Row::ResourceManager(1), c), (Row::Overhead, c), (Row::Others(5), c)],
            evictions: vec![(5, 2)],
            hours: vec![Hour { start: 1_796_000_400, wal_bytes: 81920, wal_bytes_under: [81920, 1, 2, 3] }],
        }
    }

    const HERE: Expect = Expect { system_identifier: 7_450_000_000_000_000_001, end_of_wal: 0x2_0000_0000 };

    #[test]
    fn a_file_reads_back_as_written() {
        assert_eq!(decode(&encode(&state()), HERE), Ok(state()));
    }

    #[test]
    fn a_file_of_another_layout_cluster_or_wal_or_damaged_is_discarded() {
        let bytes = encode(&state());
        let why = |bytes: &[u8], expect: Expect| decode(bytes, expect).unwrap_err();
        assert!(why(&bytes, Expect { system_identifier: 9, ..HERE }).contains("another cluster"));
        assert!(why(&bytes, Expect { end_of_wal: 0x1_0000_0000, ..HERE }).contains("past the end of WAL"));
        let mut version = bytes.clone();
        version[4] = 2;
        assert!(why(&version, HERE).contains("layout is version 2"));
        let mut magic = bytes.clone();
        magic[0] = b'X';
        assert!(why(&magic, HERE).contains("not compresslab's"));
        // every byte flipped, every length cut: discarded, never read wrong
        for at in 8..bytes.len() {
            let mut flipped = bytes.clone();
            flipped[at] ^= 0x40;
            assert!(decode(&flipped, HERE).is_err(), "byte {at}");
        }
        for len in 0..bytes.len() {
            assert!(decode(&bytes[..len], HERE).is_err(), "cut at {len}");
        }
    }
}
