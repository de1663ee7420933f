//! Helpers shared by the integration tests.

use std::panic::{AssertUnwindSafe, catch_unwind};

/// The message `work` panics with (a `String` or a `&str` payload).
pub fn panic_message(work: impl FnOnce()) -> String {
    let payload = catch_unwind(AssertUnwindSafe(work)).expect_err("it panics");
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap()
}
