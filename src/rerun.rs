//! The first op that made a NaN or an Inf, run again on NdArray (`[numerics] check_finite`),
//! as JAX re-runs a primitive de-optimised: its inputs are read from the backend, the same op
//! runs on the host with the same arguments, and its outputs say whether the NaN belongs to the
//! op's numerics (NdArray makes it too) or to the backend's kernel (NdArray's outputs are
//! finite).
//!
//! The op table's macro captures each argument with `(&&&&&&Capture(&arg)).capture::<B>()`,
//! before the op takes them, when `check_finite` is on and the backend is not NdArray: a
//! tensor is held (a handle, not its data), any other argument cloned. Replaying reads the held
//! tensors into NdArray's and calls NdArray's op of the same name with them
//! ([`CapturedTensor::arg`] and its siblings give each argument as NdArray's op takes it).

#[cfg(feature = "ndarray")]
mod capture;

#[cfg(feature = "ndarray")]
pub(crate) use capture::*;

pub(crate) use crate::op_numerics::Replay;
