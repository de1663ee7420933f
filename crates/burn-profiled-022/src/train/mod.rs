//! Profiling a burn-train `Learner` run on Burn 0.22 (cargo feature `train`): one
//! registration, the train data loader, as on Burn 0.21 (`burn_profiled::train`).
//!
//! ```no_run
//! # use std::sync::Arc;
//! # use burn::data::dataloader::DataLoader;
//! use burn::tensor::{Device, DeviceKind};
//! use burn_profiled_022::train::TrainProfiling;
//! # fn loaders() -> (Arc<dyn DataLoader<()>>, ()) { unimplemented!() }
//!
//! let device = Device::wgpu(DeviceKind::DefaultDevice).autodiff();
//! // `BURN_PROFILED=profile` (or a preset, or a config file); nothing is on when it is unset.
//! let profiling = TrainProfiling::from_env(&device, "target/run").unwrap();
//! # let (train_loader, _valid_loader) = loaders();
//! let train_loader = profiling.train_loader(train_loader); // the one registration
//! // let training = SupervisedTraining::new(dir, train_loader, valid_loader);
//! // profiling.set_interrupter(training.interrupter());    // optional: the memory guard
//! // training.launch(learner);
//! let summary = profiling.finish().unwrap(); // trace.json, ops.json, run.json
//! ```
//!
//! burn-train 0.22 runs the loop, so nothing of the user's code is called at a step's end.
//! The train data loader's `next()` is: it is where an iteration starts and where the previous
//! one ended, on the training thread. [`TrainProfiling::train_loader`] wraps the loader, and
//! each `next()` ends the step in progress (the `step` stopwatch measurement and NVTX range,
//! the step's time, the session's `finish_iter`: warm-up, per-op tools after it, the memory
//! guard), loads the next batch inside a `load batch` measurement and range, and opens the
//! next step. A step is everything burn-train does for one batch: forward and backward
//! (`TrainStep::step`), the optimizer, the output to the metrics. Put `nvtx::scope("forward",
//! ..)` (and `"backward"`) in your `TrainStep::step` for phases; the session carries them to
//! the fusion thread with the blocks. Validation runs between epochs, outside any step.
//!
//! Dumps (the `debug` preset): the last step's batch, through the function given to
//! [`TrainProfiling::train_loader_dumping`]; gradients through
//! `dump::global::set_gradients_from(&grads)` in your `TrainStep::step`.
//!
//! burn-train's dashboard can show the step time and the top block's share of op time
//! ([`TrainProfiling::step_time_metric`], [`TrainProfiling::top_op_metric`]). Where its
//! terminal UI cannot draw (output not a terminal), [`PlainProgress`] prints a readable line
//! every few iterations.

mod loader;
mod metrics;
mod progress;

use std::path::PathBuf;
use std::sync::Arc;

use burn::data::dataloader::DataLoader;
use burn::tensor::Device;
use burn_profiled_core::config::{ConfigError, Preset, RuntimeConfig};
use burn_profiled_core::dump::Map;
use burn_profiled_core::train_steps::TrainRun;

use crate::Session;
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
    /// Starts a session with `config` on `device`, writing its artefacts to `out_dir` at
    /// [`finish`](TrainProfiling::finish).
    ///
    /// # Panics
    /// As [`Session::start`]: if a session is live, or a tool it enables was enabled before in
    /// this process.
    pub fn start(config: RuntimeConfig, device: &Device, out_dir: impl Into<PathBuf>) -> Self {
        let session = Session::start(config, device, out_dir);
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
    pub fn from_env(device: &Device, out_dir: impl Into<PathBuf>) -> Result<Self, ConfigError> {
        let config = RuntimeConfig::from_env_or(Preset::Train)?;
        Ok(Self::start(config, device, out_dir))
    }

    /// Wraps burn-train's train data loader: every batch it gives starts a step (see the
    /// [module docs](self)). Pass the result to `SupervisedTraining::new`.
    pub fn train_loader<I: 'static>(
        &self,
        loader: Arc<dyn DataLoader<I>>,
    ) -> Arc<dyn DataLoader<I>> {
        Arc::new(ProfiledLoader::new(self.clone(), loader, None))
    }

    /// [`train_loader`](TrainProfiling::train_loader), and with dumps on (the `debug`
    /// preset) `to_dump` turns each batch into what the dump records under `batch`; the last
    /// step's is dumped at [`finish`](TrainProfiling::finish).
    pub fn train_loader_dumping<I: 'static>(
        &self,
        loader: Arc<dyn DataLoader<I>>,
        to_dump: impl Fn(&I) -> Map + Send + Sync + 'static,
    ) -> Arc<dyn DataLoader<I>> {
        Arc::new(ProfiledLoader::new(
            self.clone(),
            loader,
            Some(Arc::new(to_dump)),
        ))
    }

    burn_profiled_core::train_profiling_methods!("block");

    /// Gives the integration the run's interrupter (`SupervisedTraining::interrupter`): when
    /// the memory guard (`[host] memory_limit_mib`) stops the run, it stops burn-train's loop
    /// with the guard's message. Without it the train loader only ends every epoch from then
    /// on.
    pub fn set_interrupter(&self, interrupter: burn::train::Interrupter) {
        let stop = move |why: &str| interrupter.stop(Some(why));
        self.run.steps.set_interrupt(Box::new(stop));
    }
}
