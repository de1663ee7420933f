//! The README's session block compiles and runs as written (`src/bin/readme_session.rs`), on
//! `fused::Wgpu` with burn's default features, its model made before its session.

mod support;

use std::path::Path;

fn readme_block() -> String {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .expect("the README is two folders up");
    let start = readme
        .find("```rust\nuse burn::optim::{GradientsParams, Optimizer};")
        .expect("the README has the session block");
    let body = &readme[start + "```rust\n".len()..];
    body[..body.find("```").expect("the block ends")].to_owned()
}

fn program_block() -> String {
    let program = include_str!("../src/bin/readme_session.rs");
    let start = program
        .find("    // README: begin\n")
        .expect("the begin marker")
        + "    // README: begin\n".len();
    let end = program
        .find("    // README: end\n")
        .expect("the end marker");
    program[start..end]
        .lines()
        .map(|line| line.strip_prefix("    ").unwrap_or(line))
        .map(|line| format!("{line}\n"))
        .collect()
}

/// The program runs the README's block, not a copy that has drifted from it.
#[test]
fn the_program_holds_the_readmes_session_block_verbatim() {
    assert_eq!(
        program_block(),
        readme_block(),
        "src/bin/readme_session.rs and the README's session block differ: copy one to the other"
    );
}

/// As a new user copies it: the model first, then the session, then the steps; the run
/// directory written.
#[test]
fn the_readmes_session_block_runs_after_the_model_is_made_and_writes_the_run() {
    let dir = std::env::temp_dir().join(format!("readme-session-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let ran = support::run_in(
        env!("CARGO_BIN_EXE_readme-session"),
        &[],
        &dir,
        support::TIMEOUT,
    );
    assert_eq!(
        ran.status,
        Some(0),
        "the README's block fails:\n{}",
        ran.stderr
    );
    assert!(
        dir.join("target/run/run.json").is_file(),
        "the session wrote its run directory:\n{}",
        ran.stdout
    );
    let _ = std::fs::remove_dir_all(&dir);
}
