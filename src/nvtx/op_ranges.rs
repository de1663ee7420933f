//! NVTX: the `burn` domain that op ranges go to, with each op name registered once.
//!
//! Op ranges use the raw `nvtx::sys` calls with a registered string: no allocation, no
//! formatting and no lock per op. Without the `nvtx` cargo feature everything here compiles to
//! nothing.

#[cfg(feature = "nvtx")]
mod imp {
    use std::sync::OnceLock;

    use nvtx::sys::{self, DomainHandle, EventAttributes, StringHandle};

    use crate::probe::Op;

    static DOMAIN: OnceLock<DomainHandle> = OnceLock::new();

    fn domain() -> DomainHandle {
        *DOMAIN.get_or_init(|| sys::domain_create_ascii(c"burn"))
    }

    /// An op's name registered in the op domain, on first use.
    pub(crate) struct OpName(OnceLock<StringHandle>);

    impl OpName {
        pub(crate) const fn new() -> Self {
            OpName(OnceLock::new())
        }
    }

    fn registered(op: &Op) -> StringHandle {
        *op.nvtx
            .0
            .get_or_init(|| sys::domain_register_string_ascii(domain(), op.c_name()))
    }

    pub(crate) fn push_op(op: &Op) {
        let domain = domain();
        let attributes = EventAttributes {
            version: sys::NVTX_VERSION as u16,
            size: sys::NVTX_EVENT_ATTRIBUTES_SIZE as u16,
            category: 0,
            colorType: sys::ColorType::NVTX_COLOR_UNKNOWN.into(),
            color: 0,
            payloadType: sys::PayloadType::NVTX_PAYLOAD_UNKNOWN.into(),
            reserved0: 0,
            payload: sys::PayloadValue { ullValue: 0 },
            messageType: sys::MessageType::NVTX_MESSAGE_TYPE_REGISTERED.into(),
            message: sys::MessageValue {
                registered: registered(op).into(),
            },
        };
        sys::domain_range_push_ex(domain, &attributes);
    }

    pub(crate) fn pop_op() {
        sys::domain_range_pop(domain());
    }
}

#[cfg(not(feature = "nvtx"))]
mod imp {
    use crate::probe::Op;

    pub(crate) struct OpName;

    impl OpName {
        pub(crate) const fn new() -> Self {
            OpName
        }
    }

    pub(crate) fn push_op(_op: &Op) {}
    pub(crate) fn pop_op() {}
}

pub(crate) use imp::{OpName, pop_op, push_op};
