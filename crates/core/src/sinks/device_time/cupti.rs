//! CUPTI as the source of device time: external correlation ids pushed per op, kernel and
//! external-correlation records collected from CUPTI's buffers.
//!
//! CUPTI is loaded at run time (cudarc's dynamic loading). Kernel records are read through
//! their first fields only, which have kept their layout from `CUpti_ActivityKernel4` to
//! `CUpti_ActivityKernel13`, so records of any recent CUPTI are read correctly.

use std::alloc::{Layout, alloc, dealloc};
use std::ffi::CStr;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};

use cudarc::cupti::result::{CuptiError, activity, subscribe, unsubscribe};
use cudarc::cupti::sys;

use super::correlate::{Activity, ApiCall, Kernel};
use super::{DeviceTimeError, Source, SourceCounts, ingest};
use crate::context::kernel::KernelShape;

/// CUPTI's buffers: 8 MiB each, 8-byte aligned, as CUPTI's samples use.
const BUFFER_SIZE: usize = 8 << 20;
const BUFFER_ALIGN: usize = 8;
const EXTERNAL_KIND: sys::CUpti_ExternalCorrelationKind =
    sys::CUpti_ExternalCorrelationKind::CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
const KIND_CONCURRENT_KERNEL: u32 = 10;
const KIND_EXTERNAL_CORRELATION: u32 = 39;
const KIND_DRIVER: u32 = 4;
const KIND_RUNTIME: u32 = 5;

/// The activity kinds recorded. CUPTI writes an `EXTERNAL_CORRELATION` record only ahead of an
/// API record, so `DRIVER` must be on: without it no kernel is ever matched to an op (CubeCL
/// calls only the driver API). Its records are the launch calls of the timeline. `RUNTIME` too, as CUPTI's
/// guide asks, for kernels launched through the runtime API (by a CUDA library).
const KINDS: [sys::CUpti_ActivityKind; 4] = [
    sys::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    sys::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_DRIVER,
    sys::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_RUNTIME,
    sys::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
];

/// The CUPTI functions used. cudarc resolves each at its first call and panics if it is
/// missing, which inside CUPTI's buffer callback would abort: they are all looked up first.
const FUNCTIONS: [&str; 11] = [
    "cuptiSubscribe",
    "cuptiUnsubscribe",
    "cuptiActivityRegisterCallbacks",
    "cuptiActivityEnable",
    "cuptiActivityDisable",
    "cuptiActivityFlushAll",
    "cuptiActivityPushExternalCorrelationId",
    "cuptiActivityPopExternalCorrelationId",
    "cuptiActivityGetNextRecord",
    "cuptiActivityGetNumDroppedRecords",
    "cuptiGetTimestamp",
];

/// The first of [`FUNCTIONS`] the library lacks.
fn first_missing(has: impl Fn(&str) -> bool) -> Option<&'static str> {
    FUNCTIONS.into_iter().find(|name| !has(name))
}

/// Records CUPTI could not store, summed over the buffers it handed over.
static DROPPED_RECORDS: AtomicU64 = AtomicU64::new(0);

/// The leading fields of every kernel record since `CUpti_ActivityKernel4`.
#[repr(C, packed(8))]
struct KernelRecord {
    kind: u32,
    cache_config: u8,
    shared_memory_config: u8,
    registers_per_thread: u16,
    partitioned_global_cache_requested: u32,
    partitioned_global_cache_executed: u32,
    start: u64,
    end: u64,
    completed: u64,
    device_id: u32,
    context_id: u32,
    stream_id: u32,
    grid: [i32; 3],
    block: [i32; 3],
    static_shared_memory: i32,
    dynamic_shared_memory: i32,
    local_memory_per_thread: u32,
    local_memory_total: u32,
    correlation_id: u32,
    grid_id: i64,
    name: *const std::ffi::c_char,
}

/// `CUpti_ActivityExternalCorrelation`.
#[repr(C)]
struct ExternalRecord {
    kind: u32,
    external_kind: u32,
    external_id: u64,
    correlation_id: u32,
}

/// A running CUPTI subscription.
pub(super) struct Cupti {
    subscriber: Subscriber,
    /// Pushes and pops CUPTI refused, and pops that did not return the id pushed.
    tag_errors: AtomicU64,
}

/// CUPTI's subscriber handle; used only to unsubscribe.
struct Subscriber(sys::CUpti_SubscriberHandle);
// SAFETY: the handle is an opaque token CUPTI accepts from any thread.
unsafe impl Send for Subscriber {}
// SAFETY: as above; it is never dereferenced here.
unsafe impl Sync for Subscriber {}

fn refused(error: CuptiError) -> DeviceTimeError {
    use sys::CUptiResult as R;
    let hint = match error.0 {
        R::CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED => {
            ": another CUPTI client (Nsight Systems, another profiler) is attached"
        }
        R::CUPTI_ERROR_INSUFFICIENT_PRIVILEGES
        | R::CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES => {
            ": this user may not profile the GPU (the driver's RmProfilingAdminOnly setting)"
        }
        R::CUPTI_ERROR_NOT_INITIALIZED | R::CUPTI_ERROR_NOT_COMPATIBLE => {
            ": this CUPTI does not match the CUDA driver"
        }
        _ => "",
    };
    DeviceTimeError::Refused(format!("{:?}{hint}", error.0))
}

impl Cupti {
    /// Subscribes to CUPTI and enables kernel and external-correlation records.
    pub(super) fn start() -> Result<Self, DeviceTimeError> {
        // SAFETY: only tries to load the library.
        if !unsafe { sys::is_culib_present() } {
            return Err(DeviceTimeError::NoCupti(
                "libcupti.so was not found on the library path (add its directory, such as \
                 /usr/local/cuda/extras/CUPTI/lib64, to LD_LIBRARY_PATH)"
                    .to_owned(),
            ));
        }
        // SAFETY: the library is present (above); looking a symbol up calls nothing.
        let missing = catch_unwind(|| {
            let library = unsafe { sys::culib() };
            first_missing(|name| {
                unsafe { library.get::<unsafe extern "C" fn()>(name.as_bytes()) }.is_ok()
            })
        });
        match missing {
            Ok(None) => {}
            Ok(Some(name)) => {
                return Err(DeviceTimeError::NoCupti(format!(
                    "this CUPTI lacks {name}, which device time needs"
                )));
            }
            Err(_) => {
                return Err(DeviceTimeError::NoCupti(
                    "libcupti.so could not be loaded".to_owned(),
                ));
            }
        }
        // cudarc panics where CUPTI misbehaves: an odd CUPTI must not take the run down.
        catch_unwind(AssertUnwindSafe(Self::subscribe)).unwrap_or_else(|_| {
            Err(DeviceTimeError::NoCupti(
                "this CUPTI failed while subscribing".to_owned(),
            ))
        })
    }

    fn subscribe() -> Result<Self, DeviceTimeError> {
        let mut handle: sys::CUpti_SubscriberHandle = std::ptr::null_mut();
        // SAFETY: `handle` is written by CUPTI; no callback is given.
        unsafe { subscribe(&mut handle, None, std::ptr::null_mut()) }.map_err(refused)?;
        let subscriber = Subscriber(handle);
        let mut enabled = 0;
        let result = activity::register_callbacks(Some(buffer_requested), Some(buffer_completed))
            .and_then(|()| {
                KINDS.iter().try_for_each(|&kind| {
                    activity::enable(kind)?;
                    enabled += 1;
                    Ok(())
                })
            });
        if let Err(error) = result {
            for &kind in &KINDS[..enabled] {
                let _ = activity::disable(kind);
            }
            // SAFETY: the handle came from `subscribe` above.
            let _ = unsafe { unsubscribe(subscriber.0) };
            return Err(refused(error));
        }
        DROPPED_RECORDS.store(0, Ordering::Relaxed);
        Ok(Cupti {
            subscriber,
            tag_errors: AtomicU64::new(0),
        })
    }
}

impl Source for Cupti {
    fn push(&self, id: u64) {
        if activity::push_external_correlation_id(EXTERNAL_KIND, id).is_err() {
            self.tag_errors.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn pop(&self, id: u64) {
        let mut last = 0u64;
        // SAFETY: `last` is a valid place for the popped id.
        let popped = unsafe { activity::pop_external_correlation_id(EXTERNAL_KIND, &mut last) };
        if popped.is_err() || last != id {
            self.tag_errors.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn flush(&self) {
        let _ =
            activity::flush_all(sys::CUpti_ActivityFlag::CUPTI_ACTIVITY_FLAG_FLUSH_FORCED as u32);
    }

    fn device_properties(&self, device: u32) -> Option<serde_json::Map<String, serde_json::Value>> {
        // cudarc panics where the driver is missing (the stand-in CUPTI runs without one).
        catch_unwind(|| device_properties(device)).ok().flatten()
    }

    fn timestamp_ns(&self) -> u64 {
        let mut now = 0u64;
        // SAFETY: `now` is a valid place for the timestamp.
        let _ = unsafe { cudarc::cupti::result::get_timestamp(&mut now) };
        now
    }

    fn stop(&self) -> SourceCounts {
        // No new records from here on; then every buffer still held, complete or not.
        for kind in KINDS {
            let _ = activity::disable(kind);
        }
        self.flush();
        // SAFETY: the handle came from `subscribe`, and is unsubscribed once, here.
        let _ = unsafe { unsubscribe(self.subscriber.0) };
        SourceCounts {
            dropped_records: DROPPED_RECORDS.load(Ordering::Relaxed),
            tag_errors: self.tag_errors.load(Ordering::Relaxed),
            ..SourceCounts::default()
        }
    }
}

/// The CUDA device `ordinal` as Kineto's `deviceProperties` describe it (from
/// `cudaGetDeviceProperties`, here from the driver's attributes): none without a CUDA driver.
fn device_properties(ordinal: u32) -> Option<serde_json::Map<String, serde_json::Value>> {
    use cudarc::driver::result::device;
    use cudarc::driver::sys::CUdevice_attribute as A;
    // SAFETY: only tries to load the library.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return None;
    }
    let handle = device::get(i32::try_from(ordinal).ok()?).ok()?;
    let mut properties = serde_json::Map::new();
    properties.insert("name".to_owned(), device::get_name(handle).ok()?.into());
    // SAFETY: `handle` is a device the driver handed out.
    let total = unsafe { device::total_mem(handle) }.ok()?;
    properties.insert("totalGlobalMem".to_owned(), total.into());
    for (key, attribute) in [
        (
            "computeMajor",
            A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
        ),
        (
            "computeMinor",
            A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
        ),
        (
            "maxThreadsPerBlock",
            A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
        ),
        (
            "maxThreadsPerMultiprocessor",
            A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
        ),
        (
            "regsPerBlock",
            A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK,
        ),
        (
            "regsPerMultiprocessor",
            A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR,
        ),
        ("warpSize", A::CU_DEVICE_ATTRIBUTE_WARP_SIZE),
        (
            "sharedMemPerBlock",
            A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
        ),
        (
            "sharedMemPerMultiprocessor",
            A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
        ),
        ("numSms", A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
        (
            "sharedMemPerBlockOptin",
            A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
        ),
    ] {
        // SAFETY: as above.
        if let Ok(value) = unsafe { device::get_attribute(handle, attribute) } {
            properties.insert(key.to_owned(), value.into());
        }
    }
    Some(properties)
}

fn buffer_layout() -> Layout {
    Layout::from_size_align(BUFFER_SIZE, BUFFER_ALIGN)
        .unwrap_or_else(|_| unreachable!("8 MiB at 8 bytes is a valid layout"))
}

extern "C" fn buffer_requested(buffer: *mut *mut u8, size: *mut usize, max_records: *mut usize) {
    // SAFETY: CUPTI gives valid out-pointers; the buffer is freed in `buffer_completed`.
    unsafe {
        let memory = alloc(buffer_layout());
        *buffer = memory;
        *size = if memory.is_null() { 0 } else { BUFFER_SIZE };
        *max_records = 0;
    }
}

extern "C" fn buffer_completed(
    context: cudarc::driver::sys::CUcontext,
    stream: u32,
    buffer: *mut u8,
    _size: usize,
    valid: usize,
) {
    let mut dropped = 0usize;
    // SAFETY: `context` and `stream` are the ones CUPTI names this buffer's queue by.
    if unsafe { activity::get_num_dropped_records(context, stream, &mut dropped) }.is_ok() {
        DROPPED_RECORDS.fetch_add(dropped as u64, Ordering::Relaxed);
    }
    if buffer.is_null() {
        return;
    }
    // A panic must not cross into CUPTI.
    let _ = catch_unwind(|| ingest(records(buffer, valid)));
    // SAFETY: the buffer was allocated by `buffer_requested` with this layout.
    unsafe { dealloc(buffer, buffer_layout()) };
}

/// The records of a completed buffer that attribution needs.
fn records(buffer: *mut u8, valid: usize) -> Vec<Activity> {
    let mut out = Vec::new();
    let mut record: *mut sys::CUpti_Activity = std::ptr::null_mut();
    // SAFETY: `buffer` holds `valid` bytes of records written by CUPTI; `get_next_record`
    // walks them, and each record is read as the kind its first field says.
    while unsafe { activity::get_next_record(buffer, valid, &mut record) }.is_ok() {
        let kind = unsafe { *(record as *const u32) };
        match kind {
            KIND_CONCURRENT_KERNEL => {
                let kernel = unsafe { &*(record as *const KernelRecord) };
                let name = if kernel.name.is_null() {
                    String::new()
                } else {
                    unsafe { CStr::from_ptr(kernel.name) }
                        .to_string_lossy()
                        .into_owned()
                };
                out.push(Activity::Kernel(Kernel {
                    correlation: kernel.correlation_id,
                    start_ns: kernel.start,
                    end_ns: kernel.end,
                    device: kernel.device_id,
                    stream: kernel.stream_id,
                    name,
                    shape: KernelShape {
                        context: kernel.context_id,
                        grid: kernel.grid,
                        block: kernel.block,
                        registers_per_thread: kernel.registers_per_thread,
                        shared_memory: kernel
                            .static_shared_memory
                            .saturating_add(kernel.dynamic_shared_memory),
                    },
                    call: None,
                }));
            }
            KIND_DRIVER | KIND_RUNTIME => {
                let api = unsafe { &*(record as *const sys::CUpti_ActivityAPI) };
                out.push(Activity::Api {
                    correlation: api.correlationId,
                    call: ApiCall {
                        cbid: api.cbid,
                        start_ns: api.start,
                        end_ns: api.end,
                        thread: api.threadId,
                    },
                });
            }
            KIND_EXTERNAL_CORRELATION => {
                let external = unsafe { &*(record as *const ExternalRecord) };
                if external.external_kind == EXTERNAL_KIND as u32 {
                    out.push(Activity::External {
                        external: external.external_id,
                        correlation: external.correlation_id,
                    });
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn driver_records_are_on_or_cupti_writes_no_correlation_record() {
        for api in [
            sys::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_DRIVER,
            sys::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_RUNTIME,
        ] {
            assert!(
                KINDS.contains(&api),
                "EXTERNAL_CORRELATION records precede API records only: keep {api:?} enabled"
            );
        }
    }

    #[test]
    fn a_cupti_without_a_function_used_is_named() {
        assert_eq!(first_missing(|_| true), None);
        assert_eq!(
            first_missing(|name| name != "cuptiActivityPushExternalCorrelationId"),
            Some("cuptiActivityPushExternalCorrelationId")
        );
    }

    #[test]
    fn records_are_read_at_the_offsets_of_nvidias_layouts() {
        use std::mem::offset_of;
        macro_rules! same_leading_fields {
            ($($record:ty),*) => {$(
                assert_eq!(
                    [
                        offset_of!(KernelRecord, kind),
                        offset_of!(KernelRecord, start),
                        offset_of!(KernelRecord, end),
                        offset_of!(KernelRecord, device_id),
                        offset_of!(KernelRecord, context_id),
                        offset_of!(KernelRecord, stream_id),
                        offset_of!(KernelRecord, grid),
                        offset_of!(KernelRecord, block),
                        offset_of!(KernelRecord, registers_per_thread),
                        offset_of!(KernelRecord, static_shared_memory),
                        offset_of!(KernelRecord, dynamic_shared_memory),
                        offset_of!(KernelRecord, correlation_id),
                        offset_of!(KernelRecord, name),
                    ],
                    [
                        offset_of!($record, kind),
                        offset_of!($record, start),
                        offset_of!($record, end),
                        offset_of!($record, deviceId),
                        offset_of!($record, contextId),
                        offset_of!($record, streamId),
                        offset_of!($record, gridX),
                        offset_of!($record, blockX),
                        offset_of!($record, registersPerThread),
                        offset_of!($record, staticSharedMemory),
                        offset_of!($record, dynamicSharedMemory),
                        offset_of!($record, correlationId),
                        offset_of!($record, name),
                    ],
                    stringify!($record)
                );
                assert!(size_of::<KernelRecord>() <= size_of::<$record>());
            )*};
        }
        // The later versions are in cudarc's bindings only for the CUDA versions that have
        // them; their leading fields are the same.
        same_leading_fields!(
            sys::CUpti_ActivityKernel4,
            sys::CUpti_ActivityKernel5,
            sys::CUpti_ActivityKernel6
        );
        assert_eq!(
            [
                offset_of!(ExternalRecord, external_kind),
                offset_of!(ExternalRecord, external_id),
                offset_of!(ExternalRecord, correlation_id),
            ],
            [
                offset_of!(sys::CUpti_ActivityExternalCorrelation, externalKind),
                offset_of!(sys::CUpti_ActivityExternalCorrelation, externalId),
                offset_of!(sys::CUpti_ActivityExternalCorrelation, correlationId),
            ]
        );
        assert_eq!(
            [
                KIND_CONCURRENT_KERNEL,
                KIND_EXTERNAL_CORRELATION,
                KIND_DRIVER,
                KIND_RUNTIME
            ],
            [
                sys::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL as u32,
                sys::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION as u32,
                sys::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_DRIVER as u32,
                sys::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_RUNTIME as u32,
            ]
        );
    }
}
