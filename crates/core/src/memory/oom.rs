//! The context of an out-of-memory failure: when a panic's message says memory ran out, a
//! panic hook prints, before the panic's own message, the op that was running on the panicking
//! thread (with per-op memory on: its phase, and its input shapes when statistics are kept by
//! shapes), the step, each device's memory at the
//! last step's end, and the ops that allocated most in the step. Nothing else changes: the
//! previous hook prints the panic, and the panic goes on to the caller.

use std::sync::{Mutex, Once, PoisonError};

use super::StepSample;
use crate::context::memory as context_memory;
use crate::sinks::stats::{self, bytes_text};

/// The last step's sample, for the message.
static LAST_SAMPLE: Mutex<Option<StepSample>> = Mutex::new(None);
static INSTALL: Once = Once::new();

/// Installs the panic hook, once per process, in front of the hook installed before it.
#[doc(hidden)]
pub fn install_out_of_memory_context() {
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let payload = info.payload();
            let message = payload
                .downcast_ref::<&str>()
                .copied()
                .or_else(|| payload.downcast_ref::<String>().map(String::as_str));
            if message.is_some_and(is_out_of_memory) {
                eprintln!("{}", context_text());
            }
            previous(info);
        }));
    });
}

/// Keeps the last step's sample for the message.
#[doc(hidden)]
pub fn remember(sample: &StepSample) {
    *LAST_SAMPLE.lock().unwrap_or_else(PoisonError::into_inner) = Some(sample.clone());
}

/// Whether a panic message says memory ran out (CubeCL's `OutOfMemory`, wgpu's and CUDA's
/// allocation failures, an allocator's refusal).
#[doc(hidden)]
pub fn is_out_of_memory(message: &str) -> bool {
    let message = message.to_ascii_lowercase();
    [
        "out of memory",
        "out-of-memory",
        "outofmemory",
        "out_of_memory",
        "failed to reserve",
        "failed to allocate",
        "allocation failed",
    ]
    .iter()
    .any(|sign| message.contains(sign))
}

/// What the user reads first when an op runs out of memory.
#[doc(hidden)]
pub fn context_text() -> String {
    let step = context_memory::step();
    let mut text = match crate::probe::running_op() {
        Some((op, phase, shapes, _device)) => {
            let shapes = shapes.map_or_else(String::new, |s| format!(", input shapes {s}"));
            format!("burn-profiled: out of memory in {op} ({phase}){shapes}, in step {step}")
        }
        None => format!(
            "burn-profiled: out of memory in step {step}, outside the ops `[memory] per_op` \
             records"
        ),
    };
    text.push_str(&memory_state(step));
    text
}

/// Why a memory limit stopped the run, as the first lines the user reads: the guard's message,
/// then the memory at the end of the step (the last sample) and what its ops allocated most.
#[doc(hidden)]
pub fn limit_text(exceeded: &crate::host::MemoryLimitExceeded) -> String {
    let step = context_memory::step();
    let state = memory_state(step);
    match state.strip_prefix("; ") {
        Some(state) => format!("burn-profiled: {exceeded}\nburn-profiled: {state}"),
        None => format!("burn-profiled: {exceeded}"),
    }
}

/// `; at the end of step N: <memory>; ops that allocated most in step M: <ops>`, the parts
/// that are known.
fn memory_state(step: usize) -> String {
    let mut text = String::new();
    if let Some(sample) = LAST_SAMPLE
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .as_ref()
    {
        let mut memory: Vec<String> = sample
            .devices
            .iter()
            .map(|(device, m)| {
                format!(
                    "{device} {} in use, {} reserved",
                    bytes_text(m.in_use_bytes),
                    bytes_text(m.reserved_bytes)
                )
            })
            .collect();
        memory.push(format!("host RSS {}", bytes_text(sample.host_rss_bytes)));
        text.push_str(&format!(
            "; at the end of step {}: {}",
            sample.step,
            memory.join(", ")
        ));
    }
    let top: Vec<String> = stats::step_allocations()
        .into_iter()
        .filter(|a| a.bytes > 0)
        .take(5)
        .map(|a| format!("{} {}", a.op, bytes_text(a.bytes)))
        .collect();
    if !top.is_empty() {
        text.push_str(&format!(
            "; ops that allocated most in step {step}: {}",
            top.join(", ")
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::is_out_of_memory;

    #[test]
    fn out_of_memory_messages_are_recognised() {
        assert!(is_out_of_memory(
            "An out-of-memory error happened during launch\nCaused by:\n  no memory"
        ));
        assert!(is_out_of_memory(
            "called `Result::unwrap()` on an `Err` value: OutOfMemory"
        ));
        assert!(is_out_of_memory("failed to reserve 3595479680 bytes"));
        assert!(is_out_of_memory("DriverError(CUDA_ERROR_OUT_OF_MEMORY)"));
        assert!(!is_out_of_memory("index out of bounds"));
    }
}
