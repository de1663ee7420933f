//! The global (non-domain) NVTX API through the `nvtx` crate, recorded by static injection.

mod common;

use common::{brief, capture};
use nvtx::{Color, EventAttributes, LocalRange, Str};
use nvtx_recorder::{Kind, Message, Payload};

nvtx_recorder::install_static!();

#[test]
fn nested_push_pop_ascii_and_unicode() {
    let (_, evs) = capture(|| {
        let _outer = LocalRange::new(c"outer");
        {
            let _inner = LocalRange::new(Str::from_str_lossy("inner ü 🦀"));
            nvtx::mark(c"inside");
        }
        nvtx::mark(Str::from_str_lossy("after"));
    });
    assert_eq!(
        brief(&evs),
        [
            "push - 0 ascii outer",
            "push - 1 unicode inner ü 🦀",
            "mark - 2 ascii inside",
            "pop - 1 none",
            "mark - 1 unicode after",
            "pop - 0 none",
        ]
    );
    assert_eq!(evs[1].message, Message::Unicode("inner ü 🦀".into()));
    assert!(evs.windows(2).all(|w| w[0].ts_ns <= w[1].ts_ns));
}

#[test]
fn push_pop_return_values() {
    let (levels, evs) = capture(|| {
        [
            nvtx::sys::range_push_ascii(c"a"),
            nvtx::sys::range_push_ascii(c"b"),
            nvtx::sys::range_pop(),
            nvtx::sys::range_pop(),
            nvtx::sys::range_pop(),
        ]
    });
    assert_eq!(levels, [0, 1, 1, 0, -1]);
    assert_eq!(
        brief(&evs),
        [
            "push - 0 ascii a",
            "push - 1 ascii b",
            "pop - 1 none",
            "pop - 0 none",
            "pop - -1 none",
        ]
    );
}

#[test]
fn attributes_color_payload_category() {
    let (_, evs) = capture(|| {
        let cat = nvtx::register_category(c"io");
        let attrs = EventAttributes::builder()
            .message(c"attrs")
            .color(Color::new(0xff, 0x00, 0x00, 0xff))
            .payload(42_i32)
            .category(cat)
            .build();
        let _r = LocalRange::new(attrs);
        let no_message = EventAttributes::builder()
            .color(Color::new(0x11, 0x22, 0x33, 0x44))
            .build();
        nvtx::mark(no_message);
    });
    assert_eq!(evs.len(), 4, "{evs:#?}");
    assert_eq!(evs[0].kind, Kind::NameCategory);
    assert_eq!(evs[0].message, Message::Ascii("io".into()));
    let cat = evs[0].category.expect("category id");
    assert_eq!(evs[1].kind, Kind::Push);
    assert_eq!(evs[1].message, Message::Ascii("attrs".into()));
    assert_eq!(evs[1].category, Some(cat));
    assert_eq!(evs[1].color, Some(0xffff0000));
    assert_eq!(evs[1].payload, Some(Payload::I32(42)));
    assert_eq!(
        brief(&evs[2..]),
        ["mark - 1 none color=#44112233", "pop - 0 none"]
    );
}

#[test]
fn every_payload_type() {
    let payloads: [nvtx::Payload; 6] = [
        u64::MAX.into(),
        (-5_i64).into(),
        7_u32.into(),
        (-8_i32).into(),
        1.5_f64.into(),
        (-0.25_f32).into(),
    ];
    let (_, evs) = capture(|| {
        for p in payloads {
            nvtx::mark(EventAttributes::builder().message(c"p").payload(p).build());
        }
    });
    let got: Vec<_> = evs.iter().map(|e| e.payload).collect();
    assert_eq!(
        got,
        [
            Some(Payload::U64(u64::MAX)),
            Some(Payload::I64(-5)),
            Some(Payload::U32(7)),
            Some(Payload::I32(-8)),
            Some(Payload::F64(1.5)),
            Some(Payload::F32(-0.25)),
        ]
    );
    assert_eq!(
        brief(&evs[4..]),
        [
            "mark - 0 ascii p payload=f64:1.5",
            "mark - 0 ascii p payload=f32:-0.25"
        ]
    );
}

#[test]
fn name_thread_and_unicode_category() {
    let tid = nvtx_recorder::current_tid();
    let (_, evs) = capture(|| {
        nvtx::name_thread(u32::try_from(tid).unwrap(), c"tester");
        nvtx::name_thread(7, Str::from_str_lossy("seven"));
        nvtx::register_category(Str::from_str_lossy("ninety-nine"));
    });
    let cat = evs[2].category.expect("category id");
    assert_eq!(
        brief(&evs),
        [
            format!("name_thread - 0 ascii tester os_tid={tid}"),
            "name_thread - 0 unicode seven os_tid=7".to_string(),
            format!("name_category - 0 unicode ninety-nine cat={cat}"),
        ]
    );
    assert_eq!(evs[0].handle, Some(tid));
}

#[test]
fn global_start_end_on_one_thread() {
    let (_, evs) = capture(|| {
        let a = nvtx::Range::new(c"a");
        let b = nvtx::Range::new(Str::from_str_lossy("b"));
        drop(a);
        drop(b);
    });
    let ids: Vec<_> = evs.iter().map(|e| e.range_id.expect("range id")).collect();
    assert_eq!(ids[0], ids[2]);
    assert_eq!(ids[1], ids[3]);
    assert_ne!(ids[0], ids[1]);
    let kinds: Vec<_> = evs.iter().map(|e| (e.kind, e.message.text())).collect();
    assert_eq!(
        kinds,
        [
            (Kind::Start, Some("a")),
            (Kind::Start, Some("b")),
            (Kind::End, None),
            (Kind::End, None),
        ]
    );
}
