//! The device a tool syncs before it takes a timestamp or opens/closes a range.

use std::fmt;
use std::sync::Arc;

/// A device to sync: a call that waits until the work queued on it has run.
///
/// The profiling tools that sync (NVTX ranges with sync on push/pop, the stopwatch) sync the
/// device they were given, like `torch.cuda.synchronize()` does for the current device. An
/// edition makes one from a Burn device (Burn 0.21: `DeviceSync::new::<B>(device)`); any other
/// device is [`custom`](DeviceSync::custom).
///
/// ```
/// use burn_profiled_core::DeviceSync;
///
/// let sync = DeviceSync::custom("my stream", || { /* wait for it */ });
/// sync.sync();
/// assert_eq!(format!("{sync:?}"), "DeviceSync(\"my stream\")");
/// ```
#[derive(Clone)]
pub struct DeviceSync {
    sync: Arc<dyn Fn() + Send + Sync>,
    name: String,
}

impl DeviceSync {
    /// Syncs by calling `sync`, named `name` in messages: a device Burn does not drive, or a
    /// stand-in in tests.
    pub fn custom(name: impl Into<String>, sync: impl Fn() + Send + Sync + 'static) -> Self {
        DeviceSync {
            name: name.into(),
            sync: Arc::new(sync),
        }
    }

    /// Waits until the work queued on the device has run.
    pub fn sync(&self) {
        (self.sync)()
    }

    /// The devices it syncs, by their `Debug` text (`Cuda(0), Cuda(1)`).
    pub fn devices(&self) -> &str {
        &self.name
    }
}

impl fmt::Debug for DeviceSync {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("DeviceSync").field(&self.name).finish()
    }
}
