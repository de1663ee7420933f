//! Domains, registered strings and domain categories, recorded by static injection.

mod common;

use common::{brief, capture};
use nvtx::{Color, Domain, Str};
use nvtx_recorder::{Kind, Message, Payload};

nvtx_recorder::install_static!();

#[test]
fn registered_strings_and_domain_marks() {
    let (_, evs) = capture(|| {
        let domain = Domain::new(c"burn");
        let fwd = domain.register_string(c"forward");
        let mm = domain.register_string(Str::from_str_lossy("matmul"));
        {
            let _f = domain.local_range(fwd);
            let _m = domain.local_range(mm);
            domain.mark(mm);
            domain.mark(c"tick");
        }
        domain.mark(fwd);
    });
    assert_eq!(
        brief(&evs),
        [
            "domain_create burn 0 ascii burn",
            "register_string burn 0 ascii forward",
            "register_string burn 0 unicode matmul",
            "push burn 0 registered forward",
            "push burn 1 registered matmul",
            "mark burn 2 registered matmul",
            "mark burn 2 ascii tick",
            "pop burn 1 none",
            "pop burn 0 none",
            "mark burn 0 registered forward",
            "domain_destroy burn 0 none",
        ]
    );
    let domain_handle = evs[0].handle.expect("domain handle");
    assert_eq!(evs.last().unwrap().handle, Some(domain_handle));
    assert!(evs[1].handle.is_some() && evs[1].handle != evs[2].handle);
    assert_eq!(evs[3].message, Message::Registered("forward".into()));
    assert_eq!(evs[3].domain.as_deref(), Some("burn"));
}

#[test]
fn plain_messages_in_domain_ranges_get_registered() {
    // nvtx's `Domain::local_range` registers plain messages first.
    let (_, evs) = capture(|| {
        let domain = Domain::new(Str::from_str_lossy("ünï"));
        let _r = domain.local_range(c"plain");
    });
    assert_eq!(
        brief(&evs),
        [
            "domain_create ünï 0 unicode ünï",
            "register_string ünï 0 ascii plain",
            "push ünï 0 registered plain",
            "pop ünï 0 none",
            "domain_destroy ünï 0 none",
        ]
    );
}

#[test]
fn domain_and_global_depths_are_separate() {
    let (_, evs) = capture(|| {
        let a = Domain::new(c"a");
        let b = Domain::new(c"b");
        let _ga = nvtx::LocalRange::new(c"global");
        let _a1 = a.local_range(c"a1");
        let _a2 = a.local_range(c"a2");
        let _b1 = b.local_range(c"b1");
        nvtx::mark(c"g");
    });
    let pushes_and_marks: Vec<_> = brief(&evs)
        .into_iter()
        .filter(|l| l.starts_with("push") || l.starts_with("mark") || l.starts_with("pop"))
        .collect();
    assert_eq!(
        pushes_and_marks,
        [
            "push - 0 ascii global",
            "push a 0 registered a1",
            "push a 1 registered a2",
            "push b 0 registered b1",
            "mark - 1 ascii g",
            "pop b 0 none",
            "pop a 1 none",
            "pop a 0 none",
            "pop - 0 none",
        ]
    );
}

#[test]
fn domain_attributes_and_categories() {
    let (_, evs) = capture(|| {
        let domain = Domain::new(c"attrs");
        let layers = domain.register_category(c"layers");
        let fwd = domain.register_string(c"forward");
        let attrs = domain
            .event_attributes_builder()
            .category(layers)
            .message(fwd)
            .color(Color::new(0x00, 0x80, 0xff, 0xff))
            .payload(3_u64)
            .build();
        let _r = domain.local_range(attrs);
    });
    assert_eq!(
        brief(&evs),
        [
            "domain_create attrs 0 ascii attrs",
            "name_category attrs 0 ascii layers cat=1",
            "register_string attrs 0 ascii forward",
            "push attrs 0 registered forward cat=1 color=#ff0080ff payload=u64:3",
            "pop attrs 0 none",
            "domain_destroy attrs 0 none",
        ]
    );
    assert_eq!(evs[3].payload, Some(Payload::U64(3)));
    assert_eq!(evs[3].color, Some(0xff0080ff));
}

#[test]
fn domain_start_end() {
    let (_, evs) = capture(|| {
        let domain = Domain::new(c"ranges");
        let r = domain.range(c"epoch");
        drop(r);
    });
    // Unlike `local_range`, nvtx's `Domain::range` passes plain messages as they are.
    let id = evs[1].range_id.expect("range id");
    assert_eq!(
        brief(&evs),
        [
            "domain_create ranges 0 ascii ranges".to_string(),
            format!("start ranges 0 ascii epoch id={id}"),
            format!("end ranges 0 none id={id}"),
            "domain_destroy ranges 0 none".to_string(),
        ]
    );
    assert_eq!(evs[2].kind, Kind::End);
}

#[test]
fn null_domain_is_the_global_domain() {
    // NVTX: a NULL domain handle means the default domain, i.e. the global API.
    let (levels, evs) = capture(|| {
        let attrs = EventAttributesRaw::ascii(c"null-domain");
        let outer = nvtx::sys::range_push_ascii(c"outer");
        // SAFETY: a NULL domain is valid; `attrs` lives across the call.
        let inner =
            unsafe { nvtx::sys::ffi::nvtxDomainRangePushEx(std::ptr::null_mut(), &attrs.0) };
        let pop_inner = nvtx::sys::range_pop();
        // SAFETY: as above.
        let pop_outer = unsafe { nvtx::sys::ffi::nvtxDomainRangePop(std::ptr::null_mut()) };
        [outer, inner, pop_inner, pop_outer]
    });
    assert_eq!(levels, [0, 1, 1, 0]);
    assert_eq!(
        brief(&evs),
        [
            "push - 0 ascii outer",
            "push - 1 ascii null-domain",
            "pop - 1 none",
            "pop - 0 none",
        ]
    );
}

/// A hand-built `nvtxEventAttributes_t` with only an ASCII message.
struct EventAttributesRaw(nvtx::sys::EventAttributes);

impl EventAttributesRaw {
    fn ascii(message: &'static std::ffi::CStr) -> Self {
        // SAFETY: all-zero is a valid attributes value (no color, payload or message).
        let mut a: nvtx::sys::EventAttributes = unsafe { std::mem::zeroed() };
        a.version = nvtx::sys::NVTX_VERSION as u16;
        a.size = nvtx::sys::NVTX_EVENT_ATTRIBUTES_SIZE as u16;
        a.messageType = nvtx::sys::MessageType::NVTX_MESSAGE_TYPE_ASCII as i32;
        a.message.ascii = message.as_ptr();
        Self(a)
    }
}
