//! The devices ops run on, each given a small id once, so statistics and the timeline can key
//! by device (`Cuda(1)`, `DefaultDevice`, ...) without formatting or locking per op.
//!
//! An edition names a device by a [`DeviceKey`]: the Rust type of its Burn device and a number
//! that tells devices of that type apart (Burn's device id).

use std::any::TypeId;
use std::cell::Cell;
use std::sync::{Mutex, PoisonError};

/// A device as the op path tells devices apart: its type, and its number among that type's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DeviceKey {
    /// The Rust type of the device.
    pub kind: TypeId,
    /// Which device of that type (an edition packs Burn's device id into it).
    pub number: u64,
}

/// Devices by id: the device's key and its `Debug` text; id 0 is "unknown".
static DEVICES: Mutex<Vec<(DeviceKey, String)>> = Mutex::new(Vec::new());

thread_local! {
    /// The last device this thread asked about, and its id: a thread's ops run on one device.
    static LAST: Cell<Option<(DeviceKey, u32)>> = const { Cell::new(None) };
}

/// The id of the device `key` (at least 1); `name` gives its text the first time it is seen.
#[inline]
pub fn id(key: DeviceKey, name: impl FnOnce() -> String) -> u32 {
    if let Some((last, id)) = LAST.get()
        && last == key
    {
        return id;
    }
    let mut devices = DEVICES.lock().unwrap_or_else(PoisonError::into_inner);
    let id = match devices.iter().position(|(other, _)| *other == key) {
        Some(index) => index as u32 + 1,
        None => {
            devices.push((key, name()));
            devices.len() as u32
        }
    };
    LAST.set(Some((key, id)));
    id
}

/// The text of a device id (`-` for 0, unknown).
pub fn name(id: u32) -> String {
    let devices = DEVICES.lock().unwrap_or_else(PoisonError::into_inner);
    id.checked_sub(1)
        .and_then(|index| devices.get(index as usize))
        .map_or_else(|| "-".to_owned(), |(_, name)| name.clone())
}

#[cfg(test)]
pub mod tests {
    use std::any::TypeId;

    use super::DeviceKey;

    /// A device of a backend with several devices, for the tests.
    #[derive(Debug, Clone, Default, PartialEq)]
    pub struct Gpu(pub u16);

    /// The id of a [`Gpu`], as an edition gives it.
    pub fn gpu_id(gpu: &Gpu) -> u32 {
        let key = DeviceKey {
            kind: TypeId::of::<Gpu>(),
            number: u64::from(gpu.0),
        };
        super::id(key, || format!("{gpu:?}"))
    }

    #[derive(Debug)]
    struct Cpu;

    #[test]
    fn a_device_keeps_its_id_and_names_itself() {
        let key = DeviceKey {
            kind: TypeId::of::<Cpu>(),
            number: 0,
        };
        let cpu = super::id(key, || "Cpu".to_owned());
        assert!(cpu >= 1);
        assert_eq!(super::id(key, || unreachable!("named once")), cpu);
        assert_eq!(super::name(cpu), "Cpu");
        assert_eq!(super::name(0), "-");
        assert_eq!(super::name(u32::MAX), "-");
    }

    #[test]
    fn devices_of_one_type_are_told_apart_by_number() {
        let first = gpu_id(&Gpu(0));
        let second = gpu_id(&Gpu(1));
        assert_ne!(first, second);
        assert_eq!(gpu_id(&Gpu(0)), first);
        assert_eq!(super::name(second), "Gpu(1)");
    }
}
