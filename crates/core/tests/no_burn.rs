//! The core serves every edition, so it may depend on no burn crate: a burn crate in its tree
//! would tie it to one Burn version (and two editions in one workspace to two of them at once).

use std::process::Command;

/// Every package in the core's dependency tree (normal and build dependencies, all features),
/// from `cargo tree`.
fn dependency_tree() -> Vec<String> {
    let output = Command::new(env!("CARGO"))
        .args([
            "tree",
            "--package",
            "burn-profiled-core",
            "--edges",
            "normal,build",
            "--all-features",
            "--prefix",
            "none",
            "--format",
            "{p}",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| line.split_whitespace().next().unwrap_or("").to_owned())
        .filter(|name| !name.is_empty())
        .collect()
}

#[test]
fn the_core_depends_on_no_burn_crate_at_any_version() {
    let tree = dependency_tree();
    assert!(
        tree.iter().any(|name| name == "serde"),
        "the tree was not read (no serde in it): {tree:?}"
    );
    let burn: Vec<&String> = tree
        .iter()
        .filter(|name| {
            (name.starts_with("burn") && name.as_str() != "burn-profiled-core")
                || name.starts_with("cubecl")
        })
        .collect();
    assert!(
        burn.is_empty(),
        "burn-profiled-core depends on {burn:?}: move what needs Burn into an edition"
    );
}
