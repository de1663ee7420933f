//! The steps of a burn-train run, as each edition's train-loader wrapper keeps them: burn-train
//! runs the loop, so a step ends where the loader is asked for the next batch.

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::thread::ThreadId;
use std::time::Instant;

use crate::dump::Map;
use crate::recorder::{RunStopped, RunSummary};
use crate::{nvtx, stopwatch};

/// Stops the run with a message (burn-train's interrupter).
pub type Interrupt = Box<dyn Fn(&str) + Send>;

/// The steps so far, shared by the loader (on the training thread) and the user.
#[derive(Default)]
pub struct TrainSteps(Mutex<Steps>);

#[derive(Default)]
struct Steps {
    /// The step in progress: when it started, and the thread it runs on.
    open: Option<(Instant, ThreadId)>,
    /// The thread whose batches are the steps: the first to take one.
    thread: Option<ThreadId>,
    /// The last finished step's time, in seconds.
    last_seconds: Option<f64>,
    /// The memory guard stopped the run: the loader ends every epoch from now on.
    stopped: bool,
    /// The last step's batch, for the dump at the end (the `debug` preset).
    last_batch: Option<Map>,
    /// The run's interrupter, stopped with the memory guard's message.
    interrupt: Option<Interrupt>,
}

impl TrainSteps {
    fn steps(&self) -> MutexGuard<'_, Steps> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the batches this thread takes are the steps: it is the first thread to take one.
    pub fn is_step_thread(&self) -> bool {
        let current = std::thread::current().id();
        *self.steps().thread.get_or_insert(current) == current
    }

    /// Ends the step in progress, if any: its measurement and range (on its own thread), its
    /// time, and the session's iteration (`finish_iter`); past a memory limit, or after a NaN
    /// with `[numerics] check_finite = "stop"`, the run stops.
    pub fn end_step(&self, finish_iter: impl FnOnce() -> Result<(), RunStopped>) {
        let mut steps = self.steps();
        let Some((started, thread)) = steps.open.take() else {
            return;
        };
        if thread == std::thread::current().id() {
            stopwatch::end_meas("step");
            nvtx::range_pop(Some("step"));
        }
        steps.last_seconds = Some(started.elapsed().as_secs_f64());
        // The session has said why on stderr.
        if let Err(exceeded) = finish_iter() {
            steps.stopped = true;
            if let Some(interrupt) = &steps.interrupt {
                interrupt(&exceeded.to_string());
            }
        }
    }

    /// A batch arrived: the next step starts.
    pub fn start_step(&self) {
        let mut steps = self.steps();
        nvtx::range_push("step");
        stopwatch::start_meas("step");
        steps.open = Some((Instant::now(), std::thread::current().id()));
    }

    /// Whether the memory guard stopped the run.
    pub fn stopped(&self) -> bool {
        self.steps().stopped
    }

    /// Stops the run with `interrupt` when the memory guard does.
    pub fn set_interrupt(&self, interrupt: Interrupt) {
        self.steps().interrupt = Some(interrupt);
    }

    /// The time of the last finished step, in seconds.
    pub fn last_seconds(&self) -> Option<f64> {
        self.steps().last_seconds
    }

    /// Keeps `batch` as the last step's, for the dump at the end.
    pub fn keep_batch(&self, batch: Map) {
        self.steps().last_batch = Some(batch);
    }

    /// The last step's batch, taken.
    pub fn take_batch(&self) -> Option<Map> {
        self.steps().last_batch.take()
    }

    /// One `next()` of a train loader wrapped by an edition: on the steps' thread, ends the
    /// step in progress (`end_step` does it with the session's `finish_iter`, and says `false`
    /// once the session finished: batches then pass through untouched), loads the next batch
    /// (`next`) in a `load batch` measurement and range, keeps what `to_dump` makes of it
    /// with dumps on, and starts the next step. Another thread's batches (a DDP worker's)
    /// pass through; after the memory guard stopped the run, every epoch ends.
    pub fn next_batch<T>(
        &self,
        mut next: impl FnMut() -> Option<T>,
        end_step: impl FnOnce() -> bool,
        to_dump: impl FnOnce(&T) -> Option<Map>,
    ) -> Option<T> {
        if !self.is_step_thread() {
            if self.stopped() {
                return None;
            }
            return next();
        }
        if !end_step() {
            return next();
        }
        if self.stopped() {
            return None;
        }
        let batch = stopwatch::measure("load batch", || nvtx::scope("load batch", &mut next))?;
        if crate::dump::global::is_enabled()
            && let Some(dumped) = to_dump(&batch)
        {
            self.keep_batch(dumped);
        }
        self.start_step();
        Some(batch)
    }

    /// The end of a run: closes the step in progress (`finish_iter` on `session`), dumps the
    /// last step's batch (with dumps on), and finishes the session (`finish`); the session's artefacts are
    /// written also when the dump failed or differs from its reference (the dump's error comes
    /// after).
    pub fn finish_run<Session, Summary>(
        &self,
        mut session: Session,
        finish_iter: impl FnOnce(&mut Session) -> Result<(), RunStopped>,
        finish: impl FnOnce(Session) -> std::io::Result<Summary>,
    ) -> std::io::Result<Summary> {
        self.end_step(|| finish_iter(&mut session));
        let dumped = self.take_batch().map_or(Ok(()), |batch| {
            let json = crate::dump::AddOptions::new(crate::dump::DumpType::Json);
            crate::dump::global::add_tensor_data("batch", batch, json)
                .and_then(|()| crate::dump::global::dump(true).map(|_| ()))
        });
        let summary = finish(session)?;
        dumped.map_err(std::io::Error::other)?;
        Ok(summary)
    }
}

/// A burn-train run's session and steps, shared by the train loader (on the training
/// thread), the dashboard's metrics and the user: each edition's `TrainProfiling` holds one.
pub struct TrainRun<S> {
    session: Mutex<Option<S>>,
    /// The steps so far.
    pub steps: TrainSteps,
    finish_iter: fn(&mut S) -> Result<(), RunStopped>,
    finish: fn(S) -> std::io::Result<RunSummary>,
}

impl<S> TrainRun<S> {
    /// A run of `session`, no step taken yet: `finish_iter` and `finish` are the session's
    /// (its `Session::finish_iter` and `Session::finish`).
    pub fn new(
        session: S,
        finish_iter: fn(&mut S) -> Result<(), RunStopped>,
        finish: fn(S) -> std::io::Result<RunSummary>,
    ) -> Self {
        TrainRun {
            session: Mutex::new(Some(session)),
            steps: TrainSteps::default(),
            finish_iter,
            finish,
        }
    }

    /// The session: `None` once the run finished.
    pub fn session(&self) -> MutexGuard<'_, Option<S>> {
        self.session.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The train loader's next batch (`next` takes it from the wrapped loader): on the
    /// training thread it ends the step in progress, loads the batch in a `load batch`
    /// measurement and range, keeps what `to_dump` makes of it (with dumps on) and starts the
    /// next step; once the run finished, batches pass through untouched.
    pub fn next_batch<T>(
        &self,
        next: impl FnMut() -> Option<T>,
        to_dump: impl FnOnce(&T) -> Option<Map>,
    ) -> Option<T> {
        self.steps.next_batch(
            next,
            || {
                let mut session = self.session();
                let Some(session) = session.as_mut() else {
                    return false;
                };
                self.steps.end_step(|| (self.finish_iter)(session));
                true
            },
            to_dump,
        )
    }

    /// Closes the step in progress, dumps the last step's batch (with dumps on), and finishes
    /// the session (see [`TrainSteps::finish_run`]); `Ok(None)` when it was finished before.
    pub fn finish(&self) -> std::io::Result<Option<RunSummary>> {
        let Some(session) = self.session().take() else {
            return Ok(None);
        };
        (self.steps)
            .finish_run(session, self.finish_iter, self.finish)
            .map(Some)
    }
}

/// How often the op statistics are read for [`TopOp`]: a snapshot merges every thread's rows.
const TOP_OP_EVERY: std::time::Duration = std::time::Duration::from_millis(500);

/// The op that takes the most op time (device time when recorded) and its share in percent,
/// read from the statistics at most every half second, for burn-train's dashboard.
#[derive(Clone, Default)]
pub struct TopOp {
    /// The last reading: when, the op and its share.
    read: Option<(Instant, String, f64)>,
}

impl TopOp {
    /// The top op and its share; `-` and 0 while op statistics are off (warm-up, or a preset
    /// without them).
    pub fn current(&mut self) -> (&str, f64) {
        // Read again when the last reading is old, or found no op yet (warm-up).
        let stale = self
            .read
            .as_ref()
            .is_none_or(|(at, _, share)| *share == 0.0 || at.elapsed() >= TOP_OP_EVERY);
        if stale {
            let (op, share) = crate::stats::snapshot()
                .rows(crate::stats::GroupBy::Op)
                .into_iter()
                .next()
                // With device time, rows come sorted by it: the share is the device's too.
                .map_or_else(
                    || ("-".to_owned(), 0.0),
                    |row| (row.op, row.device_percent.unwrap_or(row.total_percent)),
                );
            self.read = Some((Instant::now(), op, share));
        }
        self.read
            .as_ref()
            .map_or(("-", 0.0), |(_, op, share)| (op.as_str(), *share))
    }
}
