//! A `Session` started in the order a user writes the program (issue 37): the model and the
//! data made first, on `fused::Wgpu`, `Profiled<Wgpu>` (unfused) or `Profiled<Fusion<..>>`, the
//! session started after them, after one step or after five; with and without burn's own fused
//! Wgpu used earlier in the process. Every run finishes its steps with the losses of the same
//! run without a session, bit for bit. Each run is a child process (`session-order`) under a
//! timeout that prints its threads on a hang.

mod support;

use support::{Ran, TIMEOUT};

fn run(args: &[&str]) -> Ran {
    support::run_within(env!("CARGO_BIN_EXE_session-order"), args, TIMEOUT)
}

/// The losses `session-order` prints for `backend` with `args`, after a successful run.
fn losses(backend: &str, args: &[&str]) -> Vec<String> {
    let mut all = vec![backend];
    all.extend(args);
    let ran = run(&all);
    assert_eq!(
        ran.status,
        Some(0),
        "session-order {} fails:\n{}",
        all.join(" "),
        ran.stderr
    );
    ran.losses(backend)
}

/// `backend`'s run with a session started after `after` steps gives the losses of the same run
/// without one.
fn a_session_after(backend: &str, after: &str, without: &[String]) {
    assert_eq!(
        losses(backend, &[after]),
        without,
        "{backend} with the session started after {after} steps gives the losses it gives without"
    );
}

/// The program, 20 times: the model's first ops were submitted to the profiled fusion
/// server but not yet run when the session starts. The session creates no server, so no run
/// can meet cubecl-common's deadlock, whatever the fusion thread has got to.
#[test]
fn a_session_started_after_the_model_on_fused_wgpu_never_hangs_and_changes_no_loss() {
    let without = losses("fused", &["0", "--no-session"]);
    for _ in 0..20 {
        a_session_after("fused", "0", &without);
    }
}

#[test]
fn a_session_started_after_one_or_five_steps_on_fused_wgpu_changes_no_loss() {
    let without = losses("fused", &["0", "--no-session"]);
    a_session_after("fused", "1", &without);
    a_session_after("fused", "5", &without);
}

/// `Profiled<CubeBackend<Wgpu>>` has no fusion server: nothing to wait for.
#[test]
fn a_session_on_the_unfused_profiled_wgpu_in_any_order_changes_no_loss() {
    let without = losses("unfused", &["0", "--no-session"]);
    for after in ["0", "1", "5"] {
        a_session_after("unfused", after, &without);
    }
}

/// `Profiled<Fusion<..>>` runs on burn's fusion server: the session waits for that one only.
#[test]
fn a_session_on_profiled_outside_fusion_in_any_order_changes_no_loss() {
    let without = losses("outside", &["0", "--no-session"]);
    for after in ["0", "1", "5"] {
        a_session_after("outside", after, &without);
    }
}

/// burn's own fused Wgpu trained first, then `share_device` as the guide says: the model on
/// each profiled backend, then the session, trains as without the session (and burn's run as
/// alone).
#[test]
fn after_burns_fused_wgpu_and_share_device_a_session_after_the_model_changes_no_loss() {
    for backend in ["fused", "unfused", "outside"] {
        let without = run(&[backend, "0", "--burn-first", "--no-session"]);
        let with = run(&[backend, "0", "--burn-first"]);
        for ran in [&without, &with] {
            assert_eq!(ran.status, Some(0), "{backend} fails:\n{}", ran.stderr);
        }
        assert_eq!(
            with.losses(backend),
            without.losses(backend),
            "{backend}'s losses with the session are those without"
        );
        assert_eq!(
            with.losses("burn"),
            without.losses("burn"),
            "burn's run before {backend}"
        );
    }
}
