//! The devices ops run on, each given a small id once, so statistics and the timeline can key
//! by device (`Cuda(1)`, `DefaultDevice`, ...) without formatting or locking per op.

use std::any::TypeId;
use std::cell::Cell;
use std::sync::{Mutex, PoisonError};

use burn_backend::{DeviceId, DeviceOps};

/// Devices by id: the device type, its burn id, and its `Debug` text; id 0 is "unknown".
static DEVICES: Mutex<Vec<(TypeId, DeviceId, String)>> = Mutex::new(Vec::new());

thread_local! {
    /// The last device this thread asked about, and its id: a thread's ops run on one device.
    static LAST: Cell<Option<(TypeId, DeviceId, u32)>> = const { Cell::new(None) };
}

/// The id of `device` (at least 1).
pub(crate) fn id<D: DeviceOps>(device: &D) -> u32 {
    let key = (TypeId::of::<D>(), device.id());
    if let Some((type_id, device_id, id)) = LAST.get()
        && (type_id, device_id) == key
    {
        return id;
    }
    let mut devices = DEVICES.lock().unwrap_or_else(PoisonError::into_inner);
    let id = match devices
        .iter()
        .position(|(type_id, device_id, _)| (*type_id, *device_id) == key)
    {
        Some(index) => index as u32 + 1,
        None => {
            devices.push((key.0, key.1, format!("{device:?}")));
            devices.len() as u32
        }
    };
    LAST.set(Some((key.0, key.1, id)));
    id
}

/// The text of a device id (`-` for 0, unknown).
pub(crate) fn name(id: u32) -> String {
    let devices = DEVICES.lock().unwrap_or_else(PoisonError::into_inner);
    id.checked_sub(1)
        .and_then(|index| devices.get(index as usize))
        .map_or_else(|| "-".to_owned(), |(_, _, name)| name.clone())
}

#[cfg(test)]
pub(crate) mod tests {
    use burn::backend::ndarray::NdArrayDevice;
    use burn_backend::{DeviceId, DeviceOps};

    /// A device of a backend with several devices, for the tests.
    #[derive(Debug, Clone, Default, PartialEq)]
    pub(crate) struct Gpu(pub(crate) u16);

    impl burn_std::device::Device for Gpu {
        fn from_id(id: DeviceId) -> Self {
            Gpu(id.index_id)
        }
        fn to_id(&self) -> DeviceId {
            DeviceId::new(0, self.0)
        }
    }

    impl DeviceOps for Gpu {}

    #[test]
    fn a_device_keeps_its_id_and_names_itself() {
        let cpu = super::id(&NdArrayDevice::Cpu);
        assert!(cpu >= 1);
        assert_eq!(super::id(&NdArrayDevice::Cpu), cpu);
        assert_eq!(super::name(cpu), "Cpu");
        assert_eq!(super::name(0), "-");
        assert_eq!(super::name(u32::MAX), "-");
    }
}
