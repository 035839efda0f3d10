//! Functions an earlier release's SQL declares and this library no longer has: the 0.7.0
//! procedure `recompress` called nine helpers that 0.8.0 folds into `recompress_step`. A
//! database whose `ALTER EXTENSION compresslab UPDATE` has not run yet still calls them by
//! their C symbols (and `CREATE EXTENSION compresslab VERSION '0.7.0'` needs the symbols to
//! exist): each refuses with 55000 and the update to run, before reading any argument.

use pgrx::prelude::*;
use pgrx::PgSqlErrorCode;

use crate::errors::report;
use crate::server::catalog::spi;

fn retired(name: &str) -> ! {
    let installed = spi::select_one::<String>(
        "SELECT extversion FROM pg_catalog.pg_extension WHERE extname OPERATOR(pg_catalog.=) 'compresslab'",
        &[],
    )
    .ok()
    .flatten()
    .unwrap_or_default();
    report(
        PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
        format!(
            "compresslab's SQL is version {installed}, its library {}: compresslab.{name} is no longer in the library",
            env!("CARGO_PKG_VERSION")
        ),
        Some("Run ALTER EXTENSION compresslab UPDATE in this database."),
    )
}

macro_rules! retired {
    ($($name:ident),* $(,)?) => {$(
        #[pg_extern(sql = false)]
        fn $name() -> bool {
            retired(stringify!($name))
        }
    )*};
}

retired!(
    fresh_copy,
    recompress_wanted,
    recompress_copy,
    recompress_copied,
    recompress_next_xid,
    recompress_prepare,
    recompress_batch,
    recompress_pause,
    recompress_estimate,
);
