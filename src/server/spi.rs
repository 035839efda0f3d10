//! Read-only queries of one row. pgrx's `Spi::get_one*` run their query as an update, which
//! first assigns the transaction an ID: PostgreSQL refuses that on a standby ("cannot assign
//! TransactionIds during recovery") and in the leader of a parallel query ("cannot assign XIDs
//! during a parallel operation"), and elsewhere it spends an XID on a read. These run the query
//! read-only, as `Spi::connect`'s `select` does.

use pgrx::datum::{DatumWithOid, FromDatum, IntoDatum};
use pgrx::spi::{Spi, SpiResult};

/// The first column of the query's first row.
pub fn select_one<A: FromDatum + IntoDatum>(query: &str, args: &[DatumWithOid<'_>]) -> SpiResult<Option<A>> {
    Spi::connect(|client| client.select(query, Some(1), args)?.first().get_one())
}

/// The first two columns of the query's first row.
pub fn select_two<A: FromDatum + IntoDatum, B: FromDatum + IntoDatum>(
    query: &str,
    args: &[DatumWithOid<'_>],
) -> SpiResult<(Option<A>, Option<B>)> {
    Spi::connect(|client| client.select(query, Some(1), args)?.first().get_two())
}

/// The first three columns of the query's first row.
pub fn select_three<A: FromDatum + IntoDatum, B: FromDatum + IntoDatum, C: FromDatum + IntoDatum>(
    query: &str,
    args: &[DatumWithOid<'_>],
) -> SpiResult<(Option<A>, Option<B>, Option<C>)> {
    Spi::connect(|client| client.select(query, Some(1), args)?.first().get_three())
}
