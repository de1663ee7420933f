//! The op-range sink: one NVTX range per op in the `burn` domain, with each op name registered
//! once.
//!
//! Op ranges use the raw `nvtx::sys` calls with a registered string: no allocation, no
//! formatting and no lock per op. Without the `nvtx` cargo feature everything here compiles to
//! nothing.

#[cfg(feature = "nvtx")]
mod imp {
    use std::sync::OnceLock;

    use nvtx::sys::{self, DomainHandle, EventAttributes, StringHandle};

    use crate::context::op::Op;

    static DOMAIN: OnceLock<DomainHandle> = OnceLock::new();

    fn domain() -> DomainHandle {
        *DOMAIN.get_or_init(|| sys::domain_create_ascii(super::DOMAIN_C))
    }

    fn registered(op: &Op) -> StringHandle {
        *op.registered
            .get_or_init(|| sys::domain_register_string_ascii(domain(), op.c_name()))
    }

    #[doc(hidden)]
    pub fn push_op(op: &Op) {
        push(op, sys::PayloadType::NVTX_PAYLOAD_UNKNOWN, 0);
    }

    /// [`push_op`] with a `u64` payload (NVTX's `NVTX_PAYLOAD_TYPE_UNSIGNED_INT64`): the forward
    /// call the op is or works for, as `emit_nvtx`'s sequence numbers tie PyTorch's backward
    /// ranges to their forward ops.
    #[doc(hidden)]
    pub fn push_op_with_payload(op: &Op, payload: u64) {
        push(
            op,
            sys::PayloadType::NVTX_PAYLOAD_TYPE_UNSIGNED_INT64,
            payload,
        );
    }

    /// Pushes `op`'s range, its registered name the message.
    #[inline(always)]
    fn push(op: &Op, payload_type: sys::PayloadType, payload: u64) {
        let attributes = EventAttributes {
            version: sys::NVTX_VERSION as u16,
            size: sys::NVTX_EVENT_ATTRIBUTES_SIZE as u16,
            category: 0,
            colorType: sys::ColorType::NVTX_COLOR_UNKNOWN.into(),
            color: 0,
            payloadType: payload_type.into(),
            reserved0: 0,
            payload: sys::PayloadValue { ullValue: payload },
            messageType: sys::MessageType::NVTX_MESSAGE_TYPE_REGISTERED.into(),
            message: sys::MessageValue {
                registered: registered(op).into(),
            },
        };
        sys::domain_range_push_ex(domain(), &attributes);
    }

    #[doc(hidden)]
    pub fn pop_op() {
        sys::domain_range_pop(domain());
    }

    /// Whether an NVTX tool (Nsight Systems, the NVTX recorder) takes this process's ranges.
    /// NVTX loads its tool, or none, at its first call; without one its calls do nothing.
    /// A registered string's handle, like a domain's, is null then.
    #[doc(hidden)]
    pub fn reach_a_tool() -> bool {
        *REACHED.get_or_init(|| {
            let handle: sys::ffi::nvtxStringHandle_t =
                sys::domain_register_string_ascii(domain(), super::DOMAIN_C).into();
            !handle.is_null()
        })
    }

    /// What [`reach_a_tool`] found, if it was asked: asking registers the domain `burn` and a
    /// string in it, which a tool sees.
    #[doc(hidden)]
    pub fn tool_found() -> Option<bool> {
        REACHED.get().copied()
    }

    static REACHED: OnceLock<bool> = OnceLock::new();
}

#[cfg(not(feature = "nvtx"))]
mod imp {
    use crate::context::op::Op;

    #[doc(hidden)]
    pub fn push_op(_op: &Op) {}
    #[doc(hidden)]
    pub fn push_op_with_payload(_op: &Op, _payload: u64) {}
    #[doc(hidden)]
    pub fn pop_op() {}
    #[doc(hidden)]
    pub fn reach_a_tool() -> bool {
        false
    }
    #[doc(hidden)]
    pub fn tool_found() -> Option<bool> {
        Some(false)
    }
}

#[doc(hidden)]
pub use imp::{pop_op, push_op, push_op_with_payload, reach_a_tool, tool_found};

/// The NVTX domain of op ranges.
#[doc(hidden)]
pub const DOMAIN: &str = "burn";
#[cfg_attr(not(feature = "nvtx"), allow(dead_code))]
const DOMAIN_C: &std::ffi::CStr = c"burn";

#[cfg(test)]
mod tests {
    #[test]
    fn the_domain_has_one_name() {
        assert_eq!(super::DOMAIN_C.to_str(), Ok(super::DOMAIN));
    }
}
