//! What a session installs, without a session: for benchmarks that measure each part of its
//! cost by turning it on and off between steps (a session's tools are process-wide and
//! enable-once). Not for programs: use [`Session`](crate::Session).

use std::any::TypeId;
use std::sync::Arc;

use burn::tensor::Device;
use burn_fusion::observer::FusionObservation;
use burn_profiled_core::context::device::{self as core_device, DeviceKey};
use burn_profiled_core::device_time::{self, DeviceTimeError};

use crate::blocks::BlockRecorder;

/// The session's observer of `device`'s blocks, ready to install: with phases (a session with
/// statistics or a timeline) or without.
pub struct BlockObserver {
    with_phases: Arc<BlockRecorder>,
    without_phases: Arc<BlockRecorder>,
}

impl BlockObserver {
    /// The observer of `device` (a fused CubeCL device), its ranges on the compute runner and
    /// its phases followed. Syncs the device first, as [`Session::start`](crate::Session::start)
    /// does.
    pub fn new(device: &Device) -> Self {
        let id = core_device::id(
            DeviceKey {
                kind: TypeId::of::<Device>(),
                number: 0,
            },
            || crate::session::device_label(device),
        );
        let _ = device.sync();
        let (fusion, compute) = crate::runners::of(device);
        crate::phases::follow(fusion);
        let recorder =
            |phases| Arc::new(BlockRecorder::new(id, phases, Some(compute.clone()), None));
        BlockObserver {
            with_phases: recorder(true),
            without_phases: recorder(false),
        }
    }

    /// Installs it, keeping each block's phase or not, until the guard drops.
    #[must_use = "the observer is removed when the guard drops"]
    pub fn install(&self, phases: bool) -> FusionObservation {
        let recorder = if phases {
            &self.with_phases
        } else {
            &self.without_phases
        };
        FusionObservation::new(recorder.clone())
    }
}

/// Starts recording device time through CubeCL's launch observer, as a session does when its
/// warm-up ends; stop it with the core's `device_time::stop`.
pub fn start_device_time() -> Result<(), DeviceTimeError> {
    device_time::start_with(crate::device_time::start()?);
    Ok(())
}
