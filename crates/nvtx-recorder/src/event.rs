//! The recorded event types.

use std::fmt;

/// One NVTX call, as the tool saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Nanoseconds since the tool was initialised (monotonic clock). Within
    /// [`events()`](crate::events) the events are in increasing `ts_ns` order.
    pub ts_ns: u64,
    /// OS thread id (`gettid`) of the thread that made the call.
    pub tid: u64,
    /// What kind of NVTX call this was.
    pub kind: Kind,
    /// The domain name, or `None` for the global (default-domain) API.
    pub domain: Option<String>,
    /// Nesting information.
    ///
    /// * [`Kind::Push`]: the value NVTX returned, the 0-based level of the new range.
    /// * [`Kind::Pop`]: the value NVTX returned, the level of the popped range, or
    ///   `-1` if no range was open in that domain on this thread.
    /// * [`Kind::Mark`]: the number of push/pop ranges open in that domain on this
    ///   thread (a mark inside a level-0 range has depth 1).
    /// * Everything else: `0`.
    pub depth: i32,
    /// The message: range or mark text, or the name given by a naming call.
    pub message: Message,
    /// The category id, when the event attributes carried a non-zero one, or the
    /// category being named by [`Kind::NameCategory`].
    pub category: Option<u32>,
    /// The ARGB colour, when the event attributes carried one.
    pub color: Option<u32>,
    /// The payload, when the event attributes carried one.
    pub payload: Option<Payload>,
    /// For [`Kind::Start`] the id the tool returned; for [`Kind::End`] the id that
    /// was passed in (so a start and its end share the same id).
    pub range_id: Option<u64>,
    /// The handle involved: for [`Kind::DomainCreate`], [`Kind::DomainDestroy`] and
    /// [`Kind::RegisterString`] the 1-based handle index; for [`Kind::NameThread`]
    /// the OS thread id being named.
    pub handle: Option<u64>,
}

/// The kind of NVTX call an [`Event`] records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `nvtxMark*` / `nvtxDomainMarkEx`.
    Mark,
    /// `nvtxRangePush*` / `nvtxDomainRangePushEx`.
    Push,
    /// `nvtxRangePop` / `nvtxDomainRangePop`.
    Pop,
    /// `nvtxRangeStart*` / `nvtxDomainRangeStartEx`.
    Start,
    /// `nvtxRangeEnd` / `nvtxDomainRangeEnd`.
    End,
    /// `nvtxDomainCreate*`.
    DomainCreate,
    /// `nvtxDomainDestroy`.
    DomainDestroy,
    /// `nvtxDomainRegisterString*`.
    RegisterString,
    /// `nvtxNameCategory*` / `nvtxDomainNameCategory*`.
    NameCategory,
    /// `nvtxNameOsThread*`.
    NameThread,
}

impl Kind {
    /// The snake_case name used in the TSV `kind` column (`"push"`, `"domain_create"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Mark => "mark",
            Kind::Push => "push",
            Kind::Pop => "pop",
            Kind::Start => "start",
            Kind::End => "end",
            Kind::DomainCreate => "domain_create",
            Kind::DomainDestroy => "domain_destroy",
            Kind::RegisterString => "register_string",
            Kind::NameCategory => "name_category",
            Kind::NameThread => "name_thread",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The message of an [`Event`], tagged with how it was passed to NVTX.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Message {
    /// No message (pops, ends, or attributes without a message).
    None,
    /// A `char*` message (`*A` functions or `NVTX_MESSAGE_TYPE_ASCII`).
    Ascii(String),
    /// A `wchar_t*` message (`*W` functions or `NVTX_MESSAGE_TYPE_UNICODE`), decoded
    /// from UTF-32. The `nvtx` crate sends Rust strings this way.
    Unicode(String),
    /// A registered-string handle (`NVTX_MESSAGE_TYPE_REGISTERED`), resolved to its
    /// text. An unknown handle is recorded as `<unknown string N>`.
    Registered(String),
}

impl Message {
    /// The text of the message, whatever its type; `None` for [`Message::None`].
    pub fn text(&self) -> Option<&str> {
        match self {
            Message::None => None,
            Message::Ascii(s) | Message::Unicode(s) | Message::Registered(s) => Some(s),
        }
    }

    /// The name used in the TSV `msg_type` column: `none`, `ascii`, `unicode` or `registered`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Message::None => "none",
            Message::Ascii(_) => "ascii",
            Message::Unicode(_) => "unicode",
            Message::Registered(_) => "registered",
        }
    }
}

/// The payload of an [`Event`], with the type NVTX was given.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Payload {
    /// `NVTX_PAYLOAD_TYPE_UNSIGNED_INT64`.
    U64(u64),
    /// `NVTX_PAYLOAD_TYPE_INT64`.
    I64(i64),
    /// `NVTX_PAYLOAD_TYPE_UNSIGNED_INT32`.
    U32(u32),
    /// `NVTX_PAYLOAD_TYPE_INT32`.
    I32(i32),
    /// `NVTX_PAYLOAD_TYPE_DOUBLE`.
    F64(f64),
    /// `NVTX_PAYLOAD_TYPE_FLOAT`.
    F32(f32),
}

impl fmt::Display for Payload {
    /// Formats as `type:value`, e.g. `u64:42` or `f32:1.5`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Payload::U64(v) => write!(f, "u64:{v}"),
            Payload::I64(v) => write!(f, "i64:{v}"),
            Payload::U32(v) => write!(f, "u32:{v}"),
            Payload::I32(v) => write!(f, "i32:{v}"),
            Payload::F64(v) => write!(f, "f64:{v}"),
            Payload::F32(v) => write!(f, "f32:{v}"),
        }
    }
}
