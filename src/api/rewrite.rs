//! `CALL compresslab.recompress(...)`: recompresses a column's existing values in place,
//! online. The procedure is plpgsql (`rewrite.sql`: it COMMITs between steps, which a Rust
//! function cannot); it calls [`recompress_step`] until the run is over. The run's steps and
//! batches are `crate::server::rewrite`'s; its state machine is the core's.

use compresslab_core::registry::parse_named;
use compresslab_core::rewrite::Triggers;
use pgrx::datum::Interval;
use pgrx::prelude::*;

use crate::errors::{required, OrRaise};
use crate::server::catalog::relations::RegClass;
use crate::server::rewrite::{self, Call};

extension_sql_file!("rewrite.sql", name = "recompress", requires = [recompress_step]);

/// One step of `CALL compresslab.recompress` with these arguments: `run` NULL checks the call
/// and plans it (a dry run does all its work then); each later call does the run's next step
/// in the caller's transaction, which the procedure then commits. Returns the run's number
/// while steps remain, NULL when it is over.
#[pg_extern(volatile, parallel_unsafe)]
#[allow(clippy::too_many_arguments)]
fn recompress_step(
    run: Option<i64>,
    relation: Option<RegClass>,
    column_name: Option<&str>,
    method: Option<&str>,
    batch_rows: Option<i32>,
    max_wal_rate: Option<&str>,
    max_replay_lag: Option<Interval>,
    lock_timeout: Option<Interval>,
    triggers: Option<&str>,
    dry_run: Option<bool>,
) -> Option<i64> {
    let call = Call {
        relid: required(relation, "relation").oid(),
        column: required(column_name, "column_name"),
        method,
        batch_rows: required(batch_rows, "batch_rows"),
        max_wal_rate,
        max_replay_lag: max_replay_lag.map(seconds),
        lock_timeout: lock_timeout.map(seconds),
        triggers: parse_named::<Triggers>(required(triggers, "triggers")).or_raise(),
        dry_run: required(dry_run, "dry_run"),
    };
    rewrite::step(run, &call)
}

fn seconds(interval: Interval) -> f64 {
    interval.as_micros() as f64 / 1e6
}
