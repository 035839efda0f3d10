//! The steps of `CALL compresslab.recompress`. The procedure calls [`step`] until it returns
//! None, and COMMITs after each call: the first checks the call and plans it (a dry run does
//! all its work there), each later one does what the run's state machine
//! ([`compresslab_core::rewrite::run::Run`]) names, in a transaction of its own: one
//! `ALTER TABLE`, entering a table, one batch, counting what row-level security hid, or the
//! closing NOTICE. The run lives in this backend between the calls of one CALL; a table's
//! progress lives in `compresslab.recompress_state`, read and written as the caller (its
//! policies let a role move only the progress of a column it may update).

use std::cell::RefCell;
use std::time::{Duration, Instant};

use compresslab_core::registry::Named;
use compresslab_core::rewrite::run::{Counts, PassWatch, Run, Saved, Step};
use compresslab_core::rewrite::{self, Triggers};
use pgrx::datum::DatumWithOid;
use pgrx::pg_sys::panic::ErrorReport;
use pgrx::prelude::*;
use pgrx::{IntoDatum, PgRelation, PgSqlErrorCode};

use super::images::DryRunWal;
use super::plan::{prepare, Call, Plan};
use super::{next_xid, run_batch, wal_usage, BatchDone, BatchSpec};
use crate::errors::report;
use crate::server::catalog::spi::{self, run_kept, spi_failed, text_column, typed_column};
use crate::server::subtransaction;

/// Tries of one `ALTER TABLE` that waits `lock_timeout` for its lock.
const ALTER_TRIES: u32 = 10;
/// Progress NOTICEs at most this often.
const NOTICE_EVERY: Duration = Duration::from_secs(5);

/// A CALL's run in this backend, between its steps.
struct Running {
    id: i64,
    relid: pg_sys::Oid,
    column: String,
    plan: Plan,
    batch_rows: u32,
    triggers: Triggers,
    max_replay_lag: Option<f64>,
    run: Run,
    /// Rows read by first passes of the first round: each row of the tables once (later passes
    /// and rounds read rows again).
    read_once: i64,
    /// The next transaction ID when the run began: row versions from it on are the run's own
    /// (or written meanwhile), not rows read.
    run_xid: u32,
    /// This backend's WAL bytes and records when the run began.
    wal_began: (i64, i64),
    /// When the run began; when the last step ended (a table's `run_seconds` counts from
    /// there); when the last progress NOTICE was said.
    began: Instant,
    mark: Instant,
    last_notice: Instant,
}

thread_local! {
    static RUNNING: RefCell<Option<Running>> = const { RefCell::new(None) };
    static LAST_ID: std::cell::Cell<i64> = const { std::cell::Cell::new(0) };
}

/// One step of the run `id` of `call` (None: the first, which checks and plans it). Returns the
/// run's id while steps remain (the procedure COMMITs, then calls again), None when it is over.
pub fn step(id: Option<i64>, call: &Call) -> Option<i64> {
    let Some(id) = id else { return begin(call) };
    let taken = RUNNING.with_borrow_mut(|r| if r.as_ref().is_some_and(|r| r.id == id) { r.take() } else { None });
    let Some(mut running) = taken else {
        report(
            PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
            "no compresslab.recompress run of that number is in progress in this session".into(),
            Some("CALL compresslab.recompress(...) runs the steps; it goes on from the last batch committed."),
        )
    };
    if running.relid != call.relid || running.column != call.column || call.dry_run {
        let other = "the compresslab.recompress run of that number is not this call's: it rewrites another column (a dry run has one step)";
        RUNNING.with_borrow_mut(|r| *r = Some(running));
        report(PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE, other.into(), None);
    }
    // the pause owed for the last step's WAL, taken before this one begins (no row lock held)
    pause(&running);
    match running.run.next() {
        Step::Alter(i) => {
            alter(&running.plan.alter_statements[i], running.plan.lock_timeout_ms);
            running.run.done(None);
        }
        Step::Enter { leaf, restart } => {
            let saved = enter(&running, leaf, restart);
            running.run.done(Some(saved));
        }
        Step::Batch { leaf, watch } => batch(&mut running, leaf, watch),
        Step::CountHidden(leaf) => {
            count_hidden(&running, leaf);
            running.run.done(None);
        }
        Step::Finish => {
            super::values::release();
            let c = running.run.counts;
            notice!(
                "compresslab.recompress: {} done: {} rows read ({} more reads by later passes), {} rewritten ({} skipped: changed meanwhile, then picked up by a later pass), {} stored before, {} after, {} of WAL. The old row versions stay as dead tuples until autovacuum or a VACUUM of the table removes them; plain VACUUM makes their space reusable without shrinking the files (VACUUM FULL does, under an ACCESS EXCLUSIVE lock).",
                running.plan.target,
                running.read_once,
                c.read - running.read_once,
                c.rewritten,
                c.skipped,
                size_pretty(c.bytes_before),
                size_pretty(c.bytes_after),
                size_pretty(c.wal_bytes)
            );
            return None;
        }
    }
    running.mark = Instant::now();
    RUNNING.with_borrow_mut(|r| *r = Some(running));
    Some(id)
}

/// The first step: every check, and the plan. A dry run does all its work here.
fn begin(call: &Call) -> Option<i64> {
    let plan = prepare(call);
    if call.dry_run {
        dry_run(call, &plan);
        return None;
    }
    let id = LAST_ID.with(|last| {
        last.set(last.get() + 1);
        last.get()
    });
    let now = Instant::now();
    let running = Running {
        id,
        relid: call.relid,
        column: call.column.to_string(),
        run: Run::new(plan.alter_statements.len(), plan.leaves.len()),
        plan,
        batch_rows: call.batch_rows as u32,
        triggers: call.triggers,
        max_replay_lag: call.max_replay_lag,
        read_once: 0,
        run_xid: next_xid(false).unwrap_or_default() as u32,
        wal_began: wal_usage(),
        began: now,
        mark: now,
        last_notice: now,
    };
    RUNNING.with_borrow_mut(|r| *r = Some(running));
    Some(id)
}

/// A dry run: every table's batches read and counted, and what the rewrite would store, write
/// ([`DryRunWal`]) and take said.
fn dry_run(call: &Call, plan: &Plan) {
    let mut c = Counts::default();
    let mut wal = DryRunWal::new();
    for &leaf in &plan.leaves {
        let mut table = Counts::default();
        for_each_batch(leaf, call.column, plan, call.batch_rows as u32, Some(&mut wal), |done| table += counts(done));
        // SAFETY: the batches locked the table; AccessShareLock is held to the end.
        let rel = unsafe { PgRelation::with_lock(leaf, pg_sys::AccessShareLock as _) };
        wal.indexes(&rel, table.rewritten, table.read);
        c += table;
    }
    let interval = wal.count.interval();
    notice!(
        "compresslab.recompress dry run of {}: {} values read, {} to rewrite, storing {} now and {} with {} (TOAST's own compression of each); {}: the new values and each row's records, and {} full-page images of the {} heap and TOAST pages it changes first since the last checkpoint began (the high end: one more image of each, if a checkpoint begins before or during the rewrite){}; about {} s {}",
        plan.target,
        c.read,
        c.rewritten,
        size_pretty(c.bytes_before),
        size_pretty(c.bytes_after),
        plan.method.name(),
        interval.words(),
        wal.count.pages_due,
        wal.count.pages_reached,
        if wal.unread {
            "; not the images of a table whose whole rows you may not read (SELECT on some columns only, or row-level security hiding rows): the table owner's dry run counts them"
        } else {
            ""
        },
        rewrite::seconds(interval.about, plan.wal_rate).ceil(),
        match &call.max_wal_rate {
            None => "at full speed".to_string(),
            Some(rate) => format!("at max_wal_rate {rate}"),
        }
    );
}

/// `each` on every dry-run batch of the table `leaf`, from its first block to its end, the WAL
/// it would write counted into `wal`.
fn for_each_batch(
    leaf: pg_sys::Oid,
    column: &str,
    plan: &Plan,
    batch_rows: u32,
    mut wal: Option<&mut DryRunWal>,
    mut each: impl FnMut(&BatchDone),
) {
    let mut first_block = 0;
    loop {
        let done = run_batch(
            &BatchSpec {
                relid: leaf,
                column,
                method: plan.method,
                first_block,
                batch_rows,
                batch_bytes: plan.batch_bytes,
                dry_run: true,
                run_xid: None,
            },
            wal.as_deref_mut(),
        );
        each(&done);
        first_block = done.next_block;
        if first_block >= done.total_blocks {
            break;
        }
    }
}

/// A batch's counts as the run adds them up.
fn counts(done: &BatchDone) -> Counts {
    Counts {
        read: done.examined,
        rewritten: done.rewritten,
        skipped: done.skipped,
        bytes_before: done.bytes_before,
        bytes_after: done.bytes_after,
        wal_bytes: done.wal_written,
    }
}

/// One `ALTER TABLE ... SET COMPRESSION`, waiting at most `lock_timeout` for its ACCESS
/// EXCLUSIVE lock, tried again after a pause while it does not get it.
fn alter(statement: &str, lock_timeout_ms: i64) {
    subtransaction::retried(
        u32::MAX,
        PgSqlErrorCode::ERRCODE_LOCK_NOT_AVAILABLE,
        |tries, _| {
            if tries >= ALTER_TRIES {
                report(
                    PgSqlErrorCode::ERRCODE_LOCK_NOT_AVAILABLE,
                    format!("compresslab.recompress: {statement} did not get its lock within lock_timeout ({lock_timeout_ms} ms) in {tries} tries"),
                    Some("A long transaction holds a lock on the table (see pg_locks); CALL again once it ends, or give a longer lock_timeout."),
                );
            }
            notice!("compresslab.recompress: {statement} waited lock_timeout ({lock_timeout_ms} ms) for its lock; trying again");
            sleep(f64::from(tries.min(5)));
        },
        || {
            set_local("lock_timeout", &lock_timeout_ms.to_string());
            Spi::run(statement).unwrap_or_else(|e| spi_failed(e));
        },
    );
}

/// The caller's row of `recompress_state` for `leaf`, locked: whether it is done, its method
/// and its progress, and the table's size in blocks now.
fn saved_row(leaf: pg_sys::Oid, column: &str) -> Option<(bool, String, Saved, i64)> {
    Spi::connect(|_| {
        let rows = run_kept(
            "SELECT s.state OPERATOR(pg_catalog.=) 'done', s.method, s.pass, s.next_block, s.total_blocks, s.pass_changes, \
                    pg_catalog.pg_relation_size(s.relid) OPERATOR(pg_catalog./) pg_catalog.current_setting('block_size')::pg_catalog.int8 \
               FROM compresslab.recompress_state s \
              WHERE s.relid OPERATOR(pg_catalog.=) $1 AND s.column_name OPERATOR(pg_catalog.=) $2::pg_catalog.name FOR UPDATE",
            &key(leaf, column),
        );
        (rows > 0).then(|| {
            (
                typed_column::<bool>(0, 1).unwrap_or(true),
                text_column(0, 2).unwrap_or_default(),
                Saved {
                    pass: typed_column::<i32>(0, 3).unwrap_or(0),
                    next_block: typed_column::<i64>(0, 4).unwrap_or(-1),
                    total_blocks: typed_column::<i64>(0, 5).unwrap_or(-1),
                    pass_changes: typed_column::<i64>(0, 6).unwrap_or(-1),
                },
                typed_column::<i64>(0, 7).unwrap_or(0),
            )
        })
    })
}

fn key(leaf: pg_sys::Oid, column: &str) -> [DatumWithOid<'_>; 2] {
    [leaf.into(), column.into()]
}

fn write(query: &str, args: &[DatumWithOid]) {
    Spi::connect(|_| run_kept(query, args));
}

/// Enters the table `leaf`: its saved progress taken up if it fits the run (a later round
/// reads it again from its first block, its counts kept), started afresh otherwise.
fn enter(running: &Running, leaf: usize, restart: bool) -> Saved {
    let relid = running.plan.leaves[leaf];
    let column = running.column.as_str();
    if restart {
        write(
            "UPDATE compresslab.recompress_state s SET state = 'running', pass = 1, next_block = 0, pass_changes = 0 \
              WHERE s.relid OPERATOR(pg_catalog.=) $1 AND s.column_name OPERATOR(pg_catalog.=) $2::pg_catalog.name",
            &key(relid, column),
        );
    }
    let method = running.plan.method.name();
    let saved = match saved_row(relid, column) {
        Some((done, m, saved, blocks)) if saved.goes_on(done, m == method, blocks) => saved,
        Some(_) => {
            write(
                "DELETE FROM compresslab.recompress_state s \
                  WHERE s.relid OPERATOR(pg_catalog.=) $1 AND s.column_name OPERATOR(pg_catalog.=) $2::pg_catalog.name",
                &key(relid, column),
            );
            Saved::START
        }
        None => Saved::START,
    };
    write(
        "INSERT INTO compresslab.recompress_state AS s \
             (relid, column_name, method, state, pass, next_block, total_blocks, rows_examined, rows_rewritten, \
              rows_skipped, pass_changes, bytes_before, bytes_after, wal_bytes, run_seconds, pid, started, updated) \
         VALUES ($1, $2::pg_catalog.name, $3, 'running', 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, pg_catalog.pg_backend_pid(), \
                 pg_catalog.now(), pg_catalog.now()) \
         ON CONFLICT ON CONSTRAINT recompress_state_pkey DO UPDATE SET pid = EXCLUDED.pid, updated = EXCLUDED.updated",
        &[relid.into(), column.into(), method.into()],
    );
    saved
}

/// One batch of the table `leaf`: its progress locked, the batch run from where it stands,
/// the progress written.
fn batch(running: &mut Running, leaf: usize, watch: PassWatch) {
    let relid = running.plan.leaves[leaf];
    wait_for_standbys(running);
    if running.triggers == Triggers::Skip {
        set_local("session_replication_role", "replica");
    }
    // a pass's mark: the next transaction ID before this transaction takes one (the lock below)
    let idle = if watch == PassWatch::Begins { next_xid(true) } else { None };
    let watch = running.run.watch_batch(idle);
    let Some((_, _, saved, _)) = saved_row(relid, &running.column) else {
        report(
            PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
            format!(
                "compresslab.recompress: the progress of {} was deleted during the run",
                running.plan.leaf_targets[leaf]
            ),
            Some("CALL compresslab.recompress again: it starts that table over."),
        )
    };
    let plan = &running.plan;
    let done = run_batch(
        &BatchSpec {
            relid,
            column: &running.column,
            method: plan.method,
            first_block: saved.next_block as u64,
            batch_rows: running.batch_rows,
            batch_bytes: plan.batch_bytes,
            dry_run: false,
            run_xid: Some(running.run_xid),
        },
        None,
    );
    let c = counts(&done);
    if saved.pass == 1 && running.run.round == 1 {
        running.read_once += c.read;
    }
    let quiet = next_xid(false).is_some_and(|next| watch.quiet(next));
    let advance = saved.after_batch(done.next_block as i64, done.total_blocks as i64, c.changes(), quiet);
    let s = advance.saved;
    write(
        "UPDATE compresslab.recompress_state s SET next_block = $3, pass = $4, pass_changes = $5, total_blocks = $6, \
                rows_examined = s.rows_examined OPERATOR(pg_catalog.+) $7, \
                rows_rewritten = s.rows_rewritten OPERATOR(pg_catalog.+) $8, \
                rows_skipped = s.rows_skipped OPERATOR(pg_catalog.+) $9, \
                bytes_before = s.bytes_before OPERATOR(pg_catalog.+) $10, \
                bytes_after = s.bytes_after OPERATOR(pg_catalog.+) $11, \
                wal_bytes = s.wal_bytes OPERATOR(pg_catalog.+) $12, \
                run_seconds = s.run_seconds OPERATOR(pg_catalog.+) $13, \
                state = $14, pid = pg_catalog.pg_backend_pid(), updated = pg_catalog.clock_timestamp() \
          WHERE s.relid OPERATOR(pg_catalog.=) $1 AND s.column_name OPERATOR(pg_catalog.=) $2::pg_catalog.name",
        &[
            relid.into(),
            running.column.as_str().into(),
            s.next_block.into(),
            s.pass.into(),
            s.pass_changes.into(),
            s.total_blocks.into(),
            c.read.into(),
            c.rewritten.into(),
            c.skipped.into(),
            c.bytes_before.into(),
            c.bytes_after.into(),
            c.wal_bytes.into(),
            running.mark.elapsed().as_secs_f64().into(),
            if advance.finished { "done" } else { "running" }.into(),
        ],
    );
    if let Some(over) = running.run.batch_done(c, advance) {
        notice!(
            "compresslab.recompress: {}: round {} rewrote {} rows; another round over its {} tables finds any row moved into one already done",
            running.plan.target,
            over.round,
            over.changes,
            running.plan.leaves.len()
        );
    }
    if !advance.finished && running.last_notice.elapsed() > NOTICE_EVERY {
        let total = running.run.counts;
        notice!(
            "compresslab.recompress: {}: pass {}, block {} of {}; this call: {} rows rewritten ({} skipped: changed meanwhile), {} stored before, {} after, {} of WAL",
            running.plan.leaf_targets[leaf],
            saved.pass,
            done.next_block,
            s.total_blocks,
            total.rewritten,
            total.skipped,
            size_pretty(total.bytes_before),
            size_pretty(total.bytes_after),
            size_pretty(total.wal_bytes)
        );
        running.last_notice = Instant::now();
    }
}

/// Under FORCE ROW LEVEL SECURITY the owner's own policies hide rows from the rewrite, which
/// runs as the owner: what they left is counted (a heap scan reads every row), not taken as done.
fn count_hidden(running: &Running, leaf: usize) {
    let relid = running.plan.leaves[leaf];
    let forced = spi::select_one::<bool>(
        "SELECT c.relrowsecurity AND c.relforcerowsecurity FROM pg_catalog.pg_class c WHERE c.oid OPERATOR(pg_catalog.=) $1",
        &[relid.into()],
    )
    .unwrap_or_else(|e| spi_failed(e));
    if forced != Some(true) {
        return;
    }
    let mut hidden = 0;
    for_each_batch(relid, &running.column, &running.plan, running.batch_rows, None, |done| hidden += done.rewritten);
    write(
        "UPDATE compresslab.recompress_state s SET rows_hidden = $3 \
          WHERE s.relid OPERATOR(pg_catalog.=) $1 AND s.column_name OPERATOR(pg_catalog.=) $2::pg_catalog.name",
        &[relid.into(), running.column.as_str().into(), hidden.into()],
    );
    if hidden > 0 {
        ErrorReport::new(
            PgSqlErrorCode::ERRCODE_WARNING,
            format!(
                "compresslab.recompress: {}: {hidden} values left as they were, in rows the table owner's row-level security policies hide from the rewrite (FORCE ROW LEVEL SECURITY) or written meanwhile",
                running.plan.leaf_targets[leaf]
            ),
            "compresslab",
        )
        .set_hint("A role that bypasses row-level security sees them: ALTER TABLE ... NO FORCE ROW LEVEL SECURITY for the rewrite, or give the owner a policy that shows them.")
        .report(PgLogLevel::WARNING);
    }
}

/// Waits while a standby replays more than `max_replay_lag` behind.
fn wait_for_standbys(running: &mut Running) {
    let Some(lag) = running.max_replay_lag else { return };
    while spi::select_one::<bool>(
        "SELECT EXISTS (SELECT FROM pg_catalog.pg_stat_replication r \
                         WHERE r.replay_lag OPERATOR(pg_catalog.>) pg_catalog.make_interval(secs => $1))",
        &[lag.into()],
    )
    .unwrap_or_else(|e| spi_failed(e))
        == Some(true)
    {
        if running.last_notice.elapsed() > NOTICE_EVERY {
            let behind = spi::select_one::<String>(
                "SELECT pg_catalog.make_interval(secs => $1)::pg_catalog.text",
                &[lag.into()],
            )
            .unwrap_or_else(|e| spi_failed(e))
            .unwrap_or_default();
            notice!("compresslab.recompress: paused while a standby replays more than {behind} behind");
            running.last_notice = Instant::now();
        }
        sleep(0.5);
    }
}

/// The pause that keeps the run's WAL, averaged from its start, at or under `max_wal_rate`:
/// every byte this backend wrote since (its batches, the progress rows, the commits), as the
/// LSN counts it. No pause without a cap.
fn pause(running: &Running) {
    let Some(rate) = running.plan.wal_rate else { return };
    let (bytes, records) = wal_usage();
    let (bytes0, records0) = running.wal_began;
    let wal = rewrite::wal_lsn_bytes((bytes - bytes0) as f64, (records - records0) as f64);
    sleep(rewrite::pause_seconds(wal, running.began.elapsed().as_secs_f64(), rate));
}

/// A setting for the rest of the transaction (`set_config(..., true)`).
fn set_local(name: &str, value: &str) {
    spi::select_one::<String>("SELECT pg_catalog.set_config($1, $2, true)", &[name.into(), value.into()])
        .unwrap_or_else(|e| spi_failed(e));
}

/// Sleeps `seconds`, answering a cancel or a shutdown at once (as `pg_sleep`).
fn sleep(seconds: f64) {
    let until = Instant::now() + Duration::from_secs_f64(seconds.max(0.0));
    loop {
        check_for_interrupts!();
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        // SAFETY: this backend's latch, waited on and reset as pg_sleep does.
        unsafe {
            pg_sys::WaitLatch(
                pg_sys::MyLatch,
                (pg_sys::WL_LATCH_SET | pg_sys::WL_TIMEOUT | pg_sys::WL_EXIT_ON_PM_DEATH) as i32,
                left.as_millis().clamp(1, 1000) as _,
                pg_sys::PG_WAIT_EXTENSION,
            );
            pg_sys::ResetLatch(pg_sys::MyLatch);
        }
    }
}

/// A byte count as PostgreSQL's `pg_size_pretty` words it.
fn size_pretty(bytes: i64) -> String {
    // SAFETY: pg_size_pretty(bigint) takes a non-NULL int8 and returns text.
    unsafe { pgrx::direct_function_call::<String>(pg_sys::pg_size_pretty, &[bytes.into_datum()]) }.unwrap_or_default()
}
