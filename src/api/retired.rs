//! Functions an earlier release's SQL declares and this library no longer has: the 0.7.0
//! procedure `recompress` called nine helpers that 0.8.0 folds into `recompress_step`. A
//! database whose `ALTER EXTENSION compresslab UPDATE` has not run yet still calls them by
//! their C symbols (and `CREATE EXTENSION compresslab VERSION '0.7.0'` needs the symbols to
//! exist): each refuses with 55000 and the update to run, before reading any argument.

use pgrx::prelude::*;

use crate::errors::update_not_run;
use crate::server::catalog::installed_version;

fn retired(name: &str) -> ! {
    let installed = installed_version().unwrap_or_default();
    update_not_run(&installed, &format!("compresslab.{name} is no longer in the library"))
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
