//! Burn 0.21's devices as the core's device keys: the device's type and Burn's `DeviceId`.

use std::any::TypeId;

use burn_backend::DeviceOps;
use burn_profiled_core::context::device::{self as core_device, DeviceKey};

/// The id of `device` (at least 1).
pub(crate) fn id<D: DeviceOps>(device: &D) -> u32 {
    let burn_id = device.id();
    let key = DeviceKey {
        kind: TypeId::of::<D>(),
        number: (u64::from(burn_id.type_id) << 16) | u64::from(burn_id.index_id),
    };
    core_device::id(key, || format!("{device:?}"))
}

#[cfg(test)]
mod tests {
    use burn::backend::ndarray::NdArrayDevice;
    use burn_profiled_core::context::device::name;

    #[test]
    fn a_device_keeps_its_id_and_names_itself() {
        let cpu = super::id(&NdArrayDevice::Cpu);
        assert!(cpu >= 1);
        assert_eq!(super::id(&NdArrayDevice::Cpu), cpu);
        assert_eq!(name(cpu), "Cpu");
        assert_eq!(name(0), "-");
        assert_eq!(name(u32::MAX), "-");
    }
}
