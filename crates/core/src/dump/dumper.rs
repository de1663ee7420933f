//! [`TensorDumper`]: one dumper's state and operations (the original's enabled methods), for
//! every Burn: each edition's dumper wraps one and adds what is its Burn's own (gradients,
//! gradient taps, ragged batches).

use std::any::Any;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::add::{self, Kind};
use super::compare::{compare, failure_message};
use super::convert::Converters;
use super::error::DumpError;
use super::format::format;
use super::json::{JsonReadError, PyJson};
use super::options::{AddOptions, CompareSettings, DumpType};
use super::tree::{Content, Node, Record, check_name, insert_at_path};
use super::value::ToDump;
use super::value_sink::{self, DUMPED_PREFIX, GRADIENT_PREFIX};
use super::write::{blob_file_name, write_dump};

/// An action run after a given dump count is reached.
pub type Action = Box<dyn FnMut() + Send>;

/// A tensor dumper writing to one directory: the original `TensorDumper` once enabled, as a
/// value, for tensors already read ([`Array`](super::blob::Array)s) and plain values. Each
/// Burn edition's `dump::TensorDumper` is one of these that also takes its Burn's tensors and
/// gradients.
///
/// ```
/// use burn_profiled_core::dump::blob::Array;
/// use burn_profiled_core::dump::{AddOptions, DumpType, Map, TensorDumper};
///
/// let dir = tempfile::tempdir().unwrap();
/// let mut dumper = TensorDumper::new(dir.path());
/// let t = Array::from_values(&[2], &[1.0f32, 2.5]).unwrap();
/// dumper.add_tensor_data("a", Map::new().with("t", t).with("n", 3), AddOptions::new(DumpType::Json)).unwrap();
/// dumper.dump(true).unwrap();
/// let text = std::fs::read_to_string(dir.path().join("0/tensors.json")).unwrap();
/// assert!(text.starts_with("{\n  \"a\": {\n    \"t\": [\n      1.0,"));
/// ```
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
    pub fn add_tensor_data<Burn>(
        &mut self,
        path: &str,
        data: impl ToDump<Burn>,
        options: AddOptions,
    ) -> Result<(), DumpError> {
        self.add(Kind::Tensors, path, data, &options)
    }

    /// [`add_tensor_data`](Self::add_tensor_data) with the data made by `data()`.
    pub fn add_tensor_data_with<Burn, T: ToDump<Burn>>(
        &mut self,
        path: &str,
        data: impl FnOnce() -> T,
        options: AddOptions,
    ) -> Result<(), DumpError> {
        self.add(Kind::Tensors, path, data(), &options)
    }

    /// Adds tensors whose gradients are to be dumped (float tensors of an autodiff backend;
    /// int and bool tensors dump as untracked). They are kept until
    /// its edition's `set_gradients` replaces them by their gradients.
    pub fn add_grad_data<Burn>(
        &mut self,
        path: &str,
        data: impl ToDump<Burn>,
        options: AddOptions,
    ) -> Result<(), DumpError> {
        self.add(Kind::Grads, path, data, &options)
    }

    /// [`add_grad_data`](Self::add_grad_data) with the data made by `data()`.
    pub fn add_grad_data_with<Burn, T: ToDump<Burn>>(
        &mut self,
        path: &str,
        data: impl FnOnce() -> T,
        options: AddOptions,
    ) -> Result<(), DumpError> {
        self.add(Kind::Grads, path, data(), &options)
    }

    fn add<Burn>(
        &mut self,
        kind: Kind,
        path: &str,
        data: impl ToDump<Burn>,
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
        // `[numerics]` records each tensor read, once it is in.
        let mut values = Vec::new();
        if kind == Kind::Tensors && value_sink::wanted() {
            node.for_each_data(&path, &mut |path, data| {
                values.push((format!("{DUMPED_PREFIX}{path}"), data.clone()));
            });
        }
        let root = match kind {
            Kind::Tensors => &mut self.tensors,
            Kind::Grads => &mut self.grads,
        };
        insert_at_path(root, &path, node)?;
        for (name, value) in values {
            value_sink::record(&name, &value);
        }
        Ok(())
    }

    /// Puts `record` (a gradient tap) at `path` of the gradients, prefixed by the ranges, as
    /// an edition's `grad_tap` does.
    #[doc(hidden)]
    pub fn insert_grad_record(
        &mut self,
        path: &str,
        pending: Box<dyn Any + Send>,
        options: AddOptions,
    ) -> Result<(), DumpError> {
        let path = add::full_path(&self.range_stack, path)?;
        let record = Node::Record(Record {
            content: Content::Pending(pending),
            dump_type: self.dump_type_for_all.unwrap_or(options.dump_type),
            permute: options.permute_axes,
        });
        insert_at_path(&mut self.grads, &path, record)
    }

    /// The gradient structure, whose pending records an edition resolves with its Burn's
    /// gradients; then [`gradients_set`](Self::gradients_set).
    #[doc(hidden)]
    pub fn grads_mut(&mut self) -> &mut [(String, Node)] {
        &mut self.grads
    }

    /// The pending gradient records were resolved: `[numerics]` records each gradient.
    #[doc(hidden)]
    pub fn gradients_set(&mut self) {
        self.grad_computed = true;
        if value_sink::wanted() {
            for (key, node) in &self.grads {
                node.for_each_data(key, &mut |path, data| {
                    value_sink::record(&format!("{GRADIENT_PREFIX}{path}"), data);
                });
            }
        }
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
    pub fn register_custom_converter<T, V, Burn>(
        &mut self,
        convert: impl Fn(T) -> V + Send + 'static,
    ) where
        T: Any + Send,
        V: ToDump<Burn>,
    {
        self.converters.register(convert);
    }

    /// The converters, where an edition registers its own (ragged batches).
    #[doc(hidden)]
    pub fn converters_mut(&mut self) -> &mut Converters {
        &mut self.converters
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
    #[doc(hidden)]
    pub fn defer_actions(&mut self) {
        self.deferred = Some(Vec::new());
    }

    /// The actions due since the last call, taken out of the registry (put them back with
    /// [`Self::restore_action`]).
    #[doc(hidden)]
    pub fn take_deferred_actions(&mut self) -> Vec<(usize, Action)> {
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
    #[doc(hidden)]
    pub fn restore_action(&mut self, count: usize, action: Action) {
        self.actions.entry(count).or_insert(action);
    }
}
