//! The raw NVTX calls, in one place. Without the `nvtx` cargo feature they compile to nothing.

#[cfg(feature = "nvtx")]
use super::label::Color;
use super::label::Label;

/// A domain created by this crate; `None` stands for NVTX's default domain.
#[derive(Clone, Copy, Debug)]
#[doc(hidden)]
pub struct RawDomain {
    /// Unique per domain object in the process (0 is the default domain).
    pub key: u64,
    #[cfg(feature = "nvtx")]
    handle: nvtx::sys::DomainHandle,
}

/// The key of `domain` (0 for the default domain).
#[cfg_attr(not(feature = "nvtx"), allow(dead_code))]
#[doc(hidden)]
pub fn domain_key(domain: Option<RawDomain>) -> u64 {
    domain.map_or(0, |d| d.key)
}

fn next_domain_key() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// A string registered in a domain (0 when no NVTX tool is attached).
#[doc(hidden)]
pub type RawString = u64;

#[cfg(feature = "nvtx")]
mod imp {
    use std::ffi::CString;

    use nvtx::sys::{self, EventAttributes};
    use widestring::WideCString;

    use super::{Color, Label, RawDomain, RawString};

    /// A message as NVTX takes it: ASCII when it can be, UTF-32 otherwise.
    enum Text {
        Ascii(CString),
        Unicode(WideCString),
    }

    impl Text {
        fn new(text: &str) -> Text {
            let text: String = text.chars().filter(|&c| c != '\0').collect();
            if text.is_ascii() {
                Text::Ascii(CString::new(text).unwrap_or_default())
            } else {
                Text::Unicode(WideCString::from_str_truncate(&text))
            }
        }
    }

    fn attributes(
        message: &Text,
        registered: Option<RawString>,
        color: Option<Color>,
        category: u32,
    ) -> EventAttributes {
        let (message_type, message) = match (registered, message) {
            (Some(handle), _) => (
                sys::MessageType::NVTX_MESSAGE_TYPE_REGISTERED,
                sys::MessageValue {
                    registered: handle as usize as _,
                },
            ),
            (None, Text::Ascii(text)) => (
                sys::MessageType::NVTX_MESSAGE_TYPE_ASCII,
                sys::MessageValue {
                    ascii: text.as_ptr(),
                },
            ),
            (None, Text::Unicode(text)) => (
                sys::MessageType::NVTX_MESSAGE_TYPE_UNICODE,
                sys::MessageValue {
                    unicode: text.as_ptr().cast(),
                },
            ),
        };
        EventAttributes {
            version: sys::NVTX_VERSION as u16,
            size: sys::NVTX_EVENT_ATTRIBUTES_SIZE as u16,
            category,
            colorType: if color.is_some() {
                sys::ColorType::NVTX_COLOR_ARGB
            } else {
                sys::ColorType::NVTX_COLOR_UNKNOWN
            }
            .into(),
            color: color.map_or(0, Color::argb),
            payloadType: sys::PayloadType::NVTX_PAYLOAD_UNKNOWN.into(),
            reserved0: 0,
            payload: sys::PayloadValue { ullValue: 0 },
            messageType: message_type.into(),
            message,
        }
    }

    /// Calls `f` with the event attributes of `label` (valid only during the call).
    fn with_attributes<T>(
        label: &Label,
        domain: Option<RawDomain>,
        f: impl FnOnce(&EventAttributes) -> T,
    ) -> T {
        let text = Text::new(label.text());
        let registered = label.registered_in(super::domain_key(domain));
        f(&attributes(
            &text,
            registered,
            label.color_value(),
            label.category_id(),
        ))
    }

    #[doc(hidden)]
    pub fn push(domain: Option<RawDomain>, label: &Label) {
        with_attributes(label, domain, |attributes| match domain {
            Some(RawDomain { handle: d, .. }) => sys::domain_range_push_ex(d, attributes),
            None => sys::range_push_ex(attributes),
        });
    }

    /// Pushes a registered string with no other attribute: the cheapest push there is.
    #[doc(hidden)]
    pub fn push_registered(domain: Option<RawDomain>, handle: RawString) {
        let attributes = attributes(&Text::Ascii(CString::default()), Some(handle), None, 0);
        match domain {
            Some(RawDomain { handle: d, .. }) => sys::domain_range_push_ex(d, &attributes),
            None => sys::range_push_ex(&attributes),
        };
    }

    #[doc(hidden)]
    pub fn pop(domain: Option<RawDomain>) {
        match domain {
            Some(RawDomain { handle: d, .. }) => sys::domain_range_pop(d),
            None => sys::range_pop(),
        };
    }

    #[doc(hidden)]
    pub fn mark(domain: Option<RawDomain>, label: &Label) {
        with_attributes(label, domain, |attributes| match domain {
            Some(RawDomain { handle: d, .. }) => sys::domain_mark_ex(d, attributes),
            None => sys::mark_ex(attributes),
        });
    }

    /// Starts a process range (it may end on another thread); returns its id.
    #[doc(hidden)]
    pub fn start(domain: Option<RawDomain>, label: &Label) -> u64 {
        with_attributes(label, domain, |attributes| match domain {
            Some(RawDomain { handle: d, .. }) => sys::domain_range_start_ex(d, attributes),
            None => sys::range_start_ex(attributes),
        })
    }

    #[doc(hidden)]
    pub fn end(domain: Option<RawDomain>, id: u64) {
        match domain {
            Some(RawDomain { handle: d, .. }) => sys::domain_range_end(d, id),
            None => sys::range_end(id),
        }
    }

    #[doc(hidden)]
    pub fn create_domain(name: &str) -> RawDomain {
        RawDomain {
            key: super::next_domain_key(),
            handle: match Text::new(name) {
                Text::Ascii(name) => sys::domain_create_ascii(&name),
                Text::Unicode(name) => sys::domain_create_unicode(&name),
            },
        }
    }

    #[doc(hidden)]
    pub fn destroy_domain(domain: RawDomain) {
        sys::domain_destroy(domain.handle);
    }

    #[doc(hidden)]
    pub fn register_string(domain: Option<RawDomain>, text: &str) -> RawString {
        let handle: sys::ffi::nvtxStringHandle_t = match (domain, Text::new(text)) {
            (Some(RawDomain { handle: d, .. }), Text::Ascii(text)) => {
                sys::domain_register_string_ascii(d, &text).into()
            }
            (Some(RawDomain { handle: d, .. }), Text::Unicode(text)) => {
                sys::domain_register_string_unicode(d, &text).into()
            }
            // SAFETY: a null domain is NVTX's default domain; the string is valid for the call.
            (None, Text::Ascii(text)) => unsafe {
                sys::ffi::nvtxDomainRegisterStringA(std::ptr::null_mut(), text.as_ptr())
            },
            // SAFETY: as above, with a NUL-terminated UTF-32 string.
            (None, Text::Unicode(text)) => unsafe {
                sys::ffi::nvtxDomainRegisterStringW(std::ptr::null_mut(), text.as_ptr().cast())
            },
        };
        handle as usize as RawString
    }

    #[doc(hidden)]
    pub fn name_category(domain: Option<RawDomain>, id: u32, name: &str) {
        match (domain, Text::new(name)) {
            (Some(RawDomain { handle: d, .. }), Text::Ascii(name)) => {
                sys::domain_name_category_ascii(d, id, &name)
            }
            (Some(RawDomain { handle: d, .. }), Text::Unicode(name)) => {
                sys::domain_name_category_unicode(d, id, &name)
            }
            (None, Text::Ascii(name)) => sys::name_category_ascii(id, &name),
            (None, Text::Unicode(name)) => sys::name_category_unicode(id, &name),
        }
    }

    #[doc(hidden)]
    pub fn name_os_thread(tid: u32, name: &str) {
        match Text::new(name) {
            Text::Ascii(name) => sys::name_os_thread_ascii(tid, &name),
            Text::Unicode(name) => sys::name_os_thread_unicode(tid, &name),
        }
    }
}

#[cfg(not(feature = "nvtx"))]
mod imp {
    use super::{Label, RawDomain, RawString};

    #[doc(hidden)]
    pub fn push(_domain: Option<RawDomain>, _label: &Label) {}
    #[doc(hidden)]
    pub fn push_registered(_domain: Option<RawDomain>, _handle: RawString) {}
    #[doc(hidden)]
    pub fn pop(_domain: Option<RawDomain>) {}
    #[doc(hidden)]
    pub fn mark(_domain: Option<RawDomain>, _label: &Label) {}
    #[doc(hidden)]
    pub fn start(_domain: Option<RawDomain>, _label: &Label) -> u64 {
        0
    }
    #[doc(hidden)]
    pub fn end(_domain: Option<RawDomain>, _id: u64) {}
    #[doc(hidden)]
    pub fn create_domain(_name: &str) -> RawDomain {
        RawDomain {
            key: super::next_domain_key(),
        }
    }
    #[doc(hidden)]
    pub fn destroy_domain(_domain: RawDomain) {}
    #[doc(hidden)]
    pub fn register_string(_domain: Option<RawDomain>, _text: &str) -> RawString {
        0
    }
    #[doc(hidden)]
    pub fn name_category(_domain: Option<RawDomain>, _id: u32, _name: &str) {}
    #[doc(hidden)]
    pub fn name_os_thread(_tid: u32, _name: &str) {}
}

#[doc(hidden)]
pub use imp::*;
