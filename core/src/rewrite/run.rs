//! The run of `CALL compresslab.recompress` as a state machine, apart from the server. The
//! procedure calls one step function until it says the run is over, and COMMITs after each
//! step: the server does what [`Run::next`] names, in a transaction of its own, and tells the
//! run what came of it. A table's progress between calls is a [`Saved`] row
//! (`recompress_state`), so a CALL after a cancel, a crash or a restart goes on from the last
//! batch committed.
//!
//! A run: set the column's method (one `ALTER TABLE` a table, each committed), then for each
//! table holding rows enter it (its saved row started or taken up) and rewrite it batch by
//! batch in passes: a pass ends at the block the table ended at when it began (the rows it
//! rewrites land after it); another follows while the last one rewrote or skipped rows (other
//! sessions may have moved rows behind it), [`MAX_PASSES`] at most, and none if no other
//! session wrote meanwhile ([`PassWatch`]). With several tables (partitions, inheritance
//! children), a row another session moved into one already done carries its old value with
//! it, so rounds over all of them go on until one rewrites nothing ([`MAX_ROUNDS`] at most).
//! Last, a table under FORCE ROW LEVEL SECURITY gets the values its owner's policies hid
//! counted.

/// Passes over one table at most.
pub const MAX_PASSES: i32 = 3;
/// Rounds over the tables holding rows at most.
pub const MAX_ROUNDS: u32 = 3;

/// A table's progress as `recompress_state` keeps it: the pass, the block the next batch
/// starts at, the block the pass ends at (0: not known yet), and the rows the pass rewrote or
/// skipped so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Saved {
    pub pass: i32,
    pub next_block: i64,
    pub total_blocks: i64,
    pub pass_changes: i64,
}

impl Saved {
    /// A table entered afresh.
    pub const START: Saved = Saved { pass: 1, next_block: 0, total_blocks: 0, pass_changes: 0 };

    /// Whether a run saved as this, `done` or not and with `same_method` or not, goes on on a
    /// table of `blocks_now` blocks: a finished run, or one with another method, starts over;
    /// so does one whose row does not fit (a pass out of range, a block past the table's end,
    /// negative counts: written by hand, or the table truncated).
    pub fn goes_on(&self, done: bool, same_method: bool, blocks_now: i64) -> bool {
        !done
            && same_method
            && (1..=MAX_PASSES).contains(&self.pass)
            && (0..=blocks_now).contains(&self.next_block)
            && self.pass_changes >= 0
            && self.total_blocks >= 0
    }

    /// The progress after a batch that ended at `next_block` of a table of `blocks` blocks and
    /// rewrote or skipped `changes` rows; `quiet`: no other session took a transaction ID since
    /// the pass began ([`PassWatch::quiet`]).
    pub fn after_batch(&self, next_block: i64, blocks: i64, changes: i64, quiet: bool) -> Advance {
        // a pass ends where the table ended when it began
        let pass_end =
            if self.next_block == 0 || self.total_blocks == 0 { blocks } else { self.total_blocks.min(blocks) };
        let at_end = next_block >= pass_end;
        let finished = at_end && (self.pass_changes + changes == 0 || self.pass >= MAX_PASSES || quiet);
        let another = at_end && !finished;
        Advance {
            saved: Saved {
                pass: self.pass + i32::from(another),
                next_block: if another { 0 } else { next_block.min(pass_end) },
                total_blocks: pass_end,
                pass_changes: if at_end { 0 } else { self.pass_changes + changes },
            },
            pass_ended: at_end,
            finished,
        }
    }
}

/// What a batch did to a table's progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Advance {
    pub saved: Saved,
    /// The batch ended a pass (and another begins unless `finished`).
    pub pass_ended: bool,
    /// The table is done.
    pub finished: bool,
}

/// Whether another session wrote while a pass ran: the next transaction ID when the pass began
/// (taken only when no transaction held one), and the batches since, one ID each. If the next
/// ID when the pass ends is that mark plus the batches, no other session took an ID, and a
/// write needs one: no row moved behind the pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PassWatch {
    /// A pass begins: its mark is taken before its first batch, when it begins at block 0.
    Begins,
    /// The mark (None: another transaction held an ID, or the pass was taken up midway) and
    /// the batches since.
    Marked { mark: Option<i64>, batches: i64 },
}

impl PassWatch {
    /// Whether no other session took an ID in the pass, the next ID being `next_xid` after the
    /// current batch (counted).
    pub fn quiet(&self, next_xid: i64) -> bool {
        matches!(*self, PassWatch::Marked { mark: Some(mark), batches } if next_xid == mark + batches)
    }
}

/// The counts of a run (or of one batch): rows read, rewritten and skipped (changed by
/// another session meanwhile), stored bytes before and after, WAL written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    pub read: i64,
    pub rewritten: i64,
    pub skipped: i64,
    pub bytes_before: i64,
    pub bytes_after: i64,
    pub wal_bytes: i64,
}

impl std::ops::AddAssign for Counts {
    fn add_assign(&mut self, b: Counts) {
        self.read += b.read;
        self.rewritten += b.rewritten;
        self.skipped += b.skipped;
        self.bytes_before += b.bytes_before;
        self.bytes_after += b.bytes_after;
        self.wal_bytes += b.wal_bytes;
    }
}

impl Counts {
    /// Rows a batch or a run changed or found changed: what makes another pass or round.
    pub fn changes(&self) -> i64 {
        self.rewritten + self.skipped
    }
}

/// What the server does next, each in a transaction of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Run the `i`-th `ALTER TABLE ... SET COMPRESSION` statement of the plan.
    Alter(usize),
    /// Enter the `leaf`-th table: start its saved row, or take it up; `restart`: a later round
    /// reads it again from its first block, its counts kept.
    Enter { leaf: usize, restart: bool },
    /// One batch of the `leaf`-th table, watched by `watch`.
    Batch { leaf: usize, watch: PassWatch },
    /// Count what the owner's row-level security hid in the `leaf`-th table.
    CountHidden(usize),
    /// Say what the run did; the procedure ends.
    Finish,
}

/// A run over `leaves` tables holding rows with `alters` statements to run first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    leaves: usize,
    alters: usize,
    step: Step,
    /// The round over the tables, from 1.
    pub round: u32,
    /// The run's counts so far (this CALL's).
    pub counts: Counts,
    /// `counts.changes()` when the round began.
    round_began: i64,
}

/// What the run says when a round ends and another begins: its number and the rows it changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoundOver {
    pub round: u32,
    pub changes: i64,
}

impl Run {
    pub fn new(alters: usize, leaves: usize) -> Run {
        let step = if alters > 0 { Step::Alter(0) } else { Run::first_leaf(leaves, false) };
        Run { leaves, alters, step, round: 1, counts: Counts::default(), round_began: 0 }
    }

    fn first_leaf(leaves: usize, restart: bool) -> Step {
        if leaves == 0 {
            Step::Finish
        } else {
            Step::Enter { leaf: 0, restart }
        }
    }

    /// What the server does next.
    pub fn next(&self) -> Step {
        self.step
    }

    /// The step named by [`Run::next`] is done: an `Alter`, an `Enter` (the table's progress
    /// as taken up) or a `CountHidden`. (A `Batch` reports through [`Run::batch_done`].)
    pub fn done(&mut self, entered: Option<Saved>) {
        self.step = match self.step {
            Step::Alter(i) if i + 1 < self.alters => Step::Alter(i + 1),
            Step::Alter(_) => Run::first_leaf(self.leaves, false),
            Step::Enter { leaf, .. } => {
                // a pass taken up midway cannot tell whether another session wrote before
                let mark = entered.is_none_or(|s| s.next_block == 0);
                Step::Batch {
                    leaf,
                    watch: if mark { PassWatch::Begins } else { PassWatch::Marked { mark: None, batches: 0 } },
                }
            }
            Step::CountHidden(leaf) if leaf + 1 < self.leaves => Step::CountHidden(leaf + 1),
            Step::CountHidden(_) => Step::Finish,
            step @ (Step::Batch { .. } | Step::Finish) => step,
        }
    }

    /// The watch of the current batch with its mark taken (`next_xid` if every transaction ID
    /// assigned so far belongs to a finished transaction) and the batch counted: what
    /// [`PassWatch::quiet`] is asked after it.
    pub fn watch_batch(&mut self, idle_next_xid: Option<i64>) -> PassWatch {
        let Step::Batch { leaf, watch } = self.step else { return PassWatch::Marked { mark: None, batches: 0 } };
        let watch = match watch {
            PassWatch::Begins => PassWatch::Marked { mark: idle_next_xid, batches: 1 },
            PassWatch::Marked { mark, batches } => PassWatch::Marked { mark, batches: batches + 1 },
        };
        self.step = Step::Batch { leaf, watch };
        watch
    }

    /// A batch of the current table committed with `counts` and `advance`. Returns the round
    /// that ended where another begins.
    pub fn batch_done(&mut self, counts: Counts, advance: Advance) -> Option<RoundOver> {
        let Step::Batch { leaf, watch } = self.step else { return None };
        self.counts += counts;
        if !advance.finished {
            let watch = if advance.pass_ended { PassWatch::Begins } else { watch };
            self.step = Step::Batch { leaf, watch };
            return None;
        }
        if leaf + 1 < self.leaves {
            self.step = Step::Enter { leaf: leaf + 1, restart: self.round > 1 };
            return None;
        }
        let changes = self.counts.changes() - self.round_began;
        if self.leaves <= 1 || changes == 0 || self.round >= MAX_ROUNDS {
            self.step = Step::CountHidden(0);
            return None;
        }
        let over = RoundOver { round: self.round, changes };
        self.round += 1;
        self.round_began = self.counts.changes();
        self.step = Run::first_leaf(self.leaves, true);
        Some(over)
    }
}
