//! Until `nvtx::enable`, user ranges, marks, domains and stage markers do nothing: no NVTX
//! call, no name computed, no order check.

use burn_profiled::nvtx::{self, Domain};

nvtx_recorder::install_static!();

#[test]
fn nothing_is_emitted_and_no_closure_runs_while_disabled() {
    let tid = nvtx_recorder::current_tid();
    assert!(!nvtx::is_enabled());

    nvtx::range_push("a");
    nvtx::range_push_with(|| -> String { panic!("a name computed while disabled") });
    nvtx::range_pop(Some("not checked"));
    nvtx::range_pop(None);
    {
        let _r = nvtx::range("b");
        let _s = nvtx::range_with(|| -> String { panic!("a name computed while disabled") });
        let _signpost = nvtx::signpost("variant");
    }
    assert_eq!(nvtx::scope("c", || 7), 7);
    nvtx::mark("m");
    nvtx::mark_with(|| -> String { panic!("a name computed while disabled") });

    assert_eq!(
        nvtx_recorder::events_of_thread(tid),
        [],
        "disabled: nothing reaches NVTX"
    );

    // A domain is created (that is its constructor's job), but its ranges and marks stay silent.
    let domain = Domain::new("silent");
    {
        let _r = domain.range("x");
        let _s = domain.range_with(|| -> String { panic!("a name computed while disabled") });
        domain.mark("y");
    }
    let kinds: Vec<_> = nvtx_recorder::events_of_thread(tid)
        .iter()
        .map(|e| e.kind)
        .collect();
    assert_eq!(kinds, [nvtx_recorder::Kind::DomainCreate]);
}
