//! The Burn device a tool syncs before it takes a timestamp or opens/closes a range.

use std::fmt;

use burn_backend::Backend;
use burn_profiled_core::DeviceSync as CoreSync;

/// A Burn device to sync: `B::sync(&device)`, waiting until the work queued on it has run.
///
/// The profiling tools that sync (NVTX ranges with sync on push/pop, the stopwatch) sync the
/// device they were given, like `torch.cuda.synchronize()` does for the current device.
///
/// ```
/// use burn::backend::NdArray;
/// use burn_profiled::DeviceSync;
///
/// let sync = DeviceSync::new::<NdArray>(Default::default());
/// sync.sync();
/// ```
///
/// The tools take it, or the core's [`DeviceSync`](burn_profiled_core::DeviceSync) it turns
/// into.
#[derive(Clone)]
pub struct DeviceSync(CoreSync);

impl DeviceSync {
    /// Syncs `device` of backend `B`.
    pub fn new<B: Backend>(device: B::Device) -> Self {
        DeviceSync(CoreSync::custom(format!("{device:?}"), move || {
            // A failed sync resurfaces at the next read of the device; timing goes on.
            let _ = B::sync(&device);
        }))
    }

    /// Syncs every device of `devices` (of backend `B`), one after the other: for a run on
    /// several devices, where a tool's timestamp must wait for all of them.
    ///
    /// ```
    /// use burn::backend::NdArray;
    /// use burn_profiled::DeviceSync;
    ///
    /// let sync = DeviceSync::all::<NdArray>(&[Default::default(), Default::default()]);
    /// sync.sync();
    /// assert_eq!(format!("{sync:?}"), "DeviceSync(\"Cpu, Cpu\")");
    /// ```
    pub fn all<B: Backend>(devices: &[B::Device]) -> Self {
        let devices = devices.to_vec();
        let name = devices
            .iter()
            .map(|device| format!("{device:?}"))
            .collect::<Vec<_>>()
            .join(", ");
        DeviceSync(CoreSync::custom(name, move || {
            for device in &devices {
                // As in `new`: a failed sync resurfaces at the next read.
                let _ = B::sync(device);
            }
        }))
    }

    /// Syncs by calling `sync`, named `name` in messages: a device Burn does not drive, or a
    /// stand-in in tests.
    ///
    /// ```
    /// use burn_profiled::DeviceSync;
    ///
    /// let sync = DeviceSync::custom("my stream", || { /* wait for it */ });
    /// sync.sync();
    /// assert_eq!(format!("{sync:?}"), "DeviceSync(\"my stream\")");
    /// ```
    pub fn custom(name: impl Into<String>, sync: impl Fn() + Send + Sync + 'static) -> Self {
        DeviceSync(CoreSync::custom(name, sync))
    }

    /// Waits until the work queued on the device has run.
    pub fn sync(&self) {
        self.0.sync()
    }

    /// The devices it syncs, by their `Debug` text (`Cuda(0), Cuda(1)`).
    pub(crate) fn devices(&self) -> &str {
        self.0.devices()
    }
}

impl From<DeviceSync> for CoreSync {
    fn from(sync: DeviceSync) -> CoreSync {
        sync.0
    }
}

impl fmt::Debug for DeviceSync {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}
