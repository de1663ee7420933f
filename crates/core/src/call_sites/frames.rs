//! Stacks read back: each address resolved once (with its inlined frames), the frames outside
//! Burn, the standard library and burn-profiled picked out, and the phase Burn's own frames
//! give an op.

use std::ffi::c_void;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use rustc_hash::FxHashMap;

use super::capture::addresses;

/// The crates whose frames are not the user's: Burn's (0.21), the standard library's, and
/// burn-profiled's own. A user crate named like one of them is taken for it.
const NOT_THE_USERS: [&str; 37] = [
    "std",
    "core",
    "alloc",
    "backtrace",
    "burn",
    "burn_autodiff",
    "burn_backend",
    "burn_candle",
    "burn_collective",
    "burn_communication",
    "burn_core",
    "burn_cpu",
    "burn_cubecl",
    "burn_cubecl_fusion",
    "burn_cuda",
    "burn_dataset",
    "burn_dispatch",
    "burn_flex",
    "burn_fusion",
    "burn_ir",
    "burn_ndarray",
    "burn_nn",
    "burn_optim",
    "burn_remote",
    "burn_rl",
    "burn_rocm",
    "burn_router",
    "burn_std",
    "burn_store",
    "burn_tch",
    "burn_tensor",
    "burn_train",
    "burn_vision",
    "burn_wgpu",
    "burn_profiled",
    "burn_profiled_core",
    "burn_profiled_022",
];

/// One frame of a stack: a function (demangled, without its hash) and where in it the call is,
/// when the binary has line tables.
#[derive(Debug)]
struct Frame {
    name: String,
    file: Option<String>,
    line: Option<u32>,
}

/// Each address resolved, innermost inlined frame first.
static RESOLVED: LazyLock<Mutex<FxHashMap<usize, Arc<[Frame]>>>> =
    LazyLock::new(|| Mutex::new(FxHashMap::default()));

fn frames_at(address: usize) -> Arc<[Frame]> {
    if let Some(frames) = RESOLVED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&address)
    {
        return frames.clone();
    }
    let mut frames = Vec::new();
    // The lookup runs without the lock: the first one reads the binary's debug info.
    backtrace::resolve(address as *mut c_void, |symbol| {
        if let Some(name) = symbol.name() {
            frames.push(Frame {
                name: format!("{name:#}"),
                file: symbol.filename().map(|path| path.display().to_string()),
                line: symbol.lineno(),
            });
        }
    });
    let frames: Arc<[Frame]> = frames.into();
    RESOLVED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(address, frames.clone());
    frames
}

/// The frames of stack `id` by address, innermost first: [`flat`] walks them.
fn frames(stack: u32) -> Vec<Arc<[Frame]>> {
    addresses(stack)
        .unwrap_or_default()
        .iter()
        .map(|address| frames_at(*address))
        .collect()
}

/// The frames of [`frames`] one after the other, innermost first.
fn flat(frames: &[Arc<[Frame]>]) -> impl DoubleEndedIterator<Item = &Frame> {
    frames.iter().flat_map(|at_address| at_address.iter())
}

/// `path` relative to the current directory where it lies under it (`examples/train.rs`), as
/// it is otherwise.
fn shown_path(path: &str) -> String {
    static HERE: LazyLock<Option<PathBuf>> = LazyLock::new(|| std::env::current_dir().ok());
    HERE.as_deref()
        .and_then(|here| Path::new(path).strip_prefix(here).ok())
        .map_or_else(
            || path.to_owned(),
            |relative| relative.display().to_string(),
        )
}

/// Where an op was called from: the innermost function of the user's code on its stack.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CallSite {
    /// The function, without its crate and generic arguments: `VisionModel::forward`.
    pub function: String,
    /// Its source file, where the binary has line tables.
    pub file: Option<String>,
    /// The line of the call in it.
    pub line: Option<u32>,
}

impl fmt::Display for CallSite {
    /// `VisionModel::forward (examples/train.rs:42)`, or the function alone without line
    /// tables.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.function)?;
        match (&self.file, self.line) {
            (Some(file), Some(line)) => write!(f, " ({file}:{line})"),
            (Some(file), None) => write!(f, " ({file})"),
            _ => Ok(()),
        }
    }
}

/// The call site of stack `stack` ([`capture`](super::capture)): `None` for no stack, or one
/// with no frame of the user's code (its symbols stripped, or all of it Burn's).
pub fn call_site(stack: u32) -> Option<CallSite> {
    flat(&frames(stack))
        .find(|frame| is_users(frame))
        .map(|frame| CallSite {
            function: short_name(&frame.name),
            file: frame.file.as_deref().map(shown_path),
            line: frame.line,
        })
}

/// The user's functions on stack `stack`, outermost first, by their short names: a flame
/// graph's frames.
pub fn user_frames(stack: u32) -> Vec<String> {
    flat(&frames(stack))
        .rev()
        .filter(|frame| is_users(frame))
        .map(|frame| short_name(&frame.name))
        .collect()
}

/// The phase Burn's frames on stack `stack` say its op is in: `backward` under
/// burn-autodiff's backward pass, `optimizer` under burn-optim; the innermost says.
pub fn phase_of(stack: u32) -> Option<&'static str> {
    flat(&frames(stack)).find_map(|frame| match crate_of_frame(frame).as_str() {
        "burn_autodiff" if last_segment(&frame.name) == "backward" => Some("backward"),
        "burn_optim" => Some("optimizer"),
        _ => None,
    })
}

/// Whether `frame` is of the user's code: with line tables, a Rust file that is no dependency's
/// (cargo's registry and git checkouts, the standard library's sources) and, for a function
/// named without its path (an inlined one), none of burn-profiled's own; without them, a
/// function of a crate outside Burn, std and burn-profiled.
fn is_users(frame: &Frame) -> bool {
    if let Some(file) = &frame.file {
        if !file.ends_with(".rs") || dependency_of(file).is_some() {
            return false;
        }
        if !is_qualified(&frame.name) {
            return !OWN_SOURCES
                .iter()
                .any(|own| Path::new(file).starts_with(own));
        }
    }
    let krate = crate_of(&frame.name);
    is_qualified(&frame.name) && !NOT_THE_USERS.contains(&krate)
}

/// The sources of burn-profiled's crates where they are built from this workspace (from a
/// registry, they are dependencies like any other).
static OWN_SOURCES: LazyLock<[PathBuf; 3]> = LazyLock::new(|| {
    let core = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = core.join("../..");
    [
        core.join("src"),
        root.join("src"),
        root.join("crates/burn-profiled-022/src"),
    ]
    .map(|dir| dir.canonicalize().unwrap_or(dir))
});

/// The crate whose source `file` is, when it is a dependency's: `burn_tensor` for a file of
/// `~/.cargo/registry/src/<index>/burn-tensor-0.21.0/`, `std` for the standard library's.
fn dependency_of(file: &str) -> Option<String> {
    if file.starts_with("/rustc/") || file.contains("/lib/rustlib/src/") {
        return Some("std".to_owned());
    }
    if let Some((_, in_registry)) = file.split_once("/registry/src/") {
        // `<index>/<name>-<version>/`
        let package = in_registry.split('/').nth(1)?;
        let name = package
            .rsplit_once('-')
            .filter(|(_, version)| version.starts_with(|c: char| c.is_ascii_digit()))
            .map_or(package, |(name, _)| name);
        return Some(name.replace('-', "_"));
    }
    // `<repository>-<hash>/<revision>/`, and in a workspace like Burn's `crates/<name>/`.
    let (_, in_checkout) = file.split_once("/git/checkouts/")?;
    let mut dirs = in_checkout.split('/');
    let repository = dirs.next()?;
    let package = match (dirs.nth(1), dirs.next()) {
        (Some("crates"), Some(name)) => name,
        _ => repository
            .rsplit_once('-')
            .map_or(repository, |(name, _)| name),
    };
    Some(package.replace('-', "_"))
}

/// The crate of `frame`'s function: its source's package where that is a dependency, its
/// path's crate otherwise.
fn crate_of_frame(frame: &Frame) -> String {
    frame
        .file
        .as_deref()
        .and_then(dependency_of)
        .unwrap_or_else(|| crate_of(&frame.name).to_owned())
}

/// Whether `name` is a path (`a::f`, `<T as a::Tr>::f`), as a symbol table gives it; debug info
/// names an inlined function alone (`matmul<B, 2, K>`).
fn is_qualified(name: &str) -> bool {
    name.starts_with('<') || without_generics(name).contains("::")
}

/// The crate a demangled function name belongs to: its path's first segment, or for
/// `<Type as Trait>::f` the type's crate (the trait's where the type is not a path: `&T`,
/// `[T]`, a generic parameter).
fn crate_of(name: &str) -> &str {
    let Some(qualified) = name.strip_prefix('<') else {
        return first_segment(name);
    };
    let inner = &qualified[..closing(qualified).unwrap_or(qualified.len())];
    let (self_type, trait_path) = match top_level_as(inner) {
        Some(at) => (&inner[..at], Some(&inner[at + 4..])),
        None => (inner, None),
    };
    let self_type = self_type.trim_start_matches(['&', '*', ' ']);
    let self_type = ["mut ", "const ", "dyn "]
        .iter()
        .fold(self_type, |t, prefix| t.strip_prefix(prefix).unwrap_or(t));
    let is_path = self_type
        .find("::")
        .is_some_and(|at| !self_type[..at].contains(['<', '[', '(']));
    match (is_path, trait_path) {
        (true, _) => first_segment(self_type),
        (false, Some(trait_path)) => first_segment(trait_path),
        (false, None) => "",
    }
}

fn first_segment(path: &str) -> &str {
    let end = path.find([':', '<', ' ']).unwrap_or(path.len());
    &path[..end]
}

/// Where the `<` that `text` follows is closed, counting nesting (`->` is not a bracket).
fn closing(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    let bytes = text.as_bytes();
    for (at, byte) in bytes.iter().enumerate() {
        match byte {
            b'<' => depth += 1,
            b'>' if at > 0 && bytes[at - 1] == b'-' => {}
            b'>' if depth == 0 => return Some(at),
            b'>' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// Where ` as ` stands outside any brackets in `text`.
fn top_level_as(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    let bytes = text.as_bytes();
    for (at, byte) in bytes.iter().enumerate() {
        match byte {
            b'<' | b'(' | b'[' => depth += 1,
            b'>' if at > 0 && bytes[at - 1] == b'-' => {}
            b'>' | b')' | b']' => depth = depth.saturating_sub(1),
            b' ' if depth == 0 && text[at..].starts_with(" as ") => return Some(at),
            _ => {}
        }
    }
    None
}

/// `name` without generic arguments: `a::B<T>::f` is `a::B::f`.
fn without_generics(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut depth = 0usize;
    let bytes = name.as_bytes();
    for (at, c) in name.char_indices() {
        match c {
            '<' => depth += 1,
            '>' if at > 0 && bytes[at - 1] == b'-' => {}
            '>' => depth = depth.saturating_sub(1),
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

fn last_segment(name: &str) -> String {
    let name = without_generics(name);
    name.rsplit("::").next().unwrap_or_default().to_owned()
}

/// A function's name as a table shows it: without its crate, generic arguments and trait
/// qualification. `<train::Net<B> as burn::module::Module<B>>::map` is `Net::map`,
/// `train::model::Attention<B>::forward` is `model::Attention::forward`.
fn short_name(name: &str) -> String {
    let path = match name.strip_prefix('<') {
        Some(qualified) => {
            let end = closing(qualified).unwrap_or(qualified.len());
            let inner = &qualified[..end];
            let self_type = top_level_as(inner).map_or(inner, |at| &inner[..at]);
            format!(
                "{self_type}{}",
                qualified.get(end + 1..).unwrap_or_default()
            )
        }
        None => name.to_owned(),
    };
    let path = without_generics(&path);
    let path = path.trim_start_matches(['&', '*']);
    match path.split_once("::") {
        Some((_, rest)) if !rest.is_empty() => rest.replace(';', ":"),
        _ => path.replace(';', ":"),
    }
}

#[cfg(test)]
mod tests {
    use super::{Frame, crate_of, dependency_of, is_users, phase_of, short_name};

    fn frame(name: &str, file: Option<&str>) -> Frame {
        Frame {
            name: name.to_owned(),
            file: file.map(str::to_owned),
            line: file.map(|_| 1),
        }
    }

    #[test]
    fn a_file_in_cargos_registry_or_checkouts_or_the_standard_library_is_a_dependencys() {
        let registry = "/home/u/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f";
        assert_eq!(
            dependency_of(&format!(
                "{registry}/burn-tensor-0.21.0/src/tensor/api/base.rs"
            )),
            Some("burn_tensor".to_owned())
        );
        assert_eq!(
            dependency_of(&format!("{registry}/futures-lite-2.6.1/src/future.rs")),
            Some("futures_lite".to_owned())
        );
        assert_eq!(
            dependency_of(
                "/home/u/.cargo/git/checkouts/burn-178c6829f420dae1/0a1b2c3/crates/burn-autodiff/src/graph/backward.rs"
            ),
            Some("burn_autodiff".to_owned())
        );
        assert_eq!(
            dependency_of(
                "/rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/ops/function.rs"
            ),
            Some("std".to_owned())
        );
        assert_eq!(dependency_of("/home/u/model/src/attention.rs"), None);
    }

    #[test]
    fn the_users_frames_are_their_own_files_or_without_line_tables_their_crates() {
        let burn = "/u/.cargo/registry/src/index/burn-tensor-0.21.0/src/tensor/api/numeric.rs";
        assert!(
            !is_users(&frame("matmul<B, 2, K>", Some(burn))),
            "inlined Burn"
        );
        assert!(!is_users(&frame(
            "burn_tensor::Tensor<B,_,K>::matmul",
            Some(burn)
        )));
        assert!(is_users(&frame(
            "model::Attention<B>::forward",
            Some("src/model.rs")
        )));
        assert!(
            is_users(&frame("scores<B>", Some("src/model.rs"))),
            "inlined, the user's"
        );
        assert!(!is_users(&frame(
            "start_thread",
            Some("./nptl/pthread_create.c")
        )));
        let own = concat!(env!("CARGO_MANIFEST_DIR"), "/src/sinks/stats/mod.rs");
        assert!(
            !is_users(&frame("record<B>", Some(own))),
            "burn-profiled's own, inlined"
        );
        assert!(is_users(&frame("model::Attention<B>::forward", None)));
        assert!(!is_users(&frame(
            "burn_tensor::Tensor<B,_,K>::matmul",
            None
        )));
        assert!(!is_users(&frame("start_thread", None)), "no path, no crate");
    }

    #[test]
    fn a_function_belongs_to_its_paths_first_crate_or_its_self_types() {
        assert_eq!(crate_of("train::VisionModel<B>::forward"), "train");
        assert_eq!(
            crate_of("<train::Net<B> as burn_core::module::Module<B>>::map"),
            "train"
        );
        assert_eq!(
            crate_of("<burn_autodiff::Autodiff<B,C> as burn_backend::FloatTensorOps>::float_add"),
            "burn_autodiff"
        );
        assert_eq!(crate_of("<&T as core::fmt::Debug>::fmt"), "core");
        assert_eq!(crate_of("<[T] as alloc::slice::Join>::join"), "alloc");
        assert_eq!(crate_of("<F as core::ops::FnOnce<A>>::call_once"), "core");
        assert_eq!(crate_of("std::rt::lang_start::{{closure}}"), "std");
        assert_eq!(crate_of("<fn() -> u32 as core::ops::Fn<()>>::call"), "core");
    }

    #[test]
    fn short_names_drop_the_crate_generics_and_trait() {
        assert_eq!(
            short_name("train::VisionModel<B>::forward"),
            "VisionModel::forward"
        );
        assert_eq!(
            short_name("<train::Net<B> as burn::module::Module<B>>::map"),
            "Net::map"
        );
        assert_eq!(
            short_name("train::model::Attention<B>::forward::{{closure}}"),
            "model::Attention::forward::{{closure}}"
        );
        assert_eq!(short_name("main"), "main");
        assert_eq!(
            short_name("a::f;g"),
            "f:g",
            "no `;` in a folded stack's frame"
        );
    }

    #[test]
    fn no_stack_has_no_phase() {
        assert_eq!(phase_of(0), None);
    }
}
