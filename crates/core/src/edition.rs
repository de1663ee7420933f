//! The parts of each Burn edition's public API that are the same to the letter, written once.
//!
//! A type cannot be shared between two Burn versions, so an edition's `Session`,
//! `TensorDumper` or `TrainProfiling` is its own; what their methods do is the core's (the
//! recorder, the dumper, [`TrainRun`](crate::train_steps::TrainRun)). These macros write the
//! methods and items that only hand over to the core, with their docs, into each edition,
//! which invokes them with its own Burn's types: a new edition adds only what is its Burn's
//! own (see `docs/guide/maintenance.md`).

/// The session's accessors, in an edition's `impl Session` (its `recorder` field is the
/// core's [`RunRecorder`](crate::recorder::RunRecorder)).
#[doc(hidden)]
#[macro_export]
macro_rules! session_accessors {
    () => {
        /// The configuration.
        pub fn config(&self) -> &$crate::config::RuntimeConfig {
            self.recorder.config()
        }

        /// Where artefacts go.
        pub fn out_dir(&self) -> &::std::path::Path {
            self.recorder.out_dir()
        }

        /// Iterations finished so far.
        pub fn steps(&self) -> usize {
            self.recorder.steps()
        }

        /// Whether warm-up is over (per-op tools recording).
        pub fn warmup_done(&self) -> bool {
            self.recorder.warmup_done()
        }
    };
}

/// `TrainProfiling`'s methods that hand over to its
/// [`TrainRun`](crate::train_steps::TrainRun) (its `run` field), in an edition's
/// `impl TrainProfiling`; `$ops` names the edition's ops in the docs (`op`, `block`).
#[doc(hidden)]
#[macro_export]
macro_rules! train_profiling_methods {
    ($ops:literal) => {
        /// A numeric metric for burn-train's dashboard: the time of the last step, in ms (the
        /// epoch's mean next to it).
        pub fn step_time_metric(&self) -> StepTimeMetric {
            let run = self.run.clone();
            StepTimeMetric::new($crate::train_metrics::StepTime::new(move || {
                run.steps.last_seconds()
            }))
        }

        #[doc = concat!(
            "A numeric metric for burn-train's dashboard: the share of op time spent in the ",
            $ops,
            " that takes the most, in percent, with its name (needs `[stats] enabled`, as in \
             `profile`)."
        )]
        pub fn top_op_metric(&self) -> TopOpMetric {
            TopOpMetric::new($crate::train_metrics::TopOpShare::new($ops))
        }

        /// Closes the step in progress, dumps the last step's batch (with dumps on), and
        /// finishes the session: the stopwatch report and the op table on stdout, the
        /// artefacts in the output directory. Later calls, and those of clones, return
        /// `Ok(None)`.
        pub fn finish(&self) -> ::std::io::Result<Option<$crate::recorder::RunSummary>> {
            self.run.finish()
        }

        /// The time of the last finished step, in seconds.
        pub fn last_step_seconds(&self) -> Option<f64> {
            self.run.steps.last_seconds()
        }
    };
}

/// An edition's `TensorDumper`: the core's dumper with the edition's Burn's own methods (in an
/// `impl TensorDumper` of the edition's), which it dereferences to, and ragged batches
/// (`RaggedBatch` and `ragged::register` in scope, see [`ragged_batch!`](crate::ragged_batch)).
/// The attributes given (the docs) go on the struct.
#[doc(hidden)]
#[macro_export]
macro_rules! tensor_dumper {
    ($(#[$meta:meta])*) => {
        $(#[$meta])*
        #[derive(Debug)]
        pub struct TensorDumper($crate::dump::TensorDumper);

        impl ::std::ops::Deref for TensorDumper {
            type Target = $crate::dump::TensorDumper;

            fn deref(&self) -> &$crate::dump::TensorDumper {
                &self.0
            }
        }

        impl ::std::ops::DerefMut for TensorDumper {
            fn deref_mut(&mut self) -> &mut $crate::dump::TensorDumper {
                &mut self.0
            }
        }

        impl TensorDumper {
            /// A dumper writing dump `n` to `<dump_dir>/<n>/`, starting at 0.
            pub fn new(dump_dir: impl Into<::std::path::PathBuf>) -> TensorDumper {
                TensorDumper($crate::dump::TensorDumper::new(dump_dir))
            }

            /// Registers the converter for the ragged-batch type `R`: per sample (a list of
            /// tensors cropped to each sample's size) or as `{"data", "sample_sizes",
            /// "non_uniform_dim", "num_batch_dims"}`. Call again to switch between adds.
            pub fn enable_ragged_batch_dumping<R: RaggedBatch>(&mut self, as_per_sample: bool) {
                ragged::register::<R>(self.0.converters_mut(), as_per_sample);
            }
        }
    };
}

/// An edition's `RaggedBatch` trait, whose `data` is `$data` (its Burn's `TensorData`), and
/// `register`, which registers a ragged-batch type's converter with the core's
/// [`ragged`](crate::dump::ragged) code (`$edition` is the edition's marker type).
#[doc(hidden)]
#[macro_export]
macro_rules! ragged_batch {
    ($data:ty, $edition:ty) => {
        /// A padded batch of samples of different sizes along one dim.
        pub trait RaggedBatch: ::std::any::Any + Send {
            /// The padded data: batch dims first, then the sample dims.
            fn data(&self) -> $data;
            /// The size of each sample along the non-uniform dim, batch dims in C order.
            fn sample_sizes(&self) -> Vec<usize>;
            /// The non-uniform dim, counted in the full data (batch dims included).
            fn non_uniform_dim(&self) -> usize;
            /// How many leading dims are batch dims (at least 1).
            fn num_batch_dims(&self) -> usize;
        }

        pub(crate) fn register<R: RaggedBatch>(
            converters: &mut $crate::dump::Converters,
            as_per_sample: bool,
        ) {
            $crate::dump::ragged::register::<$edition, $data, R>(
                converters,
                as_per_sample,
                |batch: &R| {
                    let layout = $crate::dump::ragged::RaggedLayout {
                        sample_sizes: batch.sample_sizes(),
                        non_uniform_dim: batch.non_uniform_dim(),
                        num_batch_dims: batch.num_batch_dims(),
                    };
                    (batch.data(), layout)
                },
            );
        }
    };
}

/// An edition's dashboard metric: `DashboardMetric<N>`, a
/// [`DashboardNumber`](crate::train_metrics::DashboardNumber) with its burn-train's
/// `NumericMetricState` and `MetricName` (in scope), and the aliases `StepTimeMetric` and
/// `TopOpMetric`; the edition implements its burn-train's `Metric` and `Numeric` for it.
#[doc(hidden)]
#[macro_export]
macro_rules! dashboard_metric {
    () => {
        /// The time of the last step, in ms, measured on the training thread by
        /// [`TrainProfiling`](super::TrainProfiling)'s loader (from one batch to the next).
        /// Made by [`TrainProfiling::step_time_metric`](super::TrainProfiling::step_time_metric).
        pub type StepTimeMetric = DashboardMetric<$crate::train_metrics::StepTime>;

        /// The share of all op time taken by the op (or fused block) that takes the most, in
        /// percent, with its name (`float_matmul: 23.4%`); 0 while op statistics are off
        /// (warm-up, or a preset without them). Made by
        /// [`TrainProfiling::top_op_metric`](super::TrainProfiling::top_op_metric).
        pub type TopOpMetric = DashboardMetric<$crate::train_metrics::TopOpShare>;

        /// A number of burn-profiled's as a numeric metric of burn-train's dashboard.
        #[derive(Clone)]
        pub struct DashboardMetric<N> {
            number: N,
            name: MetricName,
            state: NumericMetricState,
        }

        impl<N: $crate::train_metrics::DashboardNumber> DashboardMetric<N> {
            pub(super) fn new(number: N) -> Self {
                DashboardMetric {
                    name: ::std::sync::Arc::new(number.name().to_owned()),
                    number,
                    state: NumericMetricState::new(),
                }
            }

            /// How the dashboard formats the number.
            fn format(&self) -> FormatOptions {
                FormatOptions::new(self.name.clone())
                    .unit(self.number.unit())
                    .precision(self.number.precision())
            }

            /// The number now, and the label before it.
            fn read(&mut self) -> (f64, Option<String>) {
                self.number.read()
            }
        }
    };
}

/// The methods of burn-train's `Metric` that are the same in every edition, in an edition's
/// `impl Metric for DashboardMetric<N>` (`MetricName`, `MetricAttributes` and
/// `NumericAttributes` in scope).
#[doc(hidden)]
#[macro_export]
macro_rules! dashboard_metric_items {
    () => {
        type Input = ();

        fn name(&self) -> MetricName {
            self.name.clone()
        }

        fn description(&self) -> Option<String> {
            Some(self.number.description())
        }

        fn attributes(&self) -> MetricAttributes {
            NumericAttributes {
                unit: Some(self.number.unit().to_owned()),
                higher_is_better: false,
            }
            .into()
        }

        fn clear(&mut self) {
            self.state.reset();
        }
    };
}
