use super::*;

fn relation(database: u32, relfilenode: u32) -> Row {
    Row::Relation(RelationKey { tablespace: 1663, database, relfilenode, fork: 0 })
}

fn wal(bytes: u64) -> Counters {
    Counters {
        records: 1,
        wal_bytes: bytes,
        wal_bytes_under: [bytes, bytes, bytes / 2, bytes / 3],
        ..Counters::default()
    }
}

#[test]
fn a_full_table_evicts_its_smallest_relation_into_its_databases_others() {
    let mut table = Table::new(2);
    table.add(relation(5, 1), &wal(100));
    table.add(relation(5, 2), &wal(300));
    table.add(Row::Overhead, &wal(7));
    // a larger newcomer takes the smallest relation's place
    table.add(relation(6, 3), &wal(200));
    let rows: HashMap<Row, Counters> = table.rows().map(|(r, c)| (*r, *c)).collect();
    assert!(rows.contains_key(&relation(6, 3)) && !rows.contains_key(&relation(5, 1)));
    assert_eq!(rows[&Row::Others(5)].wal_bytes, 100);
    // a smaller newcomer goes to its own database's others
    table.add(relation(6, 4), &wal(50));
    assert_eq!(table.rows().find(|(r, _)| **r == Row::Others(6)).map(|(_, c)| c.wal_bytes), Some(50));
    assert_eq!((table.evicted(5), table.evicted(6)), (1, 1));
    // a row kept adds up; every byte belongs to a row
    table.add(relation(5, 2), &wal(1));
    assert_eq!(table.total().wal_bytes, 100 + 301 + 7 + 200 + 50);
    assert_eq!(table.total().records, 6);
    assert_eq!(table.total().under(WalCompression::Lz4).1, 50 + 150 + 3 + 100 + 25);
}

#[test]
fn a_table_rebuilt_from_its_parts_is_the_same_and_a_smaller_one_evicts() {
    let mut table = Table::new(3);
    for (n, bytes) in [(1, 10), (2, 20), (3, 30), (4, 40)] {
        table.add(relation(5, n), &wal(bytes));
    }
    let rows: Vec<(Row, Counters)> = table.rows().map(|(r, c)| (*r, *c)).collect();
    let evictions: Vec<(u32, u64)> = table.evictions().collect();
    assert_eq!(Table::from_parts(3, rows.clone(), evictions.clone()), table);
    let smaller = Table::from_parts(2, rows, evictions);
    assert_eq!(smaller.total(), table.total());
    assert_eq!(smaller.evicted(5), 2);
}
