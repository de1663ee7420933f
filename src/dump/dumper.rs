//! [`TensorDumper`]: one dumper's state and operations (the original's enabled methods). The
//! process-wide dumper of [`super::global`] wraps one.

use std::any::Any;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use burn::tensor::Tensor;
use burn::tensor::backend::{AutodiffBackend, Backend};

use super::add::{self, Kind};
use super::compare::{compare, failure_message};
use super::convert::Converters;
use super::error::DumpError;
use super::format::format;
use super::grads::{self, GradValues};
use super::json::{JsonReadError, PyJson};
use super::options::{AddOptions, CompareSettings, DumpType};
use super::ragged::{self, RaggedBatch};
use super::tap;
use super::tree::{Content, Node, Record, check_name, insert_at_path};
use super::value::ToDump;
use super::write::{blob_file_name, write_dump};

/// An action run after a given dump count is reached.
pub type Action = Box<dyn FnMut() + Send>;

/// A tensor dumper writing to one directory: the original `TensorDumper` once enabled, as a
/// value. Use it directly in a test or a tool, or process-wide through [`super::global`].
///
/// ```
/// use burn::backend::NdArray;
/// use burn::tensor::Tensor;
/// use burn_profiled::dump::{AddOptions, DumpType, Map, TensorDumper};
///
/// let dir = tempfile::tempdir().unwrap();
/// let mut dumper = TensorDumper::new(dir.path());
/// let t = Tensor::<NdArray, 1>::from_floats([1.0, 2.5], &Default::default());
/// dumper.add_tensor_data("a", Map::new().with("t", t).with("n", 3), AddOptions::new(DumpType::Json)).unwrap();
/// dumper.dump(true).unwrap();
/// let text = std::fs::read_to_string(dir.path().join("0/tensors.json")).unwrap();
/// assert!(text.starts_with("{\n  \"a\": {\n    \"t\": [\n      1.0,"));
/// ```
///
/// Burn tensors are immutable, so a tensor is read (`into_data`) when it is added: the dump
/// holds its values at that time. The original keeps a reference, so in-place changes made
/// before `dump()` show up there.
pub struct TensorDumper {
    dump_dir: PathBuf,
    range_stack: Vec<String>,
    dump_count: usize,
    tensors: Vec<(String, Node)>,
    grads: Vec<(String, Node)>,
    grad_computed: bool,
    actions: HashMap<usize, Action>,
    converters: Converters,
    dump_type_for_all: Option<DumpType>,
    dump_is_compare: Option<CompareSettings>,
    /// `Some`: due actions are queued here instead of run (see `defer_actions`).
    deferred: Option<Vec<usize>>,
}

impl std::fmt::Debug for TensorDumper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TensorDumper")
            .field("dump_dir", &self.dump_dir)
            .field("range_stack", &self.range_stack)
            .field("dump_count", &self.dump_count)
            .finish_non_exhaustive()
    }
}

impl TensorDumper {
    /// A dumper writing dump `n` to `<dump_dir>/<n>/`, starting at 0.
    pub fn new(dump_dir: impl Into<PathBuf>) -> TensorDumper {
        TensorDumper {
            dump_dir: dump_dir.into(),
            range_stack: Vec::new(),
            dump_count: 0,
            tensors: Vec::new(),
            grads: Vec::new(),
            grad_computed: false,
            actions: HashMap::new(),
            converters: Converters::default(),
            dump_type_for_all: None,
            dump_is_compare: None,
            deferred: None,
        }
    }

    /// The dump directory.
    pub fn dump_dir(&self) -> &Path {
        &self.dump_dir
    }

    /// Pushes a range name: later paths are prefixed with the range names joined with `.`.
    /// A name that could place a file outside the dump directory (`..`, `/`, `\`, NUL) is an
    /// error.
    pub fn push_range(&mut self, name: impl Into<String>) -> Result<(), DumpError> {
        let name = name.into();
        check_name(&name, || "a range name".to_owned())?;
        self.range_stack.push(name);
        Ok(())
    }

    /// Pops the innermost range name; [`DumpError::EmptyRangeStack`] when there is none.
    pub fn pop_range(&mut self) -> Result<String, DumpError> {
        self.range_stack.pop().ok_or(DumpError::EmptyRangeStack)
    }

    /// Adds tensor data at the dotted `path` (prefixed by the ranges), with the original's
    /// pipeline and insert rules. A map is merged into the node at `path`; a tensor, list or
    /// string goes into an empty slot there; a bare number, bool or null is refused.
    /// Nothing changes when it fails.
    pub fn add_tensor_data(
        &mut self,
        path: &str,
        data: impl ToDump,
        options: AddOptions,
    ) -> Result<(), DumpError> {
        self.add(Kind::Tensors, path, data, &options)
    }

    /// [`add_tensor_data`](Self::add_tensor_data) with the data made by `data()`.
    pub fn add_tensor_data_with<T: ToDump>(
        &mut self,
        path: &str,
        data: impl FnOnce() -> T,
        options: AddOptions,
    ) -> Result<(), DumpError> {
        self.add(Kind::Tensors, path, data(), &options)
    }

    /// Adds tensors whose gradients are to be dumped (float tensors of an autodiff backend;
    /// int and bool tensors dump as untracked). They are kept until
    /// [`set_gradients`](Self::set_gradients) replaces them by their gradients.
    pub fn add_grad_data(
        &mut self,
        path: &str,
        data: impl ToDump,
        options: AddOptions,
    ) -> Result<(), DumpError> {
        self.add(Kind::Grads, path, data, &options)
    }

    /// [`add_grad_data`](Self::add_grad_data) with the data made by `data()`.
    pub fn add_grad_data_with<T: ToDump>(
        &mut self,
        path: &str,
        data: impl FnOnce() -> T,
        options: AddOptions,
    ) -> Result<(), DumpError> {
        self.add(Kind::Grads, path, data(), &options)
    }

    fn add(
        &mut self,
        kind: Kind,
        path: &str,
        data: impl ToDump,
        options: &AddOptions,
    ) -> Result<(), DumpError> {
        let path = add::full_path(&self.range_stack, path)?;
        let node = add::prepare(
            data.to_dump(),
            &path,
            options,
            &self.converters,
            self.dump_type_for_all,
            kind,
        )?;
        let root = match kind {
            Kind::Tensors => &mut self.tensors,
            Kind::Grads => &mut self.grads,
        };
        insert_at_path(root, &path, node)
    }

    /// Places a gradient tap on the intermediate `tensor` and returns the tensor to use from
    /// now on (the same values; an identity op whose backward records the incoming gradient).
    /// The next backward's gradient for it is put at `path` of the gradients by
    /// [`set_gradients`](Self::set_gradients) / [`set_gradients_from`](Self::set_gradients_from)
    /// (`null` if backward did not reach it, the untracked string if it is not tracked or the
    /// backend has no autodiff). Dump type and permutation come from `options`.
    ///
    /// For an autodiff backend, call [`enable_grad_taps`](super::enable_grad_taps) for it
    /// once, else this is a [`DumpError::Gradients`] error. On an error the tensor is dropped
    /// (errors here are programming errors: a bad path or a backend not enabled).
    ///
    /// ```
    /// use burn::backend::{Autodiff, NdArray};
    /// use burn::tensor::Tensor;
    /// use burn_profiled::dump::{AddOptions, DumpType, TensorDumper, enable_grad_taps};
    ///
    /// type B = Autodiff<NdArray>;
    /// enable_grad_taps::<B>();
    /// let dir = tempfile::tempdir().unwrap();
    /// let mut dumper = TensorDumper::new(dir.path());
    /// let x = Tensor::<B, 1>::from_floats([1.0, 2.0], &Default::default()).require_grad();
    /// let y = dumper.grad_tap("y", x * 3.0, AddOptions::new(DumpType::Json)).unwrap();
    /// let _grads = dumper.set_gradients::<B>(y.powi_scalar(2).sum()).unwrap();
    /// dumper.dump(true).unwrap();
    /// let grads = std::fs::read_to_string(dir.path().join("0/grads.json")).unwrap();
    /// assert_eq!(grads, "{\n  \"y\": [\n    6.0,\n    12.0\n  ]\n}"); // dz/dy = 2y
    /// ```
    pub fn grad_tap<B: Backend, const D: usize>(
        &mut self,
        path: &str,
        tensor: Tensor<B, D>,
        options: AddOptions,
    ) -> Result<Tensor<B, D>, DumpError> {
        let path = add::full_path(&self.range_stack, path)?;
        if !tap::can_tap::<B>(&tensor.device()) {
            return Err(DumpError::Gradients(format!(
                "Gradient taps are not enabled for the backend `{0}`: call `burn_profiled::dump::enable_grad_taps::<{0}>()` once",
                std::any::type_name::<B>()
            )));
        }
        let sink = tap::Sink::default();
        let record = Node::Record(Record {
            content: Content::Tap(sink.clone()),
            dump_type: self.dump_type_for_all.unwrap_or(options.dump_type),
            permute: options.permute_axes,
        });
        insert_at_path(&mut self.grads, &path, record)?;
        Ok(tap::tap(tensor, &sink))
    }

    /// Computes the gradients of the added gradient data: sums the scalar `values`, runs
    /// `backward()` once on the sum, and replaces each added tensor by its gradient (`null`
    /// when unused, `` "`.requires_grad == False`" `` when untracked). Returns the gradients.
    ///
    /// Burn 0.21's `backward()` consumes the graph it goes through: a second backward through
    /// the same nodes (even on a clone of the loss) panics in burn-autodiff with "Node should
    /// have a step registered". So either call this *instead of* your own `loss.backward()` and
    /// step the optimizer with the gradients it returns (training is then unchanged), or keep
    /// your backward and pass its gradients to [`set_gradients_from`](Self::set_gradients_from).
    pub fn set_gradients<B: AutodiffBackend>(
        &mut self,
        values: impl GradValues<B>,
    ) -> Result<B::Gradients, DumpError> {
        let grads = grads::backward(values)?;
        self.set_gradients_from::<B>(&grads)?;
        Ok(grads)
    }

    /// Replaces each added gradient tensor by its gradient in `grads` (the result of the
    /// user's `loss.backward()`).
    pub fn set_gradients_from<B: AutodiffBackend>(
        &mut self,
        grads: &B::Gradients,
    ) -> Result<(), DumpError> {
        grads::resolve::<B>(&mut self.grads, grads)?;
        self.grad_computed = true;
        Ok(())
    }

    /// From now on every add uses `dump_type`, whatever its own type and type overrides
    /// (permutations stay). Records already added get `dump_type` too, in the tensors if
    /// `include_tensors` and in the gradients if `include_grads`.
    pub fn set_dump_type_for_all(
        &mut self,
        dump_type: DumpType,
        include_tensors: bool,
        include_grads: bool,
    ) {
        self.dump_type_for_all = Some(dump_type);
        let retype = |root: &mut Vec<(String, Node)>| {
            for (_, node) in root.iter_mut() {
                node.for_each_record(&mut |node| {
                    if let Node::Record(Record { dump_type: t, .. }) = node {
                        *t = dump_type;
                    }
                });
            }
        };
        if include_tensors {
            retype(&mut self.tensors);
        }
        if include_grads {
            retype(&mut self.grads);
        }
    }

    /// Writes dump `n` to `<dump_dir>/<n>/` (`tensors.json` always, `grads.json` when
    /// gradient data was added, and the blob files), clears the data and counts the dump.
    ///
    /// With `dump_if_empty == false` and nothing added, nothing is written and the count
    /// stays. After [`set_dump_is_compare`](Self::set_dump_is_compare) this compares instead.
    /// Returns `Ok(false)` only when such a comparison failed with `as_warning`.
    ///
    /// Everything is checked before anything is written (deviation: the original writes
    /// `tensors.json` before finding that gradients were not computed, or an image of the
    /// wrong rank); on an error the data is kept and the count stays.
    pub fn dump(&mut self, dump_if_empty: bool) -> Result<bool, DumpError> {
        if let Some(settings) = self.dump_is_compare {
            return self.compare_to_dumped_data(settings, dump_if_empty);
        }
        if !dump_if_empty && self.tensors.is_empty() && self.grads.is_empty() {
            return Ok(true);
        }
        if !self.grads.is_empty() && !self.grad_computed {
            return Err(DumpError::GradientsNotComputedForDump);
        }
        let next = self.next_count()?;
        let dir = self.dump_dir.join(self.dump_count.to_string());
        let mut parts = Vec::new();
        for (kind, root) in [("tensors", &self.tensors), ("grads", &self.grads)] {
            if kind == "grads" && root.is_empty() {
                continue;
            }
            let file_for = |name: &str| {
                blob_file_name(kind, name)
                    .map(|file| dir.join(file).display().to_string())
                    .unwrap_or_else(|_| name.to_owned())
            };
            parts.push((kind, format(root, true, &file_for)?));
        }
        write_dump(&self.dump_dir, self.dump_count, &parts)?;
        self.finish_dump(next);
        Ok(true)
    }

    /// Compares the added data with dump `n` written before (JSON only), as the original's
    /// `compare_to_dumped_data`. Consistent data prints the original's
    /// "`` `TensorDumper:` `` Tensor data is consistent ..." lines and gives `Ok(true)`. A
    /// difference is [`DumpError::Mismatch`] with the original's message, or, with
    /// `as_warning`, that message printed to stderr and `Ok(false)`.
    ///
    /// Whatever the outcome, the data is cleared and the dump counted (as the original's
    /// `finally`), unless `compare_if_empty == false` and nothing was added.
    pub fn compare_to_dumped_data(
        &mut self,
        settings: CompareSettings,
        compare_if_empty: bool,
    ) -> Result<bool, DumpError> {
        if !compare_if_empty && self.tensors.is_empty() && self.grads.is_empty() {
            return Ok(true);
        }
        let next = self.next_count()?;
        let result = self.compare_all(&settings);
        self.finish_dump(next);
        result
    }

    fn compare_all(&self, settings: &CompareSettings) -> Result<bool, DumpError> {
        let count = self.dump_count;
        let tensors_ok = self.compare_one(&self.tensors, "tensors", settings)?;
        let grads_ok = if self.grads.is_empty() {
            None
        } else if !self.grad_computed {
            return Err(DumpError::GradientsNotComputedForCompare);
        } else {
            Some(self.compare_one(&self.grads, "grads", settings)?)
        };
        if tensors_ok {
            println!(
                "`TensorDumper:` Tensor data is consistent with previously dumped data for dump {count}."
            );
        }
        if grads_ok == Some(true) {
            println!(
                "`TensorDumper:` Grad data is consistent with previously dumped data for dump {count}."
            );
        }
        Ok(tensors_ok && grads_ok != Some(false))
    }

    fn compare_one(
        &self,
        root: &[(String, Node)],
        kind: &str,
        settings: &CompareSettings,
    ) -> Result<bool, DumpError> {
        let count = self.dump_count;
        let formatted = format(root, false, &|name| name.to_owned())?;
        if let Some(blob) = formatted.blobs.first() {
            let (path, ext) = blob.name.rsplit_once('.').unwrap_or((&blob.name, ""));
            return Err(DumpError::CompareNonJson {
                path: path.to_owned(),
                ext: ext.to_owned(),
            });
        }
        let file = self
            .dump_dir
            .join(count.to_string())
            .join(format!("{kind}.json"));
        let reference = match PyJson::read_file(&file) {
            Ok(reference) => reference,
            Err(JsonReadError::Io(error)) if error.kind() == std::io::ErrorKind::NotFound => {
                return Err(DumpError::NoReference {
                    kind: kind.to_owned(),
                    count,
                    file,
                });
            }
            Err(JsonReadError::Io(error)) => return Err(DumpError::io(&file)(error)),
            Err(JsonReadError::Malformed(error)) => {
                return Err(DumpError::BadReference {
                    file,
                    message: error.to_string(),
                });
            }
        };
        let is_tensor = |path: &str| formatted.tensor_paths.contains(path);
        let comparison = compare(
            &reference,
            &formatted.json,
            &is_tensor,
            settings.compare_options(),
        );
        if comparison.is_consistent() {
            return Ok(true);
        }
        let message = failure_message(
            kind,
            count,
            settings.num_errors_per_tensor_to_show,
            &comparison,
        );
        if settings.as_warning {
            eprintln!("warning: {message}");
            Ok(false)
        } else {
            Err(DumpError::Mismatch(message))
        }
    }

    /// Makes every later [`dump`](Self::dump) compare with the stored `settings` instead
    /// (`compare_if_empty` = `dump_if_empty`). One way: it cannot be switched back.
    /// Deviation: `allow_missing_data_in_previous` is honoured (the original drops it).
    pub fn set_dump_is_compare(&mut self, settings: CompareSettings) {
        self.dump_is_compare = Some(settings);
    }

    /// The index of the next dump.
    pub fn dump_count(&self) -> usize {
        self.dump_count
    }

    /// Sets the dump count; an action registered for `count` runs at once.
    pub fn set_dump_count(&mut self, count: usize) {
        self.dump_count = count;
        self.fire(count);
    }

    /// `set_dump_count(0)`.
    pub fn reset_dump_count(&mut self) {
        self.set_dump_count(0);
    }

    /// Registers (or replaces) `action`, run each time the dump count becomes `count`: after
    /// a dump or comparison, or on [`set_dump_count`](Self::set_dump_count). Actions are
    /// never removed.
    pub fn perform_after_dump_count(
        &mut self,
        count: usize,
        action: impl FnMut() + Send + 'static,
    ) {
        self.actions.insert(count, Box::new(action));
    }

    /// Registers (or replaces) the converter for values of type `T` wrapped with
    /// [`Value::opaque`](super::Value::opaque). Converters run at add time, repeatedly until
    /// nothing is left to convert, so they may return other convertible values.
    pub fn register_custom_converter<T, V>(&mut self, convert: impl Fn(T) -> V + Send + 'static)
    where
        T: Any + Send,
        V: ToDump,
    {
        self.converters.register(convert);
    }

    /// Registers the converter for the ragged-batch type `R`: per sample (a list of tensors
    /// cropped to each sample's size) or as `{"data", "sample_sizes", "non_uniform_dim",
    /// "num_batch_dims"}`. Call again to switch between adds.
    pub fn enable_ragged_batch_dumping<R: RaggedBatch>(&mut self, as_per_sample: bool) {
        ragged::register::<R>(&mut self.converters, as_per_sample);
    }

    /// The count after this dump, checked before anything is done.
    fn next_count(&self) -> Result<usize, DumpError> {
        self.dump_count
            .checked_add(1)
            .ok_or(DumpError::DumpCountOverflow(self.dump_count))
    }

    /// The clear-count-act ending of a dump or comparison; `next` is [`Self::next_count`].
    fn finish_dump(&mut self, next: usize) {
        self.tensors.clear();
        self.grads.clear();
        self.grad_computed = false;
        self.dump_count = next;
        self.fire(self.dump_count);
    }

    fn fire(&mut self, count: usize) {
        if let Some(deferred) = &mut self.deferred {
            deferred.push(count);
        } else if let Some(action) = self.actions.get_mut(&count) {
            action();
        }
    }

    /// Makes actions wait for [`Self::take_deferred_actions`] (the global dumper runs them
    /// with its lock released, so that they may use the dumper).
    pub(crate) fn defer_actions(&mut self) {
        self.deferred = Some(Vec::new());
    }

    /// The actions due since the last call, taken out of the registry (put them back with
    /// [`Self::restore_action`]).
    pub(crate) fn take_deferred_actions(&mut self) -> Vec<(usize, Action)> {
        let due = self
            .deferred
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default();
        due.into_iter()
            .filter_map(|count| self.actions.remove(&count).map(|action| (count, action)))
            .collect()
    }

    /// Puts back an action taken out, unless one was registered meanwhile.
    pub(crate) fn restore_action(&mut self, count: usize, action: Action) {
        self.actions.entry(count).or_insert(action);
    }
}
