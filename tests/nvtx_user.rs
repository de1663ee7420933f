//! User ranges, marks, domains, handles, capture and stage markers, as the NVTX recorder sees
//! them. Ranges are enabled once for this test binary, with order tracking.

mod common;

use std::panic::catch_unwind;
use std::sync::Once;

use burn::backend::NdArray;
use burn::module::Module;
use burn::nn::{Linear, LinearConfig};
use burn::tensor::Tensor;
use burn_profiled::nvtx::{self, Color, Domain, Handle, Label, RangeConfig, Ranged};
use common::panic_message;
use nvtx_recorder::{Event, Message};

nvtx_recorder::install_static!();

fn enable() {
    static ENABLE: Once = Once::new();
    ENABLE.call_once(|| nvtx::enable(RangeConfig::new().keep_track_of_range_order(true)));
}

/// The events `work` emits on this thread, as `kind domain depth message` lines.
fn emitted(work: impl FnOnce()) -> Vec<String> {
    let tid = nvtx_recorder::current_tid();
    let before = nvtx_recorder::events_of_thread(tid).len();
    work();
    nvtx_recorder::events_of_thread(tid)[before..]
        .iter()
        .map(line)
        .collect()
}

fn line(e: &Event) -> String {
    let text = match &e.message {
        Message::None => String::new(),
        Message::Ascii(t) => format!("ascii:{t}"),
        Message::Unicode(t) => format!("unicode:{t}"),
        Message::Registered(t) => format!("registered:{t}"),
    };
    let domain = e.domain.as_deref().unwrap_or("-");
    let color = e
        .color
        .map(|c| format!(" color={c:08x}"))
        .unwrap_or_default();
    let category = e.category.map(|c| format!(" cat={c}")).unwrap_or_default();
    format!("{} {domain} {} {text}{color}{category}", e.kind, e.depth)
        .trim_end()
        .to_owned()
}

#[test]
fn nested_ranges_and_marks_on_two_threads() {
    enable();
    let scenario = |name: &'static str| {
        move || {
            emitted(|| {
                nvtx::scope(name, || {
                    let _inner = nvtx::range(format!("{name}-inner"));
                    nvtx::mark("here");
                    nvtx::range_push_with(|| "innermost");
                    nvtx::range_pop(Some("innermost"));
                });
            })
        }
    };
    let worker = std::thread::spawn(scenario("worker"));
    let main = scenario("main")();
    let expected = |name: &str| {
        vec![
            format!("push - 0 ascii:{name}"),
            format!("push - 1 ascii:{name}-inner"),
            "mark - 2 ascii:here".to_owned(),
            "push - 2 ascii:innermost".to_owned(),
            "pop - 2".to_owned(),
            "pop - 1".to_owned(),
            "pop - 0".to_owned(),
        ]
    };
    assert_eq!(main, expected("main"));
    assert_eq!(worker.join().unwrap(), expected("worker"));
}

#[test]
fn labels_carry_color_and_category_and_unicode_text() {
    enable();
    let data = nvtx::category("data");
    let events = emitted(|| {
        let _r = nvtx::range(
            Label::new("décodage")
                .color(Color::rgb(255, 0, 0))
                .category(data),
        );
    });
    assert_eq!(
        events,
        [
            format!("push - 0 unicode:décodage color=ffff0000 cat={}", data.id()),
            "pop - 0".to_owned()
        ]
    );
}

#[test]
fn a_wrong_expected_name_panics_with_the_stack_after_popping() {
    enable();
    let os_tid = nvtx_recorder::current_tid();
    let mut message = String::new();
    let events = emitted(|| {
        nvtx::range_push("a");
        nvtx::range_push("b");
        message = panic_message(|| nvtx::range_pop(Some("x")));
        nvtx::range_pop(Some("a"));
    });
    assert_eq!(
        message,
        format!(
            "Popped range (`b`) does not correspond to expected range to pop (`x`)\n  Range stack for thread {os_tid} before the pop is: ['a', 'b']"
        )
    );
    // The pop happened before the check: `b` is gone from NVTX and from the stack.
    assert_eq!(
        events,
        ["push - 0 ascii:a", "push - 1 ascii:b", "pop - 1", "pop - 0"]
    );
}

#[test]
fn a_pop_without_ranges_panics() {
    enable();
    let message = panic_message(|| nvtx::range_pop(None));
    assert_eq!(
        message,
        "No ranges are present for the thread in which a range is being popped"
    );
}

#[test]
fn enabling_twice_panics() {
    enable();
    let message = panic_message(|| nvtx::enable(RangeConfig::new()));
    assert_eq!(
        message,
        "NVTXRangeWrapper singleton can be enabled only once (burn_profiled::nvtx::enable was called twice)"
    );
}

#[test]
fn a_panic_inside_a_range_leaves_nvtx_and_the_stack_balanced() {
    enable();
    let events = emitted(|| {
        let result =
            catch_unwind(|| nvtx::scope("outer", || nvtx::scope("inner", || panic!("boom"))));
        assert!(result.is_err());
    });
    assert_eq!(
        events,
        [
            "push - 0 ascii:outer",
            "push - 1 ascii:inner",
            "pop - 1",
            "pop - 0"
        ]
    );
    // Nothing is left on this thread's order-tracking stack.
    let message = panic_message(|| nvtx::range_pop(None));
    assert!(message.starts_with("No ranges are present"), "{message}");
}

#[test]
fn a_user_domain_with_registered_strings_and_marks() {
    enable();
    let mut io_id = 0;
    let events = emitted(|| {
        let domain = Domain::new("data");
        let decode = domain.register("decode");
        let io = domain.category("io");
        io_id = io.id();
        {
            let _r = domain.range(&decode);
            domain.mark(Label::new("batch ready").category(io));
            let _plain = domain.range("plain");
        }
        // Used outside its domain, a registered label is sent as its text.
        nvtx::mark(&decode);
    });
    assert_eq!(
        events,
        [
            "domain_create data 0 ascii:data",
            "register_string data 0 ascii:decode",
            "name_category data 0 ascii:io cat={io}",
            "push data 0 registered:decode",
            "mark data 1 ascii:batch ready cat={io}",
            "push data 1 ascii:plain",
            "pop data 1",
            "pop data 0",
            "mark - 0 ascii:decode",
            "domain_destroy data 0",
        ]
        .map(|s| s.replace("{io}", &io_id.to_string()))
    );
}

#[test]
fn handles_push_registered_strings_of_the_default_domain() {
    let events = emitted(|| {
        let step = nvtx::register_string("step");
        assert!(
            !step.is_inert(),
            "the recorder is attached, so the handle is live"
        );
        step.push();
        {
            let _r = step.range();
        }
        Handle::pop();
    });
    assert_eq!(
        events,
        [
            "register_string - 0 ascii:step",
            "push - 0 registered:step",
            "push - 1 registered:step",
            "pop - 1",
            "pop - 0",
        ]
    );
}

#[test]
fn capture_is_a_registered_process_range() {
    let tid = nvtx_recorder::current_tid();
    let before = nvtx_recorder::events_of_thread(tid).len();
    nvtx::start_capture();
    nvtx::start_capture(); // already started: nothing more
    assert!(nvtx::is_capturing());
    nvtx::stop_capture();
    nvtx::stop_capture();
    assert!(!nvtx::is_capturing());
    let events = &nvtx_recorder::events_of_thread(tid)[before..];
    let lines: Vec<String> = events.iter().map(line).collect();
    assert_eq!(
        lines,
        [
            "register_string - 0 ascii:capture",
            "start - 0 registered:capture",
            "end - 0"
        ]
    );
    assert_eq!(events[1].range_id, events[2].range_id);
}

#[test]
fn thread_names_reach_nvtx() {
    let events = std::thread::spawn(|| {
        let tid = nvtx_recorder::current_tid();
        (emitted(|| nvtx::name_current_thread("data loader")), tid)
    })
    .join()
    .unwrap();
    assert_eq!(events.0, ["name_thread - 0 ascii:data loader"]);
    let named = nvtx_recorder::events_of_thread(events.1);
    assert_eq!(
        named[0].handle,
        Some(events.1),
        "the thread named is the calling thread"
    );
}

#[derive(Module, Debug)]
struct Net<B: burn::tensor::backend::Backend> {
    encoder: Ranged<Linear<B>>,
}

#[test]
fn a_ranged_module_runs_forward_in_its_range_and_stays_transparent_to_burn() {
    enable();
    let device = Default::default();
    let linear = LinearConfig::new(4, 2).init::<NdArray>(&device);
    let net = Net {
        encoder: Ranged::new("encoder", linear.clone()),
    };
    let x = Tensor::<NdArray, 2>::ones([3, 4], &device);
    let mut y = None;
    let events = emitted(|| y = Some(net.encoder.forward(x.clone())));
    assert_eq!(events, ["push - 0 ascii:encoder", "pop - 0"]);
    // `Deref` reaches the inner module: its own forward, outside any range.
    assert_eq!(
        y.unwrap().into_data(),
        Linear::forward(&net.encoder, x).into_data()
    );
    // Same parameters, same record type as the bare Linear: checkpoints load unchanged.
    assert_eq!(net.num_params(), linear.num_params());
    let record: <Linear<NdArray> as Module<NdArray>>::Record = net.encoder.clone().into_record();
    let reloaded = Ranged::new("encoder", LinearConfig::new(4, 2).init::<NdArray>(&device))
        .load_record(record);
    assert_eq!(
        reloaded.weight.val().into_data(),
        net.encoder.weight.val().into_data()
    );
}

#[test]
fn signposts_mark_the_begin_and_end_of_a_variant() {
    enable();
    let events = emitted(|| {
        let _image = nvtx::signpost("image");
        nvtx::mark("inside");
    });
    assert_eq!(
        events,
        [
            "mark - 0 ascii:image",
            "mark - 0 ascii:inside",
            "mark - 0 ascii:image_end"
        ]
    );
}
