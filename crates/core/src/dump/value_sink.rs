//! Where the dumper hands what it reads for `[numerics]`: each tensor it reads and each
//! gradient it sets, by name (`dump:<path>`, `grad:<path>`). The numerics sink installs itself
//! here when it starts; the dumper sits below the sinks and cannot call them.

use std::sync::OnceLock;

use super::blob::Array;

/// The prefix of the name of a record of a tensor the dumper read: `dump:<its path>`.
pub const DUMPED_PREFIX: &str = "dump:";

/// The prefix of the name of a record of a gradient the dumper set: `grad:<its path>`.
pub const GRADIENT_PREFIX: &str = "grad:";

/// The numerics sink's two entry points.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct ValueSink {
    /// Whether values are recorded now (numerics on, the step inside `[numerics] steps`).
    pub wanted: fn() -> bool,
    /// Records one value by name.
    pub record: fn(&str, &Array),
}

static SINK: OnceLock<ValueSink> = OnceLock::new();

/// Makes the dumper hand its values to `sink` (the first call wins: there is one sink).
#[doc(hidden)]
pub fn install(sink: ValueSink) {
    let _ = SINK.set(sink);
}

/// Whether values are recorded now.
pub(super) fn wanted() -> bool {
    SINK.get().is_some_and(|sink| (sink.wanted)())
}

/// Records `value` as `name`.
pub(super) fn record(name: &str, value: &Array) {
    if let Some(sink) = SINK.get() {
        (sink.record)(name, value);
    }
}
