//! The crate's modules import each other in one direction: this test reads every `crate::`,
//! `$crate::` and `super::` path in `src/`, in the core's `crates/core/src/` and in the Burn
//! 0.22 edition's `crates/burn-profiled-022/src/`, and checks that each crate's module graph
//! has no cycle, and that the op path's layers (context, sinks, probe) only import downwards.
//!
//! Nodes are the crate's top-level modules, except the layer folders `context` and `sinks`,
//! whose children are nodes of their own (each sink must stand alone). Paths in comments and in
//! `#[cfg(test)]` modules are not imports of the module and are skipped.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Folders whose children are nodes of their own.
const LAYER_FOLDERS: [&str; 2] = ["context", "sinks"];

const CONTEXT: [&str; 15] = [
    "context::attached",
    "context::autotune",
    "context::clock",
    "context::device",
    "context::fallback",
    "context::kernel",
    "context::launch",
    "context::lineage",
    "context::live_allocations",
    "context::memory",
    "context::op",
    "context::phase",
    "context::switches",
    "context::thread",
    "context::warmup",
];
const SINKS: [&str; 6] = [
    "sinks::device_time",
    "sinks::numerics",
    "sinks::observers",
    "sinks::op_ranges",
    "sinks::stats",
    "sinks::trace",
];

/// What a node of the op path may import, besides itself; `None` off the op path.
fn allowed(node: &str) -> Option<Vec<&'static str>> {
    if node.starts_with("context") {
        // The bottom: nothing of the crate above it.
        Some(CONTEXT.to_vec())
    } else if node.starts_with("sinks") {
        // A sink reads the context and writes files (with the core's leaf helpers: shapes,
        // units, format versions, an op's work and its roofline); never another sink or the
        // probe.
        Some(
            CONTEXT
                .into_iter()
                .chain([
                    "call_sites",
                    "config",
                    "dump",
                    "files",
                    "numerics",
                    "formats",
                    "shape",
                    "units",
                    "work",
                    "roofline",
                ])
                .collect(),
        )
    } else if node == "probe" {
        Some(
            CONTEXT
                .into_iter()
                .chain(SINKS)
                .chain([
                    "call_sites",
                    "numerics",
                    "op_numerics",
                    "shape",
                    "tensor_identity",
                    "work",
                ])
                .collect(),
        )
    } else {
        None
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a file under `src/`: `src/sinks/stats.rs` is `["sinks", "stats"]`.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts
        .last()
        .is_some_and(|p| p == "mod" || p == "lib" || p == "main")
    {
        parts.pop();
    }
    parts
}

/// The node a module path belongs to.
fn node_of(path: &[String]) -> Option<String> {
    let first = path.first()?;
    if LAYER_FOLDERS.contains(&first.as_str()) {
        return Some(match path.get(1) {
            Some(child) => format!("{first}::{child}"),
            None => first.clone(),
        });
    }
    Some(first.clone())
}

/// The identifiers a path continues with after `prefix` ends at `at`: one for `a::b`, several
/// for `{a, b::c}`.
fn continuations(text: &str) -> Vec<Vec<String>> {
    let text = text.trim_start();
    if let Some(group) = text.strip_prefix('{') {
        let mut depth = 0;
        let mut end = group.len();
        for (i, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    end = i;
                    break;
                }
                '}' => depth -= 1,
                _ => {}
            }
        }
        let mut items = Vec::new();
        let mut depth = 0;
        let mut start = 0;
        let inner = &group[..end];
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    items.extend(continuations(&inner[start..i]));
                    start = i + 1;
                }
                _ => {}
            }
        }
        items.extend(continuations(&inner[start..]));
        return items;
    }
    let mut path = Vec::new();
    let mut rest = text;
    loop {
        let ident: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if ident.is_empty() {
            if rest.starts_with('{') {
                return continuations(rest)
                    .into_iter()
                    .map(|tail| path.iter().cloned().chain(tail).collect())
                    .collect();
            }
            break;
        }
        rest = &rest[ident.len()..];
        path.push(ident);
        match rest.strip_prefix("::") {
            Some(next) => rest = next,
            None => break,
        }
    }
    if path.is_empty() { vec![] } else { vec![path] }
}

/// The crate-root re-exports of `lib.rs` (`pub use sinks::{stats, trace};`): name -> target.
fn root_aliases(lib: &str) -> BTreeMap<String, Vec<String>> {
    let mut aliases = BTreeMap::new();
    for line in lib.lines() {
        let Some(rest) = line.trim().strip_prefix("pub use ") else {
            continue;
        };
        for target in continuations(rest.trim_end_matches(';')) {
            if let Some(name) = target.last() {
                aliases.insert(name.clone(), target.clone());
            }
        }
    }
    aliases
}

/// `line` without its string and char literals, so the braces left are the code's.
fn without_literals(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        _ => {}
                    }
                }
                out.push_str("\"\"");
            }
            '\'' => {
                let rest: String = chars.clone().take(3).collect();
                let literal = if rest.starts_with('\\') {
                    rest.chars().nth(2) == Some('\'')
                } else {
                    rest.chars().nth(1) == Some('\'')
                };
                if literal {
                    let skip = if rest.starts_with('\\') { 3 } else { 2 };
                    for _ in 0..skip {
                        chars.next();
                    }
                    out.push_str("' '");
                } else {
                    out.push(c);
                }
            }
            _ => out.push(c),
        }
    }
    out
}

/// Every module path `source` refers to, resolved against `module` (the file's own path) and
/// the inline modules (`mod imp { ... }`) the reference sits in.
fn references(source: &str, module: &[String]) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let mut depth = 0usize;
    // The inline modules open here, with the brace depth outside each.
    let mut inline: Vec<(String, usize)> = Vec::new();
    for line in source.lines() {
        let code = line.trim_start();
        if code.starts_with("#[cfg(test)]") {
            break;
        }
        if code.starts_with("//") {
            continue;
        }
        let code = without_literals(code.split(" //").next().unwrap_or(code));
        let code = code.as_str();
        let here: Vec<String> = module
            .iter()
            .cloned()
            .chain(inline.iter().map(|(name, _)| name.clone()))
            .collect();
        for (at, _) in code.match_indices("crate::") {
            let before = &code[..at];
            if before.ends_with(|c: char| c.is_alphanumeric() || c == '_') {
                continue;
            }
            found.extend(continuations(&code[at + "crate::".len()..]));
        }
        for (at, _) in code.match_indices("super::") {
            let before = &code[..at];
            if before.ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let parent = &here[..here.len().saturating_sub(1)];
            for tail in continuations(&code[at + "super::".len()..]) {
                found.push(parent.iter().cloned().chain(tail).collect());
            }
        }
        let declaration = code
            .trim_start_matches("pub(crate) ")
            .trim_start_matches("pub ");
        if let Some(rest) = declaration.strip_prefix("mod ")
            && let Some(name) = rest.trim_end().strip_suffix('{')
        {
            inline.push((name.trim().to_owned(), depth));
        }
        for c in code.chars() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth = depth.saturating_sub(1);
                    if inline.last().is_some_and(|(_, outside)| *outside == depth) {
                        inline.pop();
                    }
                }
                _ => {}
            }
        }
    }
    found
}

/// The source folders of this crate and of the core.
fn crates() -> [PathBuf; 2] {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    [root.join("src"), root.join("crates/core/src")]
}

/// The source folder of the Burn 0.22 edition (no op path of its own: only its cycles are
/// checked).
fn burn_022() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/burn-profiled-022/src")
}

fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let lib = fs::read_to_string(src.join("lib.rs")).unwrap();
    let aliases = root_aliases(&lib);
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        if file.starts_with(src.join("bin")) {
            continue;
        }
        let module = module_of(src, &file);
        if module.last().is_some_and(|m| m == "tests") {
            continue; // a module's tests may use the whole crate.
        }
        let Some(from) = node_of(&module) else {
            continue; // lib.rs declares the modules and re-exports: it is the root, not a node.
        };
        let source = fs::read_to_string(&file).unwrap();
        for mut path in references(&source, &module) {
            if let Some(target) = path.first().and_then(|first| aliases.get(first)) {
                path.splice(0..1, target.iter().cloned());
            }
            if let Some(to) = node_of(&path)
                && to != from
                && !LAYER_FOLDERS.contains(&to.as_str())
            {
                edges.entry(from.clone()).or_default().insert(to);
            }
        }
        edges.entry(from).or_default();
    }
    edges
}

/// The files of each folder and whom among their siblings they import: `nvtx::ffi` ->
/// `nvtx::label` when `ffi.rs` uses `super::label::Label`.
fn sibling_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(src, f)).collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let module = module_of(src, file);
        if module.is_empty() || module.last().is_some_and(|m| m == "tests") {
            continue;
        }
        let parent = &module[..module.len() - 1];
        let source = fs::read_to_string(file).unwrap();
        for path in references(&source, &module) {
            if path.len() <= parent.len() || path[..parent.len()] != *parent {
                continue;
            }
            let sibling: Vec<String> = path[..=parent.len()].to_vec();
            if sibling != module && modules.contains(&sibling) {
                edges
                    .entry(module.join("::"))
                    .or_default()
                    .insert(sibling.join("::"));
            }
        }
    }
    edges
}

/// A cycle through `start`, if any, by depth-first search.
fn cycle_from(
    start: &str,
    edges: &BTreeMap<String, BTreeSet<String>>,
    path: &mut Vec<String>,
    seen: &mut BTreeSet<String>,
) -> Option<Vec<String>> {
    let node = path.last().unwrap().clone();
    for next in edges.get(&node).into_iter().flatten() {
        if next == start {
            let mut cycle = path.clone();
            cycle.push(start.to_owned());
            return Some(cycle);
        }
        if seen.insert(next.clone()) {
            path.push(next.clone());
            if let Some(cycle) = cycle_from(start, edges, path, seen) {
                return Some(cycle);
            }
            path.pop();
        }
    }
    None
}

#[test]
fn the_module_graph_has_no_cycle() {
    for src in crates().into_iter().chain([burn_022()]) {
        assert_no_cycle(&graph(&src), "modules import each other in a circle");
    }
}

fn assert_no_cycle(edges: &BTreeMap<String, BTreeSet<String>>, what: &str) {
    for start in edges.keys() {
        let cycle = cycle_from(start, edges, &mut vec![start.clone()], &mut BTreeSet::new());
        assert!(cycle.is_none(), "{what}: {}", cycle.unwrap().join(" -> "));
    }
}

#[test]
fn files_of_one_folder_import_each_other_in_no_circle() {
    let [edition, core] = crates();
    let core_edges = sibling_graph(&core);
    assert!(
        core_edges
            .get("dump::json::read::parser")
            .is_some_and(|to| to.contains("dump::json::read::items")),
        "the graph sees sibling imports: {core_edges:?}"
    );
    assert_no_cycle(
        &sibling_graph(&edition),
        "files of one folder import each other in a circle",
    );
    assert_no_cycle(
        &core_edges,
        "files of one folder of the core import each other in a circle",
    );
    assert_no_cycle(
        &sibling_graph(&burn_022()),
        "files of one folder of the Burn 0.22 edition import each other in a circle",
    );
}

#[test]
fn the_op_path_imports_only_downwards() {
    let [edition, core] = crates();
    let (edition, core) = (graph(&edition), graph(&core));
    for (from, targets) in edition.iter().chain(&core) {
        let Some(allowed) = allowed(from) else {
            continue;
        };
        for to in targets {
            assert!(
                allowed.contains(&to.as_str()),
                "`{from}` imports `{to}`, above it or beside it in the op path's layers"
            );
        }
    }
    assert!(
        edition.contains_key("probe") && core.contains_key("sinks::stats"),
        "the graphs hold the probe (burn-profiled) and the sinks (the core)"
    );
}

#[test]
fn the_reader_sees_grouped_and_nested_paths() {
    let module = vec!["sinks".to_owned(), "stats".to_owned()];
    let found = references(
        "use crate::{DeviceSync, probe::{self, Op}, context::phase};\n\
         let x = super::trace::now(); // crate::ignored\n\
         // crate::also_ignored\n\
         let brace = ('{', \"{ crate::in_a_string\");\n\
         mod imp {\n    use super::DOMAIN;\n    fn f() {}\n}\n\
         use super::after;\n\
         #[cfg(test)]\nuse crate::tests_only;",
        &module,
    );
    let found: Vec<String> = found.iter().map(|p| p.join("::")).collect();
    assert_eq!(
        found,
        [
            "DeviceSync",
            "probe::self",
            "probe::Op",
            "context::phase",
            "sinks::trace::now",
            "sinks::stats::DOMAIN",
            "sinks::after"
        ]
    );
}

#[test]
fn a_cycle_is_found() {
    let edges: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec!["a"]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.into_iter().map(str::to_owned).collect()))
    .collect();
    let cycle = cycle_from("a", &edges, &mut vec!["a".to_owned()], &mut BTreeSet::new());
    assert_eq!(cycle.unwrap(), ["a", "b", "c", "a"]);
    let none = cycle_from("d", &edges, &mut vec!["d".to_owned()], &mut BTreeSet::new());
    assert_eq!(none, None);
}
