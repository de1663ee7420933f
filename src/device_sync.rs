//! The Burn device a tool syncs before it takes a timestamp or opens/closes a range.

use std::fmt;
use std::sync::Arc;

use burn_backend::Backend;

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
#[derive(Clone)]
pub struct DeviceSync {
    sync: Arc<dyn Fn() + Send + Sync>,
    name: String,
}

impl DeviceSync {
    /// Syncs `device` of backend `B`.
    pub fn new<B: Backend>(device: B::Device) -> Self {
        DeviceSync {
            name: format!("{device:?}"),
            sync: Arc::new(move || {
                // A failed sync resurfaces at the next read of the device; timing goes on.
                let _ = B::sync(&device);
            }),
        }
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
        DeviceSync {
            name: devices
                .iter()
                .map(|device| format!("{device:?}"))
                .collect::<Vec<_>>()
                .join(", "),
            sync: Arc::new(move || {
                for device in &devices {
                    // As in `new`: a failed sync resurfaces at the next read.
                    let _ = B::sync(device);
                }
            }),
        }
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
    pub(crate) fn devices(&self) -> &str {
        &self.name
    }
}

impl fmt::Debug for DeviceSync {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("DeviceSync").field(&self.name).finish()
    }
}
