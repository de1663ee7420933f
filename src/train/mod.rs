//! Profiling a burn-train `Learner` run (cargo feature `train`).
//!
//! ```no_run
//! # use std::sync::Arc;
//! # use burn::backend::{Autodiff, NdArray};
//! # use burn::data::dataloader::DataLoader;
//! use burn_profiled::Profiled;
//! use burn_profiled::train::TrainProfiling;
//! # type B = Autodiff<Profiled<NdArray>>;
//! # fn loaders() -> (Arc<dyn DataLoader<B, ()>>, ()) { unimplemented!() }
//!
//! let device = Default::default();
//! // `BURN_PROFILED=profile` (or a preset, or a config file); nothing is on when it is unset.
//! let profiling = TrainProfiling::from_env::<B>(&device, "target/run").unwrap();
//! # let (train_loader, _valid_loader) = loaders();
//! let train_loader = profiling.train_loader(train_loader);  // the one registration
//! // SupervisedTraining::new(dir, train_loader, valid_loader)
//! //     .metric_train_numeric(profiling.step_time_metric())  // optional: in the dashboard
//! //     .metric_train_numeric(profiling.top_op_metric())
//! //     ...launch(learner);
//! let summary = profiling.finish().unwrap();                  // trace.json, ops.json, run.json
//! ```
//!
//! # Where it hooks in, and why there
//!
//! burn-train 0.21 offers metrics, metric loggers, renderers, checkpointing and early-stopping
//! strategies, an interrupter, a learning-rate scheduler and custom training strategies. Of
//! these, only three run on the training thread at every iteration: the train data loader's
//! `next()`, the learning-rate scheduler's `step()`, and a custom strategy, which replaces
//! burn-train's whole loop. Metrics, loggers and renderers run on burn-train's worker threads,
//! up to two iterations behind the step, so they cannot switch the per-op tools at a step
//! boundary or time a step.
//!
//! The train data loader is the cleanest: its iterator's `next()` is where an iteration starts
//! and where the previous one ended, on the training thread, for every execution strategy
//! (with one device, the thread that called `launch`), and wrapping it changes nothing else of
//! the run. The learning-rate scheduler is called too, but its state is saved in checkpoints
//! and its type is part of the learner's; a custom strategy would reimplement burn-train's loop
//! (gradient accumulation, validation, checkpoints, early stopping) and drift from it.
//!
//! So [`TrainProfiling::train_loader`] wraps the train loader. Each `next()`:
//! * ends the step in progress: the `step` stopwatch measurement and NVTX range, the step time,
//!   and the session's `finish_iter` (warm-up, per-op tools on after it, the capture range,
//!   the memory guard: past its limit, it stops the run through the interrupter given to
//!   [`TrainProfiling::set_interrupter`], and the loader ends every epoch);
//! * loads the next batch inside a `load batch` measurement and range;
//! * opens the next step.
//!
//! A step is thus everything burn-train does for one batch: the forward and backward pass
//! (`TrainStep::step`), the optimizer step, and handing the output to the metrics thread. The
//! split into forward, backward and optimizer is not visible to any hook: put
//! `nvtx::scope("forward", ..)` (and `"backward"`) in your `TrainStep::step`, and override
//! `TrainStep::optimize` for `"optimizer"`; the op table groups ops by those phases.
//! Validation runs between epochs, outside any step.
//!
//! With several devices, burn-train splits the loader. `ExecutionStrategy::MultiDevice` takes
//! one batch per device for each optimizer step on the training thread: each batch then counts
//! as a step, so a run on N devices has N steps per optimizer step (warm-up counts them that
//! way too), and the time from one batch to the next says little there: read such a run by its
//! op table by device (`stats::GroupBy::OpAndDevice`) instead. With DDP, each device's worker
//! thread iterates its own part of the loader: the steps are those of the first worker to take
//! a batch, and the other workers' batches pass through unmeasured (their ops are still in the
//! op table, under their device). When the memory guard stops the run, every worker's loader
//! ends its epoch at its next batch.
//!
//! Dumps (the `debug` preset): the last step's batch, through the function given to
//! [`TrainProfiling::train_loader_dumping`]. The gradients are not reachable from a hook:
//! burn-train passes them from `TrainStep::step` straight to the optimizer. Call
//! `dump::global::set_gradients_from::<B>(&grads)` in your `TrainStep::step` for them.

mod loader;
mod metrics;
mod progress;

use std::path::PathBuf;
use std::sync::Arc;

use burn_backend::Backend;

use crate::Session;
use crate::config::{ConfigError, Preset, RuntimeConfig};
use crate::dump::Map;
use burn_profiled_core::train_steps::TrainRun;

pub use loader::ProfiledLoader;
pub use metrics::{StepTimeMetric, TopOpMetric};
pub use progress::PlainProgress;

/// Drives a [`Session`] from a burn-train `Learner` run: see the [module docs](self).
#[derive(Clone)]
pub struct TrainProfiling {
    /// What the loader (on the training thread), the metrics and the user share.
    run: Arc<TrainRun<Session>>,
}

impl TrainProfiling {
    /// Starts a session with `config` on `device` (of the training backend `B`), writing its
    /// artefacts to `out_dir` at [`finish`](TrainProfiling::finish).
    ///
    /// # Panics
    /// As [`Session::start`]: if a tool it enables was enabled before in this process.
    pub fn start<B: Backend>(
        config: RuntimeConfig,
        device: &B::Device,
        out_dir: impl Into<PathBuf>,
    ) -> Self {
        let session = Session::start::<B>(config, device, out_dir);
        TrainProfiling {
            run: Arc::new(TrainRun::new(
                session,
                Session::finish_iter,
                Session::finish,
            )),
        }
    }

    /// [`start`](TrainProfiling::start) with the configuration `BURN_PROFILED` names (a
    /// preset or a file), the `train` preset (everything off) when it is unset.
    pub fn from_env<B: Backend>(
        device: &B::Device,
        out_dir: impl Into<PathBuf>,
    ) -> Result<Self, ConfigError> {
        let config = RuntimeConfig::from_env_or(Preset::Train)?;
        Ok(Self::start::<B>(config, device, out_dir))
    }

    /// Wraps burn-train's train data loader: every batch it gives starts a step (see the
    /// [module docs](self)). Pass the result to `SupervisedTraining::new`.
    pub fn train_loader<B: Backend, I: 'static>(
        &self,
        loader: Arc<dyn burn::data::dataloader::DataLoader<B, I>>,
    ) -> Arc<dyn burn::data::dataloader::DataLoader<B, I>> {
        Arc::new(ProfiledLoader::new(self.clone(), loader, None))
    }

    /// [`train_loader`](TrainProfiling::train_loader), and with dumps on (the `debug`
    /// preset) `to_dump` turns each batch into what the dump records under `batch`; the last
    /// step's is dumped at [`finish`](TrainProfiling::finish).
    pub fn train_loader_dumping<B: Backend, I: 'static>(
        &self,
        loader: Arc<dyn burn::data::dataloader::DataLoader<B, I>>,
        to_dump: impl Fn(&I) -> Map + Send + Sync + 'static,
    ) -> Arc<dyn burn::data::dataloader::DataLoader<B, I>> {
        Arc::new(ProfiledLoader::new(
            self.clone(),
            loader,
            Some(Arc::new(to_dump)),
        ))
    }

    burn_profiled_core::train_profiling_methods!("op");

    /// Gives the session the thread its device's kernels are launched on (see
    /// [`Session::set_launch_thread`]): burn-train runs the steps, so they stay on the
    /// training thread, and each op queues its range on the launch thread around its kernels.
    pub fn set_launch_thread(&self, launch_thread: crate::LaunchThread) {
        if let Some(session) = self.run.session().as_mut() {
            session.set_launch_thread(launch_thread);
        }
    }

    /// Gives the integration the run's interrupter (`SupervisedTraining::interrupter`): when
    /// the memory guard (`[host] memory_limit_mib`) stops the run, it stops burn-train's loop
    /// with the guard's message, so no validation epoch or checkpoint follows. Without it the
    /// train loader only ends every epoch from then on.
    ///
    /// ```ignore
    /// let training = SupervisedTraining::new(dir, profiling.train_loader(train), valid);
    /// profiling.set_interrupter(training.interrupter());
    /// ```
    pub fn set_interrupter(&self, interrupter: burn::train::Interrupter) {
        let stop = move |why: &str| interrupter.stop(Some(why));
        self.run.steps.set_interrupt(Box::new(stop));
    }
}
