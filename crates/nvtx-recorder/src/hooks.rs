//! The NVTX callbacks the recorder installs, and the decoding of their C arguments.
//!
//! Every callback body runs under [`guard`], so a bug can never unwind across
//! the C boundary (that would abort the host process).

use crate::event::{Kind, Payload};
use crate::store::{self, Raw, RawMessage};
use nvtx_sys::ffi as sys;
use std::ffi::{CStr, c_char, c_int};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;

type Attrs = sys::nvtxEventAttributes_t;
type DomainHandle = sys::nvtxDomainHandle_t;
type StringHandle = sys::nvtxStringHandle_t;
type WChar = sys::wchar_t;

/// Runs `f`, turning a panic into `fallback`.
pub(crate) fn guard<R>(fallback: R, f: impl FnOnce() -> R) -> R {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(fallback)
}

// ---- decoding of C arguments (pointers are only valid during the call) ----

/// # Safety
/// `p` is null or a valid NUL-terminated C string.
unsafe fn ascii_text(p: *const c_char) -> Option<String> {
    // SAFETY: non-null `p` is a valid C string per the caller's contract.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// Decodes a NUL-terminated UTF-32 `wchar_t` string (Linux `wchar_t` is 32 bits).
///
/// # Safety
/// `p` is null or a valid NUL-terminated `wchar_t` string.
unsafe fn wide_text(p: *const WChar) -> Option<String> {
    if p.is_null() {
        return None;
    }
    let mut out = String::new();
    let mut i = 0;
    loop {
        // SAFETY: every unit up to and including the terminating NUL is readable.
        let unit = unsafe { *p.add(i) };
        if unit == 0 {
            return Some(out);
        }
        let c = u32::try_from(unit)
            .ok()
            .and_then(char::from_u32)
            .unwrap_or(char::REPLACEMENT_CHARACTER);
        out.push(c);
        i += 1;
    }
}

/// # Safety
/// As for [`ascii_text`].
unsafe fn ascii(p: *const c_char) -> RawMessage {
    // SAFETY: forwarded contract.
    unsafe { ascii_text(p) }.map_or(RawMessage::None, RawMessage::Ascii)
}

/// # Safety
/// As for [`wide_text`].
unsafe fn unicode(p: *const WChar) -> RawMessage {
    // SAFETY: forwarded contract.
    unsafe { wide_text(p) }.map_or(RawMessage::None, RawMessage::Unicode)
}

/// Builds a [`Raw`] event from an `nvtxEventAttributes_t` (which may be null).
///
/// # Safety
/// `attr` is null or points to a valid attributes struct whose message pointer,
/// if any, is valid for its declared type.
unsafe fn from_attrs(kind: Kind, domain: usize, attr: *const Attrs) -> Raw {
    let mut raw = Raw::new(kind, domain);
    // SAFETY: `attr` is null or valid per the caller's contract.
    let Some(a) = (unsafe { attr.as_ref() }) else {
        return raw;
    };
    raw.category = (a.category != 0).then_some(a.category);
    raw.color = (a.colorType == sys::nvtxColorType_t::NVTX_COLOR_ARGB as i32).then_some(a.color);
    // SAFETY (all union reads below): the type tag says which member is live.
    raw.payload = unsafe {
        use sys::nvtxPayloadType_t as P;
        match a.payloadType {
            t if t == P::NVTX_PAYLOAD_TYPE_UNSIGNED_INT64 as i32 => {
                Some(Payload::U64(a.payload.ullValue))
            }
            t if t == P::NVTX_PAYLOAD_TYPE_INT64 as i32 => Some(Payload::I64(a.payload.llValue)),
            t if t == P::NVTX_PAYLOAD_TYPE_DOUBLE as i32 => Some(Payload::F64(a.payload.dValue)),
            t if t == P::NVTX_PAYLOAD_TYPE_UNSIGNED_INT32 as i32 => {
                Some(Payload::U32(a.payload.uiValue))
            }
            t if t == P::NVTX_PAYLOAD_TYPE_INT32 as i32 => Some(Payload::I32(a.payload.iValue)),
            t if t == P::NVTX_PAYLOAD_TYPE_FLOAT as i32 => Some(Payload::F32(a.payload.fValue)),
            _ => None,
        }
    };
    raw.message = unsafe {
        use sys::nvtxMessageType_t as M;
        match a.messageType {
            t if t == M::NVTX_MESSAGE_TYPE_ASCII as i32 => ascii(a.message.ascii),
            t if t == M::NVTX_MESSAGE_TYPE_UNICODE as i32 => unicode(a.message.unicode),
            t if t == M::NVTX_MESSAGE_TYPE_REGISTERED as i32 => {
                RawMessage::Registered(a.message.registered as usize)
            }
            _ => RawMessage::None,
        }
    };
    raw
}

/// A global-API event carrying just a message.
fn global(kind: Kind, message: RawMessage) -> Raw {
    let mut raw = Raw::new(kind, 0);
    raw.message = message;
    raw
}

fn domain_index(d: DomainHandle) -> usize {
    d as usize
}

// ---- the shared behaviour behind the A/W/Ex and domain variants ----

fn mark(mut raw: Raw) {
    raw.depth = store::open_ranges(raw.domain);
    store::record(raw);
}

fn push(mut raw: Raw) -> c_int {
    let level = store::push_level(raw.domain);
    raw.depth = level;
    store::record(raw);
    level
}

fn pop(domain: usize) -> c_int {
    let level = store::pop_level(domain);
    let mut raw = Raw::new(Kind::Pop, domain);
    raw.depth = level;
    store::record(raw);
    level
}

fn start(mut raw: Raw) -> u64 {
    let id = store::next_range_id();
    raw.range_id = Some(id);
    store::record(raw);
    id
}

fn end(domain: usize, id: u64) {
    let mut raw = Raw::new(Kind::End, domain);
    raw.range_id = Some(id);
    store::record(raw);
}

fn name_category(domain: usize, category: u32, message: RawMessage) {
    let mut raw = Raw::new(Kind::NameCategory, domain);
    raw.category = Some(category);
    raw.message = message;
    store::record(raw);
}

fn name_thread(thread_id: u32, message: RawMessage) {
    let mut raw = Raw::new(Kind::NameThread, 0);
    raw.handle = Some(u64::from(thread_id));
    raw.message = message;
    store::record(raw);
}

fn text_of(message: &RawMessage) -> String {
    match message {
        RawMessage::Ascii(s) | RawMessage::Unicode(s) => s.clone(),
        RawMessage::None | RawMessage::Registered(_) => String::new(),
    }
}

fn register_string(domain: usize, message: RawMessage) -> StringHandle {
    let handle = store::add_string(text_of(&message));
    let mut raw = Raw::new(Kind::RegisterString, domain);
    raw.handle = Some(handle as u64);
    raw.message = message;
    store::record(raw);
    ptr::without_provenance_mut(handle)
}

fn domain_create(message: RawMessage) -> DomainHandle {
    let handle = store::add_domain(text_of(&message));
    let mut raw = Raw::new(Kind::DomainCreate, handle);
    raw.handle = Some(handle as u64);
    raw.message = message;
    store::record(raw);
    ptr::without_provenance_mut(handle)
}

fn domain_destroy(domain: usize) {
    let mut raw = Raw::new(Kind::DomainDestroy, domain);
    raw.handle = Some(domain as u64);
    store::record(raw);
}

// ---- the callbacks (signatures checked against the `*_impl_fntype` aliases) ----

pub(crate) unsafe extern "C" fn mark_ex(attr: *const Attrs) {
    // SAFETY: NVTX passes a valid (or null) attributes pointer.
    guard((), || mark(unsafe { from_attrs(Kind::Mark, 0, attr) }));
}
pub(crate) unsafe extern "C" fn mark_a(msg: *const c_char) {
    // SAFETY: NVTX passes a valid (or null) C string.
    guard((), || mark(global(Kind::Mark, unsafe { ascii(msg) })));
}
pub(crate) unsafe extern "C" fn mark_w(msg: *const WChar) {
    // SAFETY: NVTX passes a valid (or null) wide string.
    guard((), || mark(global(Kind::Mark, unsafe { unicode(msg) })));
}
pub(crate) unsafe extern "C" fn range_start_ex(attr: *const Attrs) -> u64 {
    // SAFETY: as for `mark_ex`.
    guard(0, || start(unsafe { from_attrs(Kind::Start, 0, attr) }))
}
pub(crate) unsafe extern "C" fn range_start_a(msg: *const c_char) -> u64 {
    // SAFETY: as for `mark_a`.
    guard(0, || start(global(Kind::Start, unsafe { ascii(msg) })))
}
pub(crate) unsafe extern "C" fn range_start_w(msg: *const WChar) -> u64 {
    // SAFETY: as for `mark_w`.
    guard(0, || start(global(Kind::Start, unsafe { unicode(msg) })))
}
pub(crate) unsafe extern "C" fn range_end(id: u64) {
    guard((), || end(0, id));
}
pub(crate) unsafe extern "C" fn range_push_ex(attr: *const Attrs) -> c_int {
    // SAFETY: as for `mark_ex`.
    guard(-1, || push(unsafe { from_attrs(Kind::Push, 0, attr) }))
}
pub(crate) unsafe extern "C" fn range_push_a(msg: *const c_char) -> c_int {
    // SAFETY: as for `mark_a`.
    guard(-1, || push(global(Kind::Push, unsafe { ascii(msg) })))
}
pub(crate) unsafe extern "C" fn range_push_w(msg: *const WChar) -> c_int {
    // SAFETY: as for `mark_w`.
    guard(-1, || push(global(Kind::Push, unsafe { unicode(msg) })))
}
pub(crate) unsafe extern "C" fn range_pop() -> c_int {
    guard(-1, || pop(0))
}
pub(crate) unsafe extern "C" fn name_category_a(category: u32, name: *const c_char) {
    // SAFETY: as for `mark_a`.
    guard((), || name_category(0, category, unsafe { ascii(name) }));
}
pub(crate) unsafe extern "C" fn name_category_w(category: u32, name: *const WChar) {
    // SAFETY: as for `mark_w`.
    guard((), || name_category(0, category, unsafe { unicode(name) }));
}
pub(crate) unsafe extern "C" fn name_os_thread_a(thread_id: u32, name: *const c_char) {
    // SAFETY: as for `mark_a`.
    guard((), || name_thread(thread_id, unsafe { ascii(name) }));
}
pub(crate) unsafe extern "C" fn name_os_thread_w(thread_id: u32, name: *const WChar) {
    // SAFETY: as for `mark_w`.
    guard((), || name_thread(thread_id, unsafe { unicode(name) }));
}

pub(crate) unsafe extern "C" fn domain_mark_ex(d: DomainHandle, attr: *const Attrs) {
    // SAFETY: as for `mark_ex`.
    guard((), || {
        mark(unsafe { from_attrs(Kind::Mark, domain_index(d), attr) })
    });
}
pub(crate) unsafe extern "C" fn domain_range_start_ex(d: DomainHandle, attr: *const Attrs) -> u64 {
    // SAFETY: as for `mark_ex`.
    guard(0, || {
        start(unsafe { from_attrs(Kind::Start, domain_index(d), attr) })
    })
}
pub(crate) unsafe extern "C" fn domain_range_end(d: DomainHandle, id: u64) {
    guard((), || end(domain_index(d), id));
}
pub(crate) unsafe extern "C" fn domain_range_push_ex(d: DomainHandle, attr: *const Attrs) -> c_int {
    // SAFETY: as for `mark_ex`.
    guard(-1, || {
        push(unsafe { from_attrs(Kind::Push, domain_index(d), attr) })
    })
}
pub(crate) unsafe extern "C" fn domain_range_pop(d: DomainHandle) -> c_int {
    guard(-1, || pop(domain_index(d)))
}
pub(crate) unsafe extern "C" fn domain_name_category_a(
    d: DomainHandle,
    category: u32,
    name: *const c_char,
) {
    // SAFETY: as for `mark_a`.
    guard((), || {
        name_category(domain_index(d), category, unsafe { ascii(name) })
    });
}
pub(crate) unsafe extern "C" fn domain_name_category_w(
    d: DomainHandle,
    category: u32,
    name: *const WChar,
) {
    // SAFETY: as for `mark_w`.
    guard((), || {
        name_category(domain_index(d), category, unsafe { unicode(name) })
    });
}
pub(crate) unsafe extern "C" fn domain_register_string_a(
    d: DomainHandle,
    s: *const c_char,
) -> StringHandle {
    // SAFETY: as for `mark_a`.
    guard(ptr::null_mut(), || {
        register_string(domain_index(d), unsafe { ascii(s) })
    })
}
pub(crate) unsafe extern "C" fn domain_register_string_w(
    d: DomainHandle,
    s: *const WChar,
) -> StringHandle {
    // SAFETY: as for `mark_w`.
    guard(ptr::null_mut(), || {
        register_string(domain_index(d), unsafe { unicode(s) })
    })
}
pub(crate) unsafe extern "C" fn domain_create_a(name: *const c_char) -> DomainHandle {
    // SAFETY: as for `mark_a`.
    guard(ptr::null_mut(), || domain_create(unsafe { ascii(name) }))
}
pub(crate) unsafe extern "C" fn domain_create_w(name: *const WChar) -> DomainHandle {
    // SAFETY: as for `mark_w`.
    guard(ptr::null_mut(), || domain_create(unsafe { unicode(name) }))
}
pub(crate) unsafe extern "C" fn domain_destroy_cb(d: DomainHandle) {
    guard((), || domain_destroy(domain_index(d)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_utf32_and_ascii() {
        let wide: Vec<WChar> = "héllo 🦀".chars().map(|c| c as WChar).chain([0]).collect();
        // SAFETY: NUL-terminated buffers.
        unsafe {
            assert_eq!(wide_text(wide.as_ptr()).as_deref(), Some("héllo 🦀"));
            assert_eq!(
                wide_text([0xD800, -1, 0].as_ptr()).as_deref(),
                Some("\u{FFFD}\u{FFFD}")
            );
            assert_eq!(wide_text(ptr::null()), None);
            assert_eq!(ascii_text(c"abc".as_ptr()).as_deref(), Some("abc"));
            assert_eq!(ascii_text(ptr::null()), None);
        }
    }
}
